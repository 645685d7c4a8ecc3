// crossentropy_backward, hand-written (bench/parity/kernels/
// crossentropy_backward.spn; the backward half of llm.c's
// fused_classifier_kernel5): dlogits = (softmax(logits) - onehot(target)) *
// dloss over rows of V bf16 logits at a row pitch P (llm.c pads V = 50257
// to P = 50304). One block of 1024 per row; thread t owns the runs of 8
// columns (one uint4) from t * 8, stepping 8192; pass 1 a running (max, sum)
// per thread, rescaled once per run, combined by block max and block sum;
// pass 2 re-reads the row (L2) and writes the gradient. The last, partial
// run of a row is done element by element. The host checks P % 8 == 0 and
// 32-bit indices.
#include "common.cuh"

constexpr int kBlock = 1024;

extern "C" __global__ void __launch_bounds__(kBlock)
    crossentropy_backward(const __nv_bfloat16* __restrict__ logits, const int* __restrict__ targets, float dloss,
                          __nv_bfloat16* __restrict__ dlogits, int V, int P) {
  const __nv_bfloat16* x = logits + blockIdx.x * P;
  __nv_bfloat16* d = dlogits + blockIdx.x * P;
  float m = negInf(), s = 0.0f;
  for (int j = threadIdx.x * 8; j < V; j += kBlock * 8) {
    if (j + 8 <= V) {
      float v[8];
      unpackBf16x8(load16(x + j), v);
      float top = m;
#pragma unroll
      for (int k = 0; k < 8; ++k) top = fmaxf(top, v[k]);
      s *= expf(m - top);
#pragma unroll
      for (int k = 0; k < 8; ++k) s += expf(v[k] - top);
      m = top;
    } else {
      for (int k = j; k < V; ++k) {
        const float v = __bfloat162float(x[k]);
        const float top = fmaxf(m, v);
        s = s * expf(m - top) + expf(v - top);
        m = top;
      }
    }
  }
  const float rowmax = blockMax(m);
  const float inv = 1.0f / blockSum(s * expf(m - rowmax));  // a thread with no columns has s = 0
  const int target = targets[blockIdx.x];
  for (int j = threadIdx.x * 8; j < V; j += kBlock * 8) {
    if (j + 8 <= V) {
      float v[8];
      unpackBf16x8(load16(x + j), v);
#pragma unroll
      for (int k = 0; k < 8; ++k) v[k] = (expf(v[k] - rowmax) * inv - (j + k == target ? 1.0f : 0.0f)) * dloss;
      *reinterpret_cast<uint4*>(d + j) = packBf16x8(v);
    } else {
      for (int k = j; k < V; ++k)
        d[k] = __float2bfloat16_rn((expf(__bfloat162float(x[k]) - rowmax) * inv - (k == target ? 1.0f : 0.0f)) * dloss);
    }
  }
}
