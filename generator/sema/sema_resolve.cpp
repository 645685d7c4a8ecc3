// Name resolution (layer 1 of sema.h): Python's scoping rules, every name
// bound to a Symbol, nonlocal rules, the direct outer references of every
// closure, and consts evaluated.
#include <algorithm>
#include <functional>
#include <set>

#include "frontend/ast_walk.h"
#include "sema/builtins.h"
#include "sema/const_eval.h"
#include "sema/sema.h"
#include "sema/sema_tune.h"
#include "sema/tensor_arguments.h"

namespace spindle {

const char* symbolKindName(SymbolKind k) {
  switch (k) {
    case SymbolKind::Const: return "const";
    case SymbolKind::Function: return "function";
    case SymbolKind::Kernel: return "kernel";
    case SymbolKind::TensorParam: return "tensor";
    case SymbolKind::ScalarParam: return "parameter";
    case SymbolKind::DimSymbol: return "dim symbol";
    case SymbolKind::TypeParam: return "type parameter";
    case SymbolKind::Local: return "local";
    case SymbolKind::LoopVar: return "loop variable";
    case SymbolKind::SharedBuffer: return "shared buffer";
    case SymbolKind::LocalBuffer: return "local buffer";
    case SymbolKind::Fragment: return "fragment array";
    case SymbolKind::Closure: return "closure";
  }
  return "symbol";
}

namespace {
// The first part of a fragment array's index that is not known when the
// code is unrolled: literals, consts and static_range variables are; so are
// operators on them.
const Expr* firstNonStaticIndexPart(const Expr& e) {
  switch (e.kind) {
    case ExprKind::IntLit: return nullptr;
    case ExprKind::Name: {
      const Symbol* s = e.as<NameExpr>()->symbol;
      if (!s) return nullptr;  // undefined: reported by resolution
      const bool known = s->kind == SymbolKind::Const || (s->kind == SymbolKind::LoopVar && s->unrolledLoopVar);
      return known ? nullptr : &e;
    }
    case ExprKind::Unary: return firstNonStaticIndexPart(*e.as<UnaryExpr>()->operand);
    case ExprKind::Binary: {
      const auto& b = *e.as<BinaryExpr>();
      if (const Expr* bad = firstNonStaticIndexPart(*b.lhs)) return bad;
      return firstNonStaticIndexPart(*b.rhs);
    }
    default: return &e;
  }
}

// The first part of a scratch size that has no value before the kernel
// runs: anything but literals, consts, dim symbols, dim(x, k), casts,
// cdiv/min/max and operators. Null when the whole size is compile-time
// (given its dims; a local's dims must also be static, checked at
// specialization).
const Expr* firstRunTimePart(const Expr& e) {
  switch (e.kind) {
    case ExprKind::IntLit:
    case ExprKind::FloatLit:
    case ExprKind::BoolLit: return nullptr;
    case ExprKind::Name: {
      const Symbol* s = e.as<NameExpr>()->symbol;
      if (!s) return nullptr;  // undefined: reported by resolution
      return s->kind == SymbolKind::Const || s->kind == SymbolKind::DimSymbol ? nullptr : &e;
    }
    case ExprKind::Unary: return firstRunTimePart(*e.as<UnaryExpr>()->operand);
    case ExprKind::Binary: {
      const auto& b = *e.as<BinaryExpr>();
      if (const Expr* bad = firstRunTimePart(*b.lhs)) return bad;
      return firstRunTimePart(*b.rhs);
    }
    case ExprKind::Ternary: {
      const auto& t = *e.as<TernaryExpr>();
      for (const Expr* part : {t.cond.get(), t.thenValue.get(), t.elseValue.get()})
        if (const Expr* bad = firstRunTimePart(*part)) return bad;
      return nullptr;
    }
    case ExprKind::Call: {
      const auto& c = *e.as<CallExpr>();
      const BuiltinInfo* b = findBuiltin(c.callee);
      bool allowed = scalarFromName(c.callee) || (b && (b->id == BuiltinId::Cdiv || b->id == BuiltinId::Min ||
                                                        b->id == BuiltinId::Max || b->id == BuiltinId::Dim));
      if (b && b->category == BuiltinCategory::TypeLimit && !c.symbol) return nullptr;  // of a type, not a value
      if (!allowed || c.symbol) return &e;
      // dim(x, k): the tensor is named, not read.
      size_t first = b && b->id == BuiltinId::Dim ? 1 : 0;
      for (size_t i = first; i < c.args.size(); ++i)
        if (const Expr* bad = firstRunTimePart(*c.args[i])) return bad;
      return nullptr;
    }
    case ExprKind::TypeTest: return nullptr;  // decided by the binding of the kernel's types
    case ExprKind::Index:
    case ExprKind::List:
    case ExprKind::Tuple: return &e;
  }
  return &e;
}
}  // namespace

const char* captureModeName(CaptureMode m) {
  switch (m) {
    case CaptureMode::Value: return "value";
    case CaptureMode::Reference: return "reference";
    case CaptureMode::Pointer: return "pointer";
    case CaptureMode::Dim: return "dim";
    case CaptureMode::Stride: return "stride";
  }
  return "?";
}

Symbol* SemaModule::newSymbol(SymbolKind kind, std::string name, SourceRange range, FunctionScope* owner) {
  auto s = std::make_unique<Symbol>();
  s->kind = kind;
  s->name = std::move(name);
  s->declRange = range;
  s->owner = owner;
  s->id = static_cast<int>(symbols.size());
  symbols.push_back(std::move(s));
  return symbols.back().get();
}

FunctionScope* SemaModule::newScope(FunctionScope::Kind kind, std::string name, FunctionScope* parent) {
  auto s = std::make_unique<FunctionScope>();
  s->kind = kind;
  s->name = std::move(name);
  s->parent = parent;
  s->kernelRoot = parent ? parent->kernelRoot : s.get();
  scopes.push_back(std::move(s));
  return scopes.back().get();
}

FunctionScope* SemaModule::findKernel(const std::string& name) const {
  for (auto* k : kernels)
    if (k->name == name) return k;
  return nullptr;
}

namespace {

bool isCapturable(const Symbol* s) {
  switch (s->kind) {
    case SymbolKind::Local:
    case SymbolKind::ScalarParam:
    case SymbolKind::TensorParam:
    case SymbolKind::DimSymbol:
    case SymbolKind::LoopVar:
    case SymbolKind::SharedBuffer:
    case SymbolKind::LocalBuffer:
    case SymbolKind::Fragment: return true;
    case SymbolKind::Const:
    case SymbolKind::Function:
    case SymbolKind::Kernel:
    case SymbolKind::TypeParam:
    case SymbolKind::Closure: return false;
  }
  return false;
}

bool isTypeName(const std::string& name) { return scalarFromName(name).has_value(); }

const CallExpr* scratchCall(const Expr* e) {
  const auto* call = e ? e->as<CallExpr>() : nullptr;
  if (call && (call->callee == "shared" || call->callee == "local" || call->callee == "barriers")) return call;
  if (call &&
      (call->callee == "mma_zero" || call->callee == "mma_a" || call->callee == "mma_b" || call->callee == "mma_rows"))
    return call;
  return nullptr;
}

class Resolver {
 public:
  Resolver(SemaModule& sema, DiagnosticEngine& diags, const ConstValues& overrides)
      : sema_(sema), diags_(diags), file_(sema.file), overrides_(overrides) {}

  void run() {
    collectKernelDimNames();
    declareGlobals();
    for (auto* f : sema_.functions) resolveFunction(f);
    for (auto* k : sema_.kernels) resolveKernel(k);
    checkRecursion();
    propagateTensorArgumentFacts(sema_);
  }

 private:
  // The last argument of row_max / row_sum being resolved: it may name a
  // row of accumulator tiles, `acc[i]` (docs/language.md 8.11).
  const IndexExpr* tileRowArg_ = nullptr;

  template <typename... Args>
  Diagnostic& error(DiagId id, SourceRange range, const Args&... args) {
    return diags_.report(id, file_, range, args...);
  }
  template <typename... Args>
  void note(SourceRange range, const char* format, const Args&... args) {
    diags_.note(file_, range, format, args...);
  }

  // ---------------------------------------------------------------- globals

  bool declareGlobal(const std::string& name, SourceRange range, Symbol* sym) {
    auto [it, inserted] = sema_.globals.emplace(name, sym);
    if (!inserted) {
      error(DiagId::sema_redefinition, range, name);
      note(it->second->declRange, "previous definition of '{}' is here", name);
      return false;
    }
    return true;
  }

  void declareGlobals() {
    for (auto& decl : sema_.module->decls) {
      switch (decl.kind) {
        case DeclKind::Const: resolveConst(*decl.constDecl); break;
        case DeclKind::Function: {
          auto& f = *decl.function;
          auto* scope = sema_.newScope(FunctionScope::Kind::Function, f.name, nullptr);
          scope->function = &f;
          auto* sym = sema_.newSymbol(SymbolKind::Function, f.name, f.nameRange, nullptr);
          sym->scope = scope;
          scope->symbol = sym;
          f.symbol = sym;
          checkNotTypeName(f.name, f.nameRange);
          if (declareGlobal(f.name, f.nameRange, sym)) sema_.functions.push_back(scope);
          break;
        }
        case DeclKind::Kernel: {
          auto& k = *decl.kernel;
          auto* scope = sema_.newScope(FunctionScope::Kind::Kernel, k.name, nullptr);
          scope->kernel = &k;
          auto* sym = sema_.newSymbol(SymbolKind::Kernel, k.name, k.nameRange, nullptr);
          sym->scope = scope;
          scope->symbol = sym;
          checkNotTypeName(k.name, k.nameRange);
          if (declareGlobal(k.name, k.nameRange, sym)) sema_.kernels.push_back(scope);
          break;
        }
      }
    }
  }

  bool checkNotTypeName(const std::string& name, SourceRange range) {
    if (isTypeName(name)) {
      error(DiagId::sema_type_name_rebound, range, name);
      return false;
    }
    return true;
  }

  // const NAME [: TYPE] = value   (may use earlier consts only)
  void resolveConst(ConstDecl& c) {
    auto* sym = sema_.newSymbol(SymbolKind::Const, c.name, c.nameRange, nullptr);
    c.symbol = sym;
    checkNotTypeName(c.name, c.nameRange);
    ConstEvalFailure failure;
    // A name that is no const but a dim of some kernel makes this a const
    // that needs static dims: its value comes with each specialization
    // (evaluateModuleConstsOfDims), so here every such dim counts as 1, only
    // to learn whether the value is an integer or a float.
    bool usesDims = false;
    auto value = evaluateConst(
        *c.value,
        [&](const NameExpr& n) -> std::optional<ConstValue> {
          Symbol* g = globalOrPredefined(n.name);
          if (g && g->kind == SymbolKind::Const) {
            usesDims |= g->perSpecialization;
            return g->value;
          }
          if (kernelDimNames_.count(n.name)) {
            usesDims = true;
            return ConstValue::ofInt(1);
          }
          return std::nullopt;
        },
        &failure);
    bindConstNames(*c.value);
    if (!value && usesDims) value = ConstValue::ofInt(1);  // reported per specialization, if used
    if (!value) {
      error(DiagId::sema_const_not_constant, failure.where ? failure.where->range : c.value->range, c.name,
            failure.reason);
      value = ConstValue::ofInt(0);
    }
    sym->init = c.value.get();
    sym->perSpecialization = usesDims;
    // A specialization's value replaces the expression's (the driver checked
    // it against the const's type); consts after this one see it.
    if (auto o = overrides_.find(c.name); o != overrides_.end()) {
      value = o->second;
      sym->perSpecialization = false;
    }
    sym->value = *value;
    if (c.type) {
      if (c.type->isTensor) {
        error(DiagId::sema_const_type, c.type->range, c.name);
      } else if (auto t = scalarFromName(c.type->elemName)) {
        sym->type = *t;
        sym->declaredType = *t;
        if (isFloat(*t)) {
          sym->value = ConstValue::ofFloat(value->asDouble());
        } else if (value->isFloat) {
          error(DiagId::sema_const_float_to_int, c.value->range, c.name, scalarName(*t));
        }
      } else {
        unknownType(c.type->elemRange, c.type->elemName);
      }
    } else {
      // Unannotated consts are "weak" like literals: they take the type of
      // the other operand, so `x * SCALE` keeps x's type.
      sym->type = value->isFloat ? ScalarType::F32 : ScalarType::I32;
      if (!value->isFloat && (value->i > INT32_MAX || value->i < INT32_MIN)) sym->type = ScalarType::I64;
      sym->weakType = true;
    }
    declareGlobal(c.name, c.nameRange, sym);
    sema_.consts.push_back(sym);
  }

  // The names of a module const's expression that are earlier consts get
  // their symbols; the others name dims (perSpecialization) and stay unbound: which
  // kernel's dim they are depends on the specialization.
  void bindConstNames(Expr& e) {
    if (auto* n = e.as<NameExpr>()) {
      if (Symbol* g = globalOrPredefined(n->name); g && g->kind == SymbolKind::Const) n->symbol = g;
      return;
    }
    forEachChild(e, [&](Expr& child) { bindConstNames(child); });
  }

  // Every name a kernel's parameter types use as a dim, before any kernel
  // is resolved: the names a module const may take from a specialization.
  void collectKernelDimNames() {
    std::function<void(const Expr&)> visit = [&](const Expr& e) {
      if (const auto* n = e.as<NameExpr>()) kernelDimNames_.insert(n->name);
      forEachChild(e, visit);
    };
    for (const auto& decl : sema_.module->decls)
      if (decl.kind == DeclKind::Kernel)
        for (const auto& p : decl.kernel->params)
          for (const auto& d : p.type.dims) visit(*d);
  }

  // ------------------------------------------------------------- signatures

  // An unknown type name, with the Spindle spelling of a C or CUDA one
  // (`float`: f32) or the type it likely misspells (`f23`: f32).
  void unknownType(SourceRange range, const std::string& name) {
    std::string hint;
    if (std::string_view t = spindleTypeFor(name); !t.empty()) {
      hint = fmt::format("; in Spindle, write '{}'", t);
    } else {
      std::vector<std::string_view> types;
      for (const char* t : {"bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64"})
        types.push_back(t);
      if (std::string_view close = closestSpelling(name, types); !close.empty())
        hint = fmt::format("; did you mean '{}'?", close);
    }
    error(DiagId::sema_unknown_type, range, name, hint);
  }

  // Resolves an element/scalar type name: a scalar type or a type parameter.
  bool resolveElemType(FunctionScope* scope, const TypeRef& t, Symbol* sym) {
    if (auto st = scalarFromName(t.elemName)) {
      sym->type = *st;
      return true;
    }
    if (scope && scope->kernelRoot && scope->kernelRoot->typeParams.count(t.elemName)) {
      sym->typeParam = t.elemName;
      sym->type = ScalarType::F32;  // placeholder until typing binds it
      return true;
    }
    unknownType(t.elemRange, t.elemName);
    return false;
  }

  void declareLocalName(FunctionScope* scope, Symbol* sym) {
    auto [it, inserted] = scope->names.emplace(sym->name, sym);
    if (!inserted) {
      error(DiagId::sema_redefinition, sym->declRange, sym->name);
      note(it->second->declRange, "previous definition of '{}' is here", sym->name);
      return;
    }
    scope->declared.push_back(sym);
  }

  void resolveParams(FunctionScope* scope, std::vector<Param>& params) {
    const bool isKernel = scope->kind == FunctionScope::Kind::Kernel;
    int index = 0;
    for (auto& p : params) {
      checkNotTypeName(p.name, p.nameRange);
      bool tensor = p.type.isTensor;
      auto* sym =
          sema_.newSymbol(tensor ? SymbolKind::TensorParam : SymbolKind::ScalarParam, p.name, p.nameRange, scope);
      sym->paramIndex = index++;
      p.symbol = sym;
      resolveElemType(scope, p.type, sym);
      if (p.type.optional && !tensor) error(DiagId::sema_optional_scalar, p.type.range, p.name);
      // A def's caller decides presence in the kernel, where `is None` is a
      // compile-time fact; inside the def the tensor is always there.
      if (p.type.optional && tensor && !isKernel) error(DiagId::sema_def_tensor_param, p.type.range, p.name);
      if (tensor) {
        sym->strided = p.type.strided;
        sym->optional = p.type.optional && isKernel;
        for (auto& d : p.type.dims) {
          sym->shape.push_back(d.get());
          if (isKernel) resolveDim(scope, *d);
          else resolveDefDim(scope, *d);
        }
      }
      declareLocalName(scope, sym);
      scope->params.push_back(sym);
    }
  }

  // A dim of a def's (or closure's) tensor parameter: a name, bound from the
  // argument at each call like a template argument. It is the def's own dim
  // symbol (shadowing any outer name), shared by every parameter that names
  // it; typing checks that a call binds it consistently.
  void resolveDefDim(FunctionScope* scope, Expr& d) {
    d.type = ScalarType::I64;
    auto* name = d.as<NameExpr>();
    if (!name) {
      error(DiagId::sema_def_dim_not_name, d.range,
            file_->text().substr(d.range.begin.offset, d.range.end.offset - d.range.begin.offset));
      return;
    }
    bindDimSymbol(scope, *name);
  }

  // `name` in a dim of one of `scope`'s parameters: the dim symbol of that
  // name, declared by its first appearance.
  void bindDimSymbol(FunctionScope* scope, NameExpr& name) {
    if (auto it = scope->names.find(name.name); it != scope->names.end()) {
      if (it->second->kind != SymbolKind::DimSymbol) {
        error(DiagId::sema_dim_name_clash, name.range, name.name, symbolKindName(it->second->kind));
        return;
      }
      name.symbol = it->second;
      return;
    }
    checkNotTypeName(name.name, name.range);
    auto* sym = sema_.newSymbol(SymbolKind::DimSymbol, name.name, name.range, scope);
    sym->type = ScalarType::I64;
    name.symbol = sym;
    scope->names.emplace(sym->name, sym);
    scope->dimSymbols.push_back(sym);
  }

  // A tensor dim: an integer literal, an integer const, or a dim symbol
  // (declared by its first appearance).
  // A dim expression (`3 * C`, `C // NH`): integer literals, consts and dim
  // symbols under + - * //. Each of its dim symbols must also stand alone
  // somewhere in the parameters, so a launch binds it (checkDimExpressions).
  void resolveDim(FunctionScope* kernel, Expr& d, bool inExpression = false) {
    d.type = ScalarType::I64;
    if (auto* b = d.as<BinaryExpr>()) {
      if (b->op != BinaryOp::Add && b->op != BinaryOp::Sub && b->op != BinaryOp::Mul && b->op != BinaryOp::FloorDiv) {
        error(DiagId::sema_bad_dim, d.range);
        return;
      }
      resolveDim(kernel, *b->lhs, true);
      resolveDim(kernel, *b->rhs, true);
      return;
    }
    if (d.as<IntLitExpr>()) return;
    auto* name = d.as<NameExpr>();
    if (!name) {
      error(DiagId::sema_bad_dim, d.range);
      return;
    }
    if (!inExpression) standingAloneDims_.insert(name->name);
    else if (!firstInExpression_.count(name->name)) firstInExpression_.emplace(name->name, name->range);
    auto g = sema_.globals.find(name->name);
    if (g != sema_.globals.end() && g->second->kind == SymbolKind::Const) {
      if (g->second->perSpecialization) error(DiagId::sema_dim_const_uses_dims, d.range, name->name);
      else if (g->second->value.isFloat) error(DiagId::sema_bad_dim, d.range);
      name->symbol = g->second;
      return;
    }
    if (g != sema_.globals.end()) {
      error(DiagId::sema_dim_name_clash, d.range, name->name, symbolKindName(g->second->kind));
      return;
    }
    auto it = kernel->names.find(name->name);
    // A compile-time value parameter (`W: i32`) sizes dims like a const.
    if (it != kernel->names.end() && it->second->kind == SymbolKind::Const) {
      if (isFloat(it->second->type) || it->second->type == ScalarType::Bool) error(DiagId::sema_bad_dim, d.range);
      name->symbol = it->second;
      return;
    }
    bindDimSymbol(kernel, *name);
  }

  void resolveKernel(FunctionScope* scope) {
    KernelDecl& k = *scope->kernel;
    for (auto& tp : k.typeParams) {
      if (!tp.isTypeParam()) {
        resolveCompileTimeParam(scope, tp);
        continue;
      }
      if (isTypeName(tp.name)) {
        error(DiagId::sema_type_name_rebound, tp.range, tp.name);
        continue;
      }
      auto* sym = sema_.newSymbol(SymbolKind::TypeParam, tp.name, tp.range, scope);
      if (!scope->typeParams.emplace(tp.name, sym).second) error(DiagId::sema_redefinition, tp.range, tp.name);
      scope->names.emplace(tp.name, sym);
    }
    standingAloneDims_.clear();
    firstInExpression_.clear();
    resolveParams(scope, k.params);
    checkDimExpressions(scope);
    checkTypeParamsUsed(scope);
    bodyConstNames_.clear();
    for (const auto& st : k.body)
      if (const auto* a = st->as<AssignStmt>(); a && a->isConst)
        if (const auto* n = a->target->as<NameExpr>()) bodyConstNames_.insert(n->name);
    pendingLaunchNames_.clear();
    resolveDecorators(scope);
    resolveBody(scope, k.body);
    bindPendingLaunchNames(scope);
  }

  // @block and @grid may name the kernel's body consts, which resolveBody
  // declares after the decorators are resolved.
  void bindPendingLaunchNames(FunctionScope* scope) {
    for (NameExpr* n : pendingLaunchNames_) {
      auto it = scope->names.find(n->name);
      if (it != scope->names.end() && it->second->kind == SymbolKind::Const) n->symbol = it->second;
    }
  }

  // `FLAG: bool`, `W: i32` or `ACT: fn` in a kernel's brackets. A value is a
  // const of the kernel (printed as a file-scope constexpr); a fn parameter
  // names the module def it is bound to, so a call to it is a call to that
  // def. Their values come with the specialization (--const NAME=VALUE);
  // unbound, the module is still checked, and generation asks for them.
  void resolveCompileTimeParam(FunctionScope* scope, TypeParam& tp) {
    if (!checkNotTypeName(tp.name, tp.range)) return;
    if (auto g = sema_.globals.find(tp.name); g != sema_.globals.end()) {
      error(DiagId::sema_redefinition, tp.range, tp.name);
      note(g->second->declRange, "previous definition of '{}' is here", tp.name);
      return;
    }
    auto value = overrides_.find(tp.name);
    if (tp.kindName == "fn") {
      scope->fnParams.push_back(tp.name);
      if (value == overrides_.end()) {
        scope->unboundFnParams.insert(tp.name);
        return;
      }
      auto def = sema_.globals.find(value->second.function);
      if (value->second.function.empty() || def == sema_.globals.end() || def->second->kind != SymbolKind::Function) {
        std::string defs;
        for (auto* f : sema_.functions) defs += (defs.empty() ? "" : ", ") + f->name;
        error(DiagId::sema_fn_param_binding, tp.range, tp.name,
              value->second.function.empty() ? std::string("a number") : "'" + value->second.function + "'",
              defs.empty() ? "none" : defs);
        scope->unboundFnParams.insert(tp.name);
        return;
      }
      scope->names.emplace(tp.name, def->second);
      return;
    }
    auto type = scalarFromName(tp.kindName);
    if (!type) {
      unknownType(tp.kindRange, tp.kindName);
      return;
    }
    auto* sym = sema_.newSymbol(SymbolKind::Const, tp.name, tp.range, scope);
    sym->type = *type;
    sym->declaredType = *type;
    sym->value = isFloat(*type) ? ConstValue::ofFloat(0.0) : ConstValue::ofInt(0);  // unbound: checked as 0
    if (value != overrides_.end() && value->second.function.empty()) {
      sym->value = value->second;
      if (isFloat(*type)) sym->value = ConstValue::ofFloat(value->second.asDouble());
      scope->boundValueParams.insert(tp.name);
    }
    if (!scope->names.emplace(tp.name, sym).second) error(DiagId::sema_redefinition, tp.range, tp.name);
    scope->valueParams.push_back(sym);
  }

  // A dim symbol used in a dim expression must also be a whole dim of some
  // parameter: a launch binds symbols from whole dims, then checks the
  // expressions against the sizes.
  void checkDimExpressions(FunctionScope* scope) {
    for (const auto& [name, range] : firstInExpression_) {
      auto it = scope->names.find(name);
      if (it == scope->names.end() || it->second->kind != SymbolKind::DimSymbol) continue;  // a const
      if (!standingAloneDims_.count(name)) error(DiagId::sema_dim_expr_unbound, range, name, name);
    }
  }

  // A type parameter must be bindable from the arguments at launch.
  void checkTypeParamsUsed(FunctionScope* scope) {
    for (auto& tp : scope->kernel->typeParams) {
      if (!tp.isTypeParam()) continue;
      bool used = false;
      for (auto* p : scope->params) used |= p->typeParam == tp.name;
      if (!used) error(DiagId::sema_unbound_type_param, tp.range, tp.name);
    }
  }

  void resolveDecorators(FunctionScope* scope) {
    KernelDecl& k = *scope->kernel;
    if (!k.findDecorator("grid")) error(DiagId::sema_missing_decorator, k.nameRange, k.name, "grid");
    if (!k.findDecorator("block")) error(DiagId::sema_missing_decorator, k.nameRange, k.name, "block");
    for (auto& d : k.decorators) {
      if (d.name == "static") {
        for (Symbol* dim : decoratorNames(scope, d, SymbolKind::DimSymbol, DiagId::sema_static_not_dim))
          dim->staticDeclared = true;
        continue;
      }
      if (d.name == "occupancy") {  // a literal or a module const
        const Expr& a = *d.args[0];
        const auto* lit = a.as<IntLitExpr>();
        const auto* n = a.as<NameExpr>();
        Symbol* c = n ? globalOrPredefined(n->name) : nullptr;
        if (c && c->kind == SymbolKind::Const && !c->value.isFloat) d.args[0]->as<NameExpr>()->symbol = c;
        const int64_t v = lit                                                      ? int64_t(lit->value)
                          : c && c->kind == SymbolKind::Const && !c->value.isFloat ? c->value.i
                                                                                   : 0;
        if (v < 1 || v > 32)
          error(DiagId::sema_occupancy_value, a.range,
                lit || (c && c->kind == SymbolKind::Const && !c->value.isFloat) ? std::to_string(v)
                : n                                                             ? "'" + n->name + "'"
                                                                                : std::string("an expression"));
        else scope->minBlocksPerMultiprocessor = int(v);
        continue;
      }
      if (d.name == "tune") {  // candidate const values, expanded to configs (sema_tune.h)
        scope->tune = resolveTune(
            d, *scope, [this](const std::string& n) { return globalOrPredefined(n); }, file_, diags_);
        continue;
      }
      if (d.name == "alias") {  // tensors that may be the same memory: no __restrict__ on them
        std::vector<Symbol*> group = decoratorNames(scope, d, SymbolKind::TensorParam, DiagId::sema_alias_not_tensor);
        for (Symbol* tensor : group) tensor->aliased = true;
        scope->aliasGroups.push_back(std::move(group));
        continue;
      }
      // @grid: dims, consts and cdiv/min/max, evaluated at launch.
      // @block: the same but compile-time (consts and static dims).
      for (auto& a : d.args) resolveLaunchExpr(scope, *a, d.name);
    }
  }

  // The kernel's symbols a @static or @alias names, each of `kind`; any
  // other argument is reported with `id` ('NAME' is not one of kernel 'K').
  std::vector<Symbol*> decoratorNames(FunctionScope* scope, Decorator& d, SymbolKind kind, DiagId id) {
    std::vector<Symbol*> symbols;
    for (auto& a : d.args) {
      auto* n = a->as<NameExpr>();
      auto it = n ? scope->names.find(n->name) : scope->names.end();
      if (!n || it == scope->names.end() || it->second->kind != kind) {
        error(id, a->range, n ? n->name : std::string("expression"), scope->kernel->name);
        continue;
      }
      n->symbol = it->second;
      symbols.push_back(it->second);
    }
    return symbols;
  }

  void resolveLaunchExpr(FunctionScope* kernel, Expr& e, const std::string& decorator) {
    std::function<void(Expr&)> visit = [&](Expr& x) {
      switch (x.kind) {
        case ExprKind::Name: {
          auto& n = *x.as<NameExpr>();
          auto it = kernel->names.find(n.name);
          if (it != kernel->names.end() && it->second->kind == SymbolKind::DimSymbol) {
            n.symbol = it->second;
            return;
          }
          // An integer scalar parameter: its value is an argument of the
          // launch, known when the launcher computes the geometry.
          if (it != kernel->names.end() && it->second->kind == SymbolKind::ScalarParam) {
            Symbol* p = it->second;
            if (!p->typeParam.empty() || !isInteger(p->type)) {
              error(DiagId::sema_launch_expr_scalar, x.range, n.name, decorator,
                    p->typeParam.empty() ? scalarName(p->type) : p->typeParam);
              return;
            }
            n.symbol = p;
            if (std::find(kernel->launchScalars.begin(), kernel->launchScalars.end(), p) == kernel->launchScalars.end())
              kernel->launchScalars.push_back(p);
            return;
          }
          if (Symbol* g = globalOrPredefined(n.name); g && g->kind == SymbolKind::Const) {
            n.symbol = g;
            return;
          }
          if (bodyConstNames_.count(n.name)) {  // `const VEC = 16 // sizeof(T)` in the body
            pendingLaunchNames_.push_back(&n);
            return;
          }
          error(DiagId::sema_launch_expr_name, x.range, n.name, decorator);
          return;
        }
        case ExprKind::Unary: visit(*x.as<UnaryExpr>()->operand); return;
        case ExprKind::Binary:
          visit(*x.as<BinaryExpr>()->lhs);
          visit(*x.as<BinaryExpr>()->rhs);
          return;
        case ExprKind::Ternary:
          visit(*x.as<TernaryExpr>()->cond);
          visit(*x.as<TernaryExpr>()->thenValue);
          visit(*x.as<TernaryExpr>()->elseValue);
          return;
        case ExprKind::Call: {
          auto& c = *x.as<CallExpr>();
          if (const BuiltinInfo* b = findBuiltin(c.callee); b && b->category == BuiltinCategory::LaunchQuery) {
            if (decorator != "grid") error(DiagId::sema_launch_query_in_block, c.range, c.callee, decorator);
            else if (!c.args.empty() || !c.kwargs.empty())
              error(DiagId::sema_call_arity, c.range, c.callee, 0, c.args.size() + c.kwargs.size());
            else kernel->gridUsesResidentBlocks = true;
            return;
          }
          if (c.callee == "warp_size") {  // the target's: the launcher knows it
            if (!c.args.empty() || !c.kwargs.empty())
              error(DiagId::sema_call_arity, c.range, c.callee, 0, c.args.size() + c.kwargs.size());
            return;
          }
          if (c.callee != "cdiv" && c.callee != "min" && c.callee != "max") {
            error(DiagId::sema_launch_expr_call, c.calleeRange, c.callee, decorator);
            return;
          }
          if (c.args.size() != 2 || !c.kwargs.empty()) {
            error(DiagId::sema_call_arity, c.range, c.callee, 2, c.args.size());
            return;
          }
          for (auto& a : c.args) visit(*a);
          return;
        }
        case ExprKind::IntLit: return;
        case ExprKind::FloatLit:
        case ExprKind::BoolLit:
        case ExprKind::Index:
        case ExprKind::List:
        case ExprKind::Tuple:
        case ExprKind::TypeTest: error(DiagId::sema_launch_expr_kind, x.range, decorator); return;
      }
    };
    visit(e);
  }

  void resolveFunction(FunctionScope* scope) {
    FunctionDecl& f = *scope->function;
    resolveParams(scope, f.params);
    resolveReturnType(scope, f);
    resolveBody(scope, f.body);
  }

  void resolveReturnType(FunctionScope* scope, FunctionDecl& f) {
    if (!f.returnType) return;
    if (f.returnType->isTuple) {
      resolveTupleReturnType(scope, f);
      return;
    }
    if (f.returnType->isTensor) {
      error(DiagId::sema_def_tensor_return, f.returnType->range, f.name);
      return;
    }
    if (auto t = scalarFromName(f.returnType->elemName)) {
      scope->returnType = *t;
    } else if (scope->kernelRoot && scope->kernelRoot->typeParams.count(f.returnType->elemName)) {
      scope->returnType = ScalarType::F32;  // bound at typing
      scope->returnsTypeParam = true;
    } else {
      unknownType(f.returnType->elemRange, f.returnType->elemName);
    }
  }

  // `-> tuple[T1, T2, ...]`: each element a scalar type or a type parameter
  // (f32 until typing binds it). The parser has refused nested tuples.
  void resolveTupleReturnType(FunctionScope* scope, FunctionDecl& f) {
    for (const TypeRef& element : f.returnType->tupleElements) {
      ScalarType t = ScalarType::Invalid;
      if (element.isTensor) error(DiagId::sema_def_tensor_return, element.range, f.name);
      else if (auto st = scalarFromName(element.elemName)) t = *st;
      else if (scope->kernelRoot && scope->kernelRoot->typeParams.count(element.elemName)) t = ScalarType::F32;
      else if (!element.isTuple) unknownType(element.elemRange, element.elemName);
      scope->returnTuple.push_back(t);
    }
  }

  // ------------------------------------------------------------------ bodies

  struct BodyState {
    FunctionScope* scope;
    std::set<Symbol*> assigned;        // locals assigned so far, in source order
    std::set<std::string> referenced;  // names used so far (for the nonlocal order rule)
    std::vector<Symbol*> loops;        // active loop variables, innermost last
    int loopDepth = 0;
    int blockDepth = 0;
  };
  std::vector<BodyState*> states_;        // the function being resolved and its parents
  std::set<std::string> kernelDimNames_;  // collectKernelDimNames
  // resolveKernel: the names of the kernel's body consts, and the launch
  // expressions' names that refer to them (bound once the body is resolved).
  std::set<std::string> bodyConstNames_;
  std::vector<NameExpr*> pendingLaunchNames_;

  BodyState& state() { return *states_.back(); }
  BodyState* stateOf(FunctionScope* scope) {
    for (auto* s : states_)
      if (s->scope == scope) return s;
    return nullptr;
  }

  void resolveBody(FunctionScope* scope, Block& body) {
    BodyState st{scope, {}, {}, {}, 0, 0};
    states_.push_back(&st);
    collectNonlocals(scope, body);
    collectLocals(scope, body);
    resolveBlock(body);
    states_.pop_back();
    checkReturnsOnEveryPath(scope, body);
  }

  // A function that returns a value must not fall off its end: the C++
  // would compile and return garbage.
  void checkReturnsOnEveryPath(FunctionScope* scope, const Block& body) {
    if (scope->kind == FunctionScope::Kind::Kernel) return;
    bool returnsValue = scope->returnsValue();
    forEachOwnStmt(const_cast<Block&>(body), [&](Stmt& s) {
      if (auto* r = s.as<ReturnStmt>(); r && r->value) returnsValue = true;
    });
    if (returnsValue && !alwaysReturns(body))
      error(DiagId::sema_missing_return, scope->function->nameRange, scope->name);
  }

  static bool alwaysReturns(const Block& b) {
    for (const auto& s : b) {
      if (s->as<ReturnStmt>()) return true;
      if (auto* i = s->as<IfStmt>();
          i && !i->elseBody.empty() && alwaysReturns(i->thenBody) && alwaysReturns(i->elseBody))
        return true;
    }
    return false;
  }

  // Pass 1a: `nonlocal` declarations anywhere in this function's own body.
  void collectNonlocals(FunctionScope* scope, Block& body) {
    forEachOwnStmt(body, [&](Stmt& s) {
      auto* nl = s.as<NonlocalStmt>();
      if (!nl) return;
      if (scope->kind != FunctionScope::Kind::Closure) {
        error(DiagId::sema_nonlocal_outside_closure, nl->range);
        return;
      }
      for (size_t i = 0; i < nl->names.size(); ++i) {
        const std::string& name = nl->names[i];
        Symbol* target = lookupEnclosing(scope->parent, name);
        if (!target) {
          error(DiagId::sema_nonlocal_unknown, nl->nameRanges[i], name);
          continue;
        }
        if (target->kind != SymbolKind::Local && target->kind != SymbolKind::ScalarParam) {
          error(DiagId::sema_nonlocal_kind, nl->nameRanges[i], name, symbolKindName(target->kind));
          continue;
        }
        scope->nonlocals.emplace(name, target);
      }
    });
  }

  // Pass 1b: every name this function assigns becomes its local (Python's
  // rule), unless declared nonlocal; shared()/local() make scratch buffers;
  // nested defs make closures.
  // Assignments to a variable of an enclosing `for ... in elements(...)`
  // loop (the element's value `v = ...`; any other is reported in the
  // body): no local of the function.
  static void collectElementAssigns(const Block& body, std::vector<const std::string*>& names,
                                    std::set<const Stmt*>& out) {
    auto names_it = [&](const Expr* target) {
      const auto* n = target ? target->as<NameExpr>() : nullptr;
      if (!n) return false;
      for (const std::string* name : names)
        if (*name == n->name) return true;
      return false;
    };
    for (const auto& s : body) {
      if (auto* a = s->as<AssignStmt>(); a && names_it(a->target.get())) out.insert(s.get());
      if (auto* a = s->as<AugAssignStmt>(); a && names_it(a->target.get())) out.insert(s.get());
      if (auto* f = s->as<ForStmt>()) {
        const size_t before = names.size();
        if (f->elementsOf) {
          names.push_back(&f->var);
          for (const auto& v : f->elementVars) names.push_back(&v);
        }
        collectElementAssigns(f->body, names, out);
        names.resize(before);
      } else if (auto* i = s->as<IfStmt>()) {
        collectElementAssigns(i->thenBody, names, out);
        collectElementAssigns(i->elseBody, names, out);
      } else if (auto* w = s->as<WhileStmt>()) {
        collectElementAssigns(w->body, names, out);
      }
    }
  }

  void collectLocals(FunctionScope* scope, Block& body) {
    std::vector<const std::string*> elementNames;
    std::set<const Stmt*> elementAssigns;
    collectElementAssigns(body, elementNames, elementAssigns);
    forEachOwnStmt(body, [&](Stmt& s) {
      if (elementAssigns.count(&s)) return;
      if (auto* fd = s.as<FuncDefStmt>()) {
        declareClosure(scope, *fd->func);
        return;
      }
      if (auto* a = s.as<AssignStmt>(); a && a->isConst) {
        declareBodyConst(scope, *a);
        return;
      }
      if (auto* a = s.as<AssignStmt>(); a && a->target->as<TupleExpr>()) {
        declareUnpackedLocals(scope, *a);
        return;
      }
      if (auto* a = s.as<AssignStmt>())
        declareAssignedLocal(scope, a->target.get(), a->value.get(), a->annotation.get());
      else if (auto* a = s.as<AugAssignStmt>()) declareAssignedLocal(scope, a->target.get(), nullptr, nullptr);
    });
  }

  // `a, b = ...`: each name target is a local of this function, as if
  // assigned alone. Its first value (for the notes of 5.1) is its own
  // element of the right side, or the call that returns the tuple.
  // Scratch calls on the right are refused where they stand, so no target
  // becomes a scratch buffer.
  void declareUnpackedLocals(FunctionScope* scope, AssignStmt& a) {
    auto& targets = a.target->as<TupleExpr>()->elements;
    const auto* values = a.value->as<TupleExpr>();
    for (size_t i = 0; i < targets.size(); ++i) {
      const Expr* value =
          values && values->elements.size() == targets.size() ? values->elements[i].get() : a.value.get();
      declareAssignedLocal(scope, targets[i].get(), value, nullptr, /*allowScratch=*/false);
    }
  }

  void declareAssignedLocal(FunctionScope* scope, const Expr* target, const Expr* value, const TypeRef* annotation,
                            bool allowScratch = true) {
    auto* name = target ? target->as<NameExpr>() : nullptr;
    if (!name || scope->nonlocals.count(name->name)) return;
    if (auto it = scope->names.find(name->name); it != scope->names.end()) return;  // param, or seen
    if (isTypeName(name->name) || sema_.globals.count(name->name)) return;          // reported in pass 2
    if (lookupEnclosingKernelName(scope, name->name)) return;                       // dim symbol / type param: pass 2
    const CallExpr* scratch = allowScratch ? scratchCall(value) : nullptr;
    SymbolKind kind = SymbolKind::Local;
    if (scratch)
      kind = scratch->callee == "shared" || scratch->callee == "barriers" ? SymbolKind::SharedBuffer
                                                                          : SymbolKind::LocalBuffer;
    if (scratch && scratch->callee.rfind("mma_", 0) == 0) kind = SymbolKind::Fragment;
    auto* sym = sema_.newSymbol(kind, name->name, name->range, scope);
    if (kind == SymbolKind::Fragment)
      sym->fragmentRole = scratch->callee == "mma_zero"   ? Symbol::FragmentRole::Acc
                          : scratch->callee == "mma_a"    ? Symbol::FragmentRole::A
                          : scratch->callee == "mma_rows" ? Symbol::FragmentRole::Rows
                                                          : Symbol::FragmentRole::B;
    sym->init = value;
    if (annotation) {
      if (annotation->isTensor) error(DiagId::sema_local_tensor_type, annotation->range, name->name);
      else if (auto t = scalarFromName(annotation->elemName)) sym->declaredType = *t;
      else if (scope->kernelRoot && scope->kernelRoot->typeParams.count(annotation->elemName))
        sym->typeParam = annotation->elemName;
      else unknownType(annotation->elemRange, annotation->elemName);
    }
    declareLocalName(scope, sym);
  }

  // `const NAME [: TYPE] = value` at the top of a kernel's body: a const of
  // the kernel. Its value is computed per specialization (it may use static
  // dims and sizeof(T)); here it gets one where it can, for checking.
  void declareBodyConst(FunctionScope* scope, AssignStmt& a) {
    auto* name = a.target->as<NameExpr>();
    bool topLevel = false;
    if (scope->kind == FunctionScope::Kind::Kernel)
      for (const auto& st : scope->kernel->body) topLevel |= st.get() == &a;
    if (!topLevel) {
      error(DiagId::sema_body_const_position, a.range, name->name);
      return;
    }
    if (!checkNotTypeName(name->name, name->range)) return;
    if (sema_.globals.count(name->name) || scope->names.count(name->name)) {
      error(DiagId::sema_redefinition, name->range, name->name);
      return;
    }
    auto* sym = sema_.newSymbol(SymbolKind::Const, name->name, name->range, scope);
    sym->init = a.value.get();
    name->symbol = sym;
    if (a.annotation) {
      if (auto t = scalarFromName(a.annotation->elemName); t && !a.annotation->isTensor) {
        sym->type = sym->declaredType = *t;
      } else {
        unknownType(a.annotation->elemRange, a.annotation->elemName);
        sym->type = ScalarType::I32;
      }
    } else {
      sym->weakType = true;
      sym->type = ScalarType::I32;
    }
    sym->value = ConstValue::ofInt(1);  // until evaluated (resolveAssign, then each specialization)
    declareLocalName(scope, sym);
    scope->bodyConsts.push_back(sym);
  }

  void declareClosure(FunctionScope* scope, FunctionDecl& f) {
    auto* child = sema_.newScope(FunctionScope::Kind::Closure, f.name, scope);
    child->function = &f;
    auto* sym = sema_.newSymbol(SymbolKind::Closure, f.name, f.nameRange, scope);
    sym->scope = child;
    child->symbol = sym;
    f.symbol = sym;
    checkNotTypeName(f.name, f.nameRange);
    declareLocalName(scope, sym);
    scope->closures.push_back(child);
  }

  // Visits the statements of a body, nested blocks included, but not the
  // bodies of nested defs (they are their own functions).
  static void forEachOwnStmt(Block& body, const std::function<void(Stmt&)>& fn) {
    for (auto& s : body) {
      fn(*s);
      if (auto* i = s->as<IfStmt>()) {
        forEachOwnStmt(i->thenBody, fn);
        forEachOwnStmt(i->elseBody, fn);
      } else if (auto* w = s->as<WhileStmt>()) {
        forEachOwnStmt(w->body, fn);
      } else if (auto* f = s->as<ForStmt>()) {
        forEachOwnStmt(f->body, fn);
      }
    }
  }

  // A name declared in an enclosing function (its names, active loop
  // variables); not module-level.
  Symbol* lookupEnclosing(FunctionScope* scope, const std::string& name) {
    for (FunctionScope* s = scope; s; s = s->parent) {
      if (auto* st = stateOf(s)) {
        for (auto it = st->loops.rbegin(); it != st->loops.rend(); ++it)
          if ((*it)->name == name) return *it;
      }
      if (auto it = s->nonlocals.find(name); it != s->nonlocals.end()) return it->second;
      if (auto it = s->names.find(name); it != s->names.end()) return it->second;
    }
    return nullptr;
  }

  Symbol* lookupEnclosingKernelName(FunctionScope* scope, const std::string& name) {
    FunctionScope* root = scope->kernelRoot;
    if (!root || root->kind != FunctionScope::Kind::Kernel) return nullptr;
    auto it = root->names.find(name);
    if (it == root->names.end()) return nullptr;
    auto k = it->second->kind;
    return k == SymbolKind::DimSymbol || k == SymbolKind::TypeParam ? it->second : nullptr;
  }

  Symbol* lookup(const std::string& name) {
    if (Symbol* s = lookupEnclosing(state().scope, name)) return s;
    return globalOrPredefined(name);
  }

  // A module-level name, else `pi` or `e`: weak float consts that every
  // declaration shadows (a local `e = ...`, a module `const e`, a parameter),
  // so they are found last and never in sema_.globals.
  Symbol* globalOrPredefined(const std::string& name) {
    if (auto g = sema_.globals.find(name); g != sema_.globals.end()) return g->second;
    static const std::pair<const char*, double> kPredefined[] = {{"pi", 3.14159265358979323846},
                                                                 {"e", 2.71828182845904523536}};
    for (const auto& [spelling, value] : kPredefined) {
      if (name != spelling) continue;
      Symbol*& sym = predefined_[name];
      if (!sym) {
        sym = sema_.newSymbol(SymbolKind::Const, name, SourceRange{}, nullptr);
        sym->value = ConstValue::ofFloat(value);
        sym->type = ScalarType::F32;
        sym->weakType = true;
      }
      return sym;
    }
    return nullptr;
  }

  // Records that the current function names `sym`; captures are computed
  // from these references later (passes/capture_analysis.cpp).
  void noteReference(Symbol* sym) {
    FunctionScope* scope = state().scope;
    if (sym->kind == SymbolKind::DimSymbol && sym->owner == scope) scope->dimsRead.insert(sym);
    if (!isCapturable(sym) || sym->owner == scope) return;
    if (std::find(scope->outerRefs.begin(), scope->outerRefs.end(), sym) == scope->outerRefs.end())
      scope->outerRefs.push_back(sym);
  }

  void resolveBlock(Block& block) {
    ++state().blockDepth;
    for (auto& s : block) {
      if (diags_.tooManyErrors()) break;
      resolveStmt(*s);
    }
    --state().blockDepth;
  }

  void resolveStmt(Stmt& s) {
    switch (s.kind) {
      case StmtKind::Assign: resolveAssign(*s.as<AssignStmt>()); return;
      case StmtKind::AugAssign: {
        auto& a = *s.as<AugAssignStmt>();
        resolveExpr(*a.value);
        resolveTarget(*a.target, /*isAugmented=*/true, nullptr);
        return;
      }
      case StmtKind::ExprStmt: {
        auto& e = *s.as<ExprStmt>();
        if (!e.expr->as<CallExpr>()) error(DiagId::sema_useless_expr, e.expr->range);
        resolveExpr(*e.expr);
        return;
      }
      case StmtKind::If: {
        auto& i = *s.as<IfStmt>();
        resolveExpr(*i.cond);
        resolveBlock(i.thenBody);
        resolveBlock(i.elseBody);
        return;
      }
      case StmtKind::While: {
        auto& w = *s.as<WhileStmt>();
        resolveExpr(*w.cond);
        ++state().loopDepth;
        resolveBlock(w.body);
        --state().loopDepth;
        return;
      }
      case StmtKind::For: resolveFor(*s.as<ForStmt>()); return;
      case StmtKind::Break:
      case StmtKind::Continue:
        if (state().loopDepth == 0)
          error(DiagId::sema_outside_loop, s.range, s.kind == StmtKind::Break ? "break" : "continue");
        return;
      case StmtKind::Pass: return;
      case StmtKind::Assert: resolveExpr(*s.as<AssertStmt>()->cond); return;
      case StmtKind::Return: resolveReturn(*s.as<ReturnStmt>()); return;
      case StmtKind::Nonlocal: {
        auto& nl = *s.as<NonlocalStmt>();
        if (state().scope->kind != FunctionScope::Kind::Closure) return;  // already reported
        for (size_t i = 0; i < nl.names.size(); ++i)
          if (state().referenced.count(nl.names[i]))
            error(DiagId::sema_nonlocal_after_use, nl.nameRanges[i], nl.names[i]);
        return;
      }
      case StmtKind::FuncDef: {
        auto& fd = *s.as<FuncDefStmt>();
        FunctionScope* child = fd.func->symbol ? fd.func->symbol->scope : nullptr;
        if (!child) return;  // a redefinition, already reported
        resolveParams(child, fd.func->params);
        resolveReturnType(child, *fd.func);
        resolveBody(child, fd.func->body);
        return;
      }
    }
  }

  void resolveReturn(ReturnStmt& r) {
    FunctionScope* scope = state().scope;
    if (r.value) {
      resolveValues(*r.value);
      if (scope->kind == FunctionScope::Kind::Kernel) error(DiagId::sema_kernel_return_value, r.value->range);
      else if (scope->kind == FunctionScope::Kind::Function && !scope->returnsValue())
        error(DiagId::sema_return_without_type, r.value->range, scope->name);
    } else if (scope->returnsValue()) {
      error(DiagId::sema_missing_return_value, r.range, scope->name);
    }
  }

  void resolveFor(ForStmt& f) {
    for (auto& a : f.rangeArgs) resolveExpr(*a);
    if (f.elementsOf) return resolveElementsFor(f);
    auto* scope = state().scope;
    if (auto it = scope->names.find(f.var); it != scope->names.end()) {
      // A local first assigned inside this very loop is an assignment to the
      // loop variable, reported as such in the body.
      bool assignedInBody = it->second->kind == SymbolKind::Local &&
                            it->second->declRange.begin.offset >= f.range.begin.offset &&
                            it->second->declRange.begin.offset < f.range.end.offset;
      if (!assignedInBody) {
        error(DiagId::sema_loop_var_clash, f.varRange, f.var, symbolKindName(it->second->kind));
        note(it->second->declRange, "the {} '{}' is declared here; give the loop variable another name",
             symbolKindName(it->second->kind), f.var);
      }
    }
    checkNotTypeName(f.var, f.varRange);
    auto* sym = sema_.newSymbol(SymbolKind::LoopVar, f.var, f.varRange, scope);
    sym->unrolledLoopVar = f.isStatic;
    f.symbol = sym;
    scope->loopVars.push_back(sym);
    state().loops.push_back(sym);
    ++state().loopDepth;
    resolveBlock(f.body);
    --state().loopDepth;
    state().loops.pop_back();
  }

  // `for r, c, v in elements(acc[i, j])`: three read-only variables, the
  // body unrolled per element this lane holds.
  void resolveElementsFor(ForStmt& f) {
    if (auto* idx = f.elementsOf->as<IndexExpr>()) resolveIndex(*idx, /*isStore=*/false);
    else resolveExpr(*f.elementsOf);
    for (auto& rows : f.elementRows) {
      if (auto* idx = rows->as<IndexExpr>()) resolveIndex(*idx, /*isStore=*/false);
      else resolveExpr(*rows);
    }
    // The element's value (v of an accumulator tile, x of a row fragment)
    // may be assigned: the assignment writes the tile's element.
    const auto* tileIdx = f.elementsOf->as<IndexExpr>();
    const auto* tileName = tileIdx ? tileIdx->base->as<NameExpr>() : nullptr;
    const bool rowsTile = tileName && tileName->symbol && tileName->symbol->kind == SymbolKind::Fragment &&
                          tileName->symbol->fragmentRole == Symbol::FragmentRole::Rows;
    const size_t valueVar = rowsTile ? 1 : 2;
    auto* scope = state().scope;
    std::vector<std::pair<const std::string*, SourceRange>> vars{{&f.var, f.varRange}};
    for (size_t k = 0; k < f.elementVars.size(); ++k) vars.push_back({&f.elementVars[k], f.elementVarRanges[k]});
    std::vector<Symbol*> symbols;
    for (auto& [name, range] : vars) {
      // A local first assigned inside the loop is an assignment to its
      // variable, reported in the body (as for range loops).
      auto it = scope->names.find(*name);
      const bool assignedInBody = it != scope->names.end() && it->second->kind == SymbolKind::Local &&
                                  it->second->declRange.begin.offset >= f.range.begin.offset &&
                                  it->second->declRange.begin.offset < f.range.end.offset;
      if (it != scope->names.end() && !assignedInBody) {
        error(DiagId::sema_loop_var_clash, range, *name, symbolKindName(it->second->kind));
        note(it->second->declRange, "the {} '{}' is declared here; give the loop variable another name",
             symbolKindName(it->second->kind), *name);
      }
      checkNotTypeName(*name, range);
      auto* sym = sema_.newSymbol(SymbolKind::LoopVar, *name, range, scope);
      sym->writableElement = symbols.size() == valueVar;
      scope->loopVars.push_back(sym);
      state().loops.push_back(sym);
      symbols.push_back(sym);
    }
    f.symbol = symbols[0];
    f.elementSymbols.assign(symbols.begin() + 1, symbols.end());
    ++state().loopDepth;
    resolveBlock(f.body);
    --state().loopDepth;
    for (size_t k = 0; k < symbols.size(); ++k) state().loops.pop_back();
  }

  void resolveAssign(AssignStmt& a) {
    if (a.isConst) {
      resolveExpr(*a.value);
      // A value for checking the module: exact unless it needs a static
      // dim or a type parameter's size (then 1, and each specialization
      // computes the real one).
      auto* sym = a.target->as<NameExpr>()->symbol;
      if (!sym) return;
      if (auto v = evaluateConst(*a.value, constsOnly())) {
        sym->value = *v;
        if (sym->weakType) sym->type = v->isFloat ? ScalarType::F32 : ScalarType::I32;
        if (isFloat(sym->declaredType) && !v->isFloat) sym->value = ConstValue::ofFloat(v->asDouble());
      } else {
        sym->perSpecialization = true;
      }
      return;
    }
    if (auto* targets = a.target->as<TupleExpr>()) {
      resolveUnpack(a, *targets);
      return;
    }
    const CallExpr* scratch = scratchCall(a.value.get());
    if (scratch) resolveScratch(a, *scratch);
    else resolveExpr(*a.value);
    resolveTarget(*a.target, /*isAugmented=*/false, &a);
  }

  // A value where a tuple may stand: a return's, or an unpacking's right
  // side. A tuple's elements are resolved one by one (a nested tuple is
  // still an error).
  void resolveValues(Expr& value) {
    if (auto* tuple = value.as<TupleExpr>()) {
      for (auto& e : tuple->elements) resolveExpr(*e);
      return;
    }
    resolveExpr(value);
  }

  // `a, x[i] = b, c` and `m, s = stats(v)`: every value first, then each
  // target as a plain assignment would resolve it, left to right.
  void resolveUnpack(AssignStmt& a, TupleExpr& targets) {
    resolveValues(*a.value);
    for (auto& t : targets.elements) resolveTarget(*t, /*isAugmented=*/false, &a);
    checkUnpackIndexOrder(targets);
  }

  // docs/language.md 5.11: an element target's indices are evaluated before
  // the first store. Python evaluates them just before that target's own
  // store, after the stores to its left; the two differ only when an index
  // reads what an earlier target stores (`i, x[i] = 1, 2`), and Spindle
  // refuses that rather than silently differ.
  void checkUnpackIndexOrder(const TupleExpr& targets) {
    std::set<const Symbol*> stored;
    for (const auto& t : targets.elements) {
      if (const auto* idx = t->as<IndexExpr>()) {
        for (const auto& i : idx->indices) {
          if (const NameExpr* read = firstReadOf(*i, stored)) {
            error(DiagId::sema_unpack_index_order, read->range, read->name);
            return;
          }
        }
      }
      if (const Symbol* s = storedSymbol(*t)) stored.insert(s);
    }
  }

  static const Symbol* storedSymbol(const Expr& target) {
    if (const auto* n = target.as<NameExpr>()) return n->symbol;
    const auto* idx = target.as<IndexExpr>();
    const auto* base = idx ? idx->base->as<NameExpr>() : nullptr;
    return base ? base->symbol : nullptr;
  }

  // The first name in `e` bound to one of `symbols` (a tensor's name in
  // dim(x, k) reads its size, not its elements).
  static const NameExpr* firstReadOf(const Expr& e, const std::set<const Symbol*>& symbols) {
    if (const auto* n = e.as<NameExpr>()) return n->symbol && symbols.count(n->symbol) ? n : nullptr;
    if (const auto* c = e.as<CallExpr>(); c && !c->symbol && c->callee == "dim") return nullptr;
    const NameExpr* found = nullptr;
    forEachChild(e, [&](const Expr& child) {
      if (!found) found = firstReadOf(child, symbols);
    });
    return found;
  }

  // x = shared(T, [dims]) at the kernel's top level; x = local(T, [dims], init).
  void resolveScratch(AssignStmt& a, const CallExpr& call) {
    auto* name = a.target->as<NameExpr>();
    bool isShared = call.callee == "shared";
    const bool isFragment = call.callee.rfind("mma_", 0) == 0;
    if (isFragment) return resolveFragment(a, call);
    if (call.callee == "barriers") return resolveBarriers(a, call);
    if (!name) {
      error(DiagId::sema_scratch_position, call.range, call.callee);
      return;
    }
    if (isShared && (state().scope->kind != FunctionScope::Kind::Kernel || state().blockDepth != 1)) {
      error(DiagId::sema_shared_not_top_level, call.range, call.callee);
    }
    size_t expected = isShared ? 2 : 3;
    // shared(T, [R, C], swizzle=S): the only keyword of a scratch call (the
    // parser refuses one given twice).
    const KeywordArg* swizzle = nullptr;
    for (const auto& kw : call.kwargs) {
      if (!isShared) error(DiagId::sema_kwargs_not_allowed, kw.nameRange, call.callee);
      else if (kw.name != "swizzle") error(DiagId::sema_shared_keyword, kw.nameRange, kw.name);
      else swizzle = &kw;
    }
    if (call.args.size() != expected) {
      error(DiagId::sema_call_arity, call.range, call.callee, expected, call.args.size());
      return;
    }
    auto* typeName = call.args[0]->as<NameExpr>();
    auto* dims = call.args[1]->as<ListExpr>();
    Symbol* sym = state().scope->names.count(name->name) ? state().scope->names[name->name] : nullptr;
    if (swizzle) {
      resolveExpr(*swizzle->value);
      if (sym && sym->init == a.value.get()) sym->swizzle = swizzle->value.get();
      if (const Expr* bad = firstRunTimePart(*swizzle->value)) {
        std::string why = "this is not a compile-time value";
        if (const auto* n = bad->as<NameExpr>())
          why = fmt::format("'{}' is a {}{}", n->name, symbolKindName(n->symbol->kind),
                            n->symbol->kind == SymbolKind::Local ? " variable" : "");
        error(DiagId::sema_swizzle_not_constant, bad->range, name->name, why);
      }
    }
    resolveDeclaredElemType(a, call, typeName, sym);
    if (!dims || dims->elements.empty() || dims->elements.size() > 8) {
      error(DiagId::sema_scratch_shape, call.args[1]->range, call.callee);
      return;
    }
    for (auto& d : dims->elements) {
      resolveExpr(*d);
      if (sym && sym->init == a.value.get()) sym->shape.push_back(d.get());
      // A run-time size would make a local a variable-length array (which
      // nvcc refuses and hipcc puts on the GPU stack) and a shared buffer
      // unsizable at launch.
      if (const Expr* bad = firstRunTimePart(*d)) {
        std::string why = "this is not a compile-time value";
        if (const auto* n = bad->as<NameExpr>())
          why = fmt::format("'{}' is a {}{}", n->name, symbolKindName(n->symbol->kind),
                            n->symbol->kind == SymbolKind::Local ? " variable" : "");
        else if (const auto* c = bad->as<CallExpr>())
          why = fmt::format("'{}(...)' is not a compile-time value", c->callee);
        error(DiagId::sema_scratch_size_not_constant, bad->range, isShared ? "shared buffer" : "local buffer",
              name->name, isShared ? "launched" : "compiled", why);
      }
    }
    if (!isShared) resolveExpr(*call.args[2]);
  }

  // bars = barriers(N, count) at the kernel's top level (docs/language.md
  // 8.14): a shared buffer of N 64-bit words, which the printer
  // initializes where it is declared (a barrier of the whole block, so
  // every thread must reach it, as sync()). N and count are compile-time
  // values (checked in sema_types).
  void resolveBarriers(AssignStmt& a, const CallExpr& call) {
    auto* name = a.target->as<NameExpr>();
    if (!name) {
      error(DiagId::sema_scratch_position, call.range, call.callee);
      return;
    }
    if (state().scope->kind != FunctionScope::Kind::Kernel || state().blockDepth != 1)
      error(DiagId::sema_shared_not_top_level, call.range, call.callee);
    for (const auto& kw : call.kwargs) error(DiagId::sema_kwargs_not_allowed, kw.nameRange, call.callee);
    if (call.args.size() != 2) {
      error(DiagId::sema_call_arity, call.range, call.callee, 2, call.args.size());
      return;
    }
    Symbol* sym = state().scope->names.count(name->name) ? state().scope->names[name->name] : nullptr;
    for (size_t k = 0; k < 2; ++k) {
      resolveExpr(*call.args[k]);
      // Consts, literals and warp_size() (and, for count, dims: mbarrier.init
      // takes a register); N sizes a static array.
      std::string why = "; this is not a compile-time value";
      const Expr* bad = firstRunTimePart(*call.args[k]);
      if (!bad && k == 0 && (bad = firstDimSymbol(*call.args[k])))
        why = fmt::format("; '{}' is a dim, known only at launch", bad->as<NameExpr>()->name);
      if (bad)
        error(DiagId::sema_barriers_value, bad->range, "N, count", k == 0 ? "number of barriers N" : "arrival count",
              k == 0 ? 1024 : (1 << 20) - 1, why);
    }
    if (sym && sym->init == a.value.get()) {
      sym->type = sym->declaredType = ScalarType::U64;
      sym->shape.push_back(call.args[0].get());
      sym->barrierCount = call.args[1].get();
    }
  }

  // The first dim symbol `e` names, else null.
  static const Expr* firstDimSymbol(const Expr& e) {
    if (const auto* n = e.as<NameExpr>()) return n->symbol && n->symbol->kind == SymbolKind::DimSymbol ? &e : nullptr;
    const Expr* found = nullptr;
    forEachChild(e, [&](const Expr& child) {
      if (!found) found = firstDimSymbol(child);
    });
    return found;
  }

  // The element type a scratch or fragment declaration names first
  // (`shared(f32, ...)`, `mma_a(f16, ...)`), bound to the symbol where this
  // assignment is its declaration.
  void resolveDeclaredElemType(const AssignStmt& a, const CallExpr& call, const NameExpr* typeName, Symbol* sym) {
    if (!typeName) {
      error(DiagId::sema_scratch_type, call.args[0]->range, call.callee);
    } else if (sym && sym->init == a.value.get()) {
      TypeRef t;
      t.elemName = typeName->name;
      t.elemRange = typeName->range;
      resolveElemType(state().scope, t, sym);
    }
  }

  // acc = mma_zero(f32, [TI, TJ]), a = mma_a(f16, [TI]), b = mma_b(T, [TJ])
  // (docs/language.md 8.11): a fragment array of compile-time shape.
  void resolveFragment(AssignStmt& a, const CallExpr& call) {
    auto* name = a.target->as<NameExpr>();
    const bool isAcc = call.callee == "mma_zero";
    const size_t rank = isAcc ? 2 : 1;
    const char* example = isAcc                       ? "acc = mma_zero(f32, [2, 2])"
                          : call.callee == "mma_a"    ? "a = mma_a(f16, [2])"
                          : call.callee == "mma_rows" ? "m = mma_rows(f32, [2])"
                                                      : "b = mma_b(f16, [2])";
    if (!name) {
      error(DiagId::sema_fragment_position, call.range, call.callee, example);
      return;
    }
    if (call.args.size() != 2 || !call.kwargs.empty()) {
      error(DiagId::sema_call_arity, call.range, call.callee, 2, call.args.size());
      return;
    }
    Symbol* sym = state().scope->names.count(name->name) ? state().scope->names[name->name] : nullptr;
    auto* typeName = call.args[0]->as<NameExpr>();
    resolveDeclaredElemType(a, call, typeName, sym);
    auto* dims = call.args[1]->as<ListExpr>();
    if (!dims || dims->elements.size() != rank) {
      error(DiagId::sema_fragment_shape, call.args[1]->range, call.callee, rank, example);
      return;
    }
    for (auto& d : dims->elements) {
      resolveExpr(*d);
      if (sym && sym->init == a.value.get()) sym->shape.push_back(d.get());
      if (const Expr* bad = firstRunTimePart(*d))
        error(DiagId::sema_fragment_size_not_constant, bad->range, name->name);
    }
  }

  void resolveTarget(Expr& target, bool isAugmented, AssignStmt* assign) {
    if (auto* idx = target.as<IndexExpr>()) {
      resolveIndex(*idx, /*isStore=*/true);
      return;
    }
    auto* name = target.as<NameExpr>();
    if (!name) {
      error(DiagId::sema_bad_target, target.range);
      return;
    }
    state().referenced.insert(name->name);
    FunctionScope* scope = state().scope;
    // Loop variables may be read, not rebound.
    for (auto it = state().loops.rbegin(); it != state().loops.rend(); ++it) {
      if ((*it)->name == name->name) {
        if ((*it)->writableElement) {  // `v = ...`, `v *= ...` in an elements(...) loop: writes the element
          name->symbol = *it;
          return;
        }
        error(DiagId::sema_assign_loop_var, name->range, name->name);
        return;
      }
    }
    Symbol* sym = nullptr;
    if (auto it = scope->nonlocals.find(name->name); it != scope->nonlocals.end()) {
      sym = it->second;
      noteReference(sym);
    } else if (auto it2 = scope->names.find(name->name); it2 != scope->names.end()) {
      sym = it2->second;
    }
    if (!sym) {
      // Not declared by pass 1: a const, a def, a kernel, a dim symbol, a type name.
      Symbol* other = lookup(name->name);
      if (isTypeName(name->name)) error(DiagId::sema_type_name_rebound, name->range, name->name);
      else error(DiagId::sema_assign_kind, name->range, name->name, other ? symbolKindName(other->kind) : "name");
      return;
    }
    name->symbol = sym;
    switch (sym->kind) {
      case SymbolKind::Local:
      case SymbolKind::ScalarParam: break;
      case SymbolKind::SharedBuffer:
      case SymbolKind::LocalBuffer:
      case SymbolKind::Fragment:
        if (assign && sym->init == assign->value.get()) break;  // its declaration
        error(DiagId::sema_rebind_scratch, name->range, name->name);
        return;
      case SymbolKind::Const:
      case SymbolKind::Function:
      case SymbolKind::Kernel:
      case SymbolKind::TensorParam:
      case SymbolKind::DimSymbol:
      case SymbolKind::TypeParam:
      case SymbolKind::LoopVar:
      case SymbolKind::Closure:
        error(DiagId::sema_assign_kind, name->range, name->name, symbolKindName(sym->kind));
        return;
    }
    if (isAugmented && sym->kind == SymbolKind::Local && sym->owner == scope && !state().assigned.count(sym)) {
      reportReadBeforeAssign(*name, sym);
      return;
    }
    if (assign && sym->owner == scope && !state().assigned.count(sym) && sym->kind == SymbolKind::Local) {
      assign->declares = true;
      if (assign->target->as<TupleExpr>()) assign->declaredLocals.push_back(sym);
    }
    if (sym->kind == SymbolKind::SharedBuffer || sym->kind == SymbolKind::LocalBuffer ||
        sym->kind == SymbolKind::Fragment)
      assign->declares = true;
    state().assigned.insert(sym);
  }

  void reportReadBeforeAssign(const NameExpr& name, Symbol* sym) {
    Symbol* outer = state().scope->parent ? lookupEnclosing(state().scope->parent, name.name) : nullptr;
    if (outer && (outer->kind == SymbolKind::Local || outer->kind == SymbolKind::ScalarParam)) {
      error(DiagId::sema_closure_local_before_assign, name.range, name.name, state().scope->name);
      note(outer->declRange, "the enclosing '{}' is here; add 'nonlocal {}' to use it", name.name, name.name);
    } else if (outer) {
      error(DiagId::sema_shadow_outer_before_assign, name.range, name.name, symbolKindName(outer->kind));
    } else {
      error(DiagId::sema_read_before_assign, name.range, name.name);
      note(sym->declRange, "'{}' is first assigned here", name.name);
    }
  }

  void resolveIndex(IndexExpr& idx, bool isStore) {
    auto* base = idx.base->as<NameExpr>();
    for (auto& i : idx.indices) resolveExpr(*i);
    if (!base) {
      if (!resolveChainedIndex(idx)) error(DiagId::sema_index_base, idx.base->range);
      return;
    }
    resolveName(*base);
    Symbol* sym = base->symbol;
    if (!sym) return;
    if (sym->kind != SymbolKind::TensorParam && sym->kind != SymbolKind::SharedBuffer &&
        sym->kind != SymbolKind::LocalBuffer && sym->kind != SymbolKind::Fragment) {
      error(DiagId::sema_index_non_tensor, base->range, base->name, symbolKindName(sym->kind));
      return;
    }
    if (sym->barrierCount) {  // its words are the hardware's (an mbarrier on NVIDIA)
      error(DiagId::sema_barriers_access, base->range, base->name);
      return;
    }
    // row_max(m[i], acc[i]) / row_sum: an accumulator array's row of tiles.
    const bool tileRow = tileRowArg_ == &idx && sym->kind == SymbolKind::Fragment &&
                         sym->fragmentRole == Symbol::FragmentRole::Acc && idx.indices.size() + 1 == sym->shape.size();
    if (idx.indices.size() != sym->shape.size() && !tileRow) {
      error(DiagId::sema_index_rank, idx.range, base->name, sym->shape.size(), idx.indices.size());
    }
    // A fragment array lives in registers: its tiles are named at compile time.
    if (sym->kind == SymbolKind::Fragment)
      for (auto& i : idx.indices)
        if (const Expr* bad = firstNonStaticIndexPart(*i)) {
          const auto* n = bad->as<NameExpr>();
          std::string why = n && n->symbol ? fmt::format("'{}' is a {}", n->name, symbolKindName(n->symbol->kind))
                                           : std::string("this is not a compile-time value");
          error(DiagId::sema_fragment_index_not_constant, bad->range, base->name, why);
          break;
        }
    if (isStore) sym->written = true;
    if (sym->kind == SymbolKind::TensorParam && !idx.indices.empty() && addsUnrolledLoopVar(*idx.indices.back()))
      sym->accessedInRuns = true;
    // A def addressing the rows of its own contiguous tensor parameter reads
    // the dims after the first.
    FunctionScope* scope = state().scope;
    if (sym->owner == scope && scope->kind != FunctionScope::Kind::Kernel && !sym->strided)
      for (size_t axis = 1; axis < sym->shape.size(); ++axis)
        if (auto* d = sym->shape[axis]->as<NameExpr>(); d && d->symbol) scope->dimsRead.insert(d->symbol);
  }

  // C's `x[i][j]` on a tensor or buffer of two or more dims: one error that
  // spells the subscript out, `x[i, j]`. False when `idx` is not that.
  bool resolveChainedIndex(IndexExpr& idx) {
    std::vector<IndexExpr*> chain{&idx};  // outermost first
    while (auto* inner = chain.back()->base->as<IndexExpr>()) chain.push_back(inner);
    auto* root = chain.back()->base->as<NameExpr>();
    if (chain.size() < 2 || !root) return false;
    for (size_t k = 1; k < chain.size(); ++k)
      for (auto& i : chain[k]->indices) resolveExpr(*i);
    resolveName(*root);
    const Symbol* sym = root->symbol;
    if (!sym) return true;  // reported
    bool indexable = sym->kind == SymbolKind::TensorParam || sym->kind == SymbolKind::SharedBuffer ||
                     sym->kind == SymbolKind::LocalBuffer;
    if (!indexable || sym->shape.size() < 2) return false;
    std::string indices;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      for (auto& i : (*it)->indices) {
        if (!indices.empty()) indices += ", ";
        indices += file_->text().substr(i->range.begin.offset, i->range.end.offset - i->range.begin.offset);
      }
    }
    error(DiagId::sema_chained_index, idx.range, root->name, fmt::format("{}[{}]", root->name, indices));
    return true;
  }

  // `e + k` or `k + e`, k a static_range variable: consecutive elements as
  // the unrolled loop steps, which a compiler may merge into one access.
  static bool addsUnrolledLoopVar(const Expr& index) {
    auto* sum = index.as<BinaryExpr>();
    if (!sum || sum->op != BinaryOp::Add) return false;
    auto unrolled = [](const Expr& e) {
      auto* n = e.as<NameExpr>();
      return n && n->symbol && n->symbol->kind == SymbolKind::LoopVar && n->symbol->unrolledLoopVar;
    };
    return unrolled(*sum->lhs) || unrolled(*sum->rhs);
  }

  // `x is None`: x must be an optional tensor parameter (a kernel's, or a
  // closure's view of it).
  void checkIsNoneOperand(const Expr& operand) {
    const auto* n = operand.as<NameExpr>();
    if (n && n->symbol && n->symbol->kind == SymbolKind::TensorParam && n->symbol->optional) return;
    if (n && !n->symbol) return;  // already reported as unknown
    std::string what = !n ? std::string("this is an expression")
                       : n->symbol->kind == SymbolKind::TensorParam
                           ? fmt::format("'{}' is not declared '| None'", n->name)
                           : fmt::format("'{}' is a {}", n->name, symbolKindName(n->symbol->kind));
    error(DiagId::sema_is_none_operand, operand.range, what);
  }

  void resolveName(NameExpr& n) {
    state().referenced.insert(n.name);
    Symbol* sym = lookup(n.name);
    if (!sym) {
      if (FunctionScope* k = state().scope->kernelRoot; k && k->unboundFnParams.count(n.name)) {
        error(DiagId::sema_fn_param_value, n.range, n.name);
        return;
      }
      if (isTypeName(n.name) || findBuiltin(n.name)) {
        error(DiagId::sema_not_a_value, n.range, n.name);
      } else {
        error(DiagId::sema_unknown_name, n.range, n.name);
        if (std::string_view g = spindleGeometryFor(n.name); !g.empty())
          note(n.range, "CUDA's '{0}.x' is '{1}()' in Spindle; '{0}.y' is '{1}(1)' and '{0}.z' is '{1}(2)'", n.name, g);
        else if (std::string_view instead = spindleCallFor(n.name); !instead.empty())
          note(n.range, "'{}' is CUDA; in Spindle, write {}", n.name, instead);
      }
      return;
    }
    switch (sym->kind) {
      case SymbolKind::Function:
      case SymbolKind::Kernel:
      case SymbolKind::Closure:
      case SymbolKind::TypeParam: error(DiagId::sema_not_a_value, n.range, n.name); return;
      case SymbolKind::Const:
      case SymbolKind::TensorParam:
      case SymbolKind::ScalarParam:
      case SymbolKind::DimSymbol:
      case SymbolKind::Local:
      case SymbolKind::LoopVar:
      case SymbolKind::SharedBuffer:
      case SymbolKind::LocalBuffer:
      case SymbolKind::Fragment: break;
    }
    bool declaredByAssignment = sym->kind == SymbolKind::Local || sym->kind == SymbolKind::SharedBuffer ||
                                sym->kind == SymbolKind::LocalBuffer || sym->kind == SymbolKind::Fragment;
    if (declaredByAssignment && sym->owner == state().scope && !state().assigned.count(sym)) {
      reportReadBeforeAssign(n, sym);
      return;  // left unresolved: no follow-on errors about what it is
    }
    n.symbol = sym;
    noteReference(sym);
  }

  void resolveExpr(Expr& e) {
    switch (e.kind) {
      case ExprKind::IntLit:
      case ExprKind::FloatLit:
      case ExprKind::BoolLit: return;
      case ExprKind::Name: resolveName(*e.as<NameExpr>()); return;
      case ExprKind::Unary: {
        auto& u = *e.as<UnaryExpr>();
        resolveExpr(*u.operand);
        if (u.op == UnaryOp::IsNone) checkIsNoneOperand(*u.operand);
        return;
      }
      case ExprKind::Binary:
        resolveExpr(*e.as<BinaryExpr>()->lhs);
        resolveExpr(*e.as<BinaryExpr>()->rhs);
        return;
      case ExprKind::Ternary: {
        auto& t = *e.as<TernaryExpr>();
        resolveExpr(*t.cond);
        resolveExpr(*t.thenValue);
        resolveExpr(*t.elseValue);
        return;
      }
      case ExprKind::Call: resolveCall(*e.as<CallExpr>()); return;
      case ExprKind::Index: resolveIndex(*e.as<IndexExpr>(), /*isStore=*/false); return;
      case ExprKind::List: error(DiagId::sema_list_position, e.range); return;
      case ExprKind::Tuple:
        // Where a tuple may stand (a return's value, an unpacking) its
        // elements are resolved one by one; anywhere else it is an error.
        error(DiagId::sema_tuple_position, e.range);
        for (auto& x : e.as<TupleExpr>()->elements) resolveExpr(*x);
        return;
      case ExprKind::TypeTest: resolveTypeTest(*e.as<TypeTestExpr>()); return;
    }
  }

  // `T == bf16`, `T in (f16, bf16)`: T must be a type parameter of the
  // kernel (seen from its closures too), each listed name a scalar type.
  void resolveTypeTest(TypeTestExpr& t) {
    state().referenced.insert(t.param);
    Symbol* sym = lookup(t.param);
    if (!sym || sym->kind != SymbolKind::TypeParam) {
      std::string what = !sym ? fmt::format("'{}' is not declared", t.param)
                              : fmt::format("'{}' is a {}", t.param, symbolKindName(sym->kind));
      error(DiagId::sema_type_test_operand, t.paramRange, what);
    } else {
      t.paramSymbol = sym;
    }
    t.resolved.clear();
    for (const auto& type : t.types) {
      if (auto scalar = scalarFromName(type.name)) {
        t.resolved.push_back(*scalar);
        continue;
      }
      const Symbol* other = lookup(type.name);
      std::string what = other && other->kind == SymbolKind::TypeParam
                             ? fmt::format("'{}' is a type parameter; compare each with type names", type.name)
                             : fmt::format("'{}' is not a scalar type", type.name);
      error(DiagId::sema_type_test_operand, type.range, what);
    }
  }

  void resolveCall(CallExpr& c) {
    state().referenced.insert(c.callee);
    Symbol* sym = lookup(c.callee);
    if (sym) {
      if (sym->kind == SymbolKind::Closure || sym->kind == SymbolKind::Function) {
        c.symbol = sym;
        checkUserCallShape(c, sym->scope);
        for (auto& a : c.args) resolveExpr(*a);
        auto& callees = state().scope->callees;
        if (std::find(callees.begin(), callees.end(), sym->scope) == callees.end()) callees.push_back(sym->scope);
        return;
      }
      if (sym->kind == SymbolKind::TypeParam) {  // T(v)
        resolveCast(c);
        return;
      }
      if (sym->kind == SymbolKind::Kernel) {
        error(DiagId::sema_call_kernel, c.calleeRange, c.callee);
        return;
      }
      error(DiagId::sema_not_callable, c.calleeRange, c.callee, symbolKindName(sym->kind));
      return;
    }
    if (isTypeName(c.callee)) {
      resolveCast(c);
      return;
    }
    // A call to a fn parameter with no binding yet: the module is checked
    // without typing this kernel; a specialization binds it (--const).
    if (FunctionScope* k = state().scope->kernelRoot; k && k->unboundFnParams.count(c.callee)) {
      k->typingDeferred = true;
      for (auto& a : c.args) resolveExpr(*a);
      return;
    }
    const BuiltinInfo* b = findBuiltin(c.callee);
    if (!b && c.callee == "sizeof") {
      // sizeof(TYPE): a scalar type or the kernel's type parameter, in bytes.
      const auto* arg = c.args.size() == 1 && c.kwargs.empty() ? c.args[0]->as<NameExpr>() : nullptr;
      FunctionScope* root = state().scope->kernelRoot;
      if (arg && (scalarFromName(arg->name) || (root && root->typeParams.count(arg->name)))) return;
      error(DiagId::sema_sizeof, c.calleeRange);  // a C type, a tensor, a value: nothing to resolve
      return;
    }
    if (!b) {
      error(DiagId::sema_unknown_function, c.calleeRange, c.callee, unknownFunctionHint(c.callee));
      for (auto& a : c.args) resolveExpr(*a);
      return;
    }
    resolveBuiltinCall(c, *b);
  }

  // What an unknown function's message adds: the Spindle form of a C or
  // CUDA name (`float(x)`, `expf`, `atomicAdd`), else the builtin, def or
  // visible closure it likely misspells.
  std::string unknownFunctionHint(const std::string& name) {
    if (std::string_view t = spindleTypeFor(name); !t.empty())
      return fmt::format("; a cast is written with a Spindle type: '{}(...)'", t);
    if (std::string_view instead = spindleCallFor(name); !instead.empty())
      return fmt::format("; in Spindle, write {}", instead);
    if (std::string_view g = spindleGeometryFor(name); !g.empty()) return fmt::format("; in Spindle, write '{}()'", g);
    std::vector<std::string_view> names;
    for (const BuiltinInfo& b : allBuiltins())
      if (b.category != BuiltinCategory::Scratch && b.category != BuiltinCategory::Range &&
          b.category != BuiltinCategory::LaunchQuery)
        names.push_back(b.name);
    for (auto* f : sema_.functions) names.push_back(f->name);
    for (FunctionScope* s = state().scope; s; s = s->parent)
      for (auto* cl : s->closures) names.push_back(cl->name);
    if (std::string_view close = closestSpelling(name, names); !close.empty())
      return fmt::format("; did you mean '{}'?", close);
    return "";
  }

  void checkUserCallShape(CallExpr& c, FunctionScope* callee) {
    if (!c.kwargs.empty()) error(DiagId::sema_kwargs_not_allowed, c.kwargs[0].nameRange, c.callee);
    size_t expected = callee->function ? callee->function->params.size() : 0;
    if (c.args.size() != expected) error(DiagId::sema_call_arity, c.range, c.callee, expected, c.args.size());
  }

  void resolveCast(CallExpr& c) {
    if (c.args.size() != 1 || !c.kwargs.empty()) {
      error(DiagId::sema_call_arity, c.range, c.callee, 1, c.args.size());
      return;
    }
    resolveExpr(*c.args[0]);
  }

  void resolveBuiltinCall(CallExpr& c, const BuiltinInfo& b) {
    int n = static_cast<int>(c.args.size());
    if (b.category == BuiltinCategory::Geometry) {
      // thread_id(), thread_id(1), thread_id(a=1)
      for (auto& kw : c.kwargs) {
        if (kw.name != "a") error(DiagId::sema_bad_kwarg, kw.nameRange, kw.name, c.callee);
        ++n;
      }
    } else if (!c.kwargs.empty()) {
      error(DiagId::sema_kwargs_not_allowed, c.kwargs[0].nameRange, c.callee);
      return;
    }
    if (n < b.minArgs || n > b.maxArgs) {
      if (b.minArgs == b.maxArgs) error(DiagId::sema_call_arity, c.range, c.callee, b.minArgs, n);
      else error(DiagId::sema_call_arity_range, c.range, c.callee, b.minArgs, b.maxArgs, n);
      return;
    }
    switch (b.category) {
      case BuiltinCategory::Scratch: error(DiagId::sema_scratch_position, c.range, c.callee); return;
      case BuiltinCategory::MatrixDecl:
        error(DiagId::sema_fragment_position, c.range, c.callee,
              c.callee == "mma_zero" ? "acc = mma_zero(f32, [2, 2])" : c.callee + "(f16, [2])");
        return;
      case BuiltinCategory::Matrix: {
        if (c.callee == "mma_store") {
          // mma_store(C, [b,] r, c, acc[i, j]): C is written, every dim of
          // it bounds the tile (as a load's source), and it is written in
          // runs: its alignment and row granularity are specialized on
          // (9.4), which folds the choice of the 16-byte store.
          for (auto& a : c.args) {
            if (auto* idx = a->as<IndexExpr>()) resolveIndex(*idx, /*isStore=*/false);
            else resolveExpr(*a);
          }
          if (auto* dst = c.args[0]->as<NameExpr>(); dst && dst->symbol) {
            dst->symbol->matrixSource = true;
            if (dst->symbol->kind == SymbolKind::TensorParam) {
              dst->symbol->written = true;
              dst->symbol->accessedInRuns = true;
            }
          }
          return;
        }
        // The tiles (fragment array elements) are named, then the rest.
        const bool rowFold = c.callee == "row_max" || c.callee == "row_sum";
        for (auto& a : c.args) {
          auto* idx = a->as<IndexExpr>();
          tileRowArg_ = rowFold && &a == &c.args.back() ? idx : nullptr;
          if (idx) resolveIndex(*idx, /*isStore=*/&a == &c.args[0] && c.callee != "mma");
          else resolveExpr(*a);
          tileRowArg_ = nullptr;
        }
        if (c.args.size() > 1)
          if (auto* src = c.args[1]->as<NameExpr>(); src && src->symbol) src->symbol->matrixSource = true;
        if ((c.callee == "dot" || c.callee == "dot_bt") && (c.args.size() == 8 || c.args.size() == 6)) {
          if (auto* acc = c.args[0]->as<NameExpr>(); acc && acc->symbol && acc->symbol->kind == SymbolKind::Fragment)
            acc->symbol->dotAccumulator = true;
          if (auto* src = c.args[c.args.size() == 8 ? 4 : 2]->as<NameExpr>(); src && src->symbol)
            src->symbol->matrixSource = true;
          if (FunctionScope* root = state().scope->kernelRoot) root->usesDot = true;
          state().scope->usesDot = true;
        }
        return;
      }
      case BuiltinCategory::AsyncCopy: {
        for (auto& a : c.args) resolveExpr(*a);
        const bool tileCopy = c.callee == "copy_tile";
        if (!tileCopy && c.args.size() != 7 && c.args.size() != 8) return;  // not a copy: arrive, wait, ...
        // copy_async(dst, r, c, src, sr, sc, n) and copy_tile(dst, r, c,
        // src, ...): both buffers' extents and strides address the copy (as
        // a tile load's source).
        for (size_t i : {size_t(0), size_t(3)})
          if (auto* buf = c.args[i]->as<NameExpr>(); buf && buf->symbol) buf->symbol->matrixSource = true;
        if (tileCopy) {
          // Its tensor maps are the kernel's parameters.
          if (state().scope->kind != FunctionScope::Kind::Kernel)
            error(DiagId::sema_copy_tile_position, c.range, state().scope->name);
          return;
        }
        // copy_async's source is read in runs: its alignment and its row
        // dims' granularity are specialized on (9.4), and where the runtime
        // finds the base 16-byte aligned and the rows multiples of 16
        // elements, every run's cp.async test folds away.
        if (auto* src = c.args[3]->as<NameExpr>(); src && src->symbol && src->symbol->kind == SymbolKind::TensorParam)
          src->symbol->accessedInRuns = true;
        return;
      }
      case BuiltinCategory::Range: error(DiagId::sema_range_position, c.range, c.callee); return;
      case BuiltinCategory::LaunchQuery: error(DiagId::sema_launch_query_position, c.range, c.callee); return;
      case BuiltinCategory::Geometry: {
        const Expr* axis = !c.args.empty() ? c.args[0].get() : (!c.kwargs.empty() ? c.kwargs[0].value.get() : nullptr);
        if (axis) {
          auto v = evaluateConst(*axis, [&](const NameExpr& nm) { return globalConst(nm.name); });
          if (!v || v->isFloat || v->i < 0 || v->i > 2) error(DiagId::sema_bad_axis, axis->range, c.callee);
        }
        return;
      }
      case BuiltinCategory::DimQuery: resolveDimQuery(c); return;
      case BuiltinCategory::Atomic: {
        auto* target = c.args[0]->as<IndexExpr>();
        if (!target) {
          error(DiagId::sema_atomic_target, c.args[0]->range, c.callee);
          resolveExpr(*c.args[0]);
        } else {
          resolveIndex(*target, /*isStore=*/true);
          if (target->base->as<NameExpr>() && target->base->as<NameExpr>()->symbol &&
              target->base->as<NameExpr>()->symbol->kind == SymbolKind::LocalBuffer)
            error(DiagId::sema_atomic_target, c.args[0]->range, c.callee);
        }
        for (size_t i = 1; i < c.args.size(); ++i) resolveExpr(*c.args[i]);
        return;
      }
      case BuiltinCategory::CachedLoad:
      case BuiltinCategory::CachedStore: {
        // Global memory only: the hints are global loads and stores (a
        // def's tensor parameter may be given a shared buffer).
        auto* target = c.args[0]->as<IndexExpr>();
        const bool store = b.category == BuiltinCategory::CachedStore;
        if (target) resolveIndex(*target, store);
        else resolveExpr(*c.args[0]);
        const auto* base = target ? target->base->as<NameExpr>() : nullptr;
        const Symbol* sym = base ? base->symbol : nullptr;
        if (!target || (sym && (sym->kind != SymbolKind::TensorParam || !sym->owner ||
                                sym->owner->kind != FunctionScope::Kind::Kernel))) {
          std::string why;
          if (sym && sym->kind == SymbolKind::TensorParam)
            why = "; '" + sym->name + "' is a def's parameter, which may be given shared memory";
          else if (sym) why = "; '" + sym->name + "' is a " + symbolKindName(sym->kind);
          error(DiagId::sema_cache_hint_target, c.args[0]->range, c.callee, why);
        }
        for (size_t i = 1; i < c.args.size(); ++i) resolveExpr(*c.args[i]);
        return;
      }
      case BuiltinCategory::TypeLimit:
      case BuiltinCategory::TypeConversion: {
        // The type, named first, is not a value: a scalar type or a type
        // parameter of the kernel (sizeof's rule).
        const auto* type = c.args[0]->as<NameExpr>();
        FunctionScope* root = state().scope->kernelRoot;
        if (!type || !(scalarFromName(type->name) || (root && root->typeParams.count(type->name))))
          error(DiagId::sema_type_argument, c.args[0]->range, c.callee,
                b.category == BuiltinCategory::TypeLimit ? c.callee + "(f32)" : c.callee + "(i8, v)");
        for (size_t i = 1; i < c.args.size(); ++i) resolveExpr(*c.args[i]);
        return;
      }
      case BuiltinCategory::BlockReduce: state().scope->usesBlockCollective = true; break;
      case BuiltinCategory::BlockArgReduce:
        state().scope->usesBlockCollective = true;
        state().scope->usesBlockArgReduce = true;
        break;
      case BuiltinCategory::LaneInfo:
      case BuiltinCategory::Barrier:
      case BuiltinCategory::WarpBarrier:
      case BuiltinCategory::WarpVote:
      case BuiltinCategory::UniformHint:
      case BuiltinCategory::DivisorHint:
      case BuiltinCategory::FloatMath:
      case BuiltinCategory::FloatPredicate:
      case BuiltinCategory::NumericMath:
      case BuiltinCategory::IntMath:
      case BuiltinCategory::BitCount:
      case BuiltinCategory::WarpReduce:
      case BuiltinCategory::WarpArgReduce:
      case BuiltinCategory::Shuffle: break;
    }
    for (auto& a : c.args) resolveExpr(*a);
  }

  std::optional<ConstValue> globalConst(const std::string& name) {
    auto g = sema_.globals.find(name);
    if (g != sema_.globals.end() && g->second->kind == SymbolKind::Const && !g->second->perSpecialization)
      return g->second->value;
    return std::nullopt;
  }

  // dim(x, k): x a tensor, k a constant axis. References x's dim symbol, not x.
  void resolveDimQuery(CallExpr& c) {
    auto* name = c.args[0]->as<NameExpr>();
    Symbol* sym = name ? lookup(name->name) : nullptr;
    if (!sym || sym->kind != SymbolKind::TensorParam) {
      error(DiagId::sema_dim_not_tensor, c.args[0]->range);
      return;
    }
    name->symbol = sym;
    auto axis = evaluateConst(*c.args[1], [&](const NameExpr& nm) { return globalConst(nm.name); });
    if (!axis || axis->isFloat || axis->i < 0 || axis->i >= static_cast<int64_t>(sym->shape.size())) {
      error(DiagId::sema_dim_axis, c.args[1]->range, name->name, sym->shape.size());
      return;
    }
    // Every dim symbol the axis names: `dim(x, 0)` with x: T[N + 1] reads N
    // (a closure captures it; found by the cpu fuzzer, seed 300351).
    noteDimReferences(*sym->shape[static_cast<size_t>(axis->i)]);
  }

  void noteDimReferences(const Expr& d) {
    if (auto* dn = d.as<NameExpr>()) {
      if (dn->symbol && dn->symbol->kind == SymbolKind::DimSymbol) noteReference(dn->symbol);
      return;
    }
    forEachChild(d, [&](const Expr& child) { noteDimReferences(child); });
  }

  // ------------------------------------------------------------ recursion

  // Recursion (direct or mutual) is reported once per cycle, at the def or
  // closure whose call closes it; kernels are never part of a cycle.
  void checkRecursion() {
    std::map<FunctionScope*, int> color;  // 0 new, 1 on the DFS stack, 2 done
    std::function<void(FunctionScope*)> visit = [&](FunctionScope* f) {
      color[f] = 1;
      for (auto* callee : f->callees) {
        if (color[callee] == 1) {
          error(DiagId::sema_recursion, f->function ? f->function->nameRange : SourceRange{}, f->name, callee->name);
        } else if (color[callee] == 0) {
          visit(callee);
        }
      }
      for (auto* cl : f->closures)
        if (color[cl] == 0) visit(cl);
      color[f] = 2;
    };
    for (auto* f : sema_.functions)
      if (color[f] == 0) visit(f);
    for (auto* k : sema_.kernels)
      if (color[k] == 0) visit(k);
  }

  SemaModule& sema_;
  std::map<std::string, Symbol*> predefined_;  // pi and e, made on first use (globalOrPredefined)
  DiagnosticEngine& diags_;
  std::shared_ptr<const SourceFile> file_;
  const ConstValues& overrides_;  // a specialization's const values (CompiledModule::generate)
  // While a kernel's parameters resolve: dim names that are a whole dim
  // somewhere, and where each name first appears inside a dim expression.
  std::set<std::string> standingAloneDims_;
  std::map<std::string, SourceRange> firstInExpression_;
};

}  // namespace

void runResolver(SemaModule& sema, DiagnosticEngine& diags, const ConstValues& overrides) {
  Resolver(sema, diags, overrides).run();
}

}  // namespace spindle
