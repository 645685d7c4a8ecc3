// Binding and validation of launch arguments, separate from launching so it
// can be tested without a GPU: arguments -> bound type parameters and dim
// symbols + the in-memory cache key (bindArguments), launch limits
// (checkGeometry), and the packed kernel argument buffer in ABI order
// (packArguments). Nothing here allocates on the launch path.
#pragma once

#include <spindle/runtime.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace spindle::rt {

class Backend;

inline constexpr int kMaxDimSymbols = 64;
// The largest size of one axis: generated loops that run to a dim rely on it
// (docs/language.md 5.8); no memory comes near it.
inline constexpr int64_t kMaxDim = int64_t(1) << 62;
inline constexpr int kMaxTypeParams = 8;
inline constexpr int kMaxLaunchScalars = 8;  // integer scalars @grid and @block use
// Values whose granularity is specialized on (KernelPlan::divisibilitySlots),
// at most: each takes a 3-bit code, 21 to a key word. A kernel with more
// (past 84 row dims, row strides and dim expressions) gets no assumption
// about the rest, which is always correct.
inline constexpr int kDivisibilityCodesPerWord = 21;
inline constexpr int kMaxDivisibilitySlots = 4 * kDivisibilityCodesPerWord;
// Dims whose exact grid is specialized on (KernelPlan::exactGridSlots): one
// per @grid axis at most.
inline constexpr int kMaxExactGridSlots = 3;
// Contiguity, unit inner stride, alignment and absence bits, the granularity
// codes, the exact-grid bits and the 32-bit index bit.
inline constexpr int kLayoutKeyWords = 6 + kMaxDivisibilitySlots / kDivisibilityCodesPerWord;
inline constexpr int kMaxKeyWords = 29 + kLayoutKeyWords;  // 29 static dim values and bound dtypes
// Tensors whose address is a multiple of this many bytes get the aligned
// specialization: the widest vector access of either vendor.
inline constexpr uintptr_t kVectorAlignment = 16;
inline constexpr int kMaxAbiArgs = 256;
// copy_tile's tensor maps a kernel may take (docs/language.md 8.14).
inline constexpr int kMaxTensorMaps = 8;

// A kernel's parameters, resolved once to indices (KernelPlan::make).
struct ParamPlan {
  std::string name;
  bool isTensor = false;
  ScalarType dtype = ScalarType::Invalid;  // when typeParam < 0
  int typeParam = -1;
  int rank = 0;
  int dimSymbol[kMaxRank] = {};  // -1: a literal size or an expression
  int64_t dimLiteral[kMaxRank] = {};
  int dimExpression[kMaxRank] = {};  // index into KernelPlan::dimExpressions, or -1
  bool strided = false;
  bool accessedInRuns = false;  // its alignment is specialized on
  bool writes = false;          // the kernel stores into it
  bool optional = false;        // `T[...] | None`: spindle::none() leaves it absent
  int aliasGroup = -1;          // index of its @alias group: it may be the same view as the group's others
  std::string typeText;         // "f32[M, N]", "T[N] strided", "f32"
};

struct KernelPlan {
  std::string kernel;
  std::vector<ParamPlan> params;
  std::vector<std::string> typeParams;
  std::vector<std::string> dimSymbols;
  std::vector<bool> isStatic;      // per dim symbol
  std::vector<int> staticSymbols;  // indices of static symbols, in key order
  bool anyStrided = false;         // a strided parameter: its contiguity enters the key
  bool anyRunTensor = false;       // a tensor accessed in runs: its alignment enters the key
  bool anyOptional = false;        // an optional tensor: which are absent enters the key
  // A value that places the rows of a tensor accessed in runs: the largest
  // of 16, 8, 4, 2 that divides it at launch (its granularity) enters the
  // key, and the generator assumes it (Specialization::divisible, whose
  // rule generator/passes/capture_analysis.h, divisibilityCandidates, states;
  // this is the same rule on the launch's facts).
  struct DivisibilitySlot {
    enum class Kind {
      Dim,            // a dynamic dim symbol of KernelInfo::runRowDims
      RowStride,      // a strided tensor's stride along `axis` (not the last), when its inner stride is 1
      DimExpression,  // a dim expression's value at `axis` (past 0), when the tensor is addressed by its dims
    } kind;
    int index;         // Dim: the dim symbol; else the parameter
    int axis;          // RowStride, DimExpression
    std::string name;  // as Specialization::divisible names it: "N", "x.stride0", "x.dim1"
  };
  std::vector<DivisibilitySlot> divisibilitySlots;  // at most kMaxDivisibilitySlots
  // A dynamic dim that a @grid axis covers in tiles, cdiv(D, T): whether it
  // is a multiple of `tile` at launch enters the key (one bit), and the
  // generator proves bounds tests with it (Specialization::exactGridDims,
  // KernelInfo::exactGridDims). A @tune config's handle has its own T.
  struct ExactGridSlot {
    int dim;       // the dim symbol
    int64_t tile;  // T (the lcm of its axes' tiles)
  };
  std::vector<ExactGridSlot> exactGridSlots;  // at most kMaxExactGridSlots
  int exactGridWord = -1;                     // the key word of their bits, or -1 (none)
  // Dim expressions (`3 * C`) in postfix order over dim symbol indices,
  // checked against the sizes once every symbol is bound.
  struct DimExpression {
    struct Op {
      DimOp::Kind kind;
      int64_t value;  // a number, or a dim symbol's index
    };
    std::vector<Op> ops;
    std::string text;
  };
  std::vector<DimExpression> dimExpressions;
  // Parameters (indices) of the integer scalars @grid and @block use.
  std::vector<int> launchScalars;
  // Whether launches that fit get 32-bit indices (RuntimeOptions::index32,
  // which the runtime copies here).
  bool index32 = true;

  // Error when `extraStatic` names an unknown dim symbol or the kernel is
  // beyond the fixed limits above.
  static KernelPlan make(const KernelInfo& info, const std::vector<std::string>& extraStatic);
};

// The in-memory cache key: static dim values then bound dtypes. Fixed size,
// compared and hashed without allocation.
struct SpecKey {
  int count = 0;
  int64_t words[kMaxKeyWords] = {};
  bool operator==(const SpecKey& o) const;
  uint64_t hash() const;
};

struct Binding {
  int64_t dims[kMaxDimSymbols];
  ScalarType types[kMaxTypeParams];
  // Bit i: strided parameter i was passed as a row-major contiguous view, so
  // the contiguous specialization serves it (only the first 64 parameters).
  uint64_t contiguousStrided = 0;
  // Bit i: strided parameter i, not contiguous, has innermost stride 1 (or
  // a last axis of size 1), so the unit-stride specialization serves it.
  uint64_t unitStride = 0;
  // Bit i: tensor parameter i is accessed in runs and its address is a
  // multiple of 16 bytes, so the aligned specialization (vector access
  // allowed) serves it. Allocators return such pointers; an offset view may
  // not, and gets its own binary.
  uint64_t alignedTensors = 0;
  // Per plan.divisibilitySlots: 16, 8, 4 or 2, the largest that divides the
  // value, or 0 (odd, or the slot does not apply to this launch's layout).
  uint8_t granularity[kMaxDivisibilitySlots] = {};
  // Bit i: the dim of plan.exactGridSlots[i] is a multiple of its tile.
  uint64_t exactGrid = 0;
  // Bit i: optional tensor parameter i was passed as spindle::none().
  uint64_t absentTensors = 0;
  // Every dim, stride and tensor extent of the launch is below 2^31 (and the
  // plan allows it): the 32-bit index specialization serves it.
  bool index32 = false;
  // The values of plan.launchScalars, in order, as int64.
  int64_t launchScalars[kMaxLaunchScalars];
  SpecKey key;
};

// Checks every argument against the kernel and binds type parameters and dim
// symbols. Throws spindle::Error naming the kernel, parameter, dim and values.
void bindArguments(const KernelPlan& plan, const Arg* args, size_t count, Binding& out);

// Fills b.key from b's static dim values, bound dtypes and layout facts.
void makeSpecKey(const KernelPlan& plan, Binding& b);

// The granularity b found for the value Specialization::divisible calls
// `name` (16, 8, 4, 2), or 0 when it has none or the plan has no such slot.
int granularityOf(const KernelPlan& plan, const Binding& b, const std::string& name);

// Throws when a tensor the kernel writes overlaps another tensor argument.
void checkNoOverlap(const KernelPlan& plan, const Arg* args);

// Rejects grids and blocks that no GPU launches (zero or too large).
void checkGeometry(const KernelPlan& plan, const Binding& b, const LaunchGeometry& g);

// One ABI argument, resolved against the plan.
struct PackOp {
  AbiArgKind kind;
  int param = -1;                             // TensorPointer, Scalar, Stride, TensorMap
  int index = -1;                             // Stride: axis; Dim: dim symbol index; TensorMap, TensorMapReady: the map
  int bytes = 8;                              // Scalar: its size; TensorMap: the element's
  int boxRows = 0, boxCols = 0, swizzle = 0;  // TensorMap
};
std::vector<PackOp> makePackOps(const KernelPlan& plan, const std::vector<AbiArg>& abi);

struct PackedArgs {
  int count = 0;
  uint64_t slots[kMaxAbiArgs];
  void* pointers[kMaxAbiArgs];
  struct alignas(64) TensorMap {
    unsigned char bytes[128];
  };
  TensorMap maps[kMaxTensorMaps];
  bool mapReady[kMaxTensorMaps];
  int mapsNotMade = 0;  // maps left zero: their copies take the element path
};
// Arguments must have passed bindArguments. `backend` makes the tensor maps
// for the launch's `device` (none: every map is zeros and not ready, as on
// the cpu target).
void packArguments(const std::vector<PackOp>& ops, const Arg* args, const Binding& b, PackedArgs& out,
                   Backend* backend = nullptr, int device = 0);

// The dims map and type map of a binding (for LaunchPlan and the generator).
std::map<std::string, int64_t> dimMap(const KernelPlan& plan, const Binding& b);
// The dims and the launch scalars' values: what launchGeometry evaluates
// @grid and @block with.
std::map<std::string, int64_t> launchValueMap(const KernelPlan& plan, const Binding& b);

}  // namespace spindle::rt
