#include "tile_bounds.h"

#include <fmt/format.h>

#include "../passes/divisibility.h"
#include "../passes/exact_grid.h"
#include "function_printer.h"
#include "sema/builtins.h"
#include "sema/sema.h"

namespace spindle {

namespace {

// Whether integer type `t` holds every value of `r`; a 64-bit type always
// does (IndexBounds keeps its ranges within +-2^62).
bool typeHolds(ScalarType t, IndexRange r) {
  if (!isInteger(t)) return false;
  if (scalarBits(t) >= 64) return true;
  const IndexRange holds = integerTypeRange(t);
  return r.lo >= holds.lo && r.hi <= holds.hi;
}

// `T(x)`: an integer cast of an integer.
const Expr* castOperand(const Expr& e) {
  const auto* c = e.as<CallExpr>();
  if (!c || c->symbol || c->args.size() != 1 || !c->kwargs.empty() || !scalarFromName(c->callee)) return nullptr;
  if (!isInteger(c->type) || !isInteger(c->args[0]->type)) return nullptr;
  return c->args[0].get();
}

// The axis of block_id(a): a literal or a const; -1 when not block_id.
int blockIdAxis(const Expr& e) {
  const auto* c = e.as<CallExpr>();
  if (!c || c->symbol) return -1;
  const BuiltinInfo* b = findBuiltin(c->callee);
  if (!b || b->id != BuiltinId::BlockId) return -1;
  const Expr* a = !c->args.empty() ? c->args[0].get() : !c->kwargs.empty() ? c->kwargs[0].value.get() : nullptr;
  if (!a) return 0;
  if (const auto* lit = a->as<IntLitExpr>()) return int(lit->value);
  if (const auto* n = a->as<NameExpr>(); n && n->symbol && n->symbol->kind == SymbolKind::Const)
    return int(n->symbol->value.i);
  return -1;
}

// The operands of a chain of `op` (`a and b and c`), left to right.
void chain(const Expr& e, BinaryOp op, std::vector<const Expr*>& out) {
  if (const auto* b = e.as<BinaryExpr>(); b && b->op == op) {
    chain(*b->lhs, op, out);
    chain(*b->rhs, op, out);
    return;
  }
  out.push_back(&e);
}

}  // namespace

TileBounds::TileBounds(const PrintContext& ctx, const FunctionScope& fn)
    : ctx_(ctx), fn_(fn), enabled_(ctx.spec && &fn == &ctx.kernel), ranges_(ctx, fn, /*anyIndexWidth=*/true) {
  if (!enabled_) return;
  for (const GridTile& g : gridTiles(ctx.kernel))
    if (ctx.spec->exactGridDims.count(g.dim->name) && !ctx.isStaticDim(g.dim)) {
      tileOfAxis_[g.axis] = g.tile;
      dimOfAxis_[g.axis] = g.dim;
    }
}

TileBounds::~TileBounds() = default;

std::optional<std::string> TileBounds::alwaysTrue(const Expr& e, const Enclosing& around) const {
  if (!enabled_) return std::nullopt;
  const auto* b = e.as<BinaryExpr>();
  if (!b) return std::nullopt;
  if (b->op == BinaryOp::And) {
    auto l = alwaysTrue(*b->lhs, around), r = l ? alwaysTrue(*b->rhs, around) : std::nullopt;
    if (!l || !r) return std::nullopt;
    return *l + "; " + *r;
  }
  if (b->op == BinaryOp::Or) {
    std::vector<const Expr*> parts;
    chain(e, BinaryOp::Or, parts);
    for (const Expr* p : parts) {
      if (auto why = alwaysTrue(*p, around)) return why;
      if (!pure(*p)) return std::nullopt;  // evaluated before the true one: it must not matter
    }
    return std::nullopt;
  }
  if (isComparison(b->op)) return comparison(*b, around);
  return std::nullopt;
}

std::optional<std::string> TileBounds::comparison(const BinaryExpr& b, const Enclosing& around) const {
  auto f = asBound(b);
  if (!f) return std::nullopt;
  auto why = fits(*f->sum, *f->dim, f->need, around);  // B + R + need <= D
  if (!why) return std::nullopt;
  return fmt::format("{} always: {}", text(b), *why);
}

std::optional<TileBounds::Bound> TileBounds::asBound(const BinaryExpr& b) const {
  // As `sum < bound` or `sum <= bound`.
  const Expr *sum = b.lhs.get(), *bound = b.rhs.get();
  bool strict = false;
  switch (b.op) {
    case BinaryOp::Lt: strict = true; break;
    case BinaryOp::Le: break;
    case BinaryOp::Gt: std::swap(sum, bound), strict = true; break;
    case BinaryOp::Ge: std::swap(sum, bound); break;
    default: return std::nullopt;
  }
  if (!isInteger(sum->type) || !isInteger(bound->type)) return std::nullopt;
  // bound: D or D - c (c >= 0); a narrow bound must not wrap either.
  int64_t c = 0;
  const Expr* d = &peel(*bound);
  if (const auto* sub = d->as<BinaryExpr>(); sub && sub->op == BinaryOp::Sub) {
    auto v = constant(*sub->rhs);
    if (!v || *v < 0 || *v > (int64_t(1) << 40)) return std::nullopt;
    c = *v;
    d = &peel(*sub->lhs);
  }
  if (scalarBits(bound->type) < 64 && !exact(*bound)) return std::nullopt;
  const auto* dn = d->as<NameExpr>();
  if (!dn || !dn->symbol) return std::nullopt;
  return Bound{sum, dn->symbol, c + (strict ? 1 : 0)};
}

std::optional<std::string> TileBounds::fits(const Expr& sum, const Symbol& bound, int64_t need,
                                            const Enclosing& around) const {
  if (!enabled_ || !isInteger(sum.type) || !exact(sum)) return std::nullopt;
  std::vector<Term> ts;
  terms(sum, ts);
  for (size_t i = 0; i < ts.size(); ++i) {
    auto found = base(ts[i], bound, around);
    if (!found) continue;
    __int128 rest = 0;
    std::string restText;
    bool bounded = true;
    for (size_t k = 0; k < ts.size() && bounded; ++k) {
      if (k == i) continue;
      auto r = ranges_.of(*ts[k].shown);
      if (!r) bounded = false;
      else rest += r->hi;
      restText += (restText.empty() ? "" : " + ") + text(*ts[k].shown);
    }
    if (!bounded || rest + need > found->g) continue;
    std::string why = found->why;
    if (!restText.empty()) why += fmt::format(" and {} <= {}", restText, int64_t(rest));  // at most g - need
    return why;
  }
  return std::nullopt;
}

bool TileBounds::nonNegative(const Expr& e) const {
  if (!enabled_) return false;
  auto r = ranges_.of(e);
  return r && r->lo >= 0;
}

// A term that lies below `bound` by g: block_id(a) * T over an exact grid
// axis cdiv(bound, T), a loop variable running to `bound` (both multiples
// of g), or a local an enclosing `if` tested.
std::optional<TileBounds::Base> TileBounds::base(const Term& t, const Symbol& bound, const Enclosing& around) const {
  for (const Expr* guard : around.guards)
    if (auto b = guardBase(t, bound, *guard)) return b;
  const Expr& e = *t.value;
  if (const auto* m = e.as<BinaryExpr>(); m && m->op == BinaryOp::Mul) {
    for (int side = 0; side < 2; ++side) {
      const Expr& id = peel(side ? *m->rhs : *m->lhs);
      const Expr& tile = side ? *m->lhs : *m->rhs;
      const int axis = blockIdAxis(id);
      if (axis < 0 || axis > 2 || !tileOfAxis_[axis] || dimOfAxis_[axis] != &bound) continue;
      auto v = constant(tile);
      if (!v || *v != tileOfAxis_[axis]) continue;
      return Base{*v, fmt::format("{} <= {} - {} (block_id({}) < cdiv({}, {}), {} % {} == 0)", text(*t.shown),
                                  bound.name, *v, axis, bound.name, *v, bound.name, *v)};
    }
    return std::nullopt;
  }
  const auto* n = e.as<NameExpr>();
  if (!n || !n->symbol || n->symbol->kind != SymbolKind::LoopVar) return std::nullopt;
  for (const ForStmt* f : around.loops) {
    if (f->symbol != n->symbol || f->isStatic || f->stepSign != 1 || f->rangeArgs.empty()) continue;
    const auto* stop = f->rangeArgs[f->rangeArgs.size() >= 2 ? 1 : 0]->as<NameExpr>();
    if (!stop || stop->symbol != &bound) continue;
    if (!divisibility_) divisibility_ = std::make_unique<Divisibility>(fn_, *ctx_.spec);
    const int64_t g = std::min(divisibility_->of(*n), divisibility_->of(*stop));
    if (g >= Divisibility::kZero || g < 2) return std::nullopt;
    return Base{g, fmt::format("{} <= {} - {} ({} < {}, both multiples of {})", text(*t.shown), bound.name, g, n->name,
                               bound.name, g)};
  }
  return std::nullopt;
}

// `guard`, a conjunct of an enclosing `if`, read as `L + g <= bound` with L
// the term's local as written (through casts) and g a constant of at least
// 1: then L <= bound - g. The printer passes only guards whose branch does
// not assign their locals, so L has the value the test saw.
std::optional<TileBounds::Base> TileBounds::guardBase(const Term& t, const Symbol& bound, const Expr& guard) const {
  const Expr* shown = t.shown;
  while (const Expr* x = castOperand(*shown)) shown = x;
  const auto* local = shown->as<NameExpr>();
  if (!local || !local->symbol || local->symbol->kind != SymbolKind::Local) return std::nullopt;
  const auto* cmp = guard.as<BinaryExpr>();
  auto f = cmp && isComparison(cmp->op) ? asBound(*cmp) : std::nullopt;
  if (!f || f->dim != &bound || !exact(*f->sum)) return std::nullopt;
  std::vector<Term> ts;
  terms(*f->sum, ts);
  int64_t g = f->need;
  bool found = false;
  for (const Term& u : ts) {
    const Expr* us = u.shown;
    while (const Expr* x = castOperand(*us)) us = x;
    if (const auto* n = us->as<NameExpr>(); n && n->symbol == local->symbol && !found) {
      found = true;
      continue;
    }
    auto v = constant(*u.shown);
    if (!v || *v < 0 || *v > (int64_t(1) << 40)) return std::nullopt;
    g += *v;
  }
  if (!found || g < 1) return std::nullopt;
  return Base{g, fmt::format("{} <= {} - {} (tested: {})", text(*t.shown), bound.name, g, text(guard))};
}

// Through integer casts and locals assigned once (exact() has checked
// that the casts keep their values).
const Expr& TileBounds::peel(const Expr& e) const {
  const Expr* cur = &e;
  for (int depth = 0; depth < 64; ++depth) {
    if (const Expr* x = castOperand(*cur)) {
      cur = x;
      continue;
    }
    const auto* n = cur->as<NameExpr>();
    const Expr* def =
        n && n->symbol && n->symbol->kind == SymbolKind::Local ? ranges_.definitionOf(*n->symbol) : nullptr;
    if (!def) break;
    cur = def;
  }
  return *cur;
}

void TileBounds::terms(const Expr& e, std::vector<Term>& out) const {
  const Expr& p = peel(e);
  if (const auto* b = p.as<BinaryExpr>(); b && b->op == BinaryOp::Add && isInteger(b->type)) {
    terms(*b->lhs, out);
    terms(*b->rhs, out);
    return;
  }
  out.push_back({&p, &e});
}

// Every integer operation of `e`, through the locals it reads, has a range
// that its type holds: nothing wraps, so values are the mathematical ones.
bool TileBounds::exact(const Expr& e, int depth) const {
  if (depth > 64) return false;
  if (isInteger(e.type)) {
    auto r = ranges_.of(e);
    if (!r || !typeHolds(e.type, *r)) return false;
  } else if (e.type != ScalarType::Invalid) {
    return false;
  }
  if (const auto* n = e.as<NameExpr>()) {
    const Expr* def = n->symbol && n->symbol->kind == SymbolKind::Local ? ranges_.definitionOf(*n->symbol) : nullptr;
    return !def || exact(*def, depth + 1);
  }
  if (const auto* b = e.as<BinaryExpr>()) return exact(*b->lhs, depth + 1) && exact(*b->rhs, depth + 1);
  if (const auto* c = e.as<CallExpr>()) {
    for (const auto& a : c->args)
      if (isInteger(a->type) && !exact(*a, depth + 1)) return false;
    return true;
  }
  return e.as<IntLitExpr>() != nullptr;
}

// No effect but its value: names, literals, arithmetic, casts and the
// launch geometry (an element read may be a checked access: not pure).
bool TileBounds::pure(const Expr& e) const {
  switch (e.kind) {
    case ExprKind::IntLit:
    case ExprKind::FloatLit:
    case ExprKind::BoolLit:
    case ExprKind::Name: return true;
    case ExprKind::Unary: return pure(*e.as<UnaryExpr>()->operand);
    case ExprKind::Binary: return pure(*e.as<BinaryExpr>()->lhs) && pure(*e.as<BinaryExpr>()->rhs);
    case ExprKind::Call: {
      const auto* c = e.as<CallExpr>();
      if (c->symbol || !c->kwargs.empty()) return false;
      const BuiltinInfo* b = findBuiltin(c->callee);
      const bool cast = !b && scalarFromName(c->callee);
      if (!cast && (!b || (b->category != BuiltinCategory::Geometry && b->category != BuiltinCategory::IntMath &&
                           b->category != BuiltinCategory::NumericMath)))
        return false;
      for (const auto& a : c->args)
        if (!pure(*a)) return false;
      return true;
    }
    default: return false;
  }
}

std::optional<int64_t> TileBounds::constant(const Expr& e) const {
  auto r = ranges_.of(e);
  if (!r || r->lo != r->hi) return std::nullopt;
  return r->lo;
}

std::string TileBounds::text(const Expr& e) const {
  if (!ctx_.sema.file) return "the value";
  return ctx_.sema.file->text().substr(e.range.begin.offset, e.range.end.offset - e.range.begin.offset);
}

}  // namespace spindle
