// Expressions to C++ text, with parentheses only where C++ precedence needs
// them (and where clang would warn that a reader might misread).
#include <algorithm>
#include <cmath>

#include "function_printer.h"
#include "sema/builtins.h"
#include "sema/const_eval.h"
#include "sema/tensor_arguments.h"

namespace spindle {

using namespace cpp_prec;

std::string cppType(ScalarType t) {
  if (t == ScalarType::Invalid) return "void";
  return std::string(scalarCppName(t));
}

namespace {

int binaryPrec(BinaryOp op) {
  switch (op) {
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::FloorDiv:
    case BinaryOp::Mod: return kMultiplicative;
    case BinaryOp::Add:
    case BinaryOp::Sub: return kAdditive;
    case BinaryOp::Shl:
    case BinaryOp::Shr: return kShift;
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge: return kRelational;
    case BinaryOp::Eq:
    case BinaryOp::Ne: return kEquality;
    case BinaryOp::BitAnd: return kBitAnd;
    case BinaryOp::BitXor: return kBitXor;
    case BinaryOp::BitOr: return kBitOr;
    case BinaryOp::And: return kLogicalAnd;
    case BinaryOp::Or: return kLogicalOr;
    case BinaryOp::Pow: return kPostfix;
  }
  return kPrimary;
}

const char* cppOperator(BinaryOp op) {
  // Spindle's spelling, except where C++ spells the operator otherwise.
  if (op == BinaryOp::FloorDiv) return "/";  // truncates like C++ (docs/language.md 4.7)
  if (op == BinaryOp::And) return "&&";
  if (op == BinaryOp::Or) return "||";
  return binaryOpSpelling(op);
}

// Operands that clang's -Wparentheses would flag get parentheses even when
// precedence does not need them: `a && b || c`, `a << b + c`, `a & b | c`.
int operandMinPrec(int parentPrec, int childPrec) {
  if (parentPrec == kLogicalOr && childPrec == kLogicalAnd) return kLogicalAnd + 1;
  if (parentPrec == kShift && (childPrec == kAdditive || childPrec == kMultiplicative)) return kPrimary;
  if (parentPrec >= kBitOr && parentPrec <= kBitAnd && childPrec != parentPrec && childPrec < kUnary) return kPrimary;
  return parentPrec;
}

const char* axisName(int64_t axis) { return axis == 0 ? "x" : axis == 1 ? "y" : "z"; }

}  // namespace

std::string FunctionPrinter::paren(const CppExpr& e, int minPrec) const {
  return e.prec < minPrec ? "(" + e.text + ")" : e.text;
}

// f16/bf16 are storage types: every read used in arithmetic becomes float.
std::string FunctionPrinter::loadValue(const CppExpr& e, ScalarType t, int minPrec) const {
  if (isStorageOnly(t)) return "float(" + e.text + ")";
  return paren(e, minPrec);
}

std::string FunctionPrinter::value(const Expr& e, int minPrec) const { return loadValue(expr(e), e.type, minPrec); }

CppExpr FunctionPrinter::expr(const Expr& e) const {
  if (!hoisted_.empty())
    if (auto it = hoisted_.find(&e); it != hoisted_.end()) return {it->second, kPrimary};
  switch (e.kind) {
    case ExprKind::IntLit:
    case ExprKind::FloatLit:
    case ExprKind::BoolLit: return literal(e);
    case ExprKind::Name: return nameExpr(*e.as<NameExpr>());
    case ExprKind::Unary: return unary(*e.as<UnaryExpr>());
    case ExprKind::Binary: return binary(*e.as<BinaryExpr>());
    case ExprKind::Ternary: {
      const auto& t = *e.as<TernaryExpr>();
      // A condition this specialization decides (consts, static dims and
      // types, the same at both warp widths) prints the branch it picks:
      // `s if VS == 2 else 0` at a D where VS is 1 is `0`, not `(1 == 2 ? s
      // : 0)`. Only where that branch has the expression's own type; the
      // presence and type tests that pruning folds before typing
      // (passes/prune_branches.cpp) never reach here.
      if (ctx_.spec) {
        const PerWarpWidth c = evaluateForWarpWidths(*t.cond, ctx_.spec->staticDims, &ctx_.spec->typeArgs);
        if (c.known() && (c.wave32->asDouble() != 0) == (c.wave64->asDouble() != 0)) {
          const Expr& picked = c.wave32->asDouble() != 0 ? *t.thenValue : *t.elseValue;
          if (picked.type == e.type) return expr(picked);
        }
      }
      return {
          value(*t.cond, kLogicalOr) + " ? " + value(*t.thenValue, kTernary) + " : " + value(*t.elseValue, kTernary),
          kTernary};
    }
    case ExprKind::Call: return call(*e.as<CallExpr>());
    case ExprKind::Index: return index(*e.as<IndexExpr>());
    case ExprKind::TypeTest:  // decided by this specialization's types (a branch on it is pruned)
      return {e.as<TypeTestExpr>()->value ? "true" : "false", kPrimary};
    case ExprKind::List:
    case ExprKind::Tuple: break;  // printed by their statements (function_printer.cpp)
  }
  SPINDLE_INTERNAL_CHECK(false, "cannot print a {} expression", exprKindName(e.kind));
  return {};
}

namespace {
// The suffix an integer literal of type `t` needs when its digits do not
// fit an int.
const char* wideIntSuffix(ScalarType t) { return t == ScalarType::U64 ? "ull" : t == ScalarType::U32 ? "u" : "ll"; }

// Infinity and NaN have no C++ literal: the prelude's helpers.
CppExpr nonFiniteFloat(bool nan, bool negative, bool isDouble) {
  std::string call = nan ? (isDouble ? "__spn_nan()" : "__spn_nanf()") : (isDouble ? "__spn_inf()" : "__spn_inff()");
  return negative ? CppExpr{"-" + call, kUnary} : CppExpr{call, kPostfix};
}

// Whether the device compiler sees `e` as a number: literals, consts,
// static dims and the warp width, under arithmetic and casts.
bool knownWhenCompiled(const Expr& e, const PrintContext& ctx) {
  if (e.as<IntLitExpr>()) return true;
  if (const auto* n = e.as<NameExpr>())
    return n->symbol && (n->symbol->kind == SymbolKind::Const ||
                         (n->symbol->kind == SymbolKind::DimSymbol && ctx.isStaticDim(n->symbol)));
  if (const auto* u = e.as<UnaryExpr>()) return knownWhenCompiled(*u->operand, ctx);
  if (const auto* b = e.as<BinaryExpr>()) return knownWhenCompiled(*b->lhs, ctx) && knownWhenCompiled(*b->rhs, ctx);
  if (const auto* c = e.as<CallExpr>(); c && !c->symbol) {
    if (const BuiltinInfo* info = findBuiltin(c->callee); info && info->id == BuiltinId::WarpSize) return true;
    return scalarFromName(c->callee) && c->args.size() == 1 && knownWhenCompiled(*c->args[0], ctx);  // a cast
  }
  return false;
}

// A float literal's text for f32 or f64: a '.' or an exponent, and the 'f'
// of an f32.
std::string floatLiteralText(std::string text, bool isDouble) {
  if (text.find_first_of(".eE") == std::string::npos) text += ".0";
  return isDouble ? text : text + "f";
}
}  // namespace

CppExpr FunctionPrinter::literal(const Expr& e) const {
  if (auto* b = e.as<BoolLitExpr>()) return {b->value ? "true" : "false", kPrimary};
  if (auto* i = e.as<IntLitExpr>()) {
    // An integer literal in a float context is written as a float literal of
    // that type, so every operand of a math call has the call's type.
    if (isFloat(e.type)) return {floatLiteralText(std::to_string(i->value), e.type == ScalarType::F64), kPrimary};
    return {i->value > INT32_MAX ? i->text + wideIntSuffix(e.type) : i->text, kPrimary};
  }
  const auto& f = *e.as<FloatLitExpr>();
  bool isDouble = e.type == ScalarType::F64;
  if (f.text == "inf" || f.text == "nan") return nonFiniteFloat(f.text == "nan", false, isDouble);
  return {isFloat(e.type) ? floatLiteralText(f.text, isDouble) : f.text, kPrimary};
}

CppExpr compileTimeLiteral(const ConstValue& v, ScalarType t) {
  if (isFloat(t) || v.isFloat) {
    bool isDouble = t == ScalarType::F64;
    double d = v.asDouble();
    if (std::isnan(d) || std::isinf(d)) return nonFiniteFloat(std::isnan(d), d < 0, isDouble);
    // The shortest text that reads back as exactly this double.
    return {floatLiteralText(fmt::format("{}", d), isDouble), d < 0 ? kUnary : kPrimary};
  }
  if (t == ScalarType::Bool) return {v.i ? "true" : "false", kPrimary};
  // As an integer literal of that value is printed (literal() above): the
  // digits, with a suffix only where they do not fit an int.
  if (v.i == INT64_MIN) return {"(-9223372036854775807ll - 1)", kPrimary};  // no literal of its own
  std::string text = fmt::format("{}", v.i);
  if (v.i > INT32_MAX || v.i < INT32_MIN) text += wideIntSuffix(t);
  return {text, v.i < 0 ? kUnary : kPrimary};
}

std::string warpWidthChoice(const Symbol& c) {
  return fmt::format("__SPN_WARP_SIZE == 64 ? {} : {}", compileTimeLiteral(*c.wave64Value, c.type).text,
                     compileTimeLiteral(c.value, c.type).text);
}

bool printsAsLiteral(const Expr& e) {
  if (e.kind == ExprKind::IntLit || e.kind == ExprKind::FloatLit) return true;
  const auto* n = e.as<NameExpr>();
  return n && n->symbol && n->symbol->kind == SymbolKind::Const && n->symbol->weakType && !n->symbol->wave64Value;
}

CppExpr FunctionPrinter::nameExpr(const NameExpr& n) const {
  const Symbol* s = n.symbol;
  SPINDLE_INTERNAL_CHECK(s, "unresolved name '{}' reached the printer", n.name);
  // An unannotated const behaves exactly like its literal: it is written as
  // one, in the type typing gave this use (0.1 next to an f64, 0.1f next to
  // an f32), never through a narrower constexpr. The host launcher, printed
  // before the consts' #line-mapped declarations, writes every const so.
  // A body const that differs by warp width is a constexpr of the file that
  // chooses by __SPN_WARP_SIZE; the launcher writes that choice out.
  if (s->kind == SymbolKind::Const && s->wave64Value) {
    if (!compileTimeValuesInline_) return {name(s), kPrimary};
    return {"(" + warpWidthChoice(*s) + ")", kPrimary};
  }
  if ((s->weakType || compileTimeValuesInline_) && s->kind == SymbolKind::Const)
    return compileTimeLiteral(s->value, n.type != ScalarType::Invalid ? n.type : s->type);
  // Dims are i64 values in the language; with 32-bit indices they are
  // int32_t in the kernel, so a read as a value widens (`N * 2` must not
  // wrap at 2^31). Element offsets read them directly (flatIndex).
  if (s->kind == SymbolKind::DimSymbol && ctx_.index32) return {"int64_t(" + name(s) + ")", kPostfix};
  // An i64 loop variable counting in 32 bits (loopCounter32) likewise.
  if (loopVars32_.count(s)) return {"int64_t(" + name(s) + ")", kPostfix};
  return {name(s), kPrimary};
}

CppExpr FunctionPrinter::unary(const UnaryExpr& u) const {
  // Known in every specialization: a branch on it was pruned, what is left
  // (`bias is not None and j < N`) reads the fact as a literal.
  if (u.op == UnaryOp::IsNone) {
    const Symbol* s = u.operand->as<NameExpr>()->symbol;
    SPINDLE_INTERNAL_CHECK(s->presence != Symbol::Presence::Unknown, "presence of '{}' unknown when printing", s->name);
    return {s->presence == Symbol::Presence::Absent ? "true" : "false", kPrimary};
  }
  // The lowest i32 and i64 are the negation of a literal no int (long
  // long) holds: `-2147483648ll` would make an i32 sum a 64-bit one.
  if (const auto* lit = u.operand->as<IntLitExpr>(); lit && u.op == UnaryOp::Neg) {
    if (lit->value == uint64_t(INT32_MAX) + 1 && scalarBits(u.type) <= 32) return {"(-2147483647 - 1)", kPrimary};
    if (lit->value == uint64_t(INT64_MAX) + 1 && u.type == ScalarType::I64)
      return {"(-9223372036854775807ll - 1)", kPrimary};
  }
  std::string operand = value(*u.operand, kUnary);
  switch (u.op) {
    case UnaryOp::Neg:
      // `- -x` would read as a decrement.
      if (!operand.empty() && operand[0] == '-') operand = "(" + operand + ")";
      return {"-" + operand, kUnary};
    case UnaryOp::Pos: return {operand, u.operand->kind == ExprKind::Unary ? kUnary : expr(*u.operand).prec};
    case UnaryOp::Not: return {"!" + operand, kUnary};
    case UnaryOp::BitNot: return {"~" + operand, kUnary};
    case UnaryOp::IsNone: break;  // printed before the operand (below)
  }
  return {};
}

// `(a + b)` as `a + b` where the parentheses enclose the whole text (an
// operand of a comparison binds tighter than it: + * / % shifts do).
static std::string withoutOuterParens(const std::string& text) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') return text;
  int depth = 0;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    depth += text[i] == '(' ? 1 : text[i] == ')' ? -1 : 0;
    if (depth == 0) return text;  // the first `(` closes before the end
  }
  return text.substr(1, text.size() - 2);
}

CppExpr FunctionPrinter::binary(const BinaryExpr& b) const {
  if (b.op == BinaryOp::Pow) {
    // x ** n with n a constant: short powers of a plain name are written
    // out; anything else calls the prelude's __spn_powi<n>.
    const auto* lit = b.rhs->as<IntLitExpr>();
    std::string base = value(*b.lhs, kMultiplicative + 1);
    if (lit && lit->value >= 2 && lit->value <= 4 && b.lhs->as<NameExpr>() && !isStorageOnly(b.lhs->type)) {
      std::string text = base;
      for (uint64_t i = 1; i < lit->value; ++i) text += " * " + base;
      return {text, kMultiplicative};
    }
    // The exponent is a compile-time integer, evaluated by sema.
    return {fmt::format("__spn_powi<{}>({})", b.exponent, value(*b.lhs)), kPostfix};
  }
  const bool wideDivision = scalarBits(b.type) == 64;
  if (ctx_.index32 && (b.op == BinaryOp::FloorDiv || b.op == BinaryOp::Mod) &&
      (wideDivision || (b.type == ScalarType::I32 && !knownWhenCompiled(*b.rhs, ctx_)))) {
    // With 32-bit indices, operands made of dims, launch geometry,
    // non-negative constants and locals defined from them have known
    // ranges (index_bounds.h); where both are non-negative and fit, the
    // division is one 32-bit unsigned division:
    // - of i64 values that fit 32 bits unsigned: a 64-bit division is a
    //   long subroutine on GPUs;
    // - of i32 values by a run-time divisor: a signed 32-bit division is the
    //   unsigned one plus taking absolute values and fixing the sign (on
    //   NVIDIA three IABS and a conditional negation around it). A pair
    //   index of rotary_embedding.spn, `i // half` with i from thread_id():
    //   1.5% of the kernel's time on an H200. A division by a constant is a
    //   multiply and a shift either way, and is left as written; the i32
    //   form admits a divisor range from 0 (a zero divisor is undefined in
    //   either form).
    // Constants on both sides are left to the compiler to fold.
    const int64_t top = wideDivision ? int64_t(UINT32_MAX) : int64_t(INT32_MAX);
    const int64_t leastDivisor = wideDivision ? 1 : 0;
    auto lr = bounds_.of(*b.lhs), rr = bounds_.of(*b.rhs);
    if (lr && rr && lr->lo >= 0 && lr->hi <= top && rr->lo >= leastDivisor && rr->hi <= top &&
        (lr->lo != lr->hi || rr->lo != rr->hi))
      return {fmt::format("{}({} {} {})", cppType(b.type), unsigned32(*b.lhs), cppOperator(b.op), unsigned32(*b.rhs)),
              kPostfix};
  }
  if (ctx_.index32 && isComparison(b.op) && isInteger(b.lhs->type) && scalarBits(b.lhs->type) == 64 &&
      isInteger(b.rhs->type) && scalarBits(b.rhs->type) == 64) {
    // A bounds test like `row0 + r < M` on i64 values the index bounds
    // keep within 32 bits: the same comparison in int32_t arithmetic (a
    // 64-bit add or compare costs two instructions; a tiled kernel makes
    // several per tile). Signed, as the source is: the device compiler
    // keeps reasoning about values that cannot overflow (`k0 + 4 <= K` with
    // k0 < K a multiple of 8 folds away; in unsigned arithmetic, which
    // wraps, it would not).
    auto l32 = signed32(*b.lhs), r32 = signed32(*b.rhs);
    if (l32 && r32) return {*l32 + " " + cppOperator(b.op) + " " + *r32, binaryPrec(b.op)};
    // Else unsigned where both sides are non-negative and fit 32 bits
    // unsigned: `col0 + c + 4 <= N` with col0 up to N - 1 rounded down to
    // a tile can pass INT32_MAX by a few, never UINT32_MAX.
    auto lr = bounds_.of(*b.lhs), rr = bounds_.of(*b.rhs);
    if (lr && rr && lr->lo >= 0 && rr->lo >= 0 && lr->hi <= UINT32_MAX && rr->hi <= UINT32_MAX)
      return {withoutOuterParens(unsigned32(*b.lhs)) + " " + cppOperator(b.op) + " " +
                  withoutOuterParens(unsigned32(*b.rhs)),
              binaryPrec(b.op)};
  }
  int prec = binaryPrec(b.op);
  CppExpr lhs = expr(*b.lhs), rhs = expr(*b.rhs);
  // Weak operands print as C++ ints, but typing may have made the operation
  // wider (i64(K) * K, or 65536 * 65536 stored into an i64): C++ would
  // compute it in 32 bits. Converting the left literal makes it compute in
  // the typed width; a weak left operand that is itself an operation did
  // the same inside.
  bool leftLeaf =
      printsAsLiteral(*b.lhs) || (b.lhs->kind == ExprKind::Unary && printsAsLiteral(*b.lhs->as<UnaryExpr>()->operand));
  // A shift takes its type from the left operand alone in C++: 1 << n with
  // n an i64 shifts an int, so there the left literal is converted whatever
  // the right operand is, and so is a narrower left operand (x << n with x
  // an i32 and n an i64 is an i64 shift, 6.5; C++ would shift the int).
  bool shift = b.op == BinaryOp::Shl || b.op == BinaryOp::Shr;
  if (isInteger(b.type) && b.type != ScalarType::I32 && leftLeaf && (shift || isWeak(*b.rhs)))
    lhs = {cppType(b.type) + "(" + lhs.text + ")", kPostfix};
  else if (shift && isInteger(b.type) && scalarBits(b.type) >= 32 && b.lhs->type != b.type)
    lhs = {cppType(b.type) + "(" + lhs.text + ")", kPostfix};
  std::string l = loadValue(lhs, b.lhs->type, operandMinPrec(prec, lhs.prec));
  std::string r = loadValue(rhs, b.rhs->type, operandMinPrec(prec, rhs.prec) == prec ? prec + 1 : kPrimary);
  return {l + " " + cppOperator(b.op) + " " + r, prec};
}

// `e` computed in int32_t where it and every partial result of its + - *
// provably fit (index_bounds.h): a dim by its int32_t name, `int32_t(x)`
// for a value the bounds keep in range; nothing where they do not.
std::optional<std::string> FunctionPrinter::signed32(const Expr& e) const {
  auto r = bounds_.of(e);
  if (!r || r->lo < INT32_MIN || r->hi > INT32_MAX) return std::nullopt;
  const auto* n = e.as<NameExpr>();
  if (n && n->symbol && n->symbol->kind == SymbolKind::DimSymbol) return name(n->symbol);
  if (n && n->symbol && loopVars32_.count(n->symbol) && loopVars32_.at(n->symbol)) return name(n->symbol);
  if (printsAsLiteral(e)) return value(e);
  if (const auto* b = e.as<BinaryExpr>();
      b && (b->op == BinaryOp::Add || b->op == BinaryOp::Sub || b->op == BinaryOp::Mul)) {
    auto l = signed32(*b->lhs), rt = signed32(*b->rhs);
    if (!l || !rt) return std::nullopt;
    // An additive operand of `*`, or on the right of `-`, keeps its parentheses.
    auto additive = [](const Expr& x) {
      const auto* xb = x.as<BinaryExpr>();
      return xb && (xb->op == BinaryOp::Add || xb->op == BinaryOp::Sub);
    };
    if (b->op == BinaryOp::Mul && additive(*b->lhs)) *l = "(" + *l + ")";
    if (b->op != BinaryOp::Add && additive(*b->rhs)) *rt = "(" + *rt + ")";
    return *l + " " + cppOperator(b->op) + " " + *rt;
  }
  if (const auto* b = e.as<BinaryExpr>(); b && (b->op == BinaryOp::FloorDiv || b->op == BinaryOp::Mod)) {
    // Of non-negative operands, C++'s truncating / and % are the language's
    // floor division and modulo.
    auto lr = bounds_.of(*b->lhs), rr = bounds_.of(*b->rhs);
    auto l = signed32(*b->lhs), rt = signed32(*b->rhs);
    if (lr && rr && lr->lo >= 0 && rr->lo >= 1 && l && rt) {
      auto operand = [](const Expr& x, std::string text) {
        return x.kind == ExprKind::Binary ? "(" + text + ")" : text;
      };
      return operand(*b->lhs, *l) + " " + cppOperator(b->op) + " " + operand(*b->rhs, *rt);
    }
  }
  if (isInteger(e.type) && scalarBits(e.type) <= 32 && (e.type == ScalarType::I32 || scalarBits(e.type) < 32))
    return value(e, kAdditive + 1);
  return "int32_t(" + value(e) + ")";
}

// `e` as a uint32_t: a dim by its int32_t name (not its widened value), and
// + * // % whose range fits 32 bits unsigned in 32-bit operations (their
// partial results are no larger), `uint32_t(i) / (uint32_t(T) * uint32_t(V))`.
std::string FunctionPrinter::unsigned32(const Expr& e) const {
  const auto* n = e.as<NameExpr>();
  if (n && n->symbol && n->symbol->kind == SymbolKind::DimSymbol) return "uint32_t(" + name(n->symbol) + ")";
  // A loop counted in 32 bits (loopCounter32): a uint32_t, or a
  // non-negative int32_t.
  if (n && n->symbol && loopVars32_.count(n->symbol))
    return loopVars32_.at(n->symbol) ? "uint32_t(" + name(n->symbol) + ")" : name(n->symbol);
  if (printsAsLiteral(e)) return value(e) + "u";
  if (const auto* b = e.as<BinaryExpr>();
      b && (b->op == BinaryOp::Add || b->op == BinaryOp::Mul || b->op == BinaryOp::FloorDiv || b->op == BinaryOp::Mod))
    if (auto r = bounds_.of(e); r && r->lo >= 0 && r->hi <= UINT32_MAX)
      return "(" + unsigned32(*b->lhs) + " " + cppOperator(b->op) + " " + unsigned32(*b->rhs) + ")";
  return "uint32_t(" + value(e) + ")";
}

CppExpr FunctionPrinter::call(const CallExpr& c) const {
  if (c.symbol) return userCall(c);
  // sizeof(T): typing put T's binding on the argument; its size is a number.
  if (c.callee == "sizeof") return {std::to_string(scalarBytes(c.args[0]->type)), kPrimary};
  if (findBuiltin(c.callee) && !scalarFromName(c.callee) &&
      !(ctx_.kernel.typeParams.count(c.callee) && fn_.kernelRoot == &ctx_.kernel))
    return builtinCall(c);
  // A cast: f32(v), T(v). Every Spindle type's C++ name is one token, so a
  // functional cast reads naturally.
  const Expr& arg = *c.args[0];
  if (isStorageOnly(arg.type) && c.type == ScalarType::F32) return {"float(" + expr(arg).text + ")", kPostfix};
  // Already that type: no cast. Literals and unannotated consts keep theirs,
  // negated ones too: u32(1) << 31 must not become the int 1 << 31, nor
  // i64(-296) >> s the int -296 >> s.
  const bool literal =
      printsAsLiteral(arg) || (arg.kind == ExprKind::Unary && arg.as<UnaryExpr>()->op != UnaryOp::Not &&
                               printsAsLiteral(*arg.as<UnaryExpr>()->operand));
  if (arg.type == c.type && !isStorageOnly(arg.type) && !literal) return expr(arg);
  return {cppType(c.type) + "(" + value(arg) + ")", kPostfix};
}

CppExpr FunctionPrinter::userCall(const CallExpr& c) const {
  FunctionScope* callee = c.symbol->scope;
  std::vector<std::string> args;
  for (size_t i = 0; i < c.args.size(); ++i) {
    const Symbol* param = i < callee->params.size() ? callee->params[i] : nullptr;
    if (param && param->kind == SymbolKind::TensorParam) {
      tensorArguments(*tensorArgument(*c.args[i]), *param, args);
      continue;
    }
    ScalarType paramType = param ? param->type : ScalarType::Invalid;
    args.push_back(isStorageOnly(paramType) && c.args[i]->type == paramType ? expr(*c.args[i]).text
                   : isStorageOnly(paramType) ? cppType(paramType) + "(" + value(*c.args[i]) + ")"
                                              : value(*c.args[i]));
  }
  // The callee's dims, read from the shapes of the tensors passed to it.
  for (const DimSource& source : dimSources(*callee)) {
    if (std::find(callee->dimParams.begin(), callee->dimParams.end(), source.dim) == callee->dimParams.end()) continue;
    const Symbol& tensor = *tensorArgument(*c.args.at(static_cast<size_t>(source.param)));
    args.push_back(dimExpr(tensor, static_cast<size_t>(source.axis)).text);
  }
  for (const auto& cap : callee->captures) {
    if (cap.mode == CaptureMode::Stride) args.push_back(strideName(cap.symbol, cap.axis));
    else args.push_back(name(cap.symbol));
  }
  if (callee->capturesBlockScratch) args.push_back(blockScratchName_);
  std::string text = ctx_.functionNames.at(callee) + "(";
  for (size_t i = 0; i < args.size(); ++i) text += (i ? ", " : "") + args[i];
  return {text + ")", kPostfix};
}

// A tensor passed to a def's tensor parameter: its pointer, and, for a
// strided parameter, its strides (a contiguous tensor's are the products of
// its trailing dims).
void FunctionPrinter::tensorArguments(const Symbol& tensor, const Symbol& param, std::vector<std::string>& args) const {
  args.push_back(name(&tensor));
  if (!param.strided) return;
  for (size_t axis = 0; axis < tensor.shape.size(); ++axis) {
    if (tensor.strided && tensor.unitInnerStride && axis + 1 == tensor.shape.size()) {
      args.push_back("1");  // this specialization's unit inner stride
      continue;
    }
    if (tensor.strided) {
      args.push_back(strideName(&tensor, static_cast<int>(axis)));
      continue;
    }
    std::string stride;
    for (size_t k = axis + 1; k < tensor.shape.size(); ++k)
      stride += (stride.empty() ? "" : " * ") + paren(dimExpr(tensor, k), kMultiplicative + 1);
    args.push_back(stride.empty() ? "1" : stride);
  }
}

CppExpr FunctionPrinter::builtinCall(const CallExpr& c) const {
  const BuiltinInfo& b = *findBuiltin(c.callee);
  auto argList = [&](size_t from = 0) {
    std::string text;
    for (size_t i = from; i < c.args.size(); ++i) text += (i > from ? ", " : "") + value(*c.args[i]);
    return text;
  };
  // Float math on f64 with an f32 argument: CUDA's overloads (pow(double,
  // float)) are ambiguous, so every argument is converted to the result type.
  auto floatArgList = [&]() {
    std::string text;
    for (size_t i = 0; i < c.args.size(); ++i) {
      const Expr& a = *c.args[i];
      bool same = computeType(a.type) == c.type || (a.kind == ExprKind::IntLit) || (a.kind == ExprKind::FloatLit);
      text += (i ? ", " : "") + (same ? value(a) : cppType(c.type) + "(" + value(a) + ")");
    }
    return text;
  };
  switch (b.category) {
    case BuiltinCategory::Geometry: {
      const Expr* axisExpr = !c.args.empty() ? c.args[0].get() : !c.kwargs.empty() ? c.kwargs[0].value.get() : nullptr;
      int64_t axis = 0;
      if (axisExpr) {
        if (auto* lit = axisExpr->as<IntLitExpr>()) axis = static_cast<int64_t>(lit->value);
        else if (auto* n = axisExpr->as<NameExpr>(); n && n->symbol) axis = n->symbol->value.i;
      }
      // threadIdx.x is unsigned in CUDA; the language says i32.
      return {fmt::format("int({}.{})", b.hipF32, axisName(axis)), kPostfix};
    }
    case BuiltinCategory::LaneInfo:
    case BuiltinCategory::WarpBarrier:
    case BuiltinCategory::Barrier:
      // In a kernel that calls dot, sync() also orders shared-memory writes
      // before the wgmma reads that follow it (__spn_dot_sync).
      if (b.id == BuiltinId::Sync && fn_.kernelRoot && fn_.kernelRoot->usesDot) return {"__spn_dot_sync()", kPostfix};
      return {std::string(b.hipF32), kPostfix};
    case BuiltinCategory::WarpVote: return {std::string(b.hipF32) + "(bool(" + value(*c.args[0]) + "))", kPostfix};
    case BuiltinCategory::LaunchQuery: return {std::string(b.hipF32), kPrimary};  // a launcher local
    case BuiltinCategory::CachedLoad:
      // load_stream(x[i]) -> __spn_load_stream(&x[i]): the element's type,
      // converted where used as x[i] is.
      return {std::string(b.hipF32) + "(&" + expr(*c.args[0]).text + ")", kPostfix};
    case BuiltinCategory::CachedStore: {
      const ScalarType element = c.args[0]->type;
      return {std::string(b.hipF32) + "(&" + expr(*c.args[0]).text + ", " + storeValue(*c.args[1], element) + ")",
              kPostfix};
    }
    case BuiltinCategory::UniformHint: return expr(*c.args[0]);  // only the analysis reads the hint
    case BuiltinCategory::DivisorHint: {
      // multiple_of(e, n): e; the promise is the divisibility analysis's.
      // A checked build tests it, naming e as written and its value.
      if (!ctx_.checked) return expr(*c.args[0]);
      const Expr& e = *c.args[0];
      const std::string& text = ctx_.sema.file->text();
      std::string written = text.substr(e.range.begin.offset, e.range.end.offset - e.range.begin.offset);
      return {fmt::format("{}(\"{}\", {}, {}, {}, {}, {})", b.hipF32, ctx_.sourcePath, c.range.begin.line,
                          c.range.begin.col, cStringLiteral(written), value(e), value(*c.args[1])),
              kPostfix};
    }
    case BuiltinCategory::FloatMath: {
      std::string fn(c.type == ScalarType::F64 ? b.hipOther : b.hipF32);
      return {fn + "(" + floatArgList() + ")", kPostfix};
    }
    case BuiltinCategory::NumericMath: {
      if (isFloat(c.type)) {
        std::string fn(c.type == ScalarType::F64 ? b.hipOther : b.hipF32);
        return {fn + "(" + floatArgList() + ")", kPostfix};
      }
      // Integer abs/min/max: the prelude's templates, with the result type
      // named so that mixed operands (u32 and a literal) convert to it.
      return {fmt::format("__spn_{}<{}>({})", b.name, cppType(c.type), argList()), kPostfix};
    }
    case BuiltinCategory::WarpReduce:
      // A block that may end in a partial warp (its size is not a multiple
      // of 64, or follows the launch) gets the forms that combine only the
      // lanes that exist; whole warps keep the plain butterfly.
      if (!ctx_.plan.block.wholeWarps) return {std::string(b.hipF32) + "_any(" + argList() + ")", kPostfix};
      return {std::string(b.hipF32) + "(" + argList() + ")", kPostfix};
    case BuiltinCategory::IntMath:
    case BuiltinCategory::Shuffle: return {std::string(b.hipF32) + "(" + argList() + ")", kPostfix};
    case BuiltinCategory::BlockReduce:
      return {std::string(b.hipF32) + "(" + argList() + ", " + blockScratchName_ + ")", kPostfix};
    case BuiltinCategory::WarpArgReduce:
    case BuiltinCategory::BlockArgReduce: {
      // The pair's types named, so that they are the ones its unpacking
      // declares (a literal index would otherwise deduce int). Partial warps
      // and the scratch as for warp_max and block_max.
      const std::vector<ScalarType> types = argReduceTypes(c);
      std::string fn = std::string(b.hipF32);
      if (b.category == BuiltinCategory::WarpArgReduce && !ctx_.plan.block.wholeWarps) fn += "_any";
      fn += "<" + cppType(types.at(0)) + ", " + cppType(types.at(1)) + ">(" + argList();
      if (b.category == BuiltinCategory::BlockArgReduce) fn += ", " + blockScratchName_;
      return {fn + ")", kPostfix};
    }
    case BuiltinCategory::Atomic: {
      // atomic_add(x[i], v) -> __spn_atomic_add(&x[i], v): the prelude
      // gives every element type one overload. f16/bf16 atomics have their
      // own names (__spn_atomic_add_f16), so that only files using them
      // take in the half-precision headers and the word loop, and their
      // values are rounded to the element type first, as a store rounds.
      // f32/f64 max and min (a CAS loop with its own ordering) likewise.
      ScalarType element = c.args[0]->type;
      std::string fn = "__spn_" + std::string(b.name);
      bool floatMinMax = isFloat(element) && (b.id == BuiltinId::AtomicMax || b.id == BuiltinId::AtomicMin);
      if (isStorageOnly(element) || floatMinMax) fn += "_" + std::string(scalarName(element));
      std::string text = fn + "(&" + target(*c.args[0], Access::Atomic).text;
      for (size_t i = 1; i < c.args.size(); ++i) {
        const Expr& v = *c.args[i];
        if (!isStorageOnly(element)) text += ", " + value(v);
        else if (v.type == element) text += ", " + expr(v).text;
        else text += ", " + cppType(element) + "(" + value(v) + ")";
      }
      return {text + ")", kPostfix};
    }
    case BuiltinCategory::DimQuery: {
      const Symbol& tensor = *c.args[0]->as<NameExpr>()->symbol;
      int64_t axis = 0;
      if (auto* lit = c.args[1]->as<IntLitExpr>()) axis = static_cast<int64_t>(lit->value);
      else if (auto* n = c.args[1]->as<NameExpr>(); n && n->symbol) axis = n->symbol->value.i;
      CppExpr d = dimExpr(tensor, static_cast<size_t>(axis));
      if (ctx_.index32 && d.prec == kPrimary) return {"int64_t(" + d.text + ")", kPostfix};  // as nameExpr
      return d;
    }
    case BuiltinCategory::BitCount: {
      // The vendors' intrinsics take unsigned 32- or 64-bit values; the
      // unsigned type of the value's own width keeps a negative i8 from
      // counting the bits of its sign extension. HIP's return an unsigned
      // int (CUDA's an int): the count, an i32, is converted, or
      // `popcount(x) - 40` would be unsigned on AMD, and a tuple holding it
      // a narrowing hipcc refuses (found by the cpu fuzzer, seed 300001).
      const Expr& arg = *c.args[0];
      int bits = scalarBits(arg.type);
      return {fmt::format("int32_t({}(uint{}_t({})))", bits == 64 ? b.hipOther : b.hipF32, bits, value(arg)), kPostfix};
    }
    case BuiltinCategory::TypeLimit: return {typeLimitLiteral(b.id, c.args[0]->type), kPrimary};
    case BuiltinCategory::FloatPredicate: return {std::string(b.hipF32) + "(" + value(*c.args[0]) + ")", kPostfix};
    case BuiltinCategory::TypeConversion: {
      const ScalarType to = c.args[0]->type;
      const Expr& v = *c.args[1];
      // The stored bits of an f16/bf16/fp8 value, not its f32 widening; the
      // source type named, since C++ widens `a | b` of u16 values to int.
      if (b.id == BuiltinId::Bitcast)
        return {fmt::format("__spn_bitcast<{}, {}>({})", cppType(to), cppType(v.type),
                            isStorageOnly(v.type) ? expr(v).text : value(v)),
                kPostfix};
      // To a storage type: clamped in f32, then converted (one helper each).
      if (isStorageOnly(to)) return {fmt::format("__spn_saturate_{}({})", scalarName(to), value(v)), kPostfix};
      return {fmt::format("__spn_saturate<{}>({})", cppType(to), value(v)), kPostfix};
    }
    case BuiltinCategory::Matrix: return matrixCall(c);
    case BuiltinCategory::AsyncCopy: return asyncCopyCall(c);
    case BuiltinCategory::Scratch:
    case BuiltinCategory::MatrixDecl:
    case BuiltinCategory::Range: break;  // declarations and loops, printed as statements
  }
  SPINDLE_INTERNAL_CHECK(false, "builtin '{}' reached the expression printer", c.callee);
  return {};
}

// mma(a[i], b[j], acc[i, j]) -> __spn_mma_f16(a[i], b[j], acc[i][j]) (or
// _bf16); mma_load_a(a[i], src, r, k) -> __spn_mma_load_a(a[i], src, rows,
// cols, stride0, stride1, r, k): the source's extents bound the tile
// (zero outside), its strides address it.
CppExpr FunctionPrinter::matrixCall(const CallExpr& c) const {
  const BuiltinInfo& b = *findBuiltin(c.callee);
  if (b.id == BuiltinId::Dot || b.id == BuiltinId::DotBt) return dotCall(c);
  if (b.id == BuiltinId::DotWait) return {fmt::format("__spn_dot_wait<{}>()", value(*c.args[0])), kPostfix};
  // mma_to_a(a[k], acc[i, j]), row_max(m[i], acc[i, j]), row_sum(..): the
  // prelude's helper on the two tiles.
  if (b.id == BuiltinId::RowMax || b.id == BuiltinId::RowSum)
    return {fmt::format("{}({}, {})", b.hipF32, expr(*c.args[0]).text, expr(*c.args[1]).text), kPostfix};
  if (b.id == BuiltinId::MmaToA) {  // __spn_mma_to_a_f16 / _bf16: the type's paired conversion
    const Symbol& a = *c.args[0]->as<IndexExpr>()->base->as<NameExpr>()->symbol;
    return {fmt::format("{}_{}({}, {})", b.hipF32, scalarName(a.type), expr(*c.args[0]).text, expr(*c.args[1]).text),
            kPostfix};
  }
  if (b.id == BuiltinId::MmaStore) return mmaStoreCall(c);
  if (b.id == BuiltinId::Mma) {
    const Symbol& a = *c.args[0]->as<IndexExpr>()->base->as<NameExpr>()->symbol;
    return {fmt::format("__spn_mma_{}({}, {}, {})", scalarName(a.type), expr(*c.args[0]).text, expr(*c.args[1]).text,
                        expr(*c.args[2]).text),
            kPostfix};
  }
  const Symbol& src = *c.args[1]->as<NameExpr>()->symbol;
  // From a shared buffer, an unchecked build's tile loads try ldmatrix
  // first (__spn_mma_load_a_shared, _b_shared, _a_t_shared, _b_t_shared).
  const bool ldmatrix = src.kind == SymbolKind::SharedBuffer && !ctx_.checked;
  // A swizzled buffer's loads take its swizzle (and read its rows' count
  // where a row-major one's stride is read).
  const std::string helper = std::string(b.hipF32) + (ldmatrix ? "_shared" : "") +
                             (src.swizzle ? "<" + value(*src.swizzle) + ">" : std::string());
  std::vector<std::string> strides;
  for (size_t axis = 0; axis < 2; ++axis) {
    if (src.strided) {
      strides.push_back(src.unitInnerStride && axis == 1 ? "1" : strideName(&src, static_cast<int>(axis)));
      continue;
    }
    strides.push_back(axis == 0 ? dimExpr(src, 1).text : "1");
  }
  // A checked build reads a shared source element by element through
  // __spn_checked_read (the cpu target's record of the block's writes).
  std::string where;
  if (ctx_.checked && src.kind == SymbolKind::SharedBuffer)
    where = fmt::format(", __spn_mma_where{{\"{}\", {}, {}, \"{}\"}}", ctx_.sourcePath, c.range.begin.line,
                        c.range.begin.col, src.name);
  return {fmt::format("{}({}, {}, {}, {}, {}, {}, {}, {}{})", helper, expr(*c.args[0]).text, name(&src),
                      dimExpr(src, 0).text, dimExpr(src, 1).text, strides[0], strides[1], value(*c.args[2]),
                      value(*c.args[3]), where),
          kPostfix};
}

// Matrix sb of a 3-D tensor (copy_async's source, mma_store's C): base
// moves to it (matrix 0 for an sb outside [0, dim 0)), and rows become 0
// there, so every element is outside. The batch is chosen before the
// multiply (not the product after it), so the compiler still sees the
// offset as a multiple of the matrix size: with an aligned base and rows
// of whole 16-byte runs, the alignment tests fold away as for a 2-D one.
void FunctionPrinter::selectBatchMatrix(const Symbol& tensor, const Expr& batch, std::string& base,
                                        std::string& rows) const {
  const std::string index = ctx_.indexType();
  const std::string sb = value(batch);
  const std::string inBatch = fmt::format("uint64_t({}) < uint64_t({})", sb, dimExpr(tensor, 0).text);
  const std::string matrix =
      tensor.strided ? fmt::format("{}({})", index, strideName(&tensor, 0))
                     : fmt::format("{}({}) * {}({})", index, dimExpr(tensor, 1).text, index, dimExpr(tensor, 2).text);
  base = fmt::format("({} + {}({} ? {} : 0) * {})", base, index, inBatch, sb, matrix);
  rows = fmt::format("({} ? {} : {}(0))", inBatch, rows, index);
}

// mma_store(C, r, c, acc[i, j]) -> __spn_mma_store_f32(C, rows, cols,
// stride0, stride1, r, c, acc[i][j]) (_f16, _bf16 by C's type; a checked
// build adds __spn_mma_store_checked{.spn location, C's name}). A 3-D C's
// batch index b (mma_store(C, b, r, c, acc[i, j])) moves the base to
// matrix b, with no rows for a b outside [0, dim 0) (nothing is stored),
// as copy_async's does (selectBatchMatrix). The extents and strides are
// the specialization's index type, so that with 32-bit indices the address
// is 32-bit arithmetic, and r and c are passed as copy_async's coordinates
// are (32 bits where the bounds allow).
CppExpr FunctionPrinter::mmaStoreCall(const CallExpr& c) const {
  const Symbol& dst = *c.args[0]->as<NameExpr>()->symbol;
  const bool batched = c.args.size() == 5;
  const int ax = batched ? 1 : 0;     // C's first matrix axis
  const size_t at = batched ? 2 : 1;  // r's argument
  const std::string index = ctx_.indexType();
  const auto [s0, s1] = matrixStrides(dst, ax);
  std::string rows = fmt::format("{}({})", index, dimExpr(dst, size_t(ax)).text);
  std::string base = name(&dst);
  if (batched) selectBatchMatrix(dst, *c.args[1], base, rows);
  std::string checked;
  if (ctx_.checked)
    checked = fmt::format(", __spn_mma_store_checked{{\"{}\", {}, {}, \"{}\"}}", ctx_.sourcePath, c.range.begin.line,
                          c.range.begin.col, dst.name);
  // A 2-D C that the tile provably lies inside (an exact grid's whole
  // tiles: tile_bounds.h) is stored with no bounds test, as an `if` the
  // tile proves is printed without it; the comment says why.
  std::string inside;
  if (!batched && !ctx_.checked) {
    const auto* rd = dst.shape[0]->as<NameExpr>();
    const auto* cd = dst.shape[1]->as<NameExpr>();
    const Enclosing around = enclosing();
    const Expr& r = *c.args[at];
    const Expr& col = *c.args[at + 1];
    std::optional<std::string> rowWhy, colWhy;
    if (rd && rd->symbol && cd && cd->symbol && tiles_.nonNegative(r) && tiles_.nonNegative(col))
      if ((rowWhy = tiles_.fits(r, *rd->symbol, 16, around))) colWhy = tiles_.fits(col, *cd->symbol, 16, around);
    if (rowWhy && colWhy) {
      out_.line(fmt::format("// the tile is inside {} always: {}; {}", dst.name, *rowWhy, *colWhy));
      inside = "<true>";
    }
  }
  return {fmt::format("__spn_mma_store_{}{}({}, {}, {}({}), {}({}), {}({}), {}, {}, {}{})", scalarName(dst.type),
                      inside, base, rows, index, dimExpr(dst, size_t(ax) + 1).text, index, s0, index, s1,
                      storeIndex(*c.args[at]), storeIndex(*c.args[at + 1]), expr(*c.args.back()).text, checked),
          kPostfix};
}

// mma_store's row or column: a 32-bit form where copy_async's would be one
// (copyIndex), but unsigned only where 15 more still fits 32 bits (the
// helper adds the tile's row and column in the type it is given).
std::string FunctionPrinter::storeIndex(const Expr& e) const {
  if (!ctx_.index32 || ctx_.checked || !isInteger(e.type) || scalarBits(e.type) != 64) return value(e);
  if (auto s = signed32(e)) return *s;
  if (auto r = bounds_.of(e); r && r->lo >= 0 && r->hi <= int64_t(UINT32_MAX) - 15)
    return withoutOuterParens(unsigned32(e));
  return value(e);
}

// copy_async(dst, r, c, src, sr, sc, n) -> __spn_copy_async<n>(dst, dst's
// row stride, r, c, src, rows, cols, src's strides, sr, sc) (a checked
// build's form also names the .spn location and dst's extents);
// copy_wait(n) -> __spn_copy_wait<n>(); copy_commit() -> __spn_copy_commit().
// A 3-D source's batch index sb (copy_async(dst, r, c, src, sb, sr, sc, n))
// moves the base to matrix sb (matrix 0 for an sb outside [0, dim 0),
// where the copy is given no rows, so every element is 0 as past any other
// edge). Both tests are
// the same for every copy of a loop whose sb is fixed (a block's batch),
// so the compiler computes them once.
CppExpr FunctionPrinter::asyncCopyCall(const CallExpr& c) const {
  const BuiltinInfo& b = *findBuiltin(c.callee);
  if (b.id == BuiltinId::CopyCommit) return {std::string(b.hipF32), kPostfix};
  if (b.id == BuiltinId::CopyWait) return {fmt::format("__spn_copy_wait<{}>()", value(*c.args[0])), kPostfix};
  // arrive(bars, i) -> __spn_arrive(bars, i); wait(bars, i, n) ->
  // __spn_wait(bars, i, n, file, line, col): the CPU target names the
  // wait's place when its phase is not one the GPU's parity test would see.
  if (b.id == BuiltinId::Arrive)
    return {fmt::format("__spn_arrive({}, {})", name(c.args[0]->as<NameExpr>()->symbol), value(*c.args[1])), kPostfix};
  if (b.id == BuiltinId::Wait)
    return {fmt::format("__spn_wait({}, {}, {}, \"{}\", {}, {})", name(c.args[0]->as<NameExpr>()->symbol),
                        value(*c.args[1]), value(*c.args[2]), ctx_.sourcePath, c.range.begin.line, c.range.begin.col),
            kPostfix};
  if (b.id == BuiltinId::CopyTile) return tileCopyCall(c);
  // The cpu target's register pool names the call where a claim never ends.
  if (b.id == BuiltinId::ClaimRegisters || b.id == BuiltinId::ReleaseRegisters)
    return {fmt::format("{}<{}>(\"{}\", {}, {})", b.hipF32, value(*c.args[0]), ctx_.sourcePath, c.range.begin.line,
                        c.range.begin.col),
            kPostfix};
  const Symbol& dst = *c.args[0]->as<NameExpr>()->symbol;
  const Symbol& src = *c.args[3]->as<NameExpr>()->symbol;
  const bool batched = c.args.size() == 8;
  const int ax = batched ? 1 : 0;     // src's first matrix axis
  const size_t at = batched ? 5 : 4;  // sr's argument
  const auto [s0, s1] = matrixStrides(src, ax);
  // The helper computes the source address in the type of the rows it is
  // given: the specialization's index type (32 bits only where the runtime
  // proved that every offset fits; a static dim prints as a bare literal).
  const std::string index = ctx_.indexType();
  std::string rows = fmt::format("{}({})", index, dimExpr(src, size_t(ax)).text);
  std::string base = name(&src);
  if (batched) selectBatchMatrix(src, *c.args[4], base, rows);
  std::string checked;
  if (ctx_.checked)
    checked = fmt::format(", __spn_mma_where{{\"{}\", {}, {}, \"{}\"}}, {}, {}", ctx_.sourcePath, c.range.begin.line,
                          c.range.begin.col, dst.name, dimExpr(dst, 0).text, dimExpr(dst, 1).text);
  // A swizzled destination: its swizzle, and its rows' count where a
  // row-major one's row stride goes.
  const std::string swizzle = dst.swizzle ? ", " + value(*dst.swizzle) : std::string();
  return {
      fmt::format("{}{}<{}{}>({}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}{})", b.hipF32, ctx_.checked ? "_checked" : "",
                  value(*c.args[at + 2]), swizzle, name(&dst), dimExpr(dst, dst.swizzle ? 0 : 1).text,
                  value(*c.args[1]), value(*c.args[2]), base, rows, dimExpr(src, size_t(ax) + 1).text, s0, s1,
                  copyIndex(*c.args[at]), copyIndex(*c.args[at + 1]), checked),
      kPostfix};
}

// copy_tile(dst, r, c, src, sr, sc, R, C, bars, i) ->
// __spn_copy_tile<R, C, swizzle>(dst, its rows, its columns, r, c, src,
// rows, cols, strides, sr, sc, bars, i, &map, ready): the tensor map and
// its ready flag where TMA can serve the box (declareTensorMaps), else
// none; a checked build's form copies the elements, naming the .spn place.
CppExpr FunctionPrinter::tileCopyCall(const CallExpr& c) const {
  const Symbol& dst = *c.args[0]->as<NameExpr>()->symbol;
  const Symbol& src = *c.args[3]->as<NameExpr>()->symbol;
  const auto [s0, s1] = matrixStrides(src, 0);
  const std::string index = ctx_.indexType();
  std::string map = "nullptr", ready = "0";
  if (auto it = tensorMapOfCall_.find(&c); it != tensorMapOfCall_.end() && !ctx_.checked) {
    map = "&" + it->second.map;
    ready = it->second.ready;
  }
  std::string checked;
  if (ctx_.checked)
    checked = fmt::format(", __spn_mma_where{{\"{}\", {}, {}, \"{}\"}}", ctx_.sourcePath, c.range.begin.line,
                          c.range.begin.col, dst.name);
  return {
      fmt::format("__spn_copy_tile{}<{}, {}, {}>({}, {}, {}, {}, {}, {}, {}({}), {}({}), {}({}), {}({}), {}, {}, {}, "
                  "{}, {}, {}{})",
                  ctx_.checked ? "_checked" : "", value(*c.args[6]), value(*c.args[7]),
                  dst.swizzle ? value(*dst.swizzle) : "0", name(&dst), dimExpr(dst, 0).text, dimExpr(dst, 1).text,
                  value(*c.args[1]), value(*c.args[2]), name(&src), index, dimExpr(src, 0).text, index,
                  dimExpr(src, 1).text, index, s0, index, s1, value(*c.args[4]), value(*c.args[5]),
                  name(c.args[8]->as<NameExpr>()->symbol), value(*c.args[9]), map, ready, checked),
      kPostfix};
}

// copy_async's source row or column: with 32-bit indices, an i64 value the
// index bounds keep within 32 bits is printed in 32-bit arithmetic (int32_t,
// else uint32_t where it is non-negative), and the helper, which takes the
// type it is given, tests it against the source's extents in 32 bits. A
// pipelined loop issues several copies a slab, and their 64-bit
// arithmetic was most of its integer work (samples/gemm.spn). A checked
// build keeps 64 bits (its helper tests every element anyway).
std::string FunctionPrinter::copyIndex(const Expr& e) const {
  if (!ctx_.index32 || ctx_.checked || !isInteger(e.type) || scalarBits(e.type) != 64) return value(e);
  if (auto s = signed32(e)) return *s;  // int32_t arithmetic (int after promotion)
  if (auto r = bounds_.of(e); r && r->lo >= 0 && r->hi <= UINT32_MAX) return withoutOuterParens(unsigned32(e));
  return value(e);
}

// max_value(T), min_value(T), min_normal(T) as exact literals: integers of
// T's type, floats as hex floats (of f32 for the storage types, whose
// values are computed in f32).
std::string FunctionPrinter::typeLimitLiteral(BuiltinId id, ScalarType t) {
  if (isInteger(t)) {
    const int bits = scalarBits(t);
    if (!isSigned(t)) {
      const uint64_t max = bits == 64 ? UINT64_MAX : (uint64_t(1) << bits) - 1;
      return id == BuiltinId::MaxValue ? fmt::format("{}({}u{})", cppType(t), max, bits == 64 ? "ll" : "")
                                       : cppType(t) + "(0)";
    }
    const int64_t max = bits == 64 ? INT64_MAX : (int64_t(1) << (bits - 1)) - 1;
    if (id == BuiltinId::MaxValue) return fmt::format("{}({}{})", cppType(t), max, bits == 64 ? "ll" : "");
    // The lowest: -max - 1 (a literal -2^63 does not exist in C++).
    return fmt::format("{}(-{}{} - 1)", cppType(t), max, bits == 64 ? "ll" : "");
  }
  // Largest finite and smallest normal, as hex floats.
  struct Limits {
    const char* max;
    const char* minNormal;
  };
  Limits l{};
  switch (t) {
    case ScalarType::F16: l = {"0x1.ffcp+15f", "0x1p-14f"}; break;
    case ScalarType::BF16: l = {"0x1.fep+127f", "0x1p-126f"}; break;
    case ScalarType::F8E4M3: l = {"0x1.cp+8f", "0x1p-6f"}; break;
    case ScalarType::F8E5M2: l = {"0x1.cp+15f", "0x1p-14f"}; break;
    case ScalarType::F32: l = {"0x1.fffffep+127f", "0x1p-126f"}; break;
    default: l = {"0x1.fffffffffffffp+1023", "0x1p-1022"}; break;  // f64
  }
  if (id == BuiltinId::MinNormal) return l.minNormal;
  return id == BuiltinId::MaxValue ? l.max : std::string("(-") + l.max + ")";
}

CppExpr FunctionPrinter::dimExpr(const Symbol& tensor, size_t axis) const {
  const Expr* d = tensor.shape.at(axis);
  if (auto* n = d->as<NameExpr>(); n && n->symbol && n->symbol->kind == SymbolKind::DimSymbol)
    return {name(n->symbol), kPrimary};
  return expr(*d);  // a literal, a const or an expression of them
}

// Row-major (Horner) address of an element: ((i * D1 + j) * D2 + k); or,
// for a strided tensor, i * x_stride0 + j * x_stride1, and i * x_stride0 + j
// when its inner stride is 1 (a run's elements are then visibly adjacent).
//
// With 32-bit indices (Specialization::index32) every tensor's extent is
// below 2^31, so the offset of an element in bounds and every partial sum of
// it fit an int32_t: dims and strides are int32_t, `row * N` of an i32 row is
// a 32-bit product and nothing is widened; an i64 index keeps its own
// arithmetic (`row * N + j`, j an i64 loop variable, is a 64-bit sum). Not
// narrowing it is deliberate: nvcc proves the alignment of a run
// `x[row * N + j + k]` (and merges it into one 16-byte access) from a 64-bit
// j, and only 8 bytes' worth from int32_t(j) + k. Checked builds keep the
// 64-bit form, whose bounds check sees the whole index.
//
// A run's address (printVectorRun, `narrow`) goes further: with 32-bit
// indices each index is itself an int32_t (`int32_t(col0 + c)` of an i64
// sum), since an index of an element in bounds is below its extent. The
// prelude's run helper moves whole words, so nothing rests on nvcc's
// alignment proof there, and the address costs a 32-bit multiply-add where
// the i64 form took six instructions with carries (matmul's tile loads).
std::string FunctionPrinter::flatIndex(const Symbol& base, const std::vector<ExprPtr>& indices, bool narrow) const {
  const bool index32 = ctx_.index32 && !ctx_.checked;
  narrow = narrow && index32;
  // An index as printed: a 64-bit one narrowed to an int32_t where asked.
  auto indexValue = [&](const Expr& e, int prec) -> std::string {
    if (!narrow || !isInteger(e.type) || scalarBits(computeType(e.type)) <= 32) return value(e, prec);
    return "int32_t(" + withoutOuterParens(value(e)) + ")";
  };
  if (base.strided) {
    std::string text;
    for (size_t axis = 0; axis < indices.size(); ++axis) {
      if (axis) text += " + ";
      if (base.unitInnerStride && axis + 1 == indices.size()) text += indexValue(*indices[axis], axis ? kAdditive : 0);
      else text += indexValue(*indices[axis], kMultiplicative) + " * " + strideName(&base, static_cast<int>(axis));
    }
    return text;
  }
  CppExpr acc = expr(*indices[0]);
  if (narrow) acc = {indexValue(*indices[0], kMultiplicative), kMultiplicative};
  if (isStorageOnly(indices[0]->type)) acc = {loadValue(acc, indices[0]->type, 0), kPostfix};
  // Dynamic and static dims are int64_t, so `i * N` is 64-bit; a literal or
  // const inner dim is 32-bit, and `i * 1024` would overflow past 2^31
  // elements. Widen the leading index then.
  const auto* innerDim = base.shape.size() > 1 ? base.shape[1]->as<NameExpr>() : nullptr;
  bool innerIs64 = innerDim && innerDim->symbol && innerDim->symbol->kind == SymbolKind::DimSymbol;
  bool globalTensor = base.kind == SymbolKind::TensorParam;  // scratch buffers are small
  if (!index32 && globalTensor && indices.size() > 1 && !innerIs64 && indices[0]->kind != ExprKind::IntLit &&
      scalarBits(computeType(indices[0]->type)) < 64)
    acc = {"int64_t(" + acc.text + ")", kPostfix};
  for (size_t axis = 1; axis < indices.size(); ++axis) {
    CppExpr dim = dimExpr(base, axis);
    if (index32 && dim.prec != kPrimary) dim = {"int32_t(" + dim.text + ")", kPostfix};  // reads the dims widened
    std::string product = paren(acc, kMultiplicative) + " * " + paren(dim, kMultiplicative + 1);
    acc = {product + " + " + indexValue(*indices[axis], kAdditive), kAdditive};
  }
  return acc.text;
}

// A checked build's element (docs/language.md 5.12). The prelude's
// __spn_checked_offset takes the .spn location, the tensor's name and, per
// axis, the index, the extent and the stride; it stops the kernel with all
// of them when an index is out of range, else returns sum(index * stride).
// Each index is evaluated once, as in the unchecked address. Memory that
// may be shared (a shared buffer; a def's tensor parameter, which may be
// given one) goes through __spn_checked_read, _write, _update or _atomic
// instead, which also let the cpu target report reads of shared memory the
// block never wrote and races. A kernel's own tensor parameters are global
// memory.
CppExpr FunctionPrinter::element(const IndexExpr& idx, Access access) const {
  const Symbol& base = *idx.base->as<NameExpr>()->symbol;
  if (base.kind == SymbolKind::Fragment) {  // a tile: compile-time indices, one per dim
    std::string text = name(&base);
    for (const auto& i : idx.indices) text += "[" + value(*i) + "]";
    return {text, kPostfix};
  }
  if (base.swizzle) return swizzledElement(base, idx, access);
  if (!ctx_.checked) return {name(&base) + "[" + flatIndex(base, idx.indices) + "]", kPostfix};
  const bool mayBeShared =
      base.kind == SymbolKind::SharedBuffer ||
      (base.kind == SymbolKind::TensorParam && base.owner && base.owner->kind != FunctionScope::Kind::Kernel);
  if (!mayBeShared) return {name(&base) + "[__spn_checked_offset(" + checkedArgs(base, idx) + ")]", kPostfix};
  const char* helper = access == Access::Read     ? "__spn_checked_read"
                       : access == Access::Write  ? "__spn_checked_write"
                       : access == Access::Update ? "__spn_checked_update"
                                                  : "__spn_checked_atomic";
  return {fmt::format("{}({}, {})", helper, name(&base), checkedArgs(base, idx)), kPostfix};
}

// An element of a swizzled shared buffer (docs/language.md 5.4): the
// prelude's __spn_swizzled<S>(buffer, rows, r, c), or in a checked build
// __spn_checked_swizzled<access, S>(buffer, location, r, rows, c, cols),
// which tests the bounds and keeps the cpu target's record of the block's
// shared accesses as __spn_checked_read and the others do.
CppExpr FunctionPrinter::swizzledElement(const Symbol& base, const IndexExpr& idx, Access access) const {
  const std::string s = value(*base.swizzle);
  const std::string r = value(*idx.indices[0]), c = value(*idx.indices[1]);
  if (!ctx_.checked)
    return {fmt::format("__spn_swizzled<{}>({}, {}, {}, {})", s, name(&base), dimExpr(base, 0).text, r, c), kPostfix};
  const int kind = access == Access::Read ? 0 : access == Access::Write ? 1 : access == Access::Update ? 2 : 3;
  return {fmt::format("__spn_checked_swizzled<{}, {}>({}, \"{}\", {}, {}, \"{}\", {}, {}, {}, {})", kind, s,
                      name(&base), ctx_.sourcePath, idx.range.begin.line, idx.range.begin.col, base.name, r,
                      dimExpr(base, 0).text, c, dimExpr(base, 1).text),
          kPostfix};
}

CppExpr FunctionPrinter::target(const Expr& e, Access access) const {
  if (const auto* idx = e.as<IndexExpr>(); idx && !hoisted_.count(&e)) return element(*idx, access);
  return expr(e);
}

std::string FunctionPrinter::checkedArgs(const Symbol& base, const IndexExpr& idx) const {
  std::string args =
      fmt::format("\"{}\", {}, {}, \"{}\"", ctx_.sourcePath, idx.range.begin.line, idx.range.begin.col, base.name);
  const size_t rank = idx.indices.size();
  for (size_t axis = 0; axis < rank; ++axis) {
    std::string stride;
    if (base.strided) {
      stride = base.unitInnerStride && axis + 1 == rank ? "1" : strideName(&base, static_cast<int>(axis));
    } else {
      for (size_t k = axis + 1; k < rank; ++k)
        stride += (stride.empty() ? "" : " * ") + paren(dimExpr(base, k), kMultiplicative + 1);
      if (stride.empty()) stride = "1";
    }
    args += fmt::format(", {}, {}, {}", value(*idx.indices[axis]), dimExpr(base, axis).text, stride);
  }
  return args;
}

}  // namespace spindle
