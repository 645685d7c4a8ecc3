// Warp primitives and width-dependent code: warp_primitives (dynamic N and
// static N=4096), after bench/gpu_check.cpp's checkWarpPrimitives, and
// body_consts_warp (a const computed from warp_size()).
#include <string>
#include <vector>

#include "cpu_golden.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::cpu_golden {
namespace {

class WarpOps : public GoldenTest {};

int bitsSet(uint64_t v) {
  int n = 0;
  for (; v; v >>= 1) n += int(v & 1);
  return n;
}

// warp_ops: shfl_down's tree sum read back with shfl, shfl_up's inclusive
// scan, the neighbour lane's shared slot after sync_warp, ballot and the
// votes. The last block's threads past N take part with v = 0.
void checkWarpOps(Kernel& k, Runtime& rt, const std::vector<float>& x, int64_t W) {
  const int64_t N = int64_t(x.size()), threads = (N + 255) / 256 * 256;
  SCOPED_TRACE("N = " + std::to_string(N));
  auto dx = Buffer<float>::of(rt, x);
  auto y = Buffer<float>::poisoned(rt, size_t(N)), scan = Buffer<float>::poisoned(rt, size_t(N));
  auto counts = Buffer<int32_t>::poisoned(rt, size_t(N));
  auto votes = Buffer<uint64_t>::poisoned(rt, size_t(N));
  k.launch(nullptr, {dx.arg({N}), y.arg({N}), scan.arg({N}), counts.arg({N}), votes.arg({N})});
  auto gy = y.read(), gscan = scan.read();
  auto gcounts = counts.read();
  auto gvotes = votes.read();
  Check cy("y"), cscan("scan"), ccounts("counts"), cvotes("votes");
  for (int64_t w0 = 0; w0 < threads; w0 += W) {
    double total = 0, totalAbs = 0, run = 0, runAbs = 0;
    std::vector<double> prefix(static_cast<size_t>(W)), prefixAbs(static_cast<size_t>(W));
    uint64_t mask = 0;
    bool any = false, all = true;
    for (int64_t l = 0; l < W; ++l) {
      const double v = w0 + l < N ? double(x[size_t(w0 + l)]) : 0.0;
      total += v, totalAbs += std::fabs(v);
      prefix[size_t(l)] = run += v;
      prefixAbs[size_t(l)] = runAbs += std::fabs(v);
      if (v > 0.5) mask |= uint64_t(1) << l, any = true;
      all = all && v >= 0.0;
    }
    for (int64_t l = 0; l < W && w0 + l < N; ++l) {
      const size_t i = size_t(w0 + l);
      const double tolScan = sumTol32(prefixAbs[size_t(l ^ 1)], levels(W) + 1);
      const double want = total + prefix[size_t(l ^ 1)];
      cy.near(at(int64_t(i)), gy[i], want, sumTol32(totalAbs, levels(W) + 1) + tolScan + ulp32(want));
      cscan.near(at(int64_t(i)), gscan[i], prefix[size_t(l)], sumTol32(prefixAbs[size_t(l)], levels(W) + 1));
      ccounts.exact(at(int64_t(i)), gcounts[i], bitsSet(mask) + (any ? 100 : 0) + (all ? 1000 : 0));
      cvotes.exact(at(int64_t(i)), double(gvotes[i]), double(mask));
    }
  }
}

TEST_F(WarpOps, WarpPrimitives) {
  atBothWidths([&] {
    Kernel k = kernel("warp_primitives.spn", "warp_ops");
    for (int64_t N : {1000, 300}) {
      // Some warps all non-negative (warp_all true), some with no value past 0.5.
      std::vector<float> x = random<float>(size_t(N), -1, 1);
      for (int64_t i = 0; i < 64 && i < N; ++i) x[size_t(i)] = std::fabs(x[size_t(i)]);
      for (int64_t i = 128; i < 192 && i < N; ++i) x[size_t(i)] = std::min(x[size_t(i)], 0.25f);
      checkWarpOps(k, rt(), x, warp());
    }
  });
}

TEST_F(WarpOps, WarpPrimitivesStaticN) {
  atBothWidths([&] {
    KernelOptions o;
    o.staticDims = {"N"};
    Kernel k = kernel("warp_primitives.spn", "warp_ops", o);
    std::vector<float> x = random<float>(4096, -1, 1);
    for (int64_t i = 256; i < 320; ++i) x[size_t(i)] = std::fabs(x[size_t(i)]);
    checkWarpOps(k, rt(), x, warp());
  });
}

// ---- warp_index.spn: warp_id() in a 2-D block, against the linear id's warp

TEST_F(WarpOps, WarpIdIsTheLinearIdsWarp) {
  atBothWidths([&] {
    Kernel k = kernel("warp_index.spn", "warp_index");
    const int64_t N = 500, W = warp();  // 3 blocks, the last one partly past N
    auto out = poisoned<int32_t>(size_t(N));
    k.launch(nullptr, {out.arg({N})});
    auto got = out.read();
    Check check("out");
    for (int64_t i = 0; i < N; ++i) {
      const int64_t warpIndex = (i % 192) / W;
      check.exact(at(i), got[size_t(i)], double(warpIndex * 1000 + warpIndex));
    }
  });
}

// ---- body_consts_warp.spn: warp_rows[bf16] at static E=256 (VPT = E / width)

TEST_F(WarpOps, BodyConstsWarpRows) {
  atBothWidths([&] {
    KernelOptions o;
    o.staticDims = {"E"};
    Kernel k = kernel("body_consts_warp.spn", "warp_rows", o);
    const int64_t M = 10, E = 256;  // 4 rows a block: the last block has 2
    std::vector<BF16> x = random<BF16>(size_t(M * E), -1e3, 1e3);
    auto dx = upload(x);
    auto y = poisoned<BF16>(size_t(M * E));
    k.launch(nullptr, {dx.arg({M, E}), y.arg({M, E})});
    auto got = y.read();
    Check check("y");
    // STEPS is 2 at both widths.
    for (int64_t i = 0; i < M * E; ++i)
      check.exact(at(i / E, i % E), value(got[size_t(i)]), value(from<BF16>(2.0 * value(x[size_t(i)]))));
  });
}

}  // namespace

}  // namespace spindle::cpu_golden
#endif  // SPINDLE_HAVE_CPU_TARGET
