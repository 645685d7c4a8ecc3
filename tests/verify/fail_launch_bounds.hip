// Negative test for verify-launch-bounds: without __launch_bounds__ the AMD
// compiler budgets registers for 1024-thread blocks.
#if defined(__HIPCC__) && !defined(__HIPCC_RTC__)
#include <hip/hip_runtime.h>
#endif

extern "C" __global__ void softmax(const float* __restrict__ x, float* __restrict__ y, int64_t M, int64_t N) {  // expect: verify-launch-bounds
  const int32_t row = blockIdx.x;
  for (int64_t j = threadIdx.x; j < N; j += 256) {
    y[row * N + j] = __expf(x[row * N + j]);
  }
}

// The two-argument form counts too.
extern "C" __global__ __launch_bounds__(256, 2) void softmax_ok(const float* __restrict__ x, float* __restrict__ y,
                                                                int64_t M, int64_t N) {
  const int32_t row = blockIdx.x;
  for (int64_t j = threadIdx.x; j < N; j += 256) {
    y[row * N + j] = __expf(x[row * N + j]);
  }
}

// A forward declaration without the attribute is fine when the definition has it.
extern "C" __global__ void declared_first(float* __restrict__ y);
extern "C" __global__ __launch_bounds__(64) void declared_first(float* __restrict__ y) { y[threadIdx.x] = 0.0f; }
