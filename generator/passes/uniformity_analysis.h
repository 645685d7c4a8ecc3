// Divergent barriers (docs/language.md 8.9): sync() and the block
// collectives must be reached by every thread of the block, the warp
// collectives, shuffles and sync_warp() by every lane of the warp. This pass
// finds the ones reached under control flow that depends on the thread.
//
// Reads: the resolved module (names bound; types are not needed), once at
// check time. Each kernel is walked from its body with its @block shape,
// following every call into defs and closures at the call (as if inlined:
// parameters take the arguments' facts, closures read and write the
// caller's variables); module defs no kernel calls are walked on their own,
// with an unknown block shape. A value's fact (passes/uniformity_lattice.h)
// comes from its sources (thread_id(), lane_id(), loads at thread-dependent
// addresses, ...) and from the control flow it was assigned under; loops
// are iterated to a fixpoint.
//
// Produces: sema-divergent-barrier and sema-divergent-warp-op, at the
// barrier (or at the call that reaches it from divergent code), with a note
// at the condition that makes the path thread-dependent.
#pragma once

#include "frontend/diagnostics.h"
#include "sema/sema.h"

namespace spindle {

void checkUniformControlFlow(const SemaModule& sema, DiagnosticEngine& diags);

}  // namespace spindle
