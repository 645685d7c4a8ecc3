#include "divisibility.h"

#include <algorithm>

#include "frontend/ast_walk.h"
#include "sema/builtins.h"

namespace spindle {

int64_t powerOfTwoDivisor(int64_t v) {
  if (v == 0) return Divisibility::kZero;
  uint64_t u = v < 0 ? 0ull - uint64_t(v) : uint64_t(v);
  return std::min<int64_t>(int64_t(u & (0ull - u)), Divisibility::kZero);
}

namespace {
int64_t product(int64_t a, int64_t b) {
  // Both are powers of two at most kZero: the product is too, capped.
  return a >= Divisibility::kZero / b ? Divisibility::kZero : a * b;
}

void collectAssignments(const Block& body, std::map<const Symbol*, std::vector<const Expr*>>& assigned,
                        std::map<const Symbol*, const ForStmt*>& loops) {
  for (const auto& s : body) {
    if (const auto* a = s->as<AssignStmt>()) {
      if (const auto* n = a->target->as<NameExpr>(); n && n->symbol) assigned[n->symbol].push_back(a->value.get());
      if (const auto* t = a->target->as<TupleExpr>())
        for (const auto& e : t->elements)  // unpacking: not followed
          if (const auto* n = e->as<NameExpr>(); n && n->symbol) assigned[n->symbol].push_back(nullptr);
    } else if (const auto* a = s->as<AugAssignStmt>()) {
      // x += v and x -= v keep a divisor both have; x *= v keeps x's. Any
      // other operator is not followed.
      if (const auto* n = a->target->as<NameExpr>(); n && n->symbol) {
        if (a->op == BinaryOp::Add || a->op == BinaryOp::Sub) assigned[n->symbol].push_back(a->value.get());
        else if (a->op != BinaryOp::Mul) assigned[n->symbol].push_back(nullptr);
      }
    } else if (const auto* f = s->as<ForStmt>()) {
      if (f->symbol) loops[f->symbol] = f;
    }
    forEachChild(
        *s, [](const Expr&) {}, [&](const Block& b) { collectAssignments(b, assigned, loops); });
  }
}
}  // namespace

Divisibility::Divisibility(const FunctionScope& fn, const Specialization& spec) : fn_(fn), spec_(spec) {
  const Block* body = fn.kernel ? &fn.kernel->body : fn.function ? &fn.function->body : nullptr;
  if (body) collectAssignments(*body, assigned_, loops_);
  // A local a closure assigns through `nonlocal` changes where this body
  // does not show it: unknown.
  for (const FunctionScope* c : fn.closures)
    for (const auto& [name, outer] : c->nonlocals) assigned_[outer].push_back(nullptr);
  solveLocals();
}

// The greatest fixpoint: every local and loop variable starts at kZero and
// drops to the minimum over its assignments until nothing changes. Sound
// by induction over the execution: if every assigned value keeps divisor d
// whenever the locals it reads have theirs, they always have them.
void Divisibility::solveLocals() {
  for (const auto& [s, values] : assigned_)
    if (s->kind == SymbolKind::Local) solved_[s] = kZero;
  for (const auto& [s, loop] : loops_) solved_[s] = kZero;
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& [s, d] : solved_) {
      int64_t next = kZero;
      if (auto it = assigned_.find(s); it != assigned_.end())
        for (const Expr* v : it->second) next = std::min(next, v ? of(*v) : 1);
      if (auto it = loops_.find(s); it != loops_.end()) {
        const ForStmt& f = *it->second;
        const Expr* start = f.rangeArgs.size() >= 2 ? f.rangeArgs[0].get() : nullptr;
        next = std::min(next, start ? of(*start) : kZero);
        if (f.rangeArgs.size() == 3)
          next = std::min(next, f.step != 0 ? powerOfTwoDivisor(f.step) : of(*f.rangeArgs[2]));
        else next = std::min<int64_t>(next, 1);
      }
      if (next < d) d = next, changed = true;
    }
  }
}

bool Divisibility::constantValue(const Expr& e, int64_t& out) const {
  if (const auto* lit = e.as<IntLitExpr>()) {
    if (lit->value > uint64_t(INT64_MAX)) return false;  // 2^63, only ever negated
    return out = int64_t(lit->value), true;
  }
  if (const auto* n = e.as<NameExpr>()) {
    const Symbol* s = n->symbol;
    if (!s) return false;
    if (s->kind == SymbolKind::Const && !s->value.isFloat && s->value.function.empty() && !s->wave64Value &&
        s->unavailable.empty() && !s->perSpecialization)
      return out = s->value.i, true;
    if (isKernelDim(*s))
      if (auto it = spec_.staticDims.find(s->name); it != spec_.staticDims.end()) return out = it->second, true;
    return false;
  }
  if (const auto* u = e.as<UnaryExpr>(); u && u->op == UnaryOp::Neg) {
    int64_t v;
    if (!constantValue(*u->operand, v) || v == INT64_MIN) return false;  // -(-2^63) overflows
    return out = -v, true;
  }
  if (const auto* b = e.as<BinaryExpr>()) {
    int64_t l, r;
    if (!constantValue(*b->lhs, l) || !constantValue(*b->rhs, r)) return false;
    switch (b->op) {
      // An overflowing constant is no known constant (and would be UB here).
      case BinaryOp::Add: return !__builtin_add_overflow(l, r, &out);
      case BinaryOp::Sub: return !__builtin_sub_overflow(l, r, &out);
      case BinaryOp::Mul: return !__builtin_mul_overflow(l, r, &out);
      case BinaryOp::FloorDiv:
        if (r <= 0 || l < 0) return false;
        return out = l / r, true;
      default: return false;
    }
  }
  return false;
}

int64_t Divisibility::symbolOf(const Symbol& s) const {
  if (auto it = solved_.find(&s); it != solved_.end()) return it->second;
  switch (s.kind) {
    case SymbolKind::Const:
      // A const only the specialization knows has a stand-in value until
      // the driver evaluates it (generate.cpp): unknown before that.
      if (!s.value.isFloat && s.value.function.empty() && s.unavailable.empty() && !s.perSpecialization) {
        int64_t d = powerOfTwoDivisor(s.value.i);
        if (s.wave64Value) d = std::min(d, powerOfTwoDivisor(s.wave64Value->i));
        return d;
      }
      return 1;
    case SymbolKind::DimSymbol:
      if (!isKernelDim(s)) return 1;
      if (auto it = spec_.staticDims.find(s.name); it != spec_.staticDims.end()) return powerOfTwoDivisor(it->second);
      if (auto it = spec_.divisible.find(s.name); it != spec_.divisible.end()) return it->second;
      return 1;
    default: return 1;  // parameters, loop variables of other functions
  }
}

int64_t Divisibility::of(const Expr& e) const {
  if (!isInteger(e.type)) return 1;
  int64_t value;
  if (constantValue(e, value)) return powerOfTwoDivisor(value);
  switch (e.kind) {
    case ExprKind::Name: return e.as<NameExpr>()->symbol ? symbolOf(*e.as<NameExpr>()->symbol) : 1;
    case ExprKind::Unary: {
      const auto& u = *e.as<UnaryExpr>();
      return u.op == UnaryOp::Neg || u.op == UnaryOp::Pos ? of(*u.operand) : 1;
    }
    case ExprKind::Binary: {
      const auto& b = *e.as<BinaryExpr>();
      switch (b.op) {
        case BinaryOp::Add:
        case BinaryOp::Sub: return std::min(of(*b.lhs), of(*b.rhs));
        case BinaryOp::Mul: return product(of(*b.lhs), of(*b.rhs));
        // a % m = a - (a // m) * m: what divides both divides it.
        case BinaryOp::Mod: return std::min(of(*b.lhs), of(*b.rhs));
        case BinaryOp::Shl: {
          int64_t shift;
          if (!constantValue(*b.rhs, shift) || shift < 0 || shift >= 30) return of(*b.lhs);
          return product(of(*b.lhs), int64_t(1) << shift);
        }
        default: return 1;
      }
    }
    case ExprKind::Ternary: {
      const auto& t = *e.as<TernaryExpr>();
      return std::min(of(*t.thenValue), of(*t.elseValue));
    }
    case ExprKind::Call: {
      const auto& c = *e.as<CallExpr>();
      if (c.symbol) return 1;  // a def or closure: its result is not followed
      const BuiltinInfo* b = findBuiltin(c.callee);
      if (!b) {
        // A conversion between integer types keeps the low bits, so every
        // power of two below 2^30 that divided the value still does.
        return c.args.size() == 1 && isInteger(c.args[0]->type) ? of(*c.args[0]) : 1;
      }
      if (b->id == BuiltinId::MultipleOf) {
        int64_t n = 1;
        constantValue(*c.args[1], n);
        return std::max(of(*c.args[0]), powerOfTwoDivisor(n));
      }
      if ((b->id == BuiltinId::Min || b->id == BuiltinId::Max) && c.args.size() == 2)
        return std::min(of(*c.args[0]), of(*c.args[1]));
      return 1;
    }
    default: return 1;
  }
}

int64_t Divisibility::dimOf(const Symbol& tensor, size_t axis) const {
  const Expr& d = *tensor.shape.at(axis);
  int64_t g = of(d);
  if (tensor.kind == SymbolKind::TensorParam)
    if (auto it = spec_.divisible.find(dimDivisibleName(tensor.name, int(axis))); it != spec_.divisible.end())
      g = std::max<int64_t>(g, it->second);
  return g;
}

int64_t Divisibility::strideOf(const Symbol& tensor, size_t axis) const {
  const size_t rank = tensor.shape.size();
  if (tensor.strided) {
    if (tensor.unitInnerStride && axis + 1 == rank) return 1;
    auto it = spec_.divisible.find(strideDivisibleName(tensor.name, int(axis)));
    return it != spec_.divisible.end() ? it->second : 1;
  }
  int64_t g = 1;
  for (size_t k = axis + 1; k < rank; ++k) g = product(g, dimOf(tensor, k));
  return g;
}

}  // namespace spindle
