// Warp and block reductions and scans: collectives (row_stats, row_counts,
// thread_prefix), launch_shapes (row_stats dynamic and at static N=100,
// tiles), defs_collective, scratch_dynamic (dynamic and static N) and
// shared_tree (checked and unchecked). The
// warp-level outputs depend on the width by design: the references group
// lanes by the test's width, and slots past the block's warps must stay
// untouched.
#include <string>
#include <vector>

#include "cpu_golden.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::cpu_golden {
namespace {

class Reductions : public GoldenTest {};

// ---- collectives.spn: row_stats

TEST_F(Reductions, CollectivesRowStats) {
  atBothWidths([&] {
    Kernel k = kernel("collectives.spn", "row_stats");
    const int64_t B = 256, MAXW = 8, W = warp(), M = 4;
    for (int64_t N : {1000, 100}) {  // 100: warps with no column at all
      SCOPED_TRACE("N = " + std::to_string(N));
      std::vector<float> x = random<float>(size_t(M * N), -3, 3);
      auto dx = upload(x);
      auto stats = poisoned<float>(size_t(M * 4)), perWarp = poisoned<float>(size_t(M * MAXW * 4));
      k.launch(nullptr, {dx.arg({M, N}), stats.arg({M, 4}), perWarp.arg({M, MAXW, 4})});
      auto gs = stats.read(), gw = perWarp.read();
      Check cs("stats"), cw("per_warp");
      const int perThread = int((N + B - 1) / B);
      for (int64_t r = 0; r < M; ++r) {
        std::vector<double> s(size_t(B), 0), sAbs(size_t(B), 0), hi(size_t(B), -INFINITY), lo(size_t(B), INFINITY);
        for (int64_t j = 0; j < N; ++j) {
          const double v = x[size_t(r * N + j)];
          const size_t t = size_t(j % B);
          s[t] += v, sAbs[t] += std::fabs(v), hi[t] = std::max(hi[t], v), lo[t] = std::min(lo[t], v);
        }
        double sum = 0, sumAbs = 0;
        for (int64_t t = 0; t < B; ++t) sum += s[size_t(t)], sumAbs += sAbs[size_t(t)];
        const float* row = &gs[size_t(r * 4)];
        cs.near(at(r, 0), row[0], sum, sumTol32(sumAbs, perThread + levels(B) + 1));
        cs.exact(at(r, 1), row[1], *std::max_element(hi.begin(), hi.end()));
        cs.exact(at(r, 2), row[2], *std::min_element(lo.begin(), lo.end()));
        // The f64 sum less the f32 one the kernel stored.
        const double diff = sum - double(row[0]);
        cs.near(at(r, 3), row[3], diff, ulp32(diff) + sumTol64(sumAbs, perThread + levels(B) + 1));
        for (int64_t w = 0; w < MAXW; ++w) {
          const float* got = &gw[size_t((r * MAXW + w) * 4)];
          if (w >= B / W) {  // no such warp at this width
            for (int c = 0; c < 4; ++c)
              cw.that(at(r, w, c), isPoison(got[c]), "written, but the block has no such warp");
            continue;
          }
          double ws = 0, wAbs = 0, wmax = -INFINITY, wmin = INFINITY;
          for (int64_t t = w * W; t < (w + 1) * W; ++t) {
            ws += s[size_t(t)], wAbs += sAbs[size_t(t)];
            wmax = std::max(wmax, hi[size_t(t)]), wmin = std::min(wmin, lo[size_t(t)]);
          }
          const double tol = sumTol32(wAbs, perThread + levels(W) + 1);
          cw.near(at(r, w, 0), got[0], ws, tol);
          cw.exact(at(r, w, 1), got[1], wmax);
          cw.exact(at(r, w, 2), got[2], wmin);
          cw.near(at(r, w, 3), got[3], 0.0, 2 * tol);  // the butterfly's sum less warp_sum's
        }
      }
    }
  });
}

// ---- collectives.spn: row_counts (i32 and i64 collectives)

TEST_F(Reductions, CollectivesRowCounts) {
  atBothWidths([&] {
    Kernel k = kernel("collectives.spn", "row_counts");
    const int64_t B = 256, W = warp(), M = 4;
    for (int64_t N : {1000, 100}) {
      SCOPED_TRACE("N = " + std::to_string(N));
      std::vector<int32_t> x = random<int32_t>(size_t(M * N), -1000000, 1000000);
      auto dx = upload(x);
      auto out = poisoned<int64_t>(size_t(M * 5));
      k.launch(nullptr, {dx.arg({M, N}), out.arg({M, 5})});
      auto got = out.read();
      Check check("out");
      for (int64_t r = 0; r < M; ++r) {
        std::vector<int64_t> count(size_t(B), 0), hi(size_t(B), -2147483647), lo(size_t(B), 2147483647);
        for (int64_t j = 0; j < N; ++j) {
          const int64_t v = x[size_t(r * N + j)];
          const size_t t = size_t(j % B);
          count[t] += v, hi[t] = std::max(hi[t], v), lo[t] = std::min(lo[t], v);
        }
        int64_t total = 0, warp0Max = INT64_MIN, warp0Sum = 0, warp0Min = INT64_MAX;
        for (int64_t t = 0; t < B; ++t) total += count[size_t(t)];
        for (int64_t t = 0; t < W; ++t) {
          warp0Max = std::max(warp0Max, hi[size_t(t)]), warp0Sum += count[size_t(t)];
          warp0Min = std::min(warp0Min, lo[size_t(t)]);
        }
        const int64_t want[5] = {total, *std::max_element(hi.begin(), hi.end()),
                                 *std::min_element(lo.begin(), lo.end()), warp0Max + warp0Sum,
                                 std::min(warp0Min, lo[1])};
        for (int c = 0; c < 5; ++c) check.exact(at(r, c), double(got[size_t(r * 5 + c)]), double(want[c]));
      }
    }
  });
}

// ---- collectives.spn: thread_prefix (warp_cumsum, block_cumsum twice)

TEST_F(Reductions, CollectivesThreadPrefix) {
  atBothWidths([&] {
    Kernel k = kernel("collectives.spn", "thread_prefix");
    const int64_t B = 256, W = warp(), M = 5;
    std::vector<int32_t> x = random<int32_t>(size_t(M * B), -100000, 100000);
    auto dx = upload(x);
    auto inWarp = poisoned<int32_t>(size_t(M * B));
    auto inBlock = poisoned<int64_t>(size_t(M * B));
    auto f = poisoned<double>(size_t(M * B));
    k.launch(nullptr, {dx.arg({M, B}), inWarp.arg({M, B}), inBlock.arg({M, B}), f.arg({M, B})});
    auto gw = inWarp.read();
    auto gb = inBlock.read();
    auto gf = f.read();
    Check cw("within_warp"), cb("within_block"), cf("f");
    for (int64_t r = 0; r < M; ++r) {
      int64_t warpRun = 0, blockRun = 0;
      for (int64_t t = 0; t < B; ++t) {
        const int64_t v = x[size_t(r * B + t)];
        if (t % W == 0) warpRun = 0;
        warpRun += v, blockRun += v;
        const size_t i = size_t(r * B + t);
        cw.exact(at(r, t), gw[i], double(warpRun));
        cb.exact(at(r, t), double(gb[i]), double(blockRun));
        cf.exact(at(r, t), gf[i], 0.5 * double(blockRun));  // halves of integers add exactly
      }
    }
  });
}

// ---- launch_shapes.spn: row_stats (@block(min(N, 1024)): a partial last warp)

void checkLaunchShapesRowStats(Kernel& k, int64_t R, int64_t N, std::vector<float> x, int64_t W) {
  SCOPED_TRACE("N = " + std::to_string(N));
  const int64_t B = std::min<int64_t>(N, 1024);
  auto dx = Buffer<float>::of(runtime(int(W)), x);
  auto total = Buffer<float>::poisoned(runtime(int(W)), size_t(R));
  auto prefix = Buffer<float>::poisoned(runtime(int(W)), size_t(R * N));
  auto perWarp = Buffer<float>::poisoned(runtime(int(W)), size_t(R * N * 4));
  k.launch(nullptr, {dx.arg({R, N}), total.arg({R}), prefix.arg({R, N}), perWarp.arg({R, N, 4})});
  auto gt = total.read(), gp = prefix.read(), gw = perWarp.read();
  Check ct("total"), cp("prefix"), cw("per_warp");
  for (int64_t r = 0; r < R; ++r) {
    const float* row = &x[size_t(r * N)];
    double sum = 0, sumAbs = 0;
    for (int64_t j = 0; j < N; ++j) sum += row[j], sumAbs += std::fabs(row[j]);
    ct.near(at(r), gt[size_t(r)], sum, sumTol32(sumAbs, int((N + B - 1) / B) + levels(B) + 1));
    double run = 0, runAbs = 0;
    for (int64_t j = 0; j < N; ++j) {
      const size_t p = size_t(r * N + j);
      if (j >= B) {  // no thread for this column
        cp.that(at(r, j), isPoison(gp[p]), "written past the block");
        for (int c = 0; c < 4; ++c) cw.that(at(r, j, c), isPoison(gw[p * 4 + size_t(c)]), "written past the block");
        continue;
      }
      run += row[j], runAbs += std::fabs(row[j]);
      cp.near(at(r, j), gp[p], run, sumTol32(runAbs, levels(B) + 2));
      // The lanes of j's warp that exist.
      const int64_t w0 = j / W * W, w1 = std::min(w0 + W, B);
      double ws = 0, wAbs = 0, wmax = -INFINITY, wmin = INFINITY, scan = 0, scanAbs = 0;
      for (int64_t l = w0; l < w1; ++l) {
        const double v = row[l];
        ws += v, wAbs += std::fabs(v), wmax = std::max(wmax, v), wmin = std::min(wmin, v);
        if (l <= j) scan += v, scanAbs += std::fabs(v);
      }
      cw.near(at(r, j, 0), gw[p * 4 + 0], ws, sumTol32(wAbs, levels(W) + 1));
      cw.exact(at(r, j, 1), gw[p * 4 + 1], wmax);
      cw.exact(at(r, j, 2), gw[p * 4 + 2], wmin);
      cw.near(at(r, j, 3), gw[p * 4 + 3], scan, sumTol32(scanAbs, levels(W) + 1));
    }
  }
}

TEST_F(Reductions, LaunchShapesRowStats) {
  atBothWidths([&] {
    Kernel k = kernel("launch_shapes.spn", "row_stats");
    const int64_t R = 3;
    for (int64_t N : {100, 37, 1500, 1, 33, 65})
      checkLaunchShapesRowStats(k, R, N, random<float>(size_t(R * N), -2, 2), warp());
  });
}

TEST_F(Reductions, LaunchShapesRowStatsStaticN) {
  atBothWidths([&] {
    KernelOptions o;
    o.staticDims = {"N"};
    Kernel k = kernel("launch_shapes.spn", "row_stats", o);
    const int64_t R = 3, N = 100;
    checkLaunchShapesRowStats(k, R, N, random<float>(size_t(R * N), -2, 2), warp());
  });
}

// ---- launch_shapes.spn: tiles (@grid from scalars and warp_size())

TEST_F(Reductions, LaunchShapesTiles) {
  atBothWidths([&] {
    Kernel k = kernel("launch_shapes.spn", "tiles");
    const int64_t W = warp();
    struct Case {
      int64_t T, N;
      int32_t n, tiles;
    };
    // n past N (lanes past N take part with 0), and n short of N (columns
    // past the grid's threads are not written).
    for (const Case& c : {Case{7, 300, 310, 3}, Case{5, 300, 100, 2}, Case{4, 1000, 1000, 4}}) {
      SCOPED_TRACE("T=" + std::to_string(c.T) + " N=" + std::to_string(c.N) + " n=" + std::to_string(c.n) +
                   " tiles=" + std::to_string(c.tiles));
      std::vector<float> x = random<float>(size_t(c.T * c.N), -2, 2);
      auto dx = upload(x);
      auto y = poisoned<float>(size_t(c.T * c.N));
      k.launch(nullptr, {dx.arg({c.T, c.N}), y.arg({c.T, c.N}), scalar(c.n), scalar(c.tiles)});
      auto got = y.read();
      const int64_t threads = (c.n + 4 * W - 1) / (4 * W) * (4 * W);
      Check check("y");
      for (int64_t t = 0; t < c.T; ++t)
        for (int64_t i = 0; i < c.N; ++i) {
          const size_t p = size_t(t * c.N + i);
          if (i >= threads) {
            check.that(at(t, i), isPoison(got[p]), "written past the grid");
            continue;
          }
          double ws = 0, wAbs = 0;
          for (int64_t l = i / W * W; l < i / W * W + W; ++l)
            if (l < c.N) ws += x[size_t(t * c.N + l)], wAbs += std::fabs(x[size_t(t * c.N + l)]);
          const double want = x[p] + ws;
          check.near(at(t, i), got[p], want, sumTol32(wAbs, levels(W) + 1) + ulp32(want));
        }
    }
  });
}

// ---- defs_collective.spn: row_norm (block_sum and warp_max inside defs)

TEST_F(Reductions, DefsCollectiveRowNorm) {
  atBothWidths([&] {
    Kernel k = kernel("defs_collective.spn", "row_norm");
    const int64_t B = 128, W = warp(), M = 4;
    for (int64_t N : {1000, 50}) {
      SCOPED_TRACE("N = " + std::to_string(N));
      std::vector<float> x = random<float>(size_t(M * N), -3, 3);
      auto dx = upload(x);
      auto y = poisoned<float>(size_t(M)), peak = poisoned<float>(size_t(M));
      k.launch(nullptr, {dx.arg({M, N}), y.arg({M}), peak.arg({M})});
      auto gy = y.read(), gp = peak.read();
      Check cy("y"), cp("peak");
      for (int64_t r = 0; r < M; ++r) {
        double ss = 0, warp0Peak = 0;
        for (int64_t j = 0; j < N; ++j) {
          const double v = x[size_t(r * N + j)];
          ss += v * v;
          if (j % B < W) warp0Peak = std::max(warp0Peak, std::fabs(v));
        }
        const double want = std::sqrt(ss);
        // The squares round once each, then the sum: half of that relative error after sqrt.
        const double tol = 0.5 * sumTol32(ss, int((N + B - 1) / B) + levels(B) + 2) / want + ulp32(want);
        cy.near(at(r), gy[size_t(r)], want, tol);
        cp.exact(at(r), gp[size_t(r)], warp0Peak);
      }
    }
  });
}

// ---- scratch_dynamic.spn: rowwise_softmax_cached, dynamic N and static N=1000

void checkSoftmax(const std::vector<float>& x, const std::vector<float>& got, int64_t M, int64_t N) {
  Check check("y (N = " + std::to_string(N) + ")");
  for (int64_t r = 0; r < M; ++r) {
    const float* row = &x[size_t(r * N)];
    const float top = *std::max_element(row, row + N);
    std::vector<double> e(static_cast<size_t>(N));
    double sum = 0;
    for (int64_t j = 0; j < N; ++j) sum += e[size_t(j)] = std::exp(double(f32(double(row[j]) - top)));
    for (int64_t j = 0; j < N; ++j) {
      const double want = e[size_t(j)] / sum;
      // expf (about an ulp) and the rounding to f32 of the f64 quotient.
      check.near(at(r, j), got[size_t(r * N + j)], want, 3 * ulp32(want));
    }
  }
}

TEST_F(Reductions, ScratchDynamicSoftmax) {
  atBothWidths([&] {
    Kernel k = kernel("scratch_dynamic.spn", "rowwise_softmax_cached");
    const int64_t M = 3;
    for (int64_t N : {1000, 77}) {
      std::vector<float> x = random<float>(size_t(M * N), -6, 6);
      auto dx = upload(x);
      auto y = poisoned<float>(size_t(M * N));
      k.launch(nullptr, {dx.arg({M, N}), y.arg({M, N})});
      checkSoftmax(x, y.read(), M, N);
    }
  });
}

TEST_F(Reductions, ScratchDynamicSoftmaxStaticN) {
  atBothWidths([&] {
    KernelOptions o;
    o.staticDims = {"N"};
    Kernel k = kernel("scratch_dynamic.spn", "rowwise_softmax_cached", o);
    const int64_t M = 3, N = 1000;
    std::vector<float> x = random<float>(size_t(M * N), -6, 6);
    auto dx = upload(x);
    auto y = poisoned<float>(size_t(M * N));
    k.launch(nullptr, {dx.arg({M, N}), y.arg({M, N})});
    checkSoftmax(x, y.read(), M, N);
  });
}

// ---- shared_tree.spn: block_sums, checked (the shared-memory checks look
// at every access) and unchecked. Small integers, so that every partial sum
// is exact whatever the order.

TEST_F(Reductions, SharedTreeBlockSums) {
  atBothWidths([&] {
    const int64_t B = 128;
    for (bool checked : {true, false}) {
      Kernel k = kernel("shared_tree.spn", "block_sums", {}, checked);
      for (int64_t N : {1000, 128, 5}) {
        SCOPED_TRACE("N = " + std::to_string(N) + (checked ? ", checked" : ", unchecked"));
        const int64_t G = (N + B - 1) / B;
        std::vector<float> x(static_cast<size_t>(N));
        for (float& v : x) v = float(integer(-8, 8));
        auto dx = upload(x, checked);
        auto sums = poisoned<float>(size_t(G), checked);
        k.launch(nullptr, {dx.arg({N}), sums.arg({G})});
        auto got = sums.read();
        Check check("sums");
        for (int64_t g = 0; g < G; ++g) {
          double want = 0;
          for (int64_t i = g * B; i < std::min(N, (g + 1) * B); ++i) want += x[size_t(i)];
          check.exact(at(g), got[size_t(g)], want);
        }
      }
    }
  });
}

}  // namespace

}  // namespace spindle::cpu_golden
#endif  // SPINDLE_HAVE_CPU_TARGET
