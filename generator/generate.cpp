// The driver: one specialization of one kernel, top to bottom.
//
//   parse and resolve (load_module.h: once per module, and again for each
//   specialization's private copy, with its const values; CompiledModule)
//   -> check the specialization against the kernel (static dims, dtypes, layout sets)
//   -> prune branches dead in this specialization (passes/prune_branches)
//   -> type the kernel under this binding (sema/sema_types.cpp)
//   -> evaluate @block (launch_geometry.cpp)
//   -> passes: capture analysis (what each closure's outlined function takes),
//      specialization checks (static_range bounds and local sizes known),
//      local declarations and comment placement, per function
//   -> print (printer/: only prints what the stages above decided)
#include "generate.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include "frontend/ast_walk.h"
#include "launch_geometry.h"
#include "passes/capture_analysis.h"
#include "passes/exact_grid.h"
#include "passes/prune_branches.h"
#include "passes/specialization_checks.h"
#include "printer/kernel_source.h"
#include "sema/builtins.h"
#include "sema/const_eval.h"
#include "sema/tensor_arguments.h"

namespace spindle {

namespace {

// FNV-1a, 64-bit: the key only needs to tell module texts apart, not to
// resist an adversary (the runtime hashes the full source for its disk key).
uint64_t fnv1a(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string listed(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
  return text.empty() ? "none" : text;
}

// --unit-stride names a strided tensor parameter that is passed, and not
// one already addressed by its dims (one spelling per binary).
void checkUnitStride(const FunctionScope& k, const Specialization& req, const std::string& name) {
  const Symbol* tensor = nullptr;
  std::vector<std::string> strided;
  for (const Symbol* p : k.params) {
    if (p->kind != SymbolKind::TensorParam || !p->strided) continue;
    strided.push_back(p->name);
    if (p->name == name) tensor = p;
  }
  if (!tensor)
    throw GeneratorError(
        fmt::format("kernel '{}' has no strided tensor parameter '{}' to address with unit inner stride (its strided "
                    "tensors: {})",
                    k.name, name, listed(strided)));
  if (req.contiguousTensors.count(name))
    throw GeneratorError(
        fmt::format("kernel '{}': '{}' is --contiguous, which already addresses it by its dims; drop --unit-stride {}",
                    k.name, name, name));
  if (req.absentTensors.count(name))
    throw GeneratorError(
        fmt::format("kernel '{}': '{}' is --absent, so it has no strides; drop --unit-stride {}", k.name, name, name));
}

// --divisible names a value that places rows of a tensor indexed in runs in
// this specialization (divisibilityCandidates); the granularity was checked
// when the flag was read, but a Specialization can be built by hand.
void checkDivisible(const FunctionScope& k, const Specialization& req, const std::vector<std::string>& candidates,
                    const std::string& name, int granularity) {
  if (!isDivisibilityGranularity(granularity))
    throw GeneratorError(fmt::format("kernel '{}': --divisible {}={}: the granularity must be 2, 4, 8 or 16", k.name,
                                     name, granularity));
  if (req.staticDims.count(name))
    throw GeneratorError(
        fmt::format("kernel '{}': dim {} is static, so the compiler already knows its value; drop "
                    "--divisible {}",
                    k.name, name, name));
  if (std::find(candidates.begin(), candidates.end(), name) != candidates.end()) return;
  // A row stride is one only in the unit-stride form.
  const size_t dot = name.find(".stride");
  const std::string hint =
      dot != std::string::npos && !req.unitStrideTensors.count(name.substr(0, dot))
          ? fmt::format("; a row stride places rows with --unit-stride {} only", name.substr(0, dot))
          : "";
  throw GeneratorError(
      fmt::format("kernel '{}': '{}' is not a value that places the rows of a tensor indexed in runs here, so its "
                  "divisibility cannot matter (such values: {}{})",
                  k.name, name, listed(candidates), hint));
}

// --exact-grid names a dynamic dim that a @grid axis covers in tiles,
// `cdiv(D, T)` (exactGridCandidates).
void checkExactGrid(const FunctionScope& k, const Specialization& req, const std::string& name) {
  if (req.staticDims.count(name))
    throw GeneratorError(fmt::format(
        "kernel '{}': dim {} is static, so the compiler already knows whether the grid covers it exactly; drop "
        "--exact-grid {}",
        k.name, name, name));
  std::vector<std::string> names;
  for (const ExactGridCandidate& c : exactGridCandidates(k, {})) {
    if (c.dim == name) return;
    if (!req.staticDims.count(c.dim)) names.push_back(fmt::format("{} (tiles of {})", c.dim, c.tile));
  }
  throw GeneratorError(
      fmt::format("kernel '{}': no @grid axis is cdiv({}, T) with T a constant, so --exact-grid {} states nothing "
                  "(such dims: {})",
                  k.name, name, name, listed(names)));
}

void validateSpecialization(const SemaModule& sema, const FunctionScope& k, const Specialization& req) {
  std::set<std::string> dims;
  for (auto* d : k.dimSymbols) dims.insert(d->name);
  for (const auto& [name, value] : req.staticDims) {
    if (!dims.count(name)) {
      std::string known;
      for (auto* d : k.dimSymbols) known += (known.empty() ? "" : ", ") + d->name;
      throw GeneratorError(fmt::format("kernel '{}' has no dim symbol '{}' to specialize (its dims: {})", k.name, name,
                                       known.empty() ? "none" : known));
    }
    if (value < 1 || value > (int64_t(1) << 62))
      throw GeneratorError(
          fmt::format("kernel '{}': static dim {} = {} must be at least 1 and at most 2^62", k.name, name, value));
  }
  for (auto* d : k.dimSymbols)
    if (d->staticDeclared && !req.staticDims.count(d->name))
      throwSpecializationError(sema, DiagId::spec_static_missing, d->declRange, k.name, d->name, d->name);
  for (const auto& [name, type] : req.typeArgs) {
    if (!k.typeParams.count(name))
      throw GeneratorError(fmt::format("kernel '{}' has no type parameter '{}'", k.name, name));
    if (type == ScalarType::Invalid || type == ScalarType::Bool)
      throw GeneratorError(fmt::format("kernel '{}': type parameter {} cannot be {}", k.name, name, scalarName(type)));
  }
  for (const auto& name : req.contiguousTensors) {
    bool strided = false;
    for (const Symbol* p : k.params) strided |= p->name == name && p->kind == SymbolKind::TensorParam && p->strided;
    if (!strided)
      throw GeneratorError(
          fmt::format("kernel '{}' has no strided tensor parameter '{}' to treat as contiguous", k.name, name));
  }
  for (const auto& name : req.alignedTensors) {
    const Symbol* tensor = nullptr;
    for (const Symbol* p : k.params)
      if (p->name == name && p->kind == SymbolKind::TensorParam) tensor = p;
    if (!tensor)
      throw GeneratorError(
          fmt::format("kernel '{}' has no tensor parameter '{}' to treat as 16-byte aligned", k.name, name));
    // An alignment assumption costs something on NVIDIA (nvcc stops using the
    // read-only load path for the pointer), so only where it can pay off.
    if (!tensor->accessedInRuns)
      throw GeneratorError(
          fmt::format("kernel '{}': tensor '{}' is never indexed in runs of consecutive elements "
                      "(a last index `e + k`, k a static_range variable), so its alignment "
                      "cannot matter; drop --aligned {}",
                      k.name, name, name));
  }
  for (const auto& name : req.unitStrideTensors) checkUnitStride(k, req, name);
  const std::vector<std::string> candidates = divisibilityCandidates(k, req);
  for (const auto& [name, granularity] : req.divisible) checkDivisible(k, req, candidates, name, granularity);
  for (const auto& name : req.exactGridDims) checkExactGrid(k, req, name);
  for (const auto& name : req.absentTensors) {
    bool optional = false;
    for (const Symbol* p : k.params) optional |= p->name == name && p->kind == SymbolKind::TensorParam && p->optional;
    if (!optional) {
      std::string names;
      for (const Symbol* p : k.params)
        if (p->optional) names += (names.empty() ? "" : ", ") + p->name;
      throw GeneratorError(
          fmt::format("kernel '{}' has no optional tensor parameter '{}' to leave absent (its "
                      "optional tensors, declared 'T[...] | None': {})",
                      k.name, name, names.empty() ? "none" : names));
    }
  }
  for (const auto& [name, sym] : k.typeParams)
    if (!req.typeArgs.count(name))
      throwSpecializationError(sema, DiagId::spec_generic_unbound, sym->declRange, k.name, name, name);
  for (const TypeParam& tp : k.kernel->typeParams)
    if (!tp.isTypeParam() && !req.consts.count(tp.name))
      throwSpecializationError(sema, DiagId::spec_param_unbound, tp.range, k.name, tp.name, tp.kindName, tp.name,
                               tp.kindName == "fn" ? "DEF" : "VALUE");
}

// Defs and closures the kernel reaches, callees before callers, so every
// function is defined before its first use and no prototypes are needed.
std::vector<FunctionScope*> functionsInDefinitionOrder(FunctionScope& kernel) {
  std::vector<FunctionScope*> order;
  std::set<FunctionScope*> seen;
  std::function<void(FunctionScope*)> visit = [&](FunctionScope* f) {
    if (!seen.insert(f).second) return;
    for (auto* c : f->closures) visit(c);
    for (auto* c : f->callees) visit(c);
    order.push_back(f);
  };
  visit(&kernel);
  order.pop_back();  // the kernel itself is printed last, separately
  return order;
}

// A strided parameter passed contiguous is analyzed and printed as a
// contiguous one in this specialization (its strides leave the ABI); one
// passed with unit inner stride loses its last stride only.
void viewLayouts(FunctionScope& kernel, const Specialization& spec) {
  for (Symbol* p : kernel.params) {
    if (!p->strided) continue;
    if (spec.contiguousTensors.count(p->name)) p->strided = false;
    else p->unitInnerStride = spec.unitStrideTensors.count(p->name) > 0;
  }
}

// The defs and closures each function calls, from its body as pruned: a
// call that was only in a dead branch no longer puts its callee (a fn
// parameter's def not taken, say) in this file.
void recomputeCallees(SemaModule& sema, const std::set<const FunctionDecl*>& removed) {
  for (const auto& scope : sema.scopes) {
    if (scope->function && removed.count(scope->function)) continue;  // its body went with a dead branch
    Block* body = scope->function ? &scope->function->body : scope->kernel ? &scope->kernel->body : nullptr;
    if (!body) continue;
    std::vector<FunctionScope*> callees;
    std::function<void(Expr&)> onExpr = [&](Expr& e) {
      const auto* c = e.as<CallExpr>();
      if (c && c->symbol && c->symbol->scope &&
          (c->symbol->kind == SymbolKind::Function || c->symbol->kind == SymbolKind::Closure) &&
          std::find(callees.begin(), callees.end(), c->symbol->scope) == callees.end())
        callees.push_back(c->symbol->scope);
      forEachChild(e, onExpr);
    };
    std::function<void(Block&)> onBlock = [&](Block& b) {
      for (auto& st : b) forEachChild(*st, onExpr, onBlock);
    };
    onBlock(*body);
    scope->callees = std::move(callees);
  }
}

// The resolver noted what each closure names from enclosing functions
// before pruning; a name used only in removed code (a dead branch, an
// assert of an unchecked build) is no capture. Keeps the survivors in the
// resolver's order. A `dim(x, k)` call keeps every dim of x's shape (the
// axis is not re-evaluated here).
void recomputeOuterRefs(SemaModule& sema, const std::set<const FunctionDecl*>& removed) {
  for (const auto& scope : sema.scopes) {
    if (scope->kind != FunctionScope::Kind::Closure || !scope->function || removed.count(scope->function)) continue;
    std::set<const Symbol*> named;
    // dim(x, k) names the dims of x's axes, those of a dim expression
    // (`N + 1`) too.
    std::function<void(const Expr&)> axisNames = [&](const Expr& axis) {
      if (const auto* d = axis.as<NameExpr>(); d && d->symbol) named.insert(d->symbol);
      forEachChild(axis, axisNames);
    };
    std::function<void(Expr&)> onExpr = [&](Expr& e) {
      if (const auto* n = e.as<NameExpr>(); n && n->symbol) named.insert(n->symbol);
      if (const auto* c = e.as<CallExpr>(); c && !c->symbol && c->callee == "dim" && !c->args.empty())
        if (const auto* t = c->args[0]->as<NameExpr>(); t && t->symbol)
          for (const Expr* axis : t->symbol->shape) axisNames(*axis);
      forEachChild(e, onExpr);
    };
    std::function<void(Block&)> onBlock = [&](Block& b) {
      for (auto& st : b) forEachChild(*st, onExpr, onBlock);
    };
    onBlock(scope->function->body);
    auto& refs = scope->outerRefs;
    refs.erase(std::remove_if(refs.begin(), refs.end(), [&](Symbol* s) { return !named.count(s); }), refs.end());
  }
}

// Which tensors and buffers are stored into, from the code that is left
// (the resolver saw dead branches and unchecked asserts too): a tensor
// written only there is a const pointer in this specialization. Stores are
// element targets of assignments (augmented and unpacking too), the
// first argument of atomics and mma_store's tensor; then the facts flow
// from callees' tensor parameters to the tensors passed to them.
void recomputeWrites(SemaModule& sema, const std::set<const FunctionDecl*>& removed) {
  for (const auto& scope : sema.scopes)
    for (Symbol* p : scope->params) p->written = false;
  auto markStore = [](const Expr& target) {
    if (const auto* idx = target.as<IndexExpr>())
      if (const auto* base = idx->base->as<NameExpr>(); base && base->symbol) base->symbol->written = true;
  };
  std::function<void(const Expr&)> onExpr = [&](const Expr& e) {
    if (const auto* c = e.as<CallExpr>(); c && !c->symbol && !c->args.empty()) {
      if (const BuiltinInfo* b = findBuiltin(c->callee);
          b && (b->category == BuiltinCategory::Atomic || b->category == BuiltinCategory::CachedStore)) {
        markStore(*c->args[0]);
      } else if (b && b->id == BuiltinId::MmaStore) {  // mma_store(C, ..): C itself, not an element
        if (const auto* dst = c->args[0]->as<NameExpr>(); dst && dst->symbol) dst->symbol->written = true;
      }
    }
    forEachChild(e, onExpr);
  };
  std::function<void(const Block&)> onBlock = [&](const Block& b) {
    for (const auto& st : b) {
      const Expr* target = nullptr;
      if (const auto* a = st->as<AssignStmt>()) target = a->target.get();
      if (const auto* a = st->as<AugAssignStmt>()) target = a->target.get();
      if (target) {
        markStore(*target);
        if (const auto* t = target->as<TupleExpr>())
          for (const auto& x : t->elements) markStore(*x);
      }
      forEachChild(*st, onExpr, onBlock);
    }
  };
  for (const auto& scope : sema.scopes) {
    if (scope->function && removed.count(scope->function)) continue;
    if (scope->function) onBlock(scope->function->body);
    else if (scope->kernel) onBlock(scope->kernel->body);
  }
  propagateTensorArgumentFacts(sema, &removed);
}

// A const's value into its symbol, typed as declared (or, unannotated, as
// its value's kind and size).
void setConstValue(const SemaModule& sema, Symbol& c, const ConstValue& v) {
  if (!c.weakType && !isFloat(c.declaredType) && v.isFloat)
    throwSpecializationError(sema, DiagId::sema_const_float_to_int, c.init->range, c.name, scalarName(c.declaredType));
  c.value = v;
  if (isFloat(c.declaredType)) c.value = ConstValue::ofFloat(v.asDouble());
  if (c.weakType) {
    c.type = v.isFloat ? ScalarType::F32 : ScalarType::I32;
    if (!v.isFloat && (v.i > INT32_MAX || v.i < INT32_MIN)) c.type = ScalarType::I64;
  }
}

// Module consts computed from dims (`const VPT = H // 256`), in order, with
// this kernel's static dims. One that cannot be computed here (a dim it
// names is dynamic, or not this kernel's) keeps the reason: using it is
// spec-const-needs-dim (checkNoUnavailableConsts), leaving it unused is fine.
void evaluateModuleConstsOfDims(const SemaModule& sema, const FunctionScope& kernel, const Specialization& spec) {
  for (Symbol* c : sema.consts) {
    if (!c->perSpecialization) continue;
    std::string reason;
    auto lookup = [&](const NameExpr& n) -> std::optional<ConstValue> {
      if (n.symbol)
        return n.symbol->kind == SymbolKind::Const && !n.symbol->perSpecialization
                   ? std::optional<ConstValue>(n.symbol->value)
                   : std::nullopt;
      if (auto it = spec.staticDims.find(n.name); it != spec.staticDims.end()) return ConstValue::ofInt(it->second);
      bool isDim = false;
      for (const Symbol* d : kernel.dimSymbols) isDim |= d->name == n.name;
      if (reason.empty())
        reason = isDim
                     ? fmt::format("dim '{0}' is dynamic; make it static (@static({0}) or --static {0}=VALUE)", n.name)
                     : fmt::format("'{}' is not a dim of kernel '{}'", n.name, kernel.name);
      return std::nullopt;
    };
    ConstEvalFailure failure;
    auto v = evaluateConst(*c->init, lookup, &failure);
    if (!v) {
      c->unavailable = reason.empty() ? failure.reason : reason;
      continue;
    }
    setConstValue(sema, *c, *v);
    c->perSpecialization = false;
  }
}

// The kernel body's consts, in order, with this specialization's static
// dims and type bindings (sizeof(T)); later ones see earlier ones. Their
// statements leave the body: a weak const is written as its literal at each
// use, an annotated one is a constexpr of the file (kernel_source.cpp).
// One that uses warp_size() (directly or through another) is computed for
// 32- and 64-wide warps; where the two differ, it keeps both
// (Symbol::wave64Value) and the file chooses through __SPN_WARP_SIZE.
void evaluateBodyConsts(const SemaModule& sema, FunctionScope& kernel, const Specialization& spec) {
  if (kernel.bodyConsts.empty()) return;
  EvalFacts facts;
  facts.typeArgs = &spec.typeArgs;
  auto lookup = constsAndDims(spec.staticDims, &facts);
  for (Symbol* c : kernel.bodyConsts) {
    ConstEvalFailure failure;
    auto v = evaluateConst(*c->init, lookup, &failure, facts);
    std::optional<ConstValue> v64;
    if (!v) {
      PerWarpWidth widths = evaluateForWarpWidths(*c->init, spec.staticDims, &spec.typeArgs);
      v = widths.wave32, v64 = widths.wave64;
      // Failing for one width only: say which, and why there.
      if (v && !v64) failure = widths.failure64, failure.reason += " (with 64-wide warps)";
      if (!v && v64) failure = widths.failure32, failure.reason += " (with 32-wide warps)";
      if (!v || !v64)
        throwSpecializationError(sema, DiagId::spec_body_const, (failure.where ? failure.where : c->init)->range,
                                 c->name, failure.reason);
    }
    setConstValue(sema, *c, *v);
    if (v64) {
      Symbol wide = *c;
      setConstValue(sema, wide, *v64);
      if (wide.value.isFloat != c->value.isFloat || wide.value.i != c->value.i || wide.value.f != c->value.f) {
        c->wave64Value = wide.value;
        if (scalarBits(wide.type) > scalarBits(c->type)) c->type = wide.type;  // a weak const holds both
      }
    }
    c->perSpecialization = false;
  }
  Block& body = kernel.kernel->body;
  body.erase(std::remove_if(body.begin(), body.end(),
                            [](const StmtPtr& s) {
                              const auto* a = s->as<AssignStmt>();
                              return a && a->isConst;
                            }),
             body.end());
}

// Closures defined in a pruned branch are gone: no function lists them as
// its closure or callee any more, so nothing outlines or analyzes them.
void forgetRemovedClosures(SemaModule& sema, const std::set<const FunctionDecl*>& removed) {
  if (removed.empty()) return;
  auto isRemoved = [&](const FunctionScope* f) { return f->function && removed.count(f->function); };
  for (const auto& scope : sema.scopes) {
    auto& closures = scope->closures;
    closures.erase(std::remove_if(closures.begin(), closures.end(), isRemoved), closures.end());
    auto& callees = scope->callees;
    callees.erase(std::remove_if(callees.begin(), callees.end(), isRemoved), callees.end());
  }
}

}  // namespace

FunctionScope& findKernelOrThrow(const SemaModule& sema, const std::string& name) {
  FunctionScope* k = sema.findKernel(name);
  if (!k) {
    std::string known;
    for (auto* kk : sema.kernels) known += (known.empty() ? "" : ", ") + kk->name;
    throw GeneratorError(fmt::format("no kernel named '{}' in {} (kernels: {})", name,
                                     sema.file ? sema.file->path() : "<input>", known.empty() ? "none" : known));
  }
  return *k;
}

namespace {

// Whether an integer value fits a declared type (bool: 0 or 1).
bool fitsType(int64_t v, ScalarType t) {
  const int bits = scalarBits(t);
  if (t == ScalarType::Bool) return v == 0 || v == 1;
  if (isSigned(t)) return bits >= 64 || (v >= -(int64_t(1) << (bits - 1)) && v < (int64_t(1) << (bits - 1)));
  return v >= 0 && (bits >= 64 || v < (int64_t(1) << bits));
}

// The compile-time parameter `name` of any kernel of the module (the same
// Specialization::consts serve module consts and these).
const TypeParam* findCompileTimeParam(const SemaModule& sema, const std::string& name) {
  for (const FunctionScope* k : sema.kernels)
    for (const TypeParam& tp : k->kernel->typeParams)
      if (!tp.isTypeParam() && tp.name == name) return &tp;
  return nullptr;
}

// A kernel's compile-time value parameter: its type as declared.
void checkCompileTimeValue(const TypeParam& tp, ConstOverride& value, const std::string& name) {
  if (tp.kindName == "fn") {
    if (value.function.empty())
      throw GeneratorError(fmt::format("--const {}={}: '{}' is a fn parameter; give it the name of a module def", name,
                                       constOverrideText(value), name));
    return;
  }
  if (!value.function.empty()) {
    // `true` as C++ and JSON spell it: say how Spindle (and Python) does.
    std::string hint = tp.kindName == "bool" ? " (True or False, or 1 or 0)" : "";
    throw GeneratorError(fmt::format("--const {}={}: '{}' is a compile-time {}; give it a value{}", name,
                                     value.function, name, tp.kindName, hint));
  }
  auto t = scalarFromName(tp.kindName);
  if (!t) return;  // sema reported the unknown type
  if (isFloat(*t)) {
    if (!value.isFloat) value = ConstOverride::ofFloat(static_cast<double>(value.i));
    return;
  }
  if (value.isFloat)
    throw GeneratorError(fmt::format("--const {}={}: '{}' is a compile-time {}; give it an integer", name,
                                     constOverrideText(value), name, tp.kindName));
  if (!fitsType(value.i, *t))
    throw GeneratorError(fmt::format("--const {}={}: '{}' is declared {}, which does not hold {}", name, value.i, name,
                                     tp.kindName, value.i));
}

}  // namespace

Specialization checkConsts(const SemaModule& sema, Specialization spec) {
  for (auto& [name, value] : spec.consts) {
    const Symbol* c = nullptr;
    for (const Symbol* s : sema.consts) c = s->name == name ? s : c;
    if (!c) {
      if (const TypeParam* tp = findCompileTimeParam(sema, name)) {
        checkCompileTimeValue(*tp, value, name);
        continue;
      }
      std::string names;
      for (const Symbol* s : sema.consts) names += (names.empty() ? "" : ", ") + s->name;
      for (const FunctionScope* k : sema.kernels)
        for (const TypeParam& tp : k->kernel->typeParams)
          if (!tp.isTypeParam()) names += (names.empty() ? "" : ", ") + tp.name;
      throw GeneratorError(
          fmt::format("--const {}: the module has no const or compile-time parameter named '{}' "
                      "(it has: {})",
                      name, name, names.empty() ? "none" : names));
    }
    if (!value.function.empty())
      throw GeneratorError(fmt::format("--const {}={}: '{}' is a const; give it a number", name, value.function, name));
    const bool floatConst = c->weakType ? c->value.isFloat : isFloat(c->type);
    if (floatConst) {
      if (!value.isFloat) value = ConstOverride::ofFloat(static_cast<double>(value.i));
      continue;
    }
    if (value.isFloat)
      throw GeneratorError(fmt::format("--const {}={}: '{}' is an integer const; give it an integer", name,
                                       constOverrideText(value), name));
    if (c->weakType) continue;  // weak integers are i32 or, past its range, i64 (docs/language.md 3.2)
    if (!fitsType(value.i, c->type))
      throw GeneratorError(fmt::format("--const {}={}: '{}' is declared {}, which does not hold {}", name, value.i,
                                       name, scalarName(c->type), value.i));
  }
  return spec;
}

ConstValues constValues(const Specialization& spec) {
  ConstValues values;
  for (const auto& [name, v] : spec.consts) {
    values[name] = v.isFloat ? ConstValue::ofFloat(v.f) : ConstValue::ofInt(v.i);
    values[name].function = v.function;
  }
  return values;
}

std::string specializationKey(const SemaModule& sema, const std::string& kernel, const Specialization& spec) {
  // The module's text, not its path: one source gives one key wherever it
  // is loaded from (the path only reaches #line and comments).
  std::string key = fmt::format("spindle={};text={:016x};kernel={};", SPINDLE_VERSION,
                                fnv1a(sema.file ? sema.file->text() : std::string()), kernel);
  for (const std::string& flag : specializationFlags(spec)) key += " " + flag;
  return key;
}

GeneratedKernel generateKernel(SemaModule& sema, const std::string& kernelName, const Specialization& spec) {
  FunctionScope& kernel = findKernelOrThrow(sema, kernelName);
  validateSpecialization(sema, kernel, spec);
  viewLayouts(kernel, spec);
  for (Symbol* p : kernel.params)
    if (p->optional)
      p->presence = spec.absentTensors.count(p->name) ? Symbol::Presence::Absent : Symbol::Presence::Present;
  evaluateModuleConstsOfDims(sema, kernel, spec);
  evaluateBodyConsts(sema, kernel, spec);

  // Branches dead in this specialization go before anything types or
  // analyzes them. Module defs see no dims: only consts decide there.
  PrunedCode pruned;
  if (sema.file) {
    pruneConstantBranches(*sema.file, kernel.kernel->body, spec.staticDims, &spec.typeArgs, spec.checked, pruned);
    for (FunctionScope* def : sema.functions)
      pruneConstantBranches(*sema.file, def->function->body, {}, nullptr, spec.checked, pruned);
    forgetRemovedClosures(sema, pruned.removedDefs);
    recomputeCallees(sema, pruned.removedDefs);
    recomputeOuterRefs(sema, pruned.removedDefs);
    recomputeWrites(sema, pruned.removedDefs);
  }

  // Type the kernel under this binding (generic kernels differ per dtype).
  DiagnosticEngine diags;
  if (!typeCheckKernel(sema, kernel, spec.typeArgs, diags)) throw GeneratorError(diags.renderAll());

  std::set<std::string> staticDims;
  for (const auto& [name, value] : spec.staticDims) staticDims.insert(name);
  KernelPrintPlan plan{
      kernel, planBlock(sema, kernel, spec.staticDims, spec.typeArgs), functionsInDefinitionOrder(kernel), {}, {}};

  checkNoAbsentUses(sema, kernel, plan.functions);
  checkNoUnavailableConsts(sema, kernel, plan.functions);
  checkMatrixBlock(sema, kernel, plan.functions, plan.block);
  checkDotAccumulators(sema, plan.functions);
  analyzeModuleDefs(sema, spec.checked);
  analyzeCaptures(sema, kernel, staticDims, spec.checked);
  checkSpecializedBodies(sema, kernel, plan.functions, spec.staticDims);
  checkSwizzledBuffers(sema, kernel, spec.staticDims, spec.typeArgs);
  // Per function: where locals are declared (after capture analysis: a
  // closure's captures are uses at its calls), where comments go.
  auto planFunction = [&](const FunctionScope* f, const Block& body, SourceRange range) {
    plan.locals.emplace(f, planLocalDeclarations(*f, body));
    plan.comments.emplace(
        f, sema.file ? placeComments(*sema.file, body, range.begin.line, range.begin.col, pruned) : CommentPlacement{});
  };
  planFunction(&kernel, kernel.kernel->body, kernel.kernel->range);
  for (const FunctionScope* f : plan.functions) planFunction(f, f->function->body, f->function->range);

  GeneratedKernel out = printKernelSource(sema, spec, plan);
  out.key = specializationKey(sema, kernelName, spec);
  return out;
}

}  // namespace spindle
