// verify-kernel-extern-c: every __global__ function is extern "C".
//
// Why: the runtime finds a kernel in the compiled code object by name
// (hipModuleGetFunction / cuModuleGetFunction with GeneratedKernel::
// kernelSymbol). A C++-mangled name would not be found, and the mangling
// differs between compilers, so the ABI the header comment promises only
// holds with C linkage.
#include "check.h"

namespace spindle::verify {
namespace {

using namespace clang::ast_matchers;

class KernelExternCCheck : public Check {
 public:
  using Check::Check;
  const char* name() const override { return "kernel-extern-c"; }
  const char* description() const override { return "every __global__ function is extern \"C\""; }
  void registerMatchers(MatchFinder& finder) override {
    finder.addMatcher(functionDecl(isExpansionInMainFile(), hasAttr(clang::attr::CUDAGlobal)).bind("fn"), this);
  }
  void run(const MatchFinder::MatchResult& result) override {
    const auto* fn = result.Nodes.getNodeAs<clang::FunctionDecl>("fn");
    if (fn->isExternC()) return;
    report(
        *result.SourceManager, fn->getLocation(),
        "kernel '" + fn->getNameAsString() + "' must have C linkage (extern \"C\") so the runtime can find it by name");
  }
};

}  // namespace

std::unique_ptr<Check> makeKernelExternCCheck(Reporter& r) { return std::make_unique<KernelExternCCheck>(r); }

}  // namespace spindle::verify
