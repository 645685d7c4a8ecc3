#include "sema/value_range.h"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>

#include "sema/builtins.h"

namespace spindle {

namespace {

constexpr int64_t kInf = ValueRange::kUnbounded;

int64_t clamp(__int128 v) { return v >= kInf ? kInf : v <= -kInf ? -kInf : int64_t(v); }

// The smallest range holding f applied to every pair of ends: right for
// + - * and for // and cdiv with a divisor of one sign, each monotonic in
// either argument when the other is fixed.
template <typename F>
ValueRange corners(ValueRange a, ValueRange b, F f) {
  ValueRange r{kInf, -kInf};
  for (int64_t x : {a.lo, a.hi})
    for (int64_t y : {b.lo, b.hi}) {
      int64_t v = clamp(f(__int128(x), __int128(y)));
      r.lo = std::min(r.lo, v);
      r.hi = std::max(r.hi, v);
    }
  return r;
}

ValueRange typeRange(ScalarType t) {
  if (t == ScalarType::U8) return {0, 255};
  if (t == ScalarType::U16) return {0, 65535};
  if (t == ScalarType::U32) return {0, 4294967295};
  if (t == ScalarType::I8) return {-128, 127};
  if (t == ScalarType::I16) return {-32768, 32767};
  if (t == ScalarType::I32) return {-2147483648LL, 2147483647};
  if (t == ScalarType::U64) return {0, kInf};
  return {-kInf, kInf};
}

class RangeEvaluator {
 public:
  explicit RangeEvaluator(const ConstLookup& known) : known_(known) {}

  std::optional<ValueRange> eval(const Expr& e) {
    if (auto v = evaluateConst(e, known_); v && !v->isFloat) return ValueRange{clamp(v->i), clamp(v->i)};
    if (const auto* n = e.as<NameExpr>()) {
      const Symbol* s = n->symbol;
      if (s && s->kind == SymbolKind::DimSymbol) return ValueRange{1, kInf};
      if (s && s->kind == SymbolKind::ScalarParam) return typeRange(s->type);
      return std::nullopt;
    }
    if (const auto* u = e.as<UnaryExpr>()) {
      auto a = eval(*u->operand);
      if (!a || (u->op != UnaryOp::Neg && u->op != UnaryOp::Pos)) return std::nullopt;
      return u->op == UnaryOp::Pos ? *a : ValueRange{-a->hi, -a->lo};
    }
    if (const auto* b = e.as<BinaryExpr>()) return binary(*b);
    if (const auto* t = e.as<TernaryExpr>()) {
      auto a = eval(*t->thenValue), b = eval(*t->elseValue);
      if (!a || !b) return std::nullopt;
      return ValueRange{std::min(a->lo, b->lo), std::max(a->hi, b->hi)};
    }
    if (const auto* c = e.as<CallExpr>()) return call(*c);
    return std::nullopt;  // floats and elements: not in a launch expression
  }

 private:
  std::optional<ValueRange> binary(const BinaryExpr& b) {
    auto l = eval(*b.lhs), r = eval(*b.rhs);
    if (!l || !r) return std::nullopt;
    const bool divisorHasOneSign = r->lo >= 1 || r->hi <= -1;
    auto apply = [&](auto f) -> std::optional<ValueRange> { return corners(*l, *r, f); };
    if (b.op == BinaryOp::Add) return apply([](__int128 x, __int128 y) { return x + y; });
    if (b.op == BinaryOp::Sub) return apply([](__int128 x, __int128 y) { return x - y; });
    if (b.op == BinaryOp::Mul) return apply([](__int128 x, __int128 y) { return x * y; });
    if (!divisorHasOneSign) return std::nullopt;
    if (b.op == BinaryOp::FloorDiv) return apply([](__int128 x, __int128 y) { return x / y; });
    if (b.op == BinaryOp::Mod) {
      const int64_t m = std::max(std::abs(r->lo), std::abs(r->hi)) - 1;
      if (l->lo >= 0) return ValueRange{0, std::min(l->hi, m)};
      return ValueRange{-m, m};
    }
    return std::nullopt;  // comparisons, bitwise: not a size
  }

  std::optional<ValueRange> call(const CallExpr& c) {
    const BuiltinInfo* b = findBuiltin(c.callee);
    if (!b || !c.kwargs.empty()) return std::nullopt;
    if (b->id == BuiltinId::WarpSize && c.args.empty()) return ValueRange{32, 64};
    if (c.args.size() != 2) return std::nullopt;
    auto x = eval(*c.args[0]), y = eval(*c.args[1]);
    if (!x || !y) return std::nullopt;
    if (b->id == BuiltinId::Min) return ValueRange{std::min(x->lo, y->lo), std::min(x->hi, y->hi)};
    if (b->id == BuiltinId::Max) return ValueRange{std::max(x->lo, y->lo), std::max(x->hi, y->hi)};
    if (b->id == BuiltinId::Cdiv && y->lo >= 1)
      return corners(*x, *y, [](__int128 n, __int128 d) { return (n + d - 1) / d; });
    return std::nullopt;
  }

  const ConstLookup& known_;
};

}  // namespace

std::optional<ValueRange> valueRange(const Expr& e, const ConstLookup& known) { return RangeEvaluator(known).eval(e); }

}  // namespace spindle
