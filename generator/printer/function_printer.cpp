// Signatures and statements of kernels, module defs and outlined closures.
#include "function_printer.h"

#include "frontend/ast_walk.h"

#include <algorithm>
#include <cctype>
#include <functional>

#include "../passes/capture_analysis.h"
#include "../passes/exact_grid.h"
#include "sema/builtins.h"
#include "sema/const_eval.h"

namespace spindle {

using namespace cpp_prec;

namespace {

std::string shapeText(const Symbol& s) {
  // "f32[M, N]" as the author wrote it, for comments.
  std::string text = std::string(scalarName(s.type)) + "[";
  for (size_t i = 0; i < s.shape.size(); ++i) {
    if (i) text += ", ";
    if (auto* n = s.shape[i]->as<NameExpr>()) text += n->name;
    else if (auto* l = s.shape[i]->as<IntLitExpr>()) text += l->text;
    else text += "?";
  }
  return text + "]";
}

bool isDynamicBuffer(const PrintContext& ctx, const Symbol& buf) {
  if (ctx.sharedPastLimit) return true;
  for (Symbol* d : shapeDimSymbols(buf))
    if (!ctx.isStaticDim(d)) return true;
  return false;
}

// Does `body` assign any of `symbols` (directly, or through a closure that
// captures it by reference)?
bool assignsAny(const Block& body, const std::set<const Symbol*>& symbols) {
  bool found = false;
  std::function<void(const Expr&)> visitExpr = [&](const Expr& e) {
    if (auto* c = e.as<CallExpr>(); c && c->symbol && c->symbol->scope)
      for (const auto& cap : c->symbol->scope->captures)
        found |= cap.mode == CaptureMode::Reference && symbols.count(cap.symbol);
    forEachChild(e, visitExpr);
  };
  std::function<void(const Block&)> visit = [&](const Block& b) {
    for (const auto& s : b) {
      const Expr* target = s->kind == StmtKind::Assign      ? s->as<AssignStmt>()->target.get()
                           : s->kind == StmtKind::AugAssign ? s->as<AugAssignStmt>()->target.get()
                                                            : nullptr;
      auto assigns = [&](const Expr& t) {
        if (auto* n = t.as<NameExpr>()) found |= symbols.count(n->symbol) > 0;
      };
      if (auto* unpacked = target ? target->as<TupleExpr>() : nullptr) {
        for (const auto& t : unpacked->elements) assigns(*t);
      } else if (target) {
        assigns(*target);
      }
      forEachChild(*s, visitExpr, visit);
    }
  };
  visit(body);
  return found;
}

void collectLocals(const Expr& e, std::set<const Symbol*>& out) {
  if (auto* n = e.as<NameExpr>(); n && n->symbol && n->symbol->kind == SymbolKind::Local) out.insert(n->symbol);
  forEachChild(e, [&](const Expr& child) { collectLocals(child, out); });
}

// Whether evaluating `e` may change what the rest of a statement reads: a
// call of a def or closure (it may store through what it captures), or an
// atomic.
bool hasEffects(const Expr& e) {
  if (const auto* c = e.as<CallExpr>()) {
    const BuiltinInfo* b = c->symbol ? nullptr : findBuiltin(c->callee);
    if (c->symbol || (b && (b->category == BuiltinCategory::Atomic || b->category == BuiltinCategory::CachedStore)))
      return true;
  }
  bool found = false;
  forEachChild(e, [&](const Expr& child) { found = found || hasEffects(child); });
  return found;
}

// Whether evaluating `e` a second time may give another value or do
// something again, whatever its names hold: it loads an element, calls a
// def or closure, or calls an atomic, a barrier or a warp or block
// collective.
bool mayChangeWhenEvaluatedAgain(const Expr& e) {
  if (e.as<IndexExpr>()) return true;
  if (const auto* c = e.as<CallExpr>()) {
    if (c->symbol) return true;
    if (const BuiltinInfo* b = findBuiltin(c->callee)) switch (b->category) {
        case BuiltinCategory::Atomic:
        case BuiltinCategory::Barrier:
        case BuiltinCategory::WarpReduce:
        case BuiltinCategory::BlockReduce:
        case BuiltinCategory::Shuffle:
        case BuiltinCategory::WarpBarrier:
        case BuiltinCategory::WarpVote:
        case BuiltinCategory::WarpArgReduce:
        case BuiltinCategory::BlockArgReduce: return true;
        default: break;
      }
  }
  bool found = false;
  forEachChild(e, [&](const Expr& child) { found = found || mayChangeWhenEvaluatedAgain(child); });
  return found;
}

bool readsAny(const Expr& e, const std::set<const Symbol*>& symbols) {
  if (const auto* n = e.as<NameExpr>()) return n->symbol && symbols.count(n->symbol) > 0;
  bool found = false;
  forEachChild(e, [&](const Expr& child) { found = found || readsAny(child, symbols); });
  return found;
}

// Does `body` name `sym` anywhere (read, assigned, or captured by a
// closure it calls)?
bool namesIn(const Block& body, const Symbol* sym) {
  bool found = false;
  std::function<void(const Expr&)> visitExpr = [&](const Expr& e) {
    if (const auto* n = e.as<NameExpr>(); n && n->symbol == sym) found = true;
    if (auto* c = e.as<CallExpr>(); c && c->symbol && c->symbol->scope)
      for (const auto& cap : c->symbol->scope->captures) found |= cap.symbol == sym;
    forEachChild(e, visitExpr);
  };
  std::function<void(const Block&)> visit = [&](const Block& b) {
    for (const auto& st : b) forEachChild(*st, visitExpr, visit);
  };
  visit(body);
  return found;
}

// What an assignment target stores into: a local or parameter, or the
// tensor or buffer of an element.
const Symbol* storedSymbol(const Expr& target) {
  if (const auto* idx = target.as<IndexExpr>()) return idx->base->as<NameExpr>()->symbol;
  return target.as<NameExpr>()->symbol;
}

// A stored value of type `from` (a tuple's member) converted for a store
// into `to`, as storeValue converts an expression.
std::string convertStored(const std::string& text, ScalarType from, ScalarType to) {
  if (from == to) return text;
  std::string computed = isStorageOnly(from) ? "float(" + text + ")" : text;
  return isStorageOnly(to) ? cppType(to) + "(" + computed + ")" : computed;
}

// Whether C++ converts `from` to `to` inside braces (`stats_result{a, b}`):
// only conversions that keep every value do not narrow.
bool widensExactly(ScalarType from, ScalarType to) {
  if (isFloat(from) && isFloat(to)) return scalarBits(to) >= scalarBits(from);
  if (!isInteger(from) || !isInteger(to)) return false;
  if (isSigned(from) == isSigned(to)) return scalarBits(to) >= scalarBits(from);
  return !isSigned(from) && scalarBits(to) > scalarBits(from);
}

// The names every `return` of a body lists, place by place (`return m, s`
// on every path: m and s); none when a return lists anything else, or a
// name twice.
std::vector<std::string> returnedNames(const Block& body, size_t arity) {
  std::vector<std::string> names;
  bool agree = true;
  std::function<void(const Block&)> visit = [&](const Block& b) {
    for (const auto& s : b) {
      if (const auto* r = s->as<ReturnStmt>()) {
        const auto* tuple = r->value ? r->value->as<TupleExpr>() : nullptr;
        std::vector<std::string> these;
        for (size_t i = 0; tuple && i < tuple->elements.size(); ++i)
          if (const auto* n = tuple->elements[i]->as<NameExpr>()) these.push_back(n->name);
        if (these.size() != arity || (!names.empty() && these != names)) agree = false;
        names = these;
      }
      forEachChild(
          *s, [](const Expr&) {}, visit);
    }
  };
  visit(body);
  if (!agree || std::set<std::string>(names.begin(), names.end()).size() != arity) return {};
  return names;
}

}  // namespace

// Named after the function (`stats_result`), its members after what every
// return lists (`m`, `s`), else `_0`, `_1`, ...: docs/language.md 10.4.
TupleResult tupleResultFor(const FunctionScope& f, const std::string& functionName, NameSupply& globals) {
  TupleResult result;
  result.typeName = globals.fresh(functionName + "_result");
  std::vector<std::string> wanted = returnedNames(f.function->body, f.returnTuple.size());
  NameSupply members;              // no parent: clear of keywords and the headers' names
  members.fresh(result.typeName);  // a member may not be named like its struct
  for (size_t i = 0; i < f.returnTuple.size(); ++i)
    result.members.push_back(members.fresh(wanted.empty() ? "_" + std::to_string(i) : wanted[i]));
  return result;
}

FunctionPrinter::FunctionPrinter(PrintContext& ctx, FunctionScope& fn, Emitter& out)
    : ctx_(ctx),
      fn_(fn),
      bounds_(ctx, fn),
      tiles_(ctx, fn),
      out_(out),
      names_(&ctx.globals),
      plan_(ctx.plan.locals.at(&fn)),
      comments_(ctx.plan.comments.at(&fn)) {}

std::string FunctionPrinter::strideName(const Symbol* tensor, int axis) const {
  auto it = strides_.find({tensor, axis});
  SPINDLE_INTERNAL_CHECK(it != strides_.end(), "no stride {} for '{}'", axis, tensor->name);
  return it->second;
}

std::pair<std::string, std::string> FunctionPrinter::matrixStrides(const Symbol& t, int ax) const {
  return {t.strided ? strideName(&t, ax) : dimExpr(t, size_t(ax) + 1).text,
          t.strided && !t.unitInnerStride ? strideName(&t, ax + 1) : "1"};
}

std::string FunctionPrinter::pointerDecl(const Symbol& s, const std::string& emittedName) const {
  std::string elem = cppType(s.type);
  if (s.kind == SymbolKind::Fragment) {  // a closure's view of the array: a pointer to its first row of tiles
    if (s.shape.size() == 2) return fmt::format("{} (*{})[{}]", fragmentType(s), emittedName, expr(*s.shape[1]).text);
    return fmt::format("{}* {}", fragmentType(s), emittedName);
  }
  if (s.kind == SymbolKind::TensorParam) {
    // A kernel's tensors never overlap (docs/language.md), so __restrict__
    // lets the compiler use the read-only data path for inputs; @alias
    // tensors may be one buffer, so they go without. A def's tensor
    // parameter may be passed the same tensor twice, or one its closure
    // captures: no __restrict__ (inlined into the kernel, its accesses keep
    // the kernel parameter's).
    bool restrict = !s.aliased && s.owner && s.owner->kind == FunctionScope::Kind::Kernel;
    return fmt::format("{}{}* {}{}", s.written ? "" : "const ", elem, restrict ? "__restrict__ " : "", emittedName);
  }
  return fmt::format("{}* {}", elem, emittedName);
}

std::string FunctionPrinter::signature(const std::string& prefix, const std::vector<std::string>& params) const {
  std::string oneLine = prefix + "(";
  for (size_t i = 0; i < params.size(); ++i) oneLine += (i ? ", " : "") + params[i];
  oneLine += ")";
  if (oneLine.size() + 2 <= 120) return oneLine;  // with " {", within the formatter's 120 columns
  // As clang-format packs them: the parameters on continuation lines
  // indented by 4, each line filled up to 120 columns.
  std::string text = prefix + "(";
  std::string current;
  for (size_t i = 0; i < params.size(); ++i) {
    std::string piece = params[i] + (i + 1 < params.size() ? "," : ") {");
    if (!current.empty() && 4 + current.size() + 1 + piece.size() > 120) {
      text += "\n    " + current;
      current.clear();
    }
    current += (current.empty() ? "" : " ") + piece;
  }
  text += "\n    " + current;
  return text.substr(0, text.size() - 2);  // openScope() appends the " {"
}

// Kernel parameters in ABI order (see spindle/generator.h): each source
// parameter (a tensor's pointer then its strides, or a scalar), then every
// dynamic dim symbol.
void FunctionPrinter::declareKernelParams() {
  for (Symbol* p : fn_.params) {
    const std::string& n = names_.declare(p);
    if (p->kind == SymbolKind::TensorParam) {
      std::string what = "tensor " + shapeText(*p) + (p->strided ? " strided" : "") +
                         (p->unitInnerStride ? ", inner stride 1" : "") + (p->written ? "" : ", read-only");
      // An absent optional tensor keeps its slot: the launcher passes null.
      if (p->optional) what += p->presence == Symbol::Presence::Absent ? ", absent: pass a null pointer" : ", optional";
      kernelParams_.push_back(
          {pointerDecl(*p, n), n, what, AbiArg{AbiArgKind::TensorPointer, p->paramIndex, -1, "", p->type, n}});
      for (int axis : strideAxes(*p)) {
        std::string sn = names_.fresh(fmt::format("{}_stride{}", n, axis));
        strides_[{p, axis}] = sn;
        kernelParams_.push_back({ctx_.indexType() + (" " + sn), sn,
                                 fmt::format("stride of {} along axis {}, in elements", p->name, axis),
                                 AbiArg{AbiArgKind::Stride, p->paramIndex, axis, "", ctx_.indexScalarType(), sn}});
      }
    } else {
      kernelParams_.push_back({cppType(p->type) + " " + n, n, "scalar " + std::string(scalarName(p->type)),
                               AbiArg{AbiArgKind::Scalar, p->paramIndex, -1, "", p->type, n}});
    }
  }
  for (Symbol* d : fn_.dimSymbols) {
    if (ctx_.isStaticDim(d)) continue;
    const std::string& n = names_.declare(d);
    kernelParams_.push_back({ctx_.indexType() + (" " + n), n, "dynamic dim " + d->name,
                             AbiArg{AbiArgKind::Dim, -1, -1, d->name, ctx_.indexScalarType(), n}});
  }
  declareTensorMaps();
}

// A copy_tile box TMA can write as the destination lays it out: into a
// 128-byte-swizzled buffer in whole panel rows (the map's box one panel
// wide, one copy a panel), or into a row-major 2-D buffer whose rows are
// the box's (TMA's unswizzled mode, one copy; rows of 16-byte multiples).
// Other calls get no map: the helper copies their elements. Sizes at
// 32-wide warps, the only ones with TMA.
void FunctionPrinter::declareTensorMaps() {
  std::map<std::tuple<const Symbol*, int64_t, int64_t, int64_t>, TensorMapParam> byBox;
  std::function<void(const Expr&)> onExpr = [&](const Expr& e) {
    if (const auto* c = e.as<CallExpr>(); c && c->callee == "copy_tile" && c->args.size() == 10) {
      const Symbol* dst = c->args[0]->as<NameExpr>()->symbol;
      const Symbol* src = c->args[3]->as<NameExpr>()->symbol;
      const auto& dims = ctx_.spec->staticDims;
      auto at32 = [&](const Expr& x) -> int64_t {
        const PerWarpWidth v = evaluateForWarpWidths(x, dims, &ctx_.spec->typeArgs);
        return v.wave32 && !v.wave32->isFloat ? v.wave32->i : 0;
      };
      const int64_t rows = at32(*c->args[6]), cols = at32(*c->args[7]);
      const int64_t swizzle = dst->swizzle ? at32(*dst->swizzle) : 0;
      const int64_t bytes = int64_t(scalarBytes(src->type));
      const int64_t panel = swizzle == 128 ? 128 / bytes : cols;
      const bool swizzled = swizzle == 128 && cols >= panel && cols % panel == 0;
      const bool rowMajor = swizzle == 0 && dst->shape.size() == 2 && at32(*dst->shape[1]) == cols && cols <= 256 &&
                            cols * bytes % 16 == 0;
      const bool fits = rows >= 1 && rows <= 256 && (swizzled || rowMajor);
      if (fits) {
        auto key = std::make_tuple(src, rows, panel, swizzle);
        auto it = byBox.find(key);
        if (it == byBox.end()) {
          const int index = int(byBox.size());
          const std::string& base = names_.nameOf(src);
          TensorMapParam p{names_.fresh(fmt::format("{}_map{}", base, index)), ""};
          p.ready = names_.fresh(p.map + "_ready");
          AbiArg map{AbiArgKind::TensorMap, src->paramIndex, index, "", src->type, p.map};
          map.boxRows = int(rows);
          map.boxCols = int(panel);
          map.swizzle = int(swizzle);
          // The host launcher makes the map as the runtime does, from the
          // tensor's pointer, dims and strides as it has them (its own
          // parameters, the static dims' constexprs, consts written out); a
          // checked build's copies read no map, so it passes zeros.
          std::string mapArg = "__spn_tensor_map{}", readyArg = "0";
          if (!ctx_.checked) {
            const std::string made = names_.fresh(fmt::format("{}_tma{}", base, index));
            compileTimeValuesInline_ = true;
            const auto [s0, s1] = matrixStrides(*src, 0);
            launcherTensorMaps_.push_back(fmt::format(
                "const __spn_launch_tensor_map {} = __spn_make_tensor_map({}, {}, {}, {}, {}, sizeof({}), {}, {}, {});",
                made, base, dimExpr(*src, 0).text, dimExpr(*src, 1).text, s0, s1, cppType(src->type), rows, panel,
                swizzle));
            compileTimeValuesInline_ = false;
            mapArg = made + ".map";
            readyArg = made + ".ready";
          }
          kernelParams_.push_back({"const __grid_constant__ __spn_tensor_map " + p.map, p.map,
                                   fmt::format("tensor map of {}: boxes of {} x {}, {}", src->name, rows, panel,
                                               swizzle == 128 ? "128-byte swizzle" : "row-major"),
                                   map, mapArg});
          kernelParams_.push_back(
              {"int32_t " + p.ready, p.ready, fmt::format("1 where {} was made (TMA), else 0", p.map),
               AbiArg{AbiArgKind::TensorMapReady, -1, index, "", ScalarType::I32, p.ready}, readyArg});
          it = byBox.emplace(key, p).first;
        }
        tensorMapOfCall_[c] = it->second;
      }
    }
    forEachChild(e, onExpr);
  };
  std::function<void(const Block&)> onBlock = [&](const Block& b) {
    for (const auto& s : b) forEachChild(*s, onExpr, onBlock);
  };
  onBlock(fn_.kernel->body);
}

// A def's parameters: scalars, and for each tensor a pointer (then its
// strides, if strided); then the dims it reads, bound by each call.
std::vector<std::string> FunctionPrinter::declareFunctionParams() {
  std::vector<std::string> params;
  for (Symbol* p : fn_.params) {
    const std::string& n = names_.declare(p);
    if (p->kind != SymbolKind::TensorParam) {
      params.push_back(cppType(p->type) + " " + n);
      continue;
    }
    params.push_back(pointerDecl(*p, n));
    if (!p->strided) continue;
    for (int axis = 0; axis < static_cast<int>(p->shape.size()); ++axis) {
      std::string sn = names_.fresh(fmt::format("{}_stride{}", n, axis));
      strides_[{p, axis}] = sn;
      params.push_back(ctx_.indexType() + (" " + sn));
    }
  }
  for (Symbol* d : fn_.dimParams) params.push_back(ctx_.indexType() + (" " + names_.declare(d)));
  return params;
}

void FunctionPrinter::printKernel(const std::string& launchBounds) {
  declareKernelParams();
  if (fn_.capturesBlockScratch) blockScratchName_ = names_.fresh("__spn_reduce_scratch");
  std::vector<std::string> params;
  for (const auto& p : kernelParams_) params.push_back(p.decl);
  out_.mapToSource(fn_.kernel->range.begin.line, ctx_.sourcePath);
  out_.openScope(signature(fn_.minBlocksPerMultiprocessor
                               ? fmt::format("extern \"C\" __global__ __SPN_LAUNCH_BOUNDS({}, {}) void {}",
                                             launchBounds, fn_.minBlocksPerMultiprocessor, ctx_.functionNames.at(&fn_))
                               : fmt::format("extern \"C\" __global__ __launch_bounds__({}) void {}", launchBounds,
                                             ctx_.functionNames.at(&fn_)),
                           params));
  if (fn_.capturesBlockScratch) {
    // Block collectives need one slot per warp plus one for the result;
    // 8-byte slots fit every type they accept. block_argmax/argmin keep an
    // index beside each value: twice that, only where they are reached.
    if (fn_.blockScratchKeyValue) out_.linef("__shared__ uint64_t {}[2 * (__SPN_MAX_WARPS + 1)];", blockScratchName_);
    else out_.linef("__shared__ uint64_t {}[__SPN_MAX_WARPS + 1];", blockScratchName_);
  }
  printDynamicSharedDecls();
  printAlignmentAssumptions();
  printBody(fn_.kernel->body);
  out_.closeScope();
}

// The runtime checked these pointers at launch. Saying so lets the compiler
// merge neighbouring element accesses whose index it can prove keeps the
// alignment (a thread's run of 8 f16s at a multiple of 8) into one 16-byte
// vector access; it still never vectorizes what it cannot prove.
// A dim, row stride or dim expression known to be a multiple of its
// granularity (2 to 16 elements) keeps the rows of such a tensor aligned.
void FunctionPrinter::printAlignmentAssumptions() {
  for (const Symbol* p : fn_.params)
    if (p->kind == SymbolKind::TensorParam && ctx_.alignedTensors.count(p->name))
      out_.linef("{0} = __spn_assume_aligned<16>({0});  // 16-byte aligned at launch", name(p));
  auto assume = [&](const std::string& key, const std::string& value) {
    auto it = ctx_.divisible.find(key);
    if (it != ctx_.divisible.end())
      out_.linef("__builtin_assume({} % {} == 0);  // a multiple of {} at launch", value, it->second, it->second);
  };
  for (const Symbol* d : fn_.dimSymbols)
    if (!ctx_.isStaticDim(d)) assume(d->name, name(d));
  for (const Symbol* p : fn_.params) {
    if (p->kind != SymbolKind::TensorParam) continue;
    for (int axis : strideAxes(*p)) assume(strideDivisibleName(p->name, axis), strideName(p, axis));
    if (!p->strided)
      for (size_t axis = 1; axis < p->shape.size(); ++axis)
        assume(dimDivisibleName(p->name, static_cast<int>(axis)), paren(dimExpr(*p, axis), kMultiplicative + 1));
  }
  // A dim the grid covers in whole tiles: what tile_bounds.h proves tests
  // with, said to the device compiler too.
  if (ctx_.spec && &fn_ == &ctx_.kernel)
    for (const ExactGridCandidate& c : exactGridCandidates(fn_, ctx_.staticDims))
      if (ctx_.spec->exactGridDims.count(c.dim))
        for (const Symbol* d : fn_.dimSymbols)
          if (d->name == c.dim)
            out_.linef("__builtin_assume({} % {} == 0);  // a whole number of grid tiles at launch", name(d), c.tile);
}

// Shared buffers sized by a dynamic dim, in declaration order: slices of the
// launch's dynamic shared memory.
std::vector<const Symbol*> FunctionPrinter::dynamicSharedBuffers() const {
  std::vector<const Symbol*> dynamic;
  for (const Symbol* s : fn_.declared)
    if (s->kind == SymbolKind::SharedBuffer && isDynamicBuffer(ctx_, *s)) dynamic.push_back(s);
  return dynamic;
}

// The byte offset of each dynamic shared buffer (filled into `offsets` when
// given) and the total, as C++ expressions. A swizzled buffer starts on a
// multiple of 1024 bytes (its 8-row atoms are 1024-byte aligned for
// wgmma), the padding before it counted in the total; the base is then
// declared 1024-aligned.
std::string FunctionPrinter::dynamicSharedLayout(std::map<const Symbol*, std::string>* offsets) const {
  std::string offset = "0";
  for (const Symbol* s : dynamicSharedBuffers()) {
    if (s->swizzle && offset != "0") offset = "__spn_align1024(" + offset + ")";
    if (offsets) (*offsets)[s] = offset;
    std::string count;
    for (size_t i = 0; i < s->shape.size(); ++i)
      count += (i ? " * " : "") + paren(expr(*s->shape[i]), kMultiplicative + 1);
    std::string bytes = fmt::format("__spn_align16({} * sizeof({}))", count, cppType(s->type));
    offset = offset == "0" ? bytes : offset + " + " + bytes;
  }
  return offset;
}

void FunctionPrinter::printDynamicSharedDecls() {
  if (dynamicSharedBuffers().empty()) return;
  bool swizzled = false;
  for (const Symbol* s : dynamicSharedBuffers()) swizzled |= s->swizzle != nullptr;
  out_.line(swizzled ? "__SPN_DYNAMIC_SHARED_1024(__spn_dynamic_shared);"
                     : "__SPN_DYNAMIC_SHARED(__spn_dynamic_shared);");
  dynamicSharedLayout(&dynamicSharedOffsets_);
}

std::string FunctionPrinter::launcherValue(const Expr& e) {
  compileTimeValuesInline_ = true;
  std::string text = value(e);
  compileTimeValuesInline_ = false;
  return text;
}

std::string FunctionPrinter::launcherDynamicSharedBytes() {
  compileTimeValuesInline_ = true;
  std::string text = dynamicSharedLayout(nullptr);
  compileTimeValuesInline_ = false;
  return text;
}

void FunctionPrinter::printDeviceFunction() {
  std::vector<std::string> params = declareFunctionParams();
  for (const auto& cap : fn_.captures) {
    Symbol* s = cap.symbol;
    switch (cap.mode) {
      case CaptureMode::Pointer: params.push_back(pointerDecl(*s, names_.declare(s))); break;
      case CaptureMode::Stride: {
        std::string sn = names_.fresh(fmt::format("{}_stride{}", name(s), cap.axis));
        strides_[{s, cap.axis}] = sn;
        params.push_back(ctx_.indexType() + (" " + sn));
        break;
      }
      case CaptureMode::Value: params.push_back(cppType(s->type) + " " + names_.declare(s)); break;
      case CaptureMode::Reference: params.push_back(cppType(s->type) + "& " + names_.declare(s)); break;
      case CaptureMode::Dim: params.push_back(ctx_.indexType() + (" " + names_.declare(s))); break;
    }
  }
  if (fn_.capturesBlockScratch) {
    blockScratchName_ = names_.fresh("__spn_reduce_scratch");
    params.push_back("uint64_t* " + blockScratchName_);
  }
  FunctionDecl& f = *fn_.function;
  std::string returnType = cppType(fn_.returnType);
  if (!fn_.returnTuple.empty()) {
    printTupleResultStruct();
    returnType = ctx_.tupleResults.at(&fn_).typeName;
  }
  out_.mapToSource(f.range.begin.line, ctx_.sourcePath);
  out_.openScope(
      signature(fmt::format("__device__ __forceinline__ {} {}", returnType, ctx_.functionNames.at(&fn_)), params));
  printBody(f.body);
  out_.closeScope();
}

// The struct a tuple-returning function returns, just before it: hiprtc
// and nvrtc have no std::tuple. Mapped to the def's line, as the function.
void FunctionPrinter::printTupleResultStruct() {
  const TupleResult& result = ctx_.tupleResults.at(&fn_);
  out_.mapToSource(fn_.function->range.begin.line, ctx_.sourcePath);
  out_.openScope("struct " + result.typeName);
  for (size_t i = 0; i < result.members.size(); ++i)
    out_.linef("{} {};", cppType(fn_.returnTuple[i]), result.members[i]);
  out_.closeScope(";");
}

// ------------------------------------------------------------------ bodies

void FunctionPrinter::printBody(const Block& body) {
  // Every local gets its emitted name before any statement is printed, in
  // declaration order, so names do not depend on the order of first use.
  for (Symbol* s : fn_.declared) {
    if (s->kind == SymbolKind::Local || s->kind == SymbolKind::SharedBuffer || s->kind == SymbolKind::LocalBuffer ||
        s->kind == SymbolKind::Fragment)
      names_.declare(s);
  }
  printBlock(body);
}

void FunctionPrinter::printBlock(const Block& body) {
  dotSettledInBlock_.emplace_back();  // settleDotAccumulators: straight-line code of this block
  for (const auto& s : body) {
    printComments(comments_.before, static_cast<const Stmt*>(s.get()));
    printStmt(*s);
  }
  dotSettledInBlock_.pop_back();
  printComments(comments_.atEnd, &body);
}

// The author's own-line comments placed at `key` (passes/comment_placement).
template <typename Key>
void FunctionPrinter::printComments(const std::map<Key, std::vector<std::string>>& placed, Key key) {
  auto it = placed.find(key);
  if (it == placed.end()) return;
  for (const auto& line : it->second) {
    if (line.empty()) out_.blank();
    else out_.line(line);
  }
}

void FunctionPrinter::printPendingDeclarations(const Stmt& s) {
  auto it = plan_.declareBefore.find(&s);
  if (it == plan_.declareBefore.end()) return;
  for (Symbol* sym : it->second) out_.linef("{} {};", cppType(sym->type), name(sym));
}

void FunctionPrinter::printStmt(const Stmt& s) {
  printPendingDeclarations(s);
  const std::vector<const Symbol*> settled = settleDotAccumulators(s);
  printStmtBody(s);
  for (const Symbol* acc : settled) dotSettled_.erase(acc);
}

void FunctionPrinter::printStmtBody(const Stmt& s) {
  const bool printsNothing = s.kind == StmtKind::Nonlocal || s.kind == StmtKind::FuncDef ||  // outlined
                             s.kind == StmtKind::Pass;
  // A for maps itself: lines it prints before its header must not shift it.
  if (!printsNothing && s.kind != StmtKind::For) out_.mapToSource(s.range.begin.line, ctx_.sourcePath);
  switch (s.kind) {
    case StmtKind::Nonlocal:
    case StmtKind::FuncDef:
    case StmtKind::Pass: return;
    case StmtKind::Assign: printAssign(*s.as<AssignStmt>()); return;
    case StmtKind::AugAssign: printAugAssign(*s.as<AugAssignStmt>()); return;
    case StmtKind::ExprStmt: out_.line(unambiguous(expr(*s.as<ExprStmt>()->expr).text) + ";"); return;
    case StmtKind::If: printIf(*s.as<IfStmt>()); return;
    case StmtKind::While: {
      const auto& w = *s.as<WhileStmt>();
      out_.openScope("while (" + condition(*w.cond) + ")");
      // A checked build's watchdog: the cpu target stops a loop that runs
      // past the launch's time limit, naming it.
      if (ctx_.checked)
        out_.line(
            fmt::format("__spn_loop_tick(\"{}\", {}, {});", ctx_.sourcePath, s.range.begin.line, s.range.begin.col));
      printBlock(w.body);
      out_.closeScope();
      return;
    }
    case StmtKind::For: printFor(*s.as<ForStmt>()); return;
    case StmtKind::Assert: printAssert(*s.as<AssertStmt>()); return;
    case StmtKind::Break: out_.line("break;"); return;
    case StmtKind::Continue: out_.line("continue;"); return;
    case StmtKind::Return: {
      const auto& r = *s.as<ReturnStmt>();
      if (const auto* tuple = r.value ? r.value->as<TupleExpr>() : nullptr)
        out_.line("return " + tupleValue(*tuple) + ";");
      else if (r.value) out_.line("return " + storeValue(*r.value, fn_.returnType) + ";");
      else out_.line("return;");
      return;
    }
  }
}

// Only checked builds keep asserts (the driver prunes them otherwise): the
// failure names the .spn location, the condition and the message; the
// prelude's helper adds the block and thread and stops the kernel.
void FunctionPrinter::printAssert(const AssertStmt& a) {
  std::string condText;
  if (ctx_.sema.file)
    condText = ctx_.sema.file->text().substr(a.cond->range.begin.offset,
                                             a.cond->range.end.offset - a.cond->range.begin.offset);
  out_.line(fmt::format("if (!({})) __spn_assert_fail(\"{}\", {}, {}, {}, {});", value(*a.cond), ctx_.sourcePath,
                        a.range.begin.line, a.range.begin.col, cStringLiteral(condText), cStringLiteral(a.message)));
}

// `text` as a C string literal: quotes, backslashes and bytes outside
// printable ASCII escaped (octal, three digits, so no digit that follows
// extends the escape).
std::string FunctionPrinter::cStringLiteral(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') out += std::string("\\") + c;
    else if (u >= 0x20 && u < 0x7f) out += c;
    else out += fmt::format("\\{:03o}", u);
  }
  return out + "\"";
}

// A value stored into a location of type `target`: f16/bf16 targets take
// an explicit conversion from the float the arithmetic produced.
std::string FunctionPrinter::storeValue(const Expr& v, ScalarType target) const {
  if (isStorageOnly(target)) {
    if (v.type == target) return expr(v).text;
    return cppType(target) + "(" + value(v) + ")";
  }
  return value(v);
}

// `return a, b`: `stats_result{a, b}`, each value converted to its
// member's type.
std::string FunctionPrinter::tupleValue(const TupleExpr& values) {
  const TupleResult& result = ctx_.tupleResults.at(&fn_);
  std::string text = result.typeName + "{";
  for (size_t i = 0; i < values.elements.size(); ++i)
    text += (i ? ", " : "") + memberInit(*values.elements[i], fn_.returnTuple[i]);
  return text + "}";
}

// A member's value as a scalar return converts it, except that braces
// refuse narrowing conversions: those are written out (`float(i)`).
std::string FunctionPrinter::memberInit(const Expr& v, ScalarType member) {
  if (isStorageOnly(member)) return storeValue(v, member);
  ScalarType from = computeType(v.type);
  if (from == member || widensExactly(from, member)) return value(v);
  return cppType(member) + "(" + value(v) + ")";
}

// `a, x[i] = b, c` and `m, s = stats(v)` (docs/language.md 5.11): every
// value, then every index, is evaluated before the first store. A call's
// tuple is one temporary whose members are stored. A listed value that an
// earlier store of the statement could change goes into a temporary first
// (`const float b_new = a;` in a swap); the others print in their stores.
// Sema refused indices that read an earlier target, so indices print in
// place, unless the statement calls a def, a closure or an atomic: then
// every value and index is a temporary, in order.
void FunctionPrinter::printUnpack(const AssignStmt& a) {
  const auto& targets = a.target->as<TupleExpr>()->elements;
  const auto* values = a.value->as<TupleExpr>();
  // A call's tuple is evaluated whole before anything else: only the
  // indices' effects could then come out of order.
  bool effects = values && hasEffects(*values);
  for (const auto& t : targets)
    if (const auto* idx = t->as<IndexExpr>())
      for (const auto& i : idx->indices) effects = effects || hasEffects(*i);
  std::vector<std::string> stored(targets.size());  // each target's value, of the target's type
  if (values) {
    std::set<const Symbol*> storedBefore;
    for (size_t i = 0; i < targets.size(); ++i) {
      const Expr& v = *values->elements[i];
      const ScalarType type = targets[i]->type;
      stored[i] = storeValue(v, type);
      if (effects || readsAny(v, storedBefore)) {
        const Symbol* stem = storedSymbol(*targets[i]);
        std::string temp = names_.fresh(name(stem) + "_new");
        out_.linef("const {} {} = {};", cppType(type), temp, stored[i]);
        stored[i] = temp;
      }
      storedBefore.insert(storedSymbol(*targets[i]));
    }
  } else if (const auto& call = *a.value->as<CallExpr>(); argReduceBuiltin(call)) {
    // `m, j = warp_argmax(v, i)`: the prelude's pair (value, index).
    const std::vector<ScalarType> types = argReduceTypes(call);
    std::string temp = names_.fresh(call.callee + "_ret");
    out_.linef("const __spn_arg_pair<{}, {}> {} = {};", cppType(types.at(0)), cppType(types.at(1)), temp,
               expr(call).text);
    stored[0] = convertStored(temp + ".value", types[0], targets[0]->type);
    stored[1] = convertStored(temp + ".index", types[1], targets[1]->type);
  } else {
    const FunctionScope& callee = *call.symbol->scope;
    const TupleResult& result = ctx_.tupleResults.at(&callee);
    std::string temp = names_.fresh(call.callee + "_ret");
    out_.linef("const {} {} = {};", result.typeName, temp, expr(call).text);
    for (size_t i = 0; i < targets.size(); ++i)
      stored[i] = convertStored(temp + "." + result.members[i], callee.returnTuple[i], targets[i]->type);
  }
  if (effects) hoistUnpackIndices(targets);
  std::set<const Symbol*> declared;  // `a, a = ...` declares a once
  for (size_t i = 0; i < targets.size(); ++i) {
    const auto* n = targets[i]->as<NameExpr>();
    if (n && plan_.declaringUnpackTargets.count({&a, n->symbol}) && declared.insert(n->symbol).second)
      out_.linef("{} {} = {};", cppType(n->symbol->type), name(n->symbol), stored[i]);
    else out_.linef("{} = {};", target(*targets[i], Access::Write).text, stored[i]);
  }
  hoisted_.clear();
}

// Every index of the element targets, except literals and consts, into a
// temporary that the stores then read.
void FunctionPrinter::hoistUnpackIndices(const std::vector<ExprPtr>& targets) {
  for (const auto& t : targets) {
    const auto* idx = t->as<IndexExpr>();
    if (!idx) continue;
    const std::string& base = name(storedSymbol(*t));
    for (const auto& i : idx->indices) {
      if (printsAsLiteral(*i)) continue;
      std::string temp = names_.fresh(base + "_index");
      out_.linef("const {} {} = {};", cppType(i->type), temp, value(*i));
      hoisted_[i.get()] = temp;
    }
  }
}

void FunctionPrinter::printAssign(const AssignStmt& a) {
  if (a.target->as<TupleExpr>()) {
    printUnpack(a);
    return;
  }
  if (auto* n = a.target->as<NameExpr>()) {
    const Symbol* sym = n->symbol;
    if (sym->kind == SymbolKind::SharedBuffer || sym->kind == SymbolKind::LocalBuffer) {
      printScratchDecl(*sym, *a.value->as<CallExpr>());
      return;
    }
    if (sym->kind == SymbolKind::Fragment) {
      // Tiles in registers, zeroed (accumulators start at 0; operand tiles
      // are loaded before use).
      std::string dims;
      for (const Expr* d : sym->shape) dims += "[" + expr(*d).text + "]";
      if (sym->dotAccumulator) printDotAccumulatorDecl(*sym, dims);
      else out_.linef("{} {}{} = {{}};", fragmentType(*sym), name(sym), dims);
      return;
    }
    std::string rhs = storeValue(*a.value, sym->type);
    if (plan_.declaringAssignments.count(&a)) out_.linef("{} {} = {};", cppType(sym->type), name(sym), rhs);
    else out_.linef("{} = {};", name(sym), rhs);
    return;
  }
  if (const auto* idx = a.target->as<IndexExpr>();
      idx && idx->base->as<NameExpr>()->symbol->kind == SymbolKind::Fragment) {  // acc[i, j] = mma(...)
    out_.linef("{} = {};", expr(*a.target).text, expr(*a.value).text);
    return;
  }
  out_.linef("{} = {};", target(*a.target, Access::Write).text, storeValue(*a.value, a.target->type));
}

// The prelude's type of one tile of a fragment array (docs/language.md 8.11).
std::string FunctionPrinter::fragmentType(const Symbol& frag) {
  switch (frag.fragmentRole) {
    case Symbol::FragmentRole::A: return "__spn_mma_a<" + cppType(frag.type) + ">";
    case Symbol::FragmentRole::B: return "__spn_mma_b<" + cppType(frag.type) + ">";
    case Symbol::FragmentRole::Rows: return "__spn_mma_rows";
    case Symbol::FragmentRole::Acc:
    case Symbol::FragmentRole::None: break;
  }
  return "__spn_mma_acc";
}

// `for r, c, v in elements(acc[i, j])`: this lane's elements of the tile,
// unrolled, with their tile coordinates from the prelude's layout.
void FunctionPrinter::printElementsFor(const ForStmt& f) {
  std::vector<const Symbol*> vars{f.symbol};
  vars.insert(vars.end(), f.elementSymbols.begin(), f.elementSymbols.end());
  std::vector<std::string> emitted;
  for (const Symbol* var : vars) {
    std::string n = var->name;
    for (int suffix = 1;
         names_.taken(n) || std::find(activeLoopNames_.begin(), activeLoopNames_.end(), n) != activeLoopNames_.end();
         ++suffix)
      n = var->name + "_" + std::to_string(suffix);
    names_.bind(var, n);
    emitted.push_back(n);
  }
  std::string e = "e";
  for (int suffix = 1;
       names_.taken(e) || std::find(activeLoopNames_.begin(), activeLoopNames_.end(), e) != activeLoopNames_.end() ||
       std::find(emitted.begin(), emitted.end(), e) != emitted.end();
       ++suffix)
    e = "e_" + std::to_string(suffix);
  // The value is a reference into the tile where the body assigns it (the
  // assignment writes the element, docs/language.md 8.11), else a const
  // copy; a row fragment's value at the element's row is its slot
  // __spn_mma_row_slot(e).
  const Symbol* tile = f.elementsOf->as<IndexExpr>()->base->as<NameExpr>()->symbol;
  const bool rows = tile->fragmentRole == Symbol::FragmentRole::Rows;
  const Symbol* value = f.elementSymbols.size() > (rows ? 0 : 1) ? f.elementSymbols[rows ? 0 : 1] : nullptr;
  const char* valueType = value && assignsAny(f.body, {value}) ? "float&" : "const float";
  out_.line("#pragma unroll");
  out_.mapToSource(f.range.begin.line, ctx_.sourcePath);
  // The coordinates are printed only where the body names them: each is
  // the lane id (a volatile read) through the layout.
  if (rows) {
    out_.openScope(fmt::format("for (int {0} = 0; {0} < __SPN_MMA_ROWS; ++{0})", e));
    if (namesIn(f.body, f.symbol)) out_.linef("const int32_t {} = __spn_mma_rows_at({});", emitted[0], e);
    out_.linef("{} {} = {}.x[{}];", valueType, emitted[1], expr(*f.elementsOf).text, e);
    for (size_t k = 0; k < f.elementRows.size() && k + 2 < emitted.size(); ++k)
      out_.linef("const float {} = {}.x[{}];", emitted[k + 2], expr(*f.elementRows[k]).text, e);
  } else {
    out_.openScope(fmt::format("for (int {0} = 0; {0} < __SPN_MMA_N; ++{0})", e));
    if (namesIn(f.body, f.symbol)) out_.linef("const int32_t {} = __spn_mma_row({});", emitted[0], e);
    if (namesIn(f.body, f.elementSymbols[0])) out_.linef("const int32_t {} = __spn_mma_col({});", emitted[1], e);
    out_.linef("{} {} = {}.x[{}];", valueType, emitted[2], expr(*f.elementsOf).text, e);
    for (size_t k = 0; k < f.elementRows.size() && k + 3 < emitted.size(); ++k)
      out_.linef("const float {} = {}.x[__spn_mma_row_slot({})];", emitted[k + 3], expr(*f.elementRows[k]).text, e);
  }
  for (const std::string& n : emitted) activeLoopNames_.push_back(n);
  activeLoopNames_.push_back(e);
  printBlock(f.body);
  for (size_t k = 0; k <= emitted.size(); ++k) activeLoopNames_.pop_back();
  out_.closeScope();
}

void FunctionPrinter::printScratchDecl(const Symbol& buf, const CallExpr& call) {
  std::string count;
  for (size_t i = 0; i < buf.shape.size(); ++i)
    count += (i ? " * " : "") + paren(expr(*buf.shape[i]), kMultiplicative + 1);
  if (buf.barrierCount) {
    // Phase barriers: their words, then their initialization by thread 0,
    // which every thread waits for (a barrier of the block). Where the
    // block's buffers are dynamic, the words are too: a static array
    // beside a 1024-aligned dynamic base would cost up to 1 KB of padding
    // (a seventh 32 KB stage of samples/gemm_ws.spn did not fit for it).
    auto it = dynamicSharedOffsets_.find(&buf);
    if (it != dynamicSharedOffsets_.end()) {
      std::string at = it->second == "0" ? "__spn_dynamic_shared" : "__spn_dynamic_shared + " + it->second;
      out_.linef("uint64_t* {} = reinterpret_cast<uint64_t*>({});", name(&buf), at);
    } else {
      out_.linef("alignas(16) __shared__ uint64_t {}[{}];", name(&buf), count);
    }
    out_.linef("__spn_barriers_init({}, {}, {});", name(&buf), count, value(*buf.barrierCount));
    return;
  }
  if (buf.kind == SymbolKind::SharedBuffer) {
    auto it = dynamicSharedOffsets_.find(&buf);
    if (it != dynamicSharedOffsets_.end()) {
      // Sized by a dynamic dim: a slice of the launch's dynamic shared memory.
      std::string at = it->second == "0" ? "__spn_dynamic_shared" : "__spn_dynamic_shared + " + it->second;
      out_.linef("{}* {} = reinterpret_cast<{}*>({});", cppType(buf.type), name(&buf), cppType(buf.type), at);
    } else {
      // 16-byte aligned, so runs read from it may be single vector accesses
      // (nvcc assumes only the element's alignment otherwise); a swizzled
      // one 1024-byte aligned (its 8-row atoms, for wgmma).
      out_.linef("alignas({}) __shared__ {} {}[{}];", buf.swizzle ? 1024 : 16, cppType(buf.type), name(&buf), count);
      if (ctx_.checked) out_.linef("__spn_track_shared({}, sizeof {});", name(&buf), name(&buf));
    }
    return;
  }
  // Its dims are static here (passes/specialization_checks). The initial
  // value goes in by a loop of constant count over the array itself, not
  // through a helper taking its address: with the array passed to a
  // function, the AMD compiler kept it in scratch memory (matmul's
  // accumulator, 272 bytes on gfx90a), where this loop lets it promote the
  // array to registers (tests/golden/check_amd_registers.sh).
  // An initial value that may differ when evaluated again (a load, a
  // call) is evaluated once, before the loop, as the source says.
  const Expr& init = *call.args[2];
  std::string value = storeValue(init, buf.type);
  if (mayChangeWhenEvaluatedAgain(init)) {
    std::string once = names_.fresh(name(&buf) + "_init");
    out_.linef("const {} {} = {};", cppType(buf.type), once, value);
    value = once;
  }
  const std::string index = names_.fresh(name(&buf) + "_i");
  out_.linef("{} {}[{}];", cppType(buf.type), name(&buf), count);
  out_.line("#pragma unroll");
  out_.linef("for (int {} = 0; {} < {}; ++{}) {}[{}] = {};", index, index, count, index, name(&buf), index, value);
}

void FunctionPrinter::printAugAssign(const AugAssignStmt& a) {
  const char* op = a.op == BinaryOp::FloorDiv ? "/" : binaryOpSpelling(a.op);
  if (isStorageOnly(a.target->type)) {
    // f16/bf16 have no compound assignment of their own: widen, operate, narrow.
    out_.linef("{} = {}(float({}) {} {});", target(*a.target, Access::Write).text, cppType(a.target->type),
               target(*a.target, Access::Read).text, op, value(*a.value, kMultiplicative + 1));
    return;
  }
  out_.linef("{} {}= {};", target(*a.target, Access::Update).text, op, value(*a.value));
}

// The condition of an if or a while, or an expression statement. One
// printed as a functional cast (`bool(f(uint32_t(v), uint32_t(v)))`) also
// reads to C++ as a declaration (of `f`, with parameters named `v`): as a
// statement it is one, and the call never happens; as a condition g++ 12
// refuses the second `v` before it settles on the expression (clang and
// nvcc take it; found by the cpu fuzzer, seed 1840). Parentheses leave only
// the expression.
std::string FunctionPrinter::unambiguous(std::string text) {
  // What follows the cast's `(`: a name and `(` or `<` (a call, of a
  // template too) may read as a function declarator; a plain name or a
  // literal (`int32_t(i) < n`) not.
  auto castOfCall = [&](size_t open) {
    size_t at = open;
    while (at < text.size() && (std::isalnum(static_cast<unsigned char>(text[at])) || text[at] == '_')) ++at;
    return at > open && !std::isdigit(static_cast<unsigned char>(text[open])) && at < text.size() &&
           (text[at] == '(' || text[at] == '<');
  };
#define SPINDLE_CAST_PREFIX(E, N, C, B, F, S) \
  if (text.rfind(C "(", 0) == 0 && castOfCall(sizeof(C))) return "(" + text + ")";
  SPINDLE_SCALAR_TYPES(SPINDLE_CAST_PREFIX)
#undef SPINDLE_CAST_PREFIX
  return text;
}

// A condition is parenthesized whenever its text starts with a cast of a
// call, a call as a whole or not: g++ starts reading
// `uint64_t(f(int32_t(g), ...)) > 0` as a declaration too, and refuses what
// follows (found by the cpu fuzzer, seeds 400458, 400682).
std::string FunctionPrinter::condition(const Expr& e) const { return unambiguous(value(e)); }

// `j + c <= stop` in the body of `for j in range(start, stop, step)` (step
// > 0) is always true when j and stop are multiples of some g >= c (the
// divisibility analysis: --divisible dims, multiples of VEC): j < stop
// then means j <= stop - g. That is the test a run-by-run loop makes for
// its last, partial run (`if j + VEC <= N: <run> else: <tail>`); a
// hand-written kernel drops the tail when the host guarantees N % VEC == 0,
// and so does the specialization that knows it. Returns why, or nothing.
std::optional<std::string> FunctionPrinter::runFitsBeforeStop(const Expr& cond) const {
  if (!ctx_.spec || &fn_ != &ctx_.kernel) return std::nullopt;
  const auto* le = cond.as<BinaryExpr>();
  const auto* sum = le && le->op == BinaryOp::Le ? le->lhs->as<BinaryExpr>() : nullptr;
  if (!sum || sum->op != BinaryOp::Add) return std::nullopt;
  const auto* var = sum->lhs->as<NameExpr>();
  const Expr* offset = sum->rhs.get();
  if (!var) {
    var = sum->rhs->as<NameExpr>();
    offset = sum->lhs.get();
  }
  const auto* stop = le->rhs->as<NameExpr>();
  if (!var || !var->symbol || !stop || !stop->symbol) return std::nullopt;
  const ForStmt* loop = nullptr;
  for (const ForStmt* f : activeLoops_)
    if (f->symbol == var->symbol) loop = f;
  if (!loop || loop->isStatic || loop->stepSign != 1) return std::nullopt;
  const auto* loopStop = loop->rangeArgs[loop->rangeArgs.size() >= 2 ? 1 : 0]->as<NameExpr>();
  if (!loopStop || loopStop->symbol != stop->symbol || !stopIsStable(*loop, *loopStop)) return std::nullopt;
  if (!divisibility_) divisibility_ = std::make_unique<Divisibility>(fn_, *ctx_.spec);
  int64_t c = 0;
  if (!divisibility_->constantValue(*offset, c) || c < 1) return std::nullopt;
  const int64_t g = std::min(divisibility_->of(*var), divisibility_->of(*stop));
  if (g >= Divisibility::kZero || c > g) return std::nullopt;
  return fmt::format("{} + {} <= {} always: {} and {} are multiples of {} and {} < {}", var->name, c, stop->name,
                     var->name, stop->name, g, var->name, stop->name);
}

Enclosing FunctionPrinter::enclosing() const {
  Enclosing around;
  for (const ForStmt* f : activeLoops_)
    if (!f->isStatic && !f->rangeArgs.empty() && stopIsStable(*f, *f->rangeArgs[f->rangeArgs.size() >= 2 ? 1 : 0]))
      around.loops.push_back(f);
  around.guards = activeGuards_;
  return around;
}

// A branch's body, printed where its condition's conjuncts hold: those
// whose locals the body does not assign are facts for the tests in it
// (tile_bounds.h, the third base).
void FunctionPrinter::printGuardedBody(const Expr& cond, const Block& body) {
  const size_t before = activeGuards_.size();
  std::function<void(const Expr&)> add = [&](const Expr& e) {
    if (const auto* b = e.as<BinaryExpr>(); b && b->op == BinaryOp::And) {
      add(*b->lhs);
      add(*b->rhs);
      return;
    }
    std::set<const Symbol*> locals;
    collectLocals(e, locals);
    if (!assignsAny(body, locals)) activeGuards_.push_back(&e);
  };
  add(cond);
  printBlock(body);
  activeGuards_.resize(before);
}

// Why `cond` is always true here (a run before a loop's stop, or a bounds
// test a tile proves: tile_bounds.h), or nothing.
std::optional<std::string> FunctionPrinter::provenTrue(const Expr& cond) const {
  if (auto why = runFitsBeforeStop(cond)) return why;
  return tiles_.alwaysTrue(cond, enclosing());
}

// An `if` whose condition is proven true prints its then-branch alone; one
// some of whose conjuncts are proven tests the others. Each proven test
// leaves a comment saying why.
void FunctionPrinter::printIf(const IfStmt& s) {
  std::vector<const Expr*> conjuncts, kept;
  std::vector<std::string> why;
  std::function<void(const Expr&)> split = [&](const Expr& e) {
    if (const auto* b = e.as<BinaryExpr>(); b && b->op == BinaryOp::And) {
      split(*b->lhs);
      split(*b->rhs);
      return;
    }
    if (auto w = provenTrue(e)) why.push_back(*w);
    else kept.push_back(&e);
  };
  split(*s.cond);
  for (const std::string& w : why) out_.line("// " + w);
  if (kept.empty()) {
    out_.openScope("");
    printGuardedBody(*s.cond, s.thenBody);
    out_.closeScope();
    return;
  }
  std::string first;
  if (why.empty()) {
    first = condition(*s.cond);
  } else {
    for (const Expr* e : kept)
      first += (first.empty() ? "" : " && ") + (kept.size() == 1 ? value(*e) : value(*e, kLogicalAnd + 1));
    first = unambiguous(first);
  }
  const IfStmt* cur = &s;
  out_.openScope("if (" + first + ")");
  printGuardedBody(*cur->cond, cur->thenBody);
  while (!cur->elseBody.empty()) {
    const auto* elif = cur->elseBody.size() == 1 ? cur->elseBody[0]->as<IfStmt>() : nullptr;
    if (elif && elif->isElif) {
      // Comments before the `elif` line close the branch above it.
      printComments(comments_.before, static_cast<const Stmt*>(elif));
      cur = elif;
      out_.mapToSource(cur->range.begin.line, ctx_.sourcePath);
      if (auto w = provenTrue(*cur->cond)) {  // the last branch that can run
        out_.continueScope("else");
        out_.line("// " + *w);
        printGuardedBody(*cur->cond, cur->thenBody);
        break;
      }
      out_.continueScope("else if (" + condition(*cur->cond) + ")");
      printGuardedBody(*cur->cond, cur->thenBody);
      continue;
    }
    out_.continueScope("else");
    printBlock(cur->elseBody);
    break;
  }
  out_.closeScope();
}

// Python evaluates a range's stop once; C++ re-evaluates the condition (and
// __spn_range_next reads it too). The two agree unless evaluating the stop
// again may give another value or do something again: a local the body
// changes, an element (the body may store there), a call of a def or
// closure, an atomic, a collective (a barrier or a warp meeting, which every
// thread must reach equally often). Only then is the stop hoisted into a
// constant, so loops to a dim keep their plain form.
bool FunctionPrinter::stopIsStable(const ForStmt& f, const Expr& stop) const {
  std::set<const Symbol*> locals;
  collectLocals(stop, locals);
  return !mayChangeWhenEvaluatedAgain(stop) && (locals.empty() || !assignsAny(f.body, locals));
}

std::string FunctionPrinter::hoistRangeArg(const ForStmt& f, const Expr& arg, const std::string& suffix) {
  std::string hoisted = names_.fresh(name(f.symbol) + suffix);
  out_.mapToSource(f.range.begin.line, ctx_.sourcePath);
  out_.linef("const {} {} = {};", cppType(f.symbol->type), hoisted, value(arg));
  return hoisted;
}

// static_range unrolls fully, so its bounds must be known here: consts and
// dims that are static in this specialization.
// A run copy the divisibility analysis proves aligned (passes/vector_runs)
// prints as one prelude call that moves whole words instead of the loop:
// the device compiler need not prove the alignment itself (it often cannot:
// `wte[ix * C + c + k]` with `ix` a loaded token id). A checked build keeps
// the element loop, whose accesses are bounds-checked one by one, and checks
// the alignment the analysis proved before it. False when `f` is not such
// a loop.
bool FunctionPrinter::printVectorRun(const ForStmt& f) {
  if (!ctx_.spec || &fn_ != &ctx_.kernel || !f.isStatic) return false;
  if (!divisibility_) divisibility_ = std::make_unique<Divisibility>(fn_, *ctx_.spec);
  auto run = analyzeRunCopy(f, ctx_.kernel, *divisibility_, *ctx_.spec, ctx_.sema.file->text());
  if (!run || !run->wordBytes) return false;
  // The address of the run's first element: the element with `e + k` as e.
  const Expr& last = *run->element->indices.back();
  std::string start = value(*run->runStart);
  if (expr(*run->runStart).prec < kPostfix) start = "(" + start + ")";
  hoisted_[&last] = start;
  const std::string address =
      "&" + name(run->tensor) + "[" + flatIndex(*run->tensor, run->element->indices, /*narrow=*/true) + "]";
  hoisted_.erase(&last);
  // A load from a tensor the kernel never writes (`const __restrict__`)
  // takes the read-only path (ld.global.nc) unasked: nvcc infers it for
  // such a tensor's plain loads, but not once the pointer carries the
  // alignment assumption of an aligned specialization (measured: the
  // hand-written kernels' LDG.E.128.CONSTANT became LDG.E.128).
  const bool readOnly = !run->store && !run->tensor->written;
  const char* hint = !run->hint                             ? (readOnly ? "_readonly" : "")
                     : run->hint->callee == "load_stream"   ? "_stream"
                     : run->hint->callee == "load_readonly" ? "_readonly"
                     : run->hint->callee == "store_stream"  ? "_stream"
                                                            : "";
  out_.mapToSource(f.range.begin.line, ctx_.sourcePath);
  if (ctx_.checked) {
    // The generator's proof, tested: a failure is a bug in the analysis or
    // a false multiple_of promise.
    out_.linef("__spn_check_run_aligned(\"{}\", {}, {}, \"{}\", {}, {});", ctx_.sourcePath,
               run->element->range.begin.line, run->element->range.begin.col, run->tensor->name, address,
               run->wordBytes);
    return false;
  }
  const int64_t words = run->bytes / run->wordBytes;
  out_.linef("// vector {} of {} bytes ({} {} of {}, {} word{} of {} bytes)", run->store ? "store" : "load", run->bytes,
             run->length, scalarName(run->tensor->type), run->tensor->name, words, words == 1 ? "" : "s",
             run->wordBytes);
  // L[k] is the local array itself; L[b + k] starts at &L[b] (checked
  // builds, which check each element's index, keep the loop).
  const std::string local =
      run->localStart ? "&" + name(run->local) + "[" + value(*run->localStart) + "]" : name(run->local);
  if (run->store) out_.linef("__spn_store_run{}<{}, {}>({}, {});", hint, run->length, run->wordBytes, address, local);
  else out_.linef("__spn_load_run{}<{}, {}>({}, {});", hint, run->length, run->wordBytes, local, address);
  return true;
}

// With 32-bit indices, an i64 range loop whose start, stop and step the
// index bounds keep within [0, 2^31) counts in 32 bits (reads of the
// variable widen it, so what the body computes is unchanged):
//   - in an int32_t where j + step cannot pass INT32_MAX (stop - 1 + step
//     fits): signed, so the device compiler can count the trips and unroll,
//     and a 1024-thread kernel keeps to 32 registers (act_and_mul: 35
//     registers with an int64_t counter, half the occupancy, 1.28-1.44x
//     the hand-written kernel's time);
//   - else in a uint32_t where the i64 form would step through the
//     overflow-safe __spn_range_next (a stop sema cannot bound): j + step
//     stays below 2^32, so a plain increment cannot wrap before the test;
//   - else not at all: an unsigned counter may wrap as far as the device
//     compiler knows, so it does not unroll (bias_gelu: 1.36x with a
//     uint32_t counter, 1.00x with int64_t).
// A closure capturing the variable keeps the i64 form.
FunctionPrinter::LoopCounter FunctionPrinter::loopCounter32(const ForStmt& f, const Expr* start, const Expr& stop,
                                                            bool hoistStop) const {
  if (!ctx_.index32 || f.isStatic || hoistStop || f.stepSign != 1) return LoopCounter::Wide;
  if (f.symbol->type != ScalarType::I64) return LoopCounter::Wide;
  auto range = [&](const Expr* e) { return e ? bounds_.of(*e) : std::optional<IndexRange>(IndexRange{0, 0}); };
  auto first = range(start), last = range(&stop);
  auto by = f.rangeArgs.size() == 3 ? range(f.rangeArgs[2].get()) : std::optional<IndexRange>(IndexRange{1, 1});
  if (!first || !last || !by || first->lo < 0 || first->hi > INT32_MAX || last->lo < 0 || last->hi > INT32_MAX ||
      by->lo < 1 || by->hi > INT32_MAX)
    return LoopCounter::Wide;
  for (const auto& [fn, name] : ctx_.functionNames)
    for (const Capture& cap : fn->captures)
      if (cap.symbol == f.symbol) return LoopCounter::Wide;
  // Each printed in int32_t arithmetic (signed32 may still refuse a
  // partial result it cannot bound).
  const bool printable =
      (!start || signed32(*start)) && signed32(stop) && (f.rangeArgs.size() != 3 || signed32(*f.rangeArgs[2]));
  if (last->hi - 1 + by->hi <= INT32_MAX && printable) return LoopCounter::Signed;
  return f.plainIncrement ? LoopCounter::Wide : LoopCounter::Unsigned;
}

// Whether `v += step` cannot pass the variable's largest value where sema
// could not tell (a run-time step, a stop that is no dim): with 32-bit
// indices the index bounds may show that the last value before the stop
// plus the largest step fits (`range(tid, 64 * 256, block_dim())`).
bool FunctionPrinter::incrementProvenInRange(const ForStmt& f, const Expr& stop) const {
  if (f.stepSign != 1 || !isInteger(f.symbol->type)) return false;
  const int64_t typeMax = integerTypeRange(f.symbol->type).hi;
  auto last = bounds_.of(stop);
  auto by = f.rangeArgs.size() == 3 ? bounds_.of(*f.rangeArgs[2]) : std::optional<IndexRange>(IndexRange{1, 1});
  return last && by && last->hi <= typeMax && by->hi <= typeMax && last->hi - 1 <= typeMax - by->hi;
}

void FunctionPrinter::printFor(const ForStmt& f) {
  if (f.elementsOf) return printElementsFor(f);
  if (printVectorRun(f)) return;
  const Symbol* var = f.symbol;
  // Sibling loops may reuse a name; a nested loop that reuses its parent's
  // name gets a suffix so no declaration shadows another.
  auto inUse = [&](const std::string& n) {
    return std::find(activeLoopNames_.begin(), activeLoopNames_.end(), n) != activeLoopNames_.end() || names_.taken(n);
  };
  std::string varName = var->name;
  for (int suffix = 1; inUse(varName); ++suffix) varName = var->name + "_" + std::to_string(suffix);
  names_.bind(var, varName);

  const Expr* start = f.rangeArgs.size() >= 2 ? f.rangeArgs[0].get() : nullptr;
  const Expr& stop = *f.rangeArgs[f.rangeArgs.size() >= 2 ? 1 : 0];
  const int64_t step = f.step;  // compile-time, or 0 for a run-time step (sema_types.cpp, checkStep)
  // Python evaluates start, stop and step in that order, each once: a start
  // with effects goes first when the stop or the step is hoisted.
  const bool hoistStop = !stopIsStable(f, stop);
  const LoopCounter counter = loopCounter32(f, start, stop, hoistStop);
  const bool narrow = counter != LoopCounter::Wide, isSigned = counter == LoopCounter::Signed;
  // The start, stop and step in the counter's type.
  auto narrowed = [&](const Expr& e) { return isSigned ? *signed32(e) : unsigned32(e); };
  std::string init = start && hasEffects(*start) && (hoistStop || step == 0) ? hoistRangeArg(f, *start, "_start")
                     : narrow && start                                       ? narrowed(*start)
                     : start                                                 ? value(*start)
                                                                             : "0";
  std::string bound = hoistStop ? hoistRangeArg(f, stop, "_stop")
                      : narrow  ? narrowed(stop)
                                : value(stop, kRelational + 1);
  const std::string counterType = isSigned ? "int32_t" : narrow ? "uint32_t" : cppType(var->type);
  // The step as the author wrote it (BLOCK, not 256); a run-time one is
  // evaluated once, before the loop, as Python does.
  std::string signedStep;
  if (step == 0) {
    const Expr& s = *f.rangeArgs[2];
    signedStep = names_.fresh(varName + "_step");
    out_.mapToSource(f.range.begin.line, ctx_.sourcePath);
    out_.linef("const {} {} = {};", narrow ? counterType : cppType(s.type), signedStep,
               narrow ? narrowed(s) : value(s));
  } else {
    signedStep = f.rangeArgs.size() == 3 && step > 0 ? value(*f.rangeArgs[2]) : std::to_string(step);
  }
  // A step of unknown sign picks the direction at run time; zero runs the
  // loop no times.
  std::string cond = f.stepSign == 1   ? fmt::format("{} < {}", varName, bound)
                     : f.stepSign == 2 ? fmt::format("{} > 0 && {} < {}", signedStep, varName, bound)
                     : f.stepSign < 0
                         ? fmt::format("{} > {}", varName, bound)
                         : fmt::format("{s} > 0 ? {v} < {b} : ({s} < 0 && {v} > {b})", fmt::arg("s", signedStep),
                                       fmt::arg("v", varName), fmt::arg("b", bound));
  // The overflow-safe step where a plain one might pass the type's limit;
  // its sign-free form where the step is known positive.
  const bool plainIncrement = f.plainIncrement || narrow || incrementProvenInRange(f, stop);
  std::string incr = !plainIncrement
                         ? fmt::format("{v} = {next}({v}, {b}, {s})", fmt::arg("v", varName),
                                       fmt::arg("next", f.stepSign == 1 ? "__spn_range_next_up" : "__spn_range_next"),
                                       fmt::arg("b", bound), fmt::arg("s", signedStep))
                     : step == 0  ? fmt::format("{} += {}", varName, signedStep)
                     : step == 1  ? "++" + varName
                     : step == -1 ? "--" + varName
                     : step > 0   ? fmt::format("{} += {}", varName, signedStep)
                                  : fmt::format("{} -= {}", varName, -step);
  if (f.isStatic) out_.line("#pragma unroll");
  // The header on its own line as compilers report it (a hoisted bound or
  // the pragma above took lines of their own).
  out_.mapToSource(f.range.begin.line, ctx_.sourcePath);
  out_.openScope(fmt::format("for ({} {} = {}; {}; {})", counterType, varName, init, cond, incr));
  activeLoopNames_.push_back(varName);
  activeLoops_.push_back(&f);
  if (narrow) loopVars32_[var] = isSigned;
  printBlock(f.body);
  loopVars32_.erase(var);
  activeLoops_.pop_back();
  activeLoopNames_.pop_back();
  out_.closeScope();
}

}  // namespace spindle
