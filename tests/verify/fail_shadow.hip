// Negative test for verify-shadow: a local that shadows a parameter, an
// outer local, or a file-scope variable (in kernels and in closures alike).
#if defined(__HIPCC__) && !defined(__HIPCC_RTC__)
#include <hip/hip_runtime.h>
#endif

constexpr int64_t BLOCK = 256;

__device__ void layernorm_row_stats(const float* x, int64_t N, int32_t row, float& mean) {
  float acc = 0.0f;
  for (int64_t j = threadIdx.x; j < N; j += BLOCK) {
    float acc = x[row * N + j];  // expect: verify-shadow
    mean += acc;
  }
}

extern "C" __global__ __launch_bounds__(256) void layernorm(const float* __restrict__ x, float* __restrict__ y,
                                                            int64_t M, int64_t N) {
  float mean = 0.0f;
  layernorm_row_stats(x, N, blockIdx.x, mean);
  const int64_t row = blockIdx.x;
  if (row < M) {
    int64_t N = 4;  // expect: verify-shadow
    for (int64_t j = threadIdx.x; j < N; j += BLOCK) {
      y[row * N + j] = x[row * N + j] - mean;
    }
  }
  for (int64_t j = 0; j < 1; ++j) {
    const int64_t BLOCK = 128;  // expect: verify-shadow
    y[j] = (float)BLOCK;
  }
  // Sibling scopes reusing a name are fine.
  for (int64_t j = 0; j < 1; ++j) {
    const float v = 0.0f;
    y[j] += v;
  }
  for (int64_t j = 0; j < 1; ++j) {
    const float v = 1.0f;
    y[j] += v;
  }
}
