// Host-side inputs for the parity cases: a fast deterministic generator and
// the f16/bf16 conversions (round to nearest even), independent of the
// device code on both sides.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace parity {

struct Rng {  // splitmix64: fast enough to fill hundreds of millions of values
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform(double lo, double hi) { return lo + (hi - lo) * double(next() >> 11) * 0x1.0p-53; }
  int64_t below(int64_t n) { return int64_t(next() % uint64_t(n)); }
};

inline uint16_t toBf16(float v) {  // nearest even (finite values)
  uint32_t u;
  std::memcpy(&u, &v, 4);
  return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
inline float fromBf16(uint16_t h) {
  const uint32_t u = uint32_t(h) << 16;
  float v;
  std::memcpy(&v, &u, 4);
  return v;
}

inline uint16_t toHalf(float v) {  // nearest even; finite values within f16's range
  uint32_t u;
  std::memcpy(&u, &v, 4);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const float a = std::fabs(v);
  if (a < 0x1p-14f) {  // subnormal: a multiple of 2^-24, rounded by the FPU (nearest even)
    return uint16_t(sign | uint32_t(std::nearbyint(a * 0x1p24f)));
  }
  std::memcpy(&u, &a, 4);
  const uint32_t rounded = u + 0xfffu + ((u >> 13) & 1u);  // to 10 mantissa bits
  return uint16_t(sign | (((rounded >> 23) - 112u) << 10) | ((rounded >> 13) & 0x3ffu));
}
inline float fromHalf(uint16_t h) {
  const int sign = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const float v = e == 0 ? std::ldexp(float(m), -24) : std::ldexp(float(m | 0x400), e - 25);
  return sign ? -v : v;
}

inline std::vector<float> randomF32(Rng& r, size_t n, double lo, double hi) {
  std::vector<float> v(n);
  for (auto& x : v) x = float(r.uniform(lo, hi));
  return v;
}
inline std::vector<uint16_t> randomBf16(Rng& r, size_t n, double lo, double hi) {
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = toBf16(float(r.uniform(lo, hi)));
  return v;
}
inline std::vector<uint16_t> randomF16(Rng& r, size_t n, double lo, double hi) {
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = toHalf(float(r.uniform(lo, hi)));
  return v;
}

}  // namespace parity
