// @block at generation, and the whole launch geometry at launch: the two
// places the decorators' expressions are evaluated (docs/language.md 9.1,
// 9.2).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sema/sema.h"
#include "spindle/generator.h"

namespace spindle {

// What generation knows about @block. An axis is either a number (consts and
// static dims decide it), known up to the target's warp size (it uses
// warp_size(): printed through the prelude's warp-width macro, so the file
// stays target-neutral), or follows the launch (a dynamic dim or a scalar
// parameter) within an upper bound generation can prove.
struct BlockPlan {
  std::vector<const Expr*> axes;
  std::vector<std::optional<int64_t>> values;  // per axis; nullopt unless a number
  bool followsLaunch = false;  // some axis uses a dynamic dim or a scalar: block_dim() varies per launch
  // The most threads a launch can have (__launch_bounds__ when the block
  // follows the launch; warp_size() counted as 64), at most 1024.
  int64_t maxThreads = 1;
  // The thread count is a multiple of the warp width on every target, so
  // warp collectives never meet a partial last warp.
  bool wholeWarps = false;
  // ... of four warps at every width (dot's warp groups: 128 threads on
  // NVIDIA, 256 on AMD).
  bool wholeWarpGroups = false;
};

// Throws a specialization error at the offending axis: a value outside
// [1, 1024], more than 1024 threads, or an axis whose bound is unknown.
// `typeArgs` give sizeof(T) its value in body consts that @block names.
BlockPlan planBlock(const SemaModule& sema, const FunctionScope& kernel,
                    const std::map<std::string, int64_t>& staticDims,
                    const std::map<std::string, ScalarType>& typeArgs);

// Static shared memory stops at 48 KiB on NVIDIA (and on AMD before
// gfx950's 160 KiB); past that a kernel must take dynamic shared memory and
// opt in (cudaFuncSetAttribute). True when the shared buffers whose sizes
// this specialization knows (no dynamic dim) hold more than 48 KiB
// together, counting a size that depends on warp_size() at its larger
// value: then every shared buffer of the kernel is placed in the launch's
// dynamic shared memory, in both the printed file and the launch geometry.
bool sharedPastStaticLimit(const FunctionScope& kernel, const std::map<std::string, int64_t>& staticDims,
                           const std::map<std::string, ScalarType>& typeArgs,
                           const std::set<std::string>* absentTensors = nullptr);

// Launch geometry for bound values: `values` covers every dim symbol and
// every integer scalar parameter @grid and @block use. The block and dynamic
// shared memory come first: resident_blocks() in @grid is asked for them (see
// CompiledModule::launchGeometry). Reads `sema` only.
LaunchGeometry computeLaunchGeometry(const SemaModule& sema, const std::string& kernel, const Specialization& spec,
                                     const std::map<std::string, int64_t>& values,
                                     const ResidentBlocksQuery& residentBlocks, int64_t warpSize);

}  // namespace spindle
