// rotary_embedding, hand-written (samples/rotary_embedding.spn; vLLM's
// rotary_embedding_kernel<scalar_t, IS_NEOX>): in place on q and k, which
// are slices of one qkv buffer (token stride `stride`, head stride HS); one
// block per token of min(NH * ROT / 2, 512) threads, one (head, pair) per
// thread and step, each product rounded to bf16 then the sum, as vLLM's
// scalar_t arithmetic. The pair is (r, ROT/2 + r) in the GPT-NeoX layout,
// (2r, 2r + 1) in the GPT-J one: a template parameter, one entry point per
// layout. 32-bit indices (the host checks).
#include "common.cuh"

template <bool Neox>
__device__ __forceinline__ void rotate(__nv_bfloat16* __restrict__ x, int heads, int HS, int half,
                                       const __nv_bfloat16* __restrict__ cache) {
  for (int i = threadIdx.x; i < heads * half; i += blockDim.x) {
    const int head = i / half, r = i % half;
    const int xi = Neox ? r : 2 * r, yi = Neox ? half + r : 2 * r + 1;
    const float c = __bfloat162float(cache[r]), s = __bfloat162float(cache[half + r]);
    __nv_bfloat16* p = x + head * HS;
    const float a = __bfloat162float(p[xi]), b = __bfloat162float(p[yi]);
    p[xi] = __float2bfloat16_rn(roundBf16(a * c) - roundBf16(b * s));
    p[yi] = __float2bfloat16_rn(roundBf16(b * c) + roundBf16(a * s));
  }
}

template <bool Neox>
__device__ __forceinline__ void rotary(const long long* __restrict__ positions, __nv_bfloat16* __restrict__ q,
                                       __nv_bfloat16* __restrict__ k, const __nv_bfloat16* __restrict__ cache,
                                       int stride, int NH, int NKV, int HS, int ROT) {
  const int token = blockIdx.x;
  const long long pos = positions[token];
  const __nv_bfloat16* row = cache + pos * ROT;
  rotate<Neox>(q + token * stride, NH, HS, ROT / 2, row);
  rotate<Neox>(k + token * stride, NKV, HS, ROT / 2, row);
}

extern "C" __global__ void __launch_bounds__(512)
    rotary_embedding_neox(const long long* __restrict__ positions, __nv_bfloat16* __restrict__ q,
                          __nv_bfloat16* __restrict__ k, const __nv_bfloat16* __restrict__ cache, int stride, int NH,
                          int NKV, int HS, int ROT) {
  rotary<true>(positions, q, k, cache, stride, NH, NKV, HS, ROT);
}
extern "C" __global__ void __launch_bounds__(512)
    rotary_embedding_gptj(const long long* __restrict__ positions, __nv_bfloat16* __restrict__ q,
                          __nv_bfloat16* __restrict__ k, const __nv_bfloat16* __restrict__ cache, int stride, int NH,
                          int NKV, int HS, int ROT) {
  rotary<false>(positions, q, k, cache, stride, NH, NKV, HS, ROT);
}
