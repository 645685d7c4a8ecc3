// softmax, hand-written (samples/softmax.spn): one block of 512 threads per
// row, the row read once into registers as float4 (thread t holds the 4
// columns from (k * 512 + t) * 4 for k < N / 2048), block max, exp, block
// sum, normalize, float4 stores. N is a compile-time constant (-DN=...), as
// the sample's @static(N); the host checks N % 4 == 0.
#include "common.cuh"

#ifndef N
#define N 8192
#endif
constexpr int kBlock = 512;
constexpr int kChunks = (N + 4 * kBlock - 1) / (4 * kBlock);  // float4s per thread

extern "C" __global__ void __launch_bounds__(kBlock) softmax(const float* __restrict__ x, float* __restrict__ y) {
  const float* xr = x + blockIdx.x * N;  // rows * N < 2^31 (host checks)
  float* yr = y + blockIdx.x * N;
  float4 v[kChunks];
  float m = negInf();
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const int j = (k * kBlock + threadIdx.x) * 4;
    v[k] = j < N ? *reinterpret_cast<const float4*>(xr + j) : make_float4(negInf(), negInf(), negInf(), negInf());
    m = fmaxf(m, fmaxf(fmaxf(v[k].x, v[k].y), fmaxf(v[k].z, v[k].w)));
  }
  m = blockMax(m);
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    v[k].x = expf(v[k].x - m);
    v[k].y = expf(v[k].y - m);
    v[k].z = expf(v[k].z - m);
    v[k].w = expf(v[k].w - m);
    s += (v[k].x + v[k].y) + (v[k].z + v[k].w);
  }
  const float inv = 1.0f / blockSum(s);
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const int j = (k * kBlock + threadIdx.x) * 4;
    if (j < N) *reinterpret_cast<float4*>(yr + j) = make_float4(v[k].x * inv, v[k].y * inv, v[k].z * inv, v[k].w * inv);
  }
}
