#!/usr/bin/env bash
# Builds and runs bench/mma_gpu_check.cu on an NVIDIA GPU: the matrix API's
# accumulator layout and samples/gemm.spn checked by value (the cpu target
# checks both layouts in CI; this is the hardware's word for NVIDIA's).
#   bash bench/mma_gpu_check.sh [ARCH]      (ARCH: sm_90 by default)
# Needs nvcc and build/bin/spindle (the generator). The generated kernels
# are compiled ahead of time with their host launchers, one object each.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
arch=${1:-sm_90}
spindle=${SPINDLE:-$root/build/bin/spindle}
work=$root/build/mma_gpu_check
mkdir -p "$work"
gen() {  # gen NAME SPN KERNEL SUFFIX DTYPE-FLAGS...: NAME.cu with the kernel renamed KERNEL+SUFFIX
  local name=$1 spn=$2 kernel=$3 suffix=$4
  shift 4
  "$spindle" gen "$spn" "$@" -o "$work/$name.cu"
  if [ -n "$suffix" ]; then sed -i -E "s/\\b(launch_)?$kernel\\b/\\1$kernel$suffix/g" "$work/$name.cu"; fi
}
gen layout_f16 "$root/tests/golden/kernels/mma_layout.spn" layout "" --dtype T=f16
gen layout_bf16 "$root/tests/golden/kernels/mma_layout.spn" layout _bf16 --dtype T=bf16
gen gemm_f16 "$root/samples/gemm.spn" gemm "" --dtype T=f16 --dtype U=f32
gen gemm_bf16 "$root/samples/gemm.spn" gemm _bf16 --dtype T=bf16 --dtype U=f32
# Non-inline entry points (the launchers are inline), with untyped pointers.
cat >>"$work/layout_f16.cu" <<'X'
cudaError_t run_layout_f16(const void* A, const void* B, int32_t* r, int32_t* c, float* v) { return launch_layout(0, (const __half*)A, (const __half*)B, r, c, v, 16, 16, 16, 64, 8); }
X
cat >>"$work/layout_bf16.cu" <<'X'
cudaError_t run_layout_bf16(const void* A, const void* B, int32_t* r, int32_t* c, float* v) { return launch_layout_bf16(0, (const __spn_bf16*)A, (const __spn_bf16*)B, r, c, v, 16, 16, 16, 64, 8); }
X
cat >>"$work/gemm_f16.cu" <<'X'
cudaError_t run_gemm_f16(const void* A, const void* B, float* C, int64_t M, int64_t K, int64_t N) { return launch_gemm(0, (const __half*)A, (const __half*)B, C, M, K, N); }
X
cat >>"$work/gemm_bf16.cu" <<'X'
cudaError_t run_gemm_bf16(const void* A, const void* B, float* C, int64_t M, int64_t K, int64_t N) { return launch_gemm_bf16(0, (const __spn_bf16*)A, (const __spn_bf16*)B, C, M, K, N); }
X
cp "$root/bench/mma_gpu_check.cu" "$work/main.cu"
for f in layout_f16 layout_bf16 gemm_f16 gemm_bf16 main; do
  nvcc -arch="$arch" -std=c++17 -O3 -c "$work/$f.cu" -o "$work/$f.o" &
done
wait
nvcc -arch="$arch" -o "$work/mma_gpu_check" "$work"/*.o
if [ "${BUILD_ONLY:-0}" = 1 ]; then echo "built $work/mma_gpu_check"; exit 0; fi
"$work/mma_gpu_check"
