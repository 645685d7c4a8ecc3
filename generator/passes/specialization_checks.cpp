#include "specialization_checks.h"

#include <functional>

#include "capture_analysis.h"
#include "frontend/ast_walk.h"
#include "sema/const_eval.h"

namespace spindle {

namespace {

void checkBlock(const SemaModule& sema, const Block& body, const std::map<std::string, int64_t>& staticValues) {
  std::function<void(const Block&)> visit = [&](const Block& b) {
    for (const auto& s : b) {
      if (const auto* f = s->as<ForStmt>(); f && f->isStatic) {
        for (const auto& a : f->rangeArgs) {
          ConstEvalFailure failure;
          if (!evaluateConst(*a, constsAndDims(staticValues), &failure))
            throwSpecializationError(sema, DiagId::spec_static_range_dynamic,
                                     (failure.where ? failure.where : a.get())->range, failure.reason);
        }
      }
      if (const auto* a = s->as<AssignStmt>()) {
        const auto* n = a->target->as<NameExpr>();
        if (n && n->symbol && n->symbol->kind == SymbolKind::LocalBuffer && n->symbol->init == a->value.get()) {
          for (Symbol* d : shapeDimSymbols(*n->symbol))
            if (!staticValues.count(d->name))
              throwSpecializationError(sema, DiagId::spec_local_dynamic_size, a->value->range, n->symbol->name, d->name,
                                       d->name);
        }
      }
      forEachChild(
          *s, [](const Expr&) {}, visit);
    }
  };
  visit(body);
}

}  // namespace

void checkSpecializedBodies(const SemaModule& sema, const FunctionScope& kernel,
                            const std::vector<FunctionScope*>& functions,
                            const std::map<std::string, int64_t>& staticValues) {
  // In print order: the functions before the kernel, so the first error is
  // the one printing would have met first.
  for (const FunctionScope* f : functions) checkBlock(sema, f->function->body, staticValues);
  checkBlock(sema, kernel.kernel->body, staticValues);
}

}  // namespace spindle
