// rotary_embedding, GPT-NeoX layout, hand-written (samples/rotary_embedding.spn
// with NEOX=True; vLLM's rotary_embedding_kernel<scalar_t, true>): in place
// on q and k, which are slices of one qkv buffer (token stride `stride`,
// head stride HS); one block per token of min(NH * ROT / 2, 512) threads,
// one (head, pair) per thread and step, each product rounded to bf16 then
// the sum, as vLLM's scalar_t arithmetic. 32-bit indices (the host checks).
#include "common.cuh"

__device__ __forceinline__ void rotate(__nv_bfloat16* __restrict__ x, int heads, int HS, int half,
                                       const __nv_bfloat16* __restrict__ cache) {
  for (int i = threadIdx.x; i < heads * half; i += blockDim.x) {
    const int head = i / half, r = i % half;
    const float c = __bfloat162float(cache[r]), s = __bfloat162float(cache[half + r]);
    __nv_bfloat16* p = x + head * HS;
    const float a = __bfloat162float(p[r]), b = __bfloat162float(p[half + r]);
    p[r] = __float2bfloat16_rn(roundBf16(a * c) - roundBf16(b * s));
    p[half + r] = __float2bfloat16_rn(roundBf16(b * c) + roundBf16(a * s));
  }
}

extern "C" __global__ void __launch_bounds__(512)
    rotary_embedding_neox(const long long* __restrict__ positions, __nv_bfloat16* __restrict__ q,
                          __nv_bfloat16* __restrict__ k, const __nv_bfloat16* __restrict__ cache, int stride, int NH,
                          int NKV, int HS, int ROT) {
  const int token = blockIdx.x;
  const long long pos = positions[token];
  const __nv_bfloat16* row = cache + pos * ROT;
  rotate(q + token * stride, NH, HS, ROT / 2, row);
  rotate(k + token * stride, NKV, HS, ROT / 2, row);
}
