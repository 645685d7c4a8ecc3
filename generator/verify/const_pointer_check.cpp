// verify-const-pointer: a kernel's pointer parameter that is never written
// through is declared pointer-to-const.
//
// Why: docs/language.md (section 10) promises `const` on every tensor the kernel
// never writes. It documents the ABI (inputs vs outputs) for hand-written
// hiprtc callers, and together with __restrict__ it lets the compiler use
// read-only / scalar loads and reorder freely. The generator derives it from
// sema's write analysis; this check recomputes it from the emitted C++ so a
// disagreement (a missed const, or a write sema did not see) is caught.
//
// "Written through" means: an assignment, compound assignment or ++/-- whose
// target is based on the pointer (p[i], *p, *(p + i), p->f, or a local
// pointer initialized from p), or passing a pointer based on it to a callee
// that writes through that parameter (followed into device functions defined
// in the file, recursively), or to a function without a body in the file
// (atomicAdd and friends) whose parameter is pointer- or reference-to-non-const.
#include <clang/AST/ASTContext.h>
#include <clang/AST/RecursiveASTVisitor.h>

#include <set>

#include "check.h"

namespace spindle::verify {
namespace {

using namespace clang::ast_matchers;

bool pointsToConst(clang::QualType t) {
  if (const auto* pt = t->getAs<clang::PointerType>()) return pt->getPointeeType().isConstQualified();
  if (const auto* rt = t->getAs<clang::ReferenceType>()) return rt->getPointeeType().isConstQualified();
  return true;  // not a pointer: nothing to write through
}

// The variable an address expression is based on: `p`, `p + i`, `&p[i]`,
// `(float*)p`, `p[i]` (as an lvalue), `*p`, `p->f`.
const clang::VarDecl* baseVar(const clang::Expr* e) {
  while (e) {
    e = e->IgnoreParenCasts();
    if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e)) return llvm::dyn_cast<clang::VarDecl>(ref->getDecl());
    if (const auto* sub = llvm::dyn_cast<clang::ArraySubscriptExpr>(e)) {
      e = sub->getBase();
    } else if (const auto* un = llvm::dyn_cast<clang::UnaryOperator>(e)) {
      if (un->getOpcode() != clang::UO_Deref && un->getOpcode() != clang::UO_AddrOf) return nullptr;
      e = un->getSubExpr();
    } else if (const auto* bin = llvm::dyn_cast<clang::BinaryOperator>(e)) {
      if (!bin->getType()->isPointerType() && !bin->getType()->isReferenceType() && !bin->isLValue()) return nullptr;
      if (!bin->isAdditiveOp() && !bin->isAssignmentOp() && !bin->isCommaOp()) return nullptr;
      if (bin->isCommaOp() || bin->isAssignmentOp()) e = bin->getRHS();
      else e = bin->getLHS()->getType()->isPointerType() ? bin->getLHS() : bin->getRHS();
    } else if (const auto* mem = llvm::dyn_cast<clang::MemberExpr>(e)) {
      e = mem->getBase();
    } else if (const auto* cond = llvm::dyn_cast<clang::ConditionalOperator>(e)) {
      // Either arm may be the pointer; take the first one that has a base.
      if (const clang::VarDecl* v = baseVar(cond->getTrueExpr())) return v;
      e = cond->getFalseExpr();
    } else {
      return nullptr;
    }
  }
  return nullptr;
}

// Does `fn` write through parameter `param`? Memoized per (function, param)
// and cycle-safe (a cycle counts as "no write found on this path").
class WriteFinder {
 public:
  bool writesThrough(const clang::FunctionDecl* fn, const clang::ParmVarDecl* param) {
    auto key = std::make_pair(fn, param);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    memo_[key] = false;  // in progress
    bool result = scan(fn, param);
    memo_[key] = result;
    return result;
  }

 private:
  struct BodyScan : clang::RecursiveASTVisitor<BodyScan> {
    WriteFinder& finder;
    std::set<const clang::VarDecl*>& aliases;
    bool* changed;  // alias pass: set when a new alias is found
    bool found = false;
    BodyScan(WriteFinder& f, std::set<const clang::VarDecl*>& a, bool* c) : finder(f), aliases(a), changed(c) {}

    bool based(const clang::Expr* e) {
      const clang::VarDecl* v = baseVar(e);
      return v && aliases.count(v);
    }
    // Alias pass: `T* q = p + i;` or `q = p;` for a local pointer q.
    bool VisitVarDecl(clang::VarDecl* v) {
      if (changed && v->hasInit() && (v->getType()->isPointerType() || v->getType()->isReferenceType()) &&
          !pointsToConst(v->getType()) && based(v->getInit()) && aliases.insert(v).second)
        *changed = true;
      return true;
    }
    bool VisitBinaryOperator(clang::BinaryOperator* op) {
      if (!op->isAssignmentOp()) return true;
      const clang::Expr* lhs = op->getLHS()->IgnoreParenImpCasts();
      if (changed) {
        if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(lhs))
          if (const auto* v = llvm::dyn_cast<clang::VarDecl>(ref->getDecl()))
            if (v->getType()->isPointerType() && !pointsToConst(v->getType()) && based(op->getRHS()) &&
                aliases.insert(v).second)
              *changed = true;
        return true;
      }
      // Assigning to the pointer variable itself is not a write through it.
      if (llvm::isa<clang::DeclRefExpr>(lhs) && !lhs->getType()->isReferenceType() &&
          !llvm::cast<clang::DeclRefExpr>(lhs)->getDecl()->getType()->isReferenceType())
        return true;
      if (based(lhs)) found = true;
      return true;
    }
    bool VisitUnaryOperator(clang::UnaryOperator* op) {
      if (changed || !op->isIncrementDecrementOp()) return true;
      const clang::Expr* sub = op->getSubExpr()->IgnoreParenImpCasts();
      if (llvm::isa<clang::DeclRefExpr>(sub) &&
          !llvm::cast<clang::DeclRefExpr>(sub)->getDecl()->getType()->isReferenceType())
        return true;  // p++ moves the pointer
      if (based(sub)) found = true;
      return true;
    }
    // __hip_atomic_fetch_add(p, ...) and the __atomic_* builtins inside
    // atomicAdd and friends are AtomicExprs, not calls. Only loads leave
    // the memory alone.
    bool VisitAtomicExpr(clang::AtomicExpr* atomic) {
      if (changed) return true;
      switch (atomic->getOp()) {
        case clang::AtomicExpr::AO__atomic_load:
        case clang::AtomicExpr::AO__atomic_load_n:
        case clang::AtomicExpr::AO__c11_atomic_load:
        case clang::AtomicExpr::AO__hip_atomic_load:
        case clang::AtomicExpr::AO__opencl_atomic_load: return true;
        default: break;
      }
      if (based(atomic->getPtr())) found = true;
      return true;
    }
    bool VisitCallExpr(clang::CallExpr* call) {
      if (changed) return true;
      const clang::FunctionDecl* callee = call->getDirectCallee();
      // Element types with operators (__half, bf16 structs): `y[i] = v` is a
      // call of a non-const member operator= on the element, and arg 0 is the
      // implicit object, not the first parameter.
      unsigned firstArg = 0;
      if (llvm::isa<clang::CXXOperatorCallExpr>(call)) {
        if (const auto* method = llvm::dyn_cast_or_null<clang::CXXMethodDecl>(callee); method && !method->isStatic()) {
          if (!method->isConst() && call->getNumArgs() > 0 && based(call->getArg(0))) found = true;
          firstArg = 1;
        }
      } else if (const auto* member = llvm::dyn_cast<clang::CXXMemberCallExpr>(call)) {
        const clang::CXXMethodDecl* method = member->getMethodDecl();
        if (method && !method->isConst() && based(member->getImplicitObjectArgument())) found = true;
      }
      for (unsigned argIndex = firstArg; argIndex < call->getNumArgs(); ++argIndex) {
        const clang::Expr* arg = call->getArg(argIndex);
        const unsigned i = argIndex - firstArg;  // the parameter it binds to
        if (!based(arg)) continue;
        if (!callee) {  // through a function pointer: assume the worst
          found = true;
          continue;
        }
        const clang::FunctionDecl* def = nullptr;
        if (i < callee->getNumParams() && callee->hasBody(def) && def) {
          clang::QualType t = def->getParamDecl(i)->getType();
          if (!t->isPointerType() && !t->isReferenceType()) continue;  // passed by value
          if (pointsToConst(t)) continue;
          if (finder.writesThrough(def, def->getParamDecl(i))) found = true;
          continue;
        }
        // No body here: atomicAdd's builtins (__hip_atomic_fetch_add, whose
        // custom type checking declares no parameters), extern functions,
        // variadic tails. Trust the types: a non-const pointer or reference
        // handed over may be written through.
        clang::QualType t =
            i < callee->getNumParams() ? callee->getParamDecl(i)->getType() : arg->IgnoreParenImpCasts()->getType();
        if (t->isReferenceType()) {
          if (!pointsToConst(t)) found = true;
        } else if (t->isPointerType() && !pointsToConst(t)) {
          found = true;
        } else if (i >= callee->getNumParams() && arg->isLValue() && !arg->getType().isConstQualified() &&
                   callee->getBuiltinID() != 0) {
          found = true;  // a builtin taking an lvalue it may modify
        }
      }
      return true;
    }
  };

  bool scan(const clang::FunctionDecl* fn, const clang::ParmVarDecl* param) {
    clang::Stmt* body = fn->getBody();
    if (!body) return true;
    std::set<const clang::VarDecl*> aliases{param};
    for (bool changed = true; changed;) {
      changed = false;
      BodyScan pass(*this, aliases, &changed);
      pass.TraverseStmt(body);
    }
    BodyScan writes(*this, aliases, nullptr);
    writes.TraverseStmt(body);
    return writes.found;
  }

  std::map<std::pair<const clang::FunctionDecl*, const clang::ParmVarDecl*>, bool> memo_;
};

class ConstPointerCheck : public Check {
 public:
  using Check::Check;
  const char* name() const override { return "const-pointer"; }
  const char* description() const override {
    return "kernel pointer parameters that are never written through are pointer-to-const";
  }
  void registerMatchers(MatchFinder& finder) override {
    finder.addMatcher(
        functionDecl(isExpansionInMainFile(), isDefinition(), hasAttr(clang::attr::CUDAGlobal)).bind("fn"), this);
  }
  void run(const MatchFinder::MatchResult& result) override {
    const auto* fn = result.Nodes.getNodeAs<clang::FunctionDecl>("fn");
    WriteFinder finder;
    for (const clang::ParmVarDecl* p : fn->parameters()) {
      if (!p->getType()->isPointerType() || pointsToConst(p->getType())) continue;
      if (finder.writesThrough(fn, p)) continue;
      clang::QualType pointee = p->getType()->getPointeeType();
      report(*result.SourceManager, p->getLocation(),
             "pointer parameter '" + p->getNameAsString() + "' of kernel '" + fn->getNameAsString() +
                 "' is never written through; declare it 'const " +
                 pointee.getAsString(result.Context->getPrintingPolicy()) + "*'");
    }
  }
};

}  // namespace

std::unique_ptr<Check> makeConstPointerCheck(Reporter& r) { return std::make_unique<ConstPointerCheck>(r); }

}  // namespace spindle::verify
