// Atomics: atomics.spn (atomic_stats) and atomics_more.spn (atomic_more).
// Blocks really run at once on the cpu target, so the order of the atomics
// is not known; the tests check what does not depend on it: sums of values
// chosen so that every partial sum is exact in the element type (then the
// total is exact whatever the order), maxima, minima, bit operations,
// tickets that form a permutation, exchanges and swaps that leave one of
// the values offered. One-element launches, where the order is known,
// check the rounding of each 16-bit add and the compare-and-swap that wins.
#include <set>
#include <string>
#include <vector>

#include "cpu_golden.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::cpu_golden {
namespace {

class Atomics : public GoldenTest {};

// ---- atomics.spn: atomic_stats

TEST_F(Atomics, AtomicStats) {
  atBothWidths([&] {
    Kernel k = kernel("atomics.spn", "atomic_stats");
    // 79 blocks of 256 (the last one partial), run by every worker at once.
    const int64_t N = 20100, BINS = 16;
    // Multiples of 2^-7 in [-4, 4]: every partial sum of up to 2^15 of them
    // is exact in f32 (below 2^17 in steps of 2^-7), and x * 100 is exact too.
    std::vector<float> x(static_cast<size_t>(N));
    for (auto& v : x) v = float(integer(-512, 512)) / 128;
    const int32_t c0 = int32_t(integer(-1000, 1000));
    const int64_t s0 = 1000000000;  // keeps c64[0] positive: old % 2 is 0 or 1
    const uint32_t u0 = uint32_t(integer(0, 1000));
    std::vector<float> sumF32 = {0.5f, 7.0f};
    std::vector<double> sumF64 = {0.25};
    std::vector<int32_t> c32 = {c0, INT32_MIN, INT32_MAX, -1};
    std::vector<uint32_t> cu32 = {u0, 0, UINT32_MAX, 7};
    std::vector<int64_t> c64 = {s0, INT64_MIN, INT64_MAX, -1};
    std::vector<uint64_t> cu64 = {u0, 0, UINT64_MAX, 7};
    std::vector<uint32_t> hist0 = random<uint32_t>(size_t(BINS), 0, 100);
    auto dx = upload(x), dsum32 = upload(sumF32);
    auto dsum64 = upload(sumF64);
    auto dc32 = upload(c32);
    auto dcu32 = upload(cu32), dhist = upload(hist0);
    auto dc64 = upload(c64);
    auto dcu64 = upload(cu64);
    auto ticket = poisoned<int32_t>(size_t(N));
    k.launch(nullptr, {dx.arg({N}), ticket.arg({N}), dsum32.arg({2}), dsum64.arg({1}), dc32.arg({4}), dcu32.arg({4}),
                       dc64.arg({4}), dcu64.arg({4}), dhist.arg({BINS})});

    double sum = 0;
    int64_t qSum = 0, qMax = INT64_MIN, qMin = INT64_MAX;
    uint64_t uqSum = 0, uqMax = 0, uqMin = UINT64_MAX;
    std::vector<uint32_t> wantHist = hist0;
    std::set<float> offered(x.begin(), x.end());
    for (float v : x) {
      sum += v;
      const int64_t q = int64_t(std::floor(double(f32(double(v) * 100))));
      const uint64_t uq = uint64_t(std::abs(q));
      qSum += q, qMax = std::max(qMax, q), qMin = std::min(qMin, q);
      uqSum += uq, uqMax = std::max(uqMax, uq), uqMin = std::min(uqMin, uq);
      wantHist[size_t(uq % 16)] += 1;
    }
    auto g32 = dsum32.read();
    auto g64 = dsum64.read();
    auto gt = ticket.read(), gc32 = dc32.read();
    auto gcu32 = dcu32.read(), gh = dhist.read();
    auto gc64 = dc64.read();
    auto gcu64 = dcu64.read();
    Check check("atomic_stats");
    check.exact("sum_f32[0]", g32[0], 0.5 + sum);
    check.that("sum_f32[1]", offered.count(g32[1]) == 1, "not one of the x exchanged in: " + std::to_string(g32[1]));
    check.exact("sum_f64[0]", g64[0], 0.25 + sum);
    std::sort(gt.begin(), gt.end());
    for (int64_t i = 0; i < N; ++i) check.exact("sorted ticket " + at(i), gt[size_t(i)], double(c0 + i));
    check.exact("c32[0]", gc32[0], double(c0 + N));
    check.exact("c32[1]", gc32[1], double(qMax));
    check.exact("c32[2]", gc32[2], double(qMin));
    check.that("c32[3]", gc32[3] >= 0 && gc32[3] < N, "not an index exchanged in: " + std::to_string(gc32[3]));
    check.exact("cu32[0]", gcu32[0], double(u0 + N));
    check.exact("cu32[1]", gcu32[1], double(uqMax));
    check.exact("cu32[2]", gcu32[2], double(uqMin));
    check.that("cu32[3]", gcu32[3] < N, "not an index exchanged in: " + std::to_string(gcu32[3]));
    check.exact("c64[0]", double(gc64[0]), double(s0 + qSum));
    check.exact("c64[1]", double(gc64[1]), double(qMax));
    // min over i of q_i - old_i % 2, the old values all positive.
    check.that("c64[2]", gc64[2] >= qMin - 1 && gc64[2] <= qMin,
               "not in [min q - 1, min q] = [" + std::to_string(qMin - 1) + ", " + std::to_string(qMin) +
                   "]: " + std::to_string(gc64[2]));
    check.that("c64[3]", gc64[3] >= 0 && gc64[3] < N, "not an index exchanged in: " + std::to_string(gc64[3]));
    check.exact("cu64[0]", double(gcu64[0]), double(u0 + uqSum));
    check.exact("cu64[1]", double(gcu64[1]), double(uqMax));
    check.exact("cu64[2]", double(gcu64[2]), double(uqMin));
    check.that("cu64[3]", gcu64[3] < uint64_t(N), "not an index exchanged in: " + std::to_string(gcu64[3]));
    for (int64_t b = 0; b < BINS; ++b) check.exact("hist " + at(b), gh[size_t(b)], wantHist[size_t(b)]);
  });
}

// ---- atomics_more.spn: atomic_more

// The tensors of one launch, their initial values and what came back.
struct MoreState {
  std::vector<float> x;
  std::vector<F16> h, sumH, hSeen;      // sum_h: 3
  std::vector<BF16> hb, sumB, bSeen;    // sum_b: 2
  std::vector<float> scale, f32s, out;  // 2, 1
  std::vector<double> dscale, f64s;     // 2, 1
  std::vector<uint32_t> flags;          // 3
  std::vector<int64_t> masks;           // 3
  std::vector<int32_t> i32s;            // 3
  std::vector<uint64_t> u64s;           // 2
};

MoreState launchMore(Kernel& k, Runtime& rt, const MoreState& in) {
  const int64_t N = int64_t(in.x.size());
  auto x = Buffer<float>::of(rt, in.x), scale = Buffer<float>::of(rt, in.scale), f32s = Buffer<float>::of(rt, in.f32s);
  auto h = Buffer<F16>::of(rt, in.h), sumH = Buffer<F16>::of(rt, in.sumH);
  auto hb = Buffer<BF16>::of(rt, in.hb), sumB = Buffer<BF16>::of(rt, in.sumB);
  auto dscale = Buffer<double>::of(rt, in.dscale), f64s = Buffer<double>::of(rt, in.f64s);
  auto flags = Buffer<uint32_t>::of(rt, in.flags);
  auto masks = Buffer<int64_t>::of(rt, in.masks);
  auto i32s = Buffer<int32_t>::of(rt, in.i32s);
  auto u64s = Buffer<uint64_t>::of(rt, in.u64s);
  auto hSeen = Buffer<F16>::poisoned(rt, size_t(N));
  auto bSeen = Buffer<BF16>::poisoned(rt, size_t(N));
  auto out = Buffer<float>::poisoned(rt, size_t(N));
  k.launch(nullptr, {x.arg({N}), h.arg({N}), hb.arg({N}), sumH.arg({3}), sumB.arg({2}), scale.arg({2}), dscale.arg({2}),
                     flags.arg({3}), masks.arg({3}), i32s.arg({3}), u64s.arg({2}), f32s.arg({1}), f64s.arg({1}),
                     hSeen.arg({N}), bSeen.arg({N}), out.arg({N})});
  MoreState o;
  o.x = x.read(), o.h = h.read(), o.sumH = sumH.read(), o.hSeen = hSeen.read();
  o.hb = hb.read(), o.sumB = sumB.read(), o.bSeen = bSeen.read();
  o.scale = scale.read(), o.f32s = f32s.read(), o.out = out.read();
  o.dscale = dscale.read(), o.f64s = f64s.read();
  o.flags = flags.read(), o.masks = masks.read(), o.i32s = i32s.read(), o.u64s = u64s.read();
  return o;
}

// What does not depend on the order: the element-wise swaps, the bit
// operations (i32s[0] when no compare-and-swap can match) and, given the
// initial values, the maxima and minima.
void checkMoreOrderFree(const MoreState& in, const MoreState& got, Check& check) {
  const int64_t N = int64_t(in.x.size());
  uint32_t flagsOr = in.flags[0], flagsAnd = in.flags[1], flagsXor = in.flags[2];
  int64_t masksOr = in.masks[0], masksAnd = in.masks[1], masksXor = in.masks[2];
  int32_t tOr = in.i32s[0], iAnd = in.i32s[1], iXor = in.i32s[2];
  uint64_t uXor = in.u64s[0];
  double scaleMax = in.scale[0], scaleMin = in.scale[1], dMax = in.dscale[0], dMin = in.dscale[1];
  // fmax/fmin with -0.0 below +0.0, a NaN operand ignored, a stored NaN replaced.
  auto maxOf = [](double a, double b) {
    if (std::isnan(a)) return b;
    if (std::isnan(b)) return a;
    if (a == b) return std::signbit(a) ? b : a;
    return std::max(a, b);
  };
  auto minOf = [](double a, double b) {
    if (std::isnan(a)) return b;
    if (std::isnan(b)) return a;
    if (a == b) return std::signbit(a) ? a : b;
    return std::min(a, b);
  };
  for (int64_t i = 0; i < N; ++i) {
    const size_t u = size_t(i);
    const double v = in.x[u];
    const uint32_t bit = 1u << (i % 32);
    flagsOr |= bit, flagsAnd &= ~bit, flagsXor ^= bit;
    masksOr |= int64_t(1) << (i % 63), masksAnd &= i, masksXor ^= i * 3;
    tOr |= int32_t(i % 128), iAnd &= -2, iXor ^= int32_t(i);
    uXor ^= uint64_t(i);
    scaleMax = maxOf(scaleMax, std::fabs(v)), scaleMin = minOf(scaleMin, v);
    dMax = maxOf(dMax, v), dMin = minOf(dMin, v * 0.5);
    // h[i]: swapped for v * 0.5 rounded to f16; hb[i]: 1.0 where it held +0.0 (bits).
    check.exact("h_seen " + at(i), value(got.hSeen[u]), value(in.h[u]));
    check.exact("h " + at(i), value(got.h[u]), value(from<F16>(f32(v * 0.5))));
    check.exact("b_seen " + at(i), value(got.bSeen[u]), value(in.hb[u]));
    check.exact("hb " + at(i), value(got.hb[u]), in.hb[u].bits == 0 ? 1.0 : value(in.hb[u]));
  }
  check.exact("flags[0]", got.flags[0], flagsOr);
  check.exact("flags[1]", got.flags[1], flagsAnd);
  check.exact("flags[2]", got.flags[2], flagsXor);
  check.exact("masks[0]", double(got.masks[0]), double(masksOr));
  check.exact("masks[1]", double(got.masks[1]), double(masksAnd));
  check.exact("masks[2]", double(got.masks[2]), double(masksXor));
  check.exact("i32s[1]", got.i32s[1], iAnd);
  check.exact("i32s[2]", got.i32s[2], iXor);
  check.exact("u64s[0]", double(got.u64s[0]), double(uXor));
  check.exact("scale[0]", got.scale[0], scaleMax);
  check.exact("scale[1]", got.scale[1], scaleMin);
  check.exact("dscale[0]", got.dscale[0], dMax);
  check.exact("dscale[1]", got.dscale[1], dMin);
  if (in.i32s[0] != 0) check.exact("i32s[0]", got.i32s[0], tOr);  // no swap can match
}

// Sums exact whatever the order: integers in [-1, 1] (and halves for h),
// few enough that every partial sum is an integer bf16 holds (|s| <= 256;
// sum_b[1] starts at -128 against its 150 ones) and a half-integer f16 holds.
TEST_F(Atomics, AtomicMoreExactSums) {
  atBothWidths([&] {
    Kernel k = kernel("atomics_more.spn", "atomic_more");
    const int64_t N = 150;  // blocks of 128: the second has 22 threads
    MoreState in;
    in.x = pick<float>(size_t(N), {-1.0, -0.0, 0.0, 1.0});
    in.h = pick<F16>(size_t(N), {-1.5, -0.5, -0.0, 0.0, 0.5, 1.5});
    in.hb = pick<BF16>(size_t(N), {-0.5, -0.0, 0.0, 0.5});
    in.sumH = {from<F16>(3), from<F16>(-2), from<F16>(0.5)};
    in.sumB = {from<BF16>(5), from<BF16>(-128)};
    in.scale = {NAN, 0.5f}, in.dscale = {-INFINITY, INFINITY};
    in.flags = {uint32_t(bits64()), uint32_t(bits64()), uint32_t(bits64())};
    in.masks = {int64_t(bits64()), -1, int64_t(bits64())};
    in.i32s = {int32_t(integer(1, 1 << 20)) << 7, int32_t(bits64()), int32_t(bits64())};
    in.u64s = {bits64(), 0};
    in.f32s = {0.0f};  // a swap expects -0.0: never matches +0.0
    in.f64s = {0.0};   // a swap expects 0.0: the first one matches
    MoreState got = launchMore(k, rt(), in);
    Check check("atomic_more");
    checkMoreOrderFree(in, got, check);

    double sumH[3] = {3, -2, 0.5}, sumB[2] = {5, -128};
    std::set<double> offered;
    for (int64_t i = 0; i < N; ++i) {
      const double v = in.x[size_t(i)];
      offered.insert(v);
      sumH[i % 3] += v;          // the global add of v
      sumH[(i % 128) % 3] += v;  // its block's shared part[t % 3], added in after the barrier
      sumH[2] += value(in.h[size_t(i)]);
      sumB[i % 2] += 2 * value(in.hb[size_t(i)]);
      sumB[1] += 1;
      sumB[((i % 128) % 3) % 2] += v;  // partb[t % 3], added to sum_b[t % 2]
    }
    for (int s = 0; s < 3; ++s) check.exact("sum_h[" + std::to_string(s) + "]", value(got.sumH[size_t(s)]), sumH[s]);
    for (int s = 0; s < 2; ++s) check.exact("sum_b[" + std::to_string(s) + "]", value(got.sumB[size_t(s)]), sumB[s]);
    check.that("u64s[1]", got.u64s[1] < uint64_t(N), "not an index swapped in: " + std::to_string(got.u64s[1]));
    check.exact("f32s[0]", got.f32s[0], 0.0);
    check.that("f64s[0]", offered.count(got.f64s[0]) == 1,
               "not one of the x swapped in: " + std::to_string(got.f64s[0]));
    // out[i]: two old values, partial sums of halves and integers.
    for (int64_t i = 0; i < N; ++i) {
      const float o = got.out[size_t(i)];
      check.that("out " + at(i), std::isfinite(o) && 2 * o == std::floor(2 * o) && std::fabs(o) <= 1024,
                 "not the sum of two partial sums: " + std::to_string(o));
    }
  });
}

// Random floats: the maxima and minima with NaN and signed zeros in play,
// the bit operations, the swaps.
TEST_F(Atomics, AtomicMoreRandom) {
  atBothWidths([&] {
    Kernel k = kernel("atomics_more.spn", "atomic_more");
    const int64_t N = 5000;  // 40 blocks of 128
    MoreState in;
    in.x = random<float>(size_t(N), -3, 3);
    in.x[5] = -0.0f, in.x[6] = 0.0f, in.x[200] = NAN;
    in.h = random<F16>(size_t(N), -4, 4);
    in.hb = random<BF16>(size_t(N), -4, 4);
    for (int64_t i = 0; i < N; i += 7) in.hb[size_t(i)] = from<BF16>(i % 2 ? 0.0 : -0.0);
    in.sumH = {from<F16>(0), from<F16>(0), from<F16>(0)};
    in.sumB = {from<BF16>(0), from<BF16>(0)};
    in.scale = {NAN, 0.0f}, in.dscale = {-0.0, NAN};
    in.flags = {0, ~0u, uint32_t(bits64())};
    in.masks = {0, int64_t(bits64()), int64_t(bits64())};
    in.i32s = {int32_t(integer(1, 1 << 20)) << 7, -1, int32_t(bits64())};
    in.u64s = {bits64(), 12345};  // a swap expects 0: never matches
    in.f32s = {-0.0f};            // the first swap matches
    in.f64s = {-0.0};             // a swap expects +0.0: never matches
    MoreState got = launchMore(k, rt(), in);
    Check check("atomic_more");
    checkMoreOrderFree(in, got, check);
    check.exact("u64s[1]", double(got.u64s[1]), 12345);
    std::set<uint32_t> offered;
    for (float v : in.x) offered.insert(bitsOf(v));
    check.that("f32s[0]", offered.count(bitsOf(got.f32s[0])) == 1,
               "not the bits of one of the x swapped in: " + std::to_string(got.f32s[0]));
    check.exact("f64s[0]", got.f64s[0], -0.0);
  });
}

// One element, so the order is the program's: each 16-bit add rounds once
// (nearest even), the swap on i32s[0] wins (out[0] = 0), the float swaps
// match. A second launch orders signed zeros in the float max and min.
TEST_F(Atomics, AtomicMoreOneElement) {
  atBothWidths([&] {
    Kernel k = kernel("atomics_more.spn", "atomic_more");
    MoreState in;
    in.x = {float(uniform(-3, 3))};
    in.h = {from<F16>(uniform(-3, 3))};
    in.hb = {from<BF16>(uniform(-3, 3))};
    in.sumH = {from<F16>(uniform(-50, 50)), from<F16>(uniform(-50, 50)), from<F16>(uniform(-50, 50))};
    in.sumB = {from<BF16>(uniform(-50, 50)), from<BF16>(uniform(-50, 50))};
    in.scale = {0.0f, 0.0f}, in.dscale = {0.0, 0.0};
    in.flags = {0, 0, 0}, in.masks = {0, 0, 0};
    in.i32s = {0, 0, 0}, in.u64s = {0, 0};
    in.f32s = {-0.0f}, in.f64s = {0.0};
    MoreState got = launchMore(k, rt(), in);
    Check check("atomic_more, one element");
    checkMoreOrderFree(in, got, check);
    const double v = in.x[0], vh = roundTo(kF16, v);
    auto h16 = [](double a) { return roundTo(kF16, a); };
    auto b16 = [](double a) { return roundTo(kBF16, a); };
    check.exact("sum_h[0]", value(got.sumH[0]), h16(h16(value(in.sumH[0]) + vh) + vh));
    check.exact("sum_h[1]", value(got.sumH[1]), value(in.sumH[1]));
    check.exact("sum_h[2]", value(got.sumH[2]), h16(value(in.sumH[2]) + value(in.h[0])));
    check.exact("sum_b[0]", value(got.sumB[0]), b16(b16(value(in.sumB[0]) + b16(2 * value(in.hb[0]))) + b16(vh)));
    check.exact("sum_b[1]", value(got.sumB[1]), b16(value(in.sumB[1]) + 1));
    check.exact("i32s[0]", got.i32s[0], 1);  // 0 | 0, then swapped for t + 1
    check.exact("out[0]", got.out[0], 0.0);  // the swap won
    check.exact("u64s[1]", double(got.u64s[1]), 0);
    check.exact("f32s[0]", got.f32s[0], v);
    check.exact("f64s[0]", got.f64s[0], v);

    in.x = {-0.0f};
    in.scale = {-0.0f, 0.0f}, in.dscale = {0.0, 0.0};
    got = launchMore(k, rt(), in);
    Check zeros("atomic_more, signed zeros");
    zeros.exact("scale[0]", got.scale[0], 0.0);   // max(-0.0, |-0.0|)
    zeros.exact("scale[1]", got.scale[1], -0.0);  // min(+0.0, -0.0)
    zeros.exact("dscale[0]", got.dscale[0], 0.0);
    zeros.exact("dscale[1]", got.dscale[1], -0.0);
  });
}

}  // namespace

}  // namespace spindle::cpu_golden
#endif  // SPINDLE_HAVE_CPU_TARGET
