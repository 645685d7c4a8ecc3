// The launch-time overlap check (runtime/src/tensor_overlap.h): views that
// interleave without sharing a byte are disjoint, a shared byte comes with a
// witness that really is shared, and thousands of random small views agree
// with brute-force enumeration of their bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "../../runtime/src/tensor_overlap.h"

namespace spindle::rt {
namespace {

constexpr uintptr_t kBase = uintptr_t(1) << 32;  // room below for negative strides

StridedView view(uintptr_t base, int64_t elemBytes, std::vector<int64_t> shape, std::vector<int64_t> strides) {
  StridedView v;
  v.base = base;
  v.elemBytes = elemBytes;
  v.rank = int(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    v.shape[i] = shape[i];
    v.strides[i] = strides[i];
  }
  return v;
}

std::string describe(const StridedView& v) {
  std::ostringstream s;
  s << "{base " << std::hex << "0x" << v.base << std::dec << ", elemBytes " << v.elemBytes << ", shape [";
  for (int i = 0; i < v.rank; ++i) s << (i ? ", " : "") << v.shape[i];
  s << "], strides [";
  for (int i = 0; i < v.rank; ++i) s << (i ? ", " : "") << v.strides[i];
  return s.str() + "]}";
}

// Where element `index` of v starts, exactly; false when the index is outside the shape.
bool elementStart(const StridedView& v, const int64_t* index, __int128& start) {
  start = __int128(v.base);
  for (int ax = 0; ax < v.rank; ++ax) {
    if (index[ax] < 0 || index[ax] >= v.shape[ax]) return false;
    start += __int128(v.strides[ax]) * index[ax] * v.elemBytes;
  }
  return true;
}

// Empty when the result is a valid witness, else what is wrong with it. The
// elements' bytes must meet, and `address` must be one of the shared bytes
// (modulo 2^64: absurd views may meet outside the address space).
std::string witnessProblem(const StridedView& a, const StridedView& b, const OverlapResult& r) {
  if (r.kind != OverlapKind::Overlap) return "not an overlap";
  __int128 startA, startB;
  if (!elementStart(a, r.indexA, startA)) return "A's index is outside its shape";
  if (!elementStart(b, r.indexB, startB)) return "B's index is outside its shape";
  if (startA >= startB + b.elemBytes || startB >= startA + a.elemBytes) return "the elements share no byte";
  if (r.address - uintptr_t(startA) >= uint64_t(a.elemBytes)) return "the address is not a byte of A's element";
  if (r.address - uintptr_t(startB) >= uint64_t(b.elemBytes)) return "the address is not a byte of B's element";
  return "";
}

OverlapKind kindOf(const StridedView& a, const StridedView& b) { return findOverlap(a, b).kind; }

void expectOverlapWithWitness(const StridedView& a, const StridedView& b) {
  OverlapResult r = findOverlap(a, b);
  EXPECT_EQ(witnessProblem(a, b, r), "") << describe(a) << " vs " << describe(b);
  // The relation is symmetric.
  OverlapResult s = findOverlap(b, a);
  EXPECT_EQ(witnessProblem(b, a, s), "") << describe(b) << " vs " << describe(a);
}

void expectDisjoint(const StridedView& a, const StridedView& b) {
  EXPECT_EQ(kindOf(a, b), OverlapKind::Disjoint) << describe(a) << " vs " << describe(b);
  EXPECT_EQ(kindOf(b, a), OverlapKind::Disjoint) << describe(b) << " vs " << describe(a);
}

TEST(TensorOverlap, DisjointExtentsNeedNoSearch) {
  StridedView lo = view(kBase, 4, {32}, {1}), hi = view(kBase + 128, 4, {32}, {1});
  OverlapResult r = findOverlap(lo, hi);
  EXPECT_EQ(r.kind, OverlapKind::Disjoint);
  EXPECT_EQ(r.work, 0);
  EXPECT_EQ(kindOf(lo, view(kBase + 124, 4, {32}, {1})), OverlapKind::Overlap);
}

// q, k, v = qkv.split(C, dim=-1) of a [B, T, 3C] buffer: each [B, T, C] with
// strides (T*3C, 3C, 1), bases C elements apart.
TEST(TensorOverlap, QkvSlicesAreDisjoint) {
  struct Sizes {
    int64_t B, T, C;
  };
  for (Sizes sizes : {Sizes{2, 5, 8}, Sizes{1, 1, 4}, Sizes{8, 4096, 4096}, Sizes{3, 7, 1}}) {
    const int64_t B = sizes.B, T = sizes.T, C = sizes.C;  // lambdas cannot capture structured bindings in C++17
    auto slice = [&](int64_t which) {
      return view(kBase + uint64_t(which * C * 4), 4, {B, T, C}, {T * 3 * C, 3 * C, 1});
    };
    expectDisjoint(slice(0), slice(1));
    expectDisjoint(slice(0), slice(2));
    expectDisjoint(slice(1), slice(2));
    expectOverlapWithWitness(slice(1), slice(1));
    OverlapResult r = findOverlap(slice(0), slice(1));
    EXPECT_LT(r.work, 64) << "nested layouts should take a few nodes per axis";
  }
  // The same split with heads: [B, T, 3, H, D] viewed as [B, H, T, D].
  int64_t B = 4, T = 512, H = 16, D = 64;
  auto head = [&](int64_t which) {
    return view(kBase + uint64_t(which * H * D * 2), 2, {B, H, T, D}, {T * 3 * H * D, D, 3 * H * D, 1});
  };
  expectDisjoint(head(0), head(1));
  expectDisjoint(head(2), head(1));
  EXPECT_LT(findOverlap(head(0), head(1)).work, 256);
  // A slice one element off its place overlaps its neighbor.
  StridedView shifted = view(kBase + uint64_t((H * D - 1) * 2), 2, {B, H, T, D}, {T * 3 * H * D, D, 3 * H * D, 1});
  expectOverlapWithWitness(head(0), shifted);
}

// kv_cache [L, 2, H, D]: kv_cache[:, 0] and kv_cache[:, 1] interleave.
TEST(TensorOverlap, KvCacheHalvesAreDisjoint) {
  int64_t L = 32, H = 8, D = 128;
  auto half = [&](int64_t which) { return view(kBase + uint64_t(which * H * D * 2), 2, {L, H, D}, {2 * H * D, D, 1}); };
  expectDisjoint(half(0), half(1));
  // The whole cache overlaps each half.
  StridedView whole = view(kBase, 2, {L, 2, H, D}, {2 * H * D, H * D, D, 1});
  expectOverlapWithWitness(whole, half(1));
  expectOverlapWithWitness(half(0), whole);
}

TEST(TensorOverlap, EvenAndOddColumnsAreDisjoint) {
  int64_t M = 64, N = 128;
  StridedView even = view(kBase, 4, {M, N / 2}, {N, 2}), odd = view(kBase + 4, 4, {M, N / 2}, {N, 2});
  expectDisjoint(even, odd);
  EXPECT_EQ(findOverlap(even, odd).work, 1) << "the gcd test at the root decides";
  // Every third column against every other: they meet at multiples of 6.
  expectOverlapWithWitness(view(kBase, 4, {M, N / 3}, {N, 3}), odd);
  expectOverlapWithWitness(view(kBase, 4, {M, N}, {N, 1}), odd);
}

TEST(TensorOverlap, TransposedViewOfTheSameBufferOverlaps) {
  StridedView x = view(kBase, 4, {16, 16}, {16, 1}), xt = view(kBase, 4, {16, 16}, {1, 16});
  expectOverlapWithWitness(x, xt);
  // The strict upper and lower triangles would be disjoint, but as boxes the
  // first row of x and the first column of x^T already share element 0.
  expectOverlapWithWitness(view(kBase, 4, {16}, {1}), view(kBase, 4, {16}, {16}));
  expectDisjoint(view(kBase + 4, 4, {15}, {1}), view(kBase + 64, 4, {15}, {16}));
}

TEST(TensorOverlap, BroadcastAxisWithStrideZero) {
  StridedView rows = view(kBase, 4, {1000, 8}, {0, 1});  // one row of 8, seen 1000 times
  expectDisjoint(rows, view(kBase + 32, 4, {8}, {1}));
  expectOverlapWithWitness(rows, view(kBase + 28, 4, {8}, {1}));
  // Both broadcast, disjoint by one element.
  expectDisjoint(view(kBase, 4, {5, 3}, {0, 2}), view(kBase + 4, 4, {3, 7}, {2, 0}));
}

TEST(TensorOverlap, NegativeStrides) {
  // x[::-1] of 8 elements covers [base, base + 32).
  StridedView reversed = view(kBase + 28, 4, {8}, {-1});
  expectDisjoint(reversed, view(kBase + 32, 4, {8}, {1}));
  expectOverlapWithWitness(reversed, view(kBase + 28, 4, {8}, {1}));
  // x[7::-2] (odd elements, backwards) and x[0::2]: same extent, no shared element.
  expectDisjoint(view(kBase + 28, 4, {4}, {-2}), view(kBase, 4, {4}, {2}));
  // Rows reversed and columns reversed, against the plain matrix.
  expectOverlapWithWitness(view(kBase + 4 * 15, 4, {4, 4}, {-4, -1}), view(kBase, 4, {4, 4}, {4, 1}));
}

TEST(TensorOverlap, ElementSizesDifferByteGranularity) {
  // f32 elements at bytes [0,4), [8,12), ...; u8 at bytes 4, 12, ...: disjoint.
  StridedView f32 = view(kBase, 4, {4}, {2});
  expectDisjoint(f32, view(kBase + 4, 1, {4}, {8}));
  expectDisjoint(f32, view(kBase + 4, 1, {4, 4}, {8, 1}));
  // A u8 view at byte 3 of an f32 element.
  StridedView u8 = view(kBase + 3, 1, {4}, {8});
  OverlapResult r = findOverlap(f32, u8);
  EXPECT_EQ(witnessProblem(f32, u8, r), "");
  EXPECT_EQ(r.address % 8, (kBase + 3) % 8);
  // f64 views straddling f32 elements.
  expectOverlapWithWitness(view(kBase + 4, 8, {2}, {2}), f32);
  expectDisjoint(view(kBase + 4, 2, {2}, {4}), view(kBase, 4, {2}, {2}));
}

TEST(TensorOverlap, SameBaseSameLayoutOverlaps) {
  expectOverlapWithWitness(view(kBase, 4, {4, 4}, {4, 1}), view(kBase, 4, {4, 4}, {4, 1}));
  expectOverlapWithWitness(view(kBase, 2, {1 << 20, 1 << 20}, {1 << 20, 1}),
                           view(kBase, 2, {1 << 20, 1 << 20}, {1 << 20, 1}));
  expectOverlapWithWitness(view(kBase, 1, {}, {}), view(kBase, 1, {}, {}));  // rank 0
  expectDisjoint(view(kBase, 1, {}, {}), view(kBase + 1, 1, {}, {}));
}

TEST(TensorOverlap, OverBudgetIsUnknown) {
  // A true overlap that no structure decides: 7 x + 11 y + 13 z = target.
  StridedView a = view(kBase, 1, {50, 50, 50}, {7, 11, 13}), b = view(kBase + 500, 1, {1}, {1});
  EXPECT_EQ(findOverlap(a, b, /*budget=*/1).kind, OverlapKind::Unknown);
  EXPECT_EQ(witnessProblem(a, b, findOverlap(a, b)), "");
}

// Random small views against brute force: every byte of every element.
class BruteForce {
 public:
  static constexpr int64_t kWindow = 1 << 12;  // bytes around kBase that small views can reach
  explicit BruteForce(const StridedView& v) : bytes_(2 * kWindow, false) {
    int64_t index[kMaxRank] = {};
    visit(v, 0, index);
  }
  bool shares(const BruteForce& o) const {
    for (size_t i = 0; i < bytes_.size(); ++i)
      if (bytes_[i] && o.bytes_[i]) return true;
    return false;
  }

 private:
  void visit(const StridedView& v, int axis, int64_t* index) {
    if (axis == v.rank) {
      int64_t start = int64_t(v.base - kBase);
      for (int ax = 0; ax < v.rank; ++ax) start += v.strides[ax] * index[ax] * v.elemBytes;
      for (int64_t b = 0; b < v.elemBytes; ++b) bytes_[size_t(start + b + kWindow)] = true;
      return;
    }
    for (index[axis] = 0; index[axis] < v.shape[axis]; ++index[axis]) visit(v, axis + 1, index);
  }
  std::vector<bool> bytes_;
};

StridedView randomSmallView(std::mt19937_64& rng) {
  static const int64_t kElemBytes[] = {1, 2, 4, 8};
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  StridedView v;
  v.rank = int(pick(0, 3));
  v.elemBytes = kElemBytes[pick(0, 3)];
  v.base = kBase + uintptr_t(pick(0, 48));
  for (int ax = 0; ax < v.rank; ++ax) {
    v.shape[ax] = pick(1, 5);
    v.strides[ax] = pick(-6, 6);
  }
  return v;
}

TEST(TensorOverlap, AgreesWithBruteForceOnRandomSmallViews) {
  const uint64_t seed = 20261123;
  std::mt19937_64 rng(seed);
  int overlaps = 0, disjoint = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    StridedView a = randomSmallView(rng), b = randomSmallView(rng);
    // Often the same element size and layout, shifted: the interesting case.
    if (trial % 3 == 0) {
      b = a;
      b.base = kBase + uintptr_t(std::uniform_int_distribution<int64_t>(0, 48)(rng));
    }
    bool truth = BruteForce(a).shares(BruteForce(b));
    OverlapResult r = findOverlap(a, b);
    std::string where =
        "seed " + std::to_string(seed) + ", trial " + std::to_string(trial) + ": " + describe(a) + " vs " + describe(b);
    ASSERT_NE(r.kind, OverlapKind::Unknown) << where;
    ASSERT_EQ(r.kind == OverlapKind::Overlap, truth) << where;
    if (truth) {
      ASSERT_EQ(witnessProblem(a, b, r), "") << where;
    }
    (truth ? overlaps : disjoint) += 1;
  }
  // Both answers are well represented (the generator is not degenerate).
  EXPECT_GT(overlaps, 4000);
  EXPECT_GT(disjoint, 4000);
}

// Large views: an injective row-major layout of up to 4 axes of up to 2^20,
// with two sub-views whose relation is known by construction (fixing one axis
// at different indices gives disjoint views; at the same index, overlapping
// ones), each then reordered, reversed and stepped.
struct Layout {
  int rank = 0;
  int64_t shape[4] = {}, strides[4] = {};
};

Layout randomLayout(std::mt19937_64& rng) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  Layout l;
  l.rank = int(pick(2, 4));
  int64_t elements = 1;
  for (int ax = 0; ax < l.rank; ++ax) {
    l.shape[ax] = std::min<int64_t>(pick(2, 1 << 20), (int64_t(1) << 50) / elements);
    l.shape[ax] = std::max<int64_t>(l.shape[ax], 2);
    elements *= l.shape[ax];
  }
  int64_t stride = pick(1, 3);  // padded rows too: stride products stay injective
  for (int ax = l.rank - 1; ax >= 0; --ax) {
    l.strides[ax] = stride;
    stride *= l.shape[ax] + pick(0, 2);
  }
  return l;
}

// The layout with axis `fixed` held at `at`, the rest reordered by `order`
// and possibly reversed; axes keep their full extent.
StridedView subView(const Layout& l, int64_t elemBytes, int fixed, int64_t at, std::mt19937_64& rng) {
  StridedView v;
  v.elemBytes = elemBytes;
  __int128 base = __int128(kBase) * 16 + __int128(l.strides[fixed]) * at * elemBytes;
  std::vector<int> axes;
  for (int ax = 0; ax < l.rank; ++ax)
    if (ax != fixed) axes.push_back(ax);
  std::shuffle(axes.begin(), axes.end(), rng);
  for (int ax : axes) {
    bool reverse = rng() % 2;
    v.shape[v.rank] = l.shape[ax];
    v.strides[v.rank] = reverse ? -l.strides[ax] : l.strides[ax];
    if (reverse) base += __int128(l.strides[ax]) * (l.shape[ax] - 1) * elemBytes;
    ++v.rank;
  }
  v.base = uintptr_t(base);
  return v;
}

TEST(TensorOverlap, LargeStructuredViewsAreDecidedExactly) {
  const uint64_t seed = 7;
  std::mt19937_64 rng(seed);
  int unknown = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    Layout l = randomLayout(rng);
    int64_t elemBytes = int64_t(1) << (rng() % 4);
    int fixed = int(rng() % uint64_t(l.rank));
    int64_t i = int64_t(rng() % uint64_t(l.shape[fixed])), j = int64_t(rng() % uint64_t(l.shape[fixed]));
    StridedView a = subView(l, elemBytes, fixed, i, rng), b = subView(l, elemBytes, fixed, j, rng);
    OverlapResult r = findOverlap(a, b);
    std::string where =
        "seed " + std::to_string(seed) + ", trial " + std::to_string(trial) + ": " + describe(a) + " vs " + describe(b);
    if (r.kind == OverlapKind::Unknown) {
      ++unknown;
      continue;
    }
    ASSERT_EQ(r.kind == OverlapKind::Overlap, i == j) << where;
    if (i == j) {
      ASSERT_EQ(witnessProblem(a, b, r), "") << where;
    }
  }
  EXPECT_EQ(unknown, 0);
}

// Adversarial strides on huge shapes: the search must return within its
// budget, and every Overlap answer must carry a true witness.
TEST(TensorOverlap, AdversarialLargeViewsReturnWithinBudget) {
  const uint64_t seed = 99;
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const int64_t kPrimes[] = {7, 11, 13, 1009, 65537, 999983, (int64_t(1) << 31) - 1};
  int counts[3] = {};
  for (int trial = 0; trial < 300; ++trial) {
    StridedView v[2];
    for (auto& x : v) {
      x.rank = int(pick(1, kMaxRank));
      x.elemBytes = int64_t(1) << pick(0, 3);
      x.base = kBase * 16 + uintptr_t(pick(0, 1 << 20));
      for (int ax = 0; ax < x.rank; ++ax) {
        x.shape[ax] = pick(1, 1 << 20);
        switch (pick(0, 3)) {
          case 0: x.strides[ax] = kPrimes[pick(0, 6)] * (pick(0, 1) ? 1 : -1); break;
          case 1: x.strides[ax] = pick(-(int64_t(1) << 40), int64_t(1) << 40); break;
          case 2: x.strides[ax] = kPrimes[pick(0, 6)] * kPrimes[pick(0, 6)] + pick(-1, 1); break;
          default: x.strides[ax] = pick(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
        }
      }
    }
    OverlapResult r = findOverlap(v[0], v[1]);
    EXPECT_LE(r.work, kOverlapWorkBudget + 1);
    if (r.kind == OverlapKind::Overlap) {
      ASSERT_EQ(witnessProblem(v[0], v[1], r), "")
          << "seed " << seed << ", trial " << trial << ": " << describe(v[0]) << " vs " << describe(v[1]);
    }
    ++counts[int(r.kind)];
  }
  std::cout << "adversarial: " << counts[0] << " disjoint, " << counts[1] << " overlap, " << counts[2] << " unknown\n";
}

// Strides whose spans pass 2^100 bytes: no overflow, and an honest answer.
TEST(TensorOverlap, AbsurdStridesDoNotOverflow) {
  const int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  StridedView huge = view(kBase, 8, {int64_t(1) << 62, int64_t(1) << 62}, {kMin, kMax});
  StridedView small = view(kBase, 4, {4}, {1});
  EXPECT_EQ(kindOf(huge, small), OverlapKind::Unknown);
  // Far apart in the fast path even so: disjoint extents are decided exactly.
  StridedView up = view(kBase, 8, {int64_t(1) << 62}, {kMax});
  EXPECT_EQ(kindOf(up, view(kBase - 64, 4, {4}, {1})), OverlapKind::Disjoint);
  EXPECT_EQ(kindOf(view(kBase, 8, {3}, {kMax}), view(kBase, 8, {3}, {kMin})), OverlapKind::Overlap);
}

}  // namespace
}  // namespace spindle::rt
