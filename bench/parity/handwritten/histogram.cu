// histogram, hand-written (samples/histogram.spn): bins in dynamic shared
// memory, a persistent grid of min(tiles, resident blocks) blocks of 256
// (the host asks the driver's occupancy API, as the sample's
// resident_blocks()), tiles of 256 x 4 x 8 values walked grid-stride; in a
// whole tile every thread issues its 8 float4 loads before its first
// atomic; the last, partial tile is checked; the block's non-zero bins go
// to h with global atomics. 32-bit indices (the host checks n < 2^31).
#include "common.cuh"

constexpr int kBlock = 256, kVec = 4, kRuns = 8, kTile = kBlock * kVec * kRuns;

extern "C" __global__ void __launch_bounds__(kBlock)
    histogram(const float* __restrict__ x, int* __restrict__ h, float lo, float hi, int n, int bins) {
  PARITY_DYNAMIC_SHARED(int, counts);  // bins ints
  const int t = threadIdx.x;
  for (int k = t; k < bins; k += kBlock) counts[k] = 0;
  __syncthreads();
  const float scale = float(bins) / (hi - lo);
  const int last = bins - 1;
  const int whole = n / kTile;
  int tile = blockIdx.x;
  for (; tile < whole; tile += gridDim.x) {
    const float* first = x + tile * kTile;
    float4 v[kRuns];
#pragma unroll
    for (int r = 0; r < kRuns; ++r) v[r] = *reinterpret_cast<const float4*>(first + (r * kBlock + t) * kVec);
#pragma unroll
    for (int r = 0; r < kRuns; ++r) {
      const float e[4] = {v[r].x, v[r].y, v[r].z, v[r].w};
#pragma unroll
      for (int k = 0; k < 4; ++k)
        if (e[k] >= lo && e[k] < hi) atomicAdd(&counts[min(int((e[k] - lo) * scale), last)], 1);
    }
  }
  if (tile == whole) {  // exactly one block gets here
    const int first = whole * kTile;
#pragma unroll
    for (int r = 0; r < kRuns; ++r) {
      const int start = first + (r * kBlock + t) * kVec;
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        if (start + k < n) {
          const float e = x[start + k];
          if (e >= lo && e < hi) atomicAdd(&counts[min(int((e - lo) * scale), last)], 1);
        }
      }
    }
  }
  __syncthreads();
  for (int k = t; k < bins; k += kBlock) {
    const int c = counts[k];
    if (c != 0) atomicAdd(&h[k], c);
  }
}
