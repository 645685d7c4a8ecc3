// The atomics' bit logic from templates/prelude.in (docs/language.md 8.5),
// compiled for the host through prelude_host_shim.h and checked by value
// against references written independently here: the half-word select and
// merge of 2-byte atomics (and their compare-and-swap loop, neighbours and
// odd-length tails included), bf16 atomic_add's rounding, and the f32/f64
// ordering of atomic_max/atomic_min on +-0, +-inf, NaN, denormals and
// random values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "prelude_host_shim.h"
// clang-format off
#include "prelude_atomic_helpers.inc"
// clang-format on

namespace {

template <typename To, typename From>
To bits(From f) {
  To u;
  static_assert(sizeof(To) == sizeof(From));
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// ------------------------------------------------------ half-word select/merge

TEST(PreludeHalfWord, SelectsAndMergesTheRightBytes) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 1000; ++trial) {
    alignas(4) unsigned char bytes[4];
    for (auto& b : bytes) b = static_cast<unsigned char>(rng());
    for (unsigned offset : {0u, 2u}) {
      unsigned word;
      std::memcpy(&word, bytes, 4);
      unsigned short expected;
      std::memcpy(&expected, bytes + offset, 2);
      const unsigned shift = __spn_half_shift(reinterpret_cast<unsigned long long>(bytes) + offset);
      EXPECT_EQ(__spn_half_get(word, shift), expected);
      const auto half = static_cast<unsigned short>(rng());
      unsigned char merged[4];
      std::memcpy(merged, bytes, 4);
      std::memcpy(merged + offset, &half, 2);  // the reference: write the element's own bytes
      unsigned mergedWord;
      std::memcpy(&mergedWord, merged, 4);
      EXPECT_EQ(__spn_half_put(word, shift, half), mergedWord);
    }
  }
}

// The loop updates only its element, returns the old bits, leaves an odd
// tail's padding as it was, and writes nothing when nothing changes.
TEST(PreludeHalfWord, UpdateLoopTouchesOnlyItsElement) {
  alignas(4) uint16_t storage[8] = {1, 2, 3, 4, 5, 0xbeef, 0xdead, 0xcafe};  // a tensor of 5; the rest is past it
  for (int i = 0; i < 5; ++i) {
    uint16_t before[8];
    std::memcpy(before, storage, sizeof storage);
    unsigned short old = __spn_atomic_half_update(&storage[i], [](unsigned short b) { return b * 3 + 1; });
    EXPECT_EQ(old, before[i]);
    for (int j = 0; j < 8; ++j) EXPECT_EQ(storage[j], j == i ? uint16_t(before[i] * 3 + 1) : before[j]) << i << j;
  }
  prelude_host::compareAndSwaps = 0;
  EXPECT_EQ(__spn_atomic_half_update(&storage[4], [](unsigned short b) { return b; }), storage[4]);
  EXPECT_EQ(prelude_host::compareAndSwaps, 0);
}

// Another thread changes the other half between the loop's read and its
// swap: the swap fails, the loop reads again, and both writes survive.
TEST(PreludeHalfWord, RetriesWhenTheNeighbourChanges) {
  for (int i : {0, 1}) {
    alignas(4) uint16_t pair[2] = {10, 20};
    prelude_host::compareAndSwaps = 0;
    prelude_host::beforeCompareAndSwap = [&] { pair[1 - i] = 99; };
    unsigned short old = __spn_atomic_half_update(&pair[i], [](unsigned short b) { return b + 5; });
    EXPECT_EQ(old, i == 0 ? 10 : 20);
    EXPECT_EQ(pair[i], (i == 0 ? 10 : 20) + 5);
    EXPECT_EQ(pair[1 - i], 99);
    EXPECT_EQ(prelude_host::compareAndSwaps, 2);
  }
}

// ------------------------------------------------------------- bf16 add

// Round-to-nearest-even of a double to bf16 (8 significant bits, exponents
// down to -126 with subnormals, overflow to infinity), by scaling: the
// reference for atomic_add's rounding.
uint16_t bf16OfDouble(double d) {
  if (std::isnan(d)) return 0x7fc0;
  const uint16_t sign = std::signbit(d) ? 0x8000 : 0;
  if (d == 0) return sign;
  if (std::isinf(d)) return sign | 0x7f80;
  const int e = std::max(std::ilogb(d), -126);
  const double quantum = std::ldexp(1.0, e - 7);
  const double r = std::nearbyint(d / quantum) * quantum;  // the default mode: half to even
  const double maxFinite = std::ldexp(255.0, 120);         // (2 - 2^-7) * 2^127
  if (std::fabs(r) > maxFinite) return sign | 0x7f80;
  return static_cast<uint16_t>(bits<uint32_t>(static_cast<float>(r)) >> 16);  // r has 8 bits: exact in f32
}

double doubleOfBf16(uint16_t b) { return bits<float>(static_cast<uint32_t>(b) << 16); }

TEST(PreludeBf16Add, RoundsTheSumOnceToNearestEven) {
  std::vector<uint16_t> values = {0x0000, 0x8000, 0x0001, 0x8001, 0x007f, 0x0080, 0x3f80, 0xbf80, 0x3f81,
                                  0x4000, 0x7f7f, 0xff7f, 0x7f80, 0xff80, 0x7fc0, 0x3b80, 0x4380, 0x4b80};
  std::mt19937 rng(11);
  for (int i = 0; i < 400; ++i) values.push_back(static_cast<uint16_t>(rng()));
  int checked = 0;
  for (uint16_t a : values)
    for (uint16_t b : values) {
      alignas(4) __spn_bf16 cell[2];
      cell[0].bits = a;
      cell[1].bits = 0x1234;
      __spn_bf16 v;
      v.bits = b;
      __spn_bf16 old = __spn_atomic_add_bf16(&cell[0], v);
      ASSERT_EQ(old.bits, a) << std::hex << a << " + " << b;
      ASSERT_EQ(cell[1].bits, 0x1234);
      const double sum = doubleOfBf16(a) + doubleOfBf16(b);  // exact, or off only far below bf16's last bit
      const uint16_t want = bf16OfDouble(sum);
      if (std::isnan(sum)) ASSERT_TRUE((cell[0].bits & 0x7fff) > 0x7f80) << std::hex << a << " + " << b;
      else ASSERT_EQ(cell[0].bits, want) << std::hex << a << " + " << b;
      ++checked;
    }
  EXPECT_GT(checked, 100000);
}

TEST(PreludeBf16Cas, ComparesBitsAndKeepsTheNeighbour) {
  alignas(4) __spn_bf16 cell[2];
  cell[0].bits = 0x8000;  // -0.0
  cell[1].bits = 0x4242;
  __spn_bf16 zero, one, negZero;
  zero.bits = 0x0000;
  one.bits = 0x3f80;
  negZero.bits = 0x8000;
  EXPECT_EQ(__spn_atomic_cas_bf16(&cell[1 - 1], zero, one).bits, 0x8000);  // +0.0 is not -0.0's bits
  EXPECT_EQ(cell[0].bits, 0x8000);
  EXPECT_EQ(__spn_atomic_cas_bf16(&cell[0], negZero, one).bits, 0x8000);
  EXPECT_EQ(cell[0].bits, 0x3f80);
  EXPECT_EQ(cell[1].bits, 0x4242);
  __spn_bf16 nan;
  nan.bits = 0x7fc1;
  cell[1] = nan;
  EXPECT_EQ(__spn_atomic_cas_bf16(&cell[1], nan, one).bits, 0x7fc1);  // a NaN matches its own bits
  EXPECT_EQ(cell[1].bits, 0x3f80);
  EXPECT_EQ(cell[0].bits, 0x3f80);
}

// ------------------------------------------------------ float max and min

// The documented rule, written from the C library: fmax/fmin (a NaN operand
// is ignored), of two NaNs the stored one, -0.0 below +0.0.
template <typename F>
F referencePick(F old, F v, bool max) {
  if (std::isnan(v)) return old;
  if (std::isnan(old)) return v;
  if (old == 0 && v == 0) return (std::signbit(old) != max) ? old : v;  // max keeps a +0, min a -0
  return max ? std::fmax(old, v) : std::fmin(old, v);
}

template <typename F, typename U>
void checkMaxMin(const std::vector<F>& values) {
  for (F a : values)
    for (F b : values)
      for (bool max : {true, false}) {
        const U got = max ? __spn_float_max_bits(bits<U>(a), bits<U>(b)) : __spn_float_min_bits(bits<U>(a), bits<U>(b));
        const F want = referencePick(a, b, max);
        if (std::isnan(want)) {
          // Which NaN: the stored one unless only the operand is one.
          ASSERT_EQ(got, std::isnan(a) ? bits<U>(a) : bits<U>(b)) << a << (max ? " max " : " min ") << b;
        } else {
          ASSERT_EQ(got, bits<U>(want)) << a << (max ? " max " : " min ") << b;
        }
        // Through the compare-and-swap loop: memory ends as picked, the old value comes back.
        U cell = bits<U>(a);
        const U old = __spn_atomic_bits_update(&cell, bits<U>(b), [max](U x, U y) {
          return max ? __spn_float_max_bits(x, y) : __spn_float_min_bits(x, y);
        });
        ASSERT_EQ(old, bits<U>(a));
        ASSERT_EQ(cell, got);
      }
}

template <typename F>
std::vector<F> specialValues(std::mt19937& rng) {
  using L = std::numeric_limits<F>;
  std::vector<F> v = {F(0),
                      -F(0),
                      F(1),
                      F(-1),
                      L::infinity(),
                      -L::infinity(),
                      L::quiet_NaN(),
                      -L::quiet_NaN(),
                      L::denorm_min(),
                      -L::denorm_min(),
                      L::min(),
                      -L::min(),
                      L::max(),
                      L::lowest(),
                      F(0.5),
                      F(-2.5)};
  std::uniform_real_distribution<F> uniform(F(-1e3), F(1e3));
  for (int i = 0; i < 60; ++i) v.push_back(uniform(rng));
  std::uniform_int_distribution<uint64_t> any;
  for (int i = 0; i < 60; ++i) {  // any bit pattern: tiny, huge, NaN payloads
    using U = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
    v.push_back(bits<F>(static_cast<U>(any(rng))));
  }
  return v;
}

TEST(PreludeFloatMaxMin, F32MatchesTheDocumentedRule) {
  std::mt19937 rng(3);
  checkMaxMin<float, unsigned>(specialValues<float>(rng));
}

TEST(PreludeFloatMaxMin, F64MatchesTheDocumentedRule) {
  std::mt19937 rng(5);
  checkMaxMin<double, unsigned long long>(specialValues<double>(rng));
}

// The key is monotonic in the float's order, over every non-NaN pair.
TEST(PreludeFloatMaxMin, KeyOrdersLikeTheFloats) {
  std::mt19937 rng(9);
  auto values = specialValues<float>(rng);
  for (float a : values)
    for (float b : values) {
      if (std::isnan(a) || std::isnan(b)) continue;
      const bool less = a < b || (a == 0 && b == 0 && std::signbit(a) && !std::signbit(b));
      EXPECT_EQ(__spn_float_key(bits<unsigned>(a)) < __spn_float_key(bits<unsigned>(b)), less) << a << " " << b;
    }
}

}  // namespace
