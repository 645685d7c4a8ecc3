// Specialize-and-prune: an `if` (or `elif`) whose condition is a
// compile-time constant in this specialization, made of consts, static dims,
// type tests and literals (`if N > 1024:`, `if T == bf16:`), is replaced by the
// branch it takes. The other branch is neither typed, analyzed nor printed,
// so it may use what this specialization lacks; its comments go with it.
//
// Reads: one function body (nested closure bodies included), the static dims.
// Changes: that body, in place: it runs on the driver's private copy of the
// module (generate.cpp). Produces: the source lines of what it removed, for
// comment placement, and the closures whose definitions it removed.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "frontend/ast.h"
#include "frontend/source.h"

namespace spindle {

struct PrunedCode {
  // Inclusive line ranges of removed code: a dead branch and its
  // `if`/`elif`/`else` line. Comments there are dropped.
  std::vector<std::pair<uint32_t, uint32_t>> lines;
  // The line of a removed `if` one of whose branches stays, and that
  // branch's first statement: a comment before the `if` goes before it (a
  // comment before an `if` removed whole goes with it).
  std::map<uint32_t, const Stmt*> headerTakenBy;
  std::set<const FunctionDecl*> removedDefs;  // closures defined in dead branches

  bool removesLine(uint32_t line) const;
};

// `file` is the module's text (to find `else:` lines); prunes `body` and the
// blocks nested in it, closure bodies included. `typeArgs` (the kernel's
// bound type parameters; null for a module def) decides type tests
// (`if T == bf16:`).
// `keepAsserts` false (not a checked build) removes every `assert`, as dead
// code: its condition is neither analyzed nor printed.
void pruneConstantBranches(const SourceFile& file, Block& body, const std::map<std::string, int64_t>& staticDims,
                           const std::map<std::string, ScalarType>* typeArgs, bool keepAsserts, PrunedCode& pruned);

}  // namespace spindle
