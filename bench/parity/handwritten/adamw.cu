// adamw, hand-written (samples/adamw.spn; llm.c's adamw_kernel3): bf16
// parameters with an f32 master copy, bf16 gradients, one thread per
// parameter in blocks of 512, 32-bit indices (the host checks), llm.c's
// stochastic rounding (SquirrelNoise5 of the thread's position).
#include "common.cuh"

__device__ __forceinline__ unsigned squirrelNoise5(unsigned position, unsigned seed) {
  unsigned h = position * 0xd2a80a3fu;
  h += seed;
  h ^= h >> 9;
  h += 0xa884f197u;
  h ^= h >> 11;
  h *= 0x6c736f4bu;
  h ^= h >> 13;
  h += 0xb79f3abbu;
  h ^= h >> 15;
  h *= 0x1b56c4f5u;
  h ^= h >> 17;
  return h;
}

__device__ __forceinline__ float lerp(float start, float end, float weight) {
  return fmaf(weight, end, fmaf(-weight, start, start));
}

extern "C" __global__ void __launch_bounds__(512)
    adamw(__nv_bfloat16* __restrict__ params, float* __restrict__ master, const __nv_bfloat16* __restrict__ grads,
          float* __restrict__ m_state, float* __restrict__ v_state, int n, float lr, float beta1, float beta2,
          float beta1_correction, float beta2_correction, float eps, float weight_decay, float grad_scale,
          unsigned seed) {
  const int i = blockIdx.x * 512 + threadIdx.x;
  if (i >= n) return;
  const float g = grad_scale * __bfloat162float(grads[i]);
  float m = lerp(g, m_state[i], beta1);
  m_state[i] = m;
  float v = lerp(g * g, v_state[i], beta2);
  v_state[i] = v;
  m /= beta1_correction;
  v /= beta2_correction;
  const float old = master[i];
  const float p = old - lr * (m / (sqrtf(v) + eps) + weight_decay * old);
  const unsigned threshold = squirrelNoise5(threadIdx.x + 198491317u * blockIdx.x, seed) & 0xFFFFu;
  unsigned bits = __float_as_uint(p);
  bits = (bits & 0xFFFFu) > threshold ? bits | 0xFFFFu : bits & 0xFFFF0000u;
  params[i] = __float2bfloat16_rn(__uint_as_float(bits));
  master[i] = p;
}
