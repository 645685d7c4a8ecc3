// transpose, hand-written (samples/transpose.spn): 64 x 64 tiles through
// shared memory padded to 65 columns, blocks of 64 x 8 threads, 8 elements
// per thread each way, 32-bit indices (the host checks M * N < 2^31).
#include "common.cuh"

constexpr int kTile = 64, kRows = 8;

extern "C" __global__ void __launch_bounds__(kTile* kRows)
    transpose(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  __shared__ float tile[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
#pragma unroll
  for (int k = 0; k < kTile; k += kRows) {
    const int r = row0 + ty + k, c = col0 + tx;
    if (r < M && c < N) tile[ty + k][tx] = x[r * N + c];
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < kTile; k += kRows) {
    const int r = col0 + ty + k, c = row0 + tx;  // y is [N, M]
    if (r < N && c < M) y[r * M + c] = tile[tx][ty + k];
  }
}
