#!/usr/bin/env bash
# samples/gemm.spn on an NVIDIA GPU through the Spindle runtime (nvrtc,
# specialized as a user's launch is): bench/gemm_check.cpp checks each
# shape by value and times it; then torch.matmul (f16/bf16 in and out,
# cuBLAS) at the same shapes in the same session, as the anchor.
#
#   bash bench/gemm_gpu.sh [SPN...]       (default: samples/gemm.spn)
#
# Environment: GEMM_CHECK (the gemm_check binary; built into
# build-bench-gpu/ when unset), GEMM_ARGS (extra gemm_check arguments),
# NO_TORCH=1 (skip the anchor).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BENCH_BUILD:-$ROOT/build-bench-gpu}"
bin="${GEMM_CHECK:-}"
if [ -z "$bin" ]; then
  fmt_args=()
  if ls "$ROOT"/.debs/libfmt*.deb >/dev/null 2>&1 && ! ls /usr/lib/*/cmake/fmt >/dev/null 2>&1; then
    mkdir -p "$BUILD/debroot"
    for deb in "$ROOT"/.debs/libfmt*.deb; do dpkg -x "$deb" "$BUILD/debroot"; done
    fmt_args=(-Dfmt_DIR="$(dirname "$(ls "$BUILD"/debroot/usr/lib/*/cmake/fmt/fmt-config.cmake)")")
  fi
  cmake -S "$ROOT/bench" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DSPINDLE_BUILD_TESTS=OFF "${fmt_args[@]}" >/dev/null &&
    cmake --build "$BUILD" --target spindle_gemm_check -j "${BENCH_JOBS:-16}" >/dev/null || { echo "gemm_gpu: build failed"; exit 2; }
  bin="$BUILD/bin/gemm_check"
fi
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader || true
rc=0
[ $# -eq 0 ] && set -- "$ROOT/samples/gemm.spn"
for spn in "$@"; do
  echo "== $spn"
  # shellcheck disable=SC2086
  "$bin" "$spn" ${GEMM_ARGS:-} || rc=1
done
[ "${NO_TORCH:-0}" = 1 ] && exit $rc
echo "== torch.matmul (the anchor)"
python3 - <<'PY' || rc=1
import torch
shapes = [(4096, 4096, 4096), (8192, 8192, 1024), (4096, 4096, 128), (4096, 4096, 4095), (4000, 3000, 1000)]
for dt in (torch.float16, torch.bfloat16):
    for M, N, K in shapes:
        a = torch.randn(M, K, device="cuda", dtype=dt)
        b = torch.randn(K, N, device="cuda", dtype=dt)
        for _ in range(5):
            torch.matmul(a, b)
        ts = []
        for _ in range(20):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record(); torch.matmul(a, b); e.record(); e.synchronize()
            ts.append(s.elapsed_time(e))
        ms = sorted(ts)[len(ts) // 2]
        print(f"torch.matmul {str(dt)[6:]} {M}x{N}x{K}: {ms:.4f} ms, {2 * M * N * K / ms / 1e9:.1f} TFLOP/s")
PY
exit $rc
