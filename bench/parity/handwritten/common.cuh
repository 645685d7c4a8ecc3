// Helpers shared by the hand-written kernels of bench/parity (embedded at
// build time; nvrtc gets this file as the header "common.cuh").
//
// What "hand-written the way a competent CUDA engineer writes it" means
// here: 16-byte vector accesses (float4, uint4 holding 8 bf16/f16), 32-bit
// indices wherever the bench's sizes allow (the host checks before it
// launches), __ldcs/__stcs where the reference implementation the kernel
// follows uses them, warp shuffles for reductions. No fast-math: expf and
// friends are the accurate ones, as in the Spindle kernels (which would
// write fast_exp for __expf).
//
// tests/parity_kernels also compiles these files as host C++ (with
// PARITY_HOST_EMULATION and its own definitions of the CUDA names used
// here) to check each kernel by value without a GPU; the few #if blocks
// below are what that needs.
#pragma once

#ifndef PARITY_HOST_EMULATION
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

// Dynamic shared memory of the block: `extern __shared__ T name[]`.
#ifndef PARITY_HOST_EMULATION
#define PARITY_DYNAMIC_SHARED(T, name) extern __shared__ T name[]
#else
#define PARITY_DYNAMIC_SHARED(T, name) T* name = parityEmulatedDynamicShared<T>()
#endif

#define PARITY_FULL_MASK 0xffffffffu

// -inf without <math.h> (nvrtc has no INFINITY).
__device__ __forceinline__ float negInf() { return __int_as_float(int(0xff800000u)); }

__device__ __forceinline__ float warpSum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(PARITY_FULL_MASK, v, o);
  return v;
}

__device__ __forceinline__ float warpMax(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(PARITY_FULL_MASK, v, o));
  return v;
}

// Block-wide sum / max over a 1-D block whose size is a multiple of 32 (the
// host checks); every thread gets the result. The leading barrier lets a
// kernel call it twice in a row (the scratch is reused).
__device__ __forceinline__ float blockSum(float v) {
  __shared__ float scratch[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warpSum(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  return warpSum(lane < warps ? scratch[lane] : 0.0f);
}

__device__ __forceinline__ float blockMax(float v) {
  __shared__ float scratch[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warpMax(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  return warpMax(lane < warps ? scratch[lane] : negInf());
}

// One 16-byte load, returned by value: a 16-byte word bound to a reference
// (unpackBf16x8(*reinterpret_cast<const uint4*>(p), f)) is split by nvcc
// into four 4-byte loads; a value is loaded with one ld.global.v4.
__device__ __forceinline__ uint4 load16(const void* p) {
  const uint4 u = *static_cast<const uint4*>(p);
  return u;
}

// 8 bf16 (or f16) values in one 16-byte word, element k at byte 2k. The
// word is taken apart with shifts, not through a pointer to it: with the
// pointer, nvcc splits the 16-byte load into 2-byte loads.
__device__ __forceinline__ unsigned word(const uint4& u, int k) {
  return k == 0 ? u.x : k == 1 ? u.y : k == 2 ? u.z : u.w;
}

__device__ __forceinline__ void unpackBf16x8(const uint4& u, float (&f)[8]) {
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const unsigned w = word(u, k);
    f[2 * k] = __uint_as_float(w << 16);  // bf16 is the top half of an f32
    f[2 * k + 1] = __uint_as_float(w & 0xffff0000u);
  }
}

__device__ __forceinline__ unsigned bf16Bits(float lo, float hi) {
  return unsigned(__bfloat16_as_ushort(__float2bfloat16_rn(lo))) |
         (unsigned(__bfloat16_as_ushort(__float2bfloat16_rn(hi))) << 16);
}

__device__ __forceinline__ uint4 packBf16x8(const float (&f)[8]) {
  return make_uint4(bf16Bits(f[0], f[1]), bf16Bits(f[2], f[3]), bf16Bits(f[4], f[5]), bf16Bits(f[6], f[7]));
}

__device__ __forceinline__ void unpackF16x8(const uint4& u, float (&f)[8]) {
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const unsigned w = word(u, k);
    f[2 * k] = __half2float(__ushort_as_half((unsigned short)(w & 0xffffu)));
    f[2 * k + 1] = __half2float(__ushort_as_half((unsigned short)(w >> 16)));
  }
}

__device__ __forceinline__ unsigned f16Bits(float lo, float hi) {
  return unsigned(__half_as_ushort(__float2half_rn(lo))) | (unsigned(__half_as_ushort(__float2half_rn(hi))) << 16);
}

__device__ __forceinline__ uint4 packF16x8(const float (&f)[8]) {
  return make_uint4(f16Bits(f[0], f[1]), f16Bits(f[2], f[3]), f16Bits(f[4], f[5]), f16Bits(f[6], f[7]));
}

// A bf16 value rounded from f32 (nearest even) and read back: the rounding
// a Spindle kernel writes as T(...).
__device__ __forceinline__ float roundBf16(float v) { return __bfloat162float(__float2bfloat16_rn(v)); }
