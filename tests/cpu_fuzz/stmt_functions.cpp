// Closures, module defs, their calls, unpacking and return (stmt_gen.h).
//
// A function's parameters and results have intervals of their own (a
// contract): every argument and every returned value is narrowed into them,
// so the body can rely on them wherever it is called from. What a body
// turned out to do (reach a barrier, store, rebind enclosing names, touch a
// shared buffer in some phase) is recorded in its FnInfo, and each call
// site respects it: such calls are statements of their own (C++ leaves the
// order of calls inside one expression open), a function that reaches a
// collective is called only where control is uniform, and one that touches
// a shared buffer only while that buffer is in the same phase.
#include "stmt_gen.h"

namespace spindle::cpu_fuzz {
namespace {

std::string signature(const FnInfo& fn) {
  std::string text = "def " + fn.name + "(";
  for (size_t i = 0; i < fn.params.size(); ++i)
    text += (i ? ", " : "") + fn.params[i].name + ": " + fn.params[i].type.name();
  text += ")";
  if (fn.annotated && fn.results.size() == 1) text += " -> " + fn.results[0].name();
  if (fn.annotated && fn.results.size() > 1) {
    text += " -> tuple[";
    for (size_t i = 0; i < fn.results.size(); ++i) text += (i ? ", " : "") + fn.results[i].name();
    text += "]";
  }
  return text + ":";
}

}  // namespace

bool StmtGen::callable(const FnInfo& fn, const Block& b) const {
  if (fn.needsUniform != Uni::Thread && controlUni(b) > fn.needsUniform) return false;
  for (const auto& [buf, phase] : fn.sharedPhases)
    for (const SharedBuf& sb : s_.shared)
      if (sb.name == buf && sb.phase != phase) return false;
  return true;
}

std::string StmtGen::returnValues(const FnInfo& fn, const Block& b) {
  std::string text;
  for (size_t i = 0; i < fn.results.size(); ++i) {
    // Exactly the result's type: a closure without an annotation is typed
    // by its first return.
    Expr e = x_.fit(x_.value(fn.results[i], exprCtx(b), 3), fn.resultCaps[i]);
    note(e);
    text += (i ? ", " : "") + e.text;
  }
  return text;
}

void StmtGen::returnStmt(Out& out, Block& b) {
  Frame& f = s_.frame();
  ExprCtx c = exprCtx(b);
  // Inside a loop whose body reaches collectives, every thread or none returns.
  const bool guarded = b.loop && b.loop->guarded;
  if (guarded && controlUni(b) != Uni::Block) return;
  if (guarded) c.need = Uni::Block;
  Uni exitUni = controlUni(b);
  const bool conditional = rng_.percent(75);
  std::string condition;
  if (conditional) {
    Expr cond = x_.condition(c, 2);
    note(cond);
    exitUni = worst(exitUni, cond.uni);
    condition = cond.text;
  }
  // The value is computed where the return is (under its condition).
  const Block at = child(b, exitUni);
  const std::string value = f.fn && !f.fn->results.empty() ? " " + returnValues(*f.fn, at) : "";
  if (conditional) {
    out.line("if " + condition + ":");
    ++out.indent;
    out.line("return" + value);
    --out.indent;
  } else {
    out.line("return" + value);
    b.ended = true;
  }
  // The threads that go on are some of the block only.
  if (exitUni != Uni::Block) f.diverged = true;
  s_.feature("return");
}

void StmtGen::closureDef(Out& out, Block& b) {
  if (s_.frames.size() >= 3 || !s_.weight("closure")) return;  // closures two deep at most
  s_.fnStore.emplace_back();
  FnInfo& fn = s_.fnStore.back();
  fn.name = s_.fresh("cl");
  fn.frame = int(s_.frames.size()) - 1;
  for (int i = rng_.below(4); i > 0; --i) {
    const IntType t = x_.computeType();
    fn.params.push_back({s_.fresh("p"), t, chooseCap(t)});
  }
  const int roll = rng_.below(100);
  const int results = roll < 25 ? 0 : roll < 85 ? 1 : 2;
  for (int i = 0; i < results; ++i) {
    fn.results.push_back(x_.computeType());
    fn.resultCaps.push_back(chooseCap(fn.results.back()));
  }
  fn.annotated = results > 0 && rng_.percent(70);
  // Enclosing scalars it may rebind (the kernel's hash among them).
  std::vector<std::string> nonlocals;
  if (s_.weight("nonlocal")) {
    for (Var* v : s_.vars)
      if (v->nonlocalOk && !v->loopVar && rng_.percent(v->name == s_.hashVar ? 50 : 15)) nonlocals.push_back(v->name);
    if (nonlocals.size() > 3) nonlocals.resize(3);
  }
  out.line(signature(fn));
  ++out.indent;
  const size_t before = out.lines.size();
  if (!nonlocals.empty()) {
    std::string line = "nonlocal ";
    for (size_t i = 0; i < nonlocals.size(); ++i) line += (i ? ", " : "") + nonlocals[i];
    out.line(line);
    s_.feature("nonlocal");
  }
  Frame frame;
  frame.fn = &fn;
  frame.nonlocals.insert(nonlocals.begin(), nonlocals.end());
  s_.frames.push_back(frame);
  const ScopeMark mark = s_.mark();
  for (const FnInfo::Param& p : fn.params) {
    Var v;
    v.name = p.name;
    v.type = p.type;
    v.cap = p.cap;
    v.uni = Uni::Thread;  // as uniform as each call's argument: not known here
    s_.addVar(v);
  }
  // The body runs where it is called: in this block, after the def.
  Block body;
  body.ctx = b.ctx;
  body.ctx.uni = controlUni(b);
  body.ctx.inLoop = false;
  body.ctx.work = std::min(b.ctx.work * 8, s_.maxWork);
  body.ctx.depth = b.ctx.depth + 1;
  block(out, body, 2 + rng_.below(4));
  if (!fn.results.empty() && !body.ended) out.line("return " + returnValues(fn, body));
  if (out.lines.size() == before) out.line("pass");
  s_.restore(mark);
  const Frame done = s_.frames.back();
  s_.frames.pop_back();
  --out.indent;
  fn.needsUniform = done.needs;
  fn.hasEffects = done.effects;
  fn.writes = done.writes;
  fn.sharedPhases = done.sharedPhases;
  s_.fns.push_back(&fn);
  s_.feature("closure");
  if (fn.results.size() > 1) s_.feature("closure_tuple");
  if (!fn.annotated && !fn.results.empty()) s_.feature("closure_unannotated");
  if (fn.needsUniform != Uni::Thread) s_.feature("closure_collective");
}

void StmtGen::moduleDef(Out& out) {
  s_.fnStore.emplace_back();
  FnInfo& fn = s_.fnStore.back();
  fn.name = s_.fresh("d");
  fn.moduleDef = true;
  fn.frame = -1;
  for (int i = 1 + rng_.below(3); i > 0; --i) {
    const IntType t = x_.computeType();
    fn.params.push_back({s_.fresh("p"), t, chooseCap(t)});
  }
  for (int i = rng_.percent(20) ? 2 : 1; i > 0; --i) {
    fn.results.push_back(x_.computeType());
    fn.resultCaps.push_back(chooseCap(fn.results.back()));
  }
  out.line(signature(fn));
  ++out.indent;
  Frame frame;
  frame.fn = &fn;
  frame.moduleDef = true;
  s_.frames.push_back(frame);
  const ScopeMark mark = s_.mark();
  for (const FnInfo::Param& p : fn.params) {
    Var v;
    v.name = p.name;
    v.type = p.type;
    v.cap = p.cap;
    v.uni = Uni::Thread;
    s_.addVar(v);
  }
  Block body;
  body.ctx.uni = Uni::Block;  // called only where control is uniform, if it needs that
  block(out, body, 2 + rng_.below(4));
  if (!body.ended) out.line("return " + returnValues(fn, body));
  s_.restore(mark);
  fn.needsUniform = s_.frames.back().needs;
  s_.frames.pop_back();
  --out.indent;
  out.line("");
  s_.fns.push_back(&fn);
}

void StmtGen::callStmt(Out& out, Block& b) {
  std::vector<FnInfo*> ok;
  for (FnInfo* f : s_.fns)
    if (callable(*f, b)) ok.push_back(f);
  if (ok.empty()) return;
  FnInfo& fn = *rng_.pick(ok);
  Expr call = x_.call(fn, exprCtx(b), 3);
  note(call);
  Frame& f = s_.frame();
  f.needs = std::min(f.needs, fn.needsUniform);
  f.effects = f.effects || fn.hasEffects;
  for (const std::string& w : fn.writes) {
    const Var* v = s_.findVar(w);
    if (v && v->frame != int(s_.frames.size()) - 1) f.writes.insert(w);
  }
  for (const auto& [buf, phase] : fn.sharedPhases) f.sharedPhases[buf] = phase;
  s_.feature(fn.moduleDef ? "def_call" : "closure_call");
  const int roll = rng_.below(100);
  if (fn.results.empty() || roll < 25) {
    // Now and then converted, its value dropped: C++ could read
    // `T(f(T(a)))` as a declaration.
    if (fn.results.size() == 1 && roll < 5) out.line(x_.computeType().name() + "(" + call.text + ")");
    else out.line(call.text);
    return;
  }
  if (fn.results.size() == 1) {
    // Into a new name, or a variable the callee does not rebind itself.
    std::vector<Var*> targets;
    for (Var* v : assignable(false))
      if (!fn.writes.count(v->name)) targets.push_back(v);
    if (!targets.empty() && roll < 60) {
      Var& v = *rng_.pick(targets);
      Expr e = x_.fit(x_.cast(call, v.type), v.cap);
      out.line(v.name + " = " + e.text);
      s_.rebind(v);
      return;
    }
    Var v;
    v.name = s_.fresh("v");
    v.type = fn.results[0];
    v.cap = fn.resultCaps[0];
    out.line(v.name + " = " + call.text);
    s_.addVar(v);
    return;
  }
  std::string names;
  for (size_t i = 0; i < fn.results.size(); ++i) {
    Var v;
    v.name = s_.fresh("v");
    v.type = fn.results[i];
    v.cap = fn.resultCaps[i];
    names += (i ? ", " : "") + v.name;
    s_.addVar(v);
  }
  out.line(names + " = " + call.text);
  s_.feature("unpack_call");
}

void StmtGen::unpack(Out& out, Block& b) {
  if (!s_.weight("unpack")) return;
  ExprCtx c = exprCtx(b);
  const int roll = rng_.below(3);
  if (roll == 0) {  // a key-value reduction: the best value and the index that came with it
    const Uni u = controlUni(b);
    const bool block = u == Uni::Block && s_.weight("block_collective") && rng_.percent(70);
    const bool warp = !block && u <= Uni::Warp && s_.allowWidthDependent && s_.weight("warp_collective");
    if (!block && !warp) return;
    const IntType t = x_.computeType();
    c.collectives = Uni::Thread;
    Expr v = x_.value(t, c, 2);
    const IntType it = rng_.percent(50) ? IntType::i32() : IntType::i64();
    Expr i = x_.value(it, c, 2);
    const std::string name = std::string(block ? "block_" : "warp_") + (rng_.percent(50) ? "argmax" : "argmin");
    Var m, j;
    m.name = s_.fresh("v");
    m.type = t;
    m.cap = v.range;
    m.uni = block ? Uni::Block : Uni::Warp;
    j.name = s_.fresh("v");
    j.type = it;
    j.cap = i.range;
    j.uni = m.uni;
    out.line(m.name + ", " + j.name + " = " + name + "(" + v.text + ", " + i.text + ")");
    s_.addVar(m);
    s_.addVar(j);
    s_.frame().needs = std::min(s_.frame().needs, block ? Uni::Block : Uni::Warp);
    if (warp) s_.program.widthDependent = true;
    s_.feature(name);
    return;
  }
  std::vector<Var*> vs = assignable(false);
  if (vs.size() < 2) return;
  Var& a = *rng_.pick(vs);
  Var& other = *rng_.pick(vs);
  if (&a == &other) return;
  if (roll == 1 && a.type == other.type && a.cap == other.cap) {
    out.line(a.name + ", " + other.name + " = " + other.name + ", " + a.name);  // a swap
    s_.feature("swap");
  } else {
    // Every value is computed before the first store (5.11): the second
    // may read the first's old value.
    Expr ea = x_.valueFor(a.type, a.cap, c, 2), eb = x_.valueFor(other.type, other.cap, c, 2);
    note(ea);
    note(eb);
    out.line(a.name + ", " + other.name + " = " + ea.text + ", " + eb.text);
    s_.feature("unpack_values");
  }
  s_.rebind(a);
  s_.rebind(other);
}

}  // namespace spindle::cpu_fuzz
