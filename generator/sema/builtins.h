// Builtin functions of the language, from the one table in builtins.def.
#pragma once

#include <string_view>

namespace spindle {

enum class BuiltinCategory {
  Geometry,        // thread_id(a=0) etc.: i32, optional constant axis
  LaneInfo,        // lane_id(), warp_size(), warp_id(): i32
  Barrier,         // sync()
  FloatMath,       // float in, same float out
  NumericMath,     // abs/min/max: floats or integers
  IntMath,         // cdiv: integers
  BitCount,        // popcount(x): an integer's set bits, i32
  WarpReduce,      // warp_sum/max/min/cumsum(v)
  BlockReduce,     // block_sum/max/min/cumsum(v): needs generator-allocated scratch
  Shuffle,         // shfl_xor(v, mask)
  Atomic,          // atomic_*(x[i], v), atomic_cas(x[i], expected, new): return the old value
  DimQuery,        // dim(x, k)
  Scratch,         // shared(T, [..]) / local(T, [..], init) / barriers(n, count): declarations only
  Range,           // range / static_range: for-loops only
  LaunchQuery,     // resident_blocks(): i64, @grid only (a fact of the device and binary)
  TypeLimit,       // max_value(T), min_value(T), min_normal(T): T's limits
  TypeConversion,  // saturate(T, v), bitcast(T, v): v converted to T
  FloatPredicate,  // isnan/isinf/isfinite/signbit(x): a float in, bool out
  WarpBarrier,     // sync_warp(): the warp's lanes meet (memory ordered among them)
  WarpVote,        // warp_any/warp_all(c): bool; ballot(c): u64, bit k = lane k's c
  WarpArgReduce,   // warp_argmax/argmin(v, i): a tuple (v, i) over the warp's lanes
  BlockArgReduce,  // block_argmax/argmin(v, i): the same over the block; generator-allocated scratch
  UniformHint,     // assume_uniform(v): v, taken as block-uniform by the divergence analysis
  CachedLoad,      // load_stream/load_readonly/load_keep(x[i]): x[i], with a cache hint
  CachedStore,     // store_stream(x[i], v): x[i] = v, with a cache hint
  DivisorHint,     // multiple_of(e, n): e, promised a multiple of n (a const power of two)
  MatrixDecl,      // mma_zero(f32, [TI, TJ]), mma_a(T, [TI]), mma_b(T, [TJ]): fragment array declarations only
  Matrix,          // mma_load_a/_a_t/_b/_b_t(frag, src, r, c), mma(a, b, acc): every lane of the warp takes part
  AsyncCopy,       // copy_async(dst, r, c, src, sr, sc, n), copy_commit(), copy_wait(n): this thread's copies;
                   // arrive(bars, i), wait(bars, i, n): this thread's part in a phase barrier;
                   // copy_tile(...); claim_registers(n), release_registers(n): a warp group's budget
};

enum class BuiltinId {
#define BUILTIN(ID, NAME, CAT, MINA, MAXA, F32, OTHER) ID,
#include "builtins.def"
#undef BUILTIN
};

struct BuiltinInfo {
  BuiltinId id;
  std::string_view name;
  BuiltinCategory category;
  int minArgs;
  int maxArgs;
  std::string_view hipF32;    // spelling for f32 (or the only spelling)
  std::string_view hipOther;  // spelling for f64 / integers where different
};

// Every builtin, in table order: `for (const BuiltinInfo& b : allBuiltins())`.
struct BuiltinTable {
  const BuiltinInfo* begin() const;
  const BuiltinInfo* end() const;
};
inline BuiltinTable allBuiltins() { return {}; }

// Null when `name` is not a builtin.
const BuiltinInfo* findBuiltin(std::string_view name);
const BuiltinInfo& builtinInfo(BuiltinId id);

}  // namespace spindle
