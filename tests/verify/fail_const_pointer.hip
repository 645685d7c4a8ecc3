// Negative test for verify-const-pointer: a kernel pointer parameter that
// nothing writes through must be pointer-to-const.
#if defined(__HIPCC__) && !defined(__HIPCC_RTC__)
#include <hip/hip_runtime.h>
#endif

// Takes a non-const pointer but only reads it.
__device__ float rmsnorm_load(float* w, int64_t j) { return w[j]; }

// Writes through its parameter two calls down.
__device__ void rmsnorm_store2(float* out, int64_t j, float v) { out[j] = v; }
__device__ void rmsnorm_store(float* out, int64_t j, float v) { rmsnorm_store2(out, j, v); }

extern "C" __global__ __launch_bounds__(256) void rmsnorm(float* __restrict__ x,  // expect: verify-const-pointer
                                                          float* __restrict__ w,  // expect: verify-const-pointer
                                                          float* __restrict__ y, float* __restrict__ stats,
                                                          int64_t M, int64_t N) {
  const int64_t row = blockIdx.x;
  float ss = 0.0f;
  for (int64_t j = threadIdx.x; j < N; j += 256) {
    const float v = x[row * N + j];
    ss += v * v;
  }
  float* cursor = x;  // moving a copy of the pointer is not a write
  cursor += 1;
  for (int64_t j = threadIdx.x; j < N; j += 256) {
    rmsnorm_store(y, row * N + j, x[row * N + j] * rmsnorm_load(w, j) * ss);
  }
  if (threadIdx.x == 0) {
    stats[row] += ss;  // a compound assignment is a write
  }
}

// Writing through an alias and through atomics counts; a const pointer is fine.
extern "C" __global__ __launch_bounds__(64) void counts(const int32_t* __restrict__ keys, int32_t* __restrict__ h,
                                                        int32_t* __restrict__ total, float* __restrict__ unused_out,  // expect: verify-const-pointer
                                                        int64_t N) {
  const int64_t i = (int64_t)blockIdx.x * 64 + threadIdx.x;
  if (i < N) {
    int32_t& slot = total[0];
    atomicAdd(&h[keys[i]], 1);
    if (i == 0) slot = 1;
  }
}

// Reading class-typed elements through their const conversion is not a write.
struct spn_half_like {
  unsigned short bits;
  __device__ spn_half_like& operator=(float v) {
    bits = (unsigned short)v;
    return *this;
  }
  __device__ operator float() const { return (float)bits; }
};

extern "C" __global__ __launch_bounds__(256) void half_sum(spn_half_like* __restrict__ x,  // expect: verify-const-pointer
                                                           float* __restrict__ out, int64_t N) {
  float s = 0.0f;
  for (int64_t i = threadIdx.x; i < N; i += 256) {
    s += float(x[i]);
  }
  out[threadIdx.x] = s;
}
