// The CPU target's __half (runtime/cpu/spindle_cpu.h) against g++'s
// _Float16 on x86-64 (correctly rounded: libgcc's conversions, and with
// -mf16c the hardware's for f32, 80 times faster): every f32 value, every
// f16 value, a sample of f64 values (every f16 tie among them) and integers.
// NaNs: both sides must give a NaN; payloads are not compared (the header
// keeps the top payload bits, quiet).
//
// Built and run by ctest (tests/cpu/CMakeLists.txt, cpu_half_exhaustive); by hand:
//   g++ -std=c++17 -O2 -mf16c -D__SPN_CPU=1 -D__SPN_CPU_WARP_SIZE=32 tests/cpu/half_test.cpp -o /tmp/half_test -pthread
//   /tmp/half_test
#include "../../runtime/cpu/spindle_cpu_abi.h"
//
#include "../../runtime/cpu/spindle_cpu.h"
//
#include <atomic>
#include <climits>
#include <random>
#include <thread>

#if !defined(__FLT16_MAX__)
#error "half_test needs _Float16 (g++ 12 on x86-64)"
#endif

namespace {

unsigned short bitsOf(_Float16 h) { return __builtin_bit_cast(unsigned short, h); }
bool isNanBits(unsigned short b) { return (b & 0x7fffu) > 0x7c00u; }

std::atomic<long> failures{0};

void report(const char* what, unsigned long long input, unsigned short got, unsigned short expected) {
  if (failures++ < 20) std::printf("FAIL %s 0x%llx: 0x%04x, expected 0x%04x\n", what, input, got, expected);
}

void checkFloats(unsigned long long begin, unsigned long long end) {
  for (unsigned long long u = begin; u < end; ++u) {
    const float f = __builtin_bit_cast(float, unsigned(u));
    const unsigned short got = __half(f).__x, expected = bitsOf(_Float16(f));
    if (got != expected && !(isNanBits(got) && isNanBits(expected))) report("f32", u, got, expected);
  }
}

}  // namespace

int main() {
  // Every f32: both cores.
  std::thread other(checkFloats, 0ull, 1ull << 31);
  checkFloats(1ull << 31, 1ull << 32);
  other.join();

  // Every f16, widened exactly (compared as f32 bits; NaN to NaN).
  for (unsigned b = 0; b < 0x10000; ++b) {
    const float got = float(__ushort_as_half(static_cast<unsigned short>(b)));
    const float expected = float(__builtin_bit_cast(_Float16, static_cast<unsigned short>(b)));
    const unsigned g = __builtin_bit_cast(unsigned, got), e = __builtin_bit_cast(unsigned, expected);
    if (g != e && !(got != got && expected != expected) && failures++ < 20)
      std::printf("FAIL f16 0x%04x widens to 0x%08x, expected 0x%08x\n", b, g, e);
  }

  // f64: random bit patterns, most near the f16 range (exponents -30 to 20), and every rounding boundary of
  // f16 plus and minus one f64 ulp (where rounding through f32 first would go wrong).
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000000; ++i) {
    unsigned long long u = rng();
    if (i % 4 != 0) u = (u & 0x800fffffffffffffull) | (static_cast<unsigned long long>(1023 - 30 + rng() % 51) << 52);
    const double d = __builtin_bit_cast(double, u);
    const unsigned short got = __half(d).__x, expected = bitsOf(_Float16(d));
    if (got != expected && !(isNanBits(got) && isNanBits(expected))) report("f64", u, got, expected);
  }
  for (unsigned b = 0; b < 0x7c00; ++b) {
    // Midway between f16 b and b + 1, in f64.
    const double mid = (double(__builtin_bit_cast(_Float16, static_cast<unsigned short>(b))) +
                        double(__builtin_bit_cast(_Float16, static_cast<unsigned short>(b + 1)))) /
                       2;
    for (double d : {mid, nextafter(mid, 0.0), nextafter(mid, 1e9), -mid, -nextafter(mid, 1e9)}) {
      const unsigned short got = __half(d).__x, expected = bitsOf(_Float16(d));
      if (got != expected) report("f64 near a tie", __builtin_bit_cast(unsigned long long, d), got, expected);
    }
  }

  // Integers.
  for (long long i = -70000; i <= 70000; ++i) {
    const unsigned short got = __half(i).__x, expected = bitsOf(_Float16(double(i)));
    if (got != expected) report("integer", static_cast<unsigned long long>(i), got, expected);
  }
  for (long long i : {LLONG_MIN, LLONG_MAX, 1ll << 53, (1ll << 53) + 1}) {
    if (__half(i).__x != bitsOf(_Float16(double(i))))
      report("integer", static_cast<unsigned long long>(i), __half(i).__x, bitsOf(_Float16(double(i))));
  }

  std::printf("%s\n", failures ? "half_test: FAILED" : "half_test: all passed");
  return failures ? 1 : 0;
}
