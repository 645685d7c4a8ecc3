// What the printer can prove about the range of an integer expression with
// 32-bit indices (Specialization::index32), so that a 64-bit `//` or `%`
// whose operands fit 32 bits unsigned is printed as one 32-bit division
// (docs/language.md 9.4). Interval arithmetic over:
//   - dynamic dims: [1, 2^31 - 1] (the launch's key bit says so; less where
//     a shape holds `c * D`: c * D is a dim too), and a
//     product of dims of one tensor's shape too (`T * V` of a [B, T, V]
//     tensor: at most its element count);
//   - launch geometry: thread_id() below @block's axis (and
//     thread_id() // warp_size() below c under @block(c * warp_size())), block_id() below
//     @grid's axis (its expression bounded the same way; grid_dim(a) - 1 -
//     block_id(a), the blocks in reverse, too), lane_id(),
//     warp_size(), block_dim(), grid_dim();
//   - literals and integer consts (a const per warp width, `BK = 64 if
//     warp_size() == 32 else 16`, and warp_size() itself: the expression is
//     bounded at each width, and the range holds both, so `i64(t) * BK`
//     with t below cdiv(K, BK) is bounded by K + BK at each width rather
//     than by K / 16 * 64);
//   - locals assigned exactly once (their value's range), and range loop
//     variables with a positive step ([start, stop - 1]);
//   - + - * // % of non-negative values, widening casts, cdiv, min, max,
//     and a conditional expression (either branch).
// Anything else (a scalar parameter, a loaded value, a local assigned twice
// or through nonlocal) has no known range.
// Made with `anyIndexWidth`, it bounds expressions without 32-bit indices
// too, with dims up to 2^62 (the runtime's largest): what the tile bounds
// (tile_bounds.h) use, which hold whatever the index width.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>

#include "frontend/ast.h"

namespace spindle {

struct PrintContext;
struct FunctionScope;
struct Symbol;

struct IndexRange {
  int64_t lo = 0, hi = 0;  // inclusive
};

// The values integer type `t` holds (a 64-bit type: all of int64_t's,
// which covers every range IndexBounds tracks); `t` must be an integer.
IndexRange integerTypeRange(ScalarType t);

class IndexBounds {
 public:
  IndexBounds(const PrintContext& ctx, const FunctionScope& fn, bool anyIndexWidth = false);
  std::optional<IndexRange> of(const Expr& e) const;
  // The value of a local assigned exactly once, or null.
  const Expr* definitionOf(const Symbol& local) const;

 private:
  std::optional<IndexRange> ofOneWidth(const Expr& e) const;
  std::optional<IndexRange> ofName(const Symbol& s) const;
  std::optional<IndexRange> ofCall(const CallExpr& c) const;
  std::optional<IndexRange> ofBinary(const BinaryExpr& b) const;
  std::optional<IndexRange> ofLoopVar(const ForStmt& loop) const;
  std::optional<IndexRange> gridAxis(int axis) const;
  std::optional<IndexRange> warpOfThread(const BinaryExpr& b) const;
  std::optional<IndexRange> reversedBlock(const BinaryExpr& b) const;
  bool isDimProductOfOneTensor(const Expr& e) const;
  int64_t dimMax(const Symbol& dim) const;
  void collect(const Block& body);

  const PrintContext& ctx_;
  bool active_ = false;                               // 32-bit indices, or anyIndexWidth
  int64_t dimLimit_ = 0;                              // the largest a dim may be
  std::map<const Symbol*, const Expr*> definitions_;  // locals assigned exactly once
  std::set<const Symbol*> reassigned_;
  std::map<const Symbol*, const ForStmt*> loops_;
  mutable std::set<const Symbol*> visiting_;  // a local's definition being bounded (no cycles)
  mutable int width_ = 0;                     // the warp width being bounded (of): 32 or 64
};

}  // namespace spindle
