// scan, hand-written (samples/scan.spn): inclusive prefix sum of each row,
// the sample's algorithm: one block of 256 per row, the row in registers
// as float4 runs (run r of thread t at columns (r * 256 + t) * 4); each run
// scanned serially, a warp scan (shfl_up) over the run totals, one slot per
// (tile, warp) in shared memory, a block scan over the slots, then each run
// adds its slot's offset and is stored as a float4. N is a compile-time
// constant (-DN=...), as the sample's @static(N); the host checks
// N % 4 == 0 and rows * N < 2^31.
#include "common.cuh"

#ifndef N
#define N 8192
#endif
constexpr int kBlock = 256, kWarps = kBlock / 32;
constexpr int kTiles = (N + 4 * kBlock - 1) / (4 * kBlock);
constexpr int kSlots = kTiles * kWarps;  // at most kBlock * 32 (one pass of the slot scan per 256)

__device__ __forceinline__ float warpInclusiveScan(float v, int lane) {
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const float u = __shfl_up_sync(PARITY_FULL_MASK, v, o);
    if (lane >= o) v += u;
  }
  return v;
}

extern "C" __global__ void __launch_bounds__(kBlock) scan(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float slots[kSlots];
  __shared__ float warpTotals[kWarps];
  const int t = threadIdx.x, lane = t & 31, w = t >> 5;
  const float* xr = x + blockIdx.x * N;
  float* yr = y + blockIdx.x * N;
  float4 v[kTiles];
#pragma unroll
  for (int r = 0; r < kTiles; ++r) {
    const int j = (r * kBlock + t) * 4;
    v[r] = j < N ? *reinterpret_cast<const float4*>(xr + j) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
  // Runs, then the warp's slice of each tile.
#pragma unroll
  for (int r = 0; r < kTiles; ++r) {
    v[r].y += v[r].x;
    v[r].z += v[r].y;
    v[r].w += v[r].z;
    const float total = v[r].w;
    const float before = warpInclusiveScan(total, lane) - total;
    v[r].x += before;
    v[r].y += before;
    v[r].z += before;
    v[r].w += before;
    if (lane == 31) slots[r * kWarps + w] = v[r].w;
  }
  __syncthreads();
  // Exclusive scan of the slots (tile-major, warp-minor: column order),
  // kBlock at a time, carrying the running total.
  float carry = 0.0f;
#pragma unroll
  for (int first = 0; first < kSlots; first += kBlock) {
    const int s = first + t;
    const float own = s < kSlots ? slots[s] : 0.0f;
    const float incl = warpInclusiveScan(own, lane);
    if (lane == 31) warpTotals[w] = incl;
    __syncthreads();
    float warpBefore = 0.0f, all = 0.0f;
#pragma unroll
    for (int k = 0; k < kWarps; ++k) {
      const float wt = warpTotals[k];
      if (k < w) warpBefore += wt;
      all += wt;
    }
    if (s < kSlots) slots[s] = carry + warpBefore + incl - own;
    carry += all;
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < kTiles; ++r) {
    const int j = (r * kBlock + t) * 4;
    const float off = slots[r * kWarps + w];
    if (j < N) *reinterpret_cast<float4*>(yr + j) = make_float4(v[r].x + off, v[r].y + off, v[r].z + off, v[r].w + off);
  }
}
