// bias_gelu, hand-written (samples/bias_gelu.spn): y = gelu_tanh(x + bias)
// and rowsum[r] = sum_j y[r, j]; one block of 256 per row, float4 accesses
// of x, bias and y (thread t at columns (k * 256 + t) * 4), a block sum.
// The host checks N % 4 == 0 and rows * N < 2^31.
#include "common.cuh"

constexpr int kBlock = 256;
constexpr float kSqrt2OverPi = 0.7978845608f, kGeluC = 0.044715f;

__device__ __forceinline__ float gelu(float v) {
  return 0.5f * v * (1.0f + tanhf(kSqrt2OverPi * (v + kGeluC * v * v * v)));
}

extern "C" __global__ void __launch_bounds__(kBlock)
    bias_gelu(const float* __restrict__ x, const float* __restrict__ bias, float* __restrict__ y,
              float* __restrict__ rowsum, int n) {
  const float* xr = x + blockIdx.x * n;
  float* yr = y + blockIdx.x * n;
  float total = 0.0f;
#pragma unroll 4
  for (int j = threadIdx.x * 4; j < n; j += kBlock * 4) {
    const float4 xv = *reinterpret_cast<const float4*>(xr + j), bv = *reinterpret_cast<const float4*>(bias + j);
    float4 o;
    o.x = gelu(xv.x + bv.x);
    o.y = gelu(xv.y + bv.y);
    o.z = gelu(xv.z + bv.z);
    o.w = gelu(xv.w + bv.w);
    *reinterpret_cast<float4*>(yr + j) = o;
    total += (o.x + o.y) + (o.z + o.w);
  }
  total = blockSum(total);
  if (threadIdx.x == 0) rowsum[blockIdx.x] = total;
}
