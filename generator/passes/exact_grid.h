// The @grid axes that cover a dim in whole tiles, `cdiv(D, T)`, and so the
// dims whose "exact grid" fact can be specialized on
// (Specialization::exactGridDims, `--exact-grid D`): D % T == 0 at launch.
//
// An axis qualifies when its expression is exactly `cdiv(D, T)` with D a
// dim symbol of the kernel and T an integer of at least 2 made of literals
// and module consts (not of dims, and not one that differs by warp width),
// so that the runtime can evaluate it from the kernel's description alone;
// a @tune config's consts give it that config's T. A dim covered by several
// axes is one fact: D a multiple of every T (their least common multiple).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace spindle {

struct FunctionScope;
struct Symbol;

// One @grid axis `cdiv(D, T)`.
struct GridTile {
  int axis = 0;
  const Symbol* dim = nullptr;
  int64_t tile = 0;
};

// Every qualifying axis of the kernel's @grid, in axis order.
std::vector<GridTile> gridTiles(const FunctionScope& kernel);

// A dim and the tile it must be a multiple of for its fact to hold.
struct ExactGridCandidate {
  std::string dim;
  int64_t tile = 0;  // the lcm of its axes' tiles
};

// The dims of gridTiles not in `staticDims`, each once, in axis order: the
// names --exact-grid takes (a static dim's value is known already).
std::vector<ExactGridCandidate> exactGridCandidates(const FunctionScope& kernel,
                                                    const std::set<std::string>& staticDims);

}  // namespace spindle
