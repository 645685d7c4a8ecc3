#include "launch_geometry.h"

#include <fmt/format.h>

#include <set>

#include "generate.h"
#include "passes/capture_analysis.h"
#include "passes/specialization_checks.h"
#include "sema/const_eval.h"
#include "sema/value_range.h"

namespace spindle {

namespace {

constexpr int64_t kMaxThreads = 1024;

std::string axisValueText(const ConstValue& v) { return v.isFloat ? fmt::format("{}", v.f) : fmt::format("{}", v.i); }

// A scratch buffer's element type in this specialization.
ScalarType bufferElementType(const Symbol& buffer, const std::map<std::string, ScalarType>& typeArgs) {
  if (buffer.typeParam.empty()) return buffer.type;
  auto it = typeArgs.find(buffer.typeParam);
  return it != typeArgs.end() ? it->second : buffer.type;
}

// Bytes of `local` buffers one thread may hold at once, an upper bound:
// those of the kernel, its closures and every def it may call, each
// counted once (a host compiler that inlines them may give each its own
// stack slots). The cpu target sizes its fibers' stacks from it.
uint64_t localBytesPerThread(const FunctionScope& kernel, const ConstLookup& values,
                             const std::map<std::string, ScalarType>& typeArgs) {
  std::set<const FunctionScope*> seen;
  std::vector<const FunctionScope*> todo{&kernel};
  uint64_t bytes = 0;
  while (!todo.empty()) {
    const FunctionScope* f = todo.back();
    todo.pop_back();
    if (!seen.insert(f).second) continue;
    for (const Symbol* s : f->declared) {
      if (s->kind != SymbolKind::LocalBuffer) continue;
      uint64_t count = 1;
      for (const Expr* e : s->shape) {
        // Static in every specialization (passes/specialization_checks).
        auto v = evaluateConst(*e, values);
        count *= v && !v->isFloat && v->i > 0 ? static_cast<uint64_t>(v->i) : 0;
      }
      bytes += count * scalarBytes(bufferElementType(*s, typeArgs));
    }
    todo.insert(todo.end(), f->callees.begin(), f->callees.end());
    todo.insert(todo.end(), f->closures.begin(), f->closures.end());
  }
  return bytes;
}

}  // namespace

bool sharedPastStaticLimit(const FunctionScope& kernel, const std::map<std::string, int64_t>& staticDims,
                           const std::map<std::string, ScalarType>& typeArgs,
                           const std::set<std::string>* absentTensors) {
  constexpr uint64_t kStaticLimit = 48 * 1024;
  uint64_t bytes = 0;
  for (const Symbol* s : kernel.declared) {
    if (s->kind != SymbolKind::SharedBuffer) continue;
    bool dynamic = false;
    for (Symbol* d : shapeDimSymbols(*s)) dynamic |= !staticDims.count(d->name);
    if (dynamic) continue;
    uint64_t count = 1;
    for (const Expr* e : s->shape) {
      PerWarpWidth v = evaluateForWarpWidths(*e, staticDims, &typeArgs, absentTensors);
      if (!v.known() || v.wave32->isFloat || v.wave64->isFloat) return false;  // reported where it is printed
      count *= static_cast<uint64_t>(std::max<int64_t>({v.wave32->i, v.wave64->i, 0}));
    }
    if (s->swizzle) bytes = (bytes + 1023) / 1024 * 1024;  // alignas(1024), at most that much padding
    bytes += (count * scalarBytes(bufferElementType(*s, typeArgs)) + 15) / 16 * 16;
  }
  return bytes > kStaticLimit;
}

BlockPlan planBlock(const SemaModule& sema, const FunctionScope& k, const std::map<std::string, int64_t>& staticDims,
                    const std::map<std::string, ScalarType>& typeArgs) {
  BlockPlan plan;
  const Decorator* d = k.kernel->findDecorator("block");
  EvalFacts types{{}, 0, &typeArgs};
  auto known = constsAndDims(staticDims, &types);
  int64_t total = 1, total32 = 1, total64 = 1;
  bool allNumbers = true;
  for (const auto& e : d->args) {
    plan.axes.push_back(e.get());
    auto outOfRange = [&](const ConstValue& v) { return v.isFloat || v.i < 1 || v.i > kMaxThreads; };
    ConstEvalFailure failure;
    if (auto v = evaluateConst(*e, known, &failure)) {
      if (outOfRange(*v)) throwSpecializationError(sema, DiagId::spec_block_range, e->range, axisValueText(*v));
      plan.values.push_back(v->i);
      total *= v->i, total32 *= v->i, total64 *= v->i;
      continue;
    }
    plan.values.push_back(std::nullopt);
    allNumbers = false;
    // Known once the target's warp width is: evaluated for both widths.
    PerWarpWidth widths = evaluateForWarpWidths(*e, staticDims, &typeArgs);
    if (widths.known()) {
      const ConstValue *with32 = &*widths.wave32, *with64 = &*widths.wave64;
      if (outOfRange(*with32))
        throwSpecializationError(sema, DiagId::spec_block_range, e->range,
                                 axisValueText(*with32) + " with 32-wide warps");
      if (outOfRange(*with64))
        throwSpecializationError(sema, DiagId::spec_block_range, e->range,
                                 axisValueText(*with64) + " with 64-wide warps");
      total *= with64->i, total32 *= with32->i, total64 *= with64->i;
      continue;
    }
    // Follows the launch: a bound generation can prove is the most threads.
    plan.followsLaunch = true;
    auto range = valueRange(*e, known);
    if (!range || !range->boundedAbove() || range->hi > kMaxThreads) {
      const NameExpr* name = failure.where ? failure.where->as<NameExpr>() : nullptr;
      const bool isScalar = name && name->symbol && name->symbol->kind == SymbolKind::ScalarParam;
      std::string why = name ? fmt::format("'{}' is {}, known only at launch", name->name,
                                           isScalar ? "a scalar parameter" : "a dynamic dim")
                             : std::string("it is known only at launch");
      if (range && range->boundedAbove()) why += fmt::format(", and it can reach {}", range->hi);
      const std::string n = name ? name->name : "X";
      std::string hint = isScalar || !name ? fmt::format("bound it: min({}, 1024)", n)
                                           : fmt::format("bound it (min({}, 1024)) or make {} static", n, n);
      throwSpecializationError(sema, DiagId::spec_block_unbounded, e->range, why, hint);
    }
    total *= range->hi;
  }
  if (allNumbers && total > kMaxThreads)
    throw GeneratorError(fmt::format("kernel '{}': @block has {} threads, more than 1024", k.name, total));
  if (!plan.followsLaunch && total64 > kMaxThreads)
    throw GeneratorError(
        fmt::format("kernel '{}': @block has {} threads with 64-wide warps, more than 1024", k.name, total64));
  plan.maxThreads = std::min(total, kMaxThreads);
  plan.wholeWarps = !plan.followsLaunch && total32 % 32 == 0 && total64 % 64 == 0;
  plan.wholeWarpGroups = !plan.followsLaunch && total32 % 128 == 0 && total64 % 256 == 0;
  return plan;
}

LaunchGeometry computeLaunchGeometry(const SemaModule& sema, const std::string& kernelName, const Specialization& spec,
                                     const std::map<std::string, int64_t>& values,
                                     const ResidentBlocksQuery& residentBlocks, int64_t warpSize) {
  const FunctionScope& kernel = findKernelOrThrow(sema, kernelName);
  LaunchGeometry g;
  // Body consts that @grid or @block name are computed from these too.
  EvalFacts known{{}, warpSize, &spec.typeArgs, &spec.absentTensors};
  auto lookup = launchValues(values, &known);
  BlockPlan block = planBlock(sema, kernel, spec.staticDims, spec.typeArgs);
  for (size_t i = 0; i < block.axes.size() && i < 3; ++i) {
    if (block.values[i]) {
      g.block[i] = *block.values[i];
      continue;
    }
    ConstEvalFailure failure;
    auto v = evaluateConst(*block.axes[i], lookup, &failure, known);
    if (!v || v->isFloat || v->i < 1 || v->i > block.maxThreads)
      throwSpecializationError(sema, DiagId::spec_block_eval, (failure.where ? failure.where : block.axes[i])->range,
                               !v           ? failure.reason
                               : v->isFloat ? std::string("the block must be an integer")
                                            : fmt::format("it is {}, outside [1, {}]", v->i, block.maxThreads));
    g.block[i] = v->i;
  }

  std::set<std::string> staticDims;
  for (const auto& [name, value] : spec.staticDims) staticDims.insert(name);
  auto dimsOnly = constsAndDims(values, &known);
  const bool pastLimit = sharedPastStaticLimit(kernel, spec.staticDims, spec.typeArgs, &spec.absentTensors);
  uint64_t bytes = 0;
  for (const Symbol* s : kernel.declared) {
    if (s->kind != SymbolKind::SharedBuffer) continue;
    bool dynamic = pastLimit;
    for (Symbol* d : shapeDimSymbols(*s)) dynamic |= !staticDims.count(d->name);
    if (!dynamic) continue;
    uint64_t count = 1;
    for (const Expr* e : s->shape) {
      auto v = evaluateConst(*e, dimsOnly);
      if (!v || v->isFloat || v->i < 0) throwSpecializationError(sema, DiagId::spec_shared_size, e->range, s->name);
      count *= static_cast<uint64_t>(v->i);
    }
    // A swizzled buffer starts 1024-aligned (FunctionPrinter::dynamicSharedLayout).
    if (s->swizzle) bytes = (bytes + 1023) / 1024 * 1024;
    bytes += (count * scalarBytes(bufferElementType(*s, spec.typeArgs)) + 15) / 16 * 16;
  }
  g.dynamicSharedBytes = bytes;
  g.localBytesPerThread = localBytesPerThread(kernel, dimsOnly, spec.typeArgs);

  // Asked at most once, however often @grid names it.
  std::optional<int64_t> resident;
  EvalFacts facts = known;
  if (residentBlocks) {
    facts.residentBlocks = [&] {
      if (!resident) resident = residentBlocks(g.block[0] * g.block[1] * g.block[2], g.dynamicSharedBytes);
      return *resident;
    };
  }
  const auto& gridArgs = kernel.kernel->findDecorator("grid")->args;
  for (size_t i = 0; i < gridArgs.size() && i < 3; ++i) {
    ConstEvalFailure failure;
    auto v = evaluateConst(*gridArgs[i], lookup, &failure, facts);
    if (!v || v->isFloat)
      throwSpecializationError(sema, DiagId::spec_grid_eval, (failure.where ? failure.where : gridArgs[i].get())->range,
                               v ? "the grid must be an integer" : failure.reason);
    g.grid[i] = v->i;
  }
  return g;
}

}  // namespace spindle
