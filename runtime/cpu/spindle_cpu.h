/* The HIP device API on the host, for the Spindle runtime's CPU target
 * (docs/runtime.md, "The cpu target").
 *
 * The runtime compiles a generated kernel as
 *   spindle_cpu_abi.h + this file + the generated .hip + an entry point
 *   (__spn_cpu_entry, which calls __spn_cpu_invoke on the kernel)
 * with -D__SPN_CPU=1 -D__SPN_CPU_WARP_SIZE=32 (or 64), and runs each GPU
 * thread of a block as a fiber; all fibers of a block share one OS thread.
 * Everything the generated code takes from HIP is defined here with the
 * GPU's semantics:
 *   - __shared__ is `static thread_local`: one copy per OS thread, hence per
 *     running block;
 *   - threadIdx and the other builtins are the calling fiber's, read through
 *     the runtime's self();
 *   - warp shuffles and votes exchange values through the warp's exchange
 *     buffer, one warp meeting (sync_warp) per exchange;
 *   - atomics are atomic across OS threads (blocks run in parallel).
 * Standard C++17 only (g++ 12, clang++ 14), and light: each specialization
 * of each kernel compiles it. */
#ifndef SPINDLE_CPU_H
#define SPINDLE_CPU_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <type_traits>
#include <utility>

#ifndef __SPN_CPU_WARP_SIZE
#error "spindle_cpu.h: compile with -D__SPN_CPU_WARP_SIZE=32 or 64"
#endif
static_assert(__SPN_CPU_WARP_SIZE == 32 || __SPN_CPU_WARP_SIZE == 64, "the CPU target's warps are 32 or 64 wide");

// ---- The C library's math, declared here: <math.h> (in C++, <cmath> and
// its special functions) would double the time a small kernel takes to
// compile. The f32 and f64 functions of the generator's builtins
// (generator/sema/builtins.def) and of the prelude; the compilers know them
// as builtins either way. HIP's f32 overloads of the f64 names (sqrt(float))
// are not here: generated code names the f32 functions (sqrtf).
// clang-format off
#define __SPN_CPU_MATH1(name) extern "C" float name##f(float) noexcept; extern "C" double name(double) noexcept;
#define __SPN_CPU_MATH2(name) \
  extern "C" float name##f(float, float) noexcept; extern "C" double name(double, double) noexcept;
__SPN_CPU_MATH1(exp) __SPN_CPU_MATH1(exp2) __SPN_CPU_MATH1(expm1) __SPN_CPU_MATH1(log) __SPN_CPU_MATH1(log2)
__SPN_CPU_MATH1(log10) __SPN_CPU_MATH1(log1p) __SPN_CPU_MATH1(sqrt) __SPN_CPU_MATH1(cbrt) __SPN_CPU_MATH1(sin)
__SPN_CPU_MATH1(cos) __SPN_CPU_MATH1(tan) __SPN_CPU_MATH1(asin) __SPN_CPU_MATH1(acos) __SPN_CPU_MATH1(atan)
__SPN_CPU_MATH1(sinh) __SPN_CPU_MATH1(cosh) __SPN_CPU_MATH1(tanh) __SPN_CPU_MATH1(asinh) __SPN_CPU_MATH1(acosh)
__SPN_CPU_MATH1(atanh) __SPN_CPU_MATH1(erf) __SPN_CPU_MATH1(erfc) __SPN_CPU_MATH1(lgamma) __SPN_CPU_MATH1(tgamma)
__SPN_CPU_MATH1(floor) __SPN_CPU_MATH1(ceil) __SPN_CPU_MATH1(trunc) __SPN_CPU_MATH1(round) __SPN_CPU_MATH1(rint)
__SPN_CPU_MATH1(nearbyint) __SPN_CPU_MATH1(fabs) __SPN_CPU_MATH2(pow) __SPN_CPU_MATH2(atan2) __SPN_CPU_MATH2(hypot)
__SPN_CPU_MATH2(fmod) __SPN_CPU_MATH2(remainder) __SPN_CPU_MATH2(copysign) __SPN_CPU_MATH2(fmin) __SPN_CPU_MATH2(fmax)
extern "C" float fmaf(float, float, float) noexcept;
extern "C" double fma(double, double, double) noexcept;
#undef __SPN_CPU_MATH1
#undef __SPN_CPU_MATH2
// clang-format on

// ---- Qualifiers and launch attributes: no meaning on the host.
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __shared__ static thread_local
// The prelude's constant warp width (its __SPN_WARP_SIZE section leaves it to this header).
#define __SPN_WARP_SIZE __SPN_CPU_WARP_SIZE
#if !defined(__clang__)  // g++ 12 lacks it; clang has it built in
#define __builtin_assume(cond) ((cond) ? (void)0 : __builtin_unreachable())
#endif

// ---- The runtime's table and the calling GPU thread.
static const __spn_cpu_api* __spn_cpu_api_ptr = nullptr;

extern "C" __attribute__((visibility("default"))) void __spn_cpu_bind(const __spn_cpu_api* api) {
  __spn_cpu_api_ptr = api;
}
extern "C" __attribute__((visibility("default"))) int __spn_cpu_abi_version(void) { return __SPN_CPU_ABI_VERSION; }

// The calling GPU thread. `const`: within one fiber (all of one kernel
// invocation) the answer never changes, so the compiler may keep it across
// calls, __syncthreads included; noinline so that it can.
__attribute__((const, noinline)) static __spn_cpu_thread* __spn_cpu_self() { return __spn_cpu_api_ptr->self(); }

#define threadIdx (__spn_cpu_self()->thread_idx)
#define blockIdx (__spn_cpu_self()->block_idx)
#define blockDim (__spn_cpu_self()->block_dim)
#define gridDim (__spn_cpu_self()->grid_dim)
inline constexpr int warpSize = __SPN_CPU_WARP_SIZE;

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
  constexpr dim3(__spn_cpu_dim3 d) : x(d.x), y(d.y), z(d.z) {}
};

// Ends the launch with a printf-formatted message (a trailing newline
// dropped); the launch throws spindle::Error with it.
[[noreturn]] __attribute__((format(printf, 1, 2), noinline)) static void __spn_cpu_fail(const char* format, ...) {
  char message[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  const size_t n = strlen(message);
  if (n > 0 && message[n - 1] == '\n') message[n - 1] = '\0';
  __spn_cpu_api_ptr->fail(message);
  __builtin_unreachable();
}

// A checked build's `while` loop, once per iteration (the prelude's
// __spn_loop_tick): every 65536 iterations of this OS thread, whether the
// launch has run past its time limit; then the loop is named and the launch
// fails instead of running forever. Fibers switch only at barriers, warp
// meetings and phase waits, so a loop that waits for another thread of its
// block without one never ends here (on a GPU it might).
inline void __spn_cpu_loop_tick(const char* file, int line, int col) {
  static thread_local unsigned ticks = 0;
  if ((++ticks & 0xffffu) != 0) return;
  __spn_cpu_thread* t = __spn_cpu_self();
  if (__atomic_load_n(t->launch_expired, __ATOMIC_RELAXED))
    __spn_cpu_fail(
        "%s:%d:%d: this loop is still running when the launch's time limit (SPINDLE_CPU_TIMEOUT_S) is up, "
        "in block (%u, %u, %u), thread (%u, %u, %u); on the cpu target threads switch only at "
        "barriers, so a loop waiting for another thread of its block without one never ends",
        file, line, col, t->block_idx.x, t->block_idx.y, t->block_idx.z, t->thread_idx.x, t->thread_idx.y,
        t->thread_idx.z);
}

// A checked build's access to memory that may be shared (the prelude's
// __spn_checked_read, _write, _update, _atomic: `access` 0 to 3; `axes` as
// __spn_checked_offset's): the runtime keeps which thread of the block
// wrote and read each shared byte since the last barrier, and fails the
// launch on a read of a byte the block never wrote or on a race, naming
// the element and both threads.
template <typename... A>
inline void __spn_cpu_shared_access(int access, const void* p, size_t bytes, const char* file, int line, int col,
                                    const char* name, A... axes) {
  unsigned other = 0;
  const int verdict = __spn_cpu_api_ptr->shared_access(access, p, bytes, &other);
  if (verdict == 0) return;
  const long long v[] = {(long long)axes...};
  char index[160] = "";
  size_t n = 0;
  for (size_t k = 0; k < sizeof...(A) / 3 && n < sizeof index; ++k)
    n += (size_t)snprintf(index + n, sizeof index - n, "%s%lld", k ? ", " : "", v[3 * k]);
  __spn_cpu_thread* t = __spn_cpu_self();
  char what[200];
  if (verdict == 1) {
    snprintf(what, sizeof what,
             "is read before any thread of its block wrote it (shared memory starts undefined "
             "in every block)");
  } else {
    char who[64];
    const __spn_cpu_dim3 d = t->block_dim;
    if (other == 0xffffffffu) snprintf(who, sizeof who, "other threads");
    else snprintf(who, sizeof who, "thread (%u, %u, %u)", other % d.x, other / d.x % d.y, other / (d.x * d.y));
    const char* done = verdict == 2 ? "wrote" : verdict == 3 ? "updated it atomically" : "read";
    const char* doing = access == 0   ? "reads"
                        : access == 1 ? "writes"
                        : access == 2 ? "updates"
                                      : "updates it atomically";
    snprintf(what, sizeof what, "races: %s %s%s since the last barrier (sync()) and this thread %s%s", who, done,
             verdict == 3 ? "" : " it", doing, access == 3 ? "" : " it");
  }
  __spn_cpu_fail("%s:%d:%d: %s[%s] %s, in block (%u, %u, %u), thread (%u, %u, %u)", file, line, col, name, index, what,
                 t->block_idx.x, t->block_idx.y, t->block_idx.z, t->thread_idx.x, t->thread_idx.y, t->thread_idx.z);
}

// The block's dynamic shared memory (the prelude's __SPN_DYNAMIC_SHARED).
inline unsigned char* __spn_cpu_dynamic_shared() { return __spn_cpu_self()->dynamic_shared; }

// ---- Calling the kernel: args[i] points at parameter i's value.
template <typename... P, size_t... I>
inline void __spn_cpu_call(void (*kernel)(P...), void** args, std::index_sequence<I...>) {
  (void)args;  // a kernel without parameters
  kernel(*static_cast<P*>(args[I])...);
}
template <typename... P>
inline void __spn_cpu_invoke(void (*kernel)(P...), void** args) {
  __spn_cpu_call(kernel, args, std::index_sequence_for<P...>{});
}

// ---- Barriers and fences.
inline void __syncthreads() { __spn_cpu_api_ptr->sync_block(); }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

// ---- Warp meetings and exchanges.
// The half of the exchange buffer a meeting uses goes by the warp's count of
// meetings, which the runtime keeps in every lane's `exchanges` (the ABI):
// lanes may meet a different number of times (in __spn_block_reduce only
// warp 0's first lanes shuffle while the others already wait at
// __syncthreads), so no count of a lane's own would agree across the warp.
inline unsigned char* __spn_cpu_slots(const __spn_cpu_thread* t) {
  return t->warp_exchange + (t->exchanges & 1u) * (__SPN_CPU_WARP_SIZE * __SPN_CPU_EXCHANGE_BYTES);
}

// This lane's v into its slot, then the warp meeting: the slots of every
// live lane, readable until the next meeting.
template <typename T>
inline unsigned char* __spn_cpu_publish(const T& v) {
  static_assert(sizeof(T) <= __SPN_CPU_EXCHANGE_BYTES, "a warp exchange carries at most 16 bytes");
  static_assert(std::is_trivially_copyable<T>::value, "a warp exchange copies bytes");
  __spn_cpu_thread* t = __spn_cpu_self();
  unsigned char* slots = __spn_cpu_slots(t);
  memcpy(slots + t->lane * __SPN_CPU_EXCHANGE_BYTES, &v, sizeof(T));
  __spn_cpu_api_ptr->sync_warp();
  return slots;
}

// Every live lane publishes v; each gets lane source(lane)'s value.
template <typename T, typename Source>
inline T __spn_cpu_exchange(T v, Source source) {
  unsigned char* slots = __spn_cpu_publish(v);
  __spn_cpu_thread* t = __spn_cpu_self();
  T out;
  const unsigned from = unsigned(source(int(t->lane))) & (__SPN_CPU_WARP_SIZE - 1);  // in the warp whatever the width
  memcpy(&out, slots + from * __SPN_CPU_EXCHANGE_BYTES, sizeof(T));
  return out;
}

// Every lane publishes v and reads every lane's (the matrix API's emulation
// of one warp-wide instruction): one meeting, `all` indexed by lane.
template <typename T>
inline void __spn_cpu_warp_gather(const T& v, T* all) {
  unsigned char* slots = __spn_cpu_publish(v);
  for (unsigned lane = 0; lane < __SPN_CPU_WARP_SIZE; ++lane)
    memcpy(&all[lane], slots + lane * __SPN_CPU_EXCHANGE_BYTES, sizeof(T));
}

inline void __syncwarp(unsigned long long = ~0ull) { __spn_cpu_api_ptr->sync_warp(); }

inline unsigned __lane_id() { return __spn_cpu_self()->lane; }

// HIP's shuffles (the width a power of two up to the warp's, the warp split
// into segments of that many lanes). __shfl: lane srcLane modulo width of
// the caller's segment. __shfl_up/__shfl_down: delta lanes below/above,
// within the segment, else the caller's own value. __shfl_xor: lane ^ mask,
// the caller's own value past its segment.
template <typename T>
inline T __shfl(T v, int srcLane, int width = __SPN_CPU_WARP_SIZE) {
  return __spn_cpu_exchange(v, [=](int lane) { return (lane & ~(width - 1)) + (srcLane & (width - 1)); });
}
template <typename T>
inline T __shfl_up(T v, unsigned delta, int width = __SPN_CPU_WARP_SIZE) {
  return __spn_cpu_exchange(v,
                            [=](int lane) { return unsigned(lane & (width - 1)) < delta ? lane : lane - int(delta); });
}
template <typename T>
inline T __shfl_down(T v, unsigned delta, int width = __SPN_CPU_WARP_SIZE) {
  return __spn_cpu_exchange(
      v, [=](int lane) { return unsigned(lane & (width - 1)) + delta >= unsigned(width) ? lane : lane + int(delta); });
}
template <typename T>
inline T __shfl_xor(T v, int laneMask, int width = __SPN_CPU_WARP_SIZE) {
  return __spn_cpu_exchange(v, [=](int lane) {
    const int other = lane ^ laneMask;
    return other >= ((lane + width) & ~(width - 1)) || other < 0 ? lane : other;
  });
}

// Votes over the warp's live lanes (those that exist and have not returned):
// each publishes its condition, each reads all. Bit k of the ballot is lane
// k's; `live` gets the live lanes.
inline unsigned long long __spn_cpu_vote(int predicate, unsigned long long* live) {
  __spn_cpu_thread* t = __spn_cpu_self();
  unsigned char* slots = __spn_cpu_slots(t);
  slots[t->lane * __SPN_CPU_EXCHANGE_BYTES] = predicate != 0;
  __spn_cpu_api_ptr->sync_warp();
  *live = *t->warp_live;  // up to date after the meeting
  unsigned long long votes = 0;
  for (unsigned lane = 0; lane < __SPN_CPU_WARP_SIZE; ++lane)
    if (((*live >> lane) & 1u) && slots[lane * __SPN_CPU_EXCHANGE_BYTES]) votes |= 1ull << lane;
  return votes;
}
inline unsigned long long __ballot(int predicate) {
  unsigned long long live;
  return __spn_cpu_vote(predicate, &live);
}
inline int __any(int predicate) { return __ballot(predicate) != 0; }
inline int __all(int predicate) {
  unsigned long long live;
  return __spn_cpu_vote(predicate, &live) == live;
}
inline unsigned long long __activemask() { return __ballot(1); }

// ---- Atomics, atomic across the OS threads that run blocks; relaxed, as
// the GPU's. The value's type comes from the pointer (HIP's overloads
// convert the operand).
template <typename T>
struct __spn_cpu_type {
  typedef T type;
};
template <typename T>
using __spn_cpu_operand = typename __spn_cpu_type<T>::type;

template <typename T>
using __spn_cpu_bits = typename std::conditional<sizeof(T) == 4, unsigned, unsigned long long>::type;

// Replaces *p by update(*p) atomically, returning the old value: a
// compare-and-swap loop on the bits (for floats, which the __atomic
// builtins do not add or compare).
template <typename T, typename Update>
inline T __spn_cpu_atomic_update(T* p, Update update) {
  typedef __spn_cpu_bits<T> U;
  static_assert(sizeof(T) == sizeof(U), "4- or 8-byte atomics");
  U* word = reinterpret_cast<U*>(p);
  U old = __atomic_load_n(word, __ATOMIC_RELAXED);
  for (;;) {
    const U updated = __builtin_bit_cast(U, T(update(__builtin_bit_cast(T, old))));
    if (__atomic_compare_exchange_n(word, &old, updated, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      return __builtin_bit_cast(T, old);
  }
}

#define __SPN_CPU_INT_ATOMIC(NAME, BUILTIN)                          \
  template <typename T>                                              \
  inline T NAME(T* p, __spn_cpu_operand<T> v) {                      \
    static_assert(std::is_integral<T>::value, #NAME " on integers"); \
    return BUILTIN(p, v, __ATOMIC_RELAXED);                          \
  }
__SPN_CPU_INT_ATOMIC(atomicAnd, __atomic_fetch_and)
__SPN_CPU_INT_ATOMIC(atomicOr, __atomic_fetch_or)
__SPN_CPU_INT_ATOMIC(atomicXor, __atomic_fetch_xor)
#undef __SPN_CPU_INT_ATOMIC

template <typename T>
inline T atomicAdd(T* p, __spn_cpu_operand<T> v) {
  if constexpr (std::is_integral<T>::value) return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
  else return __spn_cpu_atomic_update(p, [v](T old) { return old + v; });
}
template <typename T>
inline T atomicSub(T* p, __spn_cpu_operand<T> v) {
  if constexpr (std::is_integral<T>::value) return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED);
  else return __spn_cpu_atomic_update(p, [v](T old) { return old - v; });
}
template <typename T>
inline T atomicExch(T* p, __spn_cpu_operand<T> v) {
  if constexpr (std::is_integral<T>::value) return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
  else return __spn_cpu_atomic_update(p, [v](T) { return v; });
}
// Floats: fmax/fmin's rule (HIP's float atomicMax/atomicMin).
inline float __spn_cpu_fmax(float a, float b) { return fmaxf(a, b); }
inline double __spn_cpu_fmax(double a, double b) { return fmax(a, b); }
inline float __spn_cpu_fmin(float a, float b) { return fminf(a, b); }
inline double __spn_cpu_fmin(double a, double b) { return fmin(a, b); }
template <typename T>
inline T atomicMax(T* p, __spn_cpu_operand<T> v) {
  if constexpr (std::is_integral<T>::value) {
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (old < v && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
  } else {
    return __spn_cpu_atomic_update(p, [v](T old) { return __spn_cpu_fmax(old, v); });
  }
}
template <typename T>
inline T atomicMin(T* p, __spn_cpu_operand<T> v) {
  if constexpr (std::is_integral<T>::value) {
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v < old && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
  } else {
    return __spn_cpu_atomic_update(p, [v](T old) { return __spn_cpu_fmin(old, v); });
  }
}
template <typename T>
inline T atomicCAS(T* p, __spn_cpu_operand<T> compare, __spn_cpu_operand<T> v) {
  static_assert(std::is_integral<T>::value, "atomicCAS on integers");
  __atomic_compare_exchange_n(p, &compare, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return compare;  // the old value, whether or not it matched
}
// (old >= limit) ? 0 : old + 1, and (old == 0 || old > limit) ? limit : old - 1.
inline unsigned atomicInc(unsigned* p, unsigned limit) {
  return __spn_cpu_atomic_update(p, [limit](unsigned old) { return old >= limit ? 0u : old + 1u; });
}
inline unsigned atomicDec(unsigned* p, unsigned limit) {
  return __spn_cpu_atomic_update(p, [limit](unsigned old) { return old == 0u || old > limit ? limit : old - 1u; });
}

// ---- Bits.
inline float __int_as_float(int v) { return __builtin_bit_cast(float, v); }
inline float __uint_as_float(unsigned v) { return __builtin_bit_cast(float, v); }
inline int __float_as_int(float v) { return __builtin_bit_cast(int, v); }
inline unsigned __float_as_uint(float v) { return __builtin_bit_cast(unsigned, v); }
inline double __longlong_as_double(long long v) { return __builtin_bit_cast(double, v); }
inline long long __double_as_longlong(double v) { return __builtin_bit_cast(long long, v); }
inline double __hiloint2double(int hi, int lo) {
  return __builtin_bit_cast(double, (static_cast<unsigned long long>(unsigned(hi)) << 32) | unsigned(lo));
}
inline int __double2hiint(double v) { return int(__builtin_bit_cast(unsigned long long, v) >> 32); }
inline int __double2loint(double v) { return int(__builtin_bit_cast(unsigned long long, v)); }

inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
inline int __clz(int v) { return v == 0 ? 32 : __builtin_clz(unsigned(v)); }
inline int __clzll(long long v) { return v == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(v)); }
inline int __ffs(int v) { return __builtin_ffs(v); }
inline int __ffs(unsigned v) { return __builtin_ffs(int(v)); }
inline int __ffsll(long long v) { return __builtin_ffsll(v); }
inline int __ffsll(unsigned long long v) { return __builtin_ffsll(static_cast<long long>(v)); }
inline unsigned __brev(unsigned v) {
  v = ((v >> 1) & 0x55555555u) | ((v & 0x55555555u) << 1);
  v = ((v >> 2) & 0x33333333u) | ((v & 0x33333333u) << 2);
  v = ((v >> 4) & 0x0f0f0f0fu) | ((v & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(v);
}
inline unsigned long long __brevll(unsigned long long v) {
  return (static_cast<unsigned long long>(__brev(unsigned(v))) << 32) | __brev(unsigned(v >> 32));
}
inline int __mulhi(int a, int b) { return int((static_cast<long long>(a) * b) >> 32); }
inline unsigned __umulhi(unsigned a, unsigned b) { return unsigned((static_cast<unsigned long long>(a) * b) >> 32); }
__extension__ typedef __int128 __spn_cpu_int128;
__extension__ typedef unsigned __int128 __spn_cpu_uint128;
inline long long __mul64hi(long long a, long long b) {
  return static_cast<long long>((static_cast<__spn_cpu_int128>(a) * b) >> 64);
}
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return static_cast<unsigned long long>((static_cast<__spn_cpu_uint128>(a) * b) >> 64);
}
inline int __mul24(int a, int b) { return int(unsigned(a << 8 >> 8) * unsigned(b << 8 >> 8)); }
inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
// Byte i of the result: byte (s >> 4i) & 7 of the 8 bytes b:a.
inline unsigned __byte_perm(unsigned a, unsigned b, unsigned s) {
  const unsigned long long bytes = (static_cast<unsigned long long>(b) << 32) | a;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) r |= unsigned((bytes >> (8 * ((s >> (4 * i)) & 7u))) & 0xffu) << (8 * i);
  return r;
}
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned shift) {
  return unsigned(((static_cast<unsigned long long>(hi) << 32 | lo) << (shift & 31u)) >> 32);
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
  return unsigned((static_cast<unsigned long long>(hi) << 32 | lo) >> (shift & 31u));
}

template <typename T>
inline T __ldg(const T* p) {
  return *p;
}

// ---- Math the C library lacks (HIP's fast forms are the accurate ones here).
// Names that a C library may declare too (glibc's <math.h> has __expf and
// the like, C23's rsqrt) are declared as it would, so that a <math.h>
// included after this header still compiles.
extern "C" inline float rsqrtf(float x) noexcept { return 1.0f / sqrtf(x); }
extern "C" inline double rsqrt(double x) noexcept { return 1.0 / sqrt(x); }
extern "C" inline float rcbrtf(float x) noexcept { return 1.0f / cbrtf(x); }
extern "C" inline double rcbrt(double x) noexcept { return 1.0 / cbrt(x); }
extern "C" inline float __expf(float x) noexcept { return expf(x); }
extern "C" inline float __exp10f(float x) noexcept { return powf(10.0f, x); }
extern "C" inline float __logf(float x) noexcept { return logf(x); }
extern "C" inline float __log2f(float x) noexcept { return log2f(x); }
extern "C" inline float __log10f(float x) noexcept { return log10f(x); }
extern "C" inline float __sinf(float x) noexcept { return sinf(x); }
extern "C" inline float __cosf(float x) noexcept { return cosf(x); }
extern "C" inline float __tanf(float x) noexcept { return tanf(x); }
extern "C" inline float __powf(float x, float y) noexcept { return powf(x, y); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return sqrtf(x); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
// Clamped to [0, 1]; NaN gives 0.
inline float __saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }

// HIP's min and max, for the integers and floats (floats: fminf/fmaxf's NaN rule).
#define __SPN_CPU_MIN_MAX(T)                       \
  inline T min(T a, T b) { return b < a ? b : a; } \
  inline T max(T a, T b) { return a < b ? b : a; }
__SPN_CPU_MIN_MAX(int)
__SPN_CPU_MIN_MAX(unsigned)
__SPN_CPU_MIN_MAX(long)
__SPN_CPU_MIN_MAX(unsigned long)
__SPN_CPU_MIN_MAX(long long)
__SPN_CPU_MIN_MAX(unsigned long long)
#undef __SPN_CPU_MIN_MAX
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }

// ---- f16: IEEE binary16 storage with round-to-nearest-even conversions.
// Round to f16 bits from the bits of an f32 (U unsigned, M = 23) or an f64
// (U unsigned long long, M = 52): one rounding, subnormals, overflow to
// infinity, NaN kept NaN (quiet, top payload bits kept).
template <typename U, int M>
inline unsigned short __spn_cpu_f16_bits(U u) {
  constexpr int W = int(sizeof(U)) * 8, E = W - 1 - M, B = (1 << (E - 1)) - 1;
  const unsigned short sign = static_cast<unsigned short>((u >> (W - 16)) & 0x8000u);
  const U a = u & (~U(0) >> 1), inf = ((U(1) << E) - 1) << M;
  if (a > inf) return static_cast<unsigned short>(sign | 0x7e00u | unsigned((a >> (M - 10)) & 0x3ffu));
  if (a >= U(B + 16) << M) return static_cast<unsigned short>(sign | 0x7c00u);  // from 65536 (and infinity)
  if (a <= U(B - 25) << M) return sign;  // up to half the smallest subnormal (a tie, to even: zero)
  const int e = int(a >> M) - B;         // -25 to 15
  const U mant = (a & ((U(1) << M) - 1)) | (U(1) << M);
  const int shift = M - 10 + (e < -14 ? -14 - e : 0);  // fewer bits kept below the normals
  U q = mant >> shift;
  const U rest = mant & ((U(1) << shift) - 1), half = U(1) << (shift - 1);
  if (rest > half || (rest == half && (q & 1u))) ++q;  // a carry moves into the exponent (to infinity from 65520)
  const unsigned code = e >= -14 ? (unsigned(e + 15) << 10) + unsigned(q) - 0x400u : unsigned(q);
  return static_cast<unsigned short>(sign | code);
}

struct __half {
  unsigned short __x;
  __half() = default;
  __half(float f) : __x(__spn_cpu_f16_bits<unsigned, 23>(__builtin_bit_cast(unsigned, f))) {}
  __half(double d) : __x(__spn_cpu_f16_bits<unsigned long long, 52>(__builtin_bit_cast(unsigned long long, d))) {}
  // Integers through f64: exact below 2^53, and anything larger is infinite in f16.
  template <typename I, typename std::enable_if<std::is_integral<I>::value, int>::type = 0>
  __half(I i) : __half(double(i)) {}
  // Exact.
  operator float() const {
    const unsigned sign = unsigned(__x & 0x8000u) << 16, e = (__x >> 10) & 0x1fu, m = __x & 0x3ffu;
    if (e == 0x1fu) return __builtin_bit_cast(float, sign | 0x7f800000u | (m << 13));
    if (e == 0) return __builtin_bit_cast(float, __builtin_bit_cast(unsigned, float(m) * 0x1p-24f) | sign);
    return __builtin_bit_cast(float, sign | ((e + 112u) << 23) | (m << 13));
  }
};
static_assert(sizeof(__half) == 2 && std::is_trivially_copyable<__half>::value, "__half is 2 bytes of bits");

inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline __half __double2half(double d) { return __half(d); }
inline float __half2float(__half h) { return float(h); }
inline unsigned short __half_as_ushort(__half h) { return h.__x; }
inline short __half_as_short(__half h) { return static_cast<short>(h.__x); }
inline __half __ushort_as_half(unsigned short bits) { return __builtin_bit_cast(__half, bits); }
inline __half __short_as_half(short bits) { return __builtin_bit_cast(__half, bits); }
// One f16 rounding of the exact result: f32 holds more than 2 * 11 + 2 bits.
inline __half __hadd(__half a, __half b) { return __half(float(a) + float(b)); }
inline __half __hsub(__half a, __half b) { return __half(float(a) - float(b)); }
inline __half __hmul(__half a, __half b) { return __half(float(a) * float(b)); }
inline __half __hdiv(__half a, __half b) { return __half(float(a) / float(b)); }
inline __half __hneg(__half a) { return __ushort_as_half(static_cast<unsigned short>(a.__x ^ 0x8000u)); }
inline __half __habs(__half a) { return __ushort_as_half(static_cast<unsigned short>(a.__x & 0x7fffu)); }

#endif /* SPINDLE_CPU_H */
