// verify-launch-bounds: every __global__ function has __launch_bounds__.
//
// Why: Spindle knows each kernel's block size at generation time (@block).
// Without __launch_bounds__ the AMD compiler must assume up to 1024 threads
// per block and budgets registers for that (on NVIDIA, maxThreadsPerBlock
// likewise bounds register use), which costs occupancy; and a launch with a
// larger block than declared fails loudly instead of running wrongly. Under
// hipcc the macro becomes amdgpu_flat_work_group_size; CUDA-style parsing
// keeps CUDALaunchBounds. Either one counts.
#include "check.h"

namespace spindle::verify {
namespace {

using namespace clang::ast_matchers;

class LaunchBoundsCheck : public Check {
 public:
  using Check::Check;
  const char* name() const override { return "launch-bounds"; }
  const char* description() const override { return "every __global__ function has __launch_bounds__"; }
  void registerMatchers(MatchFinder& finder) override {
    // Definitions only: the generator forward-declares each kernel (without
    // the attribute) for its host launcher, and the bounds that the compiler
    // uses are those on the definition.
    finder.addMatcher(
        functionDecl(isExpansionInMainFile(), isDefinition(), hasAttr(clang::attr::CUDAGlobal)).bind("fn"), this);
  }
  void run(const MatchFinder::MatchResult& result) override {
    const auto* fn = result.Nodes.getNodeAs<clang::FunctionDecl>("fn");
    if (fn->hasAttr<clang::CUDALaunchBoundsAttr>() || fn->hasAttr<clang::AMDGPUFlatWorkGroupSizeAttr>()) return;
    report(*result.SourceManager, fn->getLocation(),
           "kernel '" + fn->getNameAsString() + "' has no __launch_bounds__(<block size>)");
  }
};

}  // namespace

std::unique_ptr<Check> makeLaunchBoundsCheck(Reporter& r) { return std::make_unique<LaunchBoundsCheck>(r); }

}  // namespace spindle::verify
