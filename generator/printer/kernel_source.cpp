#include "kernel_source.h"

#include "../passes/vector_runs.h"

#include <algorithm>
#include <functional>
#include <set>
#include <string_view>

#include "function_printer.h"
#include "launch_geometry.h"
#include "prelude.h"
#include "sema/builtins.h"
#include "templates.h"

namespace spindle {

namespace {

void setLaunchTypes(Expr& e) {
  e.type = ScalarType::I64;
  if (auto* u = e.as<UnaryExpr>()) setLaunchTypes(*u->operand);
  if (auto* b = e.as<BinaryExpr>()) {
    setLaunchTypes(*b->lhs);
    setLaunchTypes(*b->rhs);
  }
  if (auto* t = e.as<TernaryExpr>()) {
    setLaunchTypes(*t->cond);
    setLaunchTypes(*t->thenValue);
    setLaunchTypes(*t->elseValue);
  }
  if (auto* c = e.as<CallExpr>())
    for (auto& a : c->args) setLaunchTypes(*a);
}

// The module's path while printing: the source is printed once with this
// placeholder (GeneratedKernel::pathFreeSource, what keys hash), then the
// real path goes in for compilers and readers. No .spn text or generated
// name can contain it.
constexpr std::string_view kPathPlaceholder = "\x01spindle-source-path\x01";

void replaceAll(std::string& text, std::string_view from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

// The real path into the placeholder's places: escaped inside the #line
// directives' string literals, as written in the header's comments.
// A line break in a path would end the comment (or the directive): \n and
// ? there.
std::string withSourcePath(std::string text, const std::string& path) {
  std::string escaped, commented;
  for (char c : path) {
    bool lineBreak = c == '\n' || c == '\r';
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += lineBreak ? std::string(c == '\n' ? "\\n" : "\\r") : std::string(1, c);
    commented += lineBreak ? '?' : c;
  }
  std::string quotedPlaceholder = "\"" + std::string(kPathPlaceholder) + "\"";
  replaceAll(text, quotedPlaceholder, "\"" + escaped + "\"");
  replaceAll(text, kPathPlaceholder, commented);
  return text;
}

std::string joined(const std::vector<std::string>& parts, const char* sep = ", ") {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

// An expression as the author wrote it (the generated form without a file).
std::string sourceText(const SemaModule& sema, const Expr& e, FunctionPrinter& printer) {
  return sema.file ? sema.file->text().substr(e.range.begin.offset, e.range.end.offset - e.range.begin.offset)
                   : printer.expr(e).text;
}

}  // namespace

GeneratedKernel printKernelSource(SemaModule& sema, const Specialization& spec, const KernelPrintPlan& plan) {
  FunctionScope& kernel = plan.kernel;
  const BlockPlan& block = plan.block;
  const std::vector<FunctionScope*>& functions = plan.functions;
  std::set<std::string> staticDims;
  for (const auto& [name, value] : spec.staticDims) staticDims.insert(name);

  // One field a line reads better than bin-packing.
  // clang-format off
  PrintContext ctx{sema,
                   kernel,
                   staticDims,
                   spec.alignedTensors,
                   spec.divisible,
                   std::string(kPathPlaceholder),
                   NameSupply(),
                   {},
                   plan,
                   {},
                   spec.checked,
                   spec.index32};
  // clang-format on
  ctx.spec = &spec;
  ctx.sharedPastLimit = sharedPastStaticLimit(kernel, spec.staticDims, spec.typeArgs, &spec.absentTensors);

  // File-scope names: consts, static dims, functions. Static dims come
  // from the specialization and precede the host launcher, which uses them;
  // annotated consts are declared after it, each under the #line of its
  // declaration, so a compiler error in one points at the .spn. Unannotated
  // consts are written at each use as literals (FunctionPrinter::nameExpr),
  // and listed in a comment.
  Emitter globals;
  Emitter body;
  body.setLineDirectives(spec.lineDirectives);
  std::vector<std::string> weakConsts;
  for (Symbol* c : sema.consts) {
    if (c->perSpecialization) continue;  // not computable here, and so unused (checkNoUnavailableConsts)
    const std::string& n = ctx.globals.declare(c);
    if (c->weakType) {
      weakConsts.push_back(c->value.isFloat ? fmt::format("{} = {}", c->name, c->value.f)
                                            : fmt::format("{} = {}", c->name, c->value.i));
      continue;
    }
    body.mapToSource(c->declRange.begin.line, ctx.sourcePath);
    body.linef("constexpr {} {} = {};", cppType(c->type), n, compileTimeLiteral(c->value, c->type).text);
  }
  // The kernel's compile-time parameters (`FLAG: bool`), as bound by this
  // specialization: constants of this file like annotated consts.
  for (Symbol* p : kernel.valueParams) {
    const std::string& n = ctx.globals.declare(p);
    body.mapToSource(p->declRange.begin.line, ctx.sourcePath);
    body.linef("constexpr {} {} = {};  // compile-time parameter", cppType(p->type), n,
               compileTimeLiteral(p->value, p->type).text);
  }
  // The kernel body's consts, as this specialization computed them: like
  // module consts, unannotated ones are literals at each use (listed in the
  // comment below), annotated ones constexprs of the file.
  for (Symbol* c : kernel.bodyConsts) {
    if (c->wave64Value) {  // differs by warp width: the file chooses, per target
      const std::string& n = ctx.globals.declare(c);
      body.mapToSource(c->declRange.begin.line, ctx.sourcePath);
      body.linef("constexpr {} {} = {};  // const of the kernel's body, per warp width", cppType(c->type), n,
                 warpWidthChoice(*c));
      continue;
    }
    if (c->weakType) {
      weakConsts.push_back(c->value.isFloat ? fmt::format("{} = {} (kernel body)", c->name, c->value.f)
                                            : fmt::format("{} = {} (kernel body)", c->name, c->value.i));
      continue;
    }
    const std::string& n = ctx.globals.declare(c);
    body.mapToSource(c->declRange.begin.line, ctx.sourcePath);
    body.linef("constexpr {} {} = {};  // const of the kernel's body", cppType(c->type), n,
               compileTimeLiteral(c->value, c->type).text);
  }
  if (!body.text().empty()) body.blank();
  if (!weakConsts.empty()) {
    // One comment, wrapped at the formatter's 120 columns.
    std::string line = "// Unannotated consts, written at each use as a literal of the type it takes there:";
    for (size_t i = 0; i < weakConsts.size(); ++i) {
      std::string entry = weakConsts[i] + (i + 1 < weakConsts.size() ? "," : "");
      if (line.size() + 1 + entry.size() > 120) {
        globals.line(line);
        line = "//  ";
      }
      line += " " + entry;
    }
    globals.line(line);
  }
  bool anyStatic = false;
  for (Symbol* d : kernel.dimSymbols) {
    auto it = spec.staticDims.find(d->name);
    if (it == spec.staticDims.end()) continue;
    if (!anyStatic && !weakConsts.empty()) globals.blank();
    anyStatic = true;
    globals.linef("constexpr {} {} = {};  // static dim", ctx.indexType(), ctx.globals.declare(d), it->second);
  }
  // Functions: the kernel and module defs keep their names; a closure is
  // named after its parent (softmax_row_stats), nested ones after the chain.
  ctx.functionNames[&kernel] = ctx.globals.fresh(kernel.name);
  for (auto* f : functions)
    if (f->kind == FunctionScope::Kind::Function) ctx.functionNames[f] = ctx.globals.fresh(f->name);
  std::function<void(FunctionScope*)> nameClosures = [&](FunctionScope* f) {
    for (auto* c : f->closures) {
      ctx.functionNames[c] = ctx.globals.fresh(ctx.functionNames[f] + "_" + c->name);
      nameClosures(c);
    }
  };
  nameClosures(&kernel);
  for (auto* f : functions)
    if (f->kind == FunctionScope::Kind::Function) nameClosures(f);
  // A tuple-returning function's struct is named after it (stats_result).
  for (auto* f : functions)
    if (!f->returnTuple.empty()) ctx.tupleResults[f] = tupleResultFor(*f, ctx.functionNames[f], ctx.globals);

  for (auto* f : functions) {
    FunctionPrinter(ctx, *f, body).printDeviceFunction();
    body.blank();
  }
  FunctionPrinter kernelPrinter(ctx, kernel, body);
  // __launch_bounds__: the thread count where generation knows it, as an
  // expression of the warp-width macro where only the target decides it,
  // else the bound generation proved for a block that follows the launch.
  std::string launchBounds = std::to_string(block.maxThreads);
  if (!block.followsLaunch) {
    std::vector<std::string> factors;
    for (size_t i = 0; i < block.axes.size(); ++i)
      factors.push_back(block.values[i] ? std::to_string(*block.values[i])
                                        : kernelPrinter.launcherValue(*block.axes[i]));
    if (factors.size() > 1)
      for (auto& f : factors) f = "(" + f + ")";
    if (std::any_of(block.values.begin(), block.values.end(), [](const auto& v) { return !v; }))
      launchBounds = joined(factors, " * ");
  }
  kernelPrinter.printKernel(launchBounds);

  // Header comment: the specialization and the parameter list in order.
  std::vector<std::string> specParts;
  for (Symbol* d : kernel.dimSymbols) {
    auto it = spec.staticDims.find(d->name);
    specParts.push_back(it != spec.staticDims.end() ? fmt::format("{} = {} (static)", d->name, it->second)
                                                    : fmt::format("{} dynamic", d->name));
  }
  for (const auto& [name, type] : spec.typeArgs) specParts.push_back(fmt::format("{} = {}", name, scalarName(type)));
  for (const auto& name : spec.contiguousTensors) specParts.push_back(fmt::format("{} contiguous", name));
  for (const auto& name : spec.unitStrideTensors) specParts.push_back(fmt::format("{} inner stride 1", name));
  for (const auto& name : spec.alignedTensors) specParts.push_back(fmt::format("{} 16-byte aligned", name));
  for (const auto& [name, g] : spec.divisible) specParts.push_back(fmt::format("{} % {} == 0", name, g));
  for (const auto& name : spec.exactGridDims) specParts.push_back(fmt::format("{} whole grid tiles", name));
  for (const auto& name : spec.absentTensors) specParts.push_back(fmt::format("{} absent", name));
  if (spec.index32) specParts.push_back("32-bit indices (dims, strides, extents < 2^31)");
  std::string paramLines;
  std::vector<AbiArg> abi;
  std::vector<std::string> hostParams = {"hipStream_t stream"}, callArgs, kernelParamDecls;
  for (size_t i = 0; i < kernelPrinter.kernelParams().size(); ++i) {
    const auto& p = kernelPrinter.kernelParams()[i];
    paramLines += fmt::format("//   {:>2}  {:<40} {}\n", i, p.decl, p.what);
    abi.push_back(p.abi);
    kernelParamDecls.push_back(p.decl);
    // A tensor map is the launcher's own (__spn_make_tensor_map).
    if (!p.launcherValue.empty()) {
      callArgs.push_back(p.launcherValue);
      continue;
    }
    hostParams.push_back(p.decl);
    callArgs.push_back(p.name);
  }
  if (paramLines.empty()) paramLines = "//   (none)\n";

  // Grid for the launcher, printed from the decorator with the kernel's names.
  std::vector<std::string> gridParts;
  for (auto& g : kernel.kernel->findDecorator("grid")->args) {
    setLaunchTypes(*g);
    gridParts.push_back("uint32_t(" + kernelPrinter.launcherValue(*g) + ")");
  }
  // @block per axis as the launcher computes it, and the source text the
  // header quotes: a number where generation knows it.
  std::vector<std::string> blockParts, blockComment;
  for (size_t i = 0; i < block.axes.size(); ++i) {
    if (block.values[i]) {
      blockParts.push_back(std::to_string(*block.values[i]));
      blockComment.push_back(blockParts.back());
      continue;
    }
    Expr& axis = *kernel.kernel->findDecorator("block")->args[i];  // block.axes[i], typed for the launcher
    setLaunchTypes(axis);
    blockParts.push_back("uint32_t(" + kernelPrinter.launcherValue(axis) + ")");
    blockComment.push_back(sourceText(sema, axis, kernelPrinter));
  }
  std::vector<std::string> gridComment;
  // The comment quotes @grid as the author wrote it.
  for (auto& g : kernel.kernel->findDecorator("grid")->args) gridComment.push_back(sourceText(sema, *g, kernelPrinter));
  std::string blockText = joined(blockComment);
  if (block.followsLaunch) blockText += fmt::format(", at most {} threads", block.maxThreads);

  std::string regen;
  for (const std::string& flag : specializationFlags(spec)) regen += " " + flag;

  std::string sharedBytes = kernelPrinter.launcherDynamicSharedBytes();
  std::string sharedComment = sharedBytes == "0" ? std::string("none") : sharedBytes + " bytes";
  std::string source =
      fmt::format(fmt::runtime(templateText("file_header")), fmt::arg("version", SPINDLE_VERSION),
                  fmt::arg("source", ctx.sourcePath), fmt::arg("kernel", kernel.name), fmt::arg("regen_flags", regen),
                  fmt::arg("specialization", specParts.empty() ? std::string("none") : joined(specParts)),
                  fmt::arg("grid", joined(gridComment)), fmt::arg("block", blockText),
                  fmt::arg("shared_bytes", sharedComment), fmt::arg("parameter_lines", paramLines));
  source += "\n";
  // What follows the prelude; the prelude is cut to what it names.
  std::string rest;
  if (!globals.text().empty()) rest += globals.text() + "\n";
  // resident_blocks() in @grid is the launcher's local, from the occupancy
  // query the resident_blocks template defines.
  std::string hostHelpers, gridInputs;
  if (kernel.gridUsesResidentBlocks) {
    hostHelpers = std::string(templateText("resident_blocks"));
    gridInputs = fmt::format(
        "  const int64_t resident_blocks = __spn_resident_blocks(reinterpret_cast<const void*>(&{}), block, "
        "dynamic_shared_bytes);\n",
        ctx.functionNames[&kernel]);
  }
  // copy_tile's tensor maps, made for each launch.
  if (!kernelPrinter.launcherTensorMaps().empty()) {
    hostHelpers += std::string(templateText("make_tensor_map"));
    for (const std::string& line : kernelPrinter.launcherTensorMaps()) gridInputs += "  " + line + "\n";
  }
  // The dynamic shared size gets a name where it is more than a zero.
  const bool namedShared = sharedBytes != "0" || kernel.gridUsesResidentBlocks;
  std::string sharedDecl = namedShared ? fmt::format("  const size_t dynamic_shared_bytes = {};\n", sharedBytes) : "";
  // More than 48 KiB of it (a kernel whose shared buffers are past the
  // static limit, or sized by dims) needs the kernel's opt-in first.
  if (sharedBytes != "0") {
    hostHelpers = std::string(templateText("allow_dynamic_shared")) + hostHelpers;
    sharedDecl += fmt::format(
        "  if (const hipError_t e = __spn_allow_dynamic_shared(reinterpret_cast<const void*>(&{}), "
        "dynamic_shared_bytes))\n    return e;\n",
        ctx.functionNames[&kernel]);
  }
  rest += fmt::format(
      fmt::runtime(templateText("launcher")), fmt::arg("kernel", ctx.functionNames[&kernel]),
      fmt::arg("host_helpers", hostHelpers), fmt::arg("grid_inputs", gridInputs),
      fmt::arg("kernel_params", joined(kernelParamDecls)), fmt::arg("host_params", joined(hostParams)),
      fmt::arg("grid", joined(gridParts)), fmt::arg("block", joined(blockParts)), fmt::arg("shared_decl", sharedDecl),
      fmt::arg("shared_arg", namedShared ? "dynamic_shared_bytes" : "0"), fmt::arg("call_args", joined(callArgs)));
  source += preludeFor(rest + body.text()) + "\n" + rest;
  auto bodyStart = static_cast<uint32_t>(std::count(source.begin(), source.end(), '\n'));
  source += body.text();

  GeneratedKernel out;
  out.source = withSourcePath(source, sema.file ? sema.file->path() : "<input>");
  out.pathFreeSource = std::move(source);
  for (const auto& m : body.mappings()) out.lineMappings.push_back({bodyStart + m.outputLine, m.spnLine});
  out.kernelSymbol = ctx.functionNames[&kernel];
  out.abi = std::move(abi);
  const std::string text = sema.file ? sema.file->text() : std::string();
  for (const RunAccess& r : findRunAccesses(kernel, spec, text)) out.runReport.push_back(describeRunAccess(r, text));
  return out;
}

}  // namespace spindle
