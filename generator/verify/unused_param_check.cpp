// verify-unused-param: every parameter of an outlined closure (a __device__
// function that is not a __spn_* prelude helper) is used.
//
// Why: docs/language.md (section 10) says a closure's parameters are *exactly* what
// it captures. An unused parameter means the capture analysis over-approximated
// (it threaded a name through that nobody reads), which costs registers and
// makes the signature lie to the reader. Kernels are not checked: their ABI
// passes every dynamic dim even when only @grid uses it. A parameter the
// generator deliberately keeps may be marked [[maybe_unused]].
#include "check.h"

namespace spindle::verify {
namespace {

using namespace clang::ast_matchers;

class UnusedParamCheck : public Check {
 public:
  using Check::Check;
  const char* name() const override { return "unused-param"; }
  const char* description() const override { return "every parameter of a non-prelude __device__ function is used"; }
  void registerMatchers(MatchFinder& finder) override {
    finder.addMatcher(
        functionDecl(isExpansionInMainFile(), isDefinition(), hasAttr(clang::attr::CUDADevice),
                     unless(hasAttr(clang::attr::CUDAGlobal)), unless(isImplicit()), unless(isTemplateInstantiation()))
            .bind("fn"),
        this);
  }
  void run(const MatchFinder::MatchResult& result) override {
    const auto* fn = result.Nodes.getNodeAs<clang::FunctionDecl>("fn");
    if (isPreludeHelper(fn) || llvm::isa<clang::CXXMethodDecl>(fn)) return;
    for (const clang::ParmVarDecl* p : fn->parameters()) {
      if (!p->getIdentifier() || p->isReferenced() || p->hasAttr<clang::UnusedAttr>()) continue;
      report(*result.SourceManager, p->getLocation(),
             "parameter '" + p->getNameAsString() + "' of device function '" + fn->getNameAsString() +
                 "' is never used; a closure's parameters must be exactly what it captures");
    }
  }
};

}  // namespace

std::unique_ptr<Check> makeUnusedParamCheck(Reporter& r) { return std::make_unique<UnusedParamCheck>(r); }

}  // namespace spindle::verify
