// The statement dispatcher, variables and control flow (stmt_gen.h).
#include <algorithm>

#include "stmt_gen.h"

namespace spindle::cpu_fuzz {
namespace {

Int pow2(int k) { return Int(1) << k; }

// [0, 2^k - 1] for some k: a cap that &, |, ^ and >> keep.
bool isMaskCap(const Interval& cap) { return cap.lo == 0 && ((cap.hi + 1) & cap.hi) == 0; }
// [-(2^k - 1), 2^k - 1]: a cap that //, % and >> keep.
bool isSymmetricCap(const Interval& cap) { return cap.lo == -cap.hi && ((cap.hi + 1) & cap.hi) == 0; }

}  // namespace

Uni StmtGen::controlUni(const Block& b) const { return s_.frame().diverged ? Uni::Thread : b.ctx.uni; }

ExprCtx StmtGen::exprCtx(const Block& b) const {
  ExprCtx c;
  c.collectives = controlUni(b);
  c.owned = &b.ctx.owned;
  return c;
}

void StmtGen::note(const Expr& e) { s_.frame().needs = std::min(s_.frame().needs, e.needs); }

void StmtGen::block(Out& out, Block& b, int count) {
  for (int i = 0; i < count && !b.ended; ++i) statement(out, b);
}

void StmtGen::statement(Out& out, Block& b) {
  using Fn = void (StmtGen::*)(Out&, Block&);
  struct Kind {
    const char* feature;  // the swarm switch (GenState::weights); "" always on
    int weight;
    Fn fn;
    bool compound;
  };
  static const Kind kKinds[] = {
      {"", 10, &StmtGen::declare, false},
      {"", 5, &StmtGen::assign, false},
      {"aug_assign", 5, &StmtGen::augAssign, false},
      {"if", 5, &StmtGen::ifStmt, true},
      {"for", 4, &StmtGen::forStmt, true},
      {"while", 2, &StmtGen::whileStmt, true},
      {"exit", 2, &StmtGen::exitStmt, false},
      {"assert", 1, &StmtGen::assertStmt, false},
      {"hash", 4, &StmtGen::hashStmt, false},
      {"owned", 3, &StmtGen::ownedBlock, true},
      {"store", 3, &StmtGen::store, false},
      {"local", 1, &StmtGen::localDecl, false},
      {"local", 2, &StmtGen::localStore, false},
      {"atomic", 2, &StmtGen::atomic, false},
      {"barrier", 2, &StmtGen::barrier, false},
      {"closure", 3, &StmtGen::closureDef, true},
      {"call", 4, &StmtGen::callStmt, false},
      {"unpack", 2, &StmtGen::unpack, false},
  };
  int total = 0;
  std::vector<int> weights;
  for (const Kind& k : kKinds) {
    int w = (*k.feature == 0 || s_.weight(k.feature)) ? k.weight : 0;
    if (k.compound && b.ctx.depth >= 3) w = 0;
    // Shared buffers change phase only at a barrier at the kernel's top
    // level: there, barriers come more often.
    if (k.fn == &StmtGen::barrier && w && !s_.shared.empty() && !s_.frame().fn && b.ctx.depth == 0 && !b.ctx.inLoop)
      w = 8;
    weights.push_back(w);
    total += w;
  }
  int roll = rng_.below(total);
  for (size_t i = 0; i < weights.size(); ++i) {
    if (roll < weights[i]) {
      const size_t before = out.lines.size();
      // Through a named member pointer: GCC 12's -fsanitize=bounds at -O0
      // reports `(this->*kKinds[i].fn)(...)` with a garbage index.
      const Fn fn = kKinds[i].fn;
      (this->*fn)(out, b);
      if (out.lines.size() == before && !b.ended) declare(out, b);  // the kind did not apply here
      return;
    }
    roll -= weights[i];
  }
}

// ---------------------------------------------------------------- variables

Interval StmtGen::chooseCap(IntType t) {
  static const int kBits[] = {1, 4, 7, 8, 12, 16, 20, 24, 30, 31, 40, 52, 62, 63};
  int k;
  do k = kBits[rng_.below(14)];
  while (k >= t.bits);
  if (!t.isSigned && rng_.percent(50)) return Interval::full(t);
  if (t.isSigned && k == t.bits - 1) k = t.bits - 2;
  if (t.isSigned && rng_.percent(60)) return {-(pow2(k) - 1), pow2(k) - 1};
  return {0, pow2(k) - 1};
}

std::vector<Var*> StmtGen::assignable(bool wantBool) {
  std::vector<Var*> r;
  const int here = int(s_.frames.size()) - 1;
  for (Var* v : s_.vars)
    if (v->isMutable && !v->loopVar && v->isBool == wantBool &&
        (v->frame == here || s_.frame().nonlocals.count(v->name)))
      r.push_back(v);
  return r;
}

void StmtGen::declare(Out& out, Block& b) {
  ExprCtx c = exprCtx(b);
  const std::string name = s_.fresh("v");
  Var v;
  v.name = name;
  if (rng_.percent(10)) {  // a flag
    Expr cond = x_.condition(c, 2);
    note(cond);
    v.isBool = true;
    v.type = IntType::i32();
    v.cap = {0, 1};
    v.isMutable = rng_.percent(30);
    v.uni = worst(cond.uni, controlUni(b));
    out.line(name + " = " + cond.text);
    s_.addVar(v);
    return;
  }
  const IntType t = x_.computeType();
  v.type = t;
  v.isMutable = rng_.percent(45);
  v.nonlocalOk = v.isMutable;
  Expr e;
  if (v.isMutable) {
    v.cap = chooseCap(t);
    e = x_.valueFor(t, v.cap, c, 3);
  } else {
    // Now and then a value every thread shares, which may steer a barrier.
    if (controlUni(b) == Uni::Block && rng_.percent(30)) c.need = Uni::Block;
    e = x_.value(t, c, 3);
    v.cap = e.range;
  }
  note(e);
  v.uni = worst(e.uni, controlUni(b));
  const bool annotate = e.type != t || rng_.percent(20);
  out.line(name + (annotate ? ": " + t.name() : "") + " = " + e.text);
  s_.addVar(v);
}

void StmtGen::assign(Out& out, Block& b) {
  const bool flag = rng_.percent(15);
  std::vector<Var*> vs = assignable(flag);
  if (vs.empty()) return;
  Var& v = *rng_.pick(vs);
  Expr e = flag ? x_.condition(exprCtx(b), 2) : x_.valueFor(v.type, v.cap, exprCtx(b), 3);
  note(e);
  out.line(v.name + " = " + e.text);
  s_.rebind(v);
}

void StmtGen::augAssign(Out& out, Block& b) {
  std::vector<Var*> vs = assignable(false);
  if (vs.empty()) return;
  Var& v = *rng_.pick(vs);
  const IntType t = v.type;
  ExprCtx c = exprCtx(b);
  std::vector<std::string> lines;
  auto divisorOf = [&](bool positive) {
    Expr d = x_.value(t, c, 2);
    const Int k = rng_.percent(50) ? rng_.between(1, 20) : pow2(rng_.below(t.bits - 2) + 1);
    return x_.fit(d, positive || !t.isSigned || rng_.percent(60) ? Interval{1, k} : Interval{-k, -1});
  };
  const bool full = v.cap == Interval::full(t);
  const int roll = rng_.below(6);
  Expr e;
  std::string op;
  if (!t.isSigned && full) {
    // Unsigned arithmetic wraps: everything is defined.
    switch (roll) {
      case 0:
        op = "+=";
        e = x_.value(t, c, 2);
        break;
      case 1:
        op = "-=";
        e = x_.value(t, c, 2);
        break;
      case 2:
        op = "*=";
        e = x_.value(t, c, 2);
        break;
      case 3:
        op = rng_.percent(50) ? "//=" : "%=";
        e = divisorOf(true);
        break;
      case 4:
        op = rng_.percent(50) ? "<<=" : ">>=";
        e = x_.fit(x_.value(t, c, 2), {0, t.bits - 1});
        break;
      default:
        op = rng_.pick(std::vector<std::string>{"&=", "|=", "^="});
        e = x_.value(t, c, 2);
        break;
    }
  } else if (isMaskCap(v.cap) && roll < 3) {
    switch (roll) {
      case 0:
        op = "&=";
        e = x_.value(t, c, 2);
        break;
      case 1:
        op = rng_.percent(50) ? "|=" : "^=";
        e = x_.fit(x_.value(t, c, 2), v.cap);
        break;
      default:
        op = ">>=";
        e = x_.fit(x_.value(t, c, 2), {0, t.bits - 1});
        break;
    }
  } else if ((isSymmetricCap(v.cap) || isMaskCap(v.cap)) && roll < 4) {
    // |v // d| <= |v| and |v % d| <= |v|: the cap holds (a mask cap takes
    // positive divisors, keeping v non-negative).
    op = rng_.percent(50) ? "//=" : "%=";
    e = divisorOf(isMaskCap(v.cap));
  } else if (isSymmetricCap(v.cap) || isMaskCap(v.cap)) {
    // An operation that may leave the cap but not the type, then the value
    // brought back: `v += e` then `v %= 2^k` (or `v &= 2^k - 1`).
    const Int room = Interval::full(t).hi - v.cap.hi;
    const char* ops[] = {"+=", "-=", "*="};
    op = ops[rng_.below(3)];
    if (op == "*=") {
      const Int m = std::max(Int(1), room / std::max(v.cap.hi, Int(1)) / 2);
      e = x_.fit(x_.value(t, c, 2), {-m, m});
    } else {
      e = x_.fit(x_.value(t, c, 2), {-room / 2, room / 2});
    }
    note(e);
    out.line(v.name + " " + op + " " + e.text);
    out.line(v.name + (isSymmetricCap(v.cap) ? " %= " + intText(v.cap.hi + 1) : " &= " + intText(v.cap.hi)));
    s_.rebind(v);
    return;
  } else {
    return;
  }
  note(e);
  out.line(v.name + " " + op + " " + e.text);
  s_.rebind(v);
}

void StmtGen::hashStmt(Out& out, Block& b) {
  Var* h = s_.hashVar.empty() ? nullptr : s_.findVar(s_.hashVar);
  if (!h) return;
  const int here = int(s_.frames.size()) - 1;
  if (h->frame != here && !s_.frame().nonlocals.count(h->name)) return;
  Expr e = x_.value(x_.computeType(), exprCtx(b), 3);
  note(e);
  const std::string v = "u64(" + e.text + ")";
  switch (rng_.below(4)) {
    case 0: out.line(h->name + " = " + h->name + " * 1099511628211 + " + v); break;
    case 1: out.line(h->name + " ^= " + v); break;
    case 2: out.line(h->name + " += " + v); break;
    default: out.line(h->name + " = (" + h->name + " << 5) + " + h->name + " + " + v); break;
  }
  s_.rebind(*h);
  s_.feature("hash");
}

void StmtGen::assertStmt(Out& out, Block& b) {
  (void)b;
  std::vector<Var*> vs;
  for (Var* v : s_.vars)
    if (!v->isBool && v->cap != Interval::full(v->type)) vs.push_back(v);
  if (vs.empty()) return;
  const Var& v = *rng_.pick(vs);
  Expr lo = x_.literal(v.type, Interval::point(v.cap.lo), true);
  Expr hi = x_.literal(v.type, Interval::point(v.cap.hi), true);
  std::string text =
      "assert " + v.name + " >= " + ExprGen::paren(lo, kBitOr) + " and " + v.name + " <= " + ExprGen::paren(hi, kBitOr);
  if (rng_.percent(30)) text += ", \"" + v.name + " stays in its interval\"";
  out.line(text);
  s_.feature("assert");
}

// ---------------------------------------------------------------- control flow

Block StmtGen::child(const Block& b, Uni condition) const {
  Block c;
  c.ctx = b.ctx;
  c.ctx.uni = worst(controlUni(b), condition);
  c.ctx.depth = b.ctx.depth + 1;
  c.loop = b.loop;
  return c;
}

void StmtGen::nested(Out& out, Block& parent, Block& child, int count) {
  (void)parent;
  const ScopeMark mark = s_.mark();
  ++out.indent;
  const size_t before = out.lines.size();
  block(out, child, count);
  if (out.lines.size() == before) out.line("pass");
  --out.indent;
  s_.restore(mark);
}

void StmtGen::ifStmt(Out& out, Block& b) {
  ExprCtx c = exprCtx(b);
  // A condition every thread agrees on lets barriers into the branches.
  if (controlUni(b) == Uni::Block && rng_.percent(40)) c.need = Uni::Block;
  Expr cond = x_.condition(c, 3);
  note(cond);
  out.line("if " + cond.text + ":");
  Block then = child(b, cond.uni);
  nested(out, b, then, 1 + rng_.below(4));
  Uni all = cond.uni;
  // elif conditions run only when the ones before are false: no collectives.
  ExprCtx lazy = c;
  lazy.collectives = Uni::Thread;
  while (rng_.percent(20)) {
    Expr more = x_.condition(lazy, 2);
    all = worst(all, more.uni);
    out.line("elif " + more.text + ":");
    Block branch = child(b, all);
    nested(out, b, branch, 1 + rng_.below(3));
  }
  if (rng_.percent(40)) {
    out.line("else:");
    Block other = child(b, all);
    nested(out, b, other, 1 + rng_.below(3));
  }
}

void StmtGen::forStmt(Out& out, Block& b) {
  ExprCtx c = exprCtx(b);
  if (controlUni(b) == Uni::Block && rng_.percent(50)) c.need = Uni::Block;
  const std::string v = s_.fresh("k");
  Var var;
  var.name = v;
  var.loopVar = true;
  std::string header;
  Uni uni = Uni::Block;
  int trips = 1;
  switch (rng_.below(5)) {
    case 0: {  // literal bounds
      const int n = rng_.below(7);
      if (rng_.percent(60)) {
        header = "range(" + std::to_string(n) + ")";
        var.cap = {0, std::max(0, n - 1)};
      } else {
        const int start = rng_.below(9) - 2, stop = start - rng_.below(6);
        header = "range(" + std::to_string(start) + ", " + std::to_string(stop) + ", -" +
                 std::to_string(1 + rng_.below(2)) + ")";
        var.cap = {std::min(stop + 1, start), start};
      }
      var.type = IntType::i32();
      trips = std::max(n, 6);
      break;
    }
    case 1:
    case 2: {  // computed bounds, step of any sign (zero runs no times)
      const IntType t = x_.computeType();
      Expr start = x_.fit(x_.value(t, c, 2), t.isSigned ? Interval{-4, 4} : Interval{0, 4});
      Expr stop = x_.fit(x_.value(t, c, 2), t.isSigned ? Interval{-4, 8} : Interval{0, 8});
      note(start);
      note(stop);
      std::string step;
      uni = worstOf(start, stop);
      if (!t.isSigned || rng_.percent(50)) {
        step = rng_.percent(50) ? "" : ", " + std::to_string(1 + rng_.below(3));
        var.cap = {start.range.lo, std::max(start.range.lo, stop.range.hi - 1)};
      } else {
        Expr s = x_.fit(x_.value(IntType::i32(), c, 1), {-3, 3});
        // A compile-time step must not be zero (sema-range-step-zero): in a
        // specialization with static dims `N % 3` is one.
        if (s.constant) s = x_.fit(s, rng_.percent(50) ? Interval{1, 3} : Interval{-3, -1});
        note(s);
        uni = worst(uni, s.uni);
        step = ", " + s.text;
        var.cap = start.range.hull(stop.range);
        s_.feature("range_runtime_step");
      }
      header = "range(" + start.text + ", " + stop.text + step + ")";
      var.type = t;
      trips = 13;
      break;
    }
    case 3: {  // static_range: compile-time bounds, unrolled
      if (!s_.weight("static_range")) return;
      std::string bound = std::to_string(1 + rng_.below(5));
      Interval r{0, 4};
      var.type = IntType::i32();
      for (const DimSpec& d : s_.program.dims)
        if (d.alwaysStatic && s_.kernelNames() && rng_.percent(50)) {
          bound = d.name;
          r = {0, d.hi - 1};
          var.type = IntType::i64();
          var.below = d.name;
        }
      header = "static_range(" + bound + ")";
      var.cap = r;
      trips = int(r.hi) + 1;
      s_.feature("static_range");
      break;
    }
    default: {  // over a dim
      if (!s_.kernelNames() || s_.program.dims.empty()) return;
      const DimSpec& d = s_.program.dims[size_t(rng_.below(int(s_.program.dims.size())))];
      trips = int(d.hi);
      if (b.ctx.work * trips > s_.maxWork) return;
      header = "range(" + d.name + ")";
      var.type = IntType::i64();
      var.cap = {0, d.hi - 1};
      var.below = d.name;
      break;
    }
  }
  if (b.ctx.work * trips > s_.maxWork) return;
  out.line("for " + v + " in " + header + ":");
  Block body = child(b, uni);
  body.ctx.inLoop = true;
  body.ctx.work = b.ctx.work * trips;
  LoopState loop;
  loop.uni = body.ctx.uni;
  loop.collectivesOk = body.ctx.uni != Uni::Thread && rng_.percent(50);
  loop.guarded = loop.collectivesOk || (b.loop && b.loop->guarded);
  if (!loop.collectivesOk) body.ctx.uni = Uni::Thread;  // its exits may diverge: no collectives inside
  body.loop = &loop;
  var.uni = body.ctx.uni == Uni::Thread ? Uni::Thread : uni;
  const ScopeMark mark = s_.mark();
  s_.addVar(var);
  nested(out, b, body, 1 + rng_.below(4));
  s_.restore(mark);
}

void StmtGen::whileStmt(Out& out, Block& b) {
  // A counter stepped first thing in the body, so `continue` cannot skip it.
  const int start = rng_.below(3), bound = start + rng_.below(6), step = 1 + rng_.below(2);
  const int trips = (bound - start) / step + 1;
  if (b.ctx.work * trips > s_.maxWork) return;
  const std::string w = s_.fresh("w");
  out.line(w + " = " + std::to_string(start));
  out.line("while " + w + " < " + std::to_string(bound) + ":");
  Block body = child(b, Uni::Block);
  body.ctx.inLoop = true;
  body.ctx.work = b.ctx.work * trips;
  LoopState loop;
  loop.uni = body.ctx.uni;
  loop.collectivesOk = body.ctx.uni != Uni::Thread && rng_.percent(50);
  loop.guarded = loop.collectivesOk || (b.loop && b.loop->guarded);
  if (!loop.collectivesOk) body.ctx.uni = Uni::Thread;
  body.loop = &loop;
  Var counter;
  counter.name = w;
  counter.type = IntType::i32();
  counter.cap = {start, bound + step};
  counter.isMutable = true;  // stepped in the loop: never trusted as uniform
  counter.loopVar = true;    // and never assigned by anything else
  s_.addVar(counter);
  ++out.indent;
  out.line(w + " += " + std::to_string(step));
  --out.indent;
  nested(out, b, body, 1 + rng_.below(4));
  s_.feature("while");
}

void StmtGen::exitStmt(Out& out, Block& b) {
  const bool inLoop = b.ctx.inLoop && b.loop;
  if (!inLoop || rng_.percent(30)) return returnStmt(out, b);
  // A loop whose body reaches collectives is left by all threads or none.
  ExprCtx c = exprCtx(b);
  if (b.loop->collectivesOk) {
    if (controlUni(b) > b.loop->uni) return;
    c.need = b.loop->uni;
  }
  const char* word = rng_.percent(50) ? "break" : "continue";
  if (rng_.percent(25) && (!b.loop->collectivesOk || controlUni(b) <= b.loop->uni)) {
    out.line(word);
    b.ended = true;
  } else {
    Expr cond = x_.condition(c, 2);
    note(cond);
    out.line("if " + cond.text + ":");
    ++out.indent;
    out.line(word);
    --out.indent;
  }
  s_.feature(word);
}

}  // namespace spindle::cpu_fuzz
