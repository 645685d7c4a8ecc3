#include "int_model.h"

#include <algorithm>
#include <initializer_list>

namespace spindle::cpu_fuzz {
namespace {

// Far outside every 64-bit type, and far inside __int128: products of
// saturated bounds stay representable.
constexpr Int kHuge = Int(1) << 100;

Int clampHuge(Int v) { return v > kHuge ? kHuge : v < -kHuge ? -kHuge : v; }

Interval hullOf(std::initializer_list<Int> values) {
  Interval r{*values.begin(), *values.begin()};
  for (Int v : values) r = r.hull(Interval::point(v));
  return r;
}

// Truncating division and remainder, as C++ does them.
Int truncDiv(Int a, Int b) { return a / b; }

// The number of bits a non-negative value needs.
int bitWidth(Int v) {
  int n = 0;
  while (v > 0) v >>= 1, ++n;
  return n;
}

}  // namespace

ScalarType IntType::scalarType() const {
  switch (bits) {
    case 8: return isSigned ? ScalarType::I8 : ScalarType::U8;
    case 16: return isSigned ? ScalarType::I16 : ScalarType::U16;
    case 32: return isSigned ? ScalarType::I32 : ScalarType::U32;
    default: return isSigned ? ScalarType::I64 : ScalarType::U64;
  }
}

Interval addRange(const Interval& a, const Interval& b) { return {clampHuge(a.lo + b.lo), clampHuge(a.hi + b.hi)}; }
Interval subRange(const Interval& a, const Interval& b) { return {clampHuge(a.lo - b.hi), clampHuge(a.hi - b.lo)}; }

Interval mulRange(const Interval& a, const Interval& b) {
  const Int al = clampHuge(a.lo), ah = clampHuge(a.hi), bl = clampHuge(b.lo), bh = clampHuge(b.hi);
  // A product that leaves __int128 saturates: it is far outside every type.
  auto mul = [](Int x, Int y) {
    Int r;
    if (__builtin_mul_overflow(x, y, &r)) return ((x > 0) == (y > 0)) ? kHuge : -kHuge;
    return clampHuge(r);
  };
  return hullOf({mul(al, bl), mul(al, bh), mul(ah, bl), mul(ah, bh)});
}

// Truncating division is monotone in each operand while the divisor keeps
// its sign, so the extremes are at the corners.
Interval divRange(const Interval& a, const Interval& b) {
  return hullOf({truncDiv(a.lo, b.lo), truncDiv(a.lo, b.hi), truncDiv(a.hi, b.lo), truncDiv(a.hi, b.hi)});
}

// The remainder has the dividend's sign, is smaller than the divisor in
// magnitude, and no larger than the dividend in magnitude.
Interval modRange(const Interval& a, const Interval& b) {
  const Int m = b.magnitude() - 1;
  const Int hi = a.hi > 0 ? std::min(a.hi, m) : 0;
  const Int lo = a.lo < 0 ? std::max(a.lo, -m) : 0;
  return {lo, hi};
}

Interval bitAndRange(const Interval& a, const Interval& b) {
  if (a.lo >= 0 && b.lo >= 0) return {0, std::min(a.hi, b.hi)};
  if (a.lo >= 0) return {0, a.hi};  // a non-negative mask keeps the result in [0, a]
  if (b.lo >= 0) return {0, b.hi};
  const int w = std::max(bitWidth(std::max(-a.lo - 1, a.hi)), bitWidth(std::max(-b.lo - 1, b.hi)));
  return {-(Int(1) << w), (Int(1) << w) - 1};
}

Interval bitOrXorRange(const Interval& a, const Interval& b) {
  if (a.lo >= 0 && b.lo >= 0) {
    const int w = std::max(bitWidth(a.hi), bitWidth(b.hi));
    return {0, (Int(1) << w) - 1};
  }
  const int w = std::max(bitWidth(std::max(-a.lo - 1, a.hi)), bitWidth(std::max(-b.lo - 1, b.hi)));
  return {-(Int(1) << w), (Int(1) << w) - 1};
}

// a * 2^count, as mathematical integers.
Interval shlRange(const Interval& a, const Interval& count) {
  return mulRange(a, {Int(1) << int(count.lo), Int(1) << int(count.hi)});
}

// An arithmetic right shift is monotone in the value and, for a fixed sign,
// in the count.
Interval shrRange(const Interval& a, const Interval& count) {
  return hullOf({a.lo >> count.lo, a.lo >> count.hi, a.hi >> count.lo, a.hi >> count.hi});
}

Interval convertRange(const Interval& r, IntType t) { return r.fits(t) ? r : Interval::full(t); }

Interval wrapRange(const Interval& r, IntType t) { return r.fits(t) ? r : Interval::full(t); }

std::string intText(Int v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  unsigned __int128 u = negative ? static_cast<unsigned __int128>(-(v + 1)) + 1 : static_cast<unsigned __int128>(v);
  std::string digits;
  while (u > 0) digits.insert(digits.begin(), char('0' + int(u % 10))), u /= 10;
  return negative ? "-" + digits : digits;
}

std::string hexText(Int v) {
  if (v < 0) return intText(v);
  static const char* kDigits = "0123456789abcdef";
  std::string digits;
  unsigned __int128 u = static_cast<unsigned __int128>(v);
  do digits.insert(digits.begin(), kDigits[int(u % 16)]), u /= 16;
  while (u > 0);
  return "0x" + digits;
}

}  // namespace spindle::cpu_fuzz
