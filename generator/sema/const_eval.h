// Compile-time (and launch-time) evaluation of integer and float expressions:
// consts, @block, static_range bounds, scratch sizes, and @grid at launch.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "frontend/ast.h"
#include "sema/sema.h"

namespace spindle {

// Looks a name up; nullopt when the name has no compile-time value here.
using ConstLookup = std::function<std::optional<ConstValue>(const NameExpr&)>;

// Resolved names of module consts only (dims and locals have no value).
ConstLookup constsOnly();
// Consts, and the dim symbols that `dims` gives a value (static dims at
// generation, every dim at launch). `dims` must outlive the lookup.
ConstLookup constsAndDims(const std::map<std::string, int64_t>& dims);

// The value of `resident_blocks()` in a @grid expression: how many blocks of
// the compiled kernel the device holds at once. Only a launch on a device
// knows it, so it is a callback; an empty one makes the call fail.
using ResidentBlocksValue = std::function<int64_t()>;

struct ConstEvalFailure {
  const Expr* where = nullptr;  // the sub-expression that could not be evaluated
  std::string reason;
};

// Evaluates `expr`; on failure returns nullopt and, if `failure` is given,
// says which sub-expression and why (a name with no value, division by zero,
// an operator or call that is not allowed in a constant).
std::optional<ConstValue> evaluateConst(const Expr& expr, const ConstLookup& lookup,
                                        ConstEvalFailure* failure = nullptr,
                                        const ResidentBlocksValue& residentBlocks = {});

}  // namespace spindle
