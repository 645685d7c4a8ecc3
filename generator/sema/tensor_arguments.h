// Tensors passed to defs and closures (docs/language.md 3.3): a def's tensor
// parameter is a view of the caller's tensor, and its dims are bound from the
// argument at each call, like a template's arguments.
#pragma once

#include <functional>
#include <set>
#include <vector>

#include "sema/sema.h"

namespace spindle {

// Where the value of each of a def's dim symbols comes from at a call: the
// first parameter and axis that names it, in the def's dim order.
struct DimSource {
  Symbol* dim;
  int param;  // index into the callee's params
  int axis;
};
std::vector<DimSource> dimSources(const FunctionScope& callee);

// The tensor or scratch buffer an argument names, or null when the argument
// is not a bare name of one.
Symbol* tensorArgument(const Expr& arg);

// Calls `onCall` on every call of a def or closure in f's own body (not in
// the bodies of closures nested in it).
void forEachUserCall(const FunctionScope& f, const std::function<void(const CallExpr&)>& onCall);

// A def that stores into its tensor parameter stores into the argument; one
// that indexes it in runs indexes the argument in runs. Copies both facts from
// parameters to the arguments of every call, through chains of calls, so a
// kernel's tensors know what their callees do (const pointers, alignment
// specialization).
// `removed`: functions whose bodies a specialization pruned away (their
// declarations are gone), skipped.
void propagateTensorArgumentFacts(SemaModule& sema, const std::set<const FunctionDecl*>* removed = nullptr);

}  // namespace spindle
