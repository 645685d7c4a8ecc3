#include "passes/prune_branches.h"

#include "frontend/ast_walk.h"
#include "sema/const_eval.h"

namespace spindle {

bool PrunedCode::removesLine(uint32_t line) const {
  for (const auto& [from, to] : lines)
    if (line >= from && line <= to) return true;
  return false;
}

namespace {

class Pruner {
 public:
  Pruner(const SourceFile& file, const std::map<std::string, int64_t>& staticDims,
         const std::map<std::string, ScalarType>* typeArgs, bool keepAsserts, PrunedCode& pruned)
      : file_(file), lookup_(constsAndDims(staticDims)), keepAsserts_(keepAsserts), pruned_(pruned) {
    facts_.typeArgs = typeArgs;
  }

  void block(Block& body) {
    Block out;
    for (size_t i = 0; i < body.size(); ++i) {
      statement(std::move(body[i]), out);
      // A branch taken whole can leave a `return` (`if bias is None:
      // return`): what follows it in this block never runs.
      if (!out.empty() && out.back()->as<ReturnStmt>() && i + 1 < body.size()) {
        Block dead;
        for (size_t j = i + 1; j < body.size(); ++j) dead.push_back(std::move(body[j]));
        dropLines(dead.front()->range.begin.line, dead.back()->range.end.line, dead);
        break;
      }
    }
    body = std::move(out);
  }

 private:
  // Appends `s`, or the branch it takes, to `out`. A taken branch's own
  // statements go through here too: an `elif` left first is an `if` now.
  void statement(StmtPtr s, Block& out) {
    if (s->as<AssertStmt>() && !keepAsserts_) {
      pruned_.lines.push_back({s->range.begin.line, s->range.end.line});
      return;
    }
    if (auto* i = s->as<IfStmt>()) {
      if (auto taken = constantCondition(*i)) {
        const uint32_t header = i->range.begin.line;
        const size_t first = out.size();
        for (StmtPtr& kept : takeBranch(*i, *taken)) statement(std::move(kept), out);
        if (out.size() > first) pruned_.headerTakenBy[header] = out[first].get();
        return;  // `s`, the if, is deleted here; only the statements it kept live on
      }
    }
    keep(std::move(s), out);
  }

  // A kept statement: its own blocks are pruned too, and its conditional
  // expressions with a constant condition become the value they take.
  void keep(StmtPtr s, Block& out) {
    foldConditionals(*s);
    if (auto* def = s->as<FuncDefStmt>()) block(def->func->body);
    forEachChild(
        *s, [](Expr&) {}, [&](Block& b) { block(b); });
    out.push_back(std::move(s));
  }

  void foldConditionals(Stmt& s) {
    if (auto* a = s.as<AssignStmt>()) fold(a->value), fold(a->target);
    if (auto* a = s.as<AugAssignStmt>()) fold(a->value), fold(a->target);
    if (auto* e = s.as<ExprStmt>()) fold(e->expr);
    if (auto* i = s.as<IfStmt>()) fold(i->cond);
    if (auto* w = s.as<WhileStmt>()) fold(w->cond);
    if (auto* f = s.as<ForStmt>())
      for (auto& a : f->rangeArgs) fold(a);
    if (auto* r = s.as<ReturnStmt>(); r && r->value) fold(r->value);
  }

  // `a if c else b` with c a presence test (`bias is not None`, in an
  // `and` chain too) or a type test (`T == bf16`) is the branch c takes:
  // the other may use an absent tensor, or what only another type allows.
  // Other constant conditions stay here: the expression's type is the
  // promotion of both branches, not known yet, and folding could change it.
  // The printer, after typing, prints such an expression as the branch it
  // takes where that branch has the expression's type (expr_printer.cpp).
  void fold(ExprPtr& e) {
    if (auto* t = e->as<TernaryExpr>()) {
      bool decides = testsPresence(*t->cond) || containsTypeTest(*t->cond);
      auto c = decides ? evaluateConst(*t->cond, lookup_, nullptr, facts_) : std::nullopt;
      if (c) {
        ExprPtr taken = std::move(c->asDouble() != 0 ? t->thenValue : t->elseValue);
        e = std::move(taken);
        fold(e);
        return;
      }
      fold(t->cond), fold(t->thenValue), fold(t->elseValue);
      return;
    }
    if (auto* u = e->as<UnaryExpr>()) fold(u->operand);
    if (auto* b = e->as<BinaryExpr>()) fold(b->lhs), fold(b->rhs);
    if (auto* c = e->as<CallExpr>()) {
      for (auto& a : c->args) fold(a);
      for (auto& k : c->kwargs) fold(k.value);
    }
    if (auto* x = e->as<IndexExpr>()) {
      fold(x->base);
      for (auto& i : x->indices) fold(i);
    }
    if (auto* l = e->as<ListExpr>())
      for (auto& x : l->elements) fold(x);
    if (auto* t = e->as<TupleExpr>())
      for (auto& x : t->elements) fold(x);
  }

  static bool testsPresence(const Expr& e) {
    if (const auto* u = e.as<UnaryExpr>(); u && u->op == UnaryOp::IsNone) return true;
    bool found = false;
    forEachChild(e, [&](const Expr& c) { found = found || testsPresence(c); });
    return found;
  }

  std::optional<bool> constantCondition(const IfStmt& s) {
    auto v = evaluateConst(*s.cond, lookup_, nullptr, facts_);
    if (!v) return std::nullopt;
    return v->asDouble() != 0;
  }

  // The statements that replace `s`: the branch it takes. Records the lines
  // of the branch it drops, and the closures defined there.
  Block takeBranch(IfStmt& s, bool taken) {
    const uint32_t elseLine = elseHeaderLine(s);
    const uint32_t end = lastLineOf(s);
    if (taken) {
      if (!s.elseBody.empty()) dropLines(elseLine, end, s.elseBody);
      return std::move(s.thenBody);
    }
    dropLines(s.range.begin.line, s.elseBody.empty() ? end : elseLine - 1, s.thenBody);
    // An `elif` left first in line becomes a plain `if`.
    if (s.elseBody.size() == 1)
      if (auto* elif = s.elseBody.front()->as<IfStmt>(); elif && elif->isElif) elif->isElif = false;
    return std::move(s.elseBody);
  }

  // The last line of `s` with the comments that close its last block
  // (indented deeper than the `if`, before the next code line).
  uint32_t lastLineOf(const IfStmt& s) const {
    uint32_t line = s.range.end.line;
    while (line < file_.lineCount()) {
      std::string_view text = file_.lineText(line + 1);
      size_t at = text.find_first_not_of(" \t\r");
      if (at == std::string_view::npos) {
        ++line;
        continue;
      }
      if (text[at] != '#' || at + 1 <= s.range.begin.col) break;
      ++line;
    }
    return line;
  }

  // The line of the `else:` or `elif` that starts `s`'s else branch: the
  // last line before that branch's first statement that is indented as the
  // `if` and holds code.
  uint32_t elseHeaderLine(const IfStmt& s) const {
    if (s.elseBody.empty()) return s.range.end.line + 1;
    const Stmt& first = *s.elseBody.front();
    if (auto* elif = first.as<IfStmt>(); elif && elif->isElif) return first.range.begin.line;
    uint32_t line = first.range.begin.line;
    while (line > s.range.begin.line) {
      --line;
      std::string_view text = file_.lineText(line);
      size_t at = text.find_first_not_of(" \t");
      if (at != std::string_view::npos && at + 1 == s.range.begin.col && text.substr(at, 4) == "else") return line;
    }
    return first.range.begin.line;
  }

  void dropLines(uint32_t from, uint32_t to, const Block& dead) {
    pruned_.lines.push_back({from, to});
    collectDefs(dead);
  }

  void collectDefs(const Block& dead) {
    for (const StmtPtr& s : dead) {
      if (const auto* def = s->as<FuncDefStmt>()) {
        pruned_.removedDefs.insert(def->func.get());
        collectDefs(def->func->body);
      }
      forEachChild(
          *s, [](const Expr&) {}, [&](const Block& b) { collectDefs(b); });
    }
  }

  const SourceFile& file_;
  ConstLookup lookup_;
  EvalFacts facts_;  // the bound type parameters: type tests, sizeof(T)
  bool keepAsserts_;
  PrunedCode& pruned_;
};

}  // namespace

void pruneConstantBranches(const SourceFile& file, Block& body, const std::map<std::string, int64_t>& staticDims,
                           const std::map<std::string, ScalarType>* typeArgs, bool keepAsserts, PrunedCode& pruned) {
  Pruner(file, staticDims, typeArgs, keepAsserts, pruned).block(body);
}

}  // namespace spindle
