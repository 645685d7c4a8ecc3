#include "passes/uniformity_rules.h"

#include <string>

namespace spindle {
namespace {

std::string quoted(const BuiltinInfo& b) { return "'" + std::string(b.name) + "()'"; }

// thread_id(axis) at warp width index wi: a slice of the linear thread id
// when the block's shape says which, else nothing (divergent).
std::optional<ThreadSlice> threadIdSlice(int axis, const BlockShape& shape, int wi) {
  if (shape.axes == 0) return std::nullopt;
  if (axis >= shape.axes) return ThreadSlice{1, 1};  // an axis the block does not have: 0
  const auto& bx = shape.extent[0][wi];
  const auto& by = shape.extent[1][wi];
  switch (axis) {
    case 0:
      if (shape.axes == 1) return ThreadSlice{1, 0};
      if (bx) return ThreadSlice{1, *bx};
      return std::nullopt;
    case 1:
      if (!bx) return std::nullopt;
      if (shape.axes == 2) return ThreadSlice{*bx, 0};
      return ThreadSlice{*bx, by ? *by : -1};
    default:
      if (!bx || !by) return std::nullopt;
      return ThreadSlice{*bx * *by, 0};
  }
}

}  // namespace

ConvergenceNeed convergenceNeed(const BuiltinInfo& b) {
  switch (b.category) {
    // barriers(...): every thread waits there for their initialization;
    // shared(...) and local(...) are declarations only.
    case BuiltinCategory::Scratch: return b.id == BuiltinId::Barriers ? ConvergenceNeed::Block : ConvergenceNeed::None;
    case BuiltinCategory::Barrier:
    case BuiltinCategory::BlockReduce:
    case BuiltinCategory::BlockArgReduce: return ConvergenceNeed::Block;
    case BuiltinCategory::WarpReduce:
    case BuiltinCategory::WarpArgReduce:
    case BuiltinCategory::Shuffle:
    case BuiltinCategory::WarpBarrier:
    // dot: the four warps of a group issue one wgmma together, so every
    // thread of the group reaches it: a condition on the group (`warp //
    // 4`, `thread_id() // 128`) keeps whole groups, as a warp-specialized
    // kernel's roles do.
    case BuiltinCategory::Matrix:
      return b.id == BuiltinId::Dot || b.id == BuiltinId::DotBt ? ConvergenceNeed::WarpGroup : ConvergenceNeed::Warp;
    // The votes are defined over the lanes active at the call (8.4), so a
    // divergent warp may vote.
    // warp_id() reads lane 0's index on NVIDIA (__shfl_sync of the whole warp).
    case BuiltinCategory::LaneInfo: return b.id == BuiltinId::WarpId ? ConvergenceNeed::Warp : ConvergenceNeed::None;
    case BuiltinCategory::WarpVote:
    case BuiltinCategory::Geometry:
    case BuiltinCategory::FloatMath:
    case BuiltinCategory::NumericMath:
    case BuiltinCategory::IntMath:
    case BuiltinCategory::BitCount:
    case BuiltinCategory::Atomic:
    case BuiltinCategory::DimQuery:
    case BuiltinCategory::MatrixDecl:
    case BuiltinCategory::Range:
    case BuiltinCategory::LaunchQuery:
    case BuiltinCategory::TypeLimit:
    case BuiltinCategory::TypeConversion:
    case BuiltinCategory::FloatPredicate:
    case BuiltinCategory::CachedLoad:
    case BuiltinCategory::CachedStore:
    case BuiltinCategory::UniformHint:
    // This thread's copies and barrier steps (the sync() that shows copies
    // is a barrier); a register budget is the whole warp group's.
    case BuiltinCategory::AsyncCopy:
      return b.id == BuiltinId::ClaimRegisters || b.id == BuiltinId::ReleaseRegisters ? ConvergenceNeed::WarpGroup
                                                                                      : ConvergenceNeed::None;
    case BuiltinCategory::DivisorHint: return ConvergenceNeed::None;
  }
  return ConvergenceNeed::None;
}

ValueFact builtinResult(const BuiltinInfo& b, const std::vector<ValueFact>& args, int axis, const BlockShape& shape) {
  auto joined = [&]() {
    ValueFact v;
    for (const auto& a : args) v = join(v, a);
    return forgetForm(v);
  };
  switch (b.category) {
    case BuiltinCategory::Geometry: {
      if (b.id != BuiltinId::ThreadId) return ValueFact::uniform();  // block_id, block_dim, grid_dim
      std::string source = axis == 0 ? "'thread_id()'" : "'thread_id(" + std::to_string(axis) + ")'";
      auto s32 = threadIdSlice(axis, shape, 0), s64 = threadIdSlice(axis, shape, 1);
      if (s32 && s64) return ValueFact::ofSlice(*s32, *s64, source);
      return ValueFact::ofLevel(Uniformity::Divergent, source);
    }
    case BuiltinCategory::LaneInfo:
      if (b.id == BuiltinId::WarpSize) return ValueFact::constant(kWarpWidths[0], kWarpWidths[1]);
      if (b.id == BuiltinId::WarpId) return ValueFact::ofSlice({kWarpWidths[0], 0}, {kWarpWidths[1], 0}, "'warp_id()'");
      return ValueFact::ofSlice({1, kWarpWidths[0]}, {1, kWarpWidths[1]}, "'lane_id()'");
    case BuiltinCategory::WarpReduce:
      // A prefix differs by lane; a reduction is the warp's (a partial
      // warp's lanes make it differ between warps even for a uniform value).
      if (b.id == BuiltinId::WarpCumsum) return ValueFact::ofLevel(Uniformity::Divergent, quoted(b));
      return ValueFact::ofLevel(Uniformity::Warp, quoted(b));
    case BuiltinCategory::WarpArgReduce:  // the warp's (value, index): as a warp reduction
      return ValueFact::ofLevel(Uniformity::Warp, quoted(b));
    case BuiltinCategory::BlockArgReduce:  // the block's (value, index): every thread gets it
      return ValueFact::uniform();
    case BuiltinCategory::BlockReduce:
      if (b.id == BuiltinId::BlockCumsum) return ValueFact::ofLevel(Uniformity::Divergent, quoted(b));
      return ValueFact::uniform();
    case BuiltinCategory::Shuffle: {
      // Every lane reads a lane of its warp: the value of a warp-uniform v
      // (v itself, its form kept: shfl(thread_id() // warp_size(), 0) is
      // still the warp's index), or with shfl one lane's v when every lane
      // names the same lane.
      ValueFact r = forgetForm(args[0]);
      for (int i = 0; i < 2; ++i) {
        if (args[0].width[i].level != Uniformity::Divergent) r.width[i] = args[0].width[i];
        if (r.width[i].level != Uniformity::Divergent) continue;
        bool oneLane = b.id == BuiltinId::Shfl && args[1].width[i].level != Uniformity::Divergent;
        r.width[i].level = oneLane ? Uniformity::Warp : Uniformity::Divergent;
      }
      if (!r.isBlockUniform() && r.source.empty()) r.source = quoted(b);
      return r;
    }
    case BuiltinCategory::WarpVote: {
      if (b.id == BuiltinId::Ballot) return ValueFact::ofLevel(Uniformity::Warp, quoted(b));  // the active lanes' mask
      ValueFact r = forgetForm(args[0]);
      for (auto& w : r.width) w.level = std::min(w.level, Uniformity::Warp);
      if (!r.isBlockUniform()) r.source = quoted(b);
      return r;
    }
    case BuiltinCategory::Atomic:
      return ValueFact::ofLevel(Uniformity::Divergent, "the result of " + quoted(b));  // each thread's old value
    case BuiltinCategory::FloatMath:
    case BuiltinCategory::NumericMath:
    case BuiltinCategory::IntMath:
    case BuiltinCategory::BitCount:
    case BuiltinCategory::FloatPredicate:
    case BuiltinCategory::CachedLoad:   // the element, as a load of x[i]
    case BuiltinCategory::DivisorHint:  // multiple_of(e, n): e's (n is a const)
    case BuiltinCategory::TypeConversion: return joined();
    case BuiltinCategory::UniformHint:  // assume_uniform(v): the programmer's word
    case BuiltinCategory::CachedStore:
    case BuiltinCategory::Barrier:
    case BuiltinCategory::WarpBarrier:
    case BuiltinCategory::DimQuery:
    case BuiltinCategory::Scratch:
    case BuiltinCategory::MatrixDecl:
    case BuiltinCategory::Matrix:     // no value: tiles are the warp's (every lane takes part)
    case BuiltinCategory::AsyncCopy:  // no value
    case BuiltinCategory::Range:
    case BuiltinCategory::LaunchQuery:
    case BuiltinCategory::TypeLimit: return ValueFact::uniform();
  }
  return joined();
}

}  // namespace spindle
