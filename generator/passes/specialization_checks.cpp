#include "specialization_checks.h"

#include <functional>

#include "capture_analysis.h"
#include "frontend/ast_walk.h"
#include "sema/builtins.h"
#include "sema/const_eval.h"

namespace spindle {

namespace {

// A static_range bound with no compile-time value. Only a dynamic dim is
// fixed by making it static; a local, loop variable or parameter never has
// a compile-time value, so its message says to use a const.
[[noreturn]] void throwStaticRangeError(const SemaModule& sema, const Expr& bound, const ConstEvalFailure& failure) {
  const Expr& where = failure.where ? *failure.where : bound;
  const auto* name = where.as<NameExpr>();
  const SymbolKind kind = name && name->symbol ? name->symbol->kind : SymbolKind::Const;
  switch (kind) {
    case SymbolKind::DimSymbol:
      throwSpecializationError(sema, DiagId::spec_static_range_dynamic, where.range, failure.reason);
    case SymbolKind::Local:
      throwSpecializationError(sema, DiagId::spec_static_range_variable, where.range, name->name, "local", "locals");
    case SymbolKind::LoopVar:
      throwSpecializationError(sema, DiagId::spec_static_range_variable, where.range, name->name, "loop variable",
                               "loop variables");
    case SymbolKind::ScalarParam:
      throwSpecializationError(sema, DiagId::spec_static_range_variable, where.range, name->name, "parameter",
                               "parameters");
    case SymbolKind::Const:
    case SymbolKind::Function:
    case SymbolKind::Kernel:
    case SymbolKind::TensorParam:
    case SymbolKind::TypeParam:
    case SymbolKind::SharedBuffer:
    case SymbolKind::LocalBuffer:
    case SymbolKind::Fragment:
    case SymbolKind::Closure: break;
  }
  throwSpecializationError(sema, DiagId::spec_static_range_not_constant, where.range,
                           failure.reason.empty() ? std::string("this is not a compile-time value") : failure.reason);
}

void checkBlock(const SemaModule& sema, const Block& body, const std::map<std::string, int64_t>& staticValues) {
  std::function<void(const Block&)> visit = [&](const Block& b) {
    for (const auto& s : b) {
      if (const auto* f = s->as<ForStmt>(); f && f->isStatic) {
        for (const auto& a : f->rangeArgs) {
          ConstEvalFailure failure;
          // A body const that differs by warp width has a value on every
          // target: compile-time for the file, which picks it per target.
          if (!evaluateConst(*a, constsAndDims(staticValues), &failure) &&
              !evaluateForWarpWidths(*a, staticValues, nullptr).known())
            throwStaticRangeError(sema, *a, failure);
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

void checkSwizzledBuffers(const SemaModule& sema, const FunctionScope& kernel,
                          const std::map<std::string, int64_t>& staticValues,
                          const std::map<std::string, ScalarType>& typeArgs) {
  for (const Symbol* s : kernel.declared) {
    if (s->kind != SymbolKind::SharedBuffer || !s->swizzle || s->shape.size() != 2) continue;
    ScalarType type = s->type;
    if (!s->typeParam.empty())
      if (auto it = typeArgs.find(s->typeParam); it != typeArgs.end()) type = it->second;
    const PerWarpWidth swz = evaluateForWarpWidths(*s->swizzle, staticValues, &typeArgs);
    const PerWarpWidth rows = evaluateForWarpWidths(*s->shape[0], staticValues, &typeArgs);
    const PerWarpWidth cols = evaluateForWarpWidths(*s->shape[1], staticValues, &typeArgs);
    if (!swz.known())
      throwSpecializationError(sema, DiagId::sema_swizzle_not_constant, s->swizzle->range, s->name,
                               (swz.wave32 ? swz.failure64 : swz.failure32).reason);
    for (const PerWarpWidth* d : {&rows, &cols})
      if (!d->known()) {
        const ConstEvalFailure& f = d->wave32 ? d->failure64 : d->failure32;
        throwSpecializationError(sema, DiagId::spec_swizzle_shape, (f.where ? *f.where : *s->shape[0]).range, s->name,
                                 f.reason.empty() ? std::string("its shape has no compile-time value") : f.reason);
      }
    for (int wave64 = 0; wave64 < 2; ++wave64) {
      const ConstValue& v = wave64 ? *swz.wave64 : *swz.wave32;
      const ConstValue& r = wave64 ? *rows.wave64 : *rows.wave32;
      const ConstValue& c = wave64 ? *cols.wave64 : *cols.wave32;
      if (v.isFloat || (v.i != 32 && v.i != 64 && v.i != 128))
        throwSpecializationError(sema, DiagId::sema_swizzle_value, s->swizzle->range, s->name,
                                 v.isFloat ? fmt::format("{}", v.f) : fmt::format("{}", v.i));
      const int64_t bytes = c.i * int64_t(scalarBytes(type));
      if (bytes % v.i != 0)
        throwSpecializationError(sema, DiagId::sema_swizzle_columns, s->shape[1]->range, s->name, bytes, c.i,
                                 scalarName(type), v.i);
      if (r.i % 8 != 0)
        throwSpecializationError(sema, DiagId::sema_swizzle_rows, s->shape[0]->range, s->name, r.i, 8 * v.i);
    }
  }
}

namespace {

// Calls `onName` on every name in the code this specialization prints: the
// kernel's launch decorators and body and the functions it calls, but not what
// `skip` says to leave (with its subtree).
void forEachPrintedName(const FunctionScope& kernel, const std::vector<FunctionScope*>& functions,
                        const std::function<bool(const Expr&)>& skip,
                        const std::function<void(const NameExpr&)>& onName) {
  std::function<void(const Expr&)> onExpr = [&](const Expr& e) {
    if (skip(e)) return;
    if (const auto* n = e.as<NameExpr>()) onName(*n);
    forEachChild(e, onExpr);
  };
  std::function<void(const Block&)> onBlock = [&](const Block& b) {
    for (const auto& st : b) forEachChild(*st, onExpr, onBlock);
  };
  for (const Decorator& d : kernel.kernel->decorators)
    if (d.name == "grid" || d.name == "block")
      for (const auto& arg : d.args) onExpr(*arg);
  onBlock(kernel.kernel->body);
  for (const FunctionScope* f : functions) onBlock(f->function->body);
}

}  // namespace

void checkNoAbsentUses(const SemaModule& sema, const FunctionScope& kernel,
                       const std::vector<FunctionScope*>& functions) {
  auto isNoneTest = [](const Expr& e) {  // asking is the one use allowed
    const auto* u = e.as<UnaryExpr>();
    return u && u->op == UnaryOp::IsNone;
  };
  forEachPrintedName(kernel, functions, isNoneTest, [&](const NameExpr& n) {
    if (n.symbol && n.symbol->presence == Symbol::Presence::Absent)
      throwSpecializationError(sema, DiagId::spec_absent_use, n.range, n.name, n.name, n.name);
  });
}

void checkNoUnavailableConsts(const SemaModule& sema, const FunctionScope& kernel,
                              const std::vector<FunctionScope*>& functions) {
  forEachPrintedName(
      kernel, functions, [](const Expr&) { return false; },
      [&](const NameExpr& n) {
        if (n.symbol && n.symbol->kind == SymbolKind::Const && n.symbol->perSpecialization)
          throwSpecializationError(sema, DiagId::spec_const_needs_dim, n.range, n.name, n.symbol->unavailable);
      });
}

void checkDotAccumulators(const SemaModule& sema, const std::vector<FunctionScope*>& functions) {
  std::function<void(const Expr&)> onExpr = [&](const Expr& e) {
    if (const auto* n = e.as<NameExpr>();
        n && n->symbol && n->symbol->kind == SymbolKind::Fragment && n->symbol->dotAccumulator)
      throwSpecializationError(sema, DiagId::sema_dot_closure, n->range, n->name);
    forEachChild(e, onExpr);
  };
  std::function<void(const Block&)> visit = [&](const Block& b) {
    for (const auto& s : b) forEachChild(*s, onExpr, visit);
  };
  for (const FunctionScope* f : functions)
    if (f->function) visit(f->function->body);
}

// The matrix API's builtins need every lane of each warp (docs/language.md
// 8.11): a block of whole warps at both widths.
// dot needs whole groups of four warps.
void checkMatrixBlock(const SemaModule& sema, const FunctionScope& kernel, const std::vector<FunctionScope*>& functions,
                      const BlockPlan& block) {
  if (block.wholeWarps && block.wholeWarpGroups) return;
  const CallExpr* first = nullptr;
  const CallExpr* firstDot = nullptr;
  std::function<void(const Expr&)> onExpr = [&](const Expr& e) {
    if (const auto* c = e.as<CallExpr>(); c && !c->symbol) {
      const BuiltinInfo* b = findBuiltin(c->callee);
      if (b && b->category == BuiltinCategory::Matrix && !first) first = c;
      if (b && (b->id == BuiltinId::Dot || b->id == BuiltinId::DotBt) && !firstDot) firstDot = c;
    }
    forEachChild(e, onExpr);
  };
  std::function<void(const Block&)> visit = [&](const Block& b) {
    for (const auto& s : b) forEachChild(*s, onExpr, visit);
  };
  visit(kernel.kernel->body);
  for (const FunctionScope* f : functions) visit(f->function->body);
  if (!first) return;
  if (!block.wholeWarps) {
    const std::string why = block.followsLaunch ? "follows the launch, so its last warp may be partial"
                                                : "is not a whole number of 32- and 64-wide warps";
    throwSpecializationError(sema, DiagId::spec_mma_partial_warp, first->range, first->callee, why);
  }
  if (firstDot)
    throwSpecializationError(
        sema, DiagId::spec_dot_partial_group, firstDot->range,
        block.followsLaunch ? "follows the launch" : "is not a whole number of groups of four 32- and 64-wide warps");
}

}  // namespace spindle
