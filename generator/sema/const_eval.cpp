#include "sema/const_eval.h"

#include <algorithm>

#include <cmath>
#include <limits>

#include "frontend/ast_walk.h"
#include "sema/builtins.h"

namespace spindle {

namespace {

// The pure float builtins at compile time, in double precision (a const's
// float value is a double; docs/language.md 3.2).
double floatMath(BuiltinId id, const std::vector<ConstValue>& a) {
  const double x = a[0].asDouble();
  if (id == BuiltinId::Exp) return std::exp(x);
  if (id == BuiltinId::Exp2) return std::exp2(x);
  if (id == BuiltinId::Log) return std::log(x);
  if (id == BuiltinId::Log2) return std::log2(x);
  if (id == BuiltinId::Sqrt) return std::sqrt(x);
  if (id == BuiltinId::Rsqrt) return 1.0 / std::sqrt(x);
  if (id == BuiltinId::Sin) return std::sin(x);
  if (id == BuiltinId::Cos) return std::cos(x);
  if (id == BuiltinId::Tanh) return std::tanh(x);
  if (id == BuiltinId::Erf) return std::erf(x);
  if (id == BuiltinId::Floor) return std::floor(x);
  if (id == BuiltinId::Ceil) return std::ceil(x);
  if (id == BuiltinId::Pow) return std::pow(x, a[1].asDouble());
  if (id == BuiltinId::Fma) return std::fma(x, a[1].asDouble(), a[2].asDouble());
  if (id == BuiltinId::Tan) return std::tan(x);
  if (id == BuiltinId::Asin) return std::asin(x);
  if (id == BuiltinId::Acos) return std::acos(x);
  if (id == BuiltinId::Atan) return std::atan(x);
  if (id == BuiltinId::Atan2) return std::atan2(x, a[1].asDouble());
  if (id == BuiltinId::Sinh) return std::sinh(x);
  if (id == BuiltinId::Cosh) return std::cosh(x);
  if (id == BuiltinId::Asinh) return std::asinh(x);
  if (id == BuiltinId::Acosh) return std::acosh(x);
  if (id == BuiltinId::Atanh) return std::atanh(x);
  if (id == BuiltinId::Expm1) return std::expm1(x);
  if (id == BuiltinId::Log1p) return std::log1p(x);
  if (id == BuiltinId::Log10) return std::log10(x);
  if (id == BuiltinId::Cbrt) return std::cbrt(x);
  if (id == BuiltinId::Erfc) return std::erfc(x);
  if (id == BuiltinId::Lgamma) return std::lgamma(x);
  if (id == BuiltinId::Hypot) return std::hypot(x, a[1].asDouble());
  if (id == BuiltinId::Copysign) return std::copysign(x, a[1].asDouble());
  if (id == BuiltinId::Trunc) return std::trunc(x);
  if (id == BuiltinId::Round || id == BuiltinId::Rint) return std::nearbyint(x);  // half to even
  if (id == BuiltinId::Fmod) return std::fmod(x, a[1].asDouble());
  if (id == BuiltinId::FastExp) return std::exp(x);
  if (id == BuiltinId::FastLog) return std::log(x);
  if (id == BuiltinId::FastExp2) return std::exp2(x);
  if (id == BuiltinId::FastDiv) return x / a[1].asDouble();
  if (id == BuiltinId::FastTanh) return std::tanh(x);
  return std::nan("");  // a FloatMath builtin this list lacks: a NaN a test would see
}

// Integers are computed modulo 2^64 here (the evaluator itself must not
// overflow), and each typed integer result (not a weak one: literals and
// unannotated consts keep 64 bits, docs/language.md 3.2) is brought into the
// type the generated code computes it in. So a condition that a
// static dim makes constant is pruned as the dynamic kernel would decide it
// (`u32(M) - 5` wraps, `-u32(M)` is positive; found by the cpu fuzzer).
uint64_t bitsOf(int64_t v) { return static_cast<uint64_t>(v); }
int64_t ofBits(uint64_t u) { return static_cast<int64_t>(u); }  // two's complement

int64_t wrapTo(int64_t v, ScalarType t) {
  const int n = scalarBits(t);
  if (n >= 64) return v;
  const uint64_t mask = (uint64_t(1) << n) - 1, u = bitsOf(v) & mask;
  return isSigned(t) && (u >> (n - 1)) ? ofBits(u | ~mask) : ofBits(u);
}

// The type the generated C++ computes `e` in: its own, except that C++
// promotes 8- and 16-bit operands of an operator to int (a cast, a call and
// a name keep their type).
ScalarType cppType(const Expr& e) {
  const bool operation = e.kind == ExprKind::Unary || e.kind == ExprKind::Binary || e.kind == ExprKind::Ternary;
  return operation && scalarBits(e.type) < 32 ? ScalarType::I32 : e.type;
}

// A u64's values past 2^63 are negative int64_t bits: compared, divided and
// shifted right as unsigned.
bool isUnsigned64(ScalarType t) { return isInteger(t) && !isSigned(t) && scalarBits(t) == 64; }

class ConstEvaluator {
 public:
  ConstEvaluator(const ConstLookup& lookup, ConstEvalFailure* failure, const EvalFacts& facts)
      : lookup_(lookup), failure_(failure), facts_(facts) {}

  std::optional<ConstValue> eval(const Expr& e) {
    std::optional<ConstValue> v = evalUntyped(e);
    if (v && !v->isFloat && v->function.empty() && isInteger(e.type) && !isWeak(e)) v->i = wrapTo(v->i, cppType(e));
    return v;
  }

 private:
  std::optional<ConstValue> evalUntyped(const Expr& e) {
    switch (e.kind) {
      case ExprKind::IntLit: {
        auto v = e.as<IntLitExpr>()->value;
        if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return fail(e, "integer too large");
        return ConstValue::ofInt(static_cast<int64_t>(v));
      }
      case ExprKind::FloatLit: return ConstValue::ofFloat(e.as<FloatLitExpr>()->value);
      case ExprKind::BoolLit: return ConstValue::ofInt(e.as<BoolLitExpr>()->value ? 1 : 0);
      case ExprKind::Name: {
        auto v = lookup_(*e.as<NameExpr>());
        if (!v) return fail(e, "'" + e.as<NameExpr>()->name + "' has no compile-time value");
        return v;
      }
      case ExprKind::Unary: return evalUnary(*e.as<UnaryExpr>());
      case ExprKind::Binary: return evalBinary(*e.as<BinaryExpr>());
      case ExprKind::Ternary: {
        const auto& t = *e.as<TernaryExpr>();
        auto c = eval(*t.cond);
        if (!c) return c;
        return c->asDouble() != 0 ? eval(*t.thenValue) : eval(*t.elseValue);
      }
      case ExprKind::Call: return evalCall(*e.as<CallExpr>());
      case ExprKind::TypeTest: {
        const auto& t = *e.as<TypeTestExpr>();
        if (auto v = evaluateTypeTest(t, facts_.typeArgs)) return ConstValue::ofInt(*v ? 1 : 0);
        return fail(e, "'" + t.param + "' is bound when the kernel is specialized");
      }
      case ExprKind::Index:
      case ExprKind::List:
      case ExprKind::Tuple: return fail(e, "not a constant expression");
    }
    return fail(e, "not a constant expression");
  }

  std::optional<ConstValue> fail(const Expr& e, std::string reason) {
    if (failure_ && !failure_->where) {
      failure_->where = &e;
      failure_->reason = std::move(reason);
    }
    return std::nullopt;
  }

  std::optional<ConstValue> evalUnary(const UnaryExpr& u) {
    if (u.op == UnaryOp::IsNone) {
      const auto* n = u.operand->as<NameExpr>();
      const Symbol* s = n ? n->symbol : nullptr;
      if (s && s->presence == Symbol::Presence::Unknown && facts_.absentTensors && s->optional)
        return ConstValue::ofInt(facts_.absentTensors->count(s->name) ? 1 : 0);
      if (!s || s->presence == Symbol::Presence::Unknown)
        return fail(u, "whether an optional tensor is present is known per specialization");
      return ConstValue::ofInt(s->presence == Symbol::Presence::Absent ? 1 : 0);
    }
    auto v = eval(*u.operand);
    if (!v) return v;
    switch (u.op) {
      case UnaryOp::Neg: return v->isFloat ? ConstValue::ofFloat(-v->f) : ConstValue::ofInt(ofBits(0 - bitsOf(v->i)));
      case UnaryOp::Pos: return v;
      case UnaryOp::Not: return ConstValue::ofInt(v->asDouble() == 0 ? 1 : 0);
      case UnaryOp::BitNot:
        if (v->isFloat) return fail(u, "'~' needs an integer");
        return ConstValue::ofInt(~v->i);
      case UnaryOp::IsNone: return std::nullopt;  // handled above
    }
    return std::nullopt;
  }

  std::optional<ConstValue> evalBinary(const BinaryExpr& b) {
    auto l = eval(*b.lhs);
    if (!l) return l;
    // `and`/`or` decided by their left operand are constant whatever the
    // right one is (`bias is not None and j < N` with bias absent).
    if (b.op == BinaryOp::And && l->asDouble() == 0) return ConstValue::ofInt(0);
    if (b.op == BinaryOp::Or && l->asDouble() != 0) return ConstValue::ofInt(1);
    auto r = eval(*b.rhs);
    if (!r) return r;
    bool asFloat = l->isFloat || r->isFloat;
    double lf = l->asDouble(), rf = r->asDouble();
    int64_t li = l->i, ri = r->i;
    const uint64_t lu = bitsOf(li), ru = bitsOf(ri);
    const bool unsigned64 = isUnsigned64(b.type) || isUnsigned64(b.lhs->type) || isUnsigned64(b.rhs->type);
    // Integers compare exactly (a double holds 53 bits), u64 as unsigned.
    auto less = [&](bool orEqual) {
      if (asFloat) return orEqual ? lf <= rf : lf < rf;
      if (unsigned64) return orEqual ? lu <= ru : lu < ru;
      return orEqual ? li <= ri : li < ri;
    };
    const bool equal = asFloat ? lf == rf : li == ri;
    switch (b.op) {
      case BinaryOp::Add: return asFloat ? ConstValue::ofFloat(lf + rf) : ConstValue::ofInt(ofBits(lu + ru));
      case BinaryOp::Sub: return asFloat ? ConstValue::ofFloat(lf - rf) : ConstValue::ofInt(ofBits(lu - ru));
      case BinaryOp::Mul: return asFloat ? ConstValue::ofFloat(lf * rf) : ConstValue::ofInt(ofBits(lu * ru));
      case BinaryOp::Div: return ConstValue::ofFloat(lf / rf);
      case BinaryOp::FloorDiv:
      case BinaryOp::Mod:
        if (asFloat) return fail(b, "'//' and '%' need integers");
        if (ri == 0) return fail(b, "division by zero");
        // C++ truncation, as the generated code computes it.
        if (unsigned64) return ConstValue::ofInt(ofBits(b.op == BinaryOp::FloorDiv ? lu / ru : lu % ru));
        if (li == std::numeric_limits<int64_t>::min() && ri == -1)  // wraps, as the two's complement result
          return ConstValue::ofInt(b.op == BinaryOp::FloorDiv ? li : 0);
        return ConstValue::ofInt(b.op == BinaryOp::FloorDiv ? li / ri : li % ri);
      case BinaryOp::Pow: {
        if (r->isFloat) return fail(b, "the exponent of '**' must be an integer");
        if (!asFloat && ri >= 0) {
          uint64_t result = 1;
          for (int64_t k = 0; k < ri && k < 64; ++k) result *= lu;
          return ConstValue::ofInt(ofBits(result));
        }
        return ConstValue::ofFloat(std::pow(lf, rf));
      }
      case BinaryOp::BitAnd:
      case BinaryOp::BitOr:
      case BinaryOp::BitXor:
      case BinaryOp::Shl:
      case BinaryOp::Shr:
        if (asFloat) return fail(b, "bitwise operators need integers");
        if ((b.op == BinaryOp::Shl || b.op == BinaryOp::Shr) && (ri < 0 || ri > 63))
          return fail(b, "shift count out of range");
        if (b.op == BinaryOp::BitAnd) return ConstValue::ofInt(li & ri);
        if (b.op == BinaryOp::BitOr) return ConstValue::ofInt(li | ri);
        if (b.op == BinaryOp::BitXor) return ConstValue::ofInt(li ^ ri);
        if (b.op == BinaryOp::Shl) return ConstValue::ofInt(ofBits(lu << ri));
        return ConstValue::ofInt(isUnsigned64(b.type) ? ofBits(lu >> ri) : li >> ri);
      case BinaryOp::Lt: return ConstValue::ofInt(less(false));
      case BinaryOp::Le: return ConstValue::ofInt(less(true));
      case BinaryOp::Gt: return ConstValue::ofInt(!less(true));
      case BinaryOp::Ge: return ConstValue::ofInt(!less(false));
      case BinaryOp::Eq: return ConstValue::ofInt(equal);
      case BinaryOp::Ne: return ConstValue::ofInt(!equal);
      case BinaryOp::And: return ConstValue::ofInt(lf != 0 && rf != 0);
      case BinaryOp::Or: return ConstValue::ofInt(lf != 0 || rf != 0);
    }
    return std::nullopt;
  }

  std::optional<ConstValue> evalCall(const CallExpr& c) {
    const BuiltinInfo* b = findBuiltin(c.callee);
    // dim(x, k) is the k-th dim as written in x's type: a number, a const or
    // a dim symbol (compile-time when that dim is static).
    if (b && b->id == BuiltinId::Dim && c.args.size() == 2) {
      const auto* tensor = c.args[0]->as<NameExpr>();
      auto axis = eval(*c.args[1]);
      if (!tensor || !tensor->symbol || !axis || axis->isFloat || axis->i < 0 ||
          axis->i >= static_cast<int64_t>(tensor->symbol->shape.size()))
        return fail(c, "dim() needs a tensor and a constant axis");
      return eval(*tensor->symbol->shape[static_cast<size_t>(axis->i)]);
    }
    if (b && b->id == BuiltinId::ResidentBlocks && c.args.empty() && c.kwargs.empty()) {
      if (!facts_.residentBlocks) return fail(c, "resident_blocks() is known only when launching on a device");
      return ConstValue::ofInt(facts_.residentBlocks());
    }
    if (!b && c.callee == "sizeof" && c.args.size() == 1) {
      const auto* arg = c.args[0]->as<NameExpr>();
      std::optional<ScalarType> t = arg ? scalarFromName(arg->name) : std::nullopt;
      if (arg && !t && facts_.typeArgs)
        if (auto it = facts_.typeArgs->find(arg->name); it != facts_.typeArgs->end()) t = it->second;
      if (!t) return fail(c, "sizeof(" + (arg ? arg->name : std::string("...")) + ") is known once its type is bound");
      return ConstValue::ofInt(int64_t(scalarBytes(*t)));
    }
    if (b && b->category == BuiltinCategory::TypeLimit && c.args.size() == 1) {
      const auto* arg = c.args[0]->as<NameExpr>();
      std::optional<ScalarType> t = arg ? scalarFromName(arg->name) : std::nullopt;
      if (arg && !t && facts_.typeArgs)
        if (auto it = facts_.typeArgs->find(arg->name); it != facts_.typeArgs->end()) t = it->second;
      if (!t)
        return fail(c, c.callee + "(" + (arg ? arg->name : std::string("...")) + ") is known once its type is bound");
      if (auto v = typeLimit(b->id, *t)) return v;
      return fail(c, c.callee + " needs a numeric type");
    }
    if (b && b->id == BuiltinId::WarpSize && c.args.empty() && c.kwargs.empty()) {
      if (facts_.warpSize <= 0) return fail(c, "warp_size() depends on the target: it is known at launch");
      return ConstValue::ofInt(facts_.warpSize);
    }
    std::vector<ConstValue> args;
    for (const auto& a : c.args) {
      auto v = eval(*a);
      if (!v) return v;
      args.push_back(*v);
    }
    if (b && c.kwargs.empty()) {
      if (b->id == BuiltinId::Cdiv && args.size() == 2 && !args[0].isFloat && !args[1].isFloat) {
        if (args[1].i == 0) return fail(c, "division by zero");
        const uint64_t sum = bitsOf(args[0].i) + bitsOf(args[1].i) - 1;
        if (isUnsigned64(c.type)) return ConstValue::ofInt(ofBits(sum / bitsOf(args[1].i)));
        return ConstValue::ofInt(ofBits(sum) / args[1].i);
      }
      if (b->category == BuiltinCategory::FloatPredicate && args.size() == 1) {
        const double v = args[0].asDouble();
        const bool r = b->id == BuiltinId::IsNan      ? std::isnan(v)
                       : b->id == BuiltinId::IsInf    ? std::isinf(v)
                       : b->id == BuiltinId::IsFinite ? std::isfinite(v)
                                                      : std::signbit(v);
        return ConstValue::ofInt(r ? 1 : 0);
      }
      if (b->category == BuiltinCategory::FloatMath && int(args.size()) >= b->minArgs && int(args.size()) <= b->maxArgs)
        return ConstValue::ofFloat(floatMath(b->id, args));
      if (b->id == BuiltinId::Abs && args.size() == 1)
        return args[0].isFloat                          ? ConstValue::ofFloat(std::fabs(args[0].f))
               : args[0].i < 0 && !isUnsigned64(c.type) ? ConstValue::ofInt(ofBits(0 - bitsOf(args[0].i)))
                                                        : args[0];
      if ((b->id == BuiltinId::Min || b->id == BuiltinId::Max) && args.size() == 2) {
        // Integers exactly (u64 as unsigned), floats as doubles.
        const bool ints = !args[0].isFloat && !args[1].isFloat;
        const bool firstLess = !ints                  ? args[0].asDouble() < args[1].asDouble()
                               : isUnsigned64(c.type) ? bitsOf(args[0].i) < bitsOf(args[1].i)
                                                      : args[0].i < args[1].i;
        const bool same = ints ? args[0].i == args[1].i : args[0].asDouble() == args[1].asDouble();
        const bool takeFirst = same || (b->id == BuiltinId::Min ? firstLess : !firstLess);
        return takeFirst ? args[0] : args[1];
      }
    }
    if (auto t = scalarFromName(c.callee); t && args.size() == 1) {
      if (isFloat(*t)) return ConstValue::ofFloat(args[0].asDouble());
      if (*t == ScalarType::Bool) return ConstValue::ofInt(args[0].asDouble() != 0 ? 1 : 0);
      return ConstValue::ofInt(args[0].isFloat ? static_cast<int64_t>(args[0].f) : args[0].i);
    }
    return fail(c, "'" + c.callee + "(...)' is not allowed in a constant expression");
  }

  const ConstLookup& lookup_;
  ConstEvalFailure* failure_;
  const EvalFacts& facts_;
};

}  // namespace

ConstLookup constsOnly() {
  return [](const NameExpr& n) -> std::optional<ConstValue> {
    if (n.symbol && n.symbol->kind == SymbolKind::Const && !n.symbol->perSpecialization && !n.symbol->wave64Value)
      return n.symbol->value;
    return std::nullopt;
  };
}

namespace {

// A name's value given `values` by name: consts (a module const computed
// from dims is evaluated from its expression, whose dim names are unbound,
// with the same values), kernel dims, and with `scalars` integer scalar
// parameters.
std::optional<ConstValue> namedValue(const NameExpr& n, const std::map<std::string, int64_t>& values, bool scalars,
                                     const EvalFacts* facts) {
  auto byName = [&]() -> std::optional<ConstValue> {
    auto it = values.find(n.name);
    if (it == values.end()) return std::nullopt;
    return ConstValue::ofInt(it->second);
  };
  if (!n.symbol) return byName();  // a dim in a module const's expression
  const Symbol& s = *n.symbol;
  if (s.kind == SymbolKind::Const && s.perSpecialization)
    return evaluateConst(
        *s.init, [&](const NameExpr& m) { return namedValue(m, values, scalars, facts); }, nullptr,
        facts ? *facts : EvalFacts{});
  if (s.kind == SymbolKind::Const && s.wave64Value) {
    if (!facts || (facts->warpSize != 32 && facts->warpSize != 64)) return std::nullopt;
    return facts->warpSize == 64 ? *s.wave64Value : s.value;
  }
  if (s.kind == SymbolKind::Const) return s.value;
  // Static dims are the kernel's; a def's dim of the same name is bound
  // from its argument at each call.
  if (s.kind == SymbolKind::DimSymbol && isKernelDim(s)) return byName();
  if (scalars && s.kind == SymbolKind::ScalarParam) return byName();
  return std::nullopt;
}

}  // namespace

ConstLookup constsAndDims(const std::map<std::string, int64_t>& dims, const EvalFacts* facts) {
  return [&dims, facts](const NameExpr& n) { return namedValue(n, dims, /*scalars=*/false, facts); };
}

PerWarpWidth evaluateForWarpWidths(const Expr& expr, const std::map<std::string, int64_t>& dims,
                                   const std::map<std::string, ScalarType>* typeArgs,
                                   const std::set<std::string>* absentTensors) {
  EvalFacts facts32{{}, 32, typeArgs, absentTensors}, facts64{{}, 64, typeArgs, absentTensors};
  PerWarpWidth out;
  out.wave32 = evaluateConst(expr, constsAndDims(dims, &facts32), &out.failure32, facts32);
  out.wave64 = evaluateConst(expr, constsAndDims(dims, &facts64), &out.failure64, facts64);
  return out;
}

ConstLookup launchValues(const std::map<std::string, int64_t>& values, const EvalFacts* facts) {
  return [&values, facts](const NameExpr& n) { return namedValue(n, values, /*scalars=*/true, facts); };
}

std::optional<ConstValue> evaluateConst(const Expr& expr, const ConstLookup& lookup, ConstEvalFailure* failure,
                                        const EvalFacts& facts) {
  return ConstEvaluator(lookup, failure, facts).eval(expr);
}

std::optional<ConstValue> typeLimit(BuiltinId id, ScalarType t) {
  if (isInteger(t)) {
    if (id == BuiltinId::MinNormal) return std::nullopt;
    const int bits = scalarBits(t);
    if (!isSigned(t))  // u64's largest is past an int64_t: a float value then
      return id == BuiltinId::MinValue ? ConstValue::ofInt(0)
             : bits == 64              ? ConstValue::ofFloat(18446744073709551615.0)
                                       : ConstValue::ofInt((int64_t(1) << bits) - 1);
    const int64_t max = bits == 64 ? INT64_MAX : (int64_t(1) << (bits - 1)) - 1;
    return ConstValue::ofInt(id == BuiltinId::MaxValue ? max : -max - 1);
  }
  double max = 0, minNormal = 0;
  switch (t) {
    case ScalarType::F16: max = 65504.0, minNormal = std::ldexp(1.0, -14); break;
    case ScalarType::BF16: max = std::ldexp(255.0, 120), minNormal = std::ldexp(1.0, -126); break;
    case ScalarType::F8E4M3: max = 448.0, minNormal = std::ldexp(1.0, -6); break;
    case ScalarType::F8E5M2: max = 57344.0, minNormal = std::ldexp(1.0, -14); break;
    case ScalarType::F32: max = double(std::numeric_limits<float>::max()), minNormal = std::ldexp(1.0, -126); break;
    case ScalarType::F64: max = std::numeric_limits<double>::max(), minNormal = std::ldexp(1.0, -1022); break;
    default: return std::nullopt;
  }
  return ConstValue::ofFloat(id == BuiltinId::MaxValue ? max : id == BuiltinId::MinValue ? -max : minNormal);
}

std::optional<bool> evaluateTypeTest(const TypeTestExpr& test, const std::map<std::string, ScalarType>* typeArgs) {
  if (!typeArgs || test.resolved.size() != test.types.size()) return std::nullopt;
  auto bound = typeArgs->find(test.param);
  if (bound == typeArgs->end()) return std::nullopt;
  bool listed = std::find(test.resolved.begin(), test.resolved.end(), bound->second) != test.resolved.end();
  return listed != test.negated;
}

bool containsTypeTest(const Expr& e) {
  if (e.as<TypeTestExpr>()) return true;
  bool found = false;
  forEachChild(e, [&](const Expr& c) { found = found || containsTypeTest(c); });
  return found;
}

}  // namespace spindle
