// Where each local variable is declared in the generated C++.
//
// Spindle locals are function-scoped, as in Python; C++ locals are
// block-scoped. A local is declared in the innermost block that contains
// every use of it (its own reads and writes, and every call of a closure
// that captures it), just before the first statement there that uses it. If
// that statement is the local's first assignment, the declaration and the
// assignment are one line (`float m = -inf;`); otherwise a bare declaration
// (`float m;`) precedes it.
#pragma once

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "sema/sema.h"

namespace spindle {

struct LocalDeclarationPlan {
  std::map<const Stmt*, std::vector<Symbol*>> declareBefore;  // bare declarations
  std::set<const AssignStmt*> declaringAssignments;           // `T x = v;`
  // An unpacking's targets that it declares (`float m = r.m;`), by statement.
  std::set<std::pair<const AssignStmt*, const Symbol*>> declaringUnpackTargets;
};

// Captures must already be analyzed (passes/capture_analysis.h).
LocalDeclarationPlan planLocalDeclarations(const FunctionScope& fn, const Block& body);

}  // namespace spindle
