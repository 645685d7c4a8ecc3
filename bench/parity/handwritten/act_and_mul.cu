// act_and_mul, hand-written (samples/act_and_mul.spn; vLLM's vectorized
// act_and_mul_kernel<silu_kernel / gelu_kernel / gelu_tanh_kernel>): x is
// [M, 2 * D] (gate half, then up half), out[t, j] = bf16(bf16(act(gate))
// * up); one block per token of min(D / 8, 1024) threads, runs of 8 bf16 as
// uint4. The activation is a template parameter, as in vLLM; one entry point
// per activation. The host checks D % 8 == 0 and M * 2 * D < 2^31.
#include "common.cuh"

enum class Act { Silu, Gelu, GeluTanh };

template <Act A>
__device__ __forceinline__ float activation(float v) {
  if (A == Act::Silu) return v / (1.0f + expf(-v));
  if (A == Act::Gelu) return v * 0.5f * (1.0f + erff(v * 0.70710678118654752f));    // 1 / sqrt(2)
  const float cube = v * v * v;                                                     // gelu_tanh
  return 0.5f * v * (1.0f + tanhf(0.79788456080286536f * (v + 0.044715f * cube)));  // sqrt(2 / pi)
}

template <Act A>
__device__ __forceinline__ void actAndMul(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ out, int D) {
  const __nv_bfloat16* gate = x + blockIdx.x * 2 * D;
  const __nv_bfloat16* up = gate + D;
  __nv_bfloat16* o = out + blockIdx.x * D;
  for (int j = threadIdx.x * 8; j < D; j += blockDim.x * 8) {
    float g[8], u[8];
    unpackBf16x8(load16(gate + j), g);
    unpackBf16x8(load16(up + j), u);
#pragma unroll
    for (int k = 0; k < 8; ++k) g[k] = roundBf16(activation<A>(g[k])) * u[k];
    *reinterpret_cast<uint4*>(o + j) = packBf16x8(g);
  }
}

extern "C" __global__ void __launch_bounds__(1024)
    act_and_mul_silu(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ out, int D) {
  actAndMul<Act::Silu>(x, out, D);
}
extern "C" __global__ void __launch_bounds__(1024)
    act_and_mul_gelu(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ out, int D) {
  actAndMul<Act::Gelu>(x, out, D);
}
extern "C" __global__ void __launch_bounds__(1024)
    act_and_mul_gelu_tanh(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ out, int D) {
  actAndMul<Act::GeluTanh>(x, out, D);
}
