#include "expr_gen.h"

#include <algorithm>
#include <stdexcept>

namespace spindle::cpu_fuzz {
namespace {

Int pow2(int k) { return Int(1) << k; }

Interval meet(const Interval& a, const Interval& b) { return {std::max(a.lo, b.lo), std::min(a.hi, b.hi)}; }

}  // namespace

std::string ExprGen::paren(const Expr& e, int minPrec) {
  if (e.prec < minPrec) return "(" + e.text + ")";
  return e.text;
}

IntType ExprGen::computeType() {
  static const IntType kTypes[] = {IntType::i32(), IntType::i32(), IntType::i64(), IntType::u32(), IntType::u64()};
  return kTypes[rng_.below(5)];
}

// ---------------------------------------------------------------- literals and casts

Expr ExprGen::literal(IntType t, const Interval& r0, bool weak) {
  Interval r = meet(r0, Interval::full(t));
  // Small values, the bounds and values near them find more than uniform
  // 64-bit noise.
  Int v;
  switch (rng_.below(5)) {
    case 0: v = r.lo; break;
    case 1: v = r.hi; break;
    case 2: v = rng_.between(std::max(r.lo, Int(-9)), std::min(r.hi, Int(9))); break;
    default: v = rng_.between(r.lo, r.hi); break;
  }
  if (v < r.lo || v > r.hi) v = r.lo;  // the small window missed r
  Expr e;
  e.type = t;
  e.range = Interval::point(v);
  e.uni = Uni::Block;
  e.constant = true;
  const std::string digits = (v > 4096 && rng_.percent(30)) ? hexText(v) : intText(v);
  // A bare literal is i32 alone (i64 past it, u64 past that): beyond i64 it
  // is only written cast.
  const bool bareOk = v <= IntType::i64().max();
  if (weak && bareOk) {
    e.text = digits;
    e.prec = v < 0 ? kUnary : kPrimary;
    e.weak = true;
  } else {
    e.text = t.name() + "(" + digits + ")";
    e.prec = kPrimary;
  }
  return e;
}

Expr ExprGen::cast(const Expr& e, IntType t) {
  if (!e.isBool && !e.weak && e.type == t) return e;
  Expr r = e;
  r.text = t.name() + "(" + e.text + ")";
  r.prec = kPrimary;
  r.type = t;
  r.isBool = false;
  r.weak = false;
  r.range = e.isBool ? Interval::of(0, 1) : convertRange(e.range, t);
  return r;
}

Expr ExprGen::binaryText(const Expr& a, const std::string& op, const Expr& b, int prec, IntType type, Interval range) {
  // The generator's own invariant: Spindle refuses a sign mix (4.5).
  if (!a.weak && !b.weak && !a.isBool && !b.isBool && a.type.isSigned != b.type.isSigned)
    throw std::logic_error("cpu_fuzz generator: sign mix in '" + a.text + "' " + op + " '" + b.text + "'");
  Expr r;
  r.text = paren(a, prec) + " " + op + " " + paren(b, prec + 1);
  r.prec = prec;
  r.type = type;
  r.range = range;
  r.uni = worstOf(a, b);
  r.needs = std::min(a.needs, b.needs);
  r.constant = a.constant && b.constant;
  return r;
}

Expr ExprGen::builtin(const std::string& name, const std::vector<Expr>& args, IntType type, Interval range) {
  Expr r;
  r.constant = true;
  r.text = name + "(";
  for (size_t i = 0; i < args.size(); ++i) {
    r.constant = r.constant && args[i].constant;
    r.text += (i ? ", " : "") + args[i].text;
    r.uni = worst(r.uni, args[i].uni);
    r.needs = std::min(r.needs, args[i].needs);
  }
  r.text += ")";
  r.type = type;
  r.range = range;
  return r;
}

// ---------------------------------------------------------------- narrowing

Expr ExprGen::fit(const Expr& e, const Interval& target) {
  const Interval r = meet(target, Interval::full(e.type));
  if (e.range.within(r)) return e;
  if (e.weak) return literal(e.type, r, true);
  const IntType t = e.type;
  if (r.lo > 0 || r.hi < 0) {
    // Into [0, hi - lo], then moved: the sum stays inside r, so inside t.
    const Int span = r.hi - r.lo;
    Expr base = fit(e, {0, span});
    Expr offset = literal(t, Interval::point(r.lo > 0 ? r.lo : -r.lo), true);
    Expr moved =
        binaryText(base, r.lo > 0 ? "+" : "-", offset, kAdditive, t, {base.range.lo + r.lo, base.range.hi + r.lo});
    return moved;
  }
  // r holds zero.
  const Int room = std::min(-r.lo, r.hi);  // symmetric room around zero
  int bits = 0;
  while (bits < 62 && pow2(bits + 1) - 1 <= r.hi) ++bits;
  switch (rng_.below(room > 0 ? 4 : 2)) {
    case 0: {  // a mask: [0, 2^bits - 1] whatever e's sign
      Expr mask = literal(t, Interval::point(pow2(bits) - 1), true);
      mask.text = pow2(bits) - 1 > 255 ? hexText(pow2(bits) - 1) : intText(pow2(bits) - 1);
      return binaryText(e, "&", mask, kBitAnd, t, bitAndRange(e.range, mask.range));
    }
    case 1: {  // a clamp
      const Int lo = std::max(r.lo, e.range.lo), hi = std::min(r.hi, e.range.hi);
      if (lo > hi) break;
      Expr l = literal(t, Interval::point(lo), true), h = literal(t, Interval::point(hi), true);
      Expr inner = builtin("max", {e, l}, t, {std::max(e.range.lo, lo), std::max(e.range.hi, lo)});
      return builtin("min", {inner, h}, t, {std::min(inner.range.lo, hi), std::min(inner.range.hi, hi)});
    }
    case 2: {  // a right shift, when one brings it inside
      for (int s = 1; s < t.bits; ++s) {
        const Interval shifted = shrRange(e.range, Interval::point(s));
        if (shifted.within(r)) {
          Expr count = literal(t, Interval::point(s), true);
          return binaryText(e, ">>", count, kShift, t, shifted);
        }
      }
      break;
    }
    default: break;
  }
  // A remainder: |e % k| < k, with e's sign.
  const bool nonNegative = e.range.lo >= 0 || !t.isSigned;
  const Int kmax = std::min(nonNegative ? r.hi + 1 : room + 1, t.max());
  if (kmax <= 1) {  // only zero fits both signs: a mask keeps [0, 0]
    Expr zero = literal(t, Interval::point(0), true);
    return binaryText(e, "&", zero, kBitAnd, t, {0, 0});
  }
  const Int k = rng_.percent(50) ? kmax : rng_.between(2, std::min(kmax, Int(1000)));
  Expr divisor = literal(t, Interval::point(k), true);
  return binaryText(e, "%", divisor, kMultiplicative, t, modRange(e.range, divisor.range));
}

Expr ExprGen::valueFor(IntType t, const Interval& cap, const ExprCtx& c, int depth) {
  const Interval target = meet(cap, Interval::full(t));
  if (t.bits < 32) {
    // 8- and 16-bit values are computed in a wider type of their sign (C++
    // would compute in int anyway) and converted where they are stored.
    const IntType wide{rng_.percent(50) ? 32 : 64, t.isSigned};
    return fit(value(wide, c, depth), target);
  }
  // Another type converts implicitly (assignments, arguments), or by a cast.
  const IntType from = rng_.percent(70) ? t : computeType();
  Expr e = value(from, c, depth);
  if (from.isSigned != t.isSigned || rng_.percent(20)) e = cast(e, t);
  // Narrowed in its own type to values `t` holds too, so the conversion
  // keeps the value.
  return fit(e, target);
}

// ---------------------------------------------------------------- values

Expr ExprGen::value(IntType t, const ExprCtx& c, int depth) {
  if (depth <= 0 || rng_.percent(25)) return leaf(t, c, depth);
  return operation(t, c, depth);
}

Expr ExprGen::operand(IntType t, const ExprCtx& c, int depth, bool literalOk) {
  const int roll = rng_.below(100);
  if (literalOk && roll < 30) {
    // Unsigned operands take non-negative literals; bare negative ones are a
    // unary minus on a literal, weak too.
    const Interval r = t.isSigned ? Interval::of(-300, 300) : Interval::of(0, 600);
    return literal(t, rng_.percent(10) ? Interval::full(t) : r, true);
  }
  if (t.bits == 64 && roll < 45) return value({32, t.isSigned}, c, depth);  // promoted to t
  return value(t, c, depth);
}

Expr ExprGen::divisor(IntType t, const ExprCtx& c, int depth) {
  const bool negative = t.isSigned && rng_.percent(25);
  const Int k = rng_.percent(50) ? rng_.between(1, 20) : pow2(rng_.below(t.bits - 2) + 1);
  const Interval r = negative ? Interval::of(-k, -1) : Interval::of(1, k);
  if (rng_.percent(40)) return literal(t, r, true);
  Expr d = operand(t, c, depth, false);
  return fit(d, r);
}

Expr ExprGen::operation(IntType t, const ExprCtx& c, int depth) {
  switch (rng_.below(20)) {
    case 0:
    case 1:
    case 2: return arithmetic(t, c, depth, '+');
    case 3:
    case 4: return arithmetic(t, c, depth, '-');
    case 5:
    case 6: return arithmetic(t, c, depth, '*');
    case 7: return division(t, c, depth, false);
    case 8: return division(t, c, depth, true);
    case 9:
    case 10: return bitwise(t, c, depth);
    case 11:
    case 12: return shift(t, c, depth);
    case 13: return minMax(t, c, depth);
    case 14:
    case 15: return unary(t, c, depth);
    case 16: return power(t, c, depth);
    case 17:
      if (s_.weight("ternary")) return ternary(t, c, depth);
      return arithmetic(t, c, depth, '+');
    case 18: {  // another type, converted
      IntType from = computeType();
      return cast(value(from, c, depth - 1), t);
    }
    default: return leaf(t, c, depth);
  }
}

Expr ExprGen::arithmetic(IntType t, const ExprCtx& c, int depth, char op) {
  Expr a = operand(t, c, depth - 1, false);
  Expr b = operand(t, c, depth - 1, true);
  if (a.type != t && (b.weak || b.type != t)) a = cast(a, t);  // one operand has t itself
  if (rng_.percent(30)) std::swap(a, b);
  auto rangeOf = [&](const Expr& x, const Expr& y) {
    return op == '+' ? addRange(x.range, y.range) : op == '-' ? subRange(x.range, y.range) : mulRange(x.range, y.range);
  };
  Interval r = rangeOf(a, b);
  if (t.isSigned && !r.fits(t)) {
    // Each operand within 2^(w-2) (sums) or 2^((w-2)/2) (products): the
    // result fits.
    const Int m = pow2(op == '*' ? (t.bits - 2) / 2 : t.bits - 2);
    a = fit(a, {-m, m});
    b = fit(b, {-m, m});
    r = rangeOf(a, b);
  }
  const std::string text(1, op);
  return binaryText(a, text, b, op == '*' ? kMultiplicative : kAdditive, t, t.isSigned ? r : wrapRange(r, t));
}

Expr ExprGen::division(IntType t, const ExprCtx& c, int depth, bool remainder) {
  Expr a = operand(t, c, depth - 1, rng_.percent(15));
  Expr d = divisor(t, c, depth - 1);
  if ((a.weak || a.type != t) && (d.weak || d.type != t)) d = cast(d, t);
  // The one signed overflow of division: the minimum by -1.
  if (t.isSigned && d.range.holds(-1) && a.range.lo <= t.min()) a = fit(a, {t.min() + 1, t.max()});
  const Interval r = remainder ? modRange(a.range, d.range) : divRange(a.range, d.range);
  return binaryText(a, remainder ? "%" : "//", d, kMultiplicative, t, r);
}

Expr ExprGen::bitwise(IntType t, const ExprCtx& c, int depth) {
  Expr a = operand(t, c, depth - 1, false);
  Expr b = operand(t, c, depth - 1, true);
  if (a.type != t && (b.weak || b.type != t)) a = cast(a, t);
  if (rng_.percent(30)) std::swap(a, b);
  switch (rng_.below(3)) {
    case 0: return binaryText(a, "&", b, kBitAnd, t, bitAndRange(a.range, b.range));
    case 1: return binaryText(a, "|", b, kBitOr, t, wrapRange(bitOrXorRange(a.range, b.range), t));
    default: return binaryText(a, "^", b, kBitXor, t, wrapRange(bitOrXorRange(a.range, b.range), t));
  }
}

Expr ExprGen::shift(IntType t, const ExprCtx& c, int depth) {
  const bool left = rng_.percent(50);
  Expr a = operand(t, c, depth - 1, rng_.percent(10));
  // The count: a literal, or a value of t's signedness (a wider one makes
  // the shift wider: its type is that of both operands, 6.5).
  int maxCount = t.bits - 1;
  Int aMax = 0;
  if (left && t.isSigned) {
    // C++17: a signed left shift needs a non-negative value that stays in
    // the type.
    maxCount = rng_.below(t.bits - 1);
    aMax = pow2(t.bits - 2 - maxCount);
    a = fit(a, {0, aMax});
  }
  const Interval countRange{0, maxCount};
  Expr n;
  if (rng_.percent(50) || a.weak) {
    n = literal(t, countRange, true);
  } else {
    IntType nt = {rng_.percent(50) ? t.bits : 32, t.isSigned};
    n = fit(value(nt, c, depth - 1), countRange);
  }
  if (a.weak && n.weak) a = cast(a, t);
  // The shift's type is both operands' (6.5): one of them has t.
  if (!a.weak && promoted(a.type, n.weak ? a.type : n.type) != t) a = cast(a, t);
  const Interval r = left ? shlRange(a.range, n.range) : shrRange(a.range, n.range);
  return binaryText(a, left ? "<<" : ">>", n, kShift, t, t.isSigned ? r : wrapRange(r, t));
}

Expr ExprGen::minMax(IntType t, const ExprCtx& c, int depth) {
  Expr a = operand(t, c, depth - 1, false);
  Expr b = operand(t, c, depth - 1, true);
  if (a.type != t && (b.weak || b.type != t)) a = cast(a, t);
  if (rng_.percent(30)) std::swap(a, b);
  const bool isMin = rng_.percent(50);
  const Interval r = isMin ? Interval{std::min(a.range.lo, b.range.lo), std::min(a.range.hi, b.range.hi)}
                           : Interval{std::max(a.range.lo, b.range.lo), std::max(a.range.hi, b.range.hi)};
  return builtin(isMin ? "min" : "max", {a, b}, t, r);
}

Expr ExprGen::unary(IntType t, const ExprCtx& c, int depth) {
  Expr a = value(t, c, depth - 1);
  switch (rng_.below(5)) {
    case 0: {  // negation: the minimum has no negative
      if (t.isSigned) a = fit(a, {t.min() + 1, t.max()});
      Expr r = a;
      r.text = "-" + (a.text[0] == '-' ? "(" + a.text + ")" : paren(a, kUnary));
      r.prec = kUnary;
      r.range = t.isSigned ? Interval{-a.range.hi, -a.range.lo} : wrapRange({-a.range.hi, -a.range.lo}, t);
      return r;
    }
    case 1: {
      Expr r = a;
      r.text = "~" + paren(a, kUnary);
      r.prec = kUnary;
      r.range = t.isSigned ? Interval{-a.range.hi - 1, -a.range.lo - 1}
                           : Interval{t.max() - a.range.hi, t.max() - a.range.lo};
      return r;
    }
    case 2: {
      if (t.isSigned) a = fit(a, {t.min() + 1, t.max()});
      const Int lo = a.range.lo >= 0 ? a.range.lo : a.range.hi <= 0 ? -a.range.hi : 0;
      return builtin("abs", {a}, t, t.isSigned ? Interval{lo, a.range.magnitude()} : a.range);
    }
    case 3: {  // popcount counts the bits of any integer and is an i32
      Expr x = value(computeType(), c, depth - 1);
      Expr p = builtin("popcount", {x}, IntType::i32(), {0, x.type.bits});
      return cast(p, t);
    }
    default: {  // cdiv(a, b) = (a + b - 1) // b: a >= 0 and b > 0 are its domain
      const Int m = pow2(t.bits - 3);
      Expr x = fit(a, {0, m});
      Expr d = fit(operand(t, c, depth - 1, true), {1, m});
      if (d.type != t && !d.weak) d = cast(d, t);
      return builtin("cdiv", {x, d}, t, divRange(addRange(x.range, subRange(d.range, Interval::point(1))), d.range));
    }
  }
}

Expr ExprGen::power(IntType t, const ExprCtx& c, int depth) {
  const int n = 2 + rng_.below(2);
  Expr a = value(t, c, depth - 1);
  if (t.isSigned) {
    // The largest base whose power stays in the type.
    Int m = 1;
    while (true) {
      Int next = m * 2, p = 1;
      for (int i = 0; i < n; ++i) p *= next;
      if (p > t.max()) break;
      m = next;
    }
    a = fit(a, {-m, m});
  }
  Interval r = a.range;
  for (int i = 1; i < n; ++i) r = mulRange(r, a.range);
  if (n == 2 && a.range.lo < 0 && a.range.hi > 0) r.lo = 0;
  Expr e = a;
  e.text = paren(a, kPrimary) + " ** " + std::to_string(n);
  e.prec = kPower;
  e.range = t.isSigned ? r : wrapRange(r, t);
  return e;
}

Expr ExprGen::ternary(IntType t, const ExprCtx& c, int depth) {
  ExprCtx lazy = c;
  lazy.collectives = Uni::Thread;  // a branch runs on some threads only
  Expr cond = condition(c, depth - 1);
  Expr a = value(t, lazy, depth - 1), b = value(t, lazy, depth - 1);
  Expr r;
  r.text = paren(a, kOr) + " if " + paren(cond, kOr) + " else " + paren(b, kTernary);
  r.prec = kTernary;
  r.type = t;
  r.range = a.range.hull(b.range);
  r.uni = worst(cond.uni, worstOf(a, b));
  r.needs = std::min(cond.needs, std::min(a.needs, b.needs));
  r.constant = cond.constant && a.constant && b.constant;
  s_.feature("ternary");
  return r;
}

// ---------------------------------------------------------------- conditions

Expr ExprGen::compare(const ExprCtx& c, int depth) {
  const IntType t = computeType();
  Expr a = operand(t, c, depth - 1, false);
  Expr b = operand(t, c, depth - 1, true);
  if (rng_.percent(30)) std::swap(a, b);
  static const char* kOps[] = {"<", "<=", ">", ">=", "==", "!="};
  Expr r;
  r.text = paren(a, kBitOr) + " " + kOps[rng_.below(6)] + " " + paren(b, kBitOr);
  r.prec = kCompare;
  r.isBool = true;
  r.type = IntType::i32();
  r.range = {0, 1};
  r.uni = worstOf(a, b);
  r.needs = std::min(a.needs, b.needs);
  r.constant = a.constant && b.constant;
  return r;
}

Expr ExprGen::condition(const ExprCtx& c, int depth) {
  if (depth <= 0) return compare(c, 1);
  switch (rng_.below(10)) {
    case 0:
    case 1: {  // and/or: the right side runs on some threads only
      ExprCtx lazy = c;
      lazy.collectives = Uni::Thread;
      Expr a = condition(c, depth - 1), b = condition(lazy, depth - 1);
      const bool isAnd = rng_.percent(50);
      const int p = isAnd ? kAnd : kOr;
      Expr r = a;
      r.text = paren(a, p) + (isAnd ? " and " : " or ") + paren(b, p + 1);
      r.prec = p;
      r.uni = worstOf(a, b);
      r.needs = std::min(a.needs, b.needs);
      r.constant = a.constant && b.constant;
      return r;
    }
    case 2: {
      Expr a = condition(c, depth - 1);
      Expr r = a;
      r.text = "not " + paren(a, kNot);
      r.prec = kNot;
      return r;
    }
    case 3: {  // a bool variable
      std::vector<Var*> flags;
      for (Var* v : s_.vars)
        if (v->isBool && v->trusted() <= c.need) flags.push_back(v);
      if (flags.empty()) break;
      Var* v = rng_.pick(flags);
      Expr r;
      r.text = v->name;
      r.isBool = true;
      r.range = {0, 1};
      r.uni = v->trusted();
      return r;
    }
    case 4: {  // a number as a truth value
      Expr n = value(computeType(), c, depth - 1);
      Expr r = n;
      r.text = "bool(" + n.text + ")";
      r.prec = kPrimary;
      r.isBool = true;
      r.range = {0, 1};
      return r;
    }
    case 5: {  // a vote: over the lanes of a warp whose control flow is warp-uniform
      if (c.collectives > Uni::Warp || !s_.allowWidthDependent || !s_.weight("warp_collective")) break;
      ExprCtx ac = c;
      ac.need = Uni::Thread;
      Expr a = condition(ac, depth - 1);
      const bool any = rng_.percent(50);
      Expr r = builtin(any ? "warp_any" : "warp_all", {a}, IntType::i32(), {0, 1});
      r.isBool = true;
      r.uni = Uni::Warp;
      r.needs = std::min(r.needs, Uni::Warp);
      s_.program.widthDependent = true;
      s_.feature(any ? "warp_any" : "warp_all");
      return r;
    }
    default: break;
  }
  return compare(c, depth);
}

}  // namespace spindle::cpu_fuzz
