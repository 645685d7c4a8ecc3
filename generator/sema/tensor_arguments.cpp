#include "sema/tensor_arguments.h"

#include <functional>

#include "frontend/ast_walk.h"

namespace spindle {

std::vector<DimSource> dimSources(const FunctionScope& callee) {
  std::vector<DimSource> out;
  for (Symbol* dim : callee.dimSymbols) {
    bool found = false;
    for (size_t p = 0; p < callee.params.size() && !found; ++p) {
      const Symbol& param = *callee.params[p];
      for (size_t axis = 0; axis < param.shape.size() && !found; ++axis) {
        const auto* n = param.shape[axis]->as<NameExpr>();
        if (n && n->symbol == dim) {
          out.push_back({dim, static_cast<int>(p), static_cast<int>(axis)});
          found = true;
        }
      }
    }
  }
  return out;
}

Symbol* tensorArgument(const Expr& arg) {
  const auto* n = arg.as<NameExpr>();
  Symbol* s = n ? n->symbol : nullptr;
  if (!s) return nullptr;
  bool tensor =
      s->kind == SymbolKind::TensorParam || s->kind == SymbolKind::SharedBuffer || s->kind == SymbolKind::LocalBuffer;
  return tensor ? s : nullptr;
}

namespace {

void forEachUserCallIn(const Block& body, const std::function<void(const CallExpr&)>& onCall) {
  std::function<void(const Expr&)> visitExpr = [&](const Expr& e) {
    if (const auto* c = e.as<CallExpr>(); c && c->symbol && c->symbol->scope) onCall(*c);
    forEachChild(e, visitExpr);
  };
  std::function<void(const Block&)> visitBlock = [&](const Block& b) {
    for (const auto& s : b) forEachChild(*s, visitExpr, visitBlock);
  };
  visitBlock(body);
}

const Block* bodyOf(const FunctionScope& f) {
  if (f.kernel) return &f.kernel->body;
  if (f.function) return &f.function->body;
  return nullptr;
}

}  // namespace

void forEachUserCall(const FunctionScope& f, const std::function<void(const CallExpr&)>& onCall) {
  if (const Block* body = bodyOf(f)) forEachUserCallIn(*body, onCall);
}

void propagateTensorArgumentFacts(SemaModule& sema, const std::set<const FunctionDecl*>* removed) {
  // Chains of calls are short and the call graph is acyclic: repeat until
  // nothing changes.
  bool changed = true;
  while (changed) {
    changed = false;
    for (const auto& scope : sema.scopes) {
      if (removed && scope->function && removed->count(scope->function)) continue;
      forEachUserCall(*scope, [&](const CallExpr& c) {
        const FunctionScope& callee = *c.symbol->scope;
        for (size_t i = 0; i < c.args.size() && i < callee.params.size(); ++i) {
          const Symbol& param = *callee.params[i];
          Symbol* arg = tensorArgument(*c.args[i]);
          if (param.kind != SymbolKind::TensorParam || !arg) continue;
          if (param.written && !arg->written) changed = arg->written = true;
          if (param.accessedInRuns && !arg->accessedInRuns && arg->kind == SymbolKind::TensorParam)
            changed = arg->accessedInRuns = true;
        }
      });
    }
  }
}

}  // namespace spindle
