// Compile-time (and launch-time) evaluation of integer and float expressions:
// consts, @block, static_range bounds, scratch sizes, and @grid at launch.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "frontend/ast.h"
#include "sema/builtins.h"
#include "sema/sema.h"

namespace spindle {

// Looks a name up; nullopt when the name has no compile-time value here.
using ConstLookup = std::function<std::optional<ConstValue>(const NameExpr&)>;

struct EvalFacts;

// Resolved names of module consts only (dims and locals have no value).
ConstLookup constsOnly();
// Consts, and the dim symbols that `dims` gives a value (static dims at
// generation, every dim at launch). `dims` must outlive the lookup. A const
// computed per specialization is computed from its expression with these
// dims and `facts` (sizeof(T), warp_size()), which must outlive it too.
ConstLookup constsAndDims(const std::map<std::string, int64_t>& dims, const EvalFacts* facts = nullptr);
// For @grid and @block at launch: consts, and the dims and integer scalar
// parameters that `values` names (sema resolves launch expressions to the
// kernel's own, so no def's parameter is ever looked up here).
ConstLookup launchValues(const std::map<std::string, int64_t>& values, const EvalFacts* facts = nullptr);

// The value of `resident_blocks()` in a @grid expression: how many blocks of
// the compiled kernel the device holds at once. Only a launch on a device
// knows it, so it is a callback; an empty one makes the call fail.
using ResidentBlocksValue = std::function<int64_t()>;

// What an evaluation may know beyond names: at launch, the values of
// resident_blocks() and warp_size(); at specialization, the bound type
// parameters (`typeArgs`), which give sizeof(T) its value. Empty, zero or
// null makes those calls fail (the generated file is target-neutral).
struct EvalFacts {
  ResidentBlocksValue residentBlocks;
  int64_t warpSize = 0;
  const std::map<std::string, ScalarType>* typeArgs = nullptr;
  // The optional tensors a launch leaves absent, for `x is None` where the
  // module's symbols do not say (a launch's geometry is computed on the
  // module as loaded, not on a specialized copy: a body const that sizes
  // shared memory by which operand is present, samples/gemm_ex.spn).
  const std::set<std::string>* absentTensors = nullptr;
};

struct ConstEvalFailure {
  const Expr* where = nullptr;  // the sub-expression that could not be evaluated
  std::string reason;
};

// `expr` evaluated once per warp width a target may have (32 on NVIDIA, 64
// on AMD), with the consts and `dims` (constsAndDims) and the bound types:
// what uses warp_size(), directly or through a body const, has a value for
// each. Known when both are.
struct PerWarpWidth {
  std::optional<ConstValue> wave32, wave64;
  ConstEvalFailure failure32, failure64;
  bool known() const { return wave32 && wave64; }
};
PerWarpWidth evaluateForWarpWidths(const Expr& expr, const std::map<std::string, int64_t>& dims,
                                   const std::map<std::string, ScalarType>* typeArgs,
                                   const std::set<std::string>* absentTensors = nullptr);

// max_value / min_value / min_normal of `t`; nullopt for bool, and for
// min_normal of an integer.
std::optional<ConstValue> typeLimit(BuiltinId id, ScalarType t);

// `T == bf16`, `T in (f16, bf16)` under `typeArgs`; nullopt when T is not
// bound there (or the test did not resolve).
std::optional<bool> evaluateTypeTest(const TypeTestExpr& test, const std::map<std::string, ScalarType>* typeArgs);
// Whether `e` holds a type test: a condition the binding of types decides.
bool containsTypeTest(const Expr& e);

// Evaluates `expr`; on failure returns nullopt and, if `failure` is given,
// says which sub-expression and why (a name with no value, division by zero,
// an operator or call that is not allowed in a constant).
std::optional<ConstValue> evaluateConst(const Expr& expr, const ConstLookup& lookup,
                                        ConstEvalFailure* failure = nullptr, const EvalFacts& facts = {});

}  // namespace spindle
