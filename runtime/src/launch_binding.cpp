#include "launch_binding.h"

#include "backend.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

#include "tensor_overlap.h"

namespace spindle::rt {
namespace {

std::string shapeText(const Arg& a) {
  int n = std::min(a.rank, kMaxRank);
  std::string s = fmt::format("{}[{}", scalarName(a.dtype).empty() ? "?" : scalarName(a.dtype),
                              fmt::join(a.shape, a.shape + n, ", "));
  if (a.rank > kMaxRank) s += ", ...";
  return s + "]";
}

std::string argText(const Arg& a) {
  if (a.kind == Arg::Kind::Tensor) return "a tensor " + shapeText(a);
  if (a.kind == Arg::Kind::None) return "spindle::none()";
  return fmt::format("a scalar {}", a.dtype == ScalarType::Invalid ? "of no type" : scalarName(a.dtype));
}

// Where a dim symbol or type parameter was first bound, for messages.
struct Origin {
  int param = -1;
  int axis = -1;
};

std::string originText(const KernelPlan& plan, Origin o) {
  if (o.axis < 0) return fmt::format("'{}'", plan.params[size_t(o.param)].name);
  return fmt::format("'{}' dim {}", plan.params[size_t(o.param)].name, o.axis);
}

void putKeyWord(SpecKey& key, int64_t w) { key.words[key.count++] = w; }

bool hasDynamicSymbol(const KernelPlan& plan, const KernelPlan::DimExpression& e) {
  for (const auto& op : e.ops)
    if (op.kind == DimOp::Kind::Symbol && !plan.isStatic[size_t(op.value)]) return true;
  return false;
}

// The values that place rows of tensors accessed in runs, in the order the
// generator lists them (divisibilityCandidates): dynamic row dims, then per
// tensor its row strides and dim expressions past axis 0. Which of them
// apply depends on the launch's layout (bindArguments).
void addDivisibilitySlots(const KernelInfo& info, KernelPlan& plan) {
  using Slot = KernelPlan::DivisibilitySlot;
  auto add = [&](Slot slot) {
    if (plan.divisibilitySlots.size() < size_t(kMaxDivisibilitySlots)) plan.divisibilitySlots.push_back(slot);
  };
  for (const auto& name : info.runRowDims) {
    auto it = std::find(plan.dimSymbols.begin(), plan.dimSymbols.end(), name);
    int s = int(it - plan.dimSymbols.begin());
    if (it != plan.dimSymbols.end() && !plan.isStatic[size_t(s)]) add({Slot::Kind::Dim, s, -1, name});
  }
  for (size_t pi = 0; pi < plan.params.size() && pi < 64; ++pi) {
    const ParamPlan& p = plan.params[pi];
    if (!p.isTensor || !p.accessedInRuns) continue;
    if (p.strided)
      for (int ax = 0; ax + 1 < p.rank; ++ax)
        add({Slot::Kind::RowStride, int(pi), ax, strideDivisibleName(p.name, ax)});
    for (int ax = 1; ax < p.rank; ++ax)
      if (p.dimExpression[ax] >= 0 && hasDynamicSymbol(plan, plan.dimExpressions[size_t(p.dimExpression[ax])]))
        add({Slot::Kind::DimExpression, int(pi), ax, dimDivisibleName(p.name, ax)});
  }
}

// 0 for none, else log2: 1 for 2 ... 4 for 16 (three bits).
int granularityCode(int granularity) {
  int code = 0;
  for (int g = granularity; g > 1; g >>= 1) ++code;
  return code;
}

// Whether a strided argument's last axis is addressed with stride 1.
bool hasUnitInnerStride(const Arg& a, int rank) {
  return !a.hasStrides || a.strides[rank - 1] == 1 || a.shape[rank - 1] == 1;
}

// The granularity of each slot for this launch: a row stride only where the
// unit-stride form serves the tensor, a dim expression only where the tensor
// is addressed by its dims; an absent tensor has neither.
void findGranularities(const KernelPlan& plan, const Arg* args, Binding& b) {
  using Kind = KernelPlan::DivisibilitySlot::Kind;
  for (size_t i = 0; i < plan.divisibilitySlots.size(); ++i) {
    const auto& slot = plan.divisibilitySlots[i];
    int64_t value = 0;
    bool applies = true;
    if (slot.kind == Kind::Dim) {
      value = b.dims[slot.index];
    } else {
      const Arg& a = args[slot.index];
      const uint64_t bit = uint64_t(1) << slot.index;
      applies =
          a.kind == Arg::Kind::Tensor &&
          (slot.kind == Kind::RowStride ? (b.unitStride & bit) != 0
                                        : !plan.params[size_t(slot.index)].strided || (b.contiguousStrided & bit));
      if (applies) value = slot.kind == Kind::RowStride ? a.strides[slot.axis] : a.shape[slot.axis];
    }
    b.granularity[i] = uint8_t(applies ? divisibilityGranularity(value) : 0);
  }
}

}  // namespace

KernelPlan KernelPlan::make(const KernelInfo& info, const std::vector<std::string>& extraStatic) {
  KernelPlan plan;
  plan.kernel = info.name;
  plan.typeParams = info.typeParams;
  plan.dimSymbols = info.dimSymbols;
  auto symbolIndex = [&](const std::string& s) {
    auto it = std::find(plan.dimSymbols.begin(), plan.dimSymbols.end(), s);
    return it == plan.dimSymbols.end() ? -1 : int(it - plan.dimSymbols.begin());
  };
  if (plan.dimSymbols.size() > size_t(kMaxDimSymbols) || plan.typeParams.size() > size_t(kMaxTypeParams))
    throw Error(fmt::format("{}: {} dim symbols and {} type parameters; the runtime supports at most {} and {}",
                            info.name, plan.dimSymbols.size(), plan.typeParams.size(), kMaxDimSymbols, kMaxTypeParams));
  plan.isStatic.assign(plan.dimSymbols.size(), false);
  auto markStatic = [&](const std::string& s, const char* who) {
    int i = symbolIndex(s);
    if (i < 0)
      throw Error(fmt::format("{}: {} names '{}' static, but the kernel has no such dim symbol (it has: {})", info.name,
                              who, s, fmt::join(plan.dimSymbols, ", ")));
    plan.isStatic[size_t(i)] = true;
  };
  for (const auto& s : info.staticDims) markStatic(s, "@static");
  for (const auto& s : extraStatic) markStatic(s, "the caller");
  for (size_t i = 0; i < plan.dimSymbols.size(); ++i)
    if (plan.isStatic[i]) plan.staticSymbols.push_back(int(i));
  if (plan.staticSymbols.size() + plan.typeParams.size() + kLayoutKeyWords > size_t(kMaxKeyWords))
    throw Error(
        fmt::format("{}: more than {} static dims and type parameters", info.name, kMaxKeyWords - kLayoutKeyWords));

  for (const auto& p : info.params) {
    ParamPlan pp;
    pp.name = p.name;
    pp.isTensor = p.isTensor;
    pp.writes = p.writes;
    pp.optional = p.optional;
    plan.anyOptional |= p.isTensor && p.optional;
    plan.anyStrided |= p.strided;
    plan.anyRunTensor |= p.isTensor && p.accessedInRuns;
    pp.dtype = p.dtype;
    if (!p.typeParam.empty()) {
      auto it = std::find(plan.typeParams.begin(), plan.typeParams.end(), p.typeParam);
      if (it == plan.typeParams.end())
        throw Error(fmt::format("{}: parameter '{}' uses unknown type parameter '{}'", info.name, p.name, p.typeParam));
      pp.typeParam = int(it - plan.typeParams.begin());
    }
    std::string elem = p.typeParam.empty() ? std::string(scalarName(p.dtype)) : p.typeParam;
    pp.typeText = elem;
    if (p.isTensor) {
      if (p.dims.empty() || p.dims.size() > size_t(kMaxRank))
        throw Error(fmt::format("{}: parameter '{}' has rank {}; tensors have rank 1 to {}", info.name, p.name,
                                p.dims.size(), kMaxRank));
      pp.rank = int(p.dims.size());
      pp.strided = p.strided;
      pp.accessedInRuns = p.accessedInRuns;
      std::vector<std::string> dims;
      for (size_t a = 0; a < p.dims.size(); ++a) {
        const DimInfo& d = p.dims[a];
        pp.dimSymbol[a] = d.isSymbol ? symbolIndex(d.symbol) : -1;
        pp.dimLiteral[a] = d.value;
        pp.dimExpression[a] = -1;
        if (!d.expression.empty()) {
          KernelPlan::DimExpression e;
          e.text = d.expressionText;
          for (const DimOp& op : d.expression) {
            int64_t v = op.value;
            if (op.kind == DimOp::Kind::Symbol) {
              v = symbolIndex(op.symbol);
              if (v < 0)
                throw Error(
                    fmt::format("{}: parameter '{}' dim {} uses '{}', which is not among the kernel's dim "
                                "symbols",
                                info.name, p.name, a, op.symbol));
            }
            e.ops.push_back({op.kind, v});
          }
          pp.dimExpression[a] = int(plan.dimExpressions.size());
          plan.dimExpressions.push_back(std::move(e));
        }
        if (d.isSymbol && pp.dimSymbol[a] < 0)
          throw Error(fmt::format("{}: parameter '{}' dim {} uses '{}', which is not among the kernel's dim symbols",
                                  info.name, p.name, a, d.symbol));
        dims.push_back(d.isSymbol ? d.symbol : !d.expression.empty() ? d.expressionText : std::to_string(d.value));
      }
      pp.typeText = fmt::format("{}[{}]{}", elem, fmt::join(dims, ", "), p.strided ? " strided" : "");
    }
    plan.params.push_back(std::move(pp));
  }
  for (size_t g = 0; g < info.aliasGroups.size(); ++g)
    for (const auto& name : info.aliasGroups[g])
      for (auto& pp : plan.params)
        if (pp.name == name && pp.isTensor) pp.aliasGroup = int(g);
  for (const auto& name : info.launchScalars) {
    auto it = std::find_if(info.params.begin(), info.params.end(), [&](const auto& p) { return p.name == name; });
    if (it == info.params.end() || it->isTensor)
      throw Error(fmt::format("{}: @grid or @block uses '{}', which is not a scalar parameter", info.name, name));
    plan.launchScalars.push_back(int(it - info.params.begin()));
  }
  if (plan.launchScalars.size() > size_t(kMaxLaunchScalars))
    throw Error(fmt::format("{}: @grid and @block use {} scalar parameters; the runtime supports at most {}", info.name,
                            plan.launchScalars.size(), kMaxLaunchScalars));
  addDivisibilitySlots(info, plan);
  for (const auto& g : info.exactGridDims) {
    int d = symbolIndex(g.dim);
    if (d >= 0 && !plan.isStatic[size_t(d)] && g.tile >= 1 && plan.exactGridSlots.size() < size_t(kMaxExactGridSlots))
      plan.exactGridSlots.push_back({d, g.tile});
  }
  // Where makeSpecKey puts their bits (after the words that precede them).
  if (!plan.exactGridSlots.empty())
    plan.exactGridWord =
        int(plan.staticSymbols.size() + plan.typeParams.size()) + (plan.anyStrided ? 2 : 0) +
        (plan.anyRunTensor ? 1 : 0) +
        int((plan.divisibilitySlots.size() + kDivisibilityCodesPerWord - 1) / kDivisibilityCodesPerWord);
  return plan;
}

bool SpecKey::operator==(const SpecKey& o) const {
  return count == o.count && std::memcmp(words, o.words, sizeof(int64_t) * size_t(count)) == 0;
}

uint64_t SpecKey::hash() const {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ uint64_t(count);
  for (int i = 0; i < count; ++i) {
    h ^= uint64_t(words[i]) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
  }
  return h ^ (h >> 33);
}

namespace {

// A signed scalar's value from its low `bits` bits.
int64_t signExtend(uint64_t raw, int bits) {
  if (bits >= 64) return int64_t(raw);
  const uint64_t sign = uint64_t(1) << (bits - 1);
  raw &= (sign << 1) - 1;
  return int64_t(raw ^ sign) - int64_t(sign);
}

// Row-major contiguous: no strides given, or strides equal to the row-major
// ones (a size-1 axis may have any stride).
bool isRowMajor(const Arg& a, int rank) {
  if (!a.hasStrides) return true;
  int64_t expect = 1;
  for (int ax = rank - 1; ax >= 0; --ax) {
    if (a.shape[ax] != 1 && a.strides[ax] != expect) return false;
    expect *= a.shape[ax];
  }
  return true;
}

// A tensor argument as the overlap check sees it: row-major strides when
// none were given.
StridedView viewOf(const Arg& a) {
  StridedView v;
  v.base = reinterpret_cast<uintptr_t>(a.data);
  v.elemBytes = int64_t(scalarBytes(a.dtype));
  v.rank = a.rank;
  int64_t contiguous = 1;
  for (int ax = a.rank - 1; ax >= 0; --ax) {
    v.shape[ax] = a.shape[ax];
    v.strides[ax] = a.hasStrides ? a.strides[ax] : contiguous;
    contiguous *= a.shape[ax];
  }
  return v;
}

// The same elements at the same addresses: base, element size, shape and
// strides all equal (size-1 axes' strides do not matter).
bool sameView(const StridedView& a, const StridedView& b) {
  if (a.base != b.base || a.elemBytes != b.elemBytes || a.rank != b.rank) return false;
  for (int ax = 0; ax < a.rank; ++ax)
    if (a.shape[ax] != b.shape[ax] || (a.shape[ax] != 1 && a.strides[ax] != b.strides[ax])) return false;
  return true;
}

std::string viewText(const std::string& name, const StridedView& v, const Arg& a) {
  return fmt::format("{}: {} strides [{}] at {:#x}", name, shapeText(a), fmt::join(v.strides, v.strides + v.rank, ", "),
                     v.base);
}

}  // namespace

namespace {

// A dim expression's value from the bound symbols, in 128-bit arithmetic:
// nullopt when it leaves int64 (or divides by zero), with `values` saying
// each symbol's value for the message.
std::optional<int64_t> evaluateDimExpression(const KernelPlan& plan, const KernelPlan::DimExpression& e,
                                             const Binding& b, std::string& values) {
  __int128 stack[2 * kMaxRank + 16];
  int top = 0;
  bool ok = true;
  for (const auto& op : e.ops) {
    if (op.kind == DimOp::Kind::Number || op.kind == DimOp::Kind::Symbol) {
      if (top == int(sizeof stack / sizeof stack[0])) return std::nullopt;
      __int128 v = op.value;
      if (op.kind == DimOp::Kind::Symbol) {
        v = b.dims[op.value];
        values +=
            fmt::format("{}{} = {}", values.empty() ? "" : ", ", plan.dimSymbols[size_t(op.value)], b.dims[op.value]);
      }
      stack[top++] = v;
      continue;
    }
    if (top < 2) return std::nullopt;
    __int128 r = stack[--top], l = stack[--top], v = 0;
    if (op.kind == DimOp::Kind::Add) v = l + r;
    if (op.kind == DimOp::Kind::Sub) v = l - r;
    if (op.kind == DimOp::Kind::Mul) v = l * r;
    if (op.kind == DimOp::Kind::FloorDiv) {
      if (r == 0) ok = false;
      else v = l / r;  // C++ truncation, as the generated code divides
    }
    if (v > std::numeric_limits<int64_t>::max() || v < std::numeric_limits<int64_t>::min()) ok = false;
    stack[top++] = v;
  }
  if (!ok || top != 1) return std::nullopt;
  return int64_t(stack[0]);
}

// Every axis written as an expression (`inp: f32[B, T, 3 * C]`) must have
// the expression's value: named with the parameter, axis, expression and
// the values it was computed from.
void checkDimExpressions(const KernelPlan& plan, const Arg* args, const Binding& b) {
  for (size_t pi = 0; pi < plan.params.size(); ++pi) {
    const ParamPlan& p = plan.params[pi];
    if (!p.isTensor || args[pi].kind != Arg::Kind::Tensor) continue;
    for (int ax = 0; ax < p.rank; ++ax) {
      if (p.dimExpression[ax] < 0) continue;
      const auto& e = plan.dimExpressions[size_t(p.dimExpression[ax])];
      std::string values;
      auto v = evaluateDimExpression(plan, e, b, values);
      const int64_t got = args[pi].shape[ax];
      std::string where = fmt::format("{}: parameter '{}' dim {} ({})", plan.kernel, p.name, ax, e.text);
      if (!v || *v < 1 || *v > kMaxDim)
        throw Error(fmt::format("{}: {} with {} is {}; a size must be from 1 to 2^62", where, e.text, values,
                                v ? std::to_string(*v) : std::string("out of range")));
      if (*v != got)
        throw Error(fmt::format("{}: expected {} = {} with {}, got {} in {}", where, e.text, *v, values, got,
                                shapeText(args[pi])));
    }
  }
}

// The largest dim, stride or extent of a launch served by 32-bit indices.
constexpr int64_t kMaxIndex32 = INT32_MAX;

// Whether every element offset of this view, and each of its strides, fits
// in an int32_t: its extent (largest offset + 1) is at most 2^31 - 1. Its
// element count too, even where strides of 0 (a broadcast view) keep the
// extent small: the generator bounds a product of one tensor's dims by it
// (generator/printer/index_bounds.h).
bool fitsIndex32(const Arg& a, int rank, int64_t elements) {
  if (elements > kMaxIndex32) return false;
  if (!a.hasStrides) return true;
  int64_t extent = 1;
  for (int ax = 0; ax < rank; ++ax) {
    const int64_t stride = a.strides[ax] < 0 ? -a.strides[ax] : a.strides[ax];
    if (stride > kMaxIndex32 || a.shape[ax] > kMaxIndex32) return false;
    extent += (a.shape[ax] - 1) * stride;  // each term below 2^62: no overflow
    if (extent > kMaxIndex32) return false;
  }
  return true;
}
}  // namespace

// Generated kernels take tensors as __restrict__ pointers (docs/language.md):
// a tensor the kernel writes must not share memory with any other tensor
// argument, or the compiler's assumptions give silently wrong results. The
// test is exact (findOverlap): views that interleave without sharing a byte,
// such as q and k slices of one qkv buffer, are accepted.
void checkNoOverlap(const KernelPlan& plan, const Arg* args) {
  for (size_t i = 0; i < plan.params.size(); ++i) {
    if (!plan.params[i].isTensor || !plan.params[i].writes || args[i].kind == Arg::Kind::None) continue;
    StridedView written = viewOf(args[i]);
    for (size_t j = 0; j < plan.params.size(); ++j) {
      // Two written tensors are one pair, checked once.
      if (j == i || !plan.params[j].isTensor || (plan.params[j].writes && j < i)) continue;
      if (args[j].kind == Arg::Kind::None) continue;  // an absent optional tensor has no memory
      StridedView other = viewOf(args[j]);
      // @alias: the very same view is allowed (in-place updates written
      // with two parameters); anything else that overlaps is not.
      const bool aliased = plan.params[i].aliasGroup >= 0 && plan.params[i].aliasGroup == plan.params[j].aliasGroup;
      if (aliased && sameView(written, other)) continue;
      OverlapResult r = findOverlap(written, other);
      if (r.kind == OverlapKind::Disjoint) continue;
      const std::string &w = plan.params[i].name, &o = plan.params[j].name;
      if (r.kind == OverlapKind::Overlap && aliased)
        throw Error(
            fmt::format("{}: parameters '{}' and '{}' are @alias, so they may be the same view, but these "
                        "overlap without being the same ({}; {}): {}[{}] and {}[{}] share bytes at {:#x}",
                        plan.kernel, w, o, viewText(w, written, args[i]), viewText(o, other, args[j]), w,
                        fmt::join(r.indexA, r.indexA + written.rank, ", "), o,
                        fmt::join(r.indexB, r.indexB + other.rank, ", "), r.address));
      if (r.kind == OverlapKind::Overlap)
        throw Error(
            fmt::format("{}: parameters '{}' and '{}' overlap in memory: {}[{}] and {}[{}] share bytes at {:#x}; "
                        "'{}' is written and tensors are __restrict__: pass separate buffers",
                        plan.kernel, w, o, w, fmt::join(r.indexA, r.indexA + written.rank, ", "), o,
                        fmt::join(r.indexB, r.indexB + other.rank, ", "), r.address, w));
      // No search at all: a view spans more than the check's 128-bit arithmetic handles.
      const char* why = r.work == 0 ? "for views spanning over 2^100 bytes" : "within its work budget";
      throw Error(fmt::format(
          "{}: parameters '{}' and '{}' may overlap in memory: the launch check could not prove the views disjoint "
          "{} ({}; {}); '{}' is written and tensors are __restrict__: pass separate buffers",
          plan.kernel, w, o, why, viewText(w, written, args[i]), viewText(o, other, args[j]), w));
    }
  }
}

void bindArguments(const KernelPlan& plan, const Arg* args, size_t count, Binding& out) {
  const std::string& k = plan.kernel;
  if (count != plan.params.size()) {
    std::string expected;
    for (const auto& p : plan.params) expected += (expected.empty() ? "" : ", ") + p.name + ": " + p.typeText;
    throw Error(fmt::format("{}: expected {} argument{} ({}), got {}", k, plan.params.size(),
                            plan.params.size() == 1 ? "" : "s", expected, count));
  }
  Origin dimOrigin[kMaxDimSymbols];
  Origin typeOrigin[kMaxTypeParams];
  for (size_t i = 0; i < plan.dimSymbols.size(); ++i) out.dims[i] = -1;
  out.contiguousStrided = 0;
  out.unitStride = 0;
  out.alignedTensors = 0;
  out.absentTensors = 0;
  out.index32 = plan.index32;
  for (size_t i = 0; i < plan.typeParams.size(); ++i) out.types[i] = ScalarType::Invalid;

  for (size_t pi = 0; pi < plan.params.size(); ++pi) {
    const ParamPlan& p = plan.params[pi];
    const Arg& a = args[pi];
    auto fail = [&](const std::string& what) {
      throw Error(fmt::format("{}: parameter '{}' ({}): {}", k, p.name, p.typeText, what));
    };
    if (a.kind == Arg::Kind::None) {
      if (!p.isTensor || !p.optional)
        fail("spindle::none() is only for optional tensors (declared 'T[...] | None'); pass a value");
      if (pi >= 64) fail("an optional tensor past the 64th parameter cannot be left absent");
      out.absentTensors |= uint64_t(1) << pi;
      continue;
    }
    if (p.isTensor != (a.kind == Arg::Kind::Tensor))
      fail(fmt::format("expected a {}, got {}", p.isTensor ? "tensor" : "scalar", argText(a)));
    if (scalarName(a.dtype).empty() || a.dtype == ScalarType::Invalid) fail("the argument has no valid dtype");

    // Element / scalar type.
    if (p.typeParam < 0) {
      if (a.dtype != p.dtype)
        fail(fmt::format("dtype mismatch: expected {}, got {}", scalarName(p.dtype), scalarName(a.dtype)));
    } else {
      ScalarType& bound = out.types[p.typeParam];
      const std::string& t = plan.typeParams[size_t(p.typeParam)];
      if (bound == ScalarType::Invalid) {
        bound = a.dtype;
        typeOrigin[p.typeParam] = Origin{int(pi), -1};
      } else if (bound != a.dtype) {
        fail(fmt::format("type parameter {} bound to {} by {} but {} by '{}'", t, scalarName(bound),
                         originText(plan, typeOrigin[p.typeParam]), scalarName(a.dtype), p.name));
      }
    }
    if (!p.isTensor) continue;

    if (a.data == nullptr) fail("null device pointer");
    if (a.rank != p.rank)
      fail(fmt::format("rank mismatch: expected rank {}, got rank {} ({})", p.rank, a.rank, shapeText(a)));

    // Sizes: positive, literal sizes equal, repeated symbols agree, no overflow.
    int64_t elements = 1;
    for (int ax = 0; ax < p.rank; ++ax) {
      int64_t v = a.shape[ax];
      int sym = p.dimSymbol[ax];
      // Messages are formatted only on failure: this runs on every launch.
      auto failDim = [&](const std::string& what) {
        std::string dimName =
            sym >= 0 ? fmt::format("dim {} ({})", ax, plan.dimSymbols[size_t(sym)]) : fmt::format("dim {}", ax);
        throw Error(fmt::format("{}: parameter '{}' {}: {}", k, p.name, dimName, what));
      };
      if (v <= 0)
        failDim(fmt::format("size {} in {}; every size must be at least 1 (empty tensors are not launched)", v,
                            shapeText(a)));
      // Loops running to a dim advance with a plain `i += step` (docs/language.md 5.8).
      if (v > kMaxDim) failDim(fmt::format("size {} in {} is over 2^62, the largest a dim may be", v, shapeText(a)));
      if (p.dimExpression[ax] >= 0) {
        // checked below, once every symbol is bound
      } else if (sym < 0) {
        if (v != p.dimLiteral[ax]) failDim(fmt::format("expected {}, got {}", p.dimLiteral[ax], v));
      } else if (out.dims[sym] < 0) {
        out.dims[sym] = v;
        dimOrigin[sym] = Origin{int(pi), ax};
      } else if (out.dims[sym] != v) {
        failDim(fmt::format("bound to {} by {} but {} by '{}'", out.dims[sym], originText(plan, dimOrigin[sym]), v,
                            p.name));
      }
      if (elements > std::numeric_limits<int64_t>::max() / v)
        fail(fmt::format("{} has more elements than an int64_t can count", shapeText(a)));
      elements *= v;
    }
    int64_t elemBytes = int64_t(scalarBytes(a.dtype));
    if (elements > std::numeric_limits<int64_t>::max() / elemBytes)
      fail(fmt::format("{} is more bytes than an int64_t can count", shapeText(a)));

    // A strided parameter passed row-major contiguous gets the contiguous
    // specialization (addressed by its dims, as PyTorch's fast paths do).
    if (p.strided && pi < 64 && isRowMajor(a, p.rank)) out.contiguousStrided |= uint64_t(1) << pi;
    // Else one whose rows are consecutive elements (a padded row pitch, a
    // slice of columns) gets the unit-stride one: its runs stay adjacent.
    else if (p.strided && pi < 64 && hasUnitInnerStride(a, p.rank)) out.unitStride |= uint64_t(1) << pi;
    if (p.accessedInRuns && pi < 64 && reinterpret_cast<uintptr_t>(a.data) % kVectorAlignment == 0)
      out.alignedTensors |= uint64_t(1) << pi;
    if (out.index32 && !fitsIndex32(a, p.rank, elements)) out.index32 = false;

    // Layout: a non-strided parameter needs a row-major contiguous view.
    if (a.hasStrides && !p.strided) {
      int64_t expect = 1;
      for (int ax = p.rank - 1; ax >= 0; --ax) {
        if (a.shape[ax] != 1 && a.strides[ax] != expect)
          fail(fmt::format(
              "non-contiguous view: strides [{}] for shape [{}] (contiguous would be stride {} at "
              "dim {}); declare the parameter 'strided' or pass a contiguous copy",
              fmt::join(a.strides, a.strides + p.rank, ", "), fmt::join(a.shape, a.shape + p.rank, ", "), expect, ax));
        expect *= a.shape[ax];
      }
    }
  }

  // Integer scalars the launch expressions use, widened to int64 (their
  // dtypes were checked above).
  for (size_t i = 0; i < plan.launchScalars.size(); ++i) {
    const Arg& a = args[plan.launchScalars[i]];
    out.launchScalars[i] = isSigned(a.dtype) ? signExtend(a.bits, scalarBits(a.dtype)) : int64_t(a.bits);
  }

  for (size_t t = 0; t < plan.typeParams.size(); ++t)
    if (out.types[t] == ScalarType::Invalid)
      throw Error(fmt::format("{}: type parameter {} is not bound by any argument{}", k, plan.typeParams[t],
                              out.absentTensors ? " (absent tensors bind nothing)" : ""));
  for (size_t d = 0; d < plan.dimSymbols.size(); ++d)
    if (out.dims[d] < 0)
      throw Error(fmt::format("{}: dim symbol {} is not bound by any argument's shape{}", k, plan.dimSymbols[d],
                              out.absentTensors ? " (absent tensors bind nothing)" : ""));

  for (size_t d = 0; d < plan.dimSymbols.size(); ++d)
    if (out.dims[d] > kMaxIndex32) out.index32 = false;
  if (!plan.dimExpressions.empty()) checkDimExpressions(plan, args, out);
  // Memory last: the sizes it reasons about are checked by now.
  checkNoOverlap(plan, args);

  findGranularities(plan, args, out);
  out.exactGrid = 0;
  for (size_t i = 0; i < plan.exactGridSlots.size(); ++i)
    if (out.dims[plan.exactGridSlots[i].dim] % plan.exactGridSlots[i].tile == 0) out.exactGrid |= uint64_t(1) << i;
  makeSpecKey(plan, out);
}

void makeSpecKey(const KernelPlan& plan, Binding& b) {
  b.key.count = 0;
  for (int s : plan.staticSymbols) putKeyWord(b.key, b.dims[s]);
  for (size_t t = 0; t < plan.typeParams.size(); ++t) putKeyWord(b.key, int64_t(b.types[t]));
  if (plan.anyStrided) {
    putKeyWord(b.key, int64_t(b.contiguousStrided));
    putKeyWord(b.key, int64_t(b.unitStride));
  }
  if (plan.anyRunTensor) putKeyWord(b.key, int64_t(b.alignedTensors));
  // Each granularity as a 3-bit code (0 none, else log2: 1 for 2 ... 4 for 16).
  uint64_t word = 0;
  for (size_t i = 0; i < plan.divisibilitySlots.size(); ++i) {
    const size_t shift = 3 * (i % kDivisibilityCodesPerWord);
    word |= uint64_t(granularityCode(b.granularity[i])) << shift;
    if ((i + 1) % kDivisibilityCodesPerWord == 0 || i + 1 == plan.divisibilitySlots.size()) {
      putKeyWord(b.key, int64_t(word));
      word = 0;
    }
  }
  if (!plan.exactGridSlots.empty()) {
    if (b.key.count != plan.exactGridWord)  // KernelPlan::make placed it; tuneKey relies on it
      throw Error(fmt::format("{}: internal: exact-grid key word at {}, expected {}", plan.kernel, b.key.count,
                              plan.exactGridWord));
    putKeyWord(b.key, int64_t(b.exactGrid));
  }
  if (plan.anyOptional) putKeyWord(b.key, int64_t(b.absentTensors));
  putKeyWord(b.key, b.index32 ? 1 : 0);
}

int granularityOf(const KernelPlan& plan, const Binding& b, const std::string& name) {
  for (size_t i = 0; i < plan.divisibilitySlots.size(); ++i)
    if (plan.divisibilitySlots[i].name == name) return b.granularity[i];
  return 0;
}

void checkGeometry(const KernelPlan& plan, const Binding& b, const LaunchGeometry& g) {
  static constexpr int64_t kGridMax[3] = {2147483647, 65535, 65535};
  static constexpr int64_t kBlockMax[3] = {1024, 1024, 64};
  static constexpr int64_t kThreadsMax = 1024;
  auto fail = [&](const std::string& what) {
    std::string dims;
    for (size_t i = 0; i < plan.dimSymbols.size(); ++i)
      dims += fmt::format("{}{}={}", dims.empty() ? "" : ", ", plan.dimSymbols[i], b.dims[i]);
    throw Error(fmt::format("{}: {} (grid [{}, {}, {}], block [{}, {}, {}], with {})", plan.kernel, what, g.grid[0],
                            g.grid[1], g.grid[2], g.block[0], g.block[1], g.block[2], dims.empty() ? "no dims" : dims));
  };
  static const char* kAxis[3] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i) {
    if (g.grid[i] < 1 || g.grid[i] > kGridMax[i])
      fail(fmt::format("launch grid {} is {}; it must be in [1, {}]", kAxis[i], g.grid[i], kGridMax[i]));
    if (g.block[i] < 1 || g.block[i] > kBlockMax[i])
      fail(fmt::format("block {} is {}; it must be in [1, {}]", kAxis[i], g.block[i], kBlockMax[i]));
  }
  if (g.block[0] * g.block[1] * g.block[2] > kThreadsMax)
    fail(fmt::format("{} threads per block; at most {}", g.block[0] * g.block[1] * g.block[2], kThreadsMax));
  if (g.dynamicSharedBytes > uint64_t(std::numeric_limits<unsigned>::max()))
    fail(fmt::format("{} bytes of dynamic shared memory", g.dynamicSharedBytes));
}

std::vector<PackOp> makePackOps(const KernelPlan& plan, const std::vector<AbiArg>& abi) {
  if (abi.size() > size_t(kMaxAbiArgs))
    throw Error(
        fmt::format("{}: {} kernel arguments; the runtime supports at most {}", plan.kernel, abi.size(), kMaxAbiArgs));
  std::vector<PackOp> ops;
  for (const auto& a : abi) {
    PackOp op{a.kind, a.paramIndex, -1, 8};
    switch (a.kind) {
      case AbiArgKind::TensorPointer: break;
      case AbiArgKind::Scalar: op.bytes = int(scalarBytes(a.type)); break;
      case AbiArgKind::Stride: op.index = a.axis; break;
      case AbiArgKind::TensorMap:
      case AbiArgKind::TensorMapReady:
        if (a.axis < 0 || a.axis >= kMaxTensorMaps)
          throw Error(fmt::format("{}: tensor map {} of the generated kernel; the runtime supports {}", plan.kernel,
                                  a.axis, kMaxTensorMaps));
        op.index = a.axis;
        if (a.kind == AbiArgKind::TensorMapReady) break;
        op.bytes = int(scalarBytes(a.type));
        op.boxRows = a.boxRows;
        op.boxCols = a.boxCols;
        op.swizzle = a.swizzle;
        break;
      case AbiArgKind::Dim: {
        auto it = std::find(plan.dimSymbols.begin(), plan.dimSymbols.end(), a.dimSymbol);
        if (it == plan.dimSymbols.end())
          throw Error(
              fmt::format("{}: generated kernel expects dim '{}', unknown to the kernel", plan.kernel, a.dimSymbol));
        op.index = int(it - plan.dimSymbols.begin());
        break;
      }
    }
    bool needsParam = a.kind != AbiArgKind::Dim && a.kind != AbiArgKind::TensorMapReady;
    if (needsParam && (a.paramIndex < 0 || size_t(a.paramIndex) >= plan.params.size()))
      throw Error(fmt::format("{}: generated kernel argument '{}' refers to parameter {} of {}", plan.kernel, a.cppName,
                              a.paramIndex, plan.params.size()));
    if (a.kind == AbiArgKind::Stride && (a.axis < 0 || a.axis >= plan.params[size_t(a.paramIndex)].rank))
      throw Error(fmt::format("{}: generated kernel argument '{}' is the stride of axis {} of a rank-{} tensor",
                              plan.kernel, a.cppName, a.axis, plan.params[size_t(a.paramIndex)].rank));
    ops.push_back(op);
  }
  return ops;
}

namespace {

// The map of tensor argument `a` for `op`, into out.maps[op.index]: made by
// the backend where TMA can read the tensor as the map says (a 2-D
// row-major view, its base 16-byte aligned, its row pitch a multiple of 16
// bytes, no dim zero); else zeros, not ready.
void packTensorMap(const PackOp& op, const Arg& a, Backend* backend, int device, PackedArgs& out) {
  PackedArgs::TensorMap& map = out.maps[op.index];
  bool ready = false;
  if (backend && a.rank == 2 && a.data) {
    Backend::TensorMapRequest r;
    r.base = a.data;
    r.elementBytes = op.bytes;
    r.rows = a.shape[0];
    r.cols = a.shape[1];
    const int64_t inner = a.hasStrides ? a.strides[1] : 1;
    r.rowStrideBytes = (a.hasStrides ? a.strides[0] : a.shape[1]) * op.bytes;
    r.boxRows = op.boxRows;
    r.boxCols = op.boxCols;
    r.swizzle = op.swizzle;
    r.device = device;
    if (inner == 1 && r.rows > 0 && r.cols > 0 && reinterpret_cast<uintptr_t>(a.data) % 16 == 0 &&
        r.rowStrideBytes > 0 && r.rowStrideBytes % 16 == 0)
      ready = backend->encodeTensorMap(r, map.bytes);
  }
  if (!ready) {
    std::memset(map.bytes, 0, sizeof map.bytes);
    ++out.mapsNotMade;
  }
  out.mapReady[op.index] = ready;
}

}  // namespace

void packArguments(const std::vector<PackOp>& ops, const Arg* args, const Binding& b, PackedArgs& out, Backend* backend,
                   int device) {
  out.count = int(ops.size());
  out.mapsNotMade = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const PackOp& op = ops[i];
    uint64_t& slot = out.slots[i];
    slot = 0;
    switch (op.kind) {
      case AbiArgKind::TensorMap:
        packTensorMap(op, args[op.param], backend, device, out);
        out.pointers[i] = out.maps[op.index].bytes;
        continue;
      case AbiArgKind::TensorMapReady: slot = out.mapReady[op.index] ? 1 : 0; break;
      case AbiArgKind::TensorPointer: {
        const void* p = args[op.param].data;
        std::memcpy(&slot, &p, sizeof p);
        break;
      }
      case AbiArgKind::Scalar:
        slot = args[op.param].bits;  // low bytes hold the value (little-endian)
        break;
      case AbiArgKind::Stride: {
        const Arg& a = args[op.param];
        int64_t s = 1;
        if (a.hasStrides) {
          s = a.strides[op.index];
        } else {
          for (int ax = a.rank - 1; ax > op.index; --ax) s *= a.shape[ax];
        }
        std::memcpy(&slot, &s, sizeof s);
        break;
      }
      case AbiArgKind::Dim: std::memcpy(&slot, &b.dims[op.index], sizeof(int64_t)); break;
    }
    out.pointers[i] = &slot;
  }
}

std::map<std::string, int64_t> dimMap(const KernelPlan& plan, const Binding& b) {
  std::map<std::string, int64_t> m;
  for (size_t i = 0; i < plan.dimSymbols.size(); ++i) m[plan.dimSymbols[i]] = b.dims[i];
  return m;
}

std::map<std::string, int64_t> launchValueMap(const KernelPlan& plan, const Binding& b) {
  std::map<std::string, int64_t> m = dimMap(plan, b);
  for (size_t i = 0; i < plan.launchScalars.size(); ++i)
    m[plan.params[size_t(plan.launchScalars[i])].name] = b.launchScalars[i];
  return m;
}

}  // namespace spindle::rt
