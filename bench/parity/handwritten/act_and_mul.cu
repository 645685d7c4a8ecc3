// act_and_mul with silu, hand-written (samples/act_and_mul.spn with
// ACT=silu; vLLM's vectorized act_and_mul_kernel<silu_kernel>): x is
// [M, 2 * D] (gate half, then up half), out[t, j] = bf16(bf16(silu(gate))
// * up); one block per token of min(D / 8, 1024) threads, runs of 8 bf16 as
// uint4. The host checks D % 8 == 0 and M * 2 * D < 2^31.
#include "common.cuh"

__device__ __forceinline__ float silu(float v) { return v / (1.0f + expf(-v)); }

extern "C" __global__ void __launch_bounds__(1024)
    act_and_mul_silu(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ out, int D) {
  const __nv_bfloat16* gate = x + blockIdx.x * 2 * D;
  const __nv_bfloat16* up = gate + D;
  __nv_bfloat16* o = out + blockIdx.x * D;
  for (int j = threadIdx.x * 8; j < D; j += blockDim.x * 8) {
    float g[8], u[8];
    unpackBf16x8(load16(gate + j), g);
    unpackBf16x8(load16(up + j), u);
#pragma unroll
    for (int k = 0; k < 8; ++k) g[k] = roundBf16(silu(g[k])) * u[k];
    *reinterpret_cast<uint4*>(o + j) = packBf16x8(g);
  }
}
