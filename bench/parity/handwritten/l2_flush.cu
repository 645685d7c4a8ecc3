// l2_flush: reads a buffer several times the size of L2 between timed
// launches, so each timed launch starts with none of its data in L2. It
// reads rather than writes: a memset would leave L2 full of dirty lines,
// whose write-back to DRAM would then happen inside the timed kernel.
// Nothing is stored unless the sum is an impossible value (the buffer holds
// zeros), which keeps the loads from being optimized away.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(256)
    l2_flush(const float4* __restrict__ p, int n4, float* __restrict__ sink) {
  float s = 0.0f;
  for (int i = blockIdx.x * 256 + threadIdx.x; i < n4; i += gridDim.x * 256) {
    const float4 v = p[i];
    s += (v.x + v.y) + (v.z + v.w);
  }
  if (s == 1234.5f) sink[0] = s;
}
