// `spindle inspect --stage scopes|key|runs`: what sema and the passes decided.
#include "inspect_stages.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "generate.h"
#include "passes/capture_analysis.h"
#include "passes/exact_grid.h"
#include "sema/sema.h"
#include "spec_options.h"

namespace spindle::cli {

namespace {

std::string at(SourceRange r) { return fmt::format("@{}:{}", r.begin.line, r.begin.col); }

std::string typeText(const Symbol& s) {
  std::string elem = s.typeParam.empty() ? std::string(scalarName(s.type)) : s.typeParam;
  if (s.kind != SymbolKind::TensorParam && s.kind != SymbolKind::SharedBuffer && s.kind != SymbolKind::LocalBuffer)
    return elem;
  return fmt::format("{}[{} dims]{}", elem, s.shape.size(), s.strided ? " strided" : "");
}

std::string captureText(const Capture& c) {
  switch (c.mode) {
    case CaptureMode::Stride: return fmt::format("{}.stride{} (stride, by value)", c.symbol->name, c.axis);
    case CaptureMode::Dim:
      return c.impliedBy ? fmt::format("{} (dim, implied by {})", c.symbol->name, c.impliedBy->name)
                         : fmt::format("{} (dim, by value)", c.symbol->name);
    default: return fmt::format("{} ({}, {})", c.symbol->name, symbolKindName(c.symbol->kind), captureModeName(c.mode));
  }
}

// What the key holds of a value that places rows (Specialization::divisible).
std::string granularityText(const Specialization& spec, const std::string& name) {
  auto it = spec.divisible.find(name);
  return fmt::format("the largest of 16, 8, 4, 2 it is a multiple of is in the key ({})",
                     it != spec.divisible.end() ? fmt::format("{} here", it->second)
                                                : fmt::format("none here; --divisible {}=G", name));
}

void printScope(std::string& out, const FunctionScope& f, int depth) {
  std::string pad(static_cast<size_t>(depth) * 2, ' ');
  const char* kind = f.kind == FunctionScope::Kind::Kernel     ? "kernel"
                     : f.kind == FunctionScope::Kind::Function ? "def"
                                                               : "closure";
  SourceRange where = f.kernel ? f.kernel->nameRange : f.function->nameRange;
  out += fmt::format("{}{} {} {}", pad, kind, f.name, at(where));
  if (f.returnType != ScalarType::Invalid) out += fmt::format(" -> {}", scalarName(f.returnType));
  for (size_t i = 0; i < f.returnTuple.size(); ++i)
    out += fmt::format("{}{}{}", i ? ", " : " -> tuple[", scalarName(f.returnTuple[i]),
                       i + 1 == f.returnTuple.size() ? "]" : "");
  out += "\n";
  for (const Symbol* p : f.params)
    out += fmt::format("{}  param {}: {}{}{}\n", pad, p->name, typeText(*p), p->written ? ", written" : "",
                       p->accessedInRuns ? ", indexed in runs" : "");
  for (const Symbol* d : f.dimSymbols)
    out += fmt::format("{}  dim {}: {}\n", pad, d->name,
                       !isKernelDim(*d)    ? "bound from the argument at each call"
                       : d->staticDeclared ? "static (@static)"
                                           : "dynamic");
  for (const Symbol* s : f.declared) {
    if (s->kind == SymbolKind::TensorParam || s->kind == SymbolKind::ScalarParam || s->kind == SymbolKind::Closure)
      continue;
    out += fmt::format("{}  {} {}: {} {}\n", pad, symbolKindName(s->kind), s->name, typeText(*s), at(s->declRange));
  }
  for (const Symbol* s : f.loopVars)
    out += fmt::format("{}  loop variable {}: {} {}\n", pad, s->name, scalarName(s->type), at(s->declRange));
  for (const auto& [name, target] : f.nonlocals)
    out += fmt::format("{}  nonlocal {} -> {} of {}\n", pad, name, symbolKindName(target->kind), target->owner->name);
  if (f.kind == FunctionScope::Kind::Closure) {
    if (f.captures.empty() && !f.capturesBlockScratch) out += fmt::format("{}  captures: nothing\n", pad);
    for (const auto& c : f.captures) out += fmt::format("{}  captures {}\n", pad, captureText(c));
    if (f.capturesBlockScratch) out += fmt::format("{}  captures the block-collective scratch (pointer)\n", pad);
  }
  for (const FunctionScope* c : f.closures) printScope(out, *c, depth + 1);
}

}  // namespace

std::string inspectScopes(const LoadedModule& result) {
  SemaModule& sema = *result.sema;
  std::string out;
  for (const Symbol* c : sema.consts)
    out +=
        fmt::format("const {}: {}{} = {} {}\n", c->name, scalarName(c->type), c->weakType ? " (weak)" : "",
                    c->value.isFloat ? fmt::format("{}", c->value.f) : fmt::format("{}", c->value.i), at(c->declRange));
  // Captures are shown for the kernel's @static dims only; dims a caller
  // marks static at generation time drop out of closure signatures too.
  analyzeModuleDefs(sema);
  for (FunctionScope* f : sema.functions) printScope(out, *f, 0);
  for (FunctionScope* k : sema.kernels) {
    std::set<std::string> statics;
    for (const Symbol* d : k->dimSymbols)
      if (d->staticDeclared) statics.insert(d->name);
    analyzeCaptures(sema, *k, statics);
    printScope(out, *k, 0);
  }
  return out;
}

namespace {
// The specialization options of `--stage key` and `--stage runs`, and the
// kernel they name (the module's only kernel when none is named).
KernelSelection selectKernel(const LoadedModule& result, const Args& options) {
  KernelSelection sel;
  for (size_t i = 0; i < options.size(); ++i) {
    if (!parseSpecOption(options, i, sel)) throw std::invalid_argument(fmt::format("unknown option '{}'", options[i]));
  }
  SemaModule& sema = *result.sema;
  if (sel.kernel.empty()) {
    if (sema.kernels.size() != 1) throw std::invalid_argument("the module has several kernels; pick one with --kernel");
    sel.kernel = sema.kernels[0]->name;
  }
  return sel;
}
}  // namespace

std::string inspectKey(const LoadedModule& result, const Args& options) {
  KernelSelection sel = selectKernel(result, options);
  SemaModule& sema = *result.sema;
  FunctionScope* k = sema.findKernel(sel.kernel);
  if (!k) throw std::invalid_argument(fmt::format("no kernel named '{}'", sel.kernel));
  const Specialization spec = checkConsts(sema, sel.spec);  // canonical, as generation keys it
  std::string out = fmt::format("kernel: {}\n", sel.kernel);
  std::vector<Symbol*> rowDims = runRowDimSymbols(*k);
  auto isRowDim = [&](const Symbol* d) { return std::find(rowDims.begin(), rowDims.end(), d) != rowDims.end(); };
  // Dims the grid covers in tiles: whether each is a whole number of them is one key bit.
  std::set<std::string> statics;
  for (const auto& [name, value] : spec.staticDims) statics.insert(name);
  const std::vector<ExactGridCandidate> gridDims = exactGridCandidates(*k, statics);
  auto gridText = [&](const Symbol* d) -> std::string {
    for (const ExactGridCandidate& c : gridDims)
      if (c.dim == d->name)
        return fmt::format("; @grid covers it in tiles of {}: whether it is a multiple of {} is in the key ({})",
                           c.tile, c.tile,
                           spec.exactGridDims.count(c.dim) ? "yes here" : "no here; --exact-grid " + c.dim);
    return "";
  };
  for (const Symbol* d : k->dimSymbols) {
    auto it = spec.staticDims.find(d->name);
    if (it != spec.staticDims.end()) out += fmt::format("  {} = {}: static, in the key\n", d->name, it->second);
    else if (d->staticDeclared)
      out += fmt::format("  {}: @static but no value given (pass --static {}=VALUE)\n", d->name, d->name);
    else if (isRowDim(d))
      out +=
          fmt::format("  {}: dynamic, passed at launch; {}{}\n", d->name, granularityText(spec, d->name), gridText(d));
    else if (!gridText(d).empty()) out += fmt::format("  {}: dynamic, passed at launch{}\n", d->name, gridText(d));
    else out += fmt::format("  {}: dynamic, passed at launch, not in the key\n", d->name);
  }
  for (const auto& [name, value] : spec.consts)
    out += fmt::format("  const {} = {}: given for this specialization, in the key\n", name, constOverrideText(value));
  for (const auto& [name, type] : spec.typeArgs) out += fmt::format("  {} = {}: in the key\n", name, scalarName(type));
  // The layout facts the runtime checks at every launch (one key bit each).
  for (const Symbol* p : k->params) {
    if (p->kind != SymbolKind::TensorParam) continue;
    if (p->strided)
      out += fmt::format(
          "  {}: strided; whether it is passed row-major, or else with inner stride 1, is in the key ({})\n", p->name,
          spec.contiguousTensors.count(p->name) ? "row-major here"
          : spec.unitStrideTensors.count(p->name)
              ? "inner stride 1 here"
              : fmt::format("neither here; --contiguous {0} or --unit-stride {0}", p->name));
    if (p->accessedInRuns)
      out += fmt::format("  {}: indexed in runs; whether it is 16-byte aligned is in the key ({})\n", p->name,
                         spec.alignedTensors.count(p->name) ? "yes here" : "no here; --aligned " + p->name);
    if (p->optional)
      out += fmt::format("  {}: optional; whether it is passed is in the key ({})\n", p->name,
                         spec.absentTensors.count(p->name) ? "absent here" : "present here; --absent " + p->name);
  }
  // Row strides and dim expressions that place rows in this specialization.
  for (const std::string& name : divisibilityCandidates(*k, spec))
    if (name.find('.') != std::string::npos) out += fmt::format("  {}: {}\n", name, granularityText(spec, name));
  for (const TypeParam& tp : k->kernel->typeParams)
    if (!tp.isTypeParam() && !spec.consts.count(tp.name))
      out += fmt::format("  {}: {}: a compile-time parameter with no value (pass --const {}={})\n", tp.name,
                         tp.kindName, tp.name, tp.kindName == "fn" ? "DEF" : "VALUE");
  for (const Symbol* s : k->launchScalars)
    out += fmt::format("  {}: a scalar @grid or @block uses, read at launch, not in the key\n", s->name);
  if (k->gridUsesResidentBlocks)
    out +=
        "  @grid uses resident_blocks(): the device's occupancy for the loaded binary, asked at launch, "
        "not in the key\n";
  out += fmt::format("key: {}\n", specializationKey(sema, sel.kernel, spec));
  return out;
}

// The runs of the kernel as generated for this specialization: the report
// comes from the printer's own decisions (GeneratedKernel::runReport), so
// it cannot disagree with the source `spindle gen` prints.
std::string inspectRuns(const LoadedModule& result, const Args& options) {
  KernelSelection sel = selectKernel(result, options);
  SemaModule& sema = *result.sema;
  if (!sema.findKernel(sel.kernel)) throw std::invalid_argument(fmt::format("no kernel named '{}'", sel.kernel));
  GeneratedKernel g;
  try {
    g = generateKernel(sema, sel.kernel, checkConsts(sema, sel.spec));
  } catch (const GeneratorError& e) {
    throw std::invalid_argument(e.what());
  }
  const std::string path = sema.file ? sema.file->path() : "<input>";
  size_t vector = 0;
  std::string out = fmt::format("kernel: {}\n", sel.kernel);
  for (const std::string& line : g.runReport) {
    out += path + ":" + line + "\n";
    vector += line.find(": vector: ") != std::string::npos;
  }
  out += fmt::format("{} run access{}, {} vector\n", g.runReport.size(), g.runReport.size() == 1 ? "" : "es", vector);
  return out;
}

}  // namespace spindle::cli

namespace spindle::cli {

std::string inspectTune(const LoadedModule& result, const Args& options) {
  KernelSelection sel = selectKernel(result, options);
  FunctionScope* k = result.sema->findKernel(sel.kernel);
  if (!k) throw std::invalid_argument(fmt::format("no kernel named '{}'", sel.kernel));
  if (!k->tune) return fmt::format("kernel: {}\n  no @tune: one config, the module's consts\n", sel.kernel);
  const TuneInfo& t = *k->tune;
  std::string out = fmt::format("kernel: {}\n  tuned consts: {}\n", sel.kernel, fmt::join(t.consts, ", "));
  out += fmt::format("  key dims: {}\n", t.keyDims.empty() ? std::string("none (one choice per specialization)")
                                                           : fmt::format("{}", fmt::join(t.keyDims, ", ")));
  out += fmt::format("  bucket: {}\n", t.bucketBase
                                           ? fmt::format("the next power of {} at or above each key dim", t.bucketBase)
                                           : std::string("exact values"));
  if (!t.where.empty())
    out += fmt::format("  where: {} (pruned {} of {})\n", t.where, t.pruned, t.pruned + t.configs.size());
  out += fmt::format("  configs ({}):\n", t.configs.size());
  for (size_t i = 0; i < t.configs.size(); ++i) {
    std::string text;
    for (size_t c = 0; c < t.consts.size(); ++c)
      text += fmt::format("{}{}={}", c ? " " : "", t.consts[c], t.configs[i][c]);
    out += fmt::format("    {:>3}  {}{}\n", i, text,
                       i == 0 ? "  (default: SPINDLE_TUNE=0, graph capture, first launch)" : "");
  }
  return out;
}

}  // namespace spindle::cli
