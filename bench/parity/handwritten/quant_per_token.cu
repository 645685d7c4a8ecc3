// quant_per_token, hand-written (samples/quant_per_token.spn; vLLM's
// dynamic per-token fp8 / int8 quantization): bf16 rows, one block per row
// of min(N / 8, 1024) threads (the host checks the block is a multiple of
// 32 and N % 8 == 0), runs of 8 bf16 as uint4; pass 1 the row's absmax,
// scale = max(absmax / qmax, 1 / (448 * 512)); pass 2 re-reads the row (L2)
// and stores 8 codes as one uint2. fp8 e4m3 through cuda_fp8.h's
// saturating conversion (the cvt instruction on sm_89 and later), int8 as
// rint then clamped to [-128, 127].
#ifndef PARITY_HOST_EMULATION
#include <cuda_fp8.h>
#endif

#include "common.cuh"

constexpr float kMinScale = 1.0f / (448.0f * 512.0f);

template <bool Int8>
__device__ __forceinline__ void quantRow(const __nv_bfloat16* __restrict__ x, unsigned char* __restrict__ y,
                                         float* __restrict__ scales, int N) {
  const __nv_bfloat16* xr = x + blockIdx.x * N;
  unsigned char* yr = y + blockIdx.x * N;
  const int step = blockDim.x * 8;
  float amax = 0.0f;
  for (int j = threadIdx.x * 8; j < N; j += step) {
    float v[8];
    unpackBf16x8(load16(xr + j), v);
#pragma unroll
    for (int k = 0; k < 8; ++k) amax = fmaxf(amax, fabsf(v[k]));
  }
  const float scale = fmaxf(blockMax(amax) / (Int8 ? 127.0f : 448.0f), kMinScale);
  if (threadIdx.x == 0) scales[blockIdx.x] = scale;
  const float inv = 1.0f / scale;
  for (int j = threadIdx.x * 8; j < N; j += step) {
    float v[8];
    unpackBf16x8(load16(xr + j), v);
    uint2 codes;
    unsigned char* c = reinterpret_cast<unsigned char*>(&codes);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const float q = v[k] * inv;
      if (Int8) c[k] = (unsigned char)(signed char)(int)fminf(fmaxf(rintf(q), -128.0f), 127.0f);
      else c[k] = (unsigned char)__nv_cvt_float_to_fp8(q, __NV_SATFINITE, __NV_E4M3);
    }
    *reinterpret_cast<uint2*>(yr + j) = codes;
  }
}

extern "C" __global__ void __launch_bounds__(1024)
    quant_per_token_fp8(const __nv_bfloat16* __restrict__ x, unsigned char* __restrict__ y, float* __restrict__ scales,
                        int N) {
  quantRow<false>(x, y, scales, N);
}

extern "C" __global__ void __launch_bounds__(1024)
    quant_per_token_int8(const __nv_bfloat16* __restrict__ x, unsigned char* __restrict__ y, float* __restrict__ scales,
                         int N) {
  quantRow<true>(x, y, scales, N);
}
