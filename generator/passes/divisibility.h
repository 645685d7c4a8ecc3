// Divisibility analysis: the largest power of two known to divide an
// integer expression's value, from what one specialization knows (literals,
// consts, static dims, the granularity of dynamic dims, row strides and dim
// expressions from --divisible, multiple_of promises, loop variables and
// locals whose every assignment is known). The generator emits a run of a
// tensor as one vector access only where this proves the run's first
// element sits on a word boundary (vector_runs.cpp), so every rule must be
// sound: an unknown value divides by 1, never more.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "sema/sema.h"
#include "spindle/specialization.h"

namespace spindle {

class Divisibility {
 public:
  // The divisor of 0: every power of two we care about divides it.
  static constexpr int64_t kZero = int64_t(1) << 30;

  // For the expressions of `fn` (its locals and loop variables are read from
  // its body) under `spec`.
  Divisibility(const FunctionScope& fn, const Specialization& spec);

  // A power of two dividing every value `e` takes (1 when nothing is known;
  // kZero at most). Non-integer expressions give 1.
  int64_t of(const Expr& e) const;
  // Of the value of `tensor`'s dim at `axis`, and of its stride along
  // `axis` in elements as the kernel addresses it (a contiguous tensor: the
  // product of the dims after it; a unit-stride one: its run-time stride).
  int64_t dimOf(const Symbol& tensor, size_t axis) const;
  int64_t strideOf(const Symbol& tensor, size_t axis) const;

  // A compile-time integer value of `e` (literals, consts, static dims and
  // arithmetic on them), or false.
  bool constantValue(const Expr& e, int64_t& out) const;

 private:
  int64_t symbolOf(const Symbol& s) const;
  void solveLocals();

  const FunctionScope& fn_;
  const Specialization& spec_;
  // Every value assigned to each local (and, for loop variables, the loop
  // that binds them); a null entry is an assignment the rules do not follow.
  std::map<const Symbol*, std::vector<const Expr*>> assigned_;
  std::map<const Symbol*, const ForStmt*> loops_;
  std::map<const Symbol*, int64_t> solved_;  // locals and loop variables
};

// The largest power of two dividing `v` (kZero for 0), capped at kZero.
int64_t powerOfTwoDivisor(int64_t v);

}  // namespace spindle
