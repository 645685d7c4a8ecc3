// Random integer expressions, typed as Spindle types them and with a proved
// interval: every operation is chosen knowing its operands' intervals, and
// where one could overflow a signed type, divide by zero or shift too far,
// its operands are narrowed first (fit). So the expression has no undefined
// behaviour whatever the inputs, and its interval is a true bound.
#pragma once

#include <string>
#include <vector>

#include "gen_state.h"

namespace spindle::cpu_fuzz {

// Python's precedence levels (docs/language.md 6.1), for parentheses.
enum Prec : int {
  kTernary = 1,
  kOr,
  kAnd,
  kNot,
  kCompare,
  kBitOr,
  kBitXor,
  kBitAnd,
  kShift,
  kAdditive,
  kMultiplicative,
  kUnary,
  kPower,
  kPrimary
};

struct Expr {
  std::string text;
  int prec = kPrimary;
  bool isBool = false;
  IntType type;
  Interval range;
  Uni uni = Uni::Block;
  bool weak = false;  // a bare literal: takes the other operand's type
  // Made of literals, consts, dims and the block's size only: a compile-time
  // value in some specialization (a static dim), where rules on constants
  // apply (a range's step must not be zero).
  bool constant = false;
  // The control uniformity its collectives need where it is evaluated:
  // Thread (none), Warp or Block.
  Uni needs = Uni::Thread;
};

// Where an expression is evaluated.
struct ExprCtx {
  // The value must be at least this uniform (only trusted values are used:
  // immutable variables, dims, consts, block collectives' results).
  Uni need = Uni::Thread;
  // The collectives this position may call: Block (any), Warp (warp ones
  // only), Thread (none). A position evaluated conditionally (a branch of a
  // conditional expression, the right of and/or) or more than once takes
  // none.
  Uni collectives = Uni::Thread;
  // The elements this thread owns here (it may read them back).
  const std::vector<Owned>* owned = nullptr;
};

class ExprGen {
 public:
  explicit ExprGen(GenState& s) : s_(s), rng_(s.rng) {}

  // A strong expression of type t (never a bare literal).
  Expr value(IntType t, const ExprCtx& c, int depth);
  // A condition (bool).
  Expr condition(const ExprCtx& c, int depth);
  // A compute type: i32, i64, u32 or u64.
  IntType computeType();
  // An index in [0, extent).
  Expr index(const Extent& extent, const ExprCtx& c, int depth);
  // `e` narrowed to values in `target` (which must meet e's type), same type.
  Expr fit(const Expr& e, const Interval& target);
  // `e` as type t: itself, or a cast.
  Expr cast(const Expr& e, IntType t);
  // A value for something of type t whose values must stay in `cap` (a
  // variable, a parameter): any type, converted and narrowed.
  Expr valueFor(IntType t, const Interval& cap, const ExprCtx& c, int depth);
  // A literal of type t in r, as text that is weak (bare) or strong (cast).
  Expr literal(IntType t, const Interval& r, bool weak);
  // A call of `fn` with fitting arguments (its results' types and caps are
  // the caller's business for tuples).
  Expr call(const FnInfo& fn, const ExprCtx& c, int depth);

  static std::string paren(const Expr& e, int minPrec);

 private:
  Expr leaf(IntType t, const ExprCtx& c, int depth);
  Expr operation(IntType t, const ExprCtx& c, int depth);
  Expr arithmetic(IntType t, const ExprCtx& c, int depth, char op);
  Expr division(IntType t, const ExprCtx& c, int depth, bool remainder);
  Expr bitwise(IntType t, const ExprCtx& c, int depth);
  Expr shift(IntType t, const ExprCtx& c, int depth);
  Expr minMax(IntType t, const ExprCtx& c, int depth);
  Expr unary(IntType t, const ExprCtx& c, int depth);
  Expr power(IntType t, const ExprCtx& c, int depth);
  Expr ternary(IntType t, const ExprCtx& c, int depth);
  Expr collective(IntType t, const ExprCtx& c, int depth);
  Expr tensorRead(IntType t, const ExprCtx& c, int depth);
  Expr bufferRead(IntType t, const ExprCtx& c, int depth);
  Expr fnCall(IntType t, const ExprCtx& c, int depth);
  Expr geometry(IntType t, const ExprCtx& c);
  // An operand of an operation of type t: t itself, a narrower type of t's
  // signedness, or a weak literal (when `literalOk`).
  Expr operand(IntType t, const ExprCtx& c, int depth, bool literalOk);
  // A divisor of type t: its interval holds no zero.
  Expr divisor(IntType t, const ExprCtx& c, int depth);
  Expr binaryText(const Expr& a, const std::string& op, const Expr& b, int prec, IntType type, Interval range);
  Expr builtin(const std::string& name, const std::vector<Expr>& args, IntType type, Interval range);
  Expr compare(const ExprCtx& c, int depth);

  GenState& s_;
  Rng& rng_;
};

// Uniformity of a combination.
inline Uni worstOf(const Expr& a, const Expr& b) { return worst(a.uni, b.uni); }

}  // namespace spindle::cpu_fuzz
