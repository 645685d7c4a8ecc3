// The leaves of random expressions (expr_gen.h): variables, dims, thread
// geometry, reads of tensors and scratch at indices proved in range, calls
// of defs and closures, and collectives where control flow allows them.
#include <algorithm>

#include "expr_gen.h"

namespace spindle::cpu_fuzz {
namespace {

// The sum of 1 to n values of `r`.
Interval sumRange(const Interval& r, Int n) { return {std::min(r.lo, r.lo * n), std::max(r.hi, r.hi * n)}; }

bool isWidthDependentCollective(const std::string& name) {
  return name.rfind("warp_", 0) == 0 || name == "shfl" || name == "shfl_up" || name == "shfl_down" || name == "ballot";
}

}  // namespace

Expr ExprGen::leaf(IntType t, const ExprCtx& c, int depth) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    switch (rng_.below(12)) {
      case 0:
      case 1:
      case 2: {  // a variable
        std::vector<Var*> ok;
        for (Var* v : s_.vars)
          if (v->trusted() <= c.need) ok.push_back(v);
        if (ok.empty()) break;
        Var* v = rng_.pick(ok);
        Expr e;
        e.text = v->name;
        e.isBool = v->isBool;
        e.type = v->isBool ? IntType::i32() : v->type;
        e.range = v->isBool ? Interval::of(0, 1) : v->cap;
        e.uni = v->trusted();
        e.constant = v->isConst;
        return cast(e, t);
      }
      case 3: {  // a dim
        if (!s_.kernelNames()) break;
        std::vector<const DimSpec*> dims;
        for (const DimSpec& d : s_.program.dims) dims.push_back(&d);
        if (dims.empty()) break;
        const DimSpec* d = rng_.pick(dims);
        Expr e;
        e.text = d->name;
        e.type = IntType::i64();
        e.range = {d->lo, d->hi};
        e.constant = true;
        return cast(e, t);
      }
      case 4: {
        Expr g = geometry(t, c);
        if (!g.text.empty()) return g;
        break;
      }
      case 5:
      case 6:
        if (c.need == Uni::Thread && s_.kernelNames() && s_.weight("tensor_read")) return tensorRead(t, c, depth);
        break;
      case 7:
        if (c.need == Uni::Thread && depth > 0) {
          Expr b = bufferRead(t, c, depth);
          if (!b.text.empty()) return b;
        }
        break;
      case 8:
        if (depth > 0) {
          Expr f = fnCall(t, c, depth);
          if (!f.text.empty()) return f;
        }
        break;
      case 9:
        if (depth > 0 && c.collectives != Uni::Thread) {
          Expr k = collective(t, c, depth);
          if (!k.text.empty()) return k;
        }
        break;
      default: break;
    }
  }
  return literal(t, rng_.percent(70) ? Interval::of(-50, 50) : Interval::full(t), false);
}

Expr ExprGen::geometry(IntType t, const ExprCtx& c) {
  Expr e;
  e.type = IntType::i32();
  switch (rng_.below(6)) {
    case 0:
      e.text = "block_id()";
      e.range = s_.blockId;
      break;
    case 1:
      e.text = "block_dim()";
      e.range = s_.blockDim.range;
      e.constant = true;  // the number, for a block that does not follow the launch
      break;
    case 2:
      e.text = "grid_dim()";
      e.range = s_.gridDim;
      break;
    case 3:
      if (c.need != Uni::Thread) return {};
      e.text = "thread_id()";
      e.range = {0, s_.blockMax - 1};
      e.uni = Uni::Thread;
      break;
    case 4:
      if (!s_.allowWidthDependent || c.need != Uni::Thread) return {};
      e.text = "lane_id()";
      e.range = {0, 63};
      e.uni = Uni::Thread;
      s_.program.widthDependent = true;
      s_.feature("lane_id");
      break;
    default:
      if (!s_.allowWidthDependent) return {};
      e.text = "warp_size()";
      e.range = {32, 64};
      e.constant = true;
      s_.program.widthDependent = true;
      s_.feature("warp_size");
      break;
  }
  return cast(e, t);
}

// ---------------------------------------------------------------- reads and calls

Expr ExprGen::index(const Extent& extent, const ExprCtx& c0, int depth) {
  ExprCtx c = c0;
  c.collectives = Uni::Thread;
  // A variable known to lie in [0, extent).
  if (rng_.percent(40)) {
    std::vector<Var*> known;
    for (Var* v : s_.vars) {
      const bool inside = v->cap.lo >= 0 && v->cap.hi < extent.range.lo;
      if (!v->isBool && (inside || v->below == extent.text) && v->trusted() <= c.need) known.push_back(v);
    }
    if (!known.empty()) {
      Var* v = rng_.pick(known);
      Expr e;
      e.text = v->name;
      e.type = v->type;
      e.range = {0, extent.range.hi - 1};
      e.uni = v->trusted();
      return e;
    }
  }
  Expr e = value(computeType(), c, depth);
  const Interval in{0, extent.range.hi - 1};
  if (extent.constant) return fit(e, {0, extent.range.lo - 1});
  Expr x;
  x.text = extent.text;
  x.type = IntType::i64();
  x.range = extent.range;
  if (!e.type.isSigned) e = cast(e, IntType::i64());
  switch (rng_.below(3)) {
    case 0: {  // a clamp
      Expr lo = literal(e.type, Interval::point(0), true);
      Expr inner = builtin("max", {e, lo}, e.type, {std::max(e.range.lo, Int(0)), std::max(e.range.hi, Int(0))});
      Expr last = binaryText(x, "-", literal(IntType::i64(), Interval::point(1), true), kAdditive, IntType::i64(),
                             {0, x.range.hi - 1});
      Expr r = builtin("min", {inner, last}, IntType::i64(), in);
      r.uni = worstOf(e, x);
      return r;
    }
    case 1:
      if (e.range.lo >= 0) return binaryText(e, "%", x, kMultiplicative, IntType::i64(), in);
      [[fallthrough]];
    default: {  // (e % X + X) % X: C++'s remainder has the dividend's sign
      Expr m = binaryText(e, "%", x, kMultiplicative, IntType::i64(), modRange(e.range, x.range));
      Expr s = binaryText(m, "+", x, kAdditive, IntType::i64(), addRange(m.range, x.range));
      return binaryText(s, "%", x, kMultiplicative, IntType::i64(), in);
    }
  }
}

Expr ExprGen::tensorRead(IntType t, const ExprCtx& c, int depth) {
  std::vector<const TensorVar*> inputs;
  for (const TensorVar& tv : s_.tensors)
    if (tv.kind == ParamSpec::Kind::Input) inputs.push_back(&tv);
  if (inputs.empty()) return literal(t, Interval::full(t), false);
  const TensorVar& tv = *rng_.pick(inputs);
  std::vector<Expr> idx;
  for (const Extent& d : tv.dims) idx.push_back(index(d, c, std::min(depth - 1, 1)));
  Expr e;
  e.text = tv.name + "[";
  for (size_t i = 0; i < idx.size(); ++i) e.text += (i ? ", " : "") + idx[i].text;
  e.text += "]";
  e.type = tv.elem;
  e.range = tv.values;
  e.uni = Uni::Thread;
  s_.feature("tensor_read");
  // Elements of 8 and 16 bits are read into a compute type at once.
  return cast(e, t);
}

Expr ExprGen::bufferRead(IntType t, const ExprCtx& c, int depth) {
  struct Candidate {
    const char* feature;
    Expr element;
    const SharedBuf* shared = nullptr;  // the closure reading it assumes its phase
  };
  std::vector<Candidate> candidates;
  auto element = [](const std::string& name, const std::vector<std::string>& idx, IntType type, Interval range) {
    Expr e;
    e.text = name + "[";
    for (size_t i = 0; i < idx.size(); ++i) e.text += (i ? ", " : "") + idx[i];
    e.text += "]";
    e.type = type;
    e.range = range;
    e.uni = Uni::Thread;
    return e;
  };
  // Shared buffers in their read phase: any element.
  if (s_.kernelNames())
    for (const SharedBuf& b : s_.shared) {
      if (b.phase != Phase::Read) continue;
      std::vector<std::string> idx;
      for (const Extent& d : b.dims) idx.push_back(index(d, c, std::min(depth - 1, 1)).text);
      candidates.push_back({"shared_read", element(b.name, idx, b.elem, b.values), &b});
    }
  // This thread's own elements: of shared buffers being written, and of
  // outputs (what it stored there, or the fill).
  if (c.owned)
    for (const Owned& o : *c.owned) {
      if (const SharedBuf* b = s_.findShared(o.target)) {
        if (b->phase != Phase::Write) continue;
        std::vector<std::string> idx;
        for (size_t i = 0; i < o.index.size(); ++i)
          idx.push_back(o.index[i] == "*" ? index(b->dims[i], c, 1).text : o.index[i]);
        candidates.push_back({"shared_own_read", element(b->name, idx, b->elem, b->values), b});
        continue;
      }
      for (const TensorVar& tv : s_.tensors) {
        if (tv.name != o.target || tv.kind != ParamSpec::Kind::Output) continue;
        std::vector<std::string> idx;
        for (size_t i = 0; i < o.index.size(); ++i)
          idx.push_back(o.index[i] == "*" ? index(tv.dims[i], c, 1).text : o.index[i]);
        candidates.push_back({"output_read", element(tv.name, idx, tv.elem, Interval::full(tv.elem))});
      }
    }
  for (LocalBuf* l : s_.locals) {
    std::vector<std::string> idx;
    for (const Extent& d : l->dims) idx.push_back(index(d, c, std::min(depth - 1, 1)).text);
    candidates.push_back({"local_read", element(l->name, idx, l->elem, l->cap)});
  }
  if (candidates.empty()) return {};
  const Candidate& pick = candidates[size_t(rng_.below(int(candidates.size())))];
  s_.feature(pick.feature);
  if (pick.shared) s_.frame().sharedPhases[pick.shared->name] = pick.shared->phase;
  return cast(pick.element, t);
}

Expr ExprGen::call(const FnInfo& fn, const ExprCtx& c, int depth) {
  std::vector<Expr> args;
  ExprCtx ac = c;
  ac.need = Uni::Thread;
  for (const FnInfo::Param& p : fn.params) args.push_back(valueFor(p.type, p.cap, ac, depth - 1));
  Expr e = builtin(fn.name, args, fn.results.empty() ? IntType::i32() : fn.results[0],
                   fn.resultCaps.empty() ? Interval::point(0) : fn.resultCaps[0]);
  e.uni = Uni::Thread;
  e.constant = false;
  e.needs = std::min(e.needs, fn.needsUniform);
  return e;
}

// Whether `fn` may be called at a position of context `c` as part of an
// expression.
static bool callableIn(const GenState& s, const FnInfo& fn, const ExprCtx& c) {
  if (fn.hasEffects || fn.results.size() != 1) return false;
  if (fn.needsUniform != Uni::Thread && c.collectives > fn.needsUniform) return false;
  for (const auto& [buf, phase] : fn.sharedPhases)
    for (const SharedBuf& b : s.shared)
      if (b.name == buf && b.phase != phase) return false;
  return true;
}

Expr ExprGen::fnCall(IntType t, const ExprCtx& c, int depth) {
  if (c.need != Uni::Thread) return {};
  std::vector<const FnInfo*> ok;
  for (const FnInfo* f : s_.fns)
    if (callableIn(s_, *f, c)) ok.push_back(f);
  if (ok.empty()) return {};
  const FnInfo& fn = *rng_.pick(ok);
  s_.feature(fn.moduleDef ? "def_call" : "closure_call");
  return cast(call(fn, c, depth), t);
}

Expr ExprGen::collective(IntType t, const ExprCtx& c, int depth) {
  struct Option {
    const char* name;
    Uni needs;
  };
  std::vector<Option> options;
  if (c.collectives == Uni::Block && s_.weight("block_collective"))
    for (const char* n : {"block_sum", "block_max", "block_min", "block_cumsum"}) options.push_back({n, Uni::Block});
  if (c.collectives <= Uni::Warp && s_.wholeWarps && s_.weight("shuffle")) options.push_back({"shfl_xor", Uni::Warp});
  if (c.collectives <= Uni::Warp && s_.allowWidthDependent && s_.weight("warp_collective")) {
    for (const char* n : {"warp_sum", "warp_max", "warp_min", "warp_cumsum"}) options.push_back({n, Uni::Warp});
    if (s_.wholeWarps)
      for (const char* n : {"shfl", "shfl_up", "shfl_down"}) options.push_back({n, Uni::Warp});
    if (t == IntType::u64()) options.push_back({"ballot", Uni::Warp});
  }
  if (options.empty()) return {};
  const std::string name = rng_.pick(options).name;
  ExprCtx ac = c;
  ac.need = Uni::Thread;
  Expr r;
  if (name == "ballot") {
    Expr cond = condition(ac, depth - 1);
    r = builtin("ballot", {cond}, IntType::u64(), Interval::full(IntType::u64()));
    r.uni = Uni::Warp;
  } else {
    Expr v = value(t, ac, depth - 1);
    const bool sum = name.find("sum") != std::string::npos;
    const Int lanes = name.rfind("warp_", 0) == 0 ? 64 : s_.blockMax;
    if (sum && t.isSigned) v = fit(v, {-(t.max() / lanes), t.max() / lanes});
    Interval range = sum ? sumRange(v.range, lanes) : v.range;
    if (!t.isSigned && sum) range = wrapRange(range, t);
    std::vector<Expr> args{v};
    if (name == "shfl_xor") args.push_back(literal(IntType::i32(), {1, 31}, true));
    if (name == "shfl") args.push_back(fit(value(IntType::i32(), ac, depth - 1), {0, 63}));
    if (name == "shfl_up" || name == "shfl_down") args.push_back(literal(IntType::i32(), {0, 40}, true));
    r = builtin(name, args, t, range);
    r.uni = (name == "block_sum" || name == "block_max" || name == "block_min") ? Uni::Block
            : (name == "warp_sum" || name == "warp_max" || name == "warp_min")  ? Uni::Warp
                                                                                : Uni::Thread;
  }
  r.needs = std::min(r.needs, name.rfind("block_", 0) == 0 ? Uni::Block : Uni::Warp);
  r.constant = false;
  if (isWidthDependentCollective(name)) s_.program.widthDependent = true;
  s_.feature(name);
  return r;
}

}  // namespace spindle::cpu_fuzz
