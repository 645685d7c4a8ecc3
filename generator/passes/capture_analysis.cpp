#include "capture_analysis.h"

#include "frontend/ast_walk.h"
#include "sema/tensor_arguments.h"

#include <algorithm>
#include <functional>

namespace spindle {

namespace {

void collectDimSymbols(const Expr& e, std::vector<Symbol*>& out) {
  if (const auto* n = e.as<NameExpr>()) {
    Symbol* s = n->symbol;
    if (s && s->kind == SymbolKind::DimSymbol && std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
    return;
  }
  forEachChild(e, [&](const Expr& child) { collectDimSymbols(child, out); });
}

// One closure's captures while the analysis runs: symbol -> mode, plus the
// tensors that imply dims and strides.
struct CaptureSet {
  std::map<Symbol*, CaptureMode> modes;
  std::map<Symbol*, Symbol*> impliedBy;  // dim symbol -> first tensor that needs it
  bool blockScratch = false;
  bool blockScratchKeyValue = false;  // a block_argmax/argmin is reached: two slots per warp
  // A def's or closure's own dim symbols (bound from tensor arguments) that
  // its outlined function takes as parameters.
  std::set<Symbol*> ownDims;

  bool add(Symbol* s, CaptureMode mode, Symbol* implied = nullptr) {
    auto [it, inserted] = modes.emplace(s, mode);
    if (inserted) {
      if (implied) impliedBy[s] = implied;
      return true;
    }
    if (it->second == CaptureMode::Value && mode == CaptureMode::Reference) {
      it->second = CaptureMode::Reference;  // a callee rebinds it: pass by reference
      return true;
    }
    if (!implied && impliedBy.count(s)) {
      impliedBy.erase(s);  // named directly after all
      return true;
    }
    return false;
  }
};

class CaptureAnalysis {
 public:
  CaptureAnalysis(FunctionScope& root, const std::set<std::string>& staticDims, bool checked)
      : root_(root), staticDims_(staticDims), checked_(checked) {}

  void run() {
    std::vector<FunctionScope*> all;
    gather(&root_, all);
    // Direct references first, then thread callees' needs through callers
    // until nothing changes (the call graph is acyclic, so this ends).
    for (auto* f : all) addDirect(*f);
    bool changed = true;
    while (changed) {
      changed = false;
      for (auto* f : all) changed |= threadCallees(*f) | threadTensorArguments(*f);
    }
    for (auto* f : all) finish(*f);
  }

 private:
  static void gather(FunctionScope* f, std::vector<FunctionScope*>& out) {
    out.push_back(f);
    for (auto* c : f->closures) gather(c, out);
  }

  bool isStaticDim(const Symbol* s) const { return isKernelDim(*s) && staticDims_.count(s->name) > 0; }

  // Adds `s` to f's captures with everything its shape needs.
  bool capture(FunctionScope& f, Symbol* s, CaptureMode mode, Symbol* implied = nullptr) {
    if (s->owner == &f) {
      bool ownDim = s->kind == SymbolKind::DimSymbol && f.kind != FunctionScope::Kind::Kernel;
      return ownDim && sets_[&f].ownDims.insert(s).second;
    }
    if (s->kind == SymbolKind::DimSymbol) {
      if (isStaticDim(s)) return false;
      return sets_[&f].add(s, CaptureMode::Dim, implied);
    }
    bool changed = sets_[&f].add(s, mode, implied);
    if (s->kind == SymbolKind::TensorParam || s->kind == SymbolKind::SharedBuffer ||
        s->kind == SymbolKind::LocalBuffer) {
      // A matrix load's source: its extents bound the tile (zero-filled outside).
      for (Symbol* d : checked_ || s->matrixSource ? shapeDimSymbols(*s) : addressingDimSymbols(*s))
        changed |= capture(f, d, CaptureMode::Dim, s);
    }
    return changed;
  }

  static CaptureMode modeFor(const FunctionScope& f, const Symbol* s) {
    switch (s->kind) {
      case SymbolKind::TensorParam:
      case SymbolKind::SharedBuffer:
      case SymbolKind::LocalBuffer:
      case SymbolKind::Fragment: return CaptureMode::Pointer;
      case SymbolKind::DimSymbol: return CaptureMode::Dim;
      case SymbolKind::Const:
      case SymbolKind::Function:
      case SymbolKind::Kernel:
      case SymbolKind::ScalarParam:
      case SymbolKind::TypeParam:
      case SymbolKind::Local:
      case SymbolKind::LoopVar:
      case SymbolKind::Closure: break;
    }
    for (const auto& [name, target] : f.nonlocals)
      if (target == s) return CaptureMode::Reference;
    return CaptureMode::Value;
  }

  void addDirect(FunctionScope& f) {
    sets_[&f];
    for (Symbol* s : f.outerRefs) capture(f, s, modeFor(f, s));
    if (f.usesBlockCollective) sets_[&f].blockScratch = true;
    if (f.usesBlockArgReduce) sets_[&f].blockScratchKeyValue = true;
    // A def's own dims that its code reads (sema_resolve: named, dim(x, k),
    // or addressing the rows of its tensor parameters).
    for (Symbol* d : f.dimsRead) capture(f, d, CaptureMode::Dim);
    // A checked build compares every index with its extent: a def's own
    // tensor parameters need all their dims, the first one too.
    if (checked_)
      for (Symbol* p : f.params)
        for (Symbol* d : shapeDimSymbols(*p)) capture(f, d, CaptureMode::Dim);
  }

  // The dims a callee takes are read, at the call, from the shapes of the
  // tensors passed to it: whatever those shapes name, the caller needs; so
  // does the row-major stride of a contiguous tensor passed to a strided
  // parameter (its dims after the first).
  bool threadTensorArguments(FunctionScope& f) {
    bool changed = false;
    forEachUserCall(f, [&](const CallExpr& c) {
      FunctionScope& callee = *c.symbol->scope;
      for (size_t i = 0; i < c.args.size() && i < callee.params.size(); ++i) {
        Symbol* tensor = tensorArgument(*c.args[i]);
        if (!tensor || !callee.params[i]->strided || tensor->strided) continue;
        for (size_t axis = 1; axis < tensor->shape.size(); ++axis) {
          std::vector<Symbol*> dims;
          collectDimSymbols(*tensor->shape[axis], dims);
          for (Symbol* d : dims) changed |= capture(f, d, CaptureMode::Dim, tensor);
        }
      }
      const std::set<Symbol*>& calleeDims =
          callee.kind == FunctionScope::Kind::Function ? moduleDefDims(callee) : sets_[&callee].ownDims;
      for (const DimSource& source : dimSources(callee)) {
        if (!calleeDims.count(source.dim) || static_cast<size_t>(source.param) >= c.args.size()) continue;
        Symbol* tensor = tensorArgument(*c.args[static_cast<size_t>(source.param)]);
        if (!tensor) continue;
        std::vector<Symbol*> dims;
        collectDimSymbols(*tensor->shape.at(static_cast<size_t>(source.axis)), dims);
        for (Symbol* d : dims) changed |= capture(f, d, CaptureMode::Dim, tensor);
      }
    });
    return changed;
  }

  // A module def was analyzed on its own before (analyzeModuleDefs): its
  // dim parameters are final.
  const std::set<Symbol*>& moduleDefDims(const FunctionScope& def) {
    auto [it, inserted] = moduleDefDims_.emplace(&def, std::set<Symbol*>());
    if (inserted) it->second.insert(def.dimParams.begin(), def.dimParams.end());
    return it->second;
  }

  bool threadCallees(FunctionScope& f) {
    bool changed = false;
    for (FunctionScope* callee : f.callees) {
      if (callee->kind == FunctionScope::Kind::Function) {
        // A module def captures nothing, but one that (transitively) uses a
        // block collective takes the scratch as a parameter. Defs are
        // analyzed before the functions that call them.
        if (callee->capturesBlockScratch && !sets_[&f].blockScratch) {
          sets_[&f].blockScratch = true;
          changed = true;
        }
        if (callee->blockScratchKeyValue && !sets_[&f].blockScratchKeyValue) {
          sets_[&f].blockScratchKeyValue = true;
          changed = true;
        }
        continue;
      }
      auto& calleeSet = sets_[callee];
      for (const auto& [s, mode] : calleeSet.modes) {
        auto implied = calleeSet.impliedBy.find(s);
        changed |= capture(f, s, mode, implied != calleeSet.impliedBy.end() ? implied->second : nullptr);
      }
      if (calleeSet.blockScratch && !sets_[&f].blockScratch) {
        sets_[&f].blockScratch = true;
        changed = true;
      }
      if (calleeSet.blockScratchKeyValue && !sets_[&f].blockScratchKeyValue) {
        sets_[&f].blockScratchKeyValue = true;
        changed = true;
      }
    }
    return changed;
  }

  // Orders captures for the signature: pointers (each strided tensor
  // followed by its strides), then scalars, then dims; each group in
  // declaration order, so the output is stable.
  void finish(FunctionScope& f) {
    auto& set = sets_[&f];
    f.capturesBlockScratch = set.blockScratch;
    f.blockScratchKeyValue = set.blockScratchKeyValue;
    f.captures.clear();
    if (f.kind != FunctionScope::Kind::Kernel) {
      f.dimParams.clear();
      for (Symbol* d : f.dimSymbols)
        if (set.ownDims.count(d)) f.dimParams.push_back(d);
    }
    if (f.kind != FunctionScope::Kind::Closure) return;
    std::vector<Symbol*> symbols;
    for (const auto& [s, mode] : set.modes) symbols.push_back(s);
    std::sort(symbols.begin(), symbols.end(), [](Symbol* a, Symbol* b) { return a->id < b->id; });
    auto implied = [&](Symbol* s) -> Symbol* {
      auto it = set.impliedBy.find(s);
      return it != set.impliedBy.end() ? it->second : nullptr;
    };
    for (Symbol* s : symbols) {
      if (set.modes[s] != CaptureMode::Pointer) continue;
      f.captures.push_back({s, CaptureMode::Pointer, -1, nullptr});
      for (int axis : strideAxes(*s)) f.captures.push_back({s, CaptureMode::Stride, axis, s});
    }
    for (Symbol* s : symbols) {
      CaptureMode m = set.modes[s];
      if (m == CaptureMode::Value || m == CaptureMode::Reference) f.captures.push_back({s, m, -1, nullptr});
    }
    for (Symbol* s : symbols)
      if (set.modes[s] == CaptureMode::Dim) f.captures.push_back({s, CaptureMode::Dim, -1, implied(s)});
  }

  FunctionScope& root_;
  const std::set<std::string>& staticDims_;
  bool checked_;
  std::map<FunctionScope*, CaptureSet> sets_;
  std::map<const FunctionScope*, std::set<Symbol*>> moduleDefDims_;
};

}  // namespace

std::vector<Symbol*> shapeDimSymbols(const Symbol& s) {
  std::vector<Symbol*> out;
  for (const Expr* e : s.shape) collectDimSymbols(*e, out);
  return out;
}

std::vector<Symbol*> addressingDimSymbols(const Symbol& s) {
  std::vector<Symbol*> out;
  if (s.strided) return out;
  for (size_t axis = 1; axis < s.shape.size(); ++axis) collectDimSymbols(*s.shape[axis], out);
  return out;
}

std::vector<int> strideAxes(const Symbol& s) {
  std::vector<int> axes;
  if (!s.strided) return axes;
  const int rank = static_cast<int>(s.shape.size());
  for (int axis = 0; axis < rank; ++axis)
    if (!(s.unitInnerStride && axis == rank - 1)) axes.push_back(axis);
  return axes;
}

std::vector<Symbol*> runRowDimSymbols(const FunctionScope& kernel) {
  std::vector<Symbol*> out;
  for (const Symbol* p : kernel.params)
    if (p->kind == SymbolKind::TensorParam && p->accessedInRuns)
      for (size_t axis = 1; axis < p->shape.size(); ++axis) collectDimSymbols(*p->shape[axis], out);
  return out;
}

bool isDynamicDimExpression(const Symbol& tensor, size_t axis, const std::set<std::string>& staticDims) {
  const Expr& d = *tensor.shape.at(axis);
  if (d.as<NameExpr>()) return false;  // a dim symbol or a const: not an expression
  std::vector<Symbol*> symbols;
  collectDimSymbols(d, symbols);
  return std::any_of(symbols.begin(), symbols.end(), [&](const Symbol* s) { return !staticDims.count(s->name); });
}

std::vector<std::string> divisibilityCandidates(const FunctionScope& kernel, const Specialization& spec) {
  std::set<std::string> staticDims;
  for (const auto& [name, value] : spec.staticDims) staticDims.insert(name);
  std::vector<std::string> out;
  for (const Symbol* d : runRowDimSymbols(kernel))
    if (!staticDims.count(d->name)) out.push_back(d->name);
  for (const Symbol* p : kernel.params) {
    if (p->kind != SymbolKind::TensorParam || !p->accessedInRuns || spec.absentTensors.count(p->name)) continue;
    const int rank = static_cast<int>(p->shape.size());
    if (p->strided && spec.unitStrideTensors.count(p->name))
      for (int axis = 0; axis + 1 < rank; ++axis) out.push_back(strideDivisibleName(p->name, axis));
    if (!p->strided || spec.contiguousTensors.count(p->name))
      for (int axis = 1; axis < rank; ++axis)
        if (isDynamicDimExpression(*p, size_t(axis), staticDims)) out.push_back(dimDivisibleName(p->name, axis));
  }
  return out;
}

void analyzeCaptures(SemaModule&, FunctionScope& root, const std::set<std::string>& staticDims, bool checked) {
  CaptureAnalysis(root, staticDims, checked).run();
}

void analyzeModuleDefs(SemaModule& sema, bool checked) {
  std::set<FunctionScope*> done;
  std::function<void(FunctionScope*)> visit = [&](FunctionScope* f) {
    if (!done.insert(f).second) return;
    for (auto* callee : f->callees)
      if (callee->kind == FunctionScope::Kind::Function) visit(callee);
    analyzeCaptures(sema, *f, {}, checked);
  };
  for (auto* f : sema.functions) visit(f);
}

}  // namespace spindle
