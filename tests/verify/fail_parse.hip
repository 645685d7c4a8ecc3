// A file that is not valid HIP: spindle-verify reports it and exits 2.
// expect-exit: 2
#if defined(__HIPCC__) && !defined(__HIPCC_RTC__)
#include <hip/hip_runtime.h>
#endif

extern "C" __global__ __launch_bounds__(256) void broken(float* __restrict__ y, int64_t N) {
  y[0] = undeclared_name;
}
