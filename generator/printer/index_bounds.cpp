#include "index_bounds.h"

#include <cmath>

#include <algorithm>
#include <vector>

#include "frontend/ast_walk.h"
#include "function_printer.h"
#include "sema/builtins.h"
#include "sema/sema.h"

namespace spindle {

namespace {

constexpr int64_t kIndexMax = INT32_MAX;      // a dim, a stride, an extent with 32-bit indices
constexpr int64_t kLimit = int64_t(1) << 62;  // past this, ranges are not tracked (no overflow below)
constexpr int64_t kGridMax[3] = {INT32_MAX, 65535, 65535};

// The axis a geometry builtin names: its argument, a literal or a const.
int axisOf(const CallExpr& c) {
  const Expr* a = !c.args.empty() ? c.args[0].get() : !c.kwargs.empty() ? c.kwargs[0].value.get() : nullptr;
  if (!a) return 0;
  if (const auto* lit = a->as<IntLitExpr>()) return int(lit->value);
  if (const auto* n = a->as<NameExpr>(); n && n->symbol) return int(n->symbol->value.i);
  return 0;
}

std::optional<IndexRange> bounded(int64_t lo, int64_t hi) {
  if (lo > hi || hi > kLimit || lo < -kLimit) return std::nullopt;
  return IndexRange{lo, hi};
}

// The factors of a product, `a * b * c`, left to right.
void factors(const Expr& e, std::vector<const Expr*>& out) {
  if (const auto* b = e.as<BinaryExpr>(); b && b->op == BinaryOp::Mul) {
    factors(*b->lhs, out);
    factors(*b->rhs, out);
    return;
  }
  out.push_back(&e);
}

}  // namespace

IndexRange integerTypeRange(ScalarType t) {
  const int bits = scalarBits(t);
  if (bits >= 64) return isSigned(t) ? IndexRange{INT64_MIN, INT64_MAX} : IndexRange{0, INT64_MAX};
  if (isSigned(t)) return {-(int64_t(1) << (bits - 1)), (int64_t(1) << (bits - 1)) - 1};
  return {0, (int64_t(1) << bits) - 1};
}

IndexBounds::IndexBounds(const PrintContext& ctx, const FunctionScope& fn, bool anyIndexWidth)
    : ctx_(ctx), active_(ctx.index32 || anyIndexWidth), dimLimit_(ctx.index32 ? kIndexMax : kLimit) {
  if (!active_) return;  // nothing to prove: dims are not known to fit
  // A closure's own body, then those of the functions around it: what it
  // captures by value was defined there (a local assigned once there has
  // that value whenever the closure runs).
  for (const FunctionScope* f = &fn; f; f = f->parent) {
    if (f->kernel) collect(f->kernel->body);
    else if (f->function) collect(f->function->body);
  }
  for (const Symbol* s : reassigned_) definitions_.erase(s);
  // A closure that assigns an outer local (nonlocal) receives it by reference.
  for (const auto& scope : ctx.sema.scopes)
    for (const Capture& c : scope->captures)
      if (c.mode == CaptureMode::Reference) definitions_.erase(c.symbol), loops_.erase(c.symbol);
}

void IndexBounds::collect(const Block& body) {
  for (const StmtPtr& stmt : body) {
    if (const auto* a = stmt->as<AssignStmt>()) {
      if (const auto* n = a->target->as<NameExpr>(); n && n->symbol && n->symbol->kind == SymbolKind::Local) {
        if (a->declares && !definitions_.count(n->symbol)) definitions_[n->symbol] = a->value.get();
        else reassigned_.insert(n->symbol);
      } else if (const auto* t = a->target->as<TupleExpr>()) {
        for (const auto& el : t->elements)
          if (const auto* n = el->as<NameExpr>(); n && n->symbol) reassigned_.insert(n->symbol);
      }
    } else if (const auto* a = stmt->as<AugAssignStmt>()) {
      if (const auto* n = a->target->as<NameExpr>(); n && n->symbol) reassigned_.insert(n->symbol);
    } else if (const auto* f = stmt->as<ForStmt>()) {
      if (f->symbol) loops_[f->symbol] = f;
      // `for r, c, v in elements(..)`: r and c are tile coordinates.
      if (f->elementsOf && f->elementSymbols.size() >= 2) loops_[f->elementSymbols[0]] = f;  // c (not a row's x)
    }
    forEachChild(
        *stmt, [](const Expr&) {}, [&](const Block& b) { collect(b); });
  }
}

const Expr* IndexBounds::definitionOf(const Symbol& local) const {
  auto it = definitions_.find(&local);
  return it == definitions_.end() ? nullptr : it->second;
}

// Each warp width on its own (a per-width const has one value there), then
// both: the printed code is one source for both widths.
std::optional<IndexRange> IndexBounds::of(const Expr& e) const {
  if (width_ != 0) return ofOneWidth(e);
  width_ = 32;
  const auto narrow = ofOneWidth(e);
  width_ = 64;
  const auto wide = narrow ? ofOneWidth(e) : std::nullopt;
  width_ = 0;
  if (!narrow || !wide) return std::nullopt;
  return IndexRange{std::min(narrow->lo, wide->lo), std::max(narrow->hi, wide->hi)};
}

std::optional<IndexRange> IndexBounds::ofOneWidth(const Expr& e) const {
  // @grid's expressions may be untyped here (they are typed for the launcher
  // when it is printed); they hold integers only.
  if (!active_ || (e.type != ScalarType::Invalid && !isInteger(e.type))) return std::nullopt;
  if (const auto* lit = e.as<IntLitExpr>()) {
    if (lit->value > uint64_t(kLimit)) return std::nullopt;
    return IndexRange{int64_t(lit->value), int64_t(lit->value)};
  }
  if (const auto* n = e.as<NameExpr>(); n && n->symbol) return ofName(*n->symbol);
  if (const auto* c = e.as<CallExpr>(); c && !c->symbol) return ofCall(*c);
  if (const auto* b = e.as<BinaryExpr>()) return ofBinary(*b);
  if (const auto* t = e.as<TernaryExpr>()) {
    // Either branch: `min(S, q0 + BQ) if causal != 0 else S`.
    auto a = of(*t->thenValue), b = of(*t->elseValue);
    if (!a || !b) return std::nullopt;
    return IndexRange{std::min(a->lo, b->lo), std::max(a->hi, b->hi)};
  }
  return std::nullopt;
}

std::optional<IndexRange> IndexBounds::ofName(const Symbol& s) const {
  switch (s.kind) {
    case SymbolKind::DimSymbol:
      // A static dim is its value (a 32-bit division or comparison with
      // it is still one the device compiler folds further).
      if (ctx_.isStaticDim(&s)) {
        auto it = ctx_.spec ? ctx_.spec->staticDims.find(s.name) : decltype(ctx_.spec->staticDims.end()){};
        if (!ctx_.spec || it == ctx_.spec->staticDims.end() || it->second < 0 || it->second > kLimit)
          return std::nullopt;
        return IndexRange{it->second, it->second};
      }
      return IndexRange{1, dimMax(s)};
    case SymbolKind::Const:
      if (s.value.isFloat) return std::nullopt;
      // A const per warp width (STAGES = 3 if warp_size() == 32 else 2):
      // its value at the width being bounded.
      if (s.wave64Value && width_ == 64) {
        if (s.wave64Value->isFloat) return std::nullopt;
        return IndexRange{s.wave64Value->i, s.wave64Value->i};
      }
      return IndexRange{s.value.i, s.value.i};
    case SymbolKind::Local: {
      auto it = definitions_.find(&s);
      if (it == definitions_.end() || visiting_.count(&s)) return std::nullopt;
      visiting_.insert(&s);
      auto r = of(*it->second);
      visiting_.erase(&s);
      return r;
    }
    case SymbolKind::LoopVar: {
      auto it = loops_.find(&s);
      if (it == loops_.end() || visiting_.count(&s)) return std::nullopt;
      visiting_.insert(&s);
      auto r = ofLoopVar(*it->second);
      visiting_.erase(&s);
      return r;
    }
    default: return std::nullopt;
  }
}

// range(stop), range(start, stop) and range(start, stop, step) with a step
// known positive: the variable is in [start, stop - 1] while the body runs.
// A 32-bit variable is also below its type's largest value, whatever the
// stop (the loop steps up to the stop, never past it): that bounds it where
// the stop has no known range, or one past the type's (`i32(H) * half`, a
// product that would wrap).
std::optional<IndexRange> IndexBounds::ofLoopVar(const ForStmt& loop) const {
  if (loop.elementsOf) return bounded(0, 15);  // a row or column of a 16 x 16 tile
  if (loop.stepSign != 1) return std::nullopt;
  const size_t n = loop.rangeArgs.size();
  auto start = n >= 2 ? of(*loop.rangeArgs[0]) : std::optional<IndexRange>(IndexRange{0, 0});
  auto stop = of(*loop.rangeArgs[n >= 2 ? 1 : 0]);
  const ScalarType t = loop.symbol ? loop.symbol->type : ScalarType::Invalid;
  const int64_t typeMax = t == ScalarType::I32 || t == ScalarType::U32 ? integerTypeRange(t).hi : kLimit;
  if (!start || start->hi > typeMax || (!stop && typeMax == kLimit)) return std::nullopt;
  const int64_t last = std::min(stop ? stop->hi - 1 : typeMax, typeMax - 1);
  return bounded(start->lo, std::max(start->lo, last));
}

// block_id(axis) is below @grid's value on that axis: its expression's
// bound, else the hardware's largest grid.
std::optional<IndexRange> IndexBounds::gridAxis(int axis) const {
  if (axis < 0 || axis > 2) return std::nullopt;
  const Decorator* grid = ctx_.kernel.kernel ? ctx_.kernel.kernel->findDecorator("grid") : nullptr;
  if (grid && size_t(axis) < grid->args.size())
    if (auto r = of(*grid->args[size_t(axis)]); r && r->lo >= 1) return IndexRange{1, std::min(r->hi, kGridMax[axis])};
  if (grid && size_t(axis) >= grid->args.size()) return IndexRange{1, 1};
  return IndexRange{1, kGridMax[axis]};
}

std::optional<IndexRange> IndexBounds::ofCall(const CallExpr& c) const {
  const BuiltinInfo* b = findBuiltin(c.callee);
  if (b && b->category == BuiltinCategory::Geometry) {
    const int axis = axisOf(c);
    const auto& block = ctx_.plan.block;
    const int64_t blockMax = size_t(axis) < block.values.size() && block.values[size_t(axis)]
                                 ? *block.values[size_t(axis)]
                                 : (size_t(axis) < block.axes.size() ? block.maxThreads : 1);
    switch (b->id) {
      case BuiltinId::ThreadId: return IndexRange{0, blockMax - 1};
      case BuiltinId::BlockDim: return IndexRange{1, blockMax};
      case BuiltinId::BlockId:
        if (auto g = gridAxis(axis)) return IndexRange{0, g->hi - 1};
        return std::nullopt;
      case BuiltinId::GridDim: return gridAxis(axis);
      default: return std::nullopt;
    }
  }
  if (b && b->id == BuiltinId::LaneId) return IndexRange{0, 63};
  // warp_id(): the linear thread id // warp_size(), so below the block's
  // most threads (warp_size() counted as 64) over the narrowest warp.
  if (b && b->id == BuiltinId::WarpId) return IndexRange{0, (ctx_.plan.block.maxThreads - 1) / (width_ ? width_ : 32)};
  if (b && b->id == BuiltinId::WarpSize) return width_ ? IndexRange{width_, width_} : IndexRange{32, 64};
  if (b && b->category == BuiltinCategory::DimQuery) return IndexRange{1, dimLimit_};
  if (b && (b->id == BuiltinId::Cdiv || b->id == BuiltinId::Min || b->id == BuiltinId::Max) && c.args.size() == 2) {
    auto l = of(*c.args[0]), r = of(*c.args[1]);
    if (!l || !r || l->lo < 0 || r->lo < 0) return std::nullopt;
    if (b->id == BuiltinId::Min) return IndexRange{std::min(l->lo, r->lo), std::min(l->hi, r->hi)};
    if (b->id == BuiltinId::Max) return IndexRange{std::max(l->lo, r->lo), std::max(l->hi, r->hi)};
    if (r->lo < 1) return std::nullopt;
    return IndexRange{(l->lo + r->hi - 1) / r->hi, (l->hi + r->lo - 1) / r->lo};
  }
  if (b && !scalarFromName(c.callee)) return std::nullopt;
  // A cast to an integer at least as wide as its value's type keeps it.
  if (c.args.size() == 1 && isInteger(c.args[0]->type) && scalarBits(c.type) >= scalarBits(c.args[0]->type))
    return of(*c.args[0]);
  // A narrowing cast (i32(cdiv(K, BK))) keeps a value that its type holds.
  if (c.args.size() == 1 && isInteger(c.args[0]->type) && isInteger(c.type) && scalarBits(c.type) < 64) {
    const IndexRange holds = integerTypeRange(c.type);
    if (auto r = of(*c.args[0]); r && r->lo >= holds.lo && r->hi <= holds.hi) return r;
  }
  return std::nullopt;
}

// A dynamic dim's largest value with 32-bit indices: every dim of a
// launch is below 2^31, and so is `c * D` where a tensor's shape holds it
// (x: T[M, 2 * D] keeps D below 2^30), and so is a tensor's element count
// (att: bf16[BH, T, T] keeps T * T below 2^31: T <= 46340).
int64_t IndexBounds::dimMax(const Symbol& dim) const {
  int64_t most = dimLimit_;
  for (const Symbol* p : ctx_.kernel.params) {
    if (p->kind != SymbolKind::TensorParam) continue;
    int times = 0;  // whole axes of this shape that are the dim
    for (const Expr* d : p->shape)
      if (const auto* n = d->as<NameExpr>(); n && n->symbol == &dim) ++times;
    // (Without 32-bit indices an element count is bounded by int64 only.)
    if (times >= 2 && ctx_.index32) {
      int64_t root = 1;
      auto power = [&](int64_t v) {  // v^times, or past kIndexMax
        int64_t r = 1;
        for (int i = 0; i < times && r <= kIndexMax; ++i) r *= v;
        return r;
      };
      root = int64_t(std::pow(double(kIndexMax), 1.0 / times));  // then exact:
      while (root > 1 && power(root) > kIndexMax) --root;
      while (power(root + 1) <= kIndexMax) ++root;
      most = std::min(most, root);
    }
    for (const Expr* d : p->shape) {
      const auto* b = d->as<BinaryExpr>();
      if (!b || b->op != BinaryOp::Mul) continue;
      const auto* n = b->rhs->as<NameExpr>();
      const Expr* c = b->lhs.get();
      if (!n || n->symbol != &dim) {
        n = b->lhs->as<NameExpr>();
        c = b->rhs.get();
      }
      const auto* lit = c->as<IntLitExpr>();
      const auto* cn = c->as<NameExpr>();
      int64_t factor = lit ? int64_t(lit->value)
                       : cn && cn->symbol && cn->symbol->kind == SymbolKind::Const && !cn->symbol->value.isFloat &&
                               !cn->symbol->wave64Value
                           ? cn->symbol->value.i
                           : 0;
      // c * D is a size too: at most dimLimit_ (2^62 checked at launch).
      if (n && n->symbol == &dim && factor >= 1) most = std::min(most, dimLimit_ / factor);
    }
  }
  return most;
}

// `T * V` where T and V are dims of one tensor parameter (each once per
// time it appears in the shape): at most that tensor's element count.
bool IndexBounds::isDimProductOfOneTensor(const Expr& e) const {
  std::vector<const Expr*> fs;
  factors(e, fs);
  std::vector<const Symbol*> dims;
  for (const Expr* f : fs) {
    const auto* n = f->as<NameExpr>();
    if (!n || !n->symbol || n->symbol->kind != SymbolKind::DimSymbol || ctx_.isStaticDim(n->symbol)) return false;
    dims.push_back(n->symbol);
  }
  for (const Symbol* p : ctx_.kernel.params) {
    if (p->kind != SymbolKind::TensorParam) continue;
    std::vector<const Symbol*> shape;
    for (const Expr* d : p->shape)
      if (const auto* n = d->as<NameExpr>(); n && n->symbol) shape.push_back(n->symbol);
    bool all = true;
    for (const Symbol* d : dims) {
      auto it = std::find(shape.begin(), shape.end(), d);
      if (it == shape.end()) {
        all = false;
        break;
      }
      shape.erase(it);
    }
    if (all) return true;
  }
  return false;
}

// `thread_id(a) // warp_size()` under a block whose axis a is
// `c * warp_size()`: the thread's warp, below c whatever the warp width
// (interval arithmetic alone gives maxThreads / 32).
std::optional<IndexRange> IndexBounds::warpOfThread(const BinaryExpr& b) const {
  auto isWarpSize = [](const Expr& e) {
    const auto* c = e.as<CallExpr>();
    const BuiltinInfo* bi = c && !c->symbol ? findBuiltin(c->callee) : nullptr;
    return bi && bi->id == BuiltinId::WarpSize;
  };
  if (b.op != BinaryOp::FloorDiv || !isWarpSize(*b.rhs)) return std::nullopt;
  const Expr* tid = b.lhs.get();
  for (int depth = 0; depth < 16; ++depth) {  // through locals assigned once
    const auto* n = tid->as<NameExpr>();
    auto it =
        n && n->symbol && n->symbol->kind == SymbolKind::Local ? definitions_.find(n->symbol) : definitions_.end();
    if (it == definitions_.end()) break;
    tid = it->second;
  }
  const auto* call = tid->as<CallExpr>();
  const BuiltinInfo* bi = call && !call->symbol ? findBuiltin(call->callee) : nullptr;
  if (!bi || bi->id != BuiltinId::ThreadId) return std::nullopt;
  const int axis = axisOf(*call);
  const auto& axes = ctx_.plan.block.axes;
  if (axis < 0 || size_t(axis) >= axes.size()) return std::nullopt;
  const auto* m = axes[size_t(axis)]->as<BinaryExpr>();
  if (!m || m->op != BinaryOp::Mul) return std::nullopt;
  const Expr* c = isWarpSize(*m->rhs) ? m->lhs.get() : isWarpSize(*m->lhs) ? m->rhs.get() : nullptr;
  auto r = c ? of(*c) : std::nullopt;
  if (!r || r->lo != r->hi || r->lo < 1) return std::nullopt;
  return IndexRange{0, r->lo - 1};
}

// grid_dim(a) - block_id(a) is in [1, grid_dim(a)] and grid_dim(a) - 1 -
// block_id(a) in [0, grid_dim(a) - 1] (the blocks in reverse order,
// FlashAttention-2's): a block's index is below its grid's size, which
// interval arithmetic alone cannot see.
std::optional<IndexRange> IndexBounds::reversedBlock(const BinaryExpr& b) const {
  auto isCall = [](const Expr& e, BuiltinId id) {
    const auto* c = e.as<CallExpr>();
    const BuiltinInfo* info = c && !c->symbol ? findBuiltin(c->callee) : nullptr;
    return info && info->id == id ? c : nullptr;
  };
  if (b.op != BinaryOp::Sub) return std::nullopt;
  const CallExpr* id = isCall(*b.rhs, BuiltinId::BlockId);
  if (!id) return std::nullopt;
  int64_t less = 0;  // grid_dim(a) - 1 - block_id(a), or grid_dim(a) - block_id(a)
  const Expr* lhs = b.lhs.get();
  if (const auto* inner = lhs->as<BinaryExpr>(); inner && inner->op == BinaryOp::Sub) {
    const auto* one = inner->rhs->as<IntLitExpr>();
    if (!one || one->value != 1) return std::nullopt;
    less = 1, lhs = inner->lhs.get();
  }
  const CallExpr* grid = isCall(*lhs, BuiltinId::GridDim);
  if (!grid || axisOf(*grid) != axisOf(*id)) return std::nullopt;
  auto g = gridAxis(axisOf(*id));
  if (!g) return std::nullopt;
  return bounded(1 - less, g->hi - less);
}

std::optional<IndexRange> IndexBounds::ofBinary(const BinaryExpr& b) const {
  if (auto w = warpOfThread(b)) return w;
  if (auto r = reversedBlock(b)) return r;
  if (b.op == BinaryOp::Mul && ctx_.index32 && isDimProductOfOneTensor(b)) return IndexRange{1, kIndexMax};
  auto l = of(*b.lhs), r = of(*b.rhs);
  if (!l || !r || l->lo < 0 || r->lo < 0) return std::nullopt;  // non-negative operands only
  switch (b.op) {
    case BinaryOp::Add: return bounded(l->lo + r->lo, l->hi + r->hi);
    case BinaryOp::Sub: return l->lo - r->hi >= 0 ? bounded(l->lo - r->hi, l->hi - r->lo) : std::nullopt;
    case BinaryOp::Mul:
      if (l->hi && r->hi > kLimit / l->hi) return std::nullopt;
      return bounded(l->lo * r->lo, l->hi * r->hi);
    case BinaryOp::FloorDiv:
      if (r->lo < 1) return std::nullopt;
      return bounded(l->lo / r->hi, l->hi / r->lo);
    case BinaryOp::Mod:
      if (r->lo < 1) return std::nullopt;
      return bounded(0, std::min(l->hi, r->hi - 1));
    default: return std::nullopt;
  }
}

}  // namespace spindle
