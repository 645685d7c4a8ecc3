#include "passes/exact_grid.h"

#include <algorithm>
#include <numeric>

#include "sema/const_eval.h"
#include "sema/sema.h"

namespace spindle {

std::vector<GridTile> gridTiles(const FunctionScope& kernel) {
  std::vector<GridTile> tiles;
  const Decorator* grid = kernel.kernel ? kernel.kernel->findDecorator("grid") : nullptr;
  if (!grid) return tiles;
  for (size_t axis = 0; axis < grid->args.size() && axis < 3; ++axis) {
    const auto* call = grid->args[axis]->as<CallExpr>();
    if (!call || call->symbol || call->callee != "cdiv" || call->args.size() != 2 || !call->kwargs.empty()) continue;
    const auto* d = call->args[0]->as<NameExpr>();
    if (!d || !d->symbol || d->symbol->kind != SymbolKind::DimSymbol || !isKernelDim(*d->symbol)) continue;
    // constsOnly: no dims, no per-warp-width or per-specialization consts.
    auto t = evaluateConst(*call->args[1], constsOnly());
    if (!t || t->isFloat || t->i < 2) continue;
    tiles.push_back({int(axis), d->symbol, t->i});
  }
  return tiles;
}

std::vector<ExactGridCandidate> exactGridCandidates(const FunctionScope& kernel,
                                                    const std::set<std::string>& staticDims) {
  std::vector<ExactGridCandidate> out;
  for (const GridTile& g : gridTiles(kernel)) {
    if (staticDims.count(g.dim->name)) continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& c) { return c.dim == g.dim->name; });
    if (it == out.end()) out.push_back({g.dim->name, g.tile});
    else it->tile = std::lcm(it->tile, g.tile);
  }
  return out;
}

}  // namespace spindle
