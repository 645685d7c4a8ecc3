// The range an integer launch expression can take when only some of its
// names have values: what @block's upper bound (its __launch_bounds__) is
// when the block follows a dynamic dim or a scalar, `@block(min(D, 1024))`.
#pragma once

#include <cstdint>
#include <optional>

#include "sema/const_eval.h"

namespace spindle {

struct ValueRange {
  int64_t lo = 0, hi = 0;  // inclusive; kUnbounded and -kUnbounded stand for "no bound"
  static constexpr int64_t kUnbounded = int64_t(1) << 62;
  bool boundedAbove() const { return hi < kUnbounded; }
};

// Names `known` gives a value are exact; other dim symbols are in [1, 2^62]
// (the runtime's largest dim), integer scalar parameters in their type's
// range, warp_size() in [32, 64]. Arithmetic saturates at kUnbounded.
// nullopt for what a launch expression cannot hold (floats, elements).
std::optional<ValueRange> valueRange(const Expr& e, const ConstLookup& known);

}  // namespace spindle
