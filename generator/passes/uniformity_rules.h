// What each builtin needs of the control flow that reaches it, and how
// uniform its result is: the one table of the divergent-barrier analysis
// (passes/uniformity_analysis.h). A new barrier or collective is one case
// here, in convergenceNeed and builtinResult.
#pragma once

#include <optional>
#include <vector>

#include "passes/uniformity_lattice.h"
#include "sema/builtins.h"

namespace spindle {

// Which threads must reach a builtin together.
enum class ConvergenceNeed {
  None,       // any thread may call it alone
  Warp,       // every lane of the warp (warp collectives, shuffles, sync_warp)
  WarpGroup,  // every thread of the aligned group of 4 warps (dot: one wgmma a group)
  Block,      // every thread of the block (sync(), block collectives)
};
ConvergenceNeed convergenceNeed(const BuiltinInfo& b);

// The block's extents as far as the module knows them, per warp width
// (@block may use warp_size()): axes is how many @block gives (0: unknown,
// e.g. a def checked on its own), an extent is empty when only a launch or
// a specialization knows it.
struct BlockShape {
  int axes = 0;
  std::optional<int64_t> extent[3][2];
};

// The fact of a builtin's result from its arguments' facts, in order; for
// thread_id() and friends `axis` is the constant axis (0 when not given).
ValueFact builtinResult(const BuiltinInfo& b, const std::vector<ValueFact>& args, int axis, const BlockShape& shape);

}  // namespace spindle
