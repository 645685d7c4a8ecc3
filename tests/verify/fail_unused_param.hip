// Negative test for verify-unused-param: an outlined closure's parameters
// must be exactly what it captures. Prelude helpers (__spn_*) and kernels
// are exempt; [[maybe_unused]] opts a parameter out.
#if defined(__HIPCC__) && !defined(__HIPCC_RTC__)
#include <hip/hip_runtime.h>
#endif

__device__ inline float __spn_identity(float v, int lane_hint) { return v; }

// `M` was threaded through but the closure never reads it.
__device__ void softmax_row_stats(const float* x, int64_t M, int64_t N, int32_t row, float& acc) {  // expect: verify-unused-param
  for (int64_t j = threadIdx.x; j < N; j += 256) {
    acc += x[row * N + j];
  }
}

// Two unused ones are reported separately.
__device__ float softmax_scale(float v, float scale, float bias) {  // expect: verify-unused-param verify-unused-param
  return __spn_identity(v, 0);
}

__device__ float softmax_keep(float v, [[maybe_unused]] int64_t M) { return v; }

extern "C" __global__ __launch_bounds__(256) void softmax(const float* __restrict__ x, float* __restrict__ y,
                                                          int64_t M, int64_t N) {
  const int32_t row = blockIdx.x;
  float acc = 0.0f;
  softmax_row_stats(x, M, N, row, acc);
  y[row] = softmax_keep(softmax_scale(acc, 1.0f, 0.0f), M);
}
