// scale_strided, hand-written (samples/scale_strided.spn): y = alpha * x
// with y row-major, the sample's 2-D mapping (blocks of 32 x 8 threads,
// 4 columns and 4 rows (8 apart) per thread). scale_rows: x row-major,
// float4 accesses (the host checks N % 4 == 0). scale_gather: x any view
// (strides s0, s1 in elements), gathered scalar reads, as the sample's
// general binary. 32-bit indices (the host checks).
#include "common.cuh"

constexpr int BX = 32, BY = 8, RPT = 4, VEC = 4;

extern "C" __global__ void __launch_bounds__(BX* BY)
    scale_rows(const float* __restrict__ x, float* __restrict__ y, float alpha, int M, int N) {
  const int i0 = blockIdx.y * (BY * RPT) + threadIdx.y;
  const int j = (blockIdx.x * BX + threadIdx.x) * VEC;
#pragma unroll
  for (int r = 0; r < RPT; ++r) {
    const int i = i0 + r * BY;
    if (i < M && j < N) {
      const float4 v = *reinterpret_cast<const float4*>(x + i * N + j);
      *reinterpret_cast<float4*>(y + i * N + j) = make_float4(alpha * v.x, alpha * v.y, alpha * v.z, alpha * v.w);
    }
  }
}

extern "C" __global__ void __launch_bounds__(BX* BY)
    scale_gather(const float* __restrict__ x, float* __restrict__ y, float alpha, int M, int N, int s0, int s1) {
  const int i0 = blockIdx.y * (BY * RPT) + threadIdx.y;
  const int j = (blockIdx.x * BX + threadIdx.x) * VEC;
#pragma unroll
  for (int r = 0; r < RPT; ++r) {
    const int i = i0 + r * BY;
    if (i < M) {
#pragma unroll
      for (int k = 0; k < VEC; ++k)
        if (j + k < N) y[i * N + j + k] = alpha * x[i * s0 + (j + k) * s1];
    }
  }
}
