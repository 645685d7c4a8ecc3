// The values of the uniformity analysis (passes/uniformity_analysis.h): how
// far a value (or the control flow at a point) can differ between threads.
//
// Warps are aligned runs of W consecutive linear thread ids (x fastest), W
// being 32 on NVIDIA and 64 on AMD. A value is judged separately for each
// width, since `lane_id() // 32` is the same on every lane of a 32-wide warp
// and not of a 64-wide one; code must be right for both.
//
// Besides the level, a value may carry an exact description of how it
// follows the linear thread id L, `(L // div) % mod` (a "thread slice"):
// thread_id() of a 1-D block is L, lane_id() is L % W, thread_id(1) of
// @block(16, 16) is L // 16. Dividing and taking remainders by constants keep
// the form, so `thread_id() // warp_size()` is known to be the warp's index
// (uniform within a warp) and `thread_id(0) // 32` in @block(16, 16) is 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "frontend/ast.h"

namespace spindle {

// Ordered: a join is the maximum.
enum class Uniformity : uint8_t {
  Block,      // the same on every thread of the block
  WarpGroup,  // the same on every thread of an aligned group of 4 warps (wgmma's warp group)
  Warp,       // the same on every lane of a warp, may differ between warps
  Divergent,  // may differ between lanes of one warp
};

// A value equals (L // div) % mod; mod 0: no remainder; mod -1: a remainder
// by a number not known here.
struct ThreadSlice {
  int64_t div = 1;
  int64_t mod = 0;
  bool operator==(const ThreadSlice& o) const { return div == o.div && mod == o.mod; }
};

// What is known of a value for one warp width.
struct WidthFact {
  Uniformity level = Uniformity::Block;
  std::optional<ThreadSlice> slice;
  std::optional<int64_t> constant;  // an integer known at generation (literals, consts, warp_size())
  bool operator==(const WidthFact& o) const { return level == o.level && slice == o.slice && constant == o.constant; }
};

inline constexpr int kWarpWidths[2] = {32, 64};

// A value, for both warp widths, and what makes it thread-dependent (for
// messages: "'thread_id()'", "a load at an address that depends on
// 'lane_id()'"); empty while it is block-uniform.
struct ValueFact {
  WidthFact width[2];
  std::string source;

  static ValueFact uniform() { return {}; }
  static ValueFact constant(int64_t v32, int64_t v64);
  // The same level at both widths, no slice.
  static ValueFact ofLevel(Uniformity level, std::string source);
  // (L // div) % mod at both widths (per-width slices: sliceAt).
  static ValueFact ofSlice(ThreadSlice s32, ThreadSlice s64, std::string source);

  Uniformity worst() const { return std::max(width[0].level, width[1].level); }
  bool isBlockUniform() const { return worst() == Uniformity::Block; }
  // Equality for the loop fixpoint: the facts, not the wording.
  bool sameFacts(const ValueFact& o) const { return width[0] == o.width[0] && width[1] == o.width[1]; }
};

// The level a slice has at warp width w.
Uniformity sliceLevel(const ThreadSlice& s, int w);
// a joined with b: the worse level, a slice or constant only where both agree.
ValueFact join(const ValueFact& a, const ValueFact& b);
// An arithmetic or comparison on two values (`op` on a and b): constants
// folded, thread slices kept through `// c`, `% c`, `>> c`, `& (2^k - 1)`,
// comparisons of a slice with a constant that cannot differ decided.
ValueFact applyBinary(BinaryOp op, const ValueFact& a, const ValueFact& b);
// A value known only as "at most this level" (a cast, math on it): drops the
// constant and the slice.
ValueFact forgetForm(const ValueFact& v);

}  // namespace spindle
