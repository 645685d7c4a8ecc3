#include "local_declarations.h"

#include "frontend/ast_walk.h"

#include <algorithm>
#include <functional>

namespace spindle {

namespace {

// A statement's position: the chain of (block, index) from the body down.
using Path = std::vector<std::pair<const Block*, size_t>>;

class Planner {
 public:
  explicit Planner(const FunctionScope& fn) : fn_(fn) {}

  LocalDeclarationPlan run(const Block& body) {
    walkBlock(body);
    LocalDeclarationPlan plan;
    for (Symbol* sym : order_) place(sym, uses_[sym], plan);
    return plan;
  }

 private:
  void use(Symbol* s) {
    if (!s || s->kind != SymbolKind::Local || s->owner != &fn_) return;
    auto& list = uses_[s];
    if (list.empty()) order_.push_back(s);
    list.push_back({path_, currentStmt_});
  }

  void walkBlock(const Block& b) {
    for (size_t i = 0; i < b.size(); ++i) {
      path_.push_back({&b, i});
      const Stmt* saved = currentStmt_;
      currentStmt_ = b[i].get();
      walkStmt(*b[i]);
      currentStmt_ = saved;
      path_.pop_back();
    }
  }

  void walkStmt(const Stmt& s) {
    forEachChild(
        s, [&](const Expr& e) { walkExpr(e); }, [&](const Block& b) { walkBlock(b); });
  }

  void walkExpr(const Expr& e) {
    if (const auto* n = e.as<NameExpr>()) use(n->symbol);
    // Calling a closure passes its captures: each is a use here.
    if (const auto* c = e.as<CallExpr>(); c && c->symbol && c->symbol->scope)
      for (const auto& cap : c->symbol->scope->captures) use(cap.symbol);
    forEachChild(e, [&](const Expr& child) { walkExpr(child); });
  }

  struct Use {
    Path path;
    const Stmt* stmt;
  };

  void place(Symbol* sym, const std::vector<Use>& uses, LocalDeclarationPlan& plan) {
    // Deepest level at which every use lies in the same block.
    size_t level = 0;
    for (;; ++level) {
      if (uses[0].path.size() <= level + 1) break;
      bool same = true;
      for (const auto& u : uses)
        same &= u.path.size() > level + 1 && u.path[level + 1].first == uses[0].path[level + 1].first;
      if (!same) break;
    }
    const Block* block = uses[0].path[level].first;
    // The first use in source order is uses[0]; its statement at `level`
    // is where the declaration goes.
    size_t index = uses[0].path[level].second;
    const Stmt* at = (*block)[index].get();
    const auto* assign = at->as<AssignStmt>();
    const bool firstUseIsAt = uses[0].path.size() == level + 1;
    bool firstUseIsThisAssignment = firstUseIsAt && assign && assign->declares && assign->target->as<NameExpr>() &&
                                    assign->target->as<NameExpr>()->symbol == sym;
    bool unpackingDeclaresIt =
        firstUseIsAt && assign &&
        std::find(assign->declaredLocals.begin(), assign->declaredLocals.end(), sym) != assign->declaredLocals.end();
    if (firstUseIsThisAssignment) plan.declaringAssignments.insert(assign);
    else if (unpackingDeclaresIt) plan.declaringUnpackTargets.insert({assign, sym});
    else plan.declareBefore[at].push_back(sym);
  }

  const FunctionScope& fn_;
  Path path_;
  const Stmt* currentStmt_ = nullptr;
  std::map<Symbol*, std::vector<Use>> uses_;
  std::vector<Symbol*> order_;
};

}  // namespace

LocalDeclarationPlan planLocalDeclarations(const FunctionScope& fn, const Block& body) { return Planner(fn).run(body); }

}  // namespace spindle
