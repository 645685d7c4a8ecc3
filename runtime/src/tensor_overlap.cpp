// Exact overlap of two strided views, at byte granularity.
//
// The problem. View A's element x occupies bytes [a + ea * sum_i(s_i x_i),
// ... + ea), with 0 <= x_i < n_i; view B likewise with b, eb, r_j, y_j, m_j.
// They share a byte iff two such byte intervals intersect, i.e. iff
//
//   sum_i (ea s_i) x_i - sum_j (eb r_j) y_j  in  [D - (ea - 1), D + (eb - 1)],   D = b - a.
//
// (Intervals [p, p + ea) and [q, q + eb) meet iff -(ea - 1) <= q - p <= eb - 1.)
// So: one linear form over all axes of both views, each variable bounded, and
// a target window. Bounded integer feasibility of this kind is NP-hard in
// general (it contains subset sum), hence a work budget. The steps:
//
// 1. Fast path: the byte extents [lo, hi) of the views. Disjoint extents
//    answer Disjoint with no further work (the common launch).
// 2. Normal form: drop axes of size 1 or stride 0 (they add nothing). A
//    negative coefficient k on z in [0, m] becomes |k| on z' = m - z, moving
//    |k| m into the window. Now every term is c z with c > 0, z in [0, m].
// 3. Covering merges: if c2 = q c1 with q <= m1 + 1, then
//    {z1 + q z2} over the boxes is exactly the whole range [0, m1 + q m2]
//    (take z2 = min(m2, v / q), z1 = v - q z2), so the two terms are one term
//    c1 z with z in [0, m1 + q m2]: the same set of sums, hence the same
//    answer, and the split is recovered for the witness. This merges equal
//    strides of the two views (q = 1) and contiguous runs (q = m1 + 1).
// 4. Branch and bound, terms by decreasing c. At term k, the terms after it
//    reach exactly some subset of [0, R] (R = sum of their c m) made of
//    multiples of G (the gcd of their c). So the window is first clipped to
//    [0, R_k]; if it holds no multiple of G_k there is no solution (this gcd
//    test alone proves even and odd columns disjoint); else only values z
//    with c z + [0, R_{k+1}] meeting the window are tried (this interval test
//    proves q/k/v slices and kv_cache[:, 0] / [:, 1] disjoint). The
//    last term is solved directly, the last two exactly by the extended
//    Euclid algorithm (c1 z1 + c2 z2 = T has its solutions on one line; the
//    box cuts it to an interval) for each multiple T of their gcd in the
//    window. All of these tests are necessary conditions or exact, so a
//    Disjoint answer is a proof and an Overlap answer comes with the z that
//    satisfy the equation.
//
// Why the common cases are cheap: when the axes are nested (each |stride| is
// larger than the span of all smaller ones, as in any slice of a row-major
// buffer), R_{k+1} < c_k, so at most 2 + window / c_k values of z pass the
// interval test at each term, and after the first branch the window hugs
// one end of [0, R]: the search is a few nodes per axis. Disjoint extents,
// gcd arguments and merges cost no search at all.
//
// Overflow: c = |stride| * elemBytes < 2^127 always; spans c * m are
// computed saturating at 2^100. A view spanning more than that (only absurd
// strides do; no address space is 2^100 bytes) answers Unknown when its
// extent meets the other's. Below it every sum of at most 16 spans, window
// bound and product c * z fits in __int128 with room.
#include "tensor_overlap.h"

#include <algorithm>
#include <utility>

namespace spindle::rt {
namespace {

using i128 = __int128;

constexpr i128 kSpanLimit = i128(1) << 100;
constexpr int kMaxTerms = 2 * kMaxRank;

// min(a * b, kSpanLimit) for a, b >= 0: a stride times a size may not fit.
i128 cappedMul(i128 a, i128 b) {
  i128 p;
  if (__builtin_mul_overflow(a, b, &p) || p > kSpanLimit) return kSpanLimit;
  return p;
}

i128 cappedAdd(i128 a, i128 b) { return std::min(a + b, kSpanLimit); }  // a, b in [0, kSpanLimit]

i128 absOf(int64_t v) { return v < 0 ? -i128(v) : i128(v); }

// Truncating division and remainder for b > 0, in 64-bit instructions when
// both operands fit (nearly always): libgcc's 128-bit division is slow.
bool fits64(i128 v) { return v == i128(int64_t(v)); }
i128 quot(i128 a, i128 b) { return fits64(a) && fits64(b) ? i128(int64_t(a) / int64_t(b)) : a / b; }
i128 rem(i128 a, i128 b) { return fits64(a) && fits64(b) ? i128(int64_t(a) % int64_t(b)) : a % b; }

i128 floorDiv(i128 a, i128 b) {  // b > 0
  i128 q = quot(a, b);
  return (a < 0 && q * b != a) ? q - 1 : q;
}

i128 ceilDiv(i128 a, i128 b) { return -floorDiv(-a, b); }  // b > 0

i128 modPositive(i128 a, i128 b) {  // b > 0; result in [0, b)
  i128 r = rem(a, b);
  return r < 0 ? r + b : r;
}

i128 gcdOf(i128 a, i128 b) {
  while (b != 0) a = std::exchange(b, rem(a, b));
  return a;
}

// The inverse of a modulo b, for gcd(a, b) = 1 and 0 < b < 2^62 (0 when b is 1).
i128 inverseMod(i128 a, i128 b) {
  i128 r0 = modPositive(a, b), r1 = b, x0 = 1, x1 = 0;
  while (r1 != 0) {
    i128 q = quot(r0, r1);
    r0 = std::exchange(r1, r0 - q * r1);
    x0 = std::exchange(x1, x0 - q * x1);
  }
  return modPositive(x0, b);
}

struct Extent {
  bool empty = false;
  i128 below = 0;  // bytes reachable below the base (negative strides)
  i128 above = 0;  // bytes reachable above the base (positive strides)
};

// The extent in 128 bits, spans saturating at kSpanLimit: for any view.
Extent wideExtentOf(const StridedView& v) {
  Extent e;
  for (int ax = 0; ax < v.rank; ++ax) {
    if (v.shape[ax] <= 1 || v.strides[ax] == 0) continue;
    i128 span = cappedMul(absOf(v.strides[ax]) * v.elemBytes, v.shape[ax] - 1);
    i128& side = v.strides[ax] < 0 ? e.below : e.above;
    side = cappedAdd(side, span);
  }
  return e;
}

// The extent in 64-bit arithmetic (every real view: this runs at each
// launch), or in 128 bits when that overflows.
Extent extentOf(const StridedView& v) {
  int64_t low = 0, high = 0;  // in elements
  bool overflow = false, empty = v.elemBytes < 1;
  for (int ax = 0; ax < v.rank; ++ax) {
    if (v.shape[ax] < 1) {
      empty = true;
      continue;
    }
    int64_t span;
    overflow |= __builtin_mul_overflow(v.strides[ax], v.shape[ax] - 1, &span);
    if (span < 0) {
      overflow |= __builtin_add_overflow(low, span, &low);
    } else {
      overflow |= __builtin_add_overflow(high, span, &high);
    }
  }
  overflow |= __builtin_mul_overflow(low, v.elemBytes, &low);
  overflow |= __builtin_mul_overflow(high, v.elemBytes, &high);
  Extent e = overflow ? wideExtentOf(v) : Extent{false, -i128(low), i128(high)};
  e.empty = empty;
  return e;
}

// One variable of the linear form: coef * z, z in [0, count]. Before merges
// a term is one axis of one view.
struct Term {
  i128 coef = 0;
  i128 count = 0;
  int64_t lastIndex = 0;  // the axis's size - 1: count before any merge
  int view = 0;           // 0: A, 1: B
  int axis = 0;
  bool flipped = false;  // z = count - index (the stride was negative in the form)
  bool live = true;      // false once merged into another term
};

// `from` was merged into `into` with coef(from) = q * coef(into).
struct Merge {
  int into = 0;
  int from = 0;
  i128 q = 0;
  i128 fromCount = 0;
};

struct Problem {
  Term terms[kMaxTerms];
  int termCount = 0;
  Merge merges[kMaxTerms];
  int mergeCount = 0;
  i128 lo = 0, hi = 0;  // the window the sum of coef * z must fall in
};

void addAxes(Problem& p, const StridedView& v, int view, int sign) {
  for (int ax = 0; ax < v.rank; ++ax) {
    if (v.shape[ax] <= 1 || v.strides[ax] == 0) continue;
    i128 coef = i128(v.strides[ax]) * v.elemBytes * sign;  // < 2^127 in magnitude
    Term& t = p.terms[p.termCount++];
    t = Term{coef < 0 ? -coef : coef, v.shape[ax] - 1, v.shape[ax] - 1, view, ax, coef < 0, true};
    // coef * z = |coef| * (count - z) - |coef| * count: move the constant into the window.
    if (coef < 0) {
      p.lo += t.coef * t.count;  // within the caller's span limit
      p.hi += t.coef * t.count;
    }
  }
}

Problem makeProblem(const StridedView& a, const StridedView& b) {
  Problem p;
  i128 d = i128(b.base) - i128(a.base);
  p.lo = d - (a.elemBytes - 1);
  p.hi = d + (b.elemBytes - 1);
  addAxes(p, a, 0, +1);
  addAxes(p, b, 1, -1);
  return p;
}

// Step 3 of the header comment, to a fixed point. Terms are sorted by
// coefficient first, so a term can only merge into an earlier one.
void mergeCoveringTerms(Problem& p) {
  std::sort(p.terms, p.terms + p.termCount, [](const Term& x, const Term& y) { return x.coef < y.coef; });
  for (bool changed = true; changed;) {
    changed = false;
    for (int j = 1; j < p.termCount; ++j) {
      Term& tj = p.terms[j];
      for (int i = 0; i < j && tj.live; ++i) {
        Term& ti = p.terms[i];
        if (!ti.live || rem(tj.coef, ti.coef) != 0) continue;
        i128 q = quot(tj.coef, ti.coef);
        if (q > ti.count + 1) continue;
        p.merges[p.mergeCount++] = Merge{i, j, q, tj.count};
        ti.count += q * tj.count;  // coef * count stays within the summed spans
        tj.live = false;
        changed = true;
      }
    }
  }
}

// Step 4: the branch and bound over the live terms, largest coefficient first.
class Search {
 public:
  Search(const Problem& p, int64_t budget) : budget_(budget) {
    for (int i = 0; i < p.termCount; ++i)
      if (p.terms[i].live) order_[n_++] = i;
    std::sort(order_, order_ + n_, [&](int x, int y) { return p.terms[x].coef > p.terms[y].coef; });
    for (int k = 0; k < n_; ++k) {
      coef_[k] = p.terms[order_[k]].coef;
      count_[k] = p.terms[order_[k]].count;
    }
    reach_[n_] = 0;
    gcd_[n_] = 0;
    for (int k = n_ - 1; k >= 0; --k) {
      reach_[k] = reach_[k + 1] + coef_[k] * count_[k];
      gcd_[k] = gcdOf(coef_[k], gcd_[k + 1]);
    }
  }

  // True with value(term) set when the sum can fall in [lo, hi].
  bool run(i128 lo, i128 hi) { return solve(0, lo, hi); }
  bool exhausted() const { return exhausted_; }
  int64_t work() const { return work_; }
  // The z found for each live term, by term index.
  void values(i128* byTerm) const {
    for (int k = 0; k < n_; ++k) byTerm[order_[k]] = z_[k];
  }

 private:
  bool spend() {
    if (++work_ <= budget_) return true;
    exhausted_ = true;
    return false;
  }

  bool solve(int k, i128 lo, i128 hi) {
    if (!spend()) return false;
    lo = std::max<i128>(lo, 0);
    hi = std::min(hi, reach_[k]);
    if (lo > hi) return false;
    if (k == n_) return true;  // reach 0: lo <= 0 <= hi
    i128 g = gcd_[k];
    if (ceilDiv(lo, g) * g > hi) return false;  // no multiple of the gcd in the window
    if (k == n_ - 1) {                          // g is coef: the multiple found is the answer
      z_[k] = ceilDiv(lo, g);
      return true;
    }
    if (k == n_ - 2 && quot(coef_[k], g) < kPairLimit && quot(coef_[k + 1], g) < kPairLimit)
      return solvePair(k, lo, hi);
    i128 c = coef_[k];
    i128 first = std::max<i128>(0, ceilDiv(lo - reach_[k + 1], c));
    i128 last = std::min(count_[k], floorDiv(hi, c));
    for (i128 v = last; v >= first; --v) {
      z_[k] = v;
      if (solve(k + 1, lo - c * v, hi - c * v)) return true;
      if (exhausted_) return false;
    }
    return false;
  }

  // c1 z1 + c2 z2 = T for some T in [lo, hi], 0 <= z1 <= m1, 0 <= z2 <= m2.
  // With g = gcd(c1, c2), a = c1 / g, b = c2 / g, t = T / g: the solutions of
  // a z1 + b z2 = t are z1 = t a^-1 (mod b), z2 = (t - a z1) / b; the box
  // bounds z1 to [ceil((t - b m2) / a), floor(t / a)] and [0, m1].
  bool solvePair(int k, i128 lo, i128 hi) {
    i128 g = gcd_[k], a = quot(coef_[k], g), b = quot(coef_[k + 1], g);
    i128 inverse = inverseMod(a, b);
    for (i128 t = ceilDiv(lo, g); t * g <= hi; ++t) {
      if (!spend()) return false;
      i128 r = rem(modPositive(t, b) * inverse, b);  // both below 2^62: the product fits
      i128 z1lo = std::max<i128>(0, ceilDiv(t - b * count_[k + 1], a));
      i128 z1hi = std::min(count_[k], floorDiv(t, a));
      i128 z1 = z1lo + modPositive(r - z1lo, b);
      if (z1 > z1hi) continue;
      z_[k] = z1;
      z_[k + 1] = quot(t - a * z1, b);
      return true;
    }
    return false;
  }

  static constexpr i128 kPairLimit = i128(1) << 62;
  int order_[kMaxTerms] = {};
  int n_ = 0;
  i128 coef_[kMaxTerms] = {}, count_[kMaxTerms] = {}, z_[kMaxTerms] = {};
  i128 reach_[kMaxTerms + 1] = {}, gcd_[kMaxTerms + 1] = {};
  int64_t budget_ = 0, work_ = 0;
  bool exhausted_ = false;
};

i128 elementOffset(const StridedView& v, const int64_t* index) {
  i128 off = 0;
  for (int ax = 0; ax < v.rank; ++ax) off += i128(v.strides[ax]) * index[ax];
  return off * v.elemBytes;
}

// The search's values, unmerged and unflipped, as an index into each view;
// false if they do not share a byte (never expected: a guard, not a path).
bool makeWitness(const Problem& p, const Search& s, const StridedView& a, const StridedView& b, OverlapResult& r) {
  i128 value[kMaxTerms] = {};
  s.values(value);
  for (int m = p.mergeCount - 1; m >= 0; --m) {
    const Merge& mg = p.merges[m];
    value[mg.from] = std::min(mg.fromCount, quot(value[mg.into], mg.q));
    value[mg.into] -= mg.q * value[mg.from];
  }
  for (int i = 0; i < p.termCount; ++i) {
    const Term& t = p.terms[i];
    int64_t index = int64_t(t.flipped ? t.lastIndex - value[i] : value[i]);
    (t.view == 0 ? r.indexA : r.indexB)[t.axis] = index;
  }
  i128 startA = i128(a.base) + elementOffset(a, r.indexA);
  i128 startB = i128(b.base) + elementOffset(b, r.indexB);
  i128 shared = std::max(startA, startB);
  r.address = uintptr_t(shared);
  return shared < startA + a.elemBytes && shared < startB + b.elemBytes;
}

}  // namespace

OverlapResult findOverlap(const StridedView& a, const StridedView& b, int64_t budget) {
  OverlapResult r;
  Extent ea = extentOf(a), eb = extentOf(b);
  if (ea.empty || eb.empty) return r;
  i128 loA = i128(a.base) - ea.below, hiA = i128(a.base) + ea.above + a.elemBytes;
  i128 loB = i128(b.base) - eb.below, hiB = i128(b.base) + eb.above + b.elemBytes;
  if (loA >= hiB || loB >= hiA) return r;

  r.kind = OverlapKind::Unknown;
  if (std::max({ea.below, ea.above, eb.below, eb.above}) >= kSpanLimit) return r;
  Problem p = makeProblem(a, b);
  mergeCoveringTerms(p);
  Search search(p, budget);
  bool found = search.run(p.lo, p.hi);
  r.work = search.work();
  if (search.exhausted()) return r;
  if (!found) {
    r.kind = OverlapKind::Disjoint;
    return r;
  }
  if (makeWitness(p, search, a, b, r)) r.kind = OverlapKind::Overlap;
  return r;
}

}  // namespace spindle::rt
