// Row-wise samples and matmul: softmax, layernorm, rmsnorm_f16, row_norms,
// scan, matmul. Timing shapes and bytes are gpu_check's. The hand-written
// kernels of the samples that make N (or K) static get it as -DN=... (-DK).
#include <climits>

#include "cases.hpp"

namespace parity {

using spindle::ScalarType;

namespace {

// gpu_check's tolerance for row reductions of n terms in f32, here between
// two summation orders.
double redTol(int64_t n) { return 1e-5 * (1.0 + std::sqrt(double(n)) / 16.0); }

std::string define(const char* name, int64_t v) { return std::string(name) + "=" + std::to_string(v); }

}  // namespace

void caseSoftmax(Ctx& c) {
  const int64_t M = 8192, N = 8192;
  if (!require(c, "softmax", M * N < INT_MAX && N % 4 == 0, "M * N < 2^31 and N % 4 == 0")) return;
  spindle::Kernel k = c.spindle("samples/softmax.spn", "softmax");
  HandKernel h = c.hand("softmax.cu", "softmax", {define("N", N)});
  auto x = c.upload(randomF32(c.rng, size_t(M * N), -4, 4));
  auto ys = c.filled(size_t(M * N) * 4), yh = c.filled(size_t(M * N) * 4);
  auto spindle = [&] { c.launch(k, {f32Arg(x, {M, N}), f32Arg(ys, {M, N})}); };
  auto hand = [&] { h(Dim3{unsigned(M)}, Dim3{512}, 0, x.data(), yh.data()); };
  spindle();
  hand();
  const auto gs = c.download<float>(ys, size_t(M * N)), gh = c.download<float>(yh, size_t(M * N));
  if (c.check(
          "softmax", "y", "8192x8192", gs.size(), [&](size_t i) { return double(gs[i]); },
          [&](size_t i) { return double(gh[i]); }, Tolerance::abs(1e-9, redTol(N))))
    c.time("softmax", "8192x8192", 8.0 * double(M * N), spindle, hand);
}

void caseLayernorm(Ctx& c) {
  const int64_t M = 8192, N = 8192;
  if (!require(c, "layernorm", M * N < INT_MAX && N % 4 == 0, "M * N < 2^31 and N % 4 == 0")) return;
  spindle::Kernel k = c.spindle("samples/layernorm.spn", "layernorm");
  HandKernel h = c.hand("layernorm.cu", "layernorm", {define("N", N)});
  auto x = c.upload(randomF32(c.rng, size_t(M * N), -2, 3));
  auto w = c.upload(randomF32(c.rng, size_t(N), -1, 1)), b = c.upload(randomF32(c.rng, size_t(N), -1, 1));
  auto ys = c.filled(size_t(M * N) * 4), yh = c.filled(size_t(M * N) * 4);
  auto spindle = [&] { c.launch(k, {f32Arg(x, {M, N}), f32Arg(w, {N}), f32Arg(b, {N}), f32Arg(ys, {M, N})}); };
  auto hand = [&] { h(Dim3{unsigned(M)}, Dim3{512}, 0, x.data(), w.data(), b.data(), yh.data()); };
  spindle();
  hand();
  const auto gs = c.download<float>(ys, size_t(M * N)), gh = c.download<float>(yh, size_t(M * N));
  if (c.check(
          "layernorm", "y", "8192x8192", gs.size(), [&](size_t i) { return double(gs[i]); },
          [&](size_t i) { return double(gh[i]); }, Tolerance::abs(redTol(N), redTol(N))))
    c.time("layernorm", "8192x8192", 8.0 * double(M * N) + 8.0 * double(N), spindle, hand);
}

void caseRmsnormF16(Ctx& c) {
  const int64_t M = 8192, N = 8192;
  if (!require(c, "rmsnorm_f16", M * N < INT_MAX && N % 8 == 0, "M * N < 2^31 and N % 8 == 0")) return;
  spindle::Kernel k = c.spindle("samples/rmsnorm_f16.spn", "rmsnorm_f16");
  HandKernel h = c.hand("rmsnorm_f16.cu", "rmsnorm_f16", {define("N", N)});
  auto x = c.upload(randomF16(c.rng, size_t(M * N), -3, 3));
  auto w = c.upload(randomF16(c.rng, size_t(N), 0.5, 1.5));
  auto ys = c.filled(size_t(M * N) * 2), yh = c.filled(size_t(M * N) * 2);
  auto spindle = [&] {
    c.launch(k, {typed(x.data(), ScalarType::F16, {M, N}), typed(w.data(), ScalarType::F16, {N}),
                 typed(ys.data(), ScalarType::F16, {M, N})});
  };
  auto hand = [&] { h(Dim3{unsigned(M)}, Dim3{256}, 0, x.data(), w.data(), yh.data()); };
  spindle();
  hand();
  const auto gs = c.download<uint16_t>(ys, size_t(M * N)), gh = c.download<uint16_t>(yh, size_t(M * N));
  // Both round an f32 value to f16; the f32 values differ by the sum's order.
  if (c.check(
          "rmsnorm_f16", "y", "8192x8192", gs.size(), [&](size_t i) { return double(fromHalf(gs[i])); },
          [&](size_t i) { return double(fromHalf(gh[i])); }, Tolerance::f16(1)))
    c.time("rmsnorm_f16", "8192x8192", 4.0 * double(M * N) + 2.0 * double(N), spindle, hand);
}

void caseRowNorms(Ctx& c) {
  const int64_t M = 65536, N = 1024;
  if (!require(c, "row_norms", M * N < INT_MAX && N % 4 == 0, "M * N < 2^31 and N % 4 == 0")) return;
  spindle::Kernel k = c.spindle("samples/row_norms.spn", "row_norms");
  HandKernel h = c.hand("row_norms.cu", "row_norms");
  auto x = c.upload(randomF32(c.rng, size_t(M * N), -1, 1));
  auto as = c.filled(size_t(M) * 4), ah = c.filled(size_t(M) * 4);
  auto ls = c.filled(size_t(M) * 4), lh = c.filled(size_t(M) * 4);
  auto spindle = [&] { c.launch(k, {f32Arg(x, {M, N}), f32Arg(as, {M}), f32Arg(ls, {M})}); };
  auto hand = [&] { h(Dim3{unsigned((M + 7) / 8)}, Dim3{256}, 0, x.data(), ah.data(), lh.data(), int(M), int(N)); };
  spindle();
  hand();
  const auto gas = c.download<float>(as, size_t(M)), gah = c.download<float>(ah, size_t(M));
  const auto gls = c.download<float>(ls, size_t(M)), glh = c.download<float>(lh, size_t(M));
  const bool ok = c.check(
      "row_norms", "amax", "65536x1024", gas.size(), [&](size_t i) { return double(gas[i]); },
      [&](size_t i) { return double(gah[i]); }, Tolerance::exact());
  const bool ok2 = c.check(
      "row_norms", "l2", "65536x1024", gls.size(), [&](size_t i) { return double(gls[i]); },
      [&](size_t i) { return double(glh[i]); }, Tolerance::abs(redTol(N), redTol(N)));
  if (ok && ok2) c.time("row_norms", "65536x1024", 4.0 * double(M * N) + 8.0 * double(M), spindle, hand);
}

void caseScan(Ctx& c) {
  const int64_t M = 8192, N = 8192;
  if (!require(c, "scan", M * N < INT_MAX && N % 4 == 0, "M * N < 2^31 and N % 4 == 0")) return;
  spindle::Kernel k = c.spindle("samples/scan.spn", "scan");
  HandKernel h = c.hand("scan.cu", "scan", {define("N", N)});
  auto x = c.upload(randomF32(c.rng, size_t(M * N), -1, 1));
  auto ys = c.filled(size_t(M * N) * 4), yh = c.filled(size_t(M * N) * 4);
  auto spindle = [&] { c.launch(k, {f32Arg(x, {M, N}), f32Arg(ys, {M, N})}); };
  auto hand = [&] { h(Dim3{unsigned(M)}, Dim3{256}, 0, x.data(), yh.data()); };
  spindle();
  hand();
  const auto gs = c.download<float>(ys, size_t(M * N)), gh = c.download<float>(yh, size_t(M * N));
  // Prefix sums of up to 8192 values in [-1, 1], in two orders: gpu_check's 1e-6 * N.
  if (c.check(
          "scan", "y", "8192x8192", gs.size(), [&](size_t i) { return double(gs[i]); },
          [&](size_t i) { return double(gh[i]); }, Tolerance::abs(1e-6 * double(N), 1e-5)))
    c.time("scan", "8192x8192", 8.0 * double(M * N), spindle, hand);
}

void caseMatmul(Ctx& c) {
  const int64_t M = 4096, N = 4096, K = 4096;
  if (!require(c, "matmul", M % 128 == 0 && N % 128 == 0 && K % 8 == 0 && M * K < INT_MAX && K * N < INT_MAX,
               "M, N multiples of 128, K of 8, and 32-bit indices"))
    return;
  spindle::Kernel k = c.spindle("samples/matmul.spn", "matmul");
  HandKernel h = c.hand("matmul.cu", "matmul", {define("K", K)});
  auto A = c.upload(randomF32(c.rng, size_t(M * K), -1, 1)), B = c.upload(randomF32(c.rng, size_t(K * N), -1, 1));
  auto Cs = c.filled(size_t(M * N) * 4), Ch = c.filled(size_t(M * N) * 4);
  auto spindle = [&] { c.launch(k, {f32Arg(A, {M, K}), f32Arg(B, {K, N}), f32Arg(Cs, {M, N})}); };
  auto hand = [&] {
    h(Dim3{unsigned(N / 128), unsigned(M / 128)}, Dim3{256}, 0, A.data(), B.data(), Ch.data(), int(M), int(N));
  };
  spindle();
  hand();
  const auto gs = c.download<float>(Cs, size_t(M * N)), gh = c.download<float>(Ch, size_t(M * N));
  // Dot products of 4096 terms in [-1, 1]: gpu_check's 1e-6 * K.
  if (c.check(
          "matmul", "C", "4096^3", gs.size(), [&](size_t i) { return double(gs[i]); },
          [&](size_t i) { return double(gh[i]); }, Tolerance::abs(1e-6 * double(K), 1e-5)))
    c.time("matmul", "4096^3", 4.0 * double(M * K + K * N + M * N), spindle, hand,
           2.0 * double(M) * double(N) * double(K));
}

}  // namespace parity
