// Typing (layer 2 of sema.h): every expression gets its scalar type under
// one binding of the type parameters; the promotion rules of docs/language.md 4.5, the
// builtin signatures and assignment conversions are checked here.
#include <algorithm>
#include <functional>
#include <set>

#include "sema/builtins.h"
#include "sema/const_eval.h"
#include "sema/sema.h"
#include "sema/tensor_arguments.h"

namespace spindle {

bool isWeak(const Expr& e) {
  switch (e.kind) {
    case ExprKind::IntLit:
    case ExprKind::FloatLit: return true;
    case ExprKind::Name: {
      const Symbol* s = e.as<NameExpr>()->symbol;
      return s && s->kind == SymbolKind::Const && s->weakType;
    }
    case ExprKind::Unary: return e.as<UnaryExpr>()->op != UnaryOp::Not && isWeak(*e.as<UnaryExpr>()->operand);
    case ExprKind::Binary: {
      const auto& b = *e.as<BinaryExpr>();
      return !isComparison(b.op) && !isLogical(b.op) && isWeak(*b.lhs) && isWeak(*b.rhs);
    }
    case ExprKind::Ternary: {
      const auto& t = *e.as<TernaryExpr>();
      return isWeak(*t.thenValue) && isWeak(*t.elseValue);
    }
    case ExprKind::BoolLit:
    case ExprKind::Call:
    case ExprKind::Index:
    case ExprKind::List:
    case ExprKind::Tuple:
    case ExprKind::TypeTest: return false;
  }
  return false;
}

namespace {

bool isNumeric(ScalarType t) { return t != ScalarType::Invalid && t != ScalarType::Bool; }

// What a key-value reduction accepts (docs/language.md 8.4): a value as the
// other collectives take it (32- or 64-bit numbers; f16/bf16 are f32 by
// then) and an index of 32 or 64 bits, which the lanes exchange as they are.
bool isCollectiveValue(ScalarType t) { return isNumeric(t) && scalarBits(computeType(t)) >= 32; }
bool isArgReduceIndex(ScalarType t) { return isInteger(t) && scalarBits(t) >= 32; }

// Gives a weak (literal) expression the type its context chose, so the
// printer writes `0.5f` next to a float and `0.5` next to a double.
void coerceWeak(Expr& e, ScalarType t) {
  if (!isNumeric(t) || !isWeak(e)) return;
  e.type = t;
  if (auto* u = e.as<UnaryExpr>()) coerceWeak(*u->operand, t);
  if (auto* b = e.as<BinaryExpr>()) {
    coerceWeak(*b->lhs, t);
    if (b->op != BinaryOp::Pow) coerceWeak(*b->rhs, t);  // the exponent stays an integer
  }
  if (auto* c = e.as<TernaryExpr>()) {
    coerceWeak(*c->thenValue, t);
    coerceWeak(*c->elseValue, t);
  }
}

ScalarType widerInt(ScalarType a, ScalarType b) { return scalarBits(a) >= scalarBits(b) ? a : b; }
ScalarType widerFloat(ScalarType a, ScalarType b) { return scalarBits(a) >= scalarBits(b) ? a : b; }

class TypeChecker {
 public:
  TypeChecker(SemaModule& sema, DiagnosticEngine& diags, const std::map<std::string, ScalarType>& typeArgs)
      : sema_(sema), diags_(diags), typeArgs_(typeArgs) {}

  bool checkKernel(FunctionScope& kernel) {
    size_t before = diags_.errorCount();
    bindTypeParams(kernel);
    current_ = &kernel;
    checkBlock(kernel.kernel->body);
    return diags_.errorCount() == before;
  }

  bool checkFunction(FunctionScope& f) {
    size_t before = diags_.errorCount();
    current_ = &f;
    typeFunction(f);
    return diags_.errorCount() == before;
  }

 private:
  template <typename... Args>
  void error(DiagId id, SourceRange range, const Args&... args) {
    diags_.report(id, sema_.file, range, args...);
  }

  ScalarType bound(const std::string& typeParam) const {
    auto it = typeArgs_.find(typeParam);
    return it != typeArgs_.end() ? it->second : ScalarType::F32;
  }

  // Resets what a previous typing of this kernel left behind and gives
  // every symbol typed by a type parameter its bound type. Only the
  // kernel's own scope tree is touched, so typing is linear in its size.
  void bindTypeParams(FunctionScope& kernel) {
    std::vector<FunctionScope*> tree = {&kernel};
    for (size_t i = 0; i < tree.size(); ++i)
      for (auto* c : tree[i]->closures) tree.push_back(c);
    for (FunctionScope* f : tree) {
      if (f->returnsTypeParam) f->returnType = bound(f->function->returnType->elemName);
      else if (f->function && f->function->returnType && f->function->returnType->isTuple)
        f->returnTuple = annotatedTuple(*f->function->returnType);
      else if (f->kind == FunctionScope::Kind::Closure && !f->function->returnType) {
        f->returnType = ScalarType::Invalid;  // inferred again from the first return
        f->returnTuple.clear();
      }
      for (Symbol* s : f->declared) {
        if (!s->typeParam.empty()) {
          s->type = bound(s->typeParam);
          if (s->kind == SymbolKind::Local) s->declaredType = s->type;
        }
        // A local's type comes from its declaring assignment under this binding.
        if (s->kind == SymbolKind::Local) s->type = s->declaredType;
      }
    }
    typed_.clear();
    failedDeclarations_.clear();
  }

  // The element types of `-> tuple[...]` under this binding.
  std::vector<ScalarType> annotatedTuple(const TypeRef& t) const {
    std::vector<ScalarType> types;
    for (const TypeRef& e : t.tupleElements) {
      auto st = scalarFromName(e.elemName);
      types.push_back(st ? *st : bound(e.elemName));
    }
    return types;
  }

  // ---------------------------------------------------------------- bodies

  void typeFunction(FunctionScope& f) {
    if (!typed_.insert(&f).second) return;
    FunctionScope* saved = current_;
    current_ = &f;
    checkBlock(f.function->body);
    current_ = saved;
  }

  void checkBlock(Block& b) {
    for (auto& s : b) {
      if (diags_.tooManyErrors()) return;
      checkStmt(*s);
    }
  }

  void checkStmt(Stmt& s) {
    switch (s.kind) {
      case StmtKind::Assign: checkAssign(*s.as<AssignStmt>()); return;
      case StmtKind::AugAssign: checkAugAssign(*s.as<AugAssignStmt>()); return;
      case StmtKind::ExprStmt: typeOf(*s.as<ExprStmt>()->expr, /*allowVoid=*/true); return;
      case StmtKind::If: {
        auto& i = *s.as<IfStmt>();
        checkCondition(*i.cond);
        // A branch that this binding of the kernel's types never takes is
        // not typed: `if T == bf16:` may hold what only bf16 allows.
        if (auto taken = decidedByTypes(*i.cond)) {
          checkBlock(*taken ? i.thenBody : i.elseBody);
          return;
        }
        checkBlock(i.thenBody);
        checkBlock(i.elseBody);
        return;
      }
      case StmtKind::While: {
        auto& w = *s.as<WhileStmt>();
        checkCondition(*w.cond);
        checkBlock(w.body);
        return;
      }
      case StmtKind::For: checkFor(*s.as<ForStmt>()); return;
      case StmtKind::Return: checkReturn(*s.as<ReturnStmt>()); return;
      case StmtKind::FuncDef: {
        auto* sym = s.as<FuncDefStmt>()->func->symbol;
        if (sym && sym->scope) typeFunction(*sym->scope);
        return;
      }
      case StmtKind::Assert: checkCondition(*s.as<AssertStmt>()->cond); return;
      case StmtKind::Break:
      case StmtKind::Continue:
      case StmtKind::Pass:
      case StmtKind::Nonlocal: return;
    }
  }

  // Whether the current function is an unannotated closure whose return
  // shape (one value or a tuple, and its types) the next return decides.
  bool infersReturn() const {
    return current_->kind == FunctionScope::Kind::Closure && !current_->function->returnType &&
           current_->returnType == ScalarType::Invalid && current_->returnTuple.empty();
  }

  // The type an unannotated closure's return gets from a value: a literal
  // keeps its own (i32, f32), anything else computes (f16 values are f32).
  static ScalarType inferredReturnType(const Expr& value, ScalarType t) { return isWeak(value) ? t : computeType(t); }

  void checkReturn(ReturnStmt& r) {
    if (!r.value || !current_->function) return;  // a kernel's value: refused by resolution
    if (auto* tuple = r.value->as<TupleExpr>()) {
      checkTupleReturn(r, *tuple);
      return;
    }
    ScalarType t = typeOf(*r.value);
    if (t == ScalarType::Invalid) return;
    if (!current_->returnTuple.empty()) {
      error(DiagId::sema_return_tuple_mix, r.value->range, current_->name, "one value", returnShape());
    } else if (infersReturn()) {
      current_->returnType = inferredReturnType(*r.value, t);  // inferred from the first return
    } else if (current_->returnType != ScalarType::Invalid) {
      checkConvertible(*r.value, t, current_->returnType);
    }
  }

  // `return a, b`: the same number of values as `-> tuple[...]` or as the
  // closure's first return; each converts to its element's type as a
  // scalar return converts to the function's.
  void checkTupleReturn(ReturnStmt& r, TupleExpr& tuple) {
    std::vector<ScalarType> types;
    for (auto& e : tuple.elements) types.push_back(typeOf(*e));
    for (ScalarType t : types)
      if (t == ScalarType::Invalid) return;
    if (infersReturn()) {
      for (size_t i = 0; i < types.size(); ++i)
        current_->returnTuple.push_back(inferredReturnType(*tuple.elements[i], types[i]));
      return;
    }
    if (current_->returnTuple.empty()) {
      error(DiagId::sema_return_tuple_mix, r.value->range, current_->name, "a tuple", returnShape());
      return;
    }
    if (current_->returnTuple.size() != types.size()) {
      error(DiagId::sema_return_arity, r.value->range, current_->name, types.size(), returnShape());
      return;
    }
    for (size_t i = 0; i < types.size(); ++i) checkConvertible(*tuple.elements[i], types[i], current_->returnTuple[i]);
  }

  // What the current function's returns must look like, for messages:
  // "declares '-> tuple[f32, f32]'", "returns 2 values at its first return".
  std::string returnShape() const {
    const FunctionDecl& f = *current_->function;
    if (f.returnType) {
      const SourceRange& r = f.returnType->range;
      return fmt::format("declares '-> {}'", sema_.file->text().substr(r.begin.offset, r.end.offset - r.begin.offset));
    }
    if (!current_->returnTuple.empty())
      return fmt::format("returns {} values at its first return", current_->returnTuple.size());
    return "returns one value at its first return";
  }

  void checkCondition(Expr& cond) {
    ScalarType t = typeOf(cond);
    if (t == ScalarType::Invalid) return;
    if (!isNumeric(t) && t != ScalarType::Bool) error(DiagId::sema_condition_type, cond.range, scalarName(t));
  }

  void checkAssign(AssignStmt& a) {
    if (a.isConst) {  // a kernel-body const: its value is typed like a module const's
      typeOf(*a.value);
      return;
    }
    if (auto* n = a.target->as<NameExpr>(); n && n->symbol && n->symbol->kind == SymbolKind::Fragment) {
      checkFragmentDecl(*n->symbol, *a.value->as<CallExpr>());
      return;
    }
    if (const Symbol* frag = fragmentOf(*a.target)) {  // acc[i, j] = mma(a[i], b[j], acc[i, j])
      auto* call = a.value->as<CallExpr>();
      if (!call || call->symbol || call->callee != "mma") {
        error(DiagId::sema_fragment_use, a.target->range, frag->name);
        return;
      }
      checkMatrixCall(*call, /*assigned=*/true);
      if (frag->fragmentRole != Symbol::FragmentRole::Acc)
        error(DiagId::sema_mma_target, a.target->range, frag->name,
              frag->fragmentRole == Symbol::FragmentRole::A ? "A" : "B");
      return;
    }
    if (auto* n = a.target->as<NameExpr>();
        n && n->symbol && (n->symbol->kind == SymbolKind::SharedBuffer || n->symbol->kind == SymbolKind::LocalBuffer)) {
      checkScratch(*n->symbol, *a.value->as<CallExpr>());
      return;
    }
    if (auto* targets = a.target->as<TupleExpr>()) {
      checkUnpack(a, *targets);
      return;
    }
    assignTo(*a.target, *a.value, typeOf(*a.value));
  }

  // One store of an assignment: `value`, of type `type`, into `target` (a
  // name or an element). For an unpacking of a call, `value` is the call
  // and `type` the type of the tuple's element.
  void assignTo(Expr& target, Expr& value, ScalarType type) {
    if (type == ScalarType::Invalid) {
      // The value's error is reported; a local this assignment declares has
      // no type, and its later reads must not report errors of their own.
      failDeclaration(target);
      return;
    }
    if (auto* n = target.as<NameExpr>()) {
      Symbol* sym = n->symbol;
      if (!sym) return;
      const bool declares = sym->type == ScalarType::Invalid;
      if (declares) {
        // The declaring assignment: the local's type comes from the
        // annotation, else from the value (f16/bf16 values compute in f32).
        sym->type = sym->declaredType != ScalarType::Invalid ? sym->declaredType
                    : isWeak(value)                          ? type
                                                             : computeType(type);
      }
      n->type = sym->type;
      if (!declares && truncatesInferredLocal(value, type, *sym)) return;
      checkConvertible(value, type, sym->type);
      return;
    }
    ScalarType targetType = typeOf(target);
    if (targetType != ScalarType::Invalid) checkConvertible(value, type, targetType);
  }

  void failDeclaration(const Expr& target) {
    if (auto* n = target.as<NameExpr>(); n && n->symbol && n->symbol->type == ScalarType::Invalid)
      failedDeclarations_.insert(n->symbol);
  }

  // `a, x[i] = b, c` or `m, s = stats(v)` (docs/language.md 5.11): as many
  // values as targets, each stored as a plain assignment would store it.
  void checkUnpack(AssignStmt& a, TupleExpr& targets) {
    std::vector<ScalarType> types;
    std::vector<Expr*> values;  // the expression each type comes from
    if (auto* list = a.value->as<TupleExpr>()) {
      for (auto& e : list->elements) {
        types.push_back(typeOf(*e));
        values.push_back(e.get());
      }
    } else if (!unpackedCallTypes(*a.value, types)) {
      for (auto& t : targets.elements) failDeclaration(*t);
      return;
    }
    values.resize(types.size(), a.value.get());
    if (types.size() != targets.elements.size()) {
      error(DiagId::sema_unpack_arity, a.value->range, types.size(), targets.elements.size());
      for (auto& t : targets.elements) failDeclaration(*t);
      return;
    }
    for (size_t i = 0; i < types.size(); ++i) assignTo(*targets.elements[i], *values[i], types[i]);
  }

  // The element types of the tuple that `value` returns; false, reported,
  // when it is not a call of a function that returns a tuple.
  bool unpackedCallTypes(Expr& value, std::vector<ScalarType>& types) {
    auto* call = value.as<CallExpr>();
    if (call && argReduceBuiltin(*call)) {  // `m, j = warp_argmax(v, i)`
      typeOf(*call, /*allowVoid=*/true);
      types = argReduceTypes(*call);
      return !types.empty();  // refused arguments are reported
    }
    if (call && call->symbol && call->symbol->scope) {
      ScalarType one = typeOf(*call, /*allowVoid=*/true);
      FunctionScope* callee = call->symbol->scope;
      if (!callee->returnTuple.empty()) {
        types = callee->returnTuple;
        return true;
      }
      error(DiagId::sema_unpack_not_tuple, value.range,
            fmt::format("'{}(...)', which returns {}", call->callee,
                        one == ScalarType::Invalid ? "no value" : "one value"));
      return false;
    }
    ScalarType one = typeOf(value);
    if (one != ScalarType::Invalid)
      error(DiagId::sema_unpack_not_tuple, value.range, fmt::format("one {} value", scalarName(one)));
    return false;
  }

  void checkAugAssign(AugAssignStmt& a) {
    ScalarType target = typeOf(*a.target);
    ScalarType value = typeOf(*a.value);
    if (target == ScalarType::Invalid || value == ScalarType::Invalid) return;
    ScalarType result = arithmetic(a.op, {target, false}, {value, isWeak(*a.value)}, a.range);
    if (result == ScalarType::Invalid) return;
    if (auto* n = a.target->as<NameExpr>(); n && n->symbol && truncatesInferredLocal(*a.value, result, *n->symbol))
      return;
    checkConvertible(*a.value, result, target);
  }

  // docs/language.md 5.1: a local whose integer type was inferred from its
  // first value does not silently truncate a float assigned to it later
  // (`s = 0` then `s += x[i]` would drop the fraction at every step). An
  // annotated local (`s: i32 = 0`), an element, a parameter and an explicit
  // cast convert as C++ does. Reports, and returns true, when `from` is such
  // a float.
  bool truncatesInferredLocal(const Expr& where, ScalarType from, const Symbol& local) {
    if (local.kind != SymbolKind::Local || local.declaredType != ScalarType::Invalid || !local.typeParam.empty())
      return false;
    if (!isInteger(local.type) || !isFloat(from)) return false;
    const ScalarType floatType = computeType(from);
    error(DiagId::sema_float_to_int_local, where.range, local.name, scalarName(local.type), scalarName(floatType));
    // The fix: the first value as a float literal, else an annotation.
    const Expr* init = local.init;
    const auto* negated = init ? init->as<UnaryExpr>() : nullptr;
    if (negated && negated->op == UnaryOp::Neg) init = negated->operand.get();
    else negated = nullptr;
    const auto* literal = init ? init->as<IntLitExpr>() : nullptr;
    if (literal && floatType == ScalarType::F32) {
      diags_.note(sema_.file, local.declRange,
                  "'{}' gets its type from this assignment; write '{} = {}{}.0' to make it a float, or convert with "
                  "{}(...) to truncate on purpose",
                  local.name, local.name, negated ? "-" : "", literal->value, scalarName(local.type));
    } else {
      diags_.note(sema_.file, local.declRange,
                  "'{}' gets its type from this assignment; declare it '{}: {} = ...' to make it a float, or convert "
                  "with {}(...) to truncate on purpose",
                  local.name, local.name, scalarName(floatType), scalarName(local.type));
    }
    return true;
  }

  void checkScratch(Symbol& buf, CallExpr& call) {
    if (buf.barrierCount) return checkBarriers(call);
    auto* dims = call.args.size() >= 2 ? call.args[1]->as<ListExpr>() : nullptr;
    if (dims) {
      for (auto& d : dims->elements) {
        ScalarType t = typeOf(*d);
        if (t != ScalarType::Invalid && !isInteger(t)) error(DiagId::sema_scratch_shape, d->range, call.callee);
      }
    }
    if (buf.swizzle) checkSwizzle(buf);
    if (buf.kind == SymbolKind::LocalBuffer && call.args.size() == 3) {
      ScalarType init = typeOf(*call.args[2]);
      if (init != ScalarType::Invalid) checkConvertible(*call.args[2], init, buf.type);
    }
  }

  // barriers(N, count): N from 1 to 1024 (8 KB of shared memory), count
  // from 1 to 2^20 - 1 (an mbarrier's limit, PTX ISA 9.7.13.15), both
  // compile-time integers.
  void checkBarriers(CallExpr& call) {
    struct Limit {
      const char* what;
      int64_t max;
    };
    const Limit limits[2] = {{"number of barriers N", 1024}, {"arrival count", (int64_t(1) << 20) - 1}};
    for (size_t k = 0; k < 2; ++k) {
      // Deferred: known per specialization only (warp_size(), a tuned
      // const, a dim for count), or not compile-time at all (resolution
      // said so).
      const CompileTimeInt n = compileTimeInt(*call.args[k], /*deferAnyInteger=*/true);
      if (outside(n, 1, limits[k].max))
        error(DiagId::sema_barriers_value, call.args[k]->range, "N, count", limits[k].what, limits[k].max,
              n.kind == CompileTimeInt::Kind::Known ? n.notValue() : std::string());
    }
  }

  // shared(T, [R, C], swizzle=S): what the layout needs of S, R and C
  // (docs/language.md 5.4), checked here where their values are known
  // without a specialization; the rest when a specialization is generated
  // (passes/specialization_checks, checkSwizzledBuffers).
  void checkSwizzle(const Symbol& buf) {
    if (buf.shape.size() != 2) {
      error(DiagId::sema_swizzle_rank, buf.swizzle->range, buf.name, buf.shape.size());
      return;
    }
    ScalarType t = typeOf(const_cast<Expr&>(*buf.swizzle));
    auto s = evaluateConst(*buf.swizzle, constsOnly());
    if ((t != ScalarType::Invalid && !isInteger(t)) || (s && s->isFloat)) {
      error(DiagId::sema_swizzle_value, buf.swizzle->range, buf.name,
            s ? fmt::format("{}", s->asDouble()) : fmt::format("a {}", scalarName(t)));
      return;
    }
    if (!s) return;
    if (s->i != 32 && s->i != 64 && s->i != 128) {
      error(DiagId::sema_swizzle_value, buf.swizzle->range, buf.name, s->i);
      return;
    }
    if (auto cols = evaluateConst(*buf.shape[1], constsOnly());
        cols && !cols->isFloat && buf.type != ScalarType::Invalid) {
      const int64_t bytes = cols->i * int64_t(scalarBytes(buf.type));
      if (bytes % s->i != 0)
        error(DiagId::sema_swizzle_columns, buf.shape[1]->range, buf.name, bytes, cols->i, scalarName(buf.type), s->i);
    }
    if (auto rows = evaluateConst(*buf.shape[0], constsOnly()); rows && !rows->isFloat && rows->i % 8 != 0)
      error(DiagId::sema_swizzle_rows, buf.shape[0]->range, buf.name, rows->i, 8 * s->i);
  }

  // The fragment array an element expression `x[i, j]` names, else null.
  static const Symbol* fragmentOf(const Expr& e) {
    const auto* idx = e.as<IndexExpr>();
    const auto* base = idx ? idx->base->as<NameExpr>() : nullptr;
    return base && base->symbol && base->symbol->kind == SymbolKind::Fragment ? base->symbol : nullptr;
  }

  // acc = mma_zero(f32, [..]): f32 accumulators; a = mma_a(T, [..]),
  // b = mma_b(T, [..]): f16 or bf16 operands. Sizes are integers.
  void checkFragmentDecl(Symbol& frag, CallExpr& call) {
    if (auto* dims = call.args.size() >= 2 ? call.args[1]->as<ListExpr>() : nullptr)
      for (auto& d : dims->elements) {
        ScalarType t = typeOf(*d);
        if (t != ScalarType::Invalid && !isInteger(t)) error(DiagId::sema_scratch_shape, d->range, call.callee);
      }
    const ScalarType t = frag.type;
    if (t == ScalarType::Invalid) return;
    if (frag.fragmentRole == Symbol::FragmentRole::Acc && t != ScalarType::F32)
      error(DiagId::sema_fragment_type, call.args[0]->range, call.callee, "f32 accumulators",
            fmt::format("{} is not one (write mma_zero(f32, [..]))", scalarName(t)));
    if (frag.fragmentRole == Symbol::FragmentRole::Rows && t != ScalarType::F32)
      error(DiagId::sema_fragment_type, call.args[0]->range, call.callee, "f32 row values",
            fmt::format("{} is not one (write mma_rows(f32, [..]))", scalarName(t)));
    if ((frag.fragmentRole == Symbol::FragmentRole::A || frag.fragmentRole == Symbol::FragmentRole::B) &&
        t != ScalarType::F16 && t != ScalarType::BF16)
      error(DiagId::sema_fragment_type, call.args[0]->range, call.callee, "f16 or bf16 operand tiles",
            fmt::format("{} is neither", scalarName(t)));
  }

  // One tile argument of a matrix builtin: `x[i]` of a fragment array of
  // `role`. Its indices are typed; the fragment array, or null.
  const Symbol* matrixTile(CallExpr& c, size_t arg, Symbol::FragmentRole role, const char* what, const char* example) {
    Expr& e = *c.args[arg];
    const Symbol* frag = fragmentOf(e);
    if (!frag || frag->fragmentRole != role) {
      error(DiagId::sema_mma_tile, e.range, arg + 1, c.callee, what, example);
      return nullptr;
    }
    for (auto& i : e.as<IndexExpr>()->indices) {
      requireIndex(*i);
    }
    return frag->type == ScalarType::Invalid ? nullptr : frag;
  }

  // mma_load_a/_a_t/_b/_b_t(tile, src, row, col) and mma(a, b, acc)
  // (docs/language.md 8.11). Neither has a value: a load is a statement,
  // mma the value of an assignment to an accumulator tile (checkAssign).
  ScalarType checkMatrixCall(CallExpr& c, bool assigned) {
    if (c.callee == "dot" || c.callee == "dot_bt") return checkDot(c);
    if (c.callee == "dot_wait") {  // dot_wait(n): the immediate of wgmma.wait_group
      auto n = evaluateConst(*c.args[0], constsOnly());
      if (!n && constsOnlyExpr(*c.args[0])) return ScalarType::Invalid;
      if (!n || n->isFloat || n->i < 0)
        error(DiagId::sema_dot_wait_count, c.args[0]->range,
              n && !n->isFloat ? fmt::format(", not {}", n->i) : std::string());
      return ScalarType::Invalid;
    }
    if (c.callee == "mma_to_a") {  // mma_to_a(a[k], acc[i, j])
      matrixTile(c, 0, Symbol::FragmentRole::A, "an mma_a(...)", "mma_to_a(a[k], acc[i, j])");
      matrixTile(c, 1, Symbol::FragmentRole::Acc, "an mma_zero(...)", "mma_to_a(a[k], acc[i, j])");
      return ScalarType::Invalid;
    }
    if (c.callee == "mma_store") {
      checkMmaStore(c);
      return ScalarType::Invalid;
    }
    if (c.callee == "row_max" || c.callee == "row_sum") {  // row_max(m[i], acc[i, j])
      const std::string example = c.callee + "(m[i], acc[i, j])";
      matrixTile(c, 0, Symbol::FragmentRole::Rows, "an mma_rows(...)", example.c_str());
      matrixTile(c, 1, Symbol::FragmentRole::Acc, "an mma_zero(...)", example.c_str());
      return ScalarType::Invalid;
    }
    if (c.callee == "mma") {
      if (!assigned) error(DiagId::sema_mma_position, c.range);
      const Symbol* a = matrixTile(c, 0, Symbol::FragmentRole::A, "an mma_a(...)", "mma(a[i], b[j], acc[i, j])");
      const Symbol* b = matrixTile(c, 1, Symbol::FragmentRole::B, "an mma_b(...)", "mma(a[i], b[j], acc[i, j])");
      matrixTile(c, 2, Symbol::FragmentRole::Acc, "an mma_zero(...)", "mma(a[i], b[j], acc[i, j])");
      if (a && b && a->type != b->type)
        error(DiagId::sema_mma_operand_mix, c.range, scalarName(a->type), scalarName(b->type));
      return ScalarType::Invalid;
    }
    const bool isA = c.callee.rfind("mma_load_a", 0) == 0;
    const Symbol* tile = matrixTile(c, 0, isA ? Symbol::FragmentRole::A : Symbol::FragmentRole::B,
                                    isA ? "an mma_a(...)" : "an mma_b(...)",
                                    isA ? "mma_load_a(a[i], src, row, k)" : "mma_load_b(b[j], src, k, col)");
    const auto* src = c.args[1]->as<NameExpr>();
    const Symbol* s = src ? src->symbol : nullptr;
    const bool memory =
        s && ((s->kind == SymbolKind::TensorParam && s->owner && s->owner->kind == FunctionScope::Kind::Kernel) ||
              s->kind == SymbolKind::SharedBuffer);
    if (tile) {
      std::string why;
      if (!memory)
        why = s ? fmt::format("'{}' is a {}", s->name,
                              s->kind == SymbolKind::TensorParam ? "def's tensor parameter" : symbolKindName(s->kind))
                : std::string("this is an expression");
      else if (s->shape.size() != 2) why = fmt::format("'{}' has {} dims", s->name, s->shape.size());
      else if (s->type != tile->type) why = fmt::format("'{}' holds {}", s->name, scalarName(s->type));
      if (!why.empty()) error(DiagId::sema_mma_source, c.args[1]->range, c.callee, scalarName(tile->type), why);
    }
    for (size_t i = 2; i < c.args.size(); ++i) {
      requireIndex(*c.args[i]);
    }
    return ScalarType::Invalid;
  }

  // mma_store(C, r, c, acc[i, j]): C a kernel's 2-D tensor of f32, f16 or
  // bf16 (the types a 16-byte run of converted accumulators fills), the
  // coordinates integers, the last argument one accumulator tile. With 5
  // arguments, mma_store(C, b, r, c, acc[i, j]): C is 3-D and b picks its
  // matrix (copy_async's batch).
  void checkMmaStore(CallExpr& c) {
    const size_t last = c.args.size() - 1;
    matrixTile(c, last, Symbol::FragmentRole::Acc, "an mma_zero(...)", "mma_store(C, row, col, acc[i, j])");
    const auto* dstName = c.args[0]->as<NameExpr>();
    const Symbol* dst = dstName ? dstName->symbol : nullptr;
    const size_t rank = c.args.size() - 2;  // 2, or 3 with a batch index
    std::string why;
    if (!dst || dst->kind != SymbolKind::TensorParam || !dst->owner || dst->owner->kind != FunctionScope::Kind::Kernel)
      why =
          dst ? fmt::format("'{}' is a {}", dst->name,
                            dst->kind == SymbolKind::TensorParam ? "def's tensor parameter" : symbolKindName(dst->kind))
              : std::string("the first argument is an expression");
    else if (dst->shape.size() != rank)
      why = fmt::format("'{}' has {} dims; {} arguments store to a {}-D tensor", dst->name, dst->shape.size(),
                        c.args.size(), rank);
    else if (dst->type != ScalarType::Invalid && dst->type != ScalarType::F32 && dst->type != ScalarType::F16 &&
             dst->type != ScalarType::BF16)
      why = fmt::format("'{}' holds {}", dst->name, scalarName(dst->type));
    if (!why.empty()) error(DiagId::sema_mma_store_target, c.args[0]->range, why);
    for (size_t i = 1; i < last; ++i) {
      requireIndex(*c.args[i]);
    }
  }

  // dot(acc, As, r, k, Bs, k2, c, D) (docs/language.md 8.13): acc a whole
  // 2-D accumulator array, As and Bs 2-D shared buffers of one f16/bf16
  // type, the coordinates integers, D a constant multiple of 16 (one the
  // specialization decides is checked by the helper's static_assert).
  ScalarType checkDot(CallExpr& c) {
    // dot(acc, As, r, k, Bs, k2, c, D), or with A in registers dot(acc, a,
    // Bs, k2, c, D); dot_bt the same with B stored N x K (c and k2 swap).
    if (c.args.size() != 8 && c.args.size() != 6) {
      error(DiagId::sema_dot_args, c.range,
            fmt::format("{} takes 8 arguments (A in shared memory) or 6 (A in registers), not {}", c.callee,
                        c.args.size()));
      return ScalarType::Invalid;
    }
    const bool registers = c.args.size() == 6;
    const Symbol* acc = argSymbol(c, 0);
    const Symbol* as = argSymbol(c, 1);
    const Symbol* bs = argSymbol(c, registers ? 2 : 4);
    std::string why;
    auto bufferProblem = [&](const Symbol* s, const char* which) -> std::string {
      if (!s) return fmt::format("the {} argument is an expression", which);
      if (s->kind != SymbolKind::SharedBuffer) return fmt::format("'{}' is a {}", s->name, symbolKindName(s->kind));
      if (s->shape.size() != 2) return fmt::format("'{}' has {} dims", s->name, s->shape.size());
      if (s->type != ScalarType::Invalid && s->type != ScalarType::F16 && s->type != ScalarType::BF16)
        return fmt::format("'{}' holds {}", s->name, scalarName(s->type));
      return "";
    };
    auto registersProblem = [&](const Symbol* s) -> std::string {
      if (!s || s->kind != SymbolKind::Fragment || s->fragmentRole != Symbol::FragmentRole::A)
        return "with 6 arguments the second is a whole mma_a(...) array (A in registers)";
      if (s->shape.size() != 1) return fmt::format("'{}' has {} dims, not the one of [TK]", s->name, s->shape.size());
      auto ti = acc->shape.empty() ? std::nullopt : evaluateConst(*acc->shape[0], constsOnly());
      if (!ti || ti->isFloat || ti->i != 1)
        return fmt::format(
            "with A in registers '{}' is one row of tiles (mma_zero(f32, [1, TJ])): each warp holds "
            "its 16 rows",
            acc->name);
      return "";
    };
    if (!acc || acc->kind != SymbolKind::Fragment || acc->fragmentRole != Symbol::FragmentRole::Acc)
      why = acc ? fmt::format("'{}' (the first argument) is not an accumulator array", acc->name)
                : "the first argument is not an accumulator array (a whole mma_zero(...) array, not one tile)";
    else if (acc->shape.size() != 2)
      why = fmt::format("'{}' has {} dims, not the two of [TI, TJ]", acc->name, acc->shape.size());
    else if (why = registers ? registersProblem(as) : bufferProblem(as, "second"); !why.empty()) {
    } else if (why = bufferProblem(bs, registers ? "third" : "fifth"); !why.empty()) {
    } else if (as->type != ScalarType::Invalid && bs->type != ScalarType::Invalid && as->type != bs->type)
      why = fmt::format("'{}' holds {}, '{}' {}", as->name, scalarName(as->type), bs->name, scalarName(bs->type));
    if (!why.empty()) {
      error(DiagId::sema_dot_args, c.range, why);
      return ScalarType::Invalid;
    }
    const std::vector<size_t> coordinates = registers ? std::vector<size_t>{3, 4} : std::vector<size_t>{2, 3, 5, 6};
    for (size_t i : coordinates) {
      requireIndex(*c.args[i]);
    }
    const Expr& depth = *c.args.back();
    auto d = evaluateConst(depth, constsOnly());
    if (!d && constsOnlyExpr(depth)) return ScalarType::Invalid;
    if (!d || d->isFloat || d->i <= 0 || d->i % 16 != 0)
      error(DiagId::sema_dot_args, depth.range,
            d && !d->isFloat ? fmt::format("the depth is {}", d->i) : std::string("the depth is not a constant"));
    return ScalarType::Invalid;
  }

  // copy_async(dst, r, c, src, sr, sc, n): dst a 2-D shared buffer, src a
  // 2-D kernel tensor of its element type, n a constant run of 4, 8 or 16
  // bytes (the sizes of cp.async), the coordinates integers. With 8
  // arguments, copy_async(dst, r, c, src, sb, sr, sc, n): src is 3-D and sb
  // picks its matrix (a batch).
  // copy_wait(n): n a constant >= 0 (cp.async.wait_group's immediate).
  // Names only literals and consts, some of which only a specialization or
  // the warp width decides (`const W = 16 // sizeof(T)`): a C++ constant
  // expression in the printed file, whose value the helper's static_assert
  // checks where sema could not.
  static bool constsOnlyExpr(const Expr& e) {
    if (e.as<IntLitExpr>()) return true;
    if (const auto* n = e.as<NameExpr>()) return n->symbol && n->symbol->kind == SymbolKind::Const;
    if (const auto* u = e.as<UnaryExpr>()) return constsOnlyExpr(*u->operand);
    if (const auto* b = e.as<BinaryExpr>()) return constsOnlyExpr(*b->lhs) && constsOnlyExpr(*b->rhs);
    return false;
  }

  // An index or coordinate: an integer where its type is known
  // (sema-index-type otherwise).
  void requireIndex(Expr& e) {
    const ScalarType t = typeOf(e);
    if (t != ScalarType::Invalid && !isInteger(t)) error(DiagId::sema_index_type, e.range, scalarName(t));
  }

  // An argument that must be a compile-time integer (a barrier count, a
  // register budget, a copy's width, a box's size): Known, with its value;
  // Deferred, a const only a specialization or the warp width decides,
  // which the printed constant expression's static_assert (or the
  // specialization's checks) tests; or Bad: a float, or not compile-time.
  // `deferAnyInteger`: any integer sema cannot evaluate is Deferred (where
  // resolution already refused values known only at run time).
  struct CompileTimeInt {
    enum class Kind { Known, Deferred, Bad } kind;
    std::optional<int64_t> value;  // Known; Bad where it has an integer value (a bool's)
    // ", not 12" where there is a value to show, for the messages.
    std::string notValue() const { return value ? fmt::format(", not {}", *value) : std::string(); }
  };
  CompileTimeInt compileTimeInt(Expr& e, bool deferAnyInteger = false) {
    const ScalarType t = typeOf(e);
    const auto v = evaluateConst(e, constsOnly());
    const bool integerLike = t == ScalarType::Invalid || isInteger(t);
    if (v && !v->isFloat && isInteger(t)) return {CompileTimeInt::Kind::Known, v->i};
    if (!v && integerLike && (deferAnyInteger || constsOnlyExpr(e))) return {CompileTimeInt::Kind::Deferred, {}};
    return {CompileTimeInt::Kind::Bad, v && !v->isFloat ? std::optional<int64_t>(v->i) : std::nullopt};
  }
  // Bad, or Known outside [lo, hi] (or not a multiple of `step`).
  static bool outside(const CompileTimeInt& n, int64_t lo, int64_t hi, int64_t step = 1) {
    using K = CompileTimeInt::Kind;
    return n.kind == K::Bad || (n.kind == K::Known && (*n.value < lo || *n.value > hi || *n.value % step != 0));
  }

  // The symbol argument i names, if it is a name.
  static const Symbol* argSymbol(const CallExpr& c, size_t i) {
    const auto* nm = c.args[i]->as<NameExpr>();
    return nm ? nm->symbol : nullptr;
  }

  // A copy's buffers (copy_async, copy_tile): the first argument a 2-D
  // shared buffer (not phase barriers), the fourth a kernel's tensor of
  // srcRank dims and the buffer's element type. What is wrong, else "";
  // `rankNote` follows a wrong rank of the tensor.
  std::string copyBuffersProblem(const CallExpr& c, size_t srcRank, const std::string& rankNote) {
    const Symbol* dst = argSymbol(c, 0);
    const Symbol* src = argSymbol(c, 3);
    if (!dst || dst->kind != SymbolKind::SharedBuffer || dst->barrierCount)
      return dst ? fmt::format("'{}' (the first argument) is a {}", dst->name,
                               dst->barrierCount ? "barriers(...) declaration" : symbolKindName(dst->kind))
                 : "the first argument is an expression";
    if (!src || src->kind != SymbolKind::TensorParam || !src->owner || src->owner->kind != FunctionScope::Kind::Kernel)
      return src ? fmt::format(
                       "'{}' (the fourth argument) is a {}", src->name,
                       src->kind == SymbolKind::TensorParam ? "def's tensor parameter" : symbolKindName(src->kind))
                 : "the fourth argument is an expression";
    if (dst->shape.size() != 2) return fmt::format("'{}' has {} dims", dst->name, dst->shape.size());
    if (src->shape.size() != srcRank) return fmt::format("'{}' has {} dims{}", src->name, src->shape.size(), rankNote);
    if (dst->type != ScalarType::Invalid && src->type != ScalarType::Invalid && dst->type != src->type)
      return fmt::format("'{}' holds {}, '{}' {}", dst->name, scalarName(dst->type), src->name, scalarName(src->type));
    return "";
  }

  void checkAsyncCopy(CallExpr& c) {
    if (c.callee == "copy_commit") return;
    if (c.callee == "arrive" || c.callee == "wait") return checkPhaseBarrierCall(c);
    if (c.callee == "copy_tile") return checkCopyTile(c);
    if (c.callee == "claim_registers" || c.callee == "release_registers") {
      const CompileTimeInt n = compileTimeInt(*c.args[0]);
      if (outside(n, 24, 256, 8)) error(DiagId::sema_register_budget, c.args[0]->range, c.callee, n.notValue());
      return;
    }
    if (c.callee == "copy_wait") {
      const CompileTimeInt n = compileTimeInt(*c.args[0]);
      if (outside(n, 0, INT64_MAX)) error(DiagId::sema_copy_wait_count, c.args[0]->range, n.notValue());
      return;
    }
    const Symbol* dst = argSymbol(c, 0);
    const size_t srcRank = c.args.size() - 5;  // 2, or 3 with a batch index
    const size_t nArg = c.args.size() - 1;
    const std::string why =
        copyBuffersProblem(c, srcRank, fmt::format("; {} arguments copy from a {}-D tensor", c.args.size(), srcRank));
    if (!why.empty()) error(DiagId::sema_copy_async_buffers, c.range, why);
    for (size_t i = 1; i < nArg; ++i) {
      if (i == 3) continue;  // src
      requireIndex(*c.args[i]);
    }
    if (!dst || dst->type == ScalarType::Invalid) return;
    const int64_t bytes = scalarBits(dst->type) / 8;
    const CompileTimeInt n = compileTimeInt(*c.args[nArg]);
    if (n.kind == CompileTimeInt::Kind::Deferred) return;
    const int64_t run = n.value.value_or(0) * bytes;
    if (n.kind == CompileTimeInt::Kind::Bad || (run != 4 && run != 8 && run != 16))
      error(DiagId::sema_copy_async_width, c.args[nArg]->range, scalarName(dst->type),
            bytes ? fmt::format("{}, {} or {}", 4 / bytes, 8 / bytes, 16 / bytes) : std::string("?"),
            n.value ? n.notValue() : std::string(", a constant"));
  }

  // copy_tile(dst, r, c, src, sr, sc, R, C, bars, i): dst a 2-D shared
  // buffer (not barriers), src a 2-D kernel tensor of its type, R and C
  // compile-time integers in [1, 256] (a TMA box's limit), bars a
  // barriers(...) declaration, the indices integers.
  void checkCopyTile(CallExpr& c) {
    const Symbol* bars = argSymbol(c, 8);
    std::string why = copyBuffersProblem(c, 2, "");
    if (why.empty() && (!bars || !bars->barrierCount))
      why = bars ? fmt::format("'{}' (the ninth argument) is not a barriers(...) declaration", bars->name)
                 : "the ninth argument is an expression";
    for (size_t k : {size_t(6), size_t(7)}) {
      if (!why.empty()) break;
      const CompileTimeInt n = compileTimeInt(*c.args[k]);
      if (outside(n, 1, 256))
        why = fmt::format("its {} is {}", k == 6 ? "row count R" : "column count C",
                          n.value ? fmt::format("{}", *n.value) : std::string("not a compile-time integer"));
    }
    if (!why.empty()) error(DiagId::sema_copy_tile_args, c.range, why);
    for (size_t i : {size_t(1), size_t(2), size_t(4), size_t(5), size_t(9)}) {
      requireIndex(*c.args[i]);
    }
  }

  // arrive(bars, i) and wait(bars, i, n): bars a barriers(...) declaration
  // (the kernel's, or captured by a closure), i and n integers.
  void checkPhaseBarrierCall(CallExpr& c) {
    const auto* nm = c.args[0]->as<NameExpr>();
    const Symbol* bars = nm ? nm->symbol : nullptr;
    if (!bars || !bars->barrierCount)
      error(DiagId::sema_barriers_argument, c.args[0]->range, c.callee,
            c.callee == "arrive" ? "arrive(full, s)" : "wait(full, s, n)",
            bars ? fmt::format("; '{}' is a {}", bars->name, symbolKindName(bars->kind)) : std::string());
    requireIndex(*c.args[1]);
    if (c.args.size() == 3) {
      ScalarType n = typeOf(*c.args[2]);
      if (n != ScalarType::Invalid && !isInteger(n)) error(DiagId::sema_wait_phase, c.args[2]->range, scalarName(n));
    }
  }

  // `for r, c, v in elements(acc[i, j])`: r and c are i32 tile coordinates,
  // v the f32 element.
  // With row fragments, `for r, c, v, x in elements(acc[i, j], m[i])`: x
  // is m[i]'s value at row r (f32, read-only). `for r, x, y in
  // elements(m[i], l[i])`: r the row, x and y its values. v and a row
  // fragment's x may be assigned (sema_resolve), which writes the element.
  void checkElementsFor(ForStmt& f) {
    const Symbol* frag = fragmentOf(*f.elementsOf);
    const bool rows = frag && frag->fragmentRole == Symbol::FragmentRole::Rows;
    auto typeIndices = [&](Expr& tile) {
      for (auto& i : tile.as<IndexExpr>()->indices) {
        requireIndex(*i);
      }
    };
    if (!frag || (frag->fragmentRole != Symbol::FragmentRole::Acc && !rows)) {
      error(DiagId::sema_mma_tile, f.elementsOf->range, 1, "elements", "an mma_zero(...) or mma_rows(...)",
            "elements(acc[i, j])");
    } else {
      typeIndices(*f.elementsOf);
    }
    for (size_t k = 0; k < f.elementRows.size(); ++k) {
      Expr& e = *f.elementRows[k];
      const Symbol* r = fragmentOf(e);
      if (!r || r->fragmentRole != Symbol::FragmentRole::Rows)
        error(DiagId::sema_mma_tile, e.range, k + 2, "elements", "an mma_rows(...)", "elements(acc[i, j], m[i])");
      else typeIndices(e);
    }
    // The names: r, c, v and one per row fragment; r, x and one per
    // further row fragment for a row fragment.
    const size_t want = (rows ? 1 : 2) + f.elementRows.size();
    bool named = true;
    if (frag && f.elementSymbols.size() != want && (rows || frag->fragmentRole == Symbol::FragmentRole::Acc)) {
      error(DiagId::sema_elements_vars, f.varRange, want + 1, f.elementSymbols.size() + 1,
            rows ? "'for r, x in elements(m[i])', one more per further row fragment"
                 : "'for r, c, v in elements(acc[i, j])', one more per row fragment");
      named = false;  // the names stay untyped and silent
    }
    if (f.symbol) f.symbol->type = ScalarType::I32;
    for (size_t k = 0; k < f.elementSymbols.size(); ++k)
      f.elementSymbols[k]->type = !named ? ScalarType::Invalid : k == 0 && !rows ? ScalarType::I32 : ScalarType::F32;
    checkBlock(f.body);
  }

  void checkFor(ForStmt& f) {
    if (f.elementsOf) return checkElementsFor(f);
    ScalarType t = ScalarType::Invalid;
    bool allWeak = true;
    // The variable's type comes from start and stop; the step is typed on
    // its own, so a run-time step of another signedness is no sign mix.
    const size_t bounds = std::min<size_t>(f.rangeArgs.size(), 2);
    for (size_t i = 0; i < f.rangeArgs.size(); ++i) {
      Expr& a = *f.rangeArgs[i];
      ScalarType at = typeOf(a);
      if (at != ScalarType::Invalid && !isInteger(at)) error(DiagId::sema_range_not_int, a.range, scalarName(at));
      if (at == ScalarType::Invalid || !isInteger(at)) {
        // Reported; the body is still checked, with the loop variable
        // untyped and silent.
        if (f.symbol) {
          f.symbol->type = ScalarType::Invalid;
          failedDeclarations_.insert(f.symbol);
        }
        checkBlock(f.body);
        return;
      }
      if (i >= bounds) continue;
      bool weak = isWeak(a);
      if (t == ScalarType::Invalid) t = at;
      else t = arithmetic(BinaryOp::Add, {t, allWeak}, {at, weak}, a.range);
      allWeak &= weak;
    }
    if (f.rangeArgs.size() == 3) checkStep(f, t);
    if (f.symbol) f.symbol->type = t;
    checkBlock(f.body);
  }

  // A range's step: a nonzero compile-time integer (unrolled loops need
  // one), or for `range` any integer, evaluated once at run time.
  void checkStep(ForStmt& f, ScalarType var) {
    Expr& step = *f.rangeArgs[2];
    if (auto v = evaluateConst(step, constsOnly()); v && !v->isFloat) {
      if (v->i == 0) return error(DiagId::sema_range_step_zero, step.range);
      if (v->i < 0 && isInteger(var) && !isSigned(var)) return error(DiagId::sema_range_step_unsigned, step.range);
      f.step = v->i;
      f.stepSign = v->i > 0 ? 1 : -1;
      f.plainIncrement = incrementStaysInRange(f, var);
      return;
    }
    if (f.isStatic) return error(DiagId::sema_range_step, step.range);
    const ScalarType st = step.type;
    f.step = 0;
    // An unsigned step is never negative: it counts up, or not at all.
    f.stepSign = knownPositive(step) ? 1 : isInteger(st) && !isSigned(st) ? 2 : 0;
    // A step of at most 32 bits toward a dim cannot carry a 64-bit variable
    // past its limit (dims are at most 2^62).
    f.plainIncrement = f.stepSign == 1 && scalarBits(st) <= 32 && scalarBits(var) == 64 && isSigned(var) &&
                       isDim(*f.rangeArgs[f.rangeArgs.size() >= 2 ? 1 : 0]);
    if (f.stepSign == 0 && isInteger(var) && !isSigned(var)) error(DiagId::sema_range_step_unsigned, step.range);
  }

  // A step the language knows is positive without running: positive
  // constants and the launch geometry (block_dim(), grid_dim(),
  // warp_size()), and sums and products of those.
  static bool knownPositive(const Expr& e) {
    if (auto v = evaluateConst(e, constsOnly())) return !v->isFloat && v->i > 0;
    if (const auto* c = e.as<CallExpr>()) {
      const BuiltinInfo* b = findBuiltin(c->callee);
      if (b) return b->id == BuiltinId::BlockDim || b->id == BuiltinId::GridDim || b->id == BuiltinId::WarpSize;
      // A conversion to an integer type of 32 bits or more keeps it positive.
      auto to = scalarFromName(c->callee);
      return to && isInteger(*to) && scalarBits(*to) >= 32 && c->args.size() == 1 && knownPositive(*c->args[0]);
    }
    if (const auto* b = e.as<BinaryExpr>())
      return (b->op == BinaryOp::Mul || b->op == BinaryOp::Add) && knownPositive(*b->lhs) && knownPositive(*b->rhs);
    return false;
  }

  // Whether `i += step` (a compile-time step) can never overflow the loop
  // variable's type: a step of 1 or -1 stops on the bound itself; a 64-bit
  // variable running to a dim stays under 2^62 + 2^62 (dims are at most
  // 2^62, checked at launch); a compile-time stop leaves room for the last
  // step.
  static bool incrementStaysInRange(const ForStmt& f, ScalarType var) {
    const int64_t step = f.step;
    if (step == 1 || step == -1) return true;
    const Expr& stop = *f.rangeArgs[f.rangeArgs.size() >= 2 ? 1 : 0];
    const int64_t limit = int64_t(1) << 62;
    if (scalarBits(var) == 64 && isSigned(var) && step > -limit && step < limit && isDim(stop)) return true;
    auto s = evaluateConst(stop, constsOnly());
    if (!s || s->isFloat || !isInteger(var)) return false;
    // The last value is past stop by less than |step|: it must fit.
    const int bits = scalarBits(var);
    const double last = double(s->i) + double(step);
    const double lo = isSigned(var) ? -std::ldexp(1.0, bits - 1) : 0.0;
    const double hi = isSigned(var) ? std::ldexp(1.0, bits - 1) - 1 : std::ldexp(1.0, bits) - 1;
    return last >= lo && last <= hi && std::abs(double(step)) < std::ldexp(1.0, 52);
  }

  static bool isDim(const Expr& e) {
    if (const auto* n = e.as<NameExpr>()) return n->symbol && n->symbol->kind == SymbolKind::DimSymbol;
    if (const auto* c = e.as<CallExpr>()) {
      const BuiltinInfo* b = findBuiltin(c->callee);
      return b && b->id == BuiltinId::Dim;
    }
    return false;
  }

  // Assignment, argument and return conversions: numeric to numeric, bool
  // to bool (docs/language.md 4.6: later assignments convert).
  void checkConvertible(Expr& where, ScalarType from, ScalarType to) {
    if (from == ScalarType::Invalid || to == ScalarType::Invalid) return;
    coerceWeak(where, computeType(to));
    if ((from == ScalarType::Bool) != (to == ScalarType::Bool))
      error(DiagId::sema_convert, where.range, scalarName(from), scalarName(to));
  }

  // ----------------------------------------------------------- expressions

  struct Operand {
    ScalarType type;
    bool weak;
  };

  // The promotion rules (docs/language.md 4.5) for an arithmetic operator.
  ScalarType arithmetic(BinaryOp op, Operand a, Operand b, SourceRange where) {
    ScalarType x = computeType(a.type), y = computeType(b.type);
    if (!isNumeric(x) || !isNumeric(y)) {
      error(DiagId::sema_operand_type, where, binaryOpSpelling(op), scalarName(!isNumeric(x) ? x : y));
      return ScalarType::Invalid;
    }
    ScalarType result;
    if (a.weak && !b.weak) result = isFloat(x) && isInteger(y) ? ScalarType::F32 : y;
    else if (b.weak && !a.weak) result = isFloat(y) && isInteger(x) ? ScalarType::F32 : x;
    else if (isFloat(x) && isFloat(y)) result = widerFloat(x, y);
    else if (isFloat(x)) result = x;
    else if (isFloat(y)) result = y;
    else {
      if (isSigned(x) != isSigned(y) && !a.weak && !b.weak) {
        // Named by signedness, not position: u32 + i32 mixes signed i32
        // and unsigned u32.
        error(DiagId::sema_sign_mix, where, scalarName(isSigned(x) ? x : y), scalarName(isSigned(x) ? y : x));
        return ScalarType::Invalid;
      }
      result = widerInt(x, y);
    }
    switch (op) {
      case BinaryOp::Div:
        if (isInteger(result)) {
          error(DiagId::sema_int_division, where);
          return ScalarType::Invalid;
        }
        break;
      case BinaryOp::FloorDiv:
      case BinaryOp::Mod:
        if (isFloat(result)) {
          error(DiagId::sema_float_floordiv, where, binaryOpSpelling(op));
          return ScalarType::Invalid;
        }
        break;
      case BinaryOp::BitAnd:
      case BinaryOp::BitOr:
      case BinaryOp::BitXor:
      case BinaryOp::Shl:
      case BinaryOp::Shr:
        if (isFloat(result)) {
          error(DiagId::sema_operand_type, where, binaryOpSpelling(op), scalarName(result));
          return ScalarType::Invalid;
        }
        break;
      case BinaryOp::Add:
      case BinaryOp::Sub:
      case BinaryOp::Mul:
      case BinaryOp::Pow:
      case BinaryOp::Lt:
      case BinaryOp::Le:
      case BinaryOp::Gt:
      case BinaryOp::Ge:
      case BinaryOp::Eq:
      case BinaryOp::Ne:
      case BinaryOp::And:
      case BinaryOp::Or: break;
    }
    return result;
  }

  ScalarType typeOf(Expr& e, bool allowVoid = false) {
    ScalarType t = computeExprType(e, allowVoid);
    e.type = t;
    return t;
  }

  ScalarType computeExprType(Expr& e, bool allowVoid) {
    switch (e.kind) {
      case ExprKind::IntLit: {
        uint64_t v = e.as<IntLitExpr>()->value;
        if (v <= INT32_MAX) return ScalarType::I32;
        if (v <= static_cast<uint64_t>(INT64_MAX)) return ScalarType::I64;
        return ScalarType::U64;
      }
      case ExprKind::FloatLit: return ScalarType::F32;
      case ExprKind::BoolLit: return ScalarType::Bool;
      case ExprKind::Name: return typeName(*e.as<NameExpr>());
      case ExprKind::Unary: return typeUnary(*e.as<UnaryExpr>());
      case ExprKind::Binary: return typeBinary(*e.as<BinaryExpr>());
      case ExprKind::Ternary: {
        auto& t = *e.as<TernaryExpr>();
        checkCondition(*t.cond);
        if (auto taken = decidedByTypes(*t.cond)) return typeOf(*taken ? *t.thenValue : *t.elseValue);
        ScalarType a = typeOf(*t.thenValue), b = typeOf(*t.elseValue);
        if (a == ScalarType::Invalid || b == ScalarType::Invalid) return ScalarType::Invalid;
        if (a == ScalarType::Bool && b == ScalarType::Bool) return ScalarType::Bool;
        ScalarType unified = arithmetic(BinaryOp::Add, {a, isWeak(*t.thenValue)}, {b, isWeak(*t.elseValue)}, t.range);
        coerceWeak(*t.thenValue, unified);
        coerceWeak(*t.elseValue, unified);
        return unified;
      }
      case ExprKind::Call: return typeCall(*e.as<CallExpr>(), allowVoid);
      case ExprKind::Index: return typeIndex(*e.as<IndexExpr>());
      case ExprKind::List:
      case ExprKind::Tuple: return ScalarType::Invalid;  // refused where they stand (sema_resolve.cpp)
      case ExprKind::TypeTest: {
        auto& t = *e.as<TypeTestExpr>();
        if (!t.paramSymbol) return ScalarType::Invalid;  // reported by resolution
        t.value = evaluateTypeTest(t, &typeArgs_).value_or(false);
        return ScalarType::Bool;
      }
    }
    return ScalarType::Invalid;
  }

  // The value of a condition holding a type test, when this binding and the
  // module's consts decide it.
  std::optional<bool> decidedByTypes(const Expr& cond) const {
    if (!containsTypeTest(cond)) return std::nullopt;
    EvalFacts facts;
    facts.typeArgs = &typeArgs_;
    auto v = evaluateConst(cond, constsOnly(), nullptr, facts);
    if (!v) return std::nullopt;
    return v->asDouble() != 0;
  }

  ScalarType typeName(NameExpr& n) {
    Symbol* s = n.symbol;
    if (!s) return ScalarType::Invalid;
    switch (s->kind) {
      case SymbolKind::TensorParam:
      case SymbolKind::SharedBuffer:
      case SymbolKind::LocalBuffer:
        error(DiagId::sema_tensor_as_value, n.range, n.name, symbolKindName(s->kind));
        return ScalarType::Invalid;
      case SymbolKind::Fragment: error(DiagId::sema_fragment_use, n.range, n.name); return ScalarType::Invalid;
      case SymbolKind::Local:
      case SymbolKind::LoopVar:
        if (s->type == ScalarType::Invalid) {
          // One error per mistake: a local whose declaration failed was
          // reported there. Otherwise this is a closure reading an outer
          // local that the outer body assigns after the closure's definition.
          if (!failedDeclarations_.count(s) && s->kind == SymbolKind::Local && s->owner != current_)
            error(DiagId::sema_capture_before_assignment, n.range, n.name, current_->name);
          return ScalarType::Invalid;
        }
        return s->type;
      case SymbolKind::Const:
      case SymbolKind::Function:
      case SymbolKind::Kernel:
      case SymbolKind::ScalarParam:
      case SymbolKind::DimSymbol:
      case SymbolKind::TypeParam:
      case SymbolKind::Closure: return s->type;
    }
    return s->type;
  }

  ScalarType typeUnary(UnaryExpr& u) {
    if (u.op == UnaryOp::IsNone) return ScalarType::Bool;  // the operand is a tensor, not a value
    ScalarType t = typeOf(*u.operand);
    if (t == ScalarType::Invalid) return t;
    switch (u.op) {
      case UnaryOp::Not:
        if (t != ScalarType::Bool) {
          error(DiagId::sema_logical_operand, u.operand->range, "not", scalarName(t));
          return ScalarType::Invalid;
        }
        return t;
      case UnaryOp::BitNot:
        if (!isInteger(t)) {
          error(DiagId::sema_operand_type, u.range, "~", scalarName(t));
          return ScalarType::Invalid;
        }
        return t;
      case UnaryOp::IsNone: return ScalarType::Bool;
      case UnaryOp::Neg:
      case UnaryOp::Pos:
        if (!isNumeric(t)) {
          error(DiagId::sema_operand_type, u.range, unaryOpSpelling(u.op), scalarName(t));
          return ScalarType::Invalid;
        }
        return computeType(t);
    }
    return ScalarType::Invalid;
  }

  ScalarType typeBinary(BinaryExpr& b) {
    ScalarType l = typeOf(*b.lhs), r = typeOf(*b.rhs);
    if (l == ScalarType::Invalid || r == ScalarType::Invalid) return ScalarType::Invalid;
    if (isLogical(b.op)) {
      for (auto [side, t] : {std::pair<Expr*, ScalarType>{b.lhs.get(), l}, {b.rhs.get(), r}}) {
        if (t != ScalarType::Bool) {
          error(DiagId::sema_logical_operand, side->range, binaryOpSpelling(b.op), scalarName(t));
          return ScalarType::Invalid;
        }
      }
      return ScalarType::Bool;
    }
    if (isComparison(b.op)) {
      if (l == ScalarType::Bool && r == ScalarType::Bool && (b.op == BinaryOp::Eq || b.op == BinaryOp::Ne))
        return ScalarType::Bool;
      ScalarType unified = arithmetic(b.op, {l, isWeak(*b.lhs)}, {r, isWeak(*b.rhs)}, b.opRange);
      if (unified == ScalarType::Invalid) return unified;
      coerceWeak(*b.lhs, unified);
      coerceWeak(*b.rhs, unified);
      return ScalarType::Bool;
    }
    if (b.op == BinaryOp::Pow) {
      return typePow(b, l);
    }
    ScalarType unified = arithmetic(b.op, {l, isWeak(*b.lhs)}, {r, isWeak(*b.rhs)}, b.opRange);
    coerceWeak(*b.lhs, unified);
    if (b.op != BinaryOp::Shl && b.op != BinaryOp::Shr) coerceWeak(*b.rhs, unified);
    return unified;
  }

  // x ** n: n a compile-time integer (docs/language.md 6.6).
  ScalarType typePow(BinaryExpr& b, ScalarType l) {
    auto n = evaluateConst(*b.rhs, constsOnly());
    if (!n || n->isFloat) {
      error(DiagId::sema_pow_exponent, b.rhs->range);
      return ScalarType::Invalid;
    }
    if (!isNumeric(l)) {
      error(DiagId::sema_operand_type, b.opRange, "**", scalarName(l));
      return ScalarType::Invalid;
    }
    if (isInteger(computeType(l)) && n->i < 0) {
      error(DiagId::sema_pow_negative_int, b.rhs->range);
      return ScalarType::Invalid;
    }
    b.exponent = n->i;
    return computeType(l);
  }

  ScalarType typeIndex(IndexExpr& idx) {
    for (auto& i : idx.indices) {
      requireIndex(*i);
    }
    auto* base = idx.base->as<NameExpr>();
    if (!base || !base->symbol) return ScalarType::Invalid;
    if (base->symbol->kind == SymbolKind::Fragment) {
      error(DiagId::sema_fragment_use, idx.range, base->name);
      return ScalarType::Invalid;
    }
    return base->symbol->type;
  }

  ScalarType typeCall(CallExpr& c, bool allowVoid) {
    if (c.symbol) return typeUserCall(c, allowVoid);
    if (auto cast = scalarFromName(c.callee)) return typeCast(c, *cast);
    if (current_->kernelRoot && current_->kernelRoot->typeParams.count(c.callee)) return typeCast(c, bound(c.callee));
    if (c.callee == "sizeof" && c.args.size() == 1) {  // resolved: a scalar type or a type parameter
      const auto* arg = c.args[0]->as<NameExpr>();
      auto t = scalarFromName(arg->name);
      c.args[0]->type = t ? *t : bound(arg->name);  // the printer writes its size
      return ScalarType::I32;
    }
    const BuiltinInfo* b = findBuiltin(c.callee);
    if (!b) return ScalarType::Invalid;
    return typeBuiltin(c, *b, allowVoid);
  }

  ScalarType typeCast(CallExpr& c, ScalarType to) {
    if (c.args.size() != 1) return ScalarType::Invalid;
    ScalarType from = typeOf(*c.args[0]);
    if (from == ScalarType::Invalid) return ScalarType::Invalid;
    coerceWeak(*c.args[0], computeType(to));  // f64(0.1) is the double 0.1, not a float widened
    return to;
  }

  ScalarType typeUserCall(CallExpr& c, bool allowVoid) {
    FunctionScope* callee = c.symbol->scope;
    if (callee->kind == FunctionScope::Kind::Closure) typeFunction(*callee);  // infers its return type
    const auto& params = callee->params;
    std::map<const Symbol*, const Expr*> dimBindings;  // the callee's dims, as this call binds them
    for (size_t i = 0; i < c.args.size(); ++i) {
      if (i < params.size() && params[i]->kind == SymbolKind::TensorParam) {
        checkTensorArgument(c, *c.args[i], *params[i], dimBindings);
        continue;
      }
      ScalarType t = typeOf(*c.args[i]);
      if (i < params.size()) checkConvertible(*c.args[i], t, params[i]->type);
    }
    // A call statement may drop a tuple as it drops any value; unpacking
    // asks with allowVoid too, and reads the tuple's types itself.
    if (!callee->returnTuple.empty() && !allowVoid) reportTupleAsValue(c, callee->returnTuple);
    else if (callee->returnType == ScalarType::Invalid && !allowVoid) error(DiagId::sema_void_value, c.range, c.callee);
    return callee->returnType;
  }

  // A tensor passed to a def's tensor parameter: same element type and rank;
  // strided only into a strided parameter; and a dim the parameters name
  // twice bound to values known to be equal (the same dim symbol or the same
  // constant), since the def reads one value for both.
  void checkTensorArgument(const CallExpr& c, Expr& arg, const Symbol& param,
                           std::map<const Symbol*, const Expr*>& dimBindings) {
    const Symbol* tensor = tensorArgument(arg);
    if (!tensor) {
      error(DiagId::sema_tensor_arg_not_tensor, arg.range, param.name, c.callee, tensorTypeText(param));
      return;
    }
    if (tensor->type != param.type || tensor->shape.size() != param.shape.size()) {
      error(DiagId::sema_tensor_arg_mismatch, arg.range, tensor->name, tensorTypeText(*tensor), param.name, c.callee,
            tensorTypeText(param));
      return;
    }
    if (tensor->strided && !param.strided) {
      error(DiagId::sema_tensor_arg_strided, arg.range, tensor->name, param.name, c.callee);
      return;
    }
    // A def addresses its tensor parameters row-major (or by strides): a
    // swizzled buffer's layout is its own.
    if (tensor->barrierCount) {
      error(DiagId::sema_barriers_access, arg.range, tensor->name);
      return;
    }
    if (tensor->swizzle) {
      error(DiagId::sema_swizzle_argument, arg.range, tensor->name, param.name, c.callee);
      return;
    }
    for (size_t axis = 0; axis < param.shape.size(); ++axis) {
      const auto* dim = param.shape[axis]->as<NameExpr>();
      if (!dim || !dim->symbol) continue;
      const Expr* value = tensor->shape[axis];
      auto [it, first] = dimBindings.emplace(dim->symbol, value);
      if (!first && !sameDimValue(*it->second, *value))
        error(DiagId::sema_def_dim_conflict, arg.range, dim->name, c.callee, sourceText(*it->second),
              sourceText(*value));
    }
  }

  bool sameDimValue(const Expr& a, const Expr& b) const {
    const auto *na = a.as<NameExpr>(), *nb = b.as<NameExpr>();
    if (na && nb && na->symbol && na->symbol == nb->symbol) return true;
    auto va = evaluateConst(a, constsOnly()), vb = evaluateConst(b, constsOnly());
    return va && vb && !va->isFloat && !vb->isFloat && va->i == vb->i;
  }

  std::string sourceText(const Expr& e) const {
    return sema_.file->text().substr(e.range.begin.offset, e.range.end.offset - e.range.begin.offset);
  }

  // "bf16[N, 2 * D] strided", as the parameter's type is written.
  std::string tensorTypeText(const Symbol& s) const {
    std::string text = std::string(scalarName(s.type)) + "[";
    for (size_t i = 0; i < s.shape.size(); ++i) text += (i ? ", " : "") + sourceText(*s.shape[i]);
    return text + "]" + (s.strided ? " strided" : "");
  }

  // `x = stats(v)`, `stats(v) + 1`: a tuple is no value of its own. The
  // hint names one target per element: 'a, b = stats(...)'.
  void reportTupleAsValue(const CallExpr& c, const std::vector<ScalarType>& types) {
    std::string typeList, targets;
    for (size_t i = 0; i < types.size(); ++i) {
      typeList += (i ? ", " : "") + std::string(scalarName(types[i]));
      targets += (i ? ", " : "") + (i < 26 ? std::string(1, char('a' + i)) : "v" + std::to_string(i));
    }
    error(DiagId::sema_tuple_value, c.range, c.callee, types.size(), typeList, targets, c.callee);
  }

  ScalarType typeBuiltin(CallExpr& c, const BuiltinInfo& b, bool allowVoid) {
    if (b.category == BuiltinCategory::TypeLimit || b.category == BuiltinCategory::TypeConversion)
      return typeOfTypeBuiltin(c, b);
    if (b.category == BuiltinCategory::AsyncCopy) {
      checkAsyncCopy(c);
      if (!allowVoid) error(DiagId::sema_void_value, c.range, c.callee);
      return ScalarType::Invalid;
    }
    if (b.category == BuiltinCategory::Matrix) {
      checkMatrixCall(c, /*assigned=*/false);
      if (c.callee != "mma" && !allowVoid) error(DiagId::sema_void_value, c.range, c.callee);
      return ScalarType::Invalid;
    }
    std::vector<ScalarType> args;
    for (auto& a : c.args) {
      if (b.category == BuiltinCategory::DimQuery) break;  // dim(x, k): x is a tensor
      ScalarType t = typeOf(*a);
      if (t == ScalarType::Invalid) return t;
      args.push_back(t);
    }
    auto needFloat = [&](size_t i) -> ScalarType {
      ScalarType t = computeType(args[i]);
      if (isFloat(t)) return t;
      if (isInteger(t) && isWeak(*c.args[i])) return ScalarType::F32;
      error(DiagId::sema_math_needs_float, c.args[i]->range, c.callee, scalarName(args[i]));
      return ScalarType::Invalid;
    };
    switch (b.category) {
      case BuiltinCategory::Geometry:
      case BuiltinCategory::LaneInfo: return ScalarType::I32;
      case BuiltinCategory::DimQuery: return ScalarType::I64;
      case BuiltinCategory::UniformHint: return args[0];  // the value itself
      case BuiltinCategory::DivisorHint: {
        // multiple_of(e, n): e, an integer; n a const power of two, so the
        // promise is one the divisibility analysis can use and a checked
        // build can test.
        if (!isInteger(computeType(args[0]))) {
          error(DiagId::sema_multiple_of_value, c.args[0]->range, scalarName(args[0]));
          return ScalarType::Invalid;
        }
        auto n = evaluateConst(*c.args[1], constsOnly());
        if (!n || n->isFloat || n->i <= 0 || (n->i & (n->i - 1)) != 0) {
          error(DiagId::sema_multiple_of_divisor, c.args[1]->range,
                n && !n->isFloat ? fmt::format(", not {}", n->i) : std::string());
          return ScalarType::Invalid;
        }
        return args[0];
      }
      case BuiltinCategory::WarpVote: {
        checkCondition(*c.args[0]);
        return b.id == BuiltinId::Ballot ? ScalarType::U64 : ScalarType::Bool;
      }
      case BuiltinCategory::WarpBarrier:
      case BuiltinCategory::Barrier:
        if (!allowVoid) error(DiagId::sema_void_value, c.range, c.callee);
        return ScalarType::Invalid;
      case BuiltinCategory::FloatMath: {
        ScalarType result = needFloat(0);
        for (size_t i = 1; i < args.size() && result != ScalarType::Invalid; ++i) {
          ScalarType t = needFloat(i);
          if (t == ScalarType::Invalid) return t;
          result = widerFloat(result, t);
        }
        for (auto& a : c.args) coerceWeak(*a, result);
        return result;
      }
      case BuiltinCategory::NumericMath: {
        if (!isNumeric(args[0])) {
          error(DiagId::sema_operand_type, c.range, c.callee, scalarName(args[0]));
          return ScalarType::Invalid;
        }
        if (args.size() == 1) return computeType(args[0]);
        ScalarType t = arithmetic(BinaryOp::Add, {args[0], isWeak(*c.args[0])}, {args[1], isWeak(*c.args[1])}, c.range);
        for (auto& a : c.args) coerceWeak(*a, t);
        return t;
      }
      case BuiltinCategory::IntMath: {
        ScalarType t =
            arithmetic(BinaryOp::FloorDiv, {args[0], isWeak(*c.args[0])}, {args[1], isWeak(*c.args[1])}, c.range);
        for (auto& a : c.args) coerceWeak(*a, t);
        return t;
      }
      case BuiltinCategory::WarpReduce:
      case BuiltinCategory::BlockReduce:
      case BuiltinCategory::Shuffle: {
        ScalarType t = computeType(args[0]);
        if (!isNumeric(t) || scalarBits(t) < 32) {
          error(DiagId::sema_collective_type, c.args[0]->range, c.callee, scalarName(args[0]));
          return ScalarType::Invalid;
        }
        if (b.category == BuiltinCategory::Shuffle && !isInteger(args[1])) {
          error(DiagId::sema_index_type, c.args[1]->range, scalarName(args[1]));
          return ScalarType::Invalid;
        }
        return t;
      }
      case BuiltinCategory::WarpArgReduce:
      case BuiltinCategory::BlockArgReduce: {
        // A tuple (value, index): only unpacking takes it (unpackedCallTypes).
        if (!isCollectiveValue(args[0])) {
          error(DiagId::sema_collective_type, c.args[0]->range, c.callee, scalarName(args[0]));
          return ScalarType::Invalid;
        }
        if (!isInteger(args[1])) {
          error(DiagId::sema_index_type, c.args[1]->range, scalarName(args[1]));
          return ScalarType::Invalid;
        }
        if (!isArgReduceIndex(args[1])) {
          error(DiagId::sema_collective_type, c.args[1]->range, c.callee, scalarName(args[1]));
          return ScalarType::Invalid;
        }
        if (!allowVoid) reportTupleAsValue(c, argReduceTypes(c));
        return ScalarType::Invalid;
      }
      case BuiltinCategory::BitCount:
        // popcount(x): set bits of an integer of any width, as an i32.
        if (!isInteger(args[0])) {
          error(DiagId::sema_int_builtin_type, c.args[0]->range, c.callee, scalarName(args[0]));
          return ScalarType::Invalid;
        }
        return ScalarType::I32;
      case BuiltinCategory::Atomic: return typeAtomic(c, b, args);
      case BuiltinCategory::CachedLoad: return args[0];  // the element, as x[i] is
      case BuiltinCategory::CachedStore:
        // The value converts to the element type, as in `x[i] = v`.
        checkConvertible(*c.args[1], args[1], args[0]);
        if (!allowVoid) error(DiagId::sema_void_value, c.range, c.callee);
        return ScalarType::Invalid;
      case BuiltinCategory::FloatPredicate: {
        ScalarType t = needFloat(0);
        if (t == ScalarType::Invalid) return t;
        coerceWeak(*c.args[0], t);
        return ScalarType::Bool;
      }
      case BuiltinCategory::TypeLimit:
      case BuiltinCategory::TypeConversion:
        return ScalarType::Invalid;  // typeOfTypeBuiltin
      // Refused where they stand by resolution (sema_resolve.cpp).
      case BuiltinCategory::Scratch:
      case BuiltinCategory::MatrixDecl:
      case BuiltinCategory::Matrix:
      case BuiltinCategory::AsyncCopy:
      case BuiltinCategory::Range:
      case BuiltinCategory::LaunchQuery: return ScalarType::Invalid;
    }
    return ScalarType::Invalid;
  }

  // max_value(T), min_value(T), min_normal(T), saturate(T, v), bitcast(T, v).
  // T (the type argument gets T's binding, for the printer) must be
  // numeric; the limits of a storage type are f32 values, the conversions
  // give T itself (stored as is, or computed in f32).
  ScalarType typeOfTypeBuiltin(CallExpr& c, const BuiltinInfo& b) {
    const auto* name = c.args[0]->as<NameExpr>();
    auto scalar = scalarFromName(name->name);
    const ScalarType t = scalar ? *scalar : bound(name->name);
    c.args[0]->type = t;
    const bool wantsFloat = b.id == BuiltinId::MinNormal;
    if (t == ScalarType::Bool || (wantsFloat && !isFloat(t))) {
      error(DiagId::sema_type_builtin_type, c.args[0]->range, c.callee, wantsFloat ? "a float type" : "a numeric type",
            scalarName(t));
      return ScalarType::Invalid;
    }
    if (b.category == BuiltinCategory::TypeLimit) return computeType(t);
    Expr& v = *c.args[1];
    ScalarType from = typeOf(v);
    if (from == ScalarType::Invalid) return from;
    if (from == ScalarType::Bool) {
      error(DiagId::sema_type_builtin_type, v.range, c.callee, "a number to convert", "bool");
      return ScalarType::Invalid;
    }
    if (b.id == BuiltinId::Saturate) return t;
    // bitcast: a literal takes the type of T's size its kind has (0x3f800000
    // is a u32 for bitcast(f32, ...); 1.0 an f32 for bitcast(u32, ...)).
    if (isWeak(v)) {
      ScalarType sized =
          isFloat(from) ? (scalarBits(t) == 64 ? ScalarType::F64 : ScalarType::F32) : unsignedOfBits(scalarBits(t));
      if (sized != ScalarType::Invalid) coerceWeak(v, sized), from = v.type;
    }
    if (scalarBits(from) != scalarBits(t)) {
      error(DiagId::sema_bitcast_size, v.range, scalarName(from), scalarBits(from), scalarName(t), scalarBits(t));
      return ScalarType::Invalid;
    }
    return t;
  }

  static ScalarType unsignedOfBits(int bits) {
    switch (bits) {
      case 8: return ScalarType::U8;
      case 16: return ScalarType::U16;
      case 32: return ScalarType::U32;
      case 64: return ScalarType::U64;
      default: return ScalarType::Invalid;
    }
  }

  // The element types each atomic takes, in the order its message lists
  // them (docs/language.md 8.5). A type in no row (bool, i8, i16, u8, u16,
  // and any element type added later, fp8 included) is sema-atomic-type
  // with the row's list; giving an atomic a new type is one entry here plus
  // its prelude overload.
  static const std::vector<ScalarType>& atomicElementTypes(BuiltinId id) {
    using S = ScalarType;
    static const std::vector<S> kInts = {S::I32, S::U32, S::I64, S::U64};
    static const std::vector<S> kAddCas = {S::I32, S::U32, S::I64, S::U64, S::F16, S::BF16, S::F32, S::F64};
    static const std::vector<S> kMinMax = {S::I32, S::U32, S::I64, S::U64, S::F32, S::F64};
    static const std::vector<S> kExch = {S::I32, S::U32, S::I64, S::U64, S::F32};
    switch (id) {
      case BuiltinId::AtomicAdd:
      case BuiltinId::AtomicCas: return kAddCas;
      case BuiltinId::AtomicMax:
      case BuiltinId::AtomicMin: return kMinMax;
      case BuiltinId::AtomicExch: return kExch;
      default: return kInts;  // atomic_and, atomic_or, atomic_xor
    }
  }

  ScalarType typeAtomic(CallExpr& c, const BuiltinInfo& b, const std::vector<ScalarType>& args) {
    ScalarType t = args[0];
    const auto& allowed = atomicElementTypes(b.id);
    if (std::find(allowed.begin(), allowed.end(), t) == allowed.end()) {
      std::string list;
      for (ScalarType a : allowed) list += (list.empty() ? "" : ", ") + std::string(scalarName(a));
      error(DiagId::sema_atomic_type, c.args[0]->range, c.callee, scalarName(t), list);
      return ScalarType::Invalid;
    }
    // The values convert to the element type: an f16/bf16 value is rounded
    // to it once, before the atomic (prelude __spn_atomic_add_f16).
    for (size_t i = 1; i < c.args.size(); ++i) checkConvertible(*c.args[i], args[i], t);
    return t;
  }

  SemaModule& sema_;
  DiagnosticEngine& diags_;
  const std::map<std::string, ScalarType>& typeArgs_;
  FunctionScope* current_ = nullptr;
  std::set<FunctionScope*> typed_;
  // Locals and loop variables whose declaration had an error already
  // reported: their uses stay untyped without reporting more.
  std::set<const Symbol*> failedDeclarations_;
};

}  // namespace

const BuiltinInfo* argReduceBuiltin(const CallExpr& c) {
  if (c.symbol) return nullptr;
  const BuiltinInfo* b = findBuiltin(c.callee);
  const bool keyValue =
      b && (b->category == BuiltinCategory::WarpArgReduce || b->category == BuiltinCategory::BlockArgReduce);
  return keyValue ? b : nullptr;
}

std::vector<ScalarType> argReduceTypes(const CallExpr& c) {
  if (!argReduceBuiltin(c) || c.args.size() != 2) return {};
  const ScalarType value = c.args[0]->type, index = c.args[1]->type;
  if (!isCollectiveValue(value) || !isArgReduceIndex(index)) return {};
  return {computeType(value), index};
}

bool typeCheckKernel(SemaModule& sema, FunctionScope& kernel, const std::map<std::string, ScalarType>& typeArgs,
                     DiagnosticEngine& diags) {
  return TypeChecker(sema, diags, typeArgs).checkKernel(kernel);
}

bool typeCheckFunction(SemaModule& sema, FunctionScope& function, DiagnosticEngine& diags) {
  static const std::map<std::string, ScalarType> kNoTypeArgs;
  return TypeChecker(sema, diags, kNoTypeArgs).checkFunction(function);
}

}  // namespace spindle
