// The random kernel generator's model of Spindle's integers: the types it
// computes in, the interval every expression's value is known to lie in, and
// how uniform a value is across the threads of a block.
//
// Every value the generator writes is proved in range by these intervals
// before it is written, which is how generated programs avoid undefined
// behaviour by construction: a signed operation whose interval leaves its
// type is never emitted (its operands are narrowed first), a divisor's
// interval never holds zero, a shift count's never leaves [0, width).
#pragma once

#include <cstdint>
#include <string>

#include <spindle/types.h>

namespace spindle::cpu_fuzz {

using Int = __int128;  // wide enough for every product of two 64-bit bounds we keep

// An integer type: i8 ... u64.
struct IntType {
  int bits = 32;
  bool isSigned = true;

  static IntType i32() { return {32, true}; }
  static IntType i64() { return {64, true}; }
  static IntType u32() { return {32, false}; }
  static IntType u64() { return {64, false}; }

  Int min() const { return isSigned ? -(Int(1) << (bits - 1)) : 0; }
  Int max() const { return isSigned ? (Int(1) << (bits - 1)) - 1 : (Int(1) << bits) - 1; }
  std::string name() const { return (isSigned ? "i" : "u") + std::to_string(bits); }
  ScalarType scalarType() const;
  bool operator==(const IntType& o) const { return bits == o.bits && isSigned == o.isSigned; }
  bool operator!=(const IntType& o) const { return !(*this == o); }
};

// The type two operands of one signedness promote to (docs/language.md 4.5).
inline IntType promoted(IntType a, IntType b) { return {a.bits > b.bits ? a.bits : b.bits, a.isSigned}; }

// A closed interval of mathematical integers.
struct Interval {
  Int lo = 0, hi = 0;

  static Interval of(Int lo, Int hi) { return {lo, hi}; }
  static Interval point(Int v) { return {v, v}; }
  static Interval full(IntType t) { return {t.min(), t.max()}; }

  bool within(const Interval& o) const { return lo >= o.lo && hi <= o.hi; }
  bool fits(IntType t) const { return within(full(t)); }
  bool holds(Int v) const { return lo <= v && v <= hi; }
  Interval hull(const Interval& o) const { return {lo < o.lo ? lo : o.lo, hi > o.hi ? hi : o.hi}; }
  bool operator==(const Interval& o) const { return lo == o.lo && hi == o.hi; }
  bool operator!=(const Interval& o) const { return !(*this == o); }
  Int magnitude() const { return -lo > hi ? -lo : hi; }  // the largest |v|
};

// Intervals of the results of the operators, in mathematical integers (the
// caller decides what leaving the type means: an error for signed types,
// wrapping for unsigned ones). Products saturate far beyond 64 bits.
Interval addRange(const Interval& a, const Interval& b);
Interval subRange(const Interval& a, const Interval& b);
Interval mulRange(const Interval& a, const Interval& b);
// Truncating division and remainder (C++'s, Spindle's `//` and `%`); `b`
// must not hold zero.
Interval divRange(const Interval& a, const Interval& b);
Interval modRange(const Interval& a, const Interval& b);
// & | ^ of two's-complement values; shifts by a count in [0, width).
Interval bitAndRange(const Interval& a, const Interval& b);
Interval bitOrXorRange(const Interval& a, const Interval& b);
Interval shlRange(const Interval& a, const Interval& count);
Interval shrRange(const Interval& a, const Interval& count);
// What a value in `r` becomes in type `t`: itself when it fits, else (a
// modular conversion) anything of `t`.
Interval convertRange(const Interval& r, IntType t);
// The result of an operation of type `t` whose exact result lies in `r`:
// unsigned types wrap, so anything of the type when `r` leaves it.
Interval wrapRange(const Interval& r, IntType t);

// How uniform a value is: the same on every thread of the block, on every
// lane of a warp, or possibly different per thread (docs/language.md 8.9).
enum class Uni { Block = 0, Warp = 1, Thread = 2 };
inline Uni worst(Uni a, Uni b) { return a > b ? a : b; }

// An integer as Spindle source text (decimal, or hex for large masks).
std::string intText(Int v);
std::string hexText(Int v);

}  // namespace spindle::cpu_fuzz
