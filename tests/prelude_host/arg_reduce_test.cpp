// The combine step of warp_argmax / block_argmax and the argmin forms
// (prelude __spn_arg_better, docs/language.md 8.4), compiled for the host
// through prelude_host_shim.h and checked by value against a brute-force
// reference: a NaN wins (its smallest index), else the extreme value, ties
// (-0.0 and 0.0 included) to the smallest index. The device's butterflies
// are replayed lane by lane on the host (the same offsets and the same
// skipping of lanes a partial warp lacks), for 32- and 64-lane warps, partial
// warps and blocks of several warps, with indices that are not in lane order.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "prelude_host_shim.h"
// clang-format off
#include "prelude_arg_helpers.inc"
// clang-format on

namespace {

template <typename T, typename I>
struct Pair {
  T value;
  I index;
};

template <typename T>
bool isNan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  return false;
}

// The first NaN's position if there is one; else the position of the
// smallest index among the elements equal to the largest (smallest) value.
template <bool Max, typename T, typename I>
size_t reference(const std::vector<T>& v, const std::vector<I>& idx) {
  size_t best = v.size();
  for (size_t k = 0; k < v.size(); ++k)
    if (isNan(v[k]) && (best == v.size() || idx[k] < idx[best])) best = k;
  if (best != v.size()) return best;
  T extreme = v[0];
  for (T x : v) extreme = Max ? std::max(extreme, x) : std::min(extreme, x);
  for (size_t k = 0; k < v.size(); ++k)
    if (v[k] == extreme && (best == v.size() || idx[k] < idx[best])) best = k;
  return best;
}

// The device's __spn_warp_arg_reduce over `lanes` lanes of a `width`-lane
// warp, every lane at once: what each lane holds at the end.
template <bool Max, typename T, typename I>
std::vector<Pair<T, I>> warpButterfly(std::vector<Pair<T, I>> lane, int width) {
  const int lanes = static_cast<int>(lane.size());
  for (int offset = width / 2; offset > 0; offset /= 2) {
    std::vector<Pair<T, I>> next = lane;
    for (int l = 0; l < lanes; ++l) {
      const int partner = l ^ offset;
      if (partner < lanes &&
          __spn_arg_better<Max>(lane[partner].value, lane[partner].index, lane[l].value, lane[l].index))
        next[l] = lane[partner];
    }
    lane = next;
  }
  return lane;
}

// __spn_block_arg_reduce: each warp's lane 0 publishes its pair, the first
// `warps` lanes of warp 0 combine them, lane 0's pair is the block's.
template <bool Max, typename T, typename I>
Pair<T, I> blockReduce(const std::vector<T>& v, const std::vector<I>& idx, int width) {
  std::vector<Pair<T, I>> perWarp;
  for (size_t first = 0; first < v.size(); first += width) {
    std::vector<Pair<T, I>> lanes;
    for (size_t k = first; k < v.size() && k < first + width; ++k) lanes.push_back({v[k], idx[k]});
    perWarp.push_back(warpButterfly<Max>(lanes, width)[0]);
  }
  return warpButterfly<Max>(perWarp, width)[0];
}

template <typename T>
bool sameBits(T a, T b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// Values drawn from a small set, so that ties, signed zeros, infinities and
// NaNs meet often.
std::vector<float> floats(std::mt19937& rng, size_t n, bool withNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<float> pool = {0.0f, -0.0f, 1.0f, -1.0f, 2.5f, -2.5f, inf, -inf, 1e-45f, -1e-45f, 3.0f};
  if (withNan) pool.push_back(nan);
  std::vector<float> v(n);
  for (auto& x : v) x = pool[rng() % pool.size()];
  return v;
}

// Distinct indices, shuffled: the smallest index is not the lowest lane.
template <typename I>
std::vector<I> indices(std::mt19937& rng, size_t n) {
  std::vector<I> idx(n);
  for (size_t k = 0; k < n; ++k) idx[k] = static_cast<I>(k * 3 + 5);
  std::shuffle(idx.begin(), idx.end(), rng);
  return idx;
}

template <bool Max>
void checkWarps(int width) {
  std::mt19937 rng(Max ? 11 : 12);
  for (int trial = 0; trial < 3000; ++trial) {
    const int lanes = trial % 4 == 0 ? 1 + static_cast<int>(rng() % width) : width;  // some partial warps
    const std::vector<float> v = floats(rng, lanes, trial % 3 == 0);
    const std::vector<int64_t> idx = indices<int64_t>(rng, lanes);
    const size_t want = reference<Max>(v, idx);
    std::vector<Pair<float, int64_t>> in;
    for (int l = 0; l < lanes; ++l) in.push_back({v[l], idx[l]});
    const auto out = warpButterfly<Max>(in, width);
    // A whole warp: every lane holds the pair; a partial one: lane 0 does.
    for (int l = 0; l < (lanes == width ? lanes : 1); ++l) {
      ASSERT_EQ(out[l].index, idx[want]) << "trial " << trial << " lane " << l;
      ASSERT_TRUE(sameBits(out[l].value, v[want])) << "trial " << trial << " lane " << l;
    }
  }
}

TEST(PreludeArgReduce, WarpArgmaxMatchesTheReference) {
  checkWarps<true>(32);
  checkWarps<true>(64);
}

TEST(PreludeArgReduce, WarpArgminMatchesTheReference) {
  checkWarps<false>(32);
  checkWarps<false>(64);
}

TEST(PreludeArgReduce, BlocksOfAnySizeMatchTheReference) {
  std::mt19937 rng(13);
  for (int width : {32, 64}) {
    for (int trial = 0; trial < 500; ++trial) {
      const size_t threads = 1 + rng() % 1024;  // partial last warps included
      const std::vector<float> v = floats(rng, threads, trial % 2 == 0);
      const std::vector<int32_t> idx = indices<int32_t>(rng, threads);
      const auto mx = blockReduce<true>(v, idx, width);
      const auto mn = blockReduce<false>(v, idx, width);
      const size_t wantMax = reference<true>(v, idx), wantMin = reference<false>(v, idx);
      ASSERT_EQ(mx.index, idx[wantMax]) << threads << " threads";
      ASSERT_TRUE(sameBits(mx.value, v[wantMax]));
      ASSERT_EQ(mn.index, idx[wantMin]) << threads << " threads";
      ASSERT_TRUE(sameBits(mn.value, v[wantMin]));
    }
  }
}

// The rules one at a time, on the combine itself.
TEST(PreludeArgReduce, CombineRules) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE((__spn_arg_better<true>(nan, 9, 1e300, 0)));    // a NaN beats a number in argmax
  EXPECT_TRUE((__spn_arg_better<false>(nan, 9, -1e300, 0)));  // and in argmin
  EXPECT_FALSE((__spn_arg_better<true>(1e300, 0, nan, 9)));
  EXPECT_TRUE((__spn_arg_better<true>(nan, 1, nan, 2)));  // two NaNs: the smaller index
  EXPECT_FALSE((__spn_arg_better<true>(nan, 2, nan, 1)));
  EXPECT_TRUE((__spn_arg_better<true>(-0.0, 1, 0.0, 2)));  // equal values: the smaller index
  EXPECT_FALSE((__spn_arg_better<true>(0.0, 2, -0.0, 1)));
  EXPECT_TRUE((__spn_arg_better<true>(2.0, 7, 1.0, 3)));
  EXPECT_TRUE((__spn_arg_better<false>(1.0, 7, 2.0, 3)));
  EXPECT_FALSE((__spn_arg_better<true>(1.0, 3, 1.0, 3)));  // a pair does not beat itself
  // Integers, unsigned indices included.
  EXPECT_TRUE((__spn_arg_better<true>(int64_t(-1), 5u, int64_t(-2), 1u)));
  EXPECT_TRUE((__spn_arg_better<false>(int64_t(-2), 5u, int64_t(-1), 1u)));
  EXPECT_TRUE((__spn_arg_better<true>(uint32_t(4), 1u, uint32_t(4), 2u)));
  EXPECT_FALSE((__spn_arg_better<true>(uint32_t(4), 3u, uint32_t(4), 2u)));
}

}  // namespace
