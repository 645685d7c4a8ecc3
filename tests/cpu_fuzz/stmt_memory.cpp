// Stores, scratch, atomics and barriers (stmt_gen.h). Every store goes to
// an element the storing thread owns: an output element of its own row or
// column (Owned, opened by the plan's Openers), its own slot of a shared
// buffer in that buffer's write phase, or its own local array. Shared
// buffers change phase (read, write, atomic) only at a barrier at the
// kernel's top level, so no thread reads a slot another may be writing.
// Atomics go to outputs (and shared buffers in their atomic phase) that
// take one commutative operation only, so their result is the same in any
// order.
#include <functional>

#include "stmt_gen.h"

namespace spindle::cpu_fuzz {
namespace {

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

const TensorVar* findTensor(const GenState& s, const std::string& name) {
  for (const TensorVar& t : s.tensors)
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace

const char* atomicName(AtomicOp op) {
  switch (op) {
    case AtomicOp::Add: return "atomic_add";
    case AtomicOp::Max: return "atomic_max";
    case AtomicOp::Min: return "atomic_min";
    case AtomicOp::And: return "atomic_and";
    case AtomicOp::Or: return "atomic_or";
    default: return "atomic_xor";
  }
}

std::string StmtGen::ownedIndex(const Owned& o, const std::vector<Extent>& dims, const Block& b) {
  std::string text;
  for (size_t i = 0; i < o.index.size(); ++i) {
    std::string idx = o.index[i];
    if (idx == "*") {
      Expr e = x_.index(dims[i], exprCtx(b), 2);
      idx = e.text;
    }
    text += (i ? ", " : "") + idx;
  }
  return text;
}

void StmtGen::storeInto(Out& out, const Block& b, const std::string& target, IntType elem, const Interval& cap,
                        bool readBack) {
  ExprCtx c = exprCtx(b);
  if (readBack && cap == Interval::full(elem) && rng_.percent(30)) {
    // A read-modify-write. Signed elements take only & | ^ (C++ computes
    // `x op= v` in the promoted type, where + could overflow).
    const IntType t = elem.isSigned ? (rng_.percent(50) ? IntType::i32() : IntType::i64())
                                    : (rng_.percent(50) ? IntType::u32() : IntType::u64());
    static const char* kSigned[] = {"&=", "|=", "^="};
    static const char* kUnsigned[] = {"+=", "-=", "*=", "&=", "|=", "^="};
    const std::string op = elem.isSigned ? kSigned[rng_.below(3)] : kUnsigned[rng_.below(6)];
    Expr e = x_.value(t, c, 3);
    note(e);
    out.line(target + " " + op + " " + e.text);
    s_.feature("store_augmented");
    return;
  }
  Expr e = (cap == Interval::full(elem) && rng_.percent(40)) ? x_.value(x_.computeType(), c, 3)  // converted on store
                                                             : x_.valueFor(elem, cap, c, 3);
  note(e);
  out.line(target + " = " + e.text);
}

void StmtGen::store(Out& out, Block& b) {
  std::vector<const Owned*> targets;
  for (const Owned& o : b.ctx.owned) {
    const SharedBuf* sb = s_.findShared(o.target);
    if (sb ? sb->phase == Phase::Write : findTensor(s_, o.target) != nullptr) targets.push_back(&o);
  }
  if (targets.empty() || !s_.kernelNames()) return localStore(out, b);
  const Owned& o = *rng_.pick(targets);
  if (const SharedBuf* sb = s_.findShared(o.target)) {
    storeInto(out, b, o.target + "[" + ownedIndex(o, sb->dims, b) + "]", sb->elem, sb->values, false);
    s_.frame().sharedPhases[sb->name] = Phase::Write;
    s_.feature("shared_write");
  } else {
    const TensorVar& t = *findTensor(s_, o.target);
    storeInto(out, b, o.target + "[" + ownedIndex(o, t.dims, b) + "]", t.elem, Interval::full(t.elem), true);
    s_.feature("store");
  }
  if (s_.frame().fn) s_.frame().effects = true;
}

void StmtGen::ownedBlock(Out& out, Block& b) {
  if (s_.openers.empty() || !s_.kernelNames()) return;
  const Opener& op = s_.openers[size_t(rng_.below(int(s_.openers.size())))];
  if (b.ctx.work * op.trips > s_.maxWork) return;
  const std::string v = s_.fresh("j");
  out.line(replaceAll(op.header, "{v}", v));
  Block body = child(b, Uni::Thread);
  LoopState loop;
  const ScopeMark mark = s_.mark();
  if (!op.loopBelow.empty() || !op.alias.empty()) {
    Var var;
    var.name = v;
    var.type = IntType::i64();
    var.cap = op.loopRange;
    var.below = op.loopBelow;
    var.loopVar = op.alias.empty();
    if (!op.alias.empty()) {
      ++out.indent;
      out.line(v + " = " + op.alias);
      --out.indent;
    }
    s_.addVar(var);
  }
  if (op.alias.empty() && !op.loopBelow.empty()) {
    body.ctx.inLoop = true;
    body.ctx.work = b.ctx.work * op.trips;
    loop.guarded = b.loop && b.loop->guarded;
    body.loop = &loop;
  }
  for (const Owned& o : op.owned) {
    Owned mine = o;
    for (std::string& i : mine.index) i = replaceAll(i, "{v}", v);
    body.ctx.owned.push_back(mine);
  }
  ++out.indent;
  const size_t before = out.lines.size();
  if (rng_.percent(80)) store(out, body);
  block(out, body, rng_.below(3));
  if (out.lines.size() == before) out.line("pass");
  --out.indent;
  s_.restore(mark);
  s_.feature("owned_block");
}

void StmtGen::localDecl(Out& out, Block& b) {
  (void)b;
  const IntType t = x_.computeType();
  LocalBuf l;
  l.name = s_.fresh("loc");
  l.elem = t;
  l.cap = chooseCap(t);
  l.frame = int(s_.frames.size()) - 1;
  const int rank = rng_.percent(25) ? 2 : 1;
  std::string dims;
  for (int i = 0; i < rank; ++i) {
    Extent e;
    e.constant = true;
    const int n = 1 + rng_.below(6);
    e.text = std::to_string(n);
    e.range = Interval::point(n);
    for (const DimSpec& d : s_.program.dims)
      if (d.alwaysStatic && s_.kernelNames() && rng_.percent(30)) {
        // A static dim sizes it: a constant in every specialization.
        e.text = d.name;
        e.range = {d.lo, d.hi};
        e.constant = false;
      }
    dims += (i ? ", " : "") + e.text;
    l.dims.push_back(e);
  }
  Expr init = x_.literal(t, l.cap, rng_.percent(60));
  out.line(l.name + " = local(" + t.name() + ", [" + dims + "], " + init.text + ")");
  s_.localStore.push_back(l);
  s_.locals.push_back(&s_.localStore.back());
  s_.feature("local");
}

void StmtGen::localStore(Out& out, Block& b) {
  if (s_.locals.empty()) return;
  LocalBuf& l = *s_.locals[size_t(rng_.below(int(s_.locals.size())))];
  std::string idx;
  for (size_t i = 0; i < l.dims.size(); ++i) idx += (i ? ", " : "") + x_.index(l.dims[i], exprCtx(b), 2).text;
  storeInto(out, b, l.name + "[" + idx + "]", l.elem, l.cap, false);
  // A closure writing its caller's array changes what the caller sees.
  if (l.frame != int(s_.frames.size()) - 1) s_.frame().effects = true;
  s_.feature("local_write");
}

void StmtGen::atomic(Out& out, Block& b) {
  if (!s_.kernelNames()) return;
  struct Target {
    std::string name;
    std::vector<Extent> dims;
    AtomicOp op;
    const SharedBuf* shared;
  };
  std::vector<Target> targets;
  for (const TensorVar& t : s_.tensors)
    if (t.kind == ParamSpec::Kind::Atomic) targets.push_back({t.name, t.dims, t.op, nullptr});
  for (const SharedBuf& sb : s_.shared)
    if (sb.phase == Phase::Atomic) targets.push_back({sb.name, sb.dims, sb.op, &sb});
  if (targets.empty()) return;
  const Target& t = targets[size_t(rng_.below(int(targets.size())))];
  std::string idx;
  for (size_t i = 0; i < t.dims.size(); ++i) idx += (i ? ", " : "") + x_.index(t.dims[i], exprCtx(b), 2).text;
  Expr v = x_.value(x_.computeType(), exprCtx(b), 3);  // converted to the element type
  note(v);
  out.line(std::string(atomicName(t.op)) + "(" + t.name + "[" + idx + "], " + v.text + ")");
  if (s_.frame().fn) s_.frame().effects = true;
  if (t.shared) s_.frame().sharedPhases[t.name] = Phase::Atomic;
  s_.feature(t.shared ? "atomic_shared" : "atomic_global");
}

void StmtGen::barrier(Out& out, Block& b) {
  const Uni u = controlUni(b);
  if (u == Uni::Warp || (u == Uni::Block && rng_.percent(15))) {
    out.line("sync_warp()");
    s_.frame().needs = std::min(s_.frame().needs, Uni::Warp);
    s_.feature("sync_warp");
    return;
  }
  if (u != Uni::Block) return;
  out.line("sync()");
  s_.frame().needs = Uni::Block;
  s_.feature("sync");
  // Only the kernel's top level changes phases: inside a loop or a branch
  // the next iteration or the other path would see the other phase.
  if (s_.frame().fn || b.ctx.depth != 0 || b.ctx.inLoop || s_.frame().moduleDef) return;
  for (SharedBuf& sb : s_.shared) {
    const int roll = rng_.below(100);
    if (sb.phase == Phase::Read) {
      if (roll < 35) sb.phase = Phase::Write;
      else if (roll < 55 && s_.weight("atomic")) {
        static const AtomicOp kOps[] = {AtomicOp::Add, AtomicOp::Max, AtomicOp::Min,
                                        AtomicOp::And, AtomicOp::Or,  AtomicOp::Xor};
        sb.phase = Phase::Atomic;
        sb.op = kOps[rng_.below(6)];          // one operation for the whole phase: any order gives one result
        sb.values = Interval::full(sb.elem);  // what the atomics leave is anything
      }
    } else if (roll < 70) {
      sb.phase = Phase::Read;
    }
  }
}

void StmtGen::epilogue(Out& out, Block& b) {
  for (const TensorVar& t : s_.tensors) {
    if (t.kind != ParamSpec::Kind::Output) continue;
    const bool hash = t.name == s_.hashOutput;
    auto storeIt = [&](Block& where, const Owned& o) {
      const std::string target = t.name + "[" + ownedIndex(o, t.dims, where) + "]";
      if (hash) out.line(target + " = " + s_.hashVar);
      else storeInto(out, where, target, t.elem, Interval::full(t.elem), false);
    };
    const Owned* top = nullptr;
    for (const Owned& o : b.ctx.owned)
      if (o.target == t.name) top = &o;
    if (top) {
      storeIt(b, *top);
      continue;
    }
    for (const Opener& op : s_.openers) {
      const Owned* mine = nullptr;
      for (const Owned& o : op.owned)
        if (o.target == t.name) mine = &o;
      if (!mine) continue;
      const std::string v = s_.fresh("j");
      out.line(replaceAll(op.header, "{v}", v));
      ++out.indent;
      const ScopeMark mark = s_.mark();
      Block body = child(b, Uni::Thread);
      if (!op.loopBelow.empty() || !op.alias.empty()) {
        if (!op.alias.empty()) out.line(v + " = " + op.alias);
        Var var;
        var.name = v;
        var.type = IntType::i64();
        var.cap = op.loopRange;
        var.below = op.loopBelow;
        var.loopVar = op.alias.empty();
        s_.addVar(var);
      }
      Owned o = *mine;
      for (std::string& i : o.index) i = replaceAll(i, "{v}", v);
      storeIt(body, o);
      s_.restore(mark);
      --out.indent;
      break;
    }
  }
}

}  // namespace spindle::cpu_fuzz
