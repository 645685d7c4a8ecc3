// The prelude's fp8 conversions (__spn_f8e4m3, __spn_f8e5m2 and their
// saturating forms, docs/language.md 4.2), compiled for the host through
// prelude_host_shim.h and checked by value: every code's value against the
// formats' definitions, and the rounding of many f32 values against a
// nearest-value search over all the codes (ties to the even code), with
// the overflow rule of each format.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "prelude_host_shim.h"
// clang-format off
#include "prelude_atomic_helpers.inc"
// clang-format on

namespace {

struct Format {
  int E, M, B;
  double max;        // largest finite magnitude
  bool hasInfinity;  // e5m2: S.11111.00; e4m3fn has none
};
constexpr Format kE4M3{4, 3, 7, 448.0, false};
constexpr Format kE5M2{5, 2, 15, 57344.0, true};

// The value of a code, from the definition (NaN for NaN codes).
double reference(const Format& f, unsigned code) {
  const int e = int(code >> f.M) & ((1 << f.E) - 1), m = int(code) & ((1 << f.M) - 1);
  const double sign = (code & 0x80) ? -1.0 : 1.0;
  if (e == (1 << f.E) - 1) {
    if (f.hasInfinity) return m == 0 ? sign * INFINITY : NAN;
    if (m == (1 << f.M) - 1) return NAN;  // e4m3fn: only S.1111.111 is NaN
  }
  if (e == 0) return sign * std::ldexp(double(m), 1 - f.B - f.M);
  return sign * std::ldexp(double((1 << f.M) + m), e - f.B - f.M);
}

template <typename F8>
F8 fromBits(unsigned char bits) {
  F8 v;
  v.bits = bits;
  return v;
}

// The code a value rounds to: the nearest finite code (ties: the even
// code), or the overflow code when it lies past max by half a step or more
// (exactly half a step: the even neighbour, which for e4m3 is max itself).
unsigned char expected(const Format& f, float x) {
  const unsigned char sign = std::signbit(x) ? 0x80 : 0;
  if (std::isnan(x)) return 0xff;  // any NaN code: compared as "is NaN"
  const double a = std::fabs(double(x));
  const double halfStep = std::ldexp(1.0, int(std::log2(f.max)) - f.M - 1);
  if (a > f.max + halfStep || (a == f.max + halfStep && f.hasInfinity) || std::isinf(a))
    return f.hasInfinity ? (sign | 0x7c) : (sign | 0x7f);
  unsigned best = 0;
  double bestErr = INFINITY;
  for (unsigned c = 0; c < 0x80; ++c) {
    const double v = reference(f, c);
    if (!std::isfinite(v)) continue;
    const double err = std::fabs(v - a);
    if (err < bestErr || (err == bestErr && (c & 1) == 0)) best = c, bestErr = err;
  }
  return static_cast<unsigned char>(sign | best);
}

template <typename F8>
void checkFormat(const Format& f) {
  // Decode: all 256 codes.
  for (unsigned c = 0; c < 256; ++c) {
    const double want = reference(f, c);
    const float got = float(fromBits<F8>(static_cast<unsigned char>(c)));
    if (std::isnan(want)) EXPECT_TRUE(std::isnan(got)) << c;
    else EXPECT_EQ(double(got), want) << "code " << c;
  }
  // Encode: every code's value, the midpoints between neighbours (ties),
  // points just off them, random values over the whole range and beyond.
  std::vector<float> xs = {0.0f, -0.0f, 1e-30f, -1e-30f, 1e30f, -1e30f, INFINITY, -INFINITY, NAN, 1e-45f};
  std::vector<double> values;
  for (unsigned c = 0; c < 0x80; ++c)
    if (std::isfinite(reference(f, c))) values.push_back(reference(f, c));
  std::sort(values.begin(), values.end());
  values.push_back(f.max + 2 * (f.max - values[values.size() - 2]));  // a virtual next step past max
  for (size_t i = 0; i < values.size(); ++i) {
    const float v = float(values[i]);
    xs.insert(xs.end(), {v, -v, std::nextafter(v, INFINITY), std::nextafter(v, 0.0f)});
    if (i + 1 < values.size()) {
      const float mid = float(0.5 * (values[i] + values[i + 1]));  // exact: few bits
      xs.insert(xs.end(), {mid, -mid, std::nextafter(mid, INFINITY), std::nextafter(mid, 0.0f)});
    }
  }
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> exponent(-30.0, 20.0);
  for (int i = 0; i < 200000; ++i) xs.push_back(float((rng() & 1 ? 1 : -1) * std::exp2(exponent(rng))));
  for (float x : xs) {
    const unsigned char got = F8(x).bits, want = expected(f, x);
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(float(fromBits<F8>(got)))) << x;
      continue;
    }
    ASSERT_EQ(unsigned(got), unsigned(want)) << "x = " << x << " (" << std::hexfloat << x << ")";
  }
}

TEST(PreludeFp8, E4M3DecodesEveryCodeAndRoundsToNearestEven) { checkFormat<__spn_f8e4m3>(kE4M3); }
TEST(PreludeFp8, E5M2DecodesEveryCodeAndRoundsToNearestEven) { checkFormat<__spn_f8e5m2>(kE5M2); }

TEST(PreludeFp8, SaturateClampsInsteadOfOverflowing) {
  EXPECT_EQ(float(__spn_saturate_f8e4m3(1e6f)), 448.0f);
  EXPECT_EQ(float(__spn_saturate_f8e4m3(-500.0f)), -448.0f);
  EXPECT_TRUE(std::isnan(float(__spn_f8e4m3(500.0f))));  // a plain conversion past 464: NaN
  EXPECT_EQ(float(__spn_f8e4m3(464.0f)), 448.0f);        // the tie goes to the even 448
  EXPECT_EQ(float(__spn_saturate_f8e5m2(1e9f)), 57344.0f);
  EXPECT_TRUE(std::isinf(float(__spn_f8e5m2(1e9f))));
  // A NaN of either sign saturates to the canonical code 0x7f (the plain
  // conversion keeps the sign: 0xff for -NaN).
  EXPECT_EQ(unsigned(__spn_saturate_f8e4m3(NAN).bits), 0x7fu);
  EXPECT_EQ(unsigned(__spn_saturate_f8e4m3(-NAN).bits), 0x7fu);
  EXPECT_EQ(unsigned(__spn_f8e4m3(-NAN).bits), 0xffu);
}

TEST(PreludeSaturate, IntegersClampAndNaNIsZero) {
  EXPECT_EQ(__spn_saturate<int8_t>(300.7f), 127);
  EXPECT_EQ(__spn_saturate<int8_t>(-300.0), -128);
  EXPECT_EQ(__spn_saturate<int8_t>(-2.9f), -2);  // toward zero inside the range
  EXPECT_EQ(__spn_saturate<int8_t>(NAN), 0);
  EXPECT_EQ(__spn_saturate<uint8_t>(-5), 0);
  EXPECT_EQ(__spn_saturate<uint8_t>(int64_t(1000)), 255);
  EXPECT_EQ(__spn_saturate<int64_t>(1e30), INT64_MAX);
  EXPECT_EQ(__spn_saturate<int64_t>(-1e30f), INT64_MIN);
  EXPECT_EQ(__spn_saturate<uint64_t>(1e30), UINT64_MAX);
  EXPECT_EQ(__spn_saturate<int32_t>(uint64_t(1) << 40), INT32_MAX);
  EXPECT_EQ(__spn_saturate<uint32_t>(int64_t(-1)), 0u);
  EXPECT_EQ(__spn_saturate<int64_t>(UINT64_MAX), INT64_MAX);
  EXPECT_EQ(__spn_saturate<float>(1e300), 3.4028234663852886e38f);
  EXPECT_TRUE(std::isnan(__spn_saturate<float>(double(NAN))));
}

// f32 to an integer of 32 bits or fewer compares in f32 (no f64 conversions
// on the GPU); its bounds must be exactly those of the f64 path.
template <typename To>
void expectSameAsThroughF64(float v) {
  EXPECT_EQ(__spn_saturate<To>(v), __spn_saturate<To>(double(v))) << "value " << v << ", " << sizeof(To) << " bytes";
}
template <typename To>
void checkNarrowFromF32(std::mt19937& rng) {
  const double lo = double(std::numeric_limits<To>::min()), hi = double(std::numeric_limits<To>::max());
  std::vector<float> values = {0.0f, -0.0f, 0.5f, -0.5f, float(hi), float(lo), INFINITY, -INFINITY, NAN};
  for (double edge : {lo, hi + 1.0, lo - 1.0})  // the floats around each bound
    for (float f = std::nextafter(float(edge), -INFINITY), n = 0; n < 6; f = std::nextafter(f, INFINITY), ++n)
      values.push_back(f);
  std::uniform_real_distribution<float> near(float(lo) * 1.5f - 2.0f, float(hi) * 1.5f + 2.0f);
  for (int i = 0; i < 20000; ++i) values.push_back(near(rng));
  for (float v : values) expectSameAsThroughF64<To>(v);
}

TEST(PreludeSaturate, NarrowIntegersFromF32AgreeWithTheF64Path) {
  std::mt19937 rng(std::random_device{}());
  checkNarrowFromF32<int8_t>(rng);
  checkNarrowFromF32<uint8_t>(rng);
  checkNarrowFromF32<int16_t>(rng);
  checkNarrowFromF32<uint16_t>(rng);
  checkNarrowFromF32<int32_t>(rng);
  checkNarrowFromF32<uint32_t>(rng);
  EXPECT_EQ(__spn_saturate<int32_t>(2147483648.0f), INT32_MAX);
  EXPECT_EQ(__spn_saturate<int32_t>(2147483520.0f), 2147483520);  // the largest f32 below 2^31
  EXPECT_EQ(__spn_saturate<uint8_t>(255.9f), 255);
}

}  // namespace
