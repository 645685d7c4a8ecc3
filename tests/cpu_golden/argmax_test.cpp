// The key-value reductions of argmax.spn (greedy_pick, moe_topk,
// ragged_min), after bench/gpu_check.cpp's checkArgReduce: a brute-force
// reference (the first NaN's pair, else the extreme value's with the
// smallest index), values drawn from a small set so that ties, -0.0 and
// 0.0, infinities and NaNs meet, and warps grouped by the test's width.
#include <string>
#include <vector>

#include "cpu_golden.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::cpu_golden {
namespace {

class ArgReduce : public GoldenTest {
 protected:
  // A value from the pool, or (withNan) now and then a NaN.
  double draw(bool withNan) {
    static const double pool[] = {-2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 2.0, INFINITY, -INFINITY};
    if (withNan && integer(0, 96) == 0) return NAN;
    return pool[size_t(integer(0, 8))];
  }
};

// The position of the winning pair: the NaN with the smallest index, else
// the largest (Max) or smallest value with the smallest index (-0.0 and 0.0
// are equal).
template <bool Max>
size_t refArg(const std::vector<double>& v, const std::vector<int64_t>& idx) {
  size_t best = v.size();
  for (size_t k = 0; k < v.size(); ++k)
    if (std::isnan(v[k]) && (best == v.size() || idx[k] < idx[best])) best = k;
  if (best != v.size()) return best;
  double extreme = v[0];
  for (double x : v) extreme = Max ? std::max(extreme, x) : std::min(extreme, x);
  for (size_t k = 0; k < v.size(); ++k)
    if (v[k] == extreme && (best == v.size() || idx[k] < idx[best])) best = k;
  return best;
}

template <class V>
std::vector<V> slice(const std::vector<V>& v, int64_t from, int64_t to) {
  return std::vector<V>(v.begin() + from, v.begin() + to);
}

TEST_F(ArgReduce, GreedyPick) {
  atBothWidths([&] {
    Kernel k = kernel("argmax.spn", "greedy_pick");
    const int64_t M = 24, B = 256, W = warp();
    for (int64_t N : {1000, 100}) {  // 100: threads with no column (their pair is (-inf, N))
      SCOPED_TRACE("N = " + std::to_string(N));
      std::vector<float> logits(static_cast<size_t>(M * N));
      for (int64_t r = 0; r < M; ++r)
        for (int64_t j = 0; j < N; ++j) logits[size_t(r * N + j)] = r % 8 == 1 ? 1.0f : float(draw(r % 4 == 0));
      auto dl = upload(logits);
      auto token = poisoned<int32_t>(size_t(M)), perWarp = poisoned<int32_t>(size_t(M * B));
      auto score = poisoned<float>(size_t(M)), warpBest = poisoned<float>(size_t(M * B));
      k.launch(nullptr, {dl.arg({M, N}), token.arg({M}), score.arg({M}), perWarp.arg({M, B}), warpBest.arg({M, B})});
      auto gt = token.read(), gpw = perWarp.read();
      auto gs = score.read(), gwb = warpBest.read();
      Check ct("token"), cs("score"), cpw("per_warp"), cwb("warp_best");
      for (int64_t r = 0; r < M; ++r) {
        // Each thread's best of its strided columns, as the kernel's loop keeps it.
        std::vector<double> best(size_t(B), -INFINITY);
        std::vector<int64_t> col(size_t(B), N);
        for (int64_t t = 0; t < B; ++t)
          for (int64_t j = t; j < N; j += B) {
            const double v = logits[size_t(r * N + j)];
            if (v > best[size_t(t)] || (std::isnan(v) && !std::isnan(best[size_t(t)])))
              best[size_t(t)] = v, col[size_t(t)] = j;
          }
        const size_t kb = refArg<true>(best, col);
        ct.exact(at(r), gt[size_t(r)], double(col[kb]));
        cs.exact(at(r), gs[size_t(r)], best[kb]);
        for (int64_t w = 0; w < B; ++w) {
          const size_t p = size_t(r * B + w);
          if (w >= B / W) {
            cpw.that(at(r, w), isPoison(gpw[p]), "written, but the block has no such warp");
            cwb.that(at(r, w), isPoison(gwb[p]), "written, but the block has no such warp");
            continue;
          }
          auto wv = slice(best, w * W, (w + 1) * W);
          auto wi = slice(col, w * W, (w + 1) * W);
          const size_t kw = refArg<true>(wv, wi);
          cpw.exact(at(r, w), gpw[p], double(wi[kw]));
          cwb.exact(at(r, w), gwb[p], wv[kw]);
        }
      }
    }
  });
}

TEST_F(ArgReduce, MoeTopk) {
  atBothWidths([&] {
    Kernel k = kernel("argmax.spn", "moe_topk");
    const int64_t T = 20, E = 100, K = 6, B = 128, W = warp();
    std::vector<float> scores(static_cast<size_t>(T * E));
    for (int64_t t = 0; t < T; ++t)
      for (int64_t e = 0; e < E; ++e) scores[size_t(t * E + e)] = float(draw(t % 3 == 0));
    auto ds = upload(scores);
    auto ids = poisoned<int32_t>(size_t(T * K));
    auto weights = poisoned<float>(size_t(T * K)), lowScore = poisoned<float>(size_t(T * 4));
    auto warpLow = poisoned<int64_t>(size_t(T * 4));
    k.launch(nullptr,
             {ds.arg({T, E}), ids.arg({T, K}), weights.arg({T, K}), warpLow.arg({T, 4}), lowScore.arg({T, 4})});
    auto gids = ids.read();
    auto gw = weights.read(), gls = lowScore.read();
    auto gl = warpLow.read();
    Check ci("ids"), cw("weights"), cl("warp_low"), cls("low_score");
    std::vector<int64_t> lanes(static_cast<size_t>(B));
    for (int64_t t = 0; t < B; ++t) lanes[size_t(t)] = t;
    for (int64_t tok = 0; tok < T; ++tok) {
      std::vector<double> s(size_t(B), -INFINITY);  // threads past E hold -inf
      for (int64_t e = 0; e < E; ++e) s[size_t(e)] = scores[size_t(tok * E + e)];
      for (int64_t w = 0; w < 4; ++w) {
        const size_t p = size_t(tok * 4 + w);
        if (w >= B / W) {
          cl.that(at(tok, w), isPoison(gl[p]), "written, but the block has no such warp");
          cls.that(at(tok, w), isPoison(gls[p]), "written, but the block has no such warp");
          continue;
        }
        auto wv = slice(s, w * W, (w + 1) * W);
        auto wi = slice(lanes, w * W, (w + 1) * W);
        const size_t kw = refArg<false>(wv, wi);
        cl.exact(at(tok, w), double(gl[p]), double(wi[kw]));
        cls.exact(at(tok, w), gls[p], wv[kw]);
      }
      for (int64_t kk = 0; kk < K; ++kk) {
        const size_t e = refArg<true>(s, lanes);
        ci.exact(at(tok, kk), gids[size_t(tok * K + kk)], double(e));
        cw.exact(at(tok, kk), gw[size_t(tok * K + kk)], s[e]);
        s[e] = -INFINITY;
      }
    }
  });
}

TEST_F(ArgReduce, RaggedMin) {
  atBothWidths([&] {
    Kernel k = kernel("argmax.spn", "ragged_min");
    const int64_t M = 30, B = 100, W = warp();  // blocks of 100: a partial last warp at both widths
    std::vector<double> x(static_cast<size_t>(M * B));
    for (int64_t r = 0; r < M; ++r)
      for (int64_t t = 0; t < B; ++t) x[size_t(r * B + t)] = draw(r % 2 == 0);
    auto dx = upload(x);
    auto where = poisoned<int64_t>(size_t(M * B));
    auto first = poisoned<uint32_t>(size_t(M));
    auto lowest = poisoned<double>(size_t(M));
    auto top = poisoned<int32_t>(size_t(M * B));
    k.launch(nullptr, {dx.arg({M, B}), where.arg({M, B}), first.arg({M}), lowest.arg({M}), top.arg({M, B})});
    auto gx = dx.read(), glow = lowest.read();
    auto gwhere = where.read();
    auto gfirst = first.read();
    auto gtop = top.read();
    Check cwhere("where"), cx("x (the warp's minimum)"), ctop("top"), cfirst("first"), clow("lowest");
    for (int64_t r = 0; r < M; ++r) {
      auto row = slice(x, r * B, (r + 1) * B);
      std::vector<int64_t> flat(static_cast<size_t>(B)), lane(static_cast<size_t>(B));
      for (int64_t t = 0; t < B; ++t) flat[size_t(t)] = r * 100 + t, lane[size_t(t)] = t;
      for (int64_t w0 = 0; w0 < B; w0 += W) {
        const int64_t w1 = std::min(B, w0 + W);  // the lanes that exist
        auto wv = slice(row, w0, w1);
        std::vector<double> wf;
        for (double v : wv) wf.push_back(double(float(v)));
        auto wi = slice(flat, w0, w1);
        auto wl = slice(lane, w0, w1);
        const size_t lo = refArg<false>(wv, wi), hi = refArg<true>(wf, wl);
        for (int64_t t = w0; t < w1; ++t) {
          const size_t p = size_t(r * B + t);
          cwhere.exact(at(r, t), double(gwhere[p]), double(wi[lo]));
          cx.exact(at(r, t), gx[p], wv[lo]);
          ctop.exact(at(r, t), gtop[p], double(wl[hi] + (wf[hi] > 0 ? 1 : 0)));
        }
      }
      const size_t b = refArg<false>(row, lane);
      cfirst.exact(at(r), gfirst[size_t(r)], double(b));
      clow.exact(at(r), glow[size_t(r)], row[b]);
    }
  });
}

}  // namespace

}  // namespace spindle::cpu_golden
#endif  // SPINDLE_HAVE_CPU_TARGET
