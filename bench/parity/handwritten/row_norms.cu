// row_norms, hand-written (samples/row_norms.spn): per-row max |x| and
// L2 norm, one warp per row, 8 rows per block of 256 (the grid sized for
// 32-wide warps); each lane reads float4s at columns (lane + 32 u) * 4,
// 4 of them in flight per step; butterfly max and warp sum. The host checks
// N % 4 == 0 and M * N < 2^31.
#include "common.cuh"

constexpr int kBlock = 256, kUnroll = 4;

extern "C" __global__ void __launch_bounds__(kBlock)
    row_norms(const float* __restrict__ x, float* __restrict__ amax, float* __restrict__ l2, int M, int N) {
  const int lane = threadIdx.x & 31;
  const int r = blockIdx.x * (kBlock / 32) + (threadIdx.x >> 5);
  if (r >= M) return;  // the whole warp
  const float* xr = x + r * N;
  float m = 0.0f, ss = 0.0f;
  int j = lane * 4;
  for (; j + (kUnroll - 1) * 128 < N; j += kUnroll * 128) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = *reinterpret_cast<const float4*>(xr + j + u * 128);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      m = fmaxf(m, fmaxf(fmaxf(fabsf(v[u].x), fabsf(v[u].y)), fmaxf(fabsf(v[u].z), fabsf(v[u].w))));
      ss += (v[u].x * v[u].x + v[u].y * v[u].y) + (v[u].z * v[u].z + v[u].w * v[u].w);
    }
  }
  for (; j < N; j += 128) {
    const float4 v = *reinterpret_cast<const float4*>(xr + j);
    m = fmaxf(m, fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w))));
    ss += (v.x * v.x + v.y * v.y) + (v.z * v.z + v.w * v.w);
  }
  m = warpMax(m);
  ss = warpSum(ss);
  if (lane == 0) {
    amax[r] = m;
    l2[r] = sqrtf(ss);
  }
}
