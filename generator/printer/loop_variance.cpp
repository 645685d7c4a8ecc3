// Locals that step with a range loop (loop_variance.h).
#include "loop_variance.h"

#include <functional>
#include <utility>
#include <vector>

#include "frontend/ast_walk.h"
#include "sema/sema.h"

namespace spindle {

namespace {

bool reads(const Expr& e, const std::set<const Symbol*>& symbols) {
  if (const auto* n = e.as<NameExpr>(); n && n->symbol && symbols.count(n->symbol)) return true;
  bool found = false;
  forEachChild(e, [&](const Expr& child) { found = found || reads(child, symbols); });
  return found;
}

// An element load or a call other than a pure builtin (a def, a closure, or
// a builtin that is not plain arithmetic: those may return another value
// each time).
bool loads(const Expr& e) {
  if (e.as<IndexExpr>()) return true;
  if (const auto* c = e.as<CallExpr>(); c && c->symbol) return true;
  bool found = false;
  forEachChild(e, [&](const Expr& child) { found = found || loads(child); });
  return found;
}

}  // namespace

bool stepsWith(const Expr& e, const std::set<const Symbol*>& symbols) { return !loads(e) && reads(e, symbols); }

std::set<const Symbol*> stepsWithLoop(const ForStmt& loop) {
  // Every assignment to a plain name in the body, nested blocks included:
  // the local, the value, and whether it is augmented (`j += 8`).
  struct Assignment {
    const Symbol* symbol;
    const Expr* value;
    bool augmented;
  };
  std::vector<Assignment> assigned;
  std::function<void(const Block&)> visit = [&](const Block& b) {
    for (const auto& s : b) {
      const Expr* target = nullptr;
      const Expr* value = nullptr;
      bool augmented = false;
      if (const auto* a = s->as<AssignStmt>()) target = a->target.get(), value = a->value.get();
      if (const auto* a = s->as<AugAssignStmt>()) target = a->target.get(), value = a->value.get(), augmented = true;
      if (const auto* n = target ? target->as<NameExpr>() : nullptr; n && n->symbol)
        assigned.push_back({n->symbol, value, augmented});
      forEachChild(*s, [](const Expr&) {}, visit);
    }
  };
  visit(loop.body);
  std::set<const Symbol*> steps = {loop.symbol};
  // An augmented assignment (`j += 8`) steps its local whatever it adds; a
  // plain one where its value steps. To a fixed point: a local may be
  // computed from one assigned after it in the body.
  for (bool grew = true; grew;) {
    grew = false;
    for (const Assignment& a : assigned) {
      if (steps.count(a.symbol) || a.symbol->kind != SymbolKind::Local || loads(*a.value)) continue;
      if (a.augmented || reads(*a.value, steps)) grew = steps.insert(a.symbol).second || grew;
    }
  }
  return steps;
}

}  // namespace spindle
