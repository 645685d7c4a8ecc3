// The subset of CUDA that the hand-written kernels of bench/parity/handwritten
// use, on the host, so that tests/parity_kernels can run each of them by
// value without a GPU (they are otherwise only compiled here, by nvrtc).
//
// A launch runs the grid one block at a time; each thread of the block is an
// OS thread. __syncthreads() is a real barrier of the block, a warp shuffle
// a real meeting of the 32 lanes of its warp (the kernels shuffle in whole
// warps only), so a missing barrier or a wrong lane shows as a wrong value or
// a hang (the test's timeout). __shared__ is `static`: one array for all the
// threads, which is the block's, since blocks run one after another. Dynamic
// shared memory comes from PARITY_DYNAMIC_SHARED (common.cuh). Not modelled:
// the memory model's corners, vector accesses' alignment, timing.
#pragma once

#define PARITY_HOST_EMULATION 1

#include <math.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

struct uint3 {
  unsigned x = 0, y = 0, z = 0;
};
struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};
struct alignas(8) float2 {
  float x, y;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(8) uint2 {
  unsigned x, y;
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }

namespace parity_emu {
// The calling thread's indices (functions, not extern thread_local objects:
// UBSan saw a null TLS address through those).
const uint3& threadIndex();
const uint3& blockIndex();
extern dim3 blockDim_, gridDim_;
void syncThreads();
// This lane's `bits` to the warp; returns lane `src`'s. Every lane of the warp calls it.
uint64_t exchange(uint64_t bits, int src);
int lane();
void* dynamicShared();
// Runs `kernel` (a call of one kernel function) over the grid.
void launch(dim3 grid, dim3 block, size_t dynamicSharedBytes, const std::function<void()>& kernel);
}  // namespace parity_emu

#define threadIdx (parity_emu::threadIndex())
#define blockIdx (parity_emu::blockIndex())
#define blockDim (parity_emu::blockDim_)
#define gridDim (parity_emu::gridDim_)

template <class T>
T* parityEmulatedDynamicShared() {
  return static_cast<T*>(parity_emu::dynamicShared());
}

inline void __syncthreads() { parity_emu::syncThreads(); }

template <class T>
T parityShuffle(T v, int src) {
  static_assert(sizeof(T) <= 8, "a register value");
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  bits = parity_emu::exchange(bits, src);
  std::memcpy(&v, &bits, sizeof(T));
  return v;
}
template <class T>
T __shfl_xor_sync(unsigned, T v, int laneMask) {
  return parityShuffle(v, parity_emu::lane() ^ laneMask);
}
template <class T>
T __shfl_up_sync(unsigned, T v, unsigned delta) {
  const int src = parity_emu::lane() - int(delta);
  const T other = parityShuffle(v, src < 0 ? parity_emu::lane() : src);
  return src < 0 ? v : other;
}

template <class T>
T __ldcs(const T* p) {
  return *p;
}
template <class T>
T __ldg(const T* p) {
  return *p;
}
template <class T>
void __stcs(T* p, T v) {
  *p = v;
}

inline int atomicAdd(int* p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline float __int_as_float(int i) {
  float f;
  std::memcpy(&f, &i, 4);
  return f;
}
inline float __uint_as_float(unsigned u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline unsigned __float_as_uint(float f) {
  unsigned u;
  std::memcpy(&u, &f, 4);
  return u;
}

// bf16, f16 and fp8: storage and the conversions the kernels call (nearest
// even), written here and in bench/parity/host_data.hpp, not CUDA's.
struct __nv_bfloat16 {
  unsigned short x;
};
__nv_bfloat16 __float2bfloat16_rn(float f);
float __bfloat162float(__nv_bfloat16 h);
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.x; }
struct __half {
  unsigned short x;
};
struct __half2 {
  __half x, y;
};
__half __float2half_rn(float f);
float __half2float(__half h);
inline __half __ushort_as_half(unsigned short u) { return {u}; }
inline unsigned short __half_as_ushort(__half h) { return h.x; }
inline float2 __half22float2(__half2 h) { return {__half2float(h.x), __half2float(h.y)}; }
inline __half2 __floats2half2_rn(float a, float b) { return {__float2half_rn(a), __float2half_rn(b)}; }
enum __nv_saturation_t { __NV_NOSAT, __NV_SATFINITE };
enum __nv_fp8_interpretation_t { __NV_E4M3, __NV_E5M2 };
using __nv_fp8_storage_t = unsigned char;
// E4M3 with __NV_SATFINITE only (what quant_per_token asks for).
__nv_fp8_storage_t __nv_cvt_float_to_fp8(float x, __nv_saturation_t, __nv_fp8_interpretation_t);
