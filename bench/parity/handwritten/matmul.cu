// matmul, hand-written (samples/matmul.spn): C = A @ B in f32, the sample's
// tiling (128 x 128 tiles of C per block of 256 threads, K in slabs of 8,
// an 8 x 8 register tile per thread, A stored transposed in shared memory
// with rows padded by 4), written with the usual CUDA moves: float4 global
// loads (one of A, one of B per thread and slab), float4 shared reads, and
// each thread's 8 x 8 outputs as two 4 x 4 quadrants 64 rows / columns
// apart, so the float4 reads of a quarter-warp hit 32 different banks.
// K is a compile-time constant (-DK=...), as the sample's @static(K); the
// host checks M % 128 == N % 128 == K % 8 == 0 and 32-bit indices.
#include "common.cuh"

#ifndef K
#define K 4096
#endif
constexpr int BM = 128, BN = 128, BK = 8;

// One 16-byte store. Written as PTX: nvcc turns half of the float4 stores
// of the epilogue (c[0] = make_float4(...)) into four 4-byte stores.
__device__ __forceinline__ void store16(float4* p, float a, float b, float c, float d) {
#ifndef PARITY_HOST_EMULATION
  asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
#else
  *p = make_float4(a, b, c, d);
#endif
}

extern "C" __global__ void __launch_bounds__(256)
    matmul(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N) {
  __shared__ __align__(16) float As[BK][BM + 4];  // As[k][m]
  __shared__ __align__(16) float Bs[BK][BN];
  (void)M;  // the grid covers the rows (M % 128 == 0)
  const int tid = threadIdx.x;
  const int tr = tid >> 4, tc = tid & 15;  // this thread's rows tr*4 + {0, 64}, columns tc*4 + {0, 64}
  const float* a = A + (blockIdx.y * BM + (tid >> 1)) * K + (tid & 1) * 4;  // row tid/2 of the tile, 4 k's
  const float* b = B + (tid >> 5) * N + blockIdx.x * BN + (tid & 31) * 4;   // row tid/32 of the slab, 4 columns
  const int am = tid >> 1, ak = (tid & 1) * 4, bk = tid >> 5, bn = (tid & 31) * 4;
  float acc[8][8] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    const float4 av = *reinterpret_cast<const float4*>(a + k0);
    const float4 bv = *reinterpret_cast<const float4*>(b + k0 * N);
    As[ak + 0][am] = av.x;
    As[ak + 1][am] = av.y;
    As[ak + 2][am] = av.z;
    As[ak + 3][am] = av.w;
    *reinterpret_cast<float4*>(&Bs[bk][bn]) = bv;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float ra[8], rb[8];
      const float4 a0 = *reinterpret_cast<const float4*>(&As[kk][tr * 4]);
      const float4 a1 = *reinterpret_cast<const float4*>(&As[kk][64 + tr * 4]);
      const float4 b0 = *reinterpret_cast<const float4*>(&Bs[kk][tc * 4]);
      const float4 b1 = *reinterpret_cast<const float4*>(&Bs[kk][64 + tc * 4]);
      ra[0] = a0.x, ra[1] = a0.y, ra[2] = a0.z, ra[3] = a0.w, ra[4] = a1.x, ra[5] = a1.y, ra[6] = a1.z, ra[7] = a1.w;
      rb[0] = b0.x, rb[1] = b0.y, rb[2] = b0.z, rb[3] = b0.w, rb[4] = b1.x, rb[5] = b1.y, rb[6] = b1.z, rb[7] = b1.w;
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = blockIdx.y * BM + (i & 3) + (i >> 2) * 64 + tr * 4;
    float4* c = reinterpret_cast<float4*>(C + row * N + blockIdx.x * BN + tc * 4);
    store16(c, acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    store16(c + 16, acc[i][4], acc[i][5], acc[i][6], acc[i][7]);  // 64 columns on
  }
}
