// fused_add_rmsnorm, hand-written (samples/fused_add_rmsnorm.spn; vLLM's
// vectorized fused_add_rms_norm_kernel): in place on x and residual, bf16,
// one block per row of min(H / 8, 1024) threads (the host checks that the
// block is a multiple of 32 and H % 8 == 0), runs of 8 bf16 as uint4.
//   pass 1: residual = bf16(x + residual), ss += residual^2 (the stored values)
//   pass 2: x = bf16(bf16(residual * rinv) * w), re-reading the runs this
//           thread stored (L1/L2), rinv = rsqrt(sum / H + eps)
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(1024)
    fused_add_rmsnorm(__nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ residual,
                      const __nv_bfloat16* __restrict__ w, float eps, int H) {
  __nv_bfloat16* xr = x + blockIdx.x * H;
  __nv_bfloat16* rr = residual + blockIdx.x * H;
  const int step = blockDim.x * 8;
  float ss = 0.0f;
  for (int j = threadIdx.x * 8; j < H; j += step) {
    float a[8], b[8];
    unpackBf16x8(load16(xr + j), a);
    unpackBf16x8(load16(rr + j), b);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      b[k] = roundBf16(a[k] + b[k]);
      ss += b[k] * b[k];
    }
    *reinterpret_cast<uint4*>(rr + j) = packBf16x8(b);
  }
  const float rinv = rsqrtf(blockSum(ss) / float(H) + eps);
  for (int j = threadIdx.x * 8; j < H; j += step) {
    float r[8], g[8], o[8];
    unpackBf16x8(load16(rr + j), r);
    unpackBf16x8(load16(w + j), g);
#pragma unroll
    for (int k = 0; k < 8; ++k) o[k] = roundBf16(r[k] * rinv) * g[k];
    *reinterpret_cast<uint4*>(xr + j) = packBf16x8(o);
  }
}
