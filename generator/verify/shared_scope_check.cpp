// verify-shared-scope: __shared__ variables are declared only in the body of
// a __global__ function.
//
// Why: Spindle allows `shared(...)` only at a kernel's top level, and the
// generator allocates collective scratch in the kernel too, passing it to
// outlined closures and prelude helpers by pointer. A __shared__ declared in
// a __device__ function is one allocation per block that every caller
// silently shares (two closures would alias each other's scratch), and its
// size is invisible to the launcher's shared-memory accounting; at namespace
// scope it is the same problem for every kernel in the file.
#include "check.h"

namespace spindle::verify {
namespace {

using namespace clang::ast_matchers;

class SharedScopeCheck : public Check {
 public:
  using Check::Check;
  const char* name() const override { return "shared-scope"; }
  const char* description() const override {
    return "__shared__ variables are declared only inside __global__ function bodies";
  }
  void registerMatchers(MatchFinder& finder) override {
    finder.addMatcher(varDecl(isExpansionInMainFile(), hasAttr(clang::attr::CUDAShared)).bind("var"), this);
  }
  void run(const MatchFinder::MatchResult& result) override {
    const auto* var = result.Nodes.getNodeAs<clang::VarDecl>("var");
    // The lexical context: `extern __shared__ float buf[];` (dynamic shared
    // memory) written in a kernel belongs semantically to the namespace.
    const clang::FunctionDecl* fn = nullptr;
    for (const clang::DeclContext* dc = var->getLexicalDeclContext(); dc; dc = dc->getLexicalParent()) {
      if ((fn = llvm::dyn_cast<clang::FunctionDecl>(dc))) break;
      if (dc->isFileContext()) break;
    }
    if (fn && isKernel(fn)) return;
    std::string where = fn ? "in function '" + fn->getNameAsString() + "', which is not a __global__ kernel"
                           : std::string("at namespace scope");
    report(*result.SourceManager, var->getLocation(),
           "__shared__ variable '" + var->getNameAsString() + "' declared " + where +
               "; declare it in the kernel body and pass it by pointer");
  }
};

}  // namespace

std::unique_ptr<Check> makeSharedScopeCheck(Reporter& r) { return std::make_unique<SharedScopeCheck>(r); }

}  // namespace spindle::verify
