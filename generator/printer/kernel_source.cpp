#include "kernel_source.h"

#include <algorithm>
#include <functional>
#include <set>
#include <string_view>

#include "../builtins.h"
#include "../const_eval.h"
#include "../passes/capture_analysis.h"
#include "function_printer.h"
#include "prelude.h"
#include "templates.h"

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

FunctionScope& findKernelOrThrow(SemaModule& sema, const std::string& name) {
  FunctionScope* k = sema.findKernel(name);
  if (!k) {
    std::string known;
    for (auto* kk : sema.kernels) known += (known.empty() ? "" : ", ") + kk->name;
    throw GeneratorError(fmt::format("no kernel named '{}' in {} (kernels: {})", name,
                                     sema.file ? sema.file->path() : "<input>", known.empty() ? "none" : known));
  }
  return *k;
}

void validateRequest(const SemaModule& sema, const FunctionScope& k, const PrintRequest& req) {
  std::set<std::string> dims;
  for (auto* d : k.dimSymbols) dims.insert(d->name);
  for (const auto& [name, value] : req.staticDims) {
    if (!dims.count(name)) {
      std::string known;
      for (auto* d : k.dimSymbols) known += (known.empty() ? "" : ", ") + d->name;
      throw GeneratorError(fmt::format("kernel '{}' has no dim symbol '{}' to specialize (its dims: {})", k.name, name,
                                       known.empty() ? "none" : known));
    }
    if (value < 1)
      throw GeneratorError(fmt::format("kernel '{}': static dim {} = {} must be at least 1", k.name, name, value));
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

// @block: compile-time, from consts and static dims.
std::vector<int64_t> evaluateBlock(const SemaModule& sema, const FunctionScope& k,
                                   const std::map<std::string, int64_t>& staticDims) {
  std::vector<int64_t> block;
  const Decorator* d = k.kernel->findDecorator("block");
  for (const auto& e : d->args) {
    ConstEvalFailure failure;
    auto v = evaluateConst(*e, constsAndDims(staticDims), &failure);
    if (!v || v->isFloat || v->i < 1 || v->i > 1024) {
      throwSpecializationError(sema, DiagId::spec_block_not_constant, (failure.where ? failure.where : e.get())->range,
                               !v ? " (" + failure.reason + "; a dim used in @block must be static)"
                                  : fmt::format(", got {}", v->isFloat ? v->f : static_cast<double>(v->i)));
    }
    block.push_back(v->i);
  }
  int64_t total = 1;
  for (auto b : block) total *= b;
  if (total > 1024)
    throw GeneratorError(fmt::format("kernel '{}': @block has {} threads, more than 1024", k.name, total));
  return block;
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

// Clears `strided` on the named parameters while one source is printed,
// and restores it after (the analysis is shared by every specialization).
class ContiguousViews {
 public:
  ContiguousViews(FunctionScope& kernel, const std::set<std::string>& names) {
    for (Symbol* p : kernel.params)
      if (p->strided && names.count(p->name)) {
        p->strided = false;
        cleared_.push_back(p);
      }
  }
  ~ContiguousViews() {
    for (Symbol* p : cleared_) p->strided = true;
  }
  ContiguousViews(const ContiguousViews&) = delete;
  ContiguousViews& operator=(const ContiguousViews&) = delete;

 private:
  std::vector<Symbol*> cleared_;
};

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

}  // namespace

std::string specializationKey(const SemaModule& sema, const PrintRequest& request) {
  // The module's text, not its path: one source gives one key wherever it
  // is loaded from (the path only reaches #line and comments).
  std::string key = fmt::format("spindle={};text={:016x};kernel={};static=", SPINDLE_VERSION,
                                fnv1a(sema.file ? sema.file->text() : std::string()), request.kernel);
  for (const auto& [name, value] : request.staticDims) key += fmt::format("{}={},", name, value);
  key += ";types=";
  for (const auto& [name, type] : request.typeArgs) key += fmt::format("{}={},", name, scalarName(type));
  key += ";contiguous=";
  for (const auto& name : request.contiguousTensors) key += name + ",";
  key += ";aligned=";
  for (const auto& name : request.alignedTensors) key += name + ",";
  key += ";divisible=";
  for (const auto& name : request.divisibleDims) key += name + ",";
  key += fmt::format(";lines={}", request.lineDirectives ? 1 : 0);
  return key;
}

GeneratedKernel printKernelSource(SemaModule& sema, const PrintRequest& request) {
  FunctionScope& kernel = findKernelOrThrow(sema, request.kernel);
  validateRequest(sema, kernel, request);

  // A strided parameter passed contiguous is printed as a contiguous one
  // for this specialization only.
  ContiguousViews contiguous(kernel, request.contiguousTensors);

  // Type the kernel under this binding (generic kernels differ per dtype).
  DiagnosticEngine diags;
  if (!typeCheckKernel(sema, kernel, request.typeArgs, diags)) throw GeneratorError(diags.renderAll());

  std::set<std::string> staticDims;
  for (const auto& [name, value] : request.staticDims) staticDims.insert(name);
  std::vector<int64_t> block = evaluateBlock(sema, kernel, request.staticDims);

  std::vector<FunctionScope*> functions = functionsInDefinitionOrder(kernel);
  analyzeModuleDefs(sema);
  analyzeCaptures(sema, kernel, staticDims);

  PrintContext ctx{sema,
                   kernel,
                   staticDims,
                   request.staticDims,
                   request.alignedTensors,
                   request.divisibleDims,
                   std::string(kPathPlaceholder),
                   NameSupply(),
                   {}};

  // File-scope names: consts, static dims, functions. Static dims come
  // from the specialization and precede the host launcher, which uses them;
  // annotated consts are declared after it, each under the #line of its
  // declaration, so a compiler error in one points at the .spn. Unannotated
  // consts are written at each use as literals (FunctionPrinter::nameExpr),
  // and listed in a comment.
  Emitter globals;
  Emitter body;
  body.setLineDirectives(request.lineDirectives);
  std::vector<std::string> weakConsts;
  for (Symbol* c : sema.consts) {
    const std::string& n = ctx.globals.declare(c);
    if (c->weakType) {
      weakConsts.push_back(c->value.isFloat ? fmt::format("//   {} = {}", c->name, c->value.f)
                                            : fmt::format("//   {} = {}", c->name, c->value.i));
      continue;
    }
    body.mapToSource(c->declRange.begin.line, ctx.sourcePath);
    body.linef("constexpr {} {} = {};", cppType(c->type), n, compileTimeLiteral(c->value, c->type).text);
  }
  if (!body.text().empty()) body.blank();
  if (!weakConsts.empty()) {
    globals.line("// Unannotated consts, each written at every use as a literal of the type it takes there:");
    for (const auto& line : weakConsts) globals.line(line);
  }
  bool anyStatic = false;
  for (Symbol* d : kernel.dimSymbols) {
    auto it = request.staticDims.find(d->name);
    if (it == request.staticDims.end()) continue;
    if (!anyStatic && !weakConsts.empty()) globals.blank();
    anyStatic = true;
    globals.linef("constexpr int64_t {} = {};  // static dim", ctx.globals.declare(d), it->second);
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

  for (auto* f : functions) {
    FunctionPrinter(ctx, *f, body).printDeviceFunction();
    body.blank();
  }
  std::string launchBounds = fmt::format("{}", [&] {
    int64_t total = 1;
    for (auto b : block) total *= b;
    return total;
  }());
  FunctionPrinter kernelPrinter(ctx, kernel, body);
  kernelPrinter.printKernel(launchBounds);

  // Header comment: the specialization and the parameter list in order.
  std::vector<std::string> specParts;
  for (Symbol* d : kernel.dimSymbols) {
    auto it = request.staticDims.find(d->name);
    specParts.push_back(it != request.staticDims.end() ? fmt::format("{} = {} (static)", d->name, it->second)
                                                       : fmt::format("{} dynamic", d->name));
  }
  for (const auto& [name, type] : request.typeArgs) specParts.push_back(fmt::format("{} = {}", name, scalarName(type)));
  for (const auto& name : request.contiguousTensors) specParts.push_back(fmt::format("{} contiguous", name));
  for (const auto& name : request.alignedTensors) specParts.push_back(fmt::format("{} 16-byte aligned", name));
  for (const auto& name : request.divisibleDims) specParts.push_back(fmt::format("{} % 16 == 0", name));
  std::string paramLines;
  std::vector<AbiArg> abi;
  std::vector<std::string> hostParams = {"hipStream_t stream"}, callArgs;
  for (size_t i = 0; i < kernelPrinter.kernelParams().size(); ++i) {
    const auto& p = kernelPrinter.kernelParams()[i];
    paramLines += fmt::format("//   {:>2}  {:<40} {}\n", i, p.decl, p.what);
    abi.push_back(p.abi);
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
  std::vector<std::string> gridComment, blockParts;
  // The comment quotes @grid as the author wrote it.
  for (auto& g : kernel.kernel->findDecorator("grid")->args)
    gridComment.push_back(
        sema.file ? sema.file->text().substr(g->range.begin.offset, g->range.end.offset - g->range.begin.offset)
                  : kernelPrinter.expr(*g).text);
  for (auto b : block) blockParts.push_back(std::to_string(b));

  std::vector<std::string> regen;
  for (const auto& [name, value] : request.staticDims) regen.push_back(fmt::format(" --static {}={}", name, value));
  for (const auto& [name, type] : request.typeArgs)
    regen.push_back(fmt::format(" --dtype {}={}", name, scalarName(type)));
  for (const auto& name : request.contiguousTensors) regen.push_back(" --contiguous " + name);
  for (const auto& name : request.alignedTensors) regen.push_back(" --aligned " + name);
  for (const auto& name : request.divisibleDims) regen.push_back(" --divisible " + name);
  if (!request.lineDirectives) regen.push_back(" --no-line-directives");

  std::string sharedBytes = kernelPrinter.launcherDynamicSharedBytes();
  std::string sharedComment = sharedBytes == "0" ? std::string("none") : sharedBytes + " bytes";
  std::string source = fmt::format(
      fmt::runtime(templateText("file_header")), fmt::arg("version", SPINDLE_VERSION),
      fmt::arg("source", ctx.sourcePath), fmt::arg("kernel", kernel.name), fmt::arg("regen_flags", joined(regen, "")),
      fmt::arg("specialization", specParts.empty() ? std::string("none") : joined(specParts)),
      fmt::arg("grid", joined(gridComment)), fmt::arg("block", joined(blockParts)),
      fmt::arg("shared_bytes", sharedComment), fmt::arg("parameter_lines", paramLines));
  source += "\n";
  // What follows the prelude; the prelude is cut to what it names.
  std::string rest;
  if (!globals.text().empty()) rest += globals.text() + "\n";
  std::vector<std::string> kernelParamDecls(hostParams.begin() + 1, hostParams.end());
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
  rest += fmt::format(fmt::runtime(templateText("launcher")), fmt::arg("kernel", ctx.functionNames[&kernel]),
                      fmt::arg("host_helpers", hostHelpers), fmt::arg("grid_inputs", gridInputs),
                      fmt::arg("kernel_params", joined(kernelParamDecls)), fmt::arg("host_params", joined(hostParams)),
                      fmt::arg("grid", joined(gridParts)), fmt::arg("block", joined(blockParts)),
                      fmt::arg("shared_bytes", sharedBytes), fmt::arg("call_args", joined(callArgs)));
  rest += body.text();
  source += preludeFor(rest) + "\n";
  auto bodyStart = static_cast<uint32_t>(std::count(source.begin(), source.end(), '\n') +
                                         std::count(rest.begin(), rest.end(), '\n') -
                                         std::count(body.text().begin(), body.text().end(), '\n'));
  source += rest;

  GeneratedKernel out;
  out.source = withSourcePath(source, sema.file ? sema.file->path() : "<input>");
  out.pathFreeSource = std::move(source);
  for (const auto& m : body.mappings()) out.lineMappings.push_back({bodyStart + m.outputLine, m.spnLine});
  out.kernelSymbol = ctx.functionNames[&kernel];
  out.abi = std::move(abi);
  out.key = specializationKey(sema, request);
  return out;
}

LaunchGeometry computeLaunchGeometry(SemaModule& sema, const PrintRequest& request,
                                     const std::map<std::string, int64_t>& dims,
                                     const ResidentBlocksQuery& residentBlocks) {
  FunctionScope& kernel = findKernelOrThrow(sema, request.kernel);
  LaunchGeometry g;
  auto lookup = constsAndDims(dims);
  std::vector<int64_t> block = evaluateBlock(sema, kernel, request.staticDims);
  for (size_t i = 0; i < block.size() && i < 3; ++i) g.block[i] = block[i];

  std::set<std::string> staticDims;
  for (const auto& [name, value] : request.staticDims) staticDims.insert(name);
  uint64_t bytes = 0;
  for (const Symbol* s : kernel.declared) {
    if (s->kind != SymbolKind::SharedBuffer) continue;
    bool dynamic = false;
    for (Symbol* d : shapeDimSymbols(*s)) dynamic |= !staticDims.count(d->name);
    if (!dynamic) continue;
    uint64_t count = 1;
    for (const Expr* e : s->shape) {
      auto v = evaluateConst(*e, lookup);
      if (!v || v->isFloat || v->i < 0) throwSpecializationError(sema, DiagId::spec_shared_size, e->range, s->name);
      count *= static_cast<uint64_t>(v->i);
    }
    ScalarType elem = s->type;
    if (!s->typeParam.empty()) {
      auto it = request.typeArgs.find(s->typeParam);
      if (it != request.typeArgs.end()) elem = it->second;
    }
    bytes += (count * scalarBytes(elem) + 15) / 16 * 16;
  }
  g.dynamicSharedBytes = bytes;

  // Asked at most once, however often @grid names it.
  std::optional<int64_t> resident;
  ResidentBlocksValue residentValue;
  if (residentBlocks) {
    residentValue = [&] {
      if (!resident) resident = residentBlocks(g.block[0] * g.block[1] * g.block[2], g.dynamicSharedBytes);
      return *resident;
    };
  }
  const auto& gridArgs = kernel.kernel->findDecorator("grid")->args;
  for (size_t i = 0; i < gridArgs.size() && i < 3; ++i) {
    ConstEvalFailure failure;
    auto v = evaluateConst(*gridArgs[i], lookup, &failure, residentValue);
    if (!v || v->isFloat)
      throwSpecializationError(sema, DiagId::spec_grid_eval, (failure.where ? failure.where : gridArgs[i].get())->range,
                               v ? "the grid must be an integer" : failure.reason);
    g.grid[i] = v->i;
  }
  return g;
}

}  // namespace spindle
