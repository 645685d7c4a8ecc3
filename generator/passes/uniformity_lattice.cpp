#include "passes/uniformity_lattice.h"

#include <algorithm>

namespace spindle {
namespace {

// Python's floor division and remainder (the language's, 4.7).
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t floorMod(int64_t a, int64_t b) { return a - floorDiv(a, b) * b; }

std::optional<int64_t> foldConstants(BinaryOp op, int64_t a, int64_t b) {
  switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::FloorDiv: return b == 0 ? std::nullopt : std::optional<int64_t>(floorDiv(a, b));
    case BinaryOp::Mod: return b == 0 ? std::nullopt : std::optional<int64_t>(floorMod(a, b));
    case BinaryOp::Shl: return b < 0 || b > 62 ? std::nullopt : std::optional<int64_t>(a << b);
    case BinaryOp::Shr: return b < 0 || b > 62 ? std::nullopt : std::optional<int64_t>(a >> b);
    case BinaryOp::BitAnd: return a & b;
    case BinaryOp::BitOr: return a | b;
    case BinaryOp::BitXor: return a ^ b;
    case BinaryOp::Lt: return a < b;
    case BinaryOp::Le: return a <= b;
    case BinaryOp::Gt: return a > b;
    case BinaryOp::Ge: return a >= b;
    case BinaryOp::Eq: return a == b;
    case BinaryOp::Ne: return a != b;
    case BinaryOp::Div:
    case BinaryOp::Pow:
    case BinaryOp::And:
    case BinaryOp::Or: return std::nullopt;
  }
  return std::nullopt;
}

// (L // div) % mod, divided by c > 0.
std::optional<ThreadSlice> divideSlice(ThreadSlice s, int64_t c) {
  if (c <= 0) return std::nullopt;
  if (s.mod == 0) return ThreadSlice{s.div * c, 0};
  if (s.mod > 0 && c >= s.mod) return ThreadSlice{s.div, 1};  // always 0
  if (s.mod > 0 && s.mod % c == 0) return ThreadSlice{s.div * c, s.mod / c};
  return std::nullopt;
}

// (L // div) % mod, remainder by c > 0.
std::optional<ThreadSlice> remainderSlice(ThreadSlice s, int64_t c) {
  if (c <= 0) return std::nullopt;
  if (s.mod == 0 || (s.mod > 0 && s.mod % c == 0)) return ThreadSlice{s.div, c};
  if (s.mod > 0 && c >= s.mod) return s;  // below c already
  return std::nullopt;
}

bool isPowerOfTwoMinusOne(int64_t c) { return c >= 0 && ((c + 1) & c) == 0; }

// `slice OP c` for a comparison: a constant when it is the same at both
// ends of the slice's values [0, mod - 1].
std::optional<int64_t> decideComparison(BinaryOp op, ThreadSlice s, int64_t c) {
  if (s.mod <= 0) return std::nullopt;
  int64_t hi = s.mod - 1;
  if (op == BinaryOp::Eq || op == BinaryOp::Ne) {
    if (c >= 0 && c <= hi) return std::nullopt;
    return op == BinaryOp::Ne;
  }
  auto atLo = foldConstants(op, 0, c), atHi = foldConstants(op, hi, c);
  if (atLo && atHi && *atLo == *atHi) return atLo;
  return std::nullopt;
}

BinaryOp mirrored(BinaryOp op) {
  switch (op) {
    case BinaryOp::Lt: return BinaryOp::Gt;
    case BinaryOp::Le: return BinaryOp::Ge;
    case BinaryOp::Gt: return BinaryOp::Lt;
    case BinaryOp::Ge: return BinaryOp::Le;
    default: return op;
  }
}

WidthFact applyAtWidth(BinaryOp op, const WidthFact& a, const WidthFact& b, int w) {
  WidthFact r;
  r.level = std::max(a.level, b.level);
  if (a.constant && b.constant) {
    r.constant = foldConstants(op, *a.constant, *b.constant);
    return r;
  }
  // A slice on one side, a constant on the other.
  const WidthFact* sliced = a.slice && b.constant ? &a : (b.slice && a.constant ? &b : nullptr);
  if (!sliced) return r;
  int64_t c = sliced == &a ? *b.constant : *a.constant;
  ThreadSlice s = *sliced->slice;
  std::optional<ThreadSlice> out;
  if (sliced == &a) {
    switch (op) {
      case BinaryOp::FloorDiv: out = divideSlice(s, c); break;
      case BinaryOp::Shr:
        if (c >= 0 && c <= 30) out = divideSlice(s, int64_t(1) << c);
        break;
      case BinaryOp::Mod: out = remainderSlice(s, c); break;
      case BinaryOp::BitAnd:
        if (isPowerOfTwoMinusOne(c)) out = remainderSlice(s, c + 1);
        break;
      default: break;
    }
  } else if (op == BinaryOp::BitAnd && isPowerOfTwoMinusOne(c)) {
    out = remainderSlice(s, c + 1);
  }
  if (isComparison(op)) {
    if (auto decided = decideComparison(sliced == &a ? op : mirrored(op), s, c)) {
      r.level = Uniformity::Block;
      r.constant = decided;
    }
    return r;
  }
  if (!out) return r;
  r.slice = out;
  r.level = sliceLevel(*out, w);
  if (out->mod == 1) {
    r.slice.reset();
    r.constant = 0;
  }
  return r;
}

}  // namespace

Uniformity sliceLevel(const ThreadSlice& s, int w) {
  if (s.mod == 1) return Uniformity::Block;
  if (s.div % (4 * w) == 0) return Uniformity::WarpGroup;  // the group of 4 warps starting at a multiple of 4
  if (s.div % w == 0) return Uniformity::Warp;
  return Uniformity::Divergent;
}

ValueFact ValueFact::constant(int64_t v32, int64_t v64) {
  ValueFact v;
  v.width[0].constant = v32;
  v.width[1].constant = v64;
  return v;
}

ValueFact ValueFact::ofLevel(Uniformity level, std::string source) {
  ValueFact v;
  v.width[0].level = v.width[1].level = level;
  if (level != Uniformity::Block) v.source = std::move(source);
  return v;
}

ValueFact ValueFact::ofSlice(ThreadSlice s32, ThreadSlice s64, std::string source) {
  ValueFact v;
  const ThreadSlice slices[2] = {s32, s64};
  for (int i = 0; i < 2; ++i) {
    v.width[i].slice = slices[i];
    v.width[i].level = sliceLevel(slices[i], kWarpWidths[i]);
  }
  if (!v.isBlockUniform()) v.source = std::move(source);
  return v;
}

ValueFact join(const ValueFact& a, const ValueFact& b) {
  ValueFact r;
  for (int i = 0; i < 2; ++i) {
    const WidthFact &x = a.width[i], &y = b.width[i];
    r.width[i].level = std::max(x.level, y.level);
    if (x.slice && x.slice == y.slice) r.width[i].slice = x.slice;
    if (x.constant && x.constant == y.constant) r.width[i].constant = x.constant;
  }
  if (!r.isBlockUniform()) r.source = a.worst() >= b.worst() && !a.source.empty() ? a.source : b.source;
  return r;
}

ValueFact applyBinary(BinaryOp op, const ValueFact& a, const ValueFact& b) {
  ValueFact r;
  for (int i = 0; i < 2; ++i) r.width[i] = applyAtWidth(op, a.width[i], b.width[i], kWarpWidths[i]);
  if (!r.isBlockUniform()) r.source = a.worst() >= b.worst() && !a.source.empty() ? a.source : b.source;
  return r;
}

ValueFact forgetForm(const ValueFact& v) {
  ValueFact r = v;
  for (auto& w : r.width) {
    w.slice.reset();
    w.constant.reset();
  }
  return r;
}

}  // namespace spindle
