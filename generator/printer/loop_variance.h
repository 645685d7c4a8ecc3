// What changes from one trip of a range loop to the next: the loop's
// variable and the locals its body computes from it without loading
// anything (`kb = k0 + c`, `j += 8`). flatIndex (expr_printer.cpp) prints
// the part of a run's address that such a value scales by a run-time stride
// in a term of its own (docs/performance.md, "Run addresses in loops").
#pragma once

#include <set>

#include "frontend/ast.h"

namespace spindle {

struct Symbol;

// The loop's variable and the locals that step with it, as above. A local
// assigned a value that loads an element or calls a function is left out:
// its value does not move by a fixed amount per trip.
std::set<const Symbol*> stepsWithLoop(const ForStmt& loop);

// Whether `e` reads any of `symbols` and loads nothing (no element, call of
// a def, atomic or collective): an index that moves by a fixed amount per
// trip when `symbols` are stepsWithLoop's.
bool stepsWith(const Expr& e, const std::set<const Symbol*>& symbols);

}  // namespace spindle
