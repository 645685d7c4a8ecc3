// axpy, hand-written (samples/axpy.spn): y = a * x + y, 4 consecutive
// elements per thread (one 16-byte float4 for f32, one 8-byte uint2 of
// 4 halves for f16), blocks of 256, 32-bit indices.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(256)
    axpy_f32(const float* __restrict__ x, float* __restrict__ y, float a, int n) {
  const int i = (blockIdx.x * 256 + threadIdx.x) * 4;
  if (i + 4 <= n) {
    const float4 xv = *reinterpret_cast<const float4*>(x + i);
    float4 yv = *reinterpret_cast<const float4*>(y + i);
    yv.x = a * xv.x + yv.x;
    yv.y = a * xv.y + yv.y;
    yv.z = a * xv.z + yv.z;
    yv.w = a * xv.w + yv.w;
    *reinterpret_cast<float4*>(y + i) = yv;
  } else {
    for (int k = i; k < n; ++k) y[k] = a * x[k] + y[k];
  }
}

extern "C" __global__ void __launch_bounds__(256)
    axpy_f16(const __half* __restrict__ x, __half* __restrict__ y, float a, int n) {
  const int i = (blockIdx.x * 256 + threadIdx.x) * 4;
  if (i + 4 <= n) {
    const uint2 xv = *reinterpret_cast<const uint2*>(x + i);
    uint2 yv = *reinterpret_cast<const uint2*>(y + i);
    const __half2* xh = reinterpret_cast<const __half2*>(&xv);
    __half2* yh = reinterpret_cast<__half2*>(&yv);
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      const float2 xf = __half22float2(xh[k]), yf = __half22float2(yh[k]);
      yh[k] = __floats2half2_rn(a * xf.x + yf.x, a * xf.y + yf.y);
    }
    *reinterpret_cast<uint2*>(y + i) = yv;
  } else {
    for (int k = i; k < n; ++k) y[k] = __float2half_rn(a * __half2float(x[k]) + __half2float(y[k]));
  }
}
