// Negative test for verify-kernel-extern-c: a kernel with C++ linkage cannot
// be found by name through hipModuleGetFunction.
// Each `// expect: verify-<id>` marks the line where that error is reported.
#if defined(__HIPCC__) && !defined(__HIPCC_RTC__)
#include <hip/hip_runtime.h>
#endif

__global__ __launch_bounds__(256) void axpy(const float* __restrict__ x, float* __restrict__ y, float a, int64_t N) {  // expect: verify-kernel-extern-c
  const int64_t i = (int64_t)blockIdx.x * 256 + threadIdx.x;
  if (i < N) {
    y[i] = a * x[i] + y[i];
  }
}

extern "C" {
// Inside an extern "C" block is fine.
__global__ __launch_bounds__(256) void axpy_ok(const float* __restrict__ x, float* __restrict__ y, float a, int64_t N) {
  const int64_t i = (int64_t)blockIdx.x * 256 + threadIdx.x;
  if (i < N) {
    y[i] = a * x[i] + y[i];
  }
}
}
