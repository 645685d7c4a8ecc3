// layernorm, hand-written (samples/layernorm.spn): one block of 512 threads
// per row, the row in registers as float4 (as softmax.cu), mean and
// variance from registers by two block sums, y = (v - mean) * rstd * w + b
// with w and b read as float4. N is a compile-time constant (-DN=...), as
// the sample's @static(N); the host checks N % 4 == 0.
#include "common.cuh"

#ifndef N
#define N 8192
#endif
constexpr int kBlock = 512;
constexpr int kChunks = (N + 4 * kBlock - 1) / (4 * kBlock);
constexpr float kEps = 1e-5f;

extern "C" __global__ void __launch_bounds__(kBlock) layernorm(const float* __restrict__ x, const float* __restrict__ w,
                                                               const float* __restrict__ b, float* __restrict__ y) {
  const float* xr = x + blockIdx.x * N;
  float* yr = y + blockIdx.x * N;
  float4 v[kChunks];
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const int j = (k * kBlock + threadIdx.x) * 4;
    v[k] = j < N ? *reinterpret_cast<const float4*>(xr + j) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    s += (v[k].x + v[k].y) + (v[k].z + v[k].w);
  }
  const float mean = blockSum(s) / float(N);
  float q = 0.0f;
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const int j = (k * kBlock + threadIdx.x) * 4;
    if (j < N) {
      const float a = v[k].x - mean, c = v[k].y - mean, d = v[k].z - mean, e = v[k].w - mean;
      q += (a * a + c * c) + (d * d + e * e);
    }
  }
  const float rstd = rsqrtf(blockSum(q) / float(N) + kEps);
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const int j = (k * kBlock + threadIdx.x) * 4;
    if (j < N) {
      const float4 wv = *reinterpret_cast<const float4*>(w + j), bv = *reinterpret_cast<const float4*>(b + j);
      float4 o;
      o.x = (v[k].x - mean) * rstd * wv.x + bv.x;
      o.y = (v[k].y - mean) * rstd * wv.y + bv.y;
      o.z = (v[k].z - mean) * rstd * wv.z + bv.z;
      o.w = (v[k].w - mean) * rstd * wv.w + bv.w;
      *reinterpret_cast<float4*>(yr + j) = o;
    }
  }
}
