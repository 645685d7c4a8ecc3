// Negative test for verify-shared-scope: __shared__ only in kernel bodies.
#if defined(__HIPCC__) && !defined(__HIPCC_RTC__)
#include <hip/hip_runtime.h>
#endif

__shared__ float file_scratch[64];  // expect: verify-shared-scope

__device__ float scan_helper(const float* x, int64_t j) {
  __shared__ float helper_scratch[256];  // expect: verify-shared-scope
  helper_scratch[threadIdx.x] = x[j];
  __syncthreads();
  return helper_scratch[0] + file_scratch[0];
}

extern "C" __global__ __launch_bounds__(256) void scan(const float* __restrict__ x, float* __restrict__ y, int64_t N) {
  __shared__ float sums[256];  // fine: in the kernel body
  extern __shared__ float buf[];  // fine: dynamic shared memory declared in the kernel
  if (threadIdx.x < N) {
    buf[threadIdx.x] = x[threadIdx.x];
    sums[threadIdx.x] = scan_helper(x, threadIdx.x);
    __syncthreads();
    y[threadIdx.x] = buf[threadIdx.x] + sums[0];
  }
}
