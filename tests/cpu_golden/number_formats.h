// Numbers for the cpu_golden tests: the storage formats (f16, bf16, fp8)
// implemented from their definitions, so that a reference never goes
// through the prelude's conversions; element types as tensors hold them;
// ulps and the error bounds of sums.
#pragma once

#include <spindle/runtime.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace spindle::cpu_golden {

// A binary float format, for rounding and for reading stored bits. Written
// from the formats' definitions (IEEE 754 binary16, bfloat16, OCP fp8), not
// from the prelude, so that a bug there cannot hide in the reference.
struct FloatFormat {
  int mantissaBits;  // stored fraction bits
  int exponentBits;
  int minExponent;  // the smallest normal is 2^minExponent
  double maxFinite;
  bool overflowIsNan;  // e4m3fn: no infinities; past the range is NaN
};
inline constexpr FloatFormat kF16{10, 5, -14, 65504.0, false};
inline constexpr FloatFormat kBF16{7, 8, -126, 0x1.fep127, false};
inline constexpr FloatFormat kE4M3{3, 4, -6, 448.0, true};
inline constexpr FloatFormat kE5M2{2, 5, -14, 57344.0, false};

// v rounded to the format, to nearest with ties to even (one rounding).
inline double roundTo(const FloatFormat& f, double v) {
  if (std::isnan(v)) return v;
  if (std::isinf(v)) return f.overflowIsNan ? NAN : v;
  if (v == 0) return v;
  int e;
  std::frexp(v, &e);  // |v| in [2^(e-1), 2^e)
  const int quantum = std::max(e - 1, f.minExponent) - f.mantissaBits;
  const double r = std::ldexp(std::nearbyint(std::ldexp(v, -quantum)), quantum);
  if (std::fabs(r) > f.maxFinite) return f.overflowIsNan ? NAN : std::copysign(INFINITY, v);
  return r;
}

// The bits of v, which the format must hold exactly (roundTo first).
inline uint32_t encode(const FloatFormat& f, double v) {
  const int m = f.mantissaBits, bias = (1 << (f.exponentBits - 1)) - 1;
  const uint32_t sign = std::signbit(v) ? 1u << (f.exponentBits + m) : 0u;
  const uint32_t allOnes = (1u << f.exponentBits) - 1;
  if (std::isnan(v)) return sign | allOnes << m | (f.overflowIsNan ? (1u << m) - 1 : 1u << (m - 1));
  if (std::isinf(v)) return sign | allOnes << m;
  const double a = std::fabs(v);
  if (a < std::ldexp(1.0, f.minExponent)) return sign | uint32_t(std::ldexp(a, m - f.minExponent));
  int e;
  std::frexp(a, &e);
  e -= 1;
  return sign | uint32_t(e + bias) << m | (uint32_t(std::ldexp(a, m - e)) - (1u << m));
}

inline double decode(const FloatFormat& f, uint32_t bits) {
  const int m = f.mantissaBits, bias = (1 << (f.exponentBits - 1)) - 1;
  const uint32_t allOnes = (1u << f.exponentBits) - 1;
  const uint32_t e = (bits >> m) & allOnes, frac = bits & ((1u << m) - 1);
  const bool negative = (bits >> (f.exponentBits + m)) & 1u;
  double mag;
  if (f.overflowIsNan && e == allOnes && frac == (1u << m) - 1) mag = NAN;
  else if (!f.overflowIsNan && e == allOnes) mag = frac ? NAN : INFINITY;
  else if (e == 0) mag = std::ldexp(double(frac), f.minExponent - m);
  else mag = std::ldexp(double(frac + (1u << m)), int(e) - bias - m);
  return negative ? -mag : mag;
}

// Storage-type elements as the tests hold them: the stored bits.
struct F16 {
  uint16_t bits;
};
struct BF16 {
  uint16_t bits;
};
struct F8E4M3 {
  uint8_t bits;
};
struct F8E5M2 {
  uint8_t bits;
};
// A bool element, as its byte (std::vector<bool> holds no bytes).
struct Bool8 {
  uint8_t byte;
};

// The element type of a tensor, its dtype, and its value as a double.
template <class T>
struct Elem;
#define SPN_ELEM(T, DTYPE)                                 \
  template <>                                              \
  struct Elem<T> {                                         \
    static constexpr ScalarType dtype = ScalarType::DTYPE; \
    static double value(T v) { return double(v); }         \
    static T from(double v) { return static_cast<T>(v); }  \
  };
SPN_ELEM(int8_t, I8)
SPN_ELEM(int16_t, I16)
SPN_ELEM(int32_t, I32)
SPN_ELEM(int64_t, I64)
SPN_ELEM(uint8_t, U8)
SPN_ELEM(uint16_t, U16)
SPN_ELEM(uint32_t, U32)
SPN_ELEM(uint64_t, U64)
SPN_ELEM(float, F32)
SPN_ELEM(double, F64)
#undef SPN_ELEM
#define SPN_STORAGE_ELEM(T, DTYPE, FORMAT, BITS)                                                 \
  template <>                                                                                    \
  struct Elem<T> {                                                                               \
    static constexpr ScalarType dtype = ScalarType::DTYPE;                                       \
    static constexpr const FloatFormat& format = FORMAT;                                         \
    static double value(T v) { return decode(FORMAT, v.bits); }                                  \
    static T from(double v) { return T{static_cast<BITS>(encode(FORMAT, roundTo(FORMAT, v)))}; } \
  };
template <>
struct Elem<Bool8> {
  static constexpr ScalarType dtype = ScalarType::Bool;
  static double value(Bool8 v) { return v.byte; }
  static Bool8 from(double v) { return Bool8{uint8_t(v != 0)}; }
};
SPN_STORAGE_ELEM(F16, F16, kF16, uint16_t)
SPN_STORAGE_ELEM(BF16, BF16, kBF16, uint16_t)
SPN_STORAGE_ELEM(F8E4M3, F8E4M3, kE4M3, uint8_t)
SPN_STORAGE_ELEM(F8E5M2, F8E5M2, kE5M2, uint8_t)
#undef SPN_STORAGE_ELEM

template <class T>
double value(T v) {
  return Elem<T>::value(v);
}
template <class T>
T from(double v) {
  return Elem<T>::from(v);
}
template <class T>
constexpr bool isStorage =
    std::is_same_v<T, F16> || std::is_same_v<T, BF16> || std::is_same_v<T, F8E4M3> || std::is_same_v<T, F8E5M2>;

inline uint32_t bitsOf(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  return u;
}
inline uint64_t bitsOf(double v) {
  uint64_t u;
  std::memcpy(&u, &v, 8);
  return u;
}
inline float floatFromBits(uint32_t u) {
  float v;
  std::memcpy(&v, &u, 4);
  return v;
}

// One f32 operation done exactly in double and rounded once: the value the
// kernel's f32 operation gives (double has more than 2 * 24 + 2 bits).
inline float f32(double v) { return static_cast<float>(v); }

// The spacing of the format's values at |v| (at least its smallest subnormal).
inline double ulpOf(int mantissaBits, int minExponent, double v) {
  const double a = std::fabs(v);
  if (!(a > 0) || std::isinf(a)) return std::ldexp(1.0, minExponent - mantissaBits);
  int e;
  std::frexp(a, &e);
  return std::ldexp(1.0, std::max(e - 1, minExponent) - mantissaBits);
}
inline double ulp32(double v) { return ulpOf(23, -126, v); }
inline double ulp64(double v) { return ulpOf(52, -1022, v); }
inline double ulpIn(const FloatFormat& f, double v) { return ulpOf(f.mantissaBits, f.minExponent, v); }

// How far an f32 sum may be from the exact one: terms whose magnitudes add
// up to sumAbs, combined in `depth` rounds of additions (one per term a
// thread adds in turn, one per level of a reduction tree), each round
// rounding every partial sum once: depth * 2^-24 * sumAbs (to first order;
// the +1 round covers the rest).
inline double sumTol32(double sumAbs, int depth) { return (depth + 1) * 0x1p-24 * sumAbs; }
inline double sumTol64(double sumAbs, int depth) { return (depth + 1) * 0x1p-53 * sumAbs; }
// ceil(log2(n)): the levels of a reduction tree over n values.
inline int levels(int64_t n) {
  int l = 0;
  while ((int64_t(1) << l) < n) ++l;
  return l;
}

}  // namespace spindle::cpu_golden
