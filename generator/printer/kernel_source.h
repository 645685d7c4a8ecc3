// Prints one specialized, self-contained HIP source: the file header, the
// prelude it needs, static dims, the host launcher, consts, outlined
// functions and the kernel. It only prints: the driver (generate.cpp) has
// checked the specialization, typed the kernel and run the passes.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "../launch_geometry.h"
#include "../passes/comment_placement.h"
#include "../passes/local_declarations.h"
#include "sema/sema.h"
#include "spindle/generator.h"

namespace spindle {

// What the driver decided for one specialization.
struct KernelPrintPlan {
  FunctionScope& kernel;
  BlockPlan block;                        // @block as far as generation knows it
  std::vector<FunctionScope*> functions;  // defs and closures it reaches, callees first
  // Per function printed (the kernel and `functions`): where each local is
  // declared, and where the author's comments go.
  std::map<const FunctionScope*, LocalDeclarationPlan> locals;
  std::map<const FunctionScope*, CommentPlacement> comments;
};

GeneratedKernel printKernelSource(SemaModule& sema, const Specialization& spec, const KernelPrintPlan& plan);

}  // namespace spindle
