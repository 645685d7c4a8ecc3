// Elementwise and tiled samples: axpy, scale_strided, transpose, histogram,
// bias_gelu. Timing shapes and bytes are gpu_check's.
#include <climits>

#include "cases.hpp"

namespace parity {

using spindle::ScalarType;

bool require(Ctx& c, const std::string& kernel, bool ok, const std::string& what) {
  if (!ok) c.fail(kernel, "the hand-written kernel needs " + what);
  return ok;
}

void caseAxpy(Ctx& c) {
  const int64_t n = int64_t(1) << 26;
  if (!require(c, "axpy", n < INT_MAX, "n < 2^31")) return;
  spindle::Kernel k = c.spindle("samples/axpy.spn", "axpy");
  const unsigned grid = unsigned((n + 1023) / 1024);
  const float a = 0.5f;
  {  // f32
    HandKernel h = c.hand("axpy.cu", "axpy_f32");
    auto x = c.upload(randomF32(c.rng, size_t(n), -1, 1));
    auto y0 = randomF32(c.rng, size_t(n), -1, 1);
    auto ys = c.upload(y0), yh = c.upload(y0);
    auto spindle = [&] { c.launch(k, {f32Arg(x, {n}), f32Arg(ys, {n}), spindle::scalar(a)}); };
    auto hand = [&] { h(Dim3{grid}, Dim3{256}, 0, x.data(), yh.data(), a, int(n)); };
    spindle();
    hand();
    const auto gs = c.download<float>(ys, size_t(n)), gh = c.download<float>(yh, size_t(n));
    if (c.check(
            "axpy", "f32 y", "64M f32", size_t(n), [&](size_t i) { return double(gs[i]); },
            [&](size_t i) { return double(gh[i]); }, Tolerance::abs(1e-6, 1e-6)))
      c.time("axpy", "64M f32", 12.0 * double(n), spindle, hand);
  }
  {  // f16
    HandKernel h = c.hand("axpy.cu", "axpy_f16");
    auto x = c.upload(randomF16(c.rng, size_t(n), -1, 1));
    auto y0 = randomF16(c.rng, size_t(n), -1, 1);
    auto ys = c.upload(y0), yh = c.upload(y0);
    auto spindle = [&] {
      c.launch(k, {typed(x.data(), ScalarType::F16, {n}), typed(ys.data(), ScalarType::F16, {n}), spindle::scalar(a)});
    };
    auto hand = [&] { h(Dim3{grid}, Dim3{256}, 0, x.data(), yh.data(), a, int(n)); };
    spindle();
    hand();
    const auto gs = c.download<uint16_t>(ys, size_t(n)), gh = c.download<uint16_t>(yh, size_t(n));
    if (c.check(
            "axpy", "f16 y", "64M f16", size_t(n), [&](size_t i) { return double(fromHalf(gs[i])); },
            [&](size_t i) { return double(fromHalf(gh[i])); }, Tolerance::f16(1)))
      c.time("axpy", "64M f16", 6.0 * double(n), spindle, hand);
  }
}

// y = alpha * x for x row-major (the contiguous binary: runs of 16 bytes)
// and for x a transposed view (the general binary: gathered reads).
void caseScaleStrided(Ctx& c) {
  const int64_t M = 8192, N = 8192;
  if (!require(c, "scale_strided", M * N < INT_MAX && N % 4 == 0, "M * N < 2^31 and N % 4 == 0")) return;
  spindle::Kernel k = c.spindle("samples/scale_strided.spn", "scale_strided");
  auto x = c.upload(randomF32(c.rng, size_t(M * N), -1, 1));
  auto ys = c.filled(size_t(M * N) * 4), yh = c.filled(size_t(M * N) * 4);
  const float alpha = 2.0f;
  const Dim3 grid{unsigned((N + 127) / 128), unsigned((M + 31) / 32)}, block{32, 8};
  for (bool transposed : {false, true}) {
    const std::string shape = transposed ? "8192x8192 x.T" : "8192x8192";
    const int64_t s0 = transposed ? 1 : N, s1 = transposed ? M : 1;
    HandKernel h = transposed ? c.hand("scale_strided.cu", "scale_gather") : c.hand("scale_strided.cu", "scale_rows");
    auto spindle = [&] {
      c.launch(k, {spindle::tensor(x.data(), ScalarType::F32, {M, N}, {s0, s1}), f32Arg(ys, {M, N}),
                   spindle::scalar(alpha)});
    };
    auto hand = [&] {
      if (transposed) h(grid, block, 0, x.data(), yh.data(), alpha, int(M), int(N), int(s0), int(s1));
      else h(grid, block, 0, x.data(), yh.data(), alpha, int(M), int(N));
    };
    spindle();
    hand();
    const auto gs = c.download<float>(ys, size_t(M * N)), gh = c.download<float>(yh, size_t(M * N));
    if (c.check(
            "scale_strided", "y", shape, gs.size(), [&](size_t i) { return double(gs[i]); },
            [&](size_t i) { return double(gh[i]); }, Tolerance::exact()))
      c.time(transposed ? "scale_strided (x.T)" : "scale_strided", shape, 8.0 * double(M * N), spindle, hand);
  }
}

void caseTranspose(Ctx& c) {
  const int64_t M = 8192, N = 8192;
  if (!require(c, "transpose", M * N < INT_MAX, "M * N < 2^31")) return;
  spindle::Kernel k = c.spindle("samples/transpose.spn", "transpose");
  HandKernel h = c.hand("transpose.cu", "transpose");
  auto x = c.upload(randomF32(c.rng, size_t(M * N), -1, 1));
  auto ys = c.filled(size_t(M * N) * 4), yh = c.filled(size_t(M * N) * 4);
  auto spindle = [&] { c.launch(k, {f32Arg(x, {M, N}), f32Arg(ys, {N, M})}); };
  auto hand = [&] {
    h(Dim3{unsigned((N + 63) / 64), unsigned((M + 63) / 64)}, Dim3{64, 8}, 0, x.data(), yh.data(), int(M), int(N));
  };
  spindle();
  hand();
  const auto gs = c.download<float>(ys, size_t(M * N)), gh = c.download<float>(yh, size_t(M * N));
  if (c.check(
          "transpose", "y", "8192x8192", gs.size(), [&](size_t i) { return double(gs[i]); },
          [&](size_t i) { return double(gh[i]); }, Tolerance::exact()))
    c.time("transpose", "8192x8192", 8.0 * double(M * N), spindle, hand);
}

// 64M values into 256 bins of [-1, 1), a tenth of them outside; both
// kernels start from zeroed bins once for the check (the counts must be
// equal), then accumulate on while timed.
void caseHistogram(Ctx& c) {
  const int64_t n = int64_t(1) << 26, bins = 256;
  const float lo = -1.0f, hi = 1.0f;
  if (!require(c, "histogram", n < INT_MAX, "n < 2^31")) return;
  spindle::Kernel k = c.spindle("samples/histogram.spn", "histogram");
  HandKernel h = c.hand("histogram.cu", "histogram");
  const auto hx = randomF32(c.rng, size_t(n), -1.1, 1.1);
  auto x = c.upload(hx);
  auto hs = c.filled(size_t(bins) * 4, 0), hh = c.filled(size_t(bins) * 4, 0);
  // The sample's grid: min(tiles, resident_blocks()); the same from the driver here.
  const int64_t tiles = (n + 8191) / 8192;
  const int64_t resident = c.residentBlocks(h, 256, size_t(bins) * 4);
  const unsigned grid = unsigned(std::max<int64_t>(1, std::min(tiles, resident)));
  auto spindle = [&] {
    c.launch(k, {f32Arg(x, {n}), typed(hs.data(), ScalarType::I32, {bins}), spindle::scalar(lo), spindle::scalar(hi)});
  };
  auto hand = [&] { h(Dim3{grid}, Dim3{256}, unsigned(bins * 4), x.data(), hh.data(), lo, hi, int(n), int(bins)); };
  spindle();
  hand();
  const auto gs = c.download<int32_t>(hs, size_t(bins)), gh = c.download<int32_t>(hh, size_t(bins));
  // Both against the counts computed here with the kernels' own f32 bin
  // formula (so values near a bin edge land where the kernels put them).
  std::vector<int64_t> want(static_cast<size_t>(bins), 0);
  const float scale = float(bins) / (hi - lo);
  for (float v : hx)
    if (v >= lo && v < hi) ++want[size_t(std::min(int64_t((v - lo) * scale), bins - 1))];
  const bool ok = c.check(
      "histogram", "h (spindle)", "64M B=256", gs.size(), [&](size_t i) { return double(gs[i]); },
      [&](size_t i) { return double(want[i]); }, Tolerance::exact());
  if (c.check(
          "histogram", "h (hand-written)", "64M B=256", gh.size(), [&](size_t i) { return double(gh[i]); },
          [&](size_t i) { return double(want[i]); }, Tolerance::exact()) &&
      ok)
    c.time("histogram", "64M B=256", 4.0 * double(n), spindle, hand);
}

void caseBiasGelu(Ctx& c) {
  const int64_t M = 8192, N = 8192;
  if (!require(c, "bias_gelu", M * N < INT_MAX && N % 4 == 0, "M * N < 2^31 and N % 4 == 0")) return;
  spindle::Kernel k = c.spindle("samples/bias_gelu.spn", "bias_gelu");
  HandKernel h = c.hand("bias_gelu.cu", "bias_gelu");
  auto x = c.upload(randomF32(c.rng, size_t(M * N), -3, 3));
  auto bias = c.upload(randomF32(c.rng, size_t(N), -1, 1));
  auto ys = c.filled(size_t(M * N) * 4), yh = c.filled(size_t(M * N) * 4);
  auto ss = c.filled(size_t(M) * 4), sh = c.filled(size_t(M) * 4);
  auto spindle = [&] { c.launch(k, {f32Arg(x, {M, N}), f32Arg(bias, {N}), f32Arg(ys, {M, N}), f32Arg(ss, {M})}); };
  auto hand = [&] { h(Dim3{unsigned(M)}, Dim3{256}, 0, x.data(), bias.data(), yh.data(), sh.data(), int(N)); };
  spindle();
  hand();
  const auto gys = c.download<float>(ys, size_t(M * N)), gyh = c.download<float>(yh, size_t(M * N));
  const auto gss = c.download<float>(ss, size_t(M)), gsh = c.download<float>(sh, size_t(M));
  const bool ok = c.check(
      "bias_gelu", "y", "8192x8192", gys.size(), [&](size_t i) { return double(gys[i]); },
      [&](size_t i) { return double(gyh[i]); }, Tolerance::abs(1e-6, 1e-5));
  // Row sums of 8192 values of |y| < 3, in two summation orders.
  const bool ok2 = c.check(
      "bias_gelu", "rowsum", "8192x8192", gss.size(), [&](size_t i) { return double(gss[i]); },
      [&](size_t i) { return double(gsh[i]); }, Tolerance::abs(1e-6 * double(N), 1e-5));
  if (ok && ok2) c.time("bias_gelu", "8192x8192", 8.0 * double(M * N) + 4.0 * double(N + M), spindle, hand);
}

}  // namespace parity
