// attention_softmax, hand-written (bench/parity/kernels/attention_softmax.spn;
// llm.c's softmax_forward_kernel5 with 16-byte runs): the causal, scaled
// softmax of each row of bf16 scores [BH * T, T]; one warp per row, 8 rows
// per block of 256; lane l owns the runs of 8 columns (one uint4) from
// l * 8, stepping 256. Pass 1 reads j <= i with a running (max, sum) per
// lane rescaled once per run; pass 2 re-reads with __ldcs and writes with
// __stcs (as llm.c), zeros past the diagonal without reading. Runs that
// straddle the diagonal or the row's end go element by element. The host
// checks T % 8 == 0 and 32-bit indices.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(256) attention_softmax(const __nv_bfloat16* __restrict__ att, float scale,
                                                                    __nv_bfloat16* __restrict__ out, int rows, int T) {
  const int lane = threadIdx.x & 31;
  const int r = blockIdx.x * 8 + (threadIdx.x >> 5);
  if (r >= rows) return;    // the whole warp
  const int n = r % T + 1;  // unmasked columns
  const __nv_bfloat16* x = att + r * T;
  __nv_bfloat16* o = out + r * T;
  float m = negInf(), s = 0.0f;
  for (int j = lane * 8; j < n; j += 256) {
    if (j + 8 <= n) {
      float v[8];
      unpackBf16x8(load16(x + j), v);
      float top = m;
#pragma unroll
      for (int k = 0; k < 8; ++k) top = fmaxf(top, v[k]);
      s *= expf(scale * (m - top));
#pragma unroll
      for (int k = 0; k < 8; ++k) s += expf(scale * (v[k] - top));
      m = top;
    } else {
      for (int k = j; k < n; ++k) {
        const float v = __bfloat162float(x[k]);
        const float top = fmaxf(m, v);
        s = s * expf(scale * (m - top)) + expf(scale * (v - top));
        m = top;
      }
    }
  }
  const float rowmax = warpMax(m);
  const float inv = 1.0f / warpSum(s * expf(scale * (m - rowmax)));  // a lane with no columns has s = 0
  for (int j = lane * 8; j < T; j += 256) {
    if (j + 8 <= n) {
      float v[8];
      unpackBf16x8(__ldcs(reinterpret_cast<const uint4*>(x + j)), v);
#pragma unroll
      for (int k = 0; k < 8; ++k) v[k] = expf(scale * (v[k] - rowmax)) * inv;
      __stcs(reinterpret_cast<uint4*>(o + j), packBf16x8(v));
    } else if (j >= n && j + 8 <= T) {
      __stcs(reinterpret_cast<uint4*>(o + j), make_uint4(0u, 0u, 0u, 0u));
    } else {
      for (int k = j; k < j + 8 && k < T; ++k)
        o[k] = __float2bfloat16_rn(k < n ? expf(scale * (__bfloat162float(x[k]) - rowmax)) * inv : 0.0f);
    }
  }
}
