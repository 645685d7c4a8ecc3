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

#include "launch_geometry.h"
#include "passes/capture_analysis.h"
#include "passes/prune_branches.h"
#include "passes/specialization_checks.h"
#include "printer/kernel_source.h"
#include "sema/const_eval.h"

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
  std::vector<Symbol*> rowDims = runRowDimSymbols(k);
  for (const auto& name : req.divisibleDims) {
    bool candidate = false;
    for (const Symbol* d : rowDims) candidate |= d->name == name;
    if (!candidate) {
      std::string names;
      for (const Symbol* d : rowDims) names += (names.empty() ? "" : ", ") + d->name;
      throw GeneratorError(
          fmt::format("kernel '{}': '{}' is not a dim that places the rows of a tensor indexed in "
                      "runs, so its divisibility cannot matter (such dims: {})",
                      k.name, name, names.empty() ? "none" : names));
    }
    if (req.staticDims.count(name))
      throw GeneratorError(
          fmt::format("kernel '{}': dim {} is static, so the compiler already knows its value; drop "
                      "--divisible {}",
                      k.name, name, name));
  }
  for (const auto& [name, sym] : k.typeParams)
    if (!req.typeArgs.count(name))
      throwSpecializationError(sema, DiagId::spec_generic_unbound, sym->declRange, k.name, name, name);
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
// contiguous one in this specialization (its strides leave the ABI).
void viewAsContiguous(FunctionScope& kernel, const std::set<std::string>& names) {
  for (Symbol* p : kernel.params)
    if (p->strided && names.count(p->name)) p->strided = false;
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

Specialization checkConsts(const SemaModule& sema, Specialization spec) {
  for (auto& [name, value] : spec.consts) {
    const Symbol* c = nullptr;
    for (const Symbol* s : sema.consts) c = s->name == name ? s : c;
    if (!c) {
      std::string names;
      for (const Symbol* s : sema.consts) names += (names.empty() ? "" : ", ") + s->name;
      throw GeneratorError(fmt::format("--const {}: the module has no const named '{}' (its consts: {})", name, name,
                                       names.empty() ? "none" : names));
    }
    const bool floatConst = c->weakType ? c->value.isFloat : isFloat(c->type);
    if (floatConst) {
      if (!value.isFloat) value = ConstOverride::ofFloat(static_cast<double>(value.i));
      continue;
    }
    if (value.isFloat)
      throw GeneratorError(fmt::format("--const {}={}: '{}' is an integer const; give it an integer", name,
                                       constOverrideText(value), name));
    if (c->weakType) continue;  // weak integers are i32 or, past its range, i64 (docs/language.md 3.2)
    const ScalarType t = c->type;
    const int bits = scalarBits(t);
    const bool fits =
        t == ScalarType::Bool ? (value.i == 0 || value.i == 1)
        : isSigned(t) ? bits >= 64 || (value.i >= -(int64_t(1) << (bits - 1)) && value.i < (int64_t(1) << (bits - 1)))
                      : value.i >= 0 && (bits >= 64 || value.i < (int64_t(1) << bits));
    if (!fits)
      throw GeneratorError(fmt::format("--const {}={}: '{}' is declared {}, which does not hold {}", name, value.i,
                                       name, scalarName(t), value.i));
  }
  return spec;
}

ConstValues constValues(const Specialization& spec) {
  ConstValues values;
  for (const auto& [name, v] : spec.consts)
    values[name] = v.isFloat ? ConstValue::ofFloat(v.f) : ConstValue::ofInt(v.i);
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
  viewAsContiguous(kernel, spec.contiguousTensors);

  // Branches dead in this specialization go before anything types or
  // analyzes them. Module defs see no dims: only consts decide there.
  PrunedCode pruned;
  if (sema.file) {
    pruneConstantBranches(*sema.file, kernel.kernel->body, spec.staticDims, pruned);
    for (FunctionScope* def : sema.functions) pruneConstantBranches(*sema.file, def->function->body, {}, pruned);
    forgetRemovedClosures(sema, pruned.removedDefs);
  }

  // Type the kernel under this binding (generic kernels differ per dtype).
  DiagnosticEngine diags;
  if (!typeCheckKernel(sema, kernel, spec.typeArgs, diags)) throw GeneratorError(diags.renderAll());

  std::set<std::string> staticDims;
  for (const auto& [name, value] : spec.staticDims) staticDims.insert(name);
  KernelPrintPlan plan{kernel, planBlock(sema, kernel, spec.staticDims), functionsInDefinitionOrder(kernel), {}, {}};

  analyzeModuleDefs(sema);
  analyzeCaptures(sema, kernel, staticDims);
  checkSpecializedBodies(sema, kernel, plan.functions, spec.staticDims);
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
