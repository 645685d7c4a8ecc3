// verify-shadow: no local variable shadows a parameter, an outer local, or a
// variable declared at namespace scope in the file.
//
// Why: the generated HIP keeps the kernel author's names (docs/language.md section
// 7), and Spindle scopes are not C++ scopes: a name that is one variable in
// the .spn source must be one C++ variable, and two different variables must
// get different names (the name supply adds a suffix). A shadowing
// declaration means the printer re-declared a variable it should have
// assigned, or reused a name in a nested block, and reads then silently pick
// the wrong one. Clang's -Wshadow is close, but it is not on by default and it
// mixes in fields and lambdas; this check is exactly the rule above.
#include <clang/AST/RecursiveASTVisitor.h>

#include <functional>
#include <map>

#include "check.h"

namespace spindle::verify {
namespace {

using namespace clang::ast_matchers;

// Walks one function body keeping a stack of block scopes.
class ScopeWalker : public clang::RecursiveASTVisitor<ScopeWalker> {
 public:
  using Report = std::function<void(const clang::VarDecl* inner, const clang::NamedDecl* outer)>;
  ScopeWalker(const std::map<std::string, const clang::NamedDecl*>& globals, Report report)
      : report_(std::move(report)) {
    scopes_.emplace_back(globals);
  }

  void walk(const clang::FunctionDecl* fn) {
    scopes_.emplace_back();
    for (const clang::ParmVarDecl* p : fn->parameters()) declare(p);
    TraverseStmt(fn->getBody());
    scopes_.pop_back();
  }

  bool TraverseStmt(clang::Stmt* s) {
    if (!s) return true;
    bool opens = llvm::isa<clang::CompoundStmt, clang::ForStmt, clang::IfStmt, clang::WhileStmt, clang::SwitchStmt,
                           clang::CXXForRangeStmt, clang::CXXCatchStmt>(s);
    if (opens) scopes_.emplace_back();
    bool ok = RecursiveASTVisitor::TraverseStmt(s);
    if (opens) scopes_.pop_back();
    return ok;
  }

  bool VisitVarDecl(clang::VarDecl* var) {
    if (llvm::isa<clang::ParmVarDecl>(var)) {  // a lambda's parameters
      declare(var);
      return true;
    }
    if (!var->isLocalVarDecl()) return true;
    declare(var);
    return true;
  }

 private:
  void declare(const clang::VarDecl* var) {
    if (!var->getIdentifier()) return;
    std::string name = var->getName().str();
    // Search enclosing scopes (not the current one: a redeclaration there is
    // a compile error already).
    for (size_t i = scopes_.size() - 1; i-- > 0;) {
      auto it = scopes_[i].find(name);
      if (it != scopes_[i].end()) {
        report_(var, it->second);
        break;
      }
    }
    scopes_.back()[name] = var;
  }

  std::vector<std::map<std::string, const clang::NamedDecl*>> scopes_;
  Report report_;
};

class ShadowCheck : public Check {
 public:
  using Check::Check;
  const char* name() const override { return "shadow"; }
  const char* description() const override {
    return "no local variable shadows a parameter, an outer local or a file-scope variable";
  }
  void registerMatchers(MatchFinder& finder) override { finder.addMatcher(translationUnitDecl().bind("tu"), this); }
  void run(const MatchFinder::MatchResult& result) override {
    const auto* tu = result.Nodes.getNodeAs<clang::TranslationUnitDecl>("tu");
    const clang::SourceManager& sm = *result.SourceManager;
    std::map<std::string, const clang::NamedDecl*> globals;
    std::vector<const clang::FunctionDecl*> functions;
    collect(tu, sm, globals, functions);
    for (const clang::FunctionDecl* fn : functions) {
      ScopeWalker walker(globals, [&](const clang::VarDecl* inner, const clang::NamedDecl* outer) {
        const char* what = llvm::isa<clang::ParmVarDecl>(outer)                  ? "parameter"
                           : llvm::cast<clang::VarDecl>(outer)->isLocalVarDecl() ? "local variable"
                                                                                 : "file-scope variable";
        std::string at =
            " declared on line " + std::to_string(sm.getSpellingLineNumber(sm.getFileLoc(outer->getLocation())));
        report(sm, inner->getLocation(),
               "'" + inner->getNameAsString() + "' in function '" + fn->getNameAsString() + "' shadows " + what + at);
      });
      walker.walk(fn);
    }
  }

 private:
  // Function definitions and variables written in the main file, at any
  // namespace depth (the prelude may open a namespace).
  void collect(const clang::DeclContext* dc, const clang::SourceManager& sm,
               std::map<std::string, const clang::NamedDecl*>& globals,
               std::vector<const clang::FunctionDecl*>& functions) {
    for (const clang::Decl* d : dc->decls()) {
      if (!sm.isInMainFile(sm.getExpansionLoc(d->getLocation()))) continue;
      if (const auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(d)) {
        collect(ns, sm, globals, functions);
      } else if (const auto* ls = llvm::dyn_cast<clang::LinkageSpecDecl>(d)) {
        collect(ls, sm, globals, functions);
      } else if (const auto* tmpl = llvm::dyn_cast<clang::FunctionTemplateDecl>(d)) {
        if (tmpl->getTemplatedDecl()->doesThisDeclarationHaveABody()) functions.push_back(tmpl->getTemplatedDecl());
      } else if (const auto* fn = llvm::dyn_cast<clang::FunctionDecl>(d)) {
        if (fn->doesThisDeclarationHaveABody()) functions.push_back(fn);
      } else if (const auto* var = llvm::dyn_cast<clang::VarDecl>(d)) {
        if (var->getIdentifier() && !globals.count(var->getName().str())) globals[var->getName().str()] = var;
      }
    }
  }
};

}  // namespace

std::unique_ptr<Check> makeShadowCheck(Reporter& r) { return std::make_unique<ShadowCheck>(r); }

}  // namespace spindle::verify
