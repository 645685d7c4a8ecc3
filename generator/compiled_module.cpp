// The generator's library API (spindle/generator.h).
#include <fmt/format.h>

#include "frontend/diagnostics.h"
#include "generate.h"
#include "launch_geometry.h"
#include "load_module.h"
#include "passes/capture_analysis.h"
#include "passes/exact_grid.h"
#include "sema/const_eval.h"
#include "sema/sema.h"
#include "spindle/generator.h"

namespace spindle {

struct CompiledModule::Impl {
  std::shared_ptr<SourceFile> file;
  // Never changed after loading: generate() specializes a copy of its own.
  LoadedModule frontend;
  // withConsts(): the const values this module was loaded with, part of
  // every specialization it generates (and so of every key).
  std::map<std::string, ConstOverride> consts;

  // `spec` with this module's own consts, checked and canonical.
  Specialization effective(const Specialization& spec) const {
    Specialization s = spec;
    for (const auto& [name, value] : consts) {
      auto [it, added] = s.consts.emplace(name, value);
      if (!added && it->second != value)
        throw GeneratorError(fmt::format("--const {}: this module was loaded with another value for it", name));
    }
    return checkConsts(*frontend.sema, std::move(s));
  }
  // The module's sema with `spec`'s const values: its own when they are the
  // ones it was loaded with, else a copy loaded with them.
  LoadedModule copyWith(const Specialization& spec) const {
    DiagnosticEngine diags;
    LoadedModule copy = loadModule(file, diags, constValues(spec));
    if (!copy.sema) throw GeneratorError(diags.renderAll());
    return copy;
  }
};

CompiledModule::CompiledModule() : impl_(std::make_unique<Impl>()) {}
CompiledModule::~CompiledModule() = default;

namespace {

// A dim expression (sema allows literals, consts, dim symbols, + - * //)
// in postfix order, and as text for messages.
void dimProgram(const Expr& e, std::vector<DimOp>& out) {
  if (const auto* b = e.as<BinaryExpr>()) {
    dimProgram(*b->lhs, out);
    dimProgram(*b->rhs, out);
    DimOp op;
    op.kind = b->op == BinaryOp::Add   ? DimOp::Kind::Add
              : b->op == BinaryOp::Sub ? DimOp::Kind::Sub
              : b->op == BinaryOp::Mul ? DimOp::Kind::Mul
                                       : DimOp::Kind::FloorDiv;
    out.push_back(op);
    return;
  }
  DimOp push;
  if (const auto* n = e.as<NameExpr>(); n && n->symbol && n->symbol->kind == SymbolKind::DimSymbol) {
    push.kind = DimOp::Kind::Symbol;
    push.symbol = n->name;
  } else if (const auto* c = e.as<NameExpr>(); c && c->symbol) {
    push.value = c->symbol->value.i;  // a const
  } else if (const auto* lit = e.as<IntLitExpr>()) {
    push.value = static_cast<int64_t>(lit->value);
  }
  out.push_back(push);
}

std::string dimText(const Expr& e) {
  if (const auto* b = e.as<BinaryExpr>()) {
    auto side = [](const Expr& s) { return s.as<BinaryExpr>() ? "(" + dimText(s) + ")" : dimText(s); };
    return side(*b->lhs) + " " + binaryOpSpelling(b->op) + " " + side(*b->rhs);
  }
  if (const auto* n = e.as<NameExpr>()) return n->name;
  if (const auto* lit = e.as<IntLitExpr>()) return std::to_string(lit->value);
  return "?";
}

KernelInfo describeKernel(const FunctionScope& k) {
  KernelInfo info;
  info.name = k.name;
  for (const auto& tp : k.kernel->typeParams) {
    if (tp.isTypeParam()) info.typeParams.push_back(tp.name);
    else info.compileTimeParams.push_back({tp.name, tp.kindName});
  }
  for (const Symbol* p : k.params) {
    KernelParamInfo param;
    param.name = p->name;
    param.isTensor = p->kind == SymbolKind::TensorParam;
    param.typeParam = p->typeParam;
    param.dtype = p->typeParam.empty() ? p->type : ScalarType::Invalid;
    param.strided = p->strided;
    param.writes = p->written;
    param.accessedInRuns = p->accessedInRuns;
    for (const Expr* d : p->shape) {
      DimInfo dim;
      if (auto* n = d->as<NameExpr>(); n && n->symbol && n->symbol->kind == SymbolKind::DimSymbol) {
        dim.isSymbol = true;
        dim.symbol = n->name;
      } else if (auto* n2 = d->as<NameExpr>(); n2 && n2->symbol) {
        dim.value = n2->symbol->value.i;  // a const
      } else if (auto* lit = d->as<IntLitExpr>()) {
        dim.value = static_cast<int64_t>(lit->value);
      } else if (d->as<BinaryExpr>()) {
        if (auto v = evaluateConst(*d, constsOnly())) {
          dim.value = v->i;  // consts and literals only: a number
        } else {
          dimProgram(*d, dim.expression);
          dim.expressionText = dimText(*d);
        }
      }
      param.dims.push_back(dim);
    }
    param.optional = p->optional;
    info.params.push_back(std::move(param));
  }
  for (const Symbol* d : k.dimSymbols) {
    info.dimSymbols.push_back(d->name);
    if (d->staticDeclared) info.staticDims.push_back(d->name);
  }
  for (const Symbol* d : runRowDimSymbols(k)) info.runRowDims.push_back(d->name);
  for (const ExactGridCandidate& c : exactGridCandidates(k, {})) info.exactGridDims.push_back({c.dim, c.tile});
  info.gridUsesResidentBlocks = k.gridUsesResidentBlocks;
  for (const Symbol* s : k.launchScalars) info.launchScalars.push_back(s->name);
  info.tune = k.tune;
  for (const auto& group : k.aliasGroups) {
    info.aliasGroups.emplace_back();
    for (const Symbol* s : group) info.aliasGroups.back().push_back(s->name);
  }
  return info;
}

}  // namespace

std::optional<int64_t> evaluateDim(const DimInfo& dim, const std::map<std::string, int64_t>& dims) {
  auto symbolValue = [&](const std::string& name) -> std::optional<int64_t> {
    auto it = dims.find(name);
    if (it == dims.end()) return std::nullopt;
    return it->second;
  };
  if (dim.isSymbol) return symbolValue(dim.symbol);
  if (dim.expression.empty()) return dim.value;
  std::vector<__int128> stack;
  for (const DimOp& op : dim.expression) {
    if (op.kind == DimOp::Kind::Number || op.kind == DimOp::Kind::Symbol) {
      auto v = op.kind == DimOp::Kind::Number ? std::optional<int64_t>(op.value) : symbolValue(op.symbol);
      if (!v) return std::nullopt;
      stack.push_back(*v);
      continue;
    }
    if (stack.size() < 2) return std::nullopt;
    __int128 r = stack.back();
    stack.pop_back();
    __int128& l = stack.back();
    if (op.kind == DimOp::Kind::FloorDiv && r == 0) return std::nullopt;
    l = op.kind == DimOp::Kind::Add   ? l + r
        : op.kind == DimOp::Kind::Sub ? l - r
        : op.kind == DimOp::Kind::Mul ? l * r
                                      : l / r;
    if (l > INT64_MAX || l < INT64_MIN) return std::nullopt;
  }
  if (stack.size() != 1) return std::nullopt;
  return int64_t(stack.back());
}

std::unique_ptr<CompiledModule> CompiledModule::fromString(const std::string& name, const std::string& text,
                                                           DiagnosticEngine& diags) {
  std::unique_ptr<CompiledModule> m(new CompiledModule());
  m->impl_->file = std::make_shared<SourceFile>(name, text);
  m->impl_->frontend = loadModule(m->impl_->file, diags);
  if (diags.hasErrors() || !m->impl_->frontend.sema) return nullptr;
  for (auto* k : m->impl_->frontend.sema->kernels) m->kernels_.push_back(describeKernel(*k));
  return m;
}

std::unique_ptr<CompiledModule> CompiledModule::withConsts(const std::map<std::string, ConstOverride>& consts) const {
  Specialization values;
  values.consts = consts;
  values = impl_->effective(values);
  std::unique_ptr<CompiledModule> m(new CompiledModule());
  m->impl_->file = impl_->file;
  m->impl_->consts = values.consts;
  m->impl_->frontend = impl_->copyWith(values);
  for (auto* k : m->impl_->frontend.sema->kernels) m->kernels_.push_back(describeKernel(*k));
  return m;
}

std::unique_ptr<CompiledModule> CompiledModule::fromFile(const std::string& path, DiagnosticEngine& diags) {
  std::string error;
  auto file = SourceFile::load(path, error);
  if (!file) throw GeneratorError(error);
  return fromString(path, file->text(), diags);
}

namespace {
std::unique_ptr<CompiledModule> orModuleError(std::unique_ptr<CompiledModule> m, const DiagnosticEngine& diags) {
  if (!m || diags.hasErrors()) throw ModuleError(diags.renderAll());
  return m;
}
}  // namespace

std::unique_ptr<CompiledModule> CompiledModule::load(const std::string& path) {
  DiagnosticEngine diags;
  auto m = fromFile(path, diags);
  return orModuleError(std::move(m), diags);
}

std::unique_ptr<CompiledModule> CompiledModule::loadString(const std::string& name, const std::string& text) {
  DiagnosticEngine diags;
  auto m = fromString(name, text, diags);
  return orModuleError(std::move(m), diags);
}

const std::string& CompiledModule::path() const { return impl_->file->path(); }

const KernelInfo* CompiledModule::findKernel(const std::string& name) const {
  for (const auto& k : kernels_)
    if (k.name == name) return &k;
  return nullptr;
}

std::string CompiledModule::specializationKey(const std::string& kernel, const Specialization& spec) const {
  return spindle::specializationKey(*impl_->frontend.sema, kernel, impl_->effective(spec));
}

GeneratedKernel CompiledModule::generate(const std::string& kernel, const Specialization& spec) const {
  // Specializing types, analyzes and prunes the module in place, so it
  // works on a copy of its own: the module loaded again from its text
  // (a whole generation, printing included, takes about half a
  // millisecond; the compile that follows a miss takes hundreds). The text
  // was checked when this module was loaded; only const values given here
  // can make it fail (a const others divide by turned zero).
  Specialization s = impl_->effective(spec);
  LoadedModule copy = impl_->copyWith(s);
  return generateKernel(*copy.sema, kernel, s);
}

LaunchGeometry CompiledModule::launchGeometry(const std::string& kernel, const Specialization& spec,
                                              const std::map<std::string, int64_t>& values,
                                              const ResidentBlocksQuery& residentBlocks, int64_t warpSize) const {
  Specialization s = impl_->effective(spec);
  if (s.consts == impl_->consts)
    return computeLaunchGeometry(*impl_->frontend.sema, kernel, s, values, residentBlocks, warpSize);
  // Other const values than this module's: evaluated on a copy loaded with
  // them (slower; a runtime kernel uses withConsts() once instead).
  LoadedModule copy = impl_->copyWith(s);
  return computeLaunchGeometry(*copy.sema, kernel, s, values, residentBlocks, warpSize);
}

const SourceModule& CompiledModule::ast() const { return *impl_->frontend.module; }
const SemaModule& CompiledModule::sema() const { return *impl_->frontend.sema; }

}  // namespace spindle
