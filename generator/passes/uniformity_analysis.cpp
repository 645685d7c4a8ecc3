#include "passes/uniformity_analysis.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "passes/uniformity_lattice.h"
#include "passes/uniformity_rules.h"
#include "sema/builtins.h"
#include "sema/const_eval.h"

namespace spindle {
namespace {

using Env = std::map<const Symbol*, ValueFact>;

// Why the control flow at a point may differ between threads: an enclosing
// condition, or an earlier return/break/continue only some threads took.
struct Cause {
  ValueFact fact;
  std::string source;                                      // what the fact depends on, quoted
  std::vector<std::pair<SourceRange, std::string>> notes;  // where and why, outermost first
  size_t frame = 0;                                        // the function (frames_ index) it lives in
};

struct Frame {
  const FunctionScope* function;
  const CallExpr* call;  // null for the function the walk starts in
  size_t controlBase;    // control_ entries below this are the callers'
  std::vector<Cause> returned;
  ValueFact result;
};

struct Loop {
  size_t controlBase;
  size_t frame;
  std::vector<Cause> exits;  // divergent break/continue: the rest of the loop
};

// Joins `from` into `into`; a name on one side only keeps its value.
void joinInto(Env& into, const Env& from) {
  for (const auto& [sym, fact] : from) {
    auto it = into.find(sym);
    if (it == into.end()) into.emplace(sym, fact);
    else it->second = join(it->second, fact);
  }
}

bool sameEnv(const Env& a, const Env& b) {
  if (a.size() != b.size()) return false;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib)
    if (ia->first != ib->first || !ia->second.sameFacts(ib->second)) return false;
  return true;
}

// Adds a cause unless one from the same place is there (loops revisit
// their statements), whose fact then takes this one's too.
void addCause(std::vector<Cause>& causes, Cause c) {
  for (auto& old : causes) {
    if (old.notes.front().first.begin.offset != c.notes.front().first.begin.offset) continue;
    old.fact = join(old.fact, c.fact);
    return;
  }
  causes.push_back(std::move(c));
}

std::string sourceOf(const ValueFact& f) { return f.source.empty() ? std::string("the thread") : f.source; }

class UniformityWalker {
 public:
  UniformityWalker(const SemaModule& sema, DiagnosticEngine& diags) : sema_(sema), diags_(diags) {}

  void run() {
    for (const FunctionScope* k : sema_.kernels) {
      if (!k->kernel) continue;
      walk(*k, blockShapeOf(*k->kernel), k->kernel->body);
    }
    // A def no kernel calls is still checked, for what its own body
    // decides: parameters uniform, the block's shape unknown.
    for (const FunctionScope* f : sema_.functions)
      if (f->function && !reached_.count(f)) walk(*f, BlockShape{}, f->function->body);
  }

 private:
  const SemaModule& sema_;
  DiagnosticEngine& diags_;
  std::set<const FunctionScope*> reached_;
  BlockShape shape_;
  Env env_;
  std::vector<Cause> control_;  // enclosing conditions, every frame's, outermost first
  std::vector<Frame> frames_;
  std::vector<Loop*> loops_;
  bool reporting_ = true;

  void walk(const FunctionScope& f, BlockShape shape, const Block& body) {
    shape_ = shape;
    env_.clear();
    control_.clear();
    loops_.clear();
    frames_.assign(1, Frame{&f, nullptr, 0, {}, {}});
    reporting_ = true;
    visitBlock(body);
  }

  static BlockShape blockShapeOf(const KernelDecl& k) {
    BlockShape shape;
    const Decorator* block = k.findDecorator("block");
    if (!block || block->args.empty() || block->args.size() > 3) return shape;
    shape.axes = static_cast<int>(block->args.size());
    for (size_t a = 0; a < block->args.size(); ++a) {
      PerWarpWidth v = evaluateForWarpWidths(*block->args[a], {}, nullptr);
      if (v.wave32 && !v.wave32->isFloat) shape.extent[a][0] = v.wave32->i;
      if (v.wave64 && !v.wave64->isFloat) shape.extent[a][1] = v.wave64->i;
    }
    return shape;
  }

  // ------------------------------------------------------------ control

  // Everything the current point is under: conditions, and earlier exits.
  ValueFact controlFact(size_t controlFrom = 0, size_t frameFrom = 0, size_t loopFrom = 0) const {
    ValueFact f;
    for (size_t i = controlFrom; i < control_.size(); ++i) f = join(f, control_[i].fact);
    for (size_t i = frameFrom; i < frames_.size(); ++i)
      for (const auto& c : frames_[i].returned) f = join(f, c.fact);
    for (size_t i = loopFrom; i < loops_.size(); ++i)
      for (const auto& c : loops_[i]->exits) f = join(f, c.fact);
    return forgetForm(f);
  }

  // The first cause, outermost first, whose fact is worse than `ok` allows.
  template <typename Bad>
  const Cause* blame(Bad bad, size_t controlFrom = 0, size_t frameFrom = 0, size_t loopFrom = 0) const {
    for (size_t i = controlFrom; i < control_.size(); ++i)
      if (bad(control_[i].fact)) return &control_[i];
    for (size_t i = frameFrom; i < frames_.size(); ++i)
      for (const auto& c : frames_[i].returned)
        if (bad(c.fact)) return &c;
    for (size_t i = loopFrom; i < loops_.size(); ++i)
      for (const auto& c : loops_[i]->exits)
        if (bad(c.fact)) return &c;
    return nullptr;
  }

  Cause conditionCause(const ValueFact& fact, SourceRange range, const char* what) const {
    Cause c{forgetForm(fact), sourceOf(fact), {}, frames_.size() - 1};
    c.notes.emplace_back(range, fmt::format("{} depends on {}", what, sourceOf(fact)));
    return c;
  }

  // A return/break/continue taken under the conditions from `controlFrom`
  // (those of its function, or of its loop) leaves the other threads to go
  // on alone: what follows is under that cause.
  std::optional<Cause> exitCause(SourceRange at, const std::string& what, size_t controlFrom, size_t frameFrom,
                                 size_t loopFrom) const {
    ValueFact f = controlFact(controlFrom, frameFrom, loopFrom);
    if (f.isBlockUniform()) return std::nullopt;
    const Cause* why = blame([](const ValueFact& v) { return !v.isBlockUniform(); }, controlFrom, frameFrom, loopFrom);
    Cause c{f, why ? why->source : sourceOf(f), {}, frames_.size() - 1};
    c.notes.emplace_back(at, what);
    if (why) c.notes.insert(c.notes.end(), why->notes.begin(), why->notes.end());
    return c;
  }

  // A matrix load's row and column (docs/language.md 8.11) name the warp's
  // tile: the same on every lane of a warp, at both widths.
  void checkTileOrigin(const CallExpr& call, const std::vector<ValueFact>& args) {
    if (!reporting_) return;
    // The loads' row and column follow the tile and the source; mma_store's
    // (and its batch) follow C and come before the tile.
    const bool store = call.callee == "mma_store";
    const size_t first = store ? 1 : 2, end = store ? call.args.size() - 1 : call.args.size();
    for (size_t i = first; i < args.size() && i < end; ++i) {
      const ValueFact& v = args[i];
      if (v.width[0].level != Uniformity::Divergent && v.width[1].level != Uniformity::Divergent) continue;
      Diagnostic d = DiagnosticEngine::make(DiagId::sema_mma_divergent_origin, sema_.file, call.args[i]->range,
                                            call.callee, sourceOf(v));
      if (!diags_.hasSame(d)) diags_.add(std::move(d));
      return;
    }
  }

  // A builtin that needs `need` is reached here: report it when the
  // control flow can differ more than that allows.
  void checkConvergence(const CallExpr& call, const BuiltinInfo& b, ConvergenceNeed need) {
    if (need == ConvergenceNeed::None || !reporting_) return;
    // The worst level `need` allows at each width. A warp group's wgmma
    // exists on 32-wide warps only; on 64-wide ones (AMD) dot is the warp's.
    const Uniformity allowed[2] = {need == ConvergenceNeed::Block       ? Uniformity::Block
                                   : need == ConvergenceNeed::WarpGroup ? Uniformity::WarpGroup
                                                                        : Uniformity::Warp,
                                   need == ConvergenceNeed::Block ? Uniformity::Block : Uniformity::Warp};
    auto bad = [allowed](const ValueFact& v) { return v.width[0].level > allowed[0] || v.width[1].level > allowed[1]; };
    if (!bad(controlFact())) return;
    const Cause* cause = blame(bad);
    if (!cause) return;
    std::string op = "'" + std::string(b.name) + "()'";
    // A cause in a caller: the error is at the call made under it.
    bool viaCall = cause->frame + 1 < frames_.size();
    SourceRange at = viaCall ? frames_[cause->frame + 1].call->range : call.range;
    std::string subject = viaCall
                              ? fmt::format("this call to '{}' reaches {}", frames_[cause->frame + 1].call->callee, op)
                              : op + " is reached";
    Diagnostic d;
    if (need == ConvergenceNeed::Block) {
      d = DiagnosticEngine::make(DiagId::sema_divergent_barrier, sema_.file, at, subject, cause->source);
    } else if (need == ConvergenceNeed::WarpGroup) {
      d = DiagnosticEngine::make(DiagId::sema_divergent_warp_group_op, sema_.file, at, subject, cause->source);
    } else {
      bool only32 = cause->fact.width[1].level != Uniformity::Divergent;
      bool only64 = cause->fact.width[0].level != Uniformity::Divergent;
      std::string widths = only64 ? " on 64-wide warps (AMD)" : only32 ? " on 32-wide warps (NVIDIA)" : "";
      d = DiagnosticEngine::make(DiagId::sema_divergent_warp_op, sema_.file, at, subject, cause->source, widths);
    }
    auto note = [&](SourceRange r, std::string text) {
      d.notes.push_back(Diagnostic{DiagId::Count, Severity::Note, r, std::move(text), sema_.file, {}});
    };
    if (viaCall) {
      for (size_t i = cause->frame + 2; i < frames_.size(); ++i)
        note(frames_[i].call->range, fmt::format("which calls '{}' here", frames_[i].call->callee));
      note(call.range, fmt::format("{} is here, in '{}'", op, frames_.back().function->name));
    }
    for (const auto& [range, text] : cause->notes) note(range, text);
    // A cause inside a def: the calls that reached it, with their arguments.
    for (size_t i = 1; !viaCall && i < frames_.size(); ++i)
      note(frames_[i].call->range, fmt::format("reached through this call to '{}'", frames_[i].call->callee));
    if (!diags_.hasSame(d)) diags_.add(std::move(d));
  }

  // The returns and loop exits taken so far, of every active frame and loop.
  struct ExitState {
    std::vector<std::vector<Cause>> returned, exits;
  };
  ExitState saveExits() const {
    ExitState s;
    for (const auto& f : frames_) s.returned.push_back(f.returned);
    for (const Loop* l : loops_) s.exits.push_back(l->exits);
    return s;
  }
  void restoreExits(const ExitState& s) {
    for (size_t i = 0; i < frames_.size(); ++i) frames_[i].returned = s.returned[i];
    for (size_t i = 0; i < loops_.size(); ++i) loops_[i]->exits = s.exits[i];
  }
  static bool sameCauses(const std::vector<Cause>& a, const std::vector<Cause>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!a[i].fact.sameFacts(b[i].fact)) return false;
    return true;
  }
  static bool sameExits(const ExitState& a, const ExitState& b) {
    if (a.returned.size() != b.returned.size() || a.exits.size() != b.exits.size()) return false;
    for (size_t i = 0; i < a.returned.size(); ++i)
      if (!sameCauses(a.returned[i], b.returned[i])) return false;
    for (size_t i = 0; i < a.exits.size(); ++i)
      if (!sameCauses(a.exits[i], b.exits[i])) return false;
    return true;
  }
  void mergeExits(const ExitState& s) {
    for (size_t i = 0; i < frames_.size(); ++i)
      for (const auto& c : s.returned[i]) addCause(frames_[i].returned, c);
    for (size_t i = 0; i < loops_.size(); ++i)
      for (const auto& c : s.exits[i]) addCause(loops_[i]->exits, c);
  }

  // ------------------------------------------------------------ statements

  void visitBlock(const Block& block) {
    for (const auto& s : block) visitStmt(*s);
  }

  // A value assigned under the control flow here: as thread-dependent as
  // the conditions that lead to it, at least.
  ValueFact underControl(const ValueFact& v) const {
    ValueFact control = controlFact();
    ValueFact r = v;
    for (int i = 0; i < 2; ++i) {
      if (control.width[i].level <= v.width[i].level) continue;
      r.width[i] = WidthFact{control.width[i].level, std::nullopt, std::nullopt};
      if (r.source.empty() || v.worst() < control.worst()) r.source = control.source;
    }
    return r;
  }

  void assignName(const Symbol* sym, const ValueFact& v) {
    if (sym) env_[sym] = underControl(v);
  }

  // A store into a thread's own array (or a def's parameter bound to one):
  // its contents take the value, the index and the conditions.
  void storeElement(const IndexExpr& target, const ValueFact& v) {
    ValueFact index;
    for (const auto& i : target.indices) index = join(index, eval(*i));
    const auto* base = target.base->as<NameExpr>();
    if (!base || !base->symbol) return;
    bool tracked = base->symbol->kind == SymbolKind::LocalBuffer || env_.count(base->symbol);
    if (!tracked) return;
    ValueFact contents = join(join(env_[base->symbol], forgetForm(v)), forgetForm(index));
    env_[base->symbol] = underControl(contents);
  }

  void assignTarget(const Expr& target, const ValueFact& v) {
    if (const auto* n = target.as<NameExpr>()) assignName(n->symbol, v);
    else if (const auto* ix = target.as<IndexExpr>()) storeElement(*ix, v);
  }

  void visitAssign(const AssignStmt& a) {
    if (const auto* call = a.value->as<CallExpr>(); call && !call->symbol && call->callee == "local") {
      // local(T, [dims], init): every element starts as init.
      if (const auto* n = a.target->as<NameExpr>(); n && call->args.size() == 3)
        assignName(n->symbol, forgetForm(eval(*call->args[2])));
      return;
    }
    if (const auto* call = a.value->as<CallExpr>(); call && !call->symbol && call->callee == "shared") return;
    if (const auto* targets = a.target->as<TupleExpr>()) {
      std::vector<ValueFact> values;
      if (const auto* tuple = a.value->as<TupleExpr>()) {
        for (const auto& e : tuple->elements) values.push_back(eval(*e));
      } else {
        values.assign(targets->elements.size(), eval(*a.value));  // a call's tuple: one fact for all
      }
      for (size_t i = 0; i < targets->elements.size() && i < values.size(); ++i)
        assignTarget(*targets->elements[i], values[i]);
      return;
    }
    assignTarget(*a.target, eval(*a.value));
  }

  void visitStmt(const Stmt& s) {
    switch (s.kind) {
      case StmtKind::Assign: visitAssign(*s.as<AssignStmt>()); return;
      case StmtKind::AugAssign: {
        const auto& a = *s.as<AugAssignStmt>();
        ValueFact v = eval(*a.value);
        ValueFact old = eval(*a.target);
        assignTarget(*a.target, applyBinary(a.op, old, v));
        return;
      }
      case StmtKind::ExprStmt: eval(*s.as<ExprStmt>()->expr); return;
      case StmtKind::If: {
        const auto& i = *s.as<IfStmt>();
        ValueFact cond = eval(*i.cond);
        control_.push_back(conditionCause(cond, i.cond->range, "this condition"));
        Env before = env_;
        ExitState exitsBefore = saveExits();
        visitBlock(i.thenBody);
        Env afterThen = std::move(env_);
        ExitState exitsAfterThen = saveExits();
        // A return in the then-branch does not stop threads in the else.
        env_ = std::move(before);
        restoreExits(exitsBefore);
        visitBlock(i.elseBody);
        joinInto(env_, afterThen);
        mergeExits(exitsAfterThen);
        control_.pop_back();
        return;
      }
      case StmtKind::While: {
        const auto& w = *s.as<WhileStmt>();
        visitLoop(w.body, [&]() {
          ValueFact cond = eval(*w.cond);
          control_.push_back(conditionCause(cond, w.cond->range, "this loop's condition"));
        });
        return;
      }
      case StmtKind::For: {
        const auto& f = *s.as<ForStmt>();
        std::vector<ValueFact> args;
        for (const auto& a : f.rangeArgs) args.push_back(eval(*a));
        ValueFact trip;
        for (const auto& a : args) trip = join(trip, a);
        // range(stop) starts at 0 with step 1; range(start, stop[, step]).
        ValueFact var = args.size() >= 2 ? args[0] : ValueFact::uniform();
        if (args.size() == 3) var = join(var, args[2]);
        SourceRange argsRange =
            f.rangeArgs.empty() ? f.range : SourceRange::span(f.rangeArgs.front()->range, f.rangeArgs.back()->range);
        visitLoop(f.body, [&]() {
          control_.push_back(conditionCause(trip, argsRange, "this loop's trip count"));
          assignName(f.symbol, forgetForm(var));
          // elements(acc[i, j]): each lane's own elements and coordinates.
          if (f.elementsOf) {
            const ValueFact lanes = ValueFact::ofLevel(Uniformity::Divergent, "'elements()'");
            assignName(f.symbol, lanes);
            for (const Symbol* s : f.elementSymbols) assignName(s, lanes);
          }
        });
        return;
      }
      case StmtKind::Break:
      case StmtKind::Continue: {
        if (loops_.empty()) return;
        const Loop& loop = *loops_.back();
        const char* what = s.kind == StmtKind::Break ? "some threads leave the loop here, and the others go on"
                                                     : "some threads skip the rest of the iteration here, and the "
                                                       "others go on";
        if (auto c = exitCause(s.range, what, loop.controlBase, frames_.size(), loops_.size() - 1))
          addCause(loops_.back()->exits, std::move(*c));
        return;
      }
      case StmtKind::Return: {
        const auto& r = *s.as<ReturnStmt>();
        // Evaluate first: a call in the value pushes frames and may move them.
        std::optional<ValueFact> value;
        if (r.value) value = underControl(eval(*r.value));
        Frame& frame = frames_.back();
        if (value) frame.result = join(frame.result, *value);
        size_t firstLoop = loops_.size();
        while (firstLoop > 0 && loops_[firstLoop - 1]->frame == frames_.size() - 1) --firstLoop;
        std::string what =
            fmt::format("some threads return from '{}' here, and the others go on", frames_.back().function->name);
        if (auto c = exitCause(s.range, what, frame.controlBase, frames_.size() - 1, firstLoop))
          addCause(frame.returned, std::move(*c));
        return;
      }
      case StmtKind::Assert: eval(*s.as<AssertStmt>()->cond); return;
      case StmtKind::Pass:
      case StmtKind::Nonlocal:
      case StmtKind::FuncDef: return;  // a closure is walked where it is called
    }
  }

  // A loop: `enter` evaluates the condition (or binds the loop variable)
  // and pushes the loop's cause; the body is walked until the facts stop
  // changing, without reporting, then once more to report. The facts are
  // the variables and the exits that outlive one walk of the body: the
  // returns of the frames and the exits of the loops around it and of this
  // loop. A loop or a call inside the body starts with exits of its own at
  // every walk; counting those as changes would walk each enclosing loop
  // its 64 times, and nested loops 64^depth times.
  template <typename Enter>
  void visitLoop(const Block& body, Enter enter) {
    Loop loop{control_.size(), frames_.size() - 1, {}};
    loops_.push_back(&loop);
    bool wasReporting = reporting_;
    reporting_ = false;
    for (int iteration = 0; iteration < 64; ++iteration) {
      Env head = env_;
      ExitState exitsHead = saveExits();
      enter();
      visitBlock(body);
      control_.pop_back();
      joinInto(env_, head);
      if (sameEnv(env_, head) && sameExits(exitsHead, saveExits())) break;
    }
    reporting_ = wasReporting;
    Env head = env_;
    enter();
    visitBlock(body);
    control_.pop_back();
    joinInto(env_, head);
    loops_.pop_back();
  }

  // ------------------------------------------------------------ expressions

  ValueFact eval(const Expr& e) {
    switch (e.kind) {
      case ExprKind::IntLit: {
        auto v = static_cast<int64_t>(e.as<IntLitExpr>()->value);
        return v >= 0 ? ValueFact::constant(v, v) : ValueFact::uniform();
      }
      case ExprKind::FloatLit: return ValueFact::uniform();
      case ExprKind::BoolLit: {
        int64_t v = e.as<BoolLitExpr>()->value ? 1 : 0;
        return ValueFact::constant(v, v);
      }
      case ExprKind::TypeTest: return ValueFact::uniform();
      case ExprKind::Name: return nameFact(*e.as<NameExpr>());
      case ExprKind::Unary: {
        const auto& u = *e.as<UnaryExpr>();
        ValueFact v = eval(*u.operand);
        if (u.op == UnaryOp::IsNone) return ValueFact::uniform();
        if (u.op == UnaryOp::Pos) return v;
        if (u.op == UnaryOp::Neg) return applyBinary(BinaryOp::Sub, ValueFact::constant(0, 0), v);
        if (u.op == UnaryOp::Not) return applyBinary(BinaryOp::Eq, v, ValueFact::constant(0, 0));
        return forgetForm(v);
      }
      case ExprKind::Binary: {
        const auto& b = *e.as<BinaryExpr>();
        ValueFact lhs = eval(*b.lhs);
        if (isLogical(b.op)) {
          // The right side runs only where the left side lets it.
          control_.push_back(conditionCause(lhs, b.lhs->range, "this condition"));
          ValueFact rhs = eval(*b.rhs);
          control_.pop_back();
          return forgetForm(join(lhs, rhs));
        }
        return applyBinary(b.op, lhs, eval(*b.rhs));
      }
      case ExprKind::Ternary: {
        const auto& t = *e.as<TernaryExpr>();
        ValueFact cond = eval(*t.cond);
        control_.push_back(conditionCause(cond, t.cond->range, "this condition"));
        ValueFact v = join(eval(*t.thenValue), eval(*t.elseValue));
        control_.pop_back();
        return join(v, forgetForm(cond));
      }
      case ExprKind::Call: return callFact(*e.as<CallExpr>());
      case ExprKind::Index: {
        const auto& ix = *e.as<IndexExpr>();
        ValueFact index;
        for (const auto& i : ix.indices) index = join(index, eval(*i));
        ValueFact v = forgetForm(index);
        if (!v.isBlockUniform()) v.source = "a load at an address that depends on " + sourceOf(index);
        // A thread's own array: its contents count too.
        if (const auto* base = ix.base->as<NameExpr>(); base && base->symbol)
          if (auto it = env_.find(base->symbol); it != env_.end()) v = join(v, forgetForm(it->second));
        return v;
      }
      case ExprKind::List:
      case ExprKind::Tuple: {
        ValueFact v;
        forEachElement(e, [&](const Expr& x) { v = join(v, eval(x)); });
        return forgetForm(v);
      }
    }
    return ValueFact::uniform();
  }

  template <typename F>
  static void forEachElement(const Expr& e, F f) {
    if (const auto* l = e.as<ListExpr>())
      for (const auto& x : l->elements) f(*x);
    if (const auto* t = e.as<TupleExpr>())
      for (const auto& x : t->elements) f(*x);
  }

  ValueFact nameFact(const NameExpr& n) {
    const Symbol* s = n.symbol;
    if (!s) return ValueFact::uniform();
    if (s->kind == SymbolKind::Const) {
      if (s->perSpecialization || s->value.isFloat || !s->value.function.empty()) return ValueFact::uniform();
      int64_t v64 = s->wave64Value && !s->wave64Value->isFloat ? s->wave64Value->i : s->value.i;
      return ValueFact::constant(s->value.i, v64);
    }
    auto it = env_.find(s);
    return it == env_.end() ? ValueFact::uniform() : it->second;  // parameters, dims: the same for all
  }

  static bool isCastName(const std::string& name) { return scalarFromName(name).has_value(); }

  ValueFact callFact(const CallExpr& c) {
    const FunctionScope* callee = c.symbol && c.symbol->scope && c.symbol->scope->function ? c.symbol->scope : nullptr;
    if (callee) return userCall(c, *callee);
    const BuiltinInfo* b = findBuiltin(c.callee);
    std::vector<ValueFact> args;
    for (const auto& a : c.args) args.push_back(eval(*a));
    for (const auto& k : c.kwargs) args.push_back(eval(*k.value));
    if (!b || c.symbol) {
      // A cast (value-preserving for the wide integers, which keeps
      // `i64(thread_id()) // 64` exact) or a call no one can see into (a
      // fn parameter bound only per specialization).
      ValueFact v;
      for (const auto& a : args) v = join(v, a);
      static const std::set<std::string> wide = {"i32", "i64", "u32", "u64"};
      return wide.count(c.callee) && args.size() == 1 ? v : forgetForm(v);
    }
    checkConvergence(c, *b, convergenceNeed(*b));
    if (b->category == BuiltinCategory::Matrix && b->id != BuiltinId::Mma) checkTileOrigin(c, args);
    int axis = 0;
    if (b->category == BuiltinCategory::Geometry && !args.empty() && args[0].width[0].constant)
      axis = static_cast<int>(*args[0].width[0].constant);
    return builtinResult(*b, args, axis, shape_);
  }

  // A def or closure, walked here as if inlined: its parameters take the
  // arguments' facts, its closures' outer names are the caller's variables.
  ValueFact userCall(const CallExpr& c, const FunctionScope& callee) {
    std::vector<ValueFact> args;
    for (const auto& a : c.args) args.push_back(eval(*a));
    for (const auto& f : frames_)
      if (f.function == &callee) {  // recursion is an error of its own (sema)
        ValueFact v;
        for (const auto& a : args) v = join(v, a);
        return forgetForm(v);
      }
    reached_.insert(&callee);
    // Its locals start unassigned at every call.
    for (const Symbol* s : callee.declared) env_.erase(s);
    for (const Symbol* s : callee.loopVars) env_.erase(s);
    const auto& params = callee.function->params;
    std::vector<const Symbol*> boundBuffers(params.size(), nullptr);
    for (size_t i = 0; i < params.size() && i < c.args.size(); ++i) {
      const Symbol* p = params[i].symbol;
      if (!p) continue;
      env_.erase(p);
      const auto* argName = c.args[i]->as<NameExpr>();
      if (p->kind == SymbolKind::TensorParam) {
        // A thread's own array passed on: the callee's loads see its contents.
        if (argName && argName->symbol && env_.count(argName->symbol)) {
          env_[p] = env_[argName->symbol];
          boundBuffers[i] = argName->symbol;
        }
        continue;
      }
      env_[p] = args[i];
    }
    frames_.push_back(Frame{&callee, &c, control_.size(), {}, {}});
    visitBlock(callee.function->body);
    ValueFact result = frames_.back().result;
    frames_.pop_back();
    for (size_t i = 0; i < params.size(); ++i)
      if (boundBuffers[i] && params[i].symbol)
        env_[boundBuffers[i]] = join(env_[boundBuffers[i]], env_[params[i].symbol]);
    return result;
  }
};

}  // namespace

void checkUniformControlFlow(const SemaModule& sema, DiagnosticEngine& diags) { UniformityWalker(sema, diags).run(); }

}  // namespace spindle
