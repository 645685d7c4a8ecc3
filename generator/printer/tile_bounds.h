// Bounds tests that a tile proves: the printer leaves out a comparison
// that is true wherever it is evaluated (docs/language.md 9.4, "Exact
// grid"). The rule, for `X < D` or `X + c <= D` (also written `X <= D - c`,
// `D > X`, ...):
//
//   X = B + R, where the *base* B is a multiple of some g that lies below D,
//   itself a multiple of g, so B <= D - g; and R (the rest of the sum) is
//   at most g - 1 (for `<`), g - c (for `+ c <=`). Then X <= D - g + R < D.
//
// Three bases:
//   - block_id(a) * T, where @grid's axis a is cdiv(D, T) and D % T == 0 at
//     launch (Specialization::exactGridDims, checked by the runtime at every
//     launch): block_id(a) < cdiv(D, T) = D / T, so block_id(a) * T <= D - T
//     (g = T);
//   - j, the variable of a range(start, D, step) loop around the test (step
//     positive, D evaluated alike each time), when the divisibility analysis
//     proves j and D multiples of g: j < D, so j <= D - g.
//   - L, a local assigned once, inside the then-branch of an `if` one of
//     whose conjuncts says `L + g <= D` (or `L <= D - g`, `L + c < D`, ...)
//     and which that branch does not assign: L keeps the value the test
//     saw. So a kernel whose last tiles may be cut writes
//     `if row0 + BM <= M and col0 + BN <= N:` around its whole-tile stores.
// X is followed through locals assigned once, value-keeping integer casts
// (`i64(block_id(1)) * BM`, `u32(block_id(0)) * BN`), and `+`; the product
// may be written either way round. R's bound comes from IndexBounds
// (thread_id() below @block, static_range variables, % and //, consts).
// Every integer node of X must have a range its type holds, so that no
// operation wraps and the arithmetic above is the machine's.
// A conjunction is true when each conjunct is; a disjunction when one
// disjunct is and those before it have no effect (they are evaluated first).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/ast.h"
#include "index_bounds.h"

namespace spindle {

struct PrintContext;
struct FunctionScope;
struct Symbol;
class Divisibility;

// What holds around the statement being printed: the range loops whose
// stop is evaluated to the same value each time
// (FunctionPrinter::stopIsStable), and the conjuncts of the `if` branches
// it lies in whose locals those branches do not assign.
struct Enclosing {
  std::vector<const ForStmt*> loops;
  std::vector<const Expr*> guards;
};

class TileBounds {
 public:
  // For the kernel's own body (nothing is proven in defs and closures).
  TileBounds(const PrintContext& ctx, const FunctionScope& fn);
  ~TileBounds();

  // Why the condition `e` is true wherever it is evaluated, or nothing.
  std::optional<std::string> alwaysTrue(const Expr& e, const Enclosing& around) const;
  // Why `sum + need <= bound` (bound a dim) holds wherever `sum` is
  // evaluated, or nothing: mma_store's tile inside C (need 16).
  std::optional<std::string> fits(const Expr& sum, const Symbol& bound, int64_t need, const Enclosing& around) const;
  // Whether `e` is at least 0 wherever it is evaluated (IndexBounds).
  bool nonNegative(const Expr& e) const;

 private:
  struct Term {
    const Expr* value;  // after casts and locals: not a `+`
    const Expr* shown;  // as written where it was reached
  };
  struct Base {
    int64_t g = 0;
    std::string why;  // "row0 <= M - 128 (...)"
  };
  // A comparison as `sum + need <= bound`, bound a dim.
  struct Bound {
    const Expr* sum;
    const Symbol* dim;
    int64_t need;
  };
  std::optional<Bound> asBound(const BinaryExpr& b) const;
  std::optional<std::string> comparison(const BinaryExpr& b, const Enclosing& around) const;
  std::optional<Base> base(const Term& t, const Symbol& bound, const Enclosing& around) const;
  std::optional<Base> guardBase(const Term& t, const Symbol& bound, const Expr& guard) const;
  const Expr& peel(const Expr& e) const;
  void terms(const Expr& e, std::vector<Term>& out) const;
  bool exact(const Expr& e, int depth = 0) const;
  bool pure(const Expr& e) const;
  std::optional<int64_t> constant(const Expr& e) const;
  std::string text(const Expr& e) const;

  const PrintContext& ctx_;
  const FunctionScope& fn_;
  bool enabled_ = false;
  IndexBounds ranges_;                 // whatever the index width
  int64_t tileOfAxis_[3] = {0, 0, 0};  // T of an axis cdiv(D, T) whose fact is set; 0 otherwise
  const Symbol* dimOfAxis_[3] = {nullptr, nullptr, nullptr};
  mutable std::unique_ptr<Divisibility> divisibility_;
};

}  // namespace spindle
