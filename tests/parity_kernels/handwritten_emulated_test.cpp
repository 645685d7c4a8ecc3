// Every hand-written kernel of bench/parity/handwritten, run on the host
// (cuda_host_emulation.h: a thread per CUDA thread, real barriers and warp
// meetings) at small shapes that reach its paths, against the
// double-precision references of bench/references.cpp (the samples) and
// bench/parity/parity_references.cpp (the new kernels), with gpu_check's
// tolerances. On a GPU the parity benchmark only compares them with the
// Spindle kernels; this finds their own bugs without one. Outputs start as
// NaN (0xFF bytes). The host's expf and tanhf are not the GPU's, so the
// transcendental kernels get the tolerances of a reference, not bits.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "compare.hpp"
#include "emulated_kernels.h"
#include "host_data.hpp"
#include "parity_references.hpp"
#include "references.hpp"

namespace parity {
namespace {

using Vec = std::vector<double>;

class HandwrittenEmulated : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = (uint64_t(std::random_device{}()) << 32) | std::random_device{}();
    if (const char* s = std::getenv("SPINDLE_TEST_SEED")) seed_ = std::strtoull(s, nullptr, 0);
    rng_.s = seed_;
  }
  // Fails the test with the comparison's worst element.
  void expect(const std::string& what, const Vec& got, const Vec& want, const Tolerance& tol) {
    ASSERT_EQ(got.size(), want.size()) << what;
    const Comparison r = compare(
        got.size(), [&](size_t i) { return got[i]; }, [&](size_t i) { return want[i]; }, tol);
    EXPECT_TRUE(r.ok()) << what << ": " << r.bad << " of " << r.count << " out of tolerance (" << tol.text()
                        << "); worst at [" << r.worst << "]: got " << r.gotWorst << ", want " << r.wantWorst
                        << " (SPINDLE_TEST_SEED=" << seed_ << " repeats the inputs)";
  }
  std::vector<float> f32(size_t n, double lo, double hi) { return randomF32(rng_, n, lo, hi); }
  std::vector<uint16_t> bf16(size_t n, double lo, double hi) { return randomBf16(rng_, n, lo, hi); }
  std::vector<uint16_t> f16(size_t n, double lo, double hi) { return randomF16(rng_, n, lo, hi); }
  uint64_t seed_ = 0;
  Rng rng_{0};
};

template <class T>
Vec doubles(const std::vector<T>& v) {
  return Vec(v.begin(), v.end());
}
Vec fromBf16s(const std::vector<uint16_t>& v) {
  Vec o(v.size());
  for (size_t i = 0; i < v.size(); ++i) o[i] = fromBf16(v[i]);
  return o;
}
Vec fromHalfs(const std::vector<uint16_t>& v) {
  Vec o(v.size());
  for (size_t i = 0; i < v.size(); ++i) o[i] = fromHalf(v[i]);
  return o;
}
std::vector<float> nans(size_t n) { return std::vector<float>(n, NAN); }
__nv_bfloat16* bf(std::vector<uint16_t>& v) { return reinterpret_cast<__nv_bfloat16*>(v.data()); }
__half* hf(std::vector<uint16_t>& v) { return reinterpret_cast<__half*>(v.data()); }
double redTol(int64_t n) { return 1e-5 * (1.0 + std::sqrt(double(n)) / 16.0); }
unsigned blocks(int64_t n, int64_t per) { return unsigned((n + per - 1) / per); }

TEST_F(HandwrittenEmulated, Axpy) {
  const int n = 4099;  // a partial last run
  auto x = f32(n, -1, 1), y = f32(n, -1, 1);
  const Vec want = bench::refAxpy(doubles(x), doubles(y), 0.75);
  parity_emu::launch({blocks(n, 1024)}, {256}, 0, [&] { axpy_f32(x.data(), y.data(), 0.75f, n); });
  expect("axpy f32", doubles(y), want, Tolerance::abs(1e-6, 1e-5));
  auto hx = f16(n, -1, 1), hy = f16(n, -1, 1);
  const Vec want16 = bench::refAxpy(fromHalfs(hx), fromHalfs(hy), 0.75);
  parity_emu::launch({blocks(n, 1024)}, {256}, 0, [&] { axpy_f16(hf(hx), hf(hy), 0.75f, n); });
  expect("axpy f16", fromHalfs(hy), want16, Tolerance::f16(1));
}

TEST_F(HandwrittenEmulated, RowKernelsWithStaticN) {
  const int64_t M = 3, N = 3000;  // two chunks per thread, the second partial
  auto x = f32(size_t(M * N), -4, 4);
  auto y = nans(size_t(M * N));
  parity_emu::launch({unsigned(M)}, {512}, 0, [&] { softmax(x.data(), y.data()); });
  expect("softmax", doubles(y), bench::refSoftmax(doubles(x), M, N), Tolerance::abs(1e-9, redTol(N)));

  auto w = f32(size_t(N), -1, 1), b = f32(size_t(N), -1, 1);
  y = nans(size_t(M * N));
  parity_emu::launch({unsigned(M)}, {512}, 0, [&] { layernorm(x.data(), w.data(), b.data(), y.data()); });
  expect("layernorm", doubles(y), bench::refLayernorm(doubles(x), doubles(w), doubles(b), M, N, 1e-5),
         Tolerance::abs(redTol(N), redTol(N)));

  auto hx = f16(size_t(M * N), -3, 3), hw = f16(size_t(N), 0.5, 1.5);
  std::vector<uint16_t> hy(size_t(M * N), 0xFFFF);
  parity_emu::launch({unsigned(M)}, {256}, 0, [&] { rmsnorm_f16(hf(hx), hf(hw), hf(hy)); });
  expect("rmsnorm_f16", fromHalfs(hy), bench::refRmsnorm(fromHalfs(hx), fromHalfs(hw), M, N, 1e-6),
         Tolerance::f16(1, 1e-5));

  y = nans(size_t(M * N));
  parity_emu::launch({unsigned(M)}, {256}, 0, [&] { scan(x.data(), y.data()); });
  expect("scan N=3000", doubles(y), bench::refScan(doubles(x), M, N), Tolerance::abs(1e-6 * double(N), 1e-5));
  // 40 tiles of 8 warps: 320 slots, two rounds of the slot scan.
  auto x2 = f32(40000, -1, 1);
  auto y2 = nans(40000);
  parity_emu::launch({1}, {256}, 0, [&] { scan_n40000(x2.data(), y2.data()); });
  expect("scan N=40000", doubles(y2), bench::refScan(doubles(x2), 1, 40000), Tolerance::abs(1e-6 * 40000, 1e-5));
}

TEST_F(HandwrittenEmulated, Matmul) {
  const int M = 256, N = 384, K = 64;  // K as compiled
  auto A = f32(size_t(M * K), -1, 1), B = f32(size_t(K * N), -1, 1);
  auto C = nans(size_t(M * N));
  parity_emu::launch({unsigned(N / 128), unsigned(M / 128)}, {256}, 0,
                     [&] { matmul(A.data(), B.data(), C.data(), M, N); });
  expect("matmul", doubles(C), bench::refMatmul(doubles(A), doubles(B), M, N, K), Tolerance::abs(1e-6 * K, 1e-5));
}

TEST_F(HandwrittenEmulated, TransposeAndScale) {
  const int M = 100, N = 132;  // not multiples of the 64 x 64 tile
  auto x = f32(size_t(M * N), -1, 1);
  auto y = nans(size_t(M * N));
  parity_emu::launch({blocks(N, 64), blocks(M, 64)}, {64, 8}, 0, [&] { transpose(x.data(), y.data(), M, N); });
  expect("transpose", doubles(y), bench::refTranspose(doubles(x), M, N), Tolerance::exact());
  y = nans(size_t(M * N));
  const dim3 grid{blocks(N, 128), blocks(M, 32)}, block{32, 8};
  parity_emu::launch(grid, block, 0, [&] { scale_rows(x.data(), y.data(), 1.5f, M, N); });
  expect("scale_rows", doubles(y), bench::refScaleStrided(doubles(x), M, N, N, 1, 1.5), Tolerance::abs(1e-6, 1e-6));
  // x as the transpose of an [N, M] matrix: strides (1, M).
  y = nans(size_t(M * N));
  parity_emu::launch(grid, block, 0, [&] { scale_gather(x.data(), y.data(), -0.5f, M, N, 1, M); });
  expect("scale_gather", doubles(y), bench::refScaleStrided(doubles(x), M, N, 1, M, -0.5), Tolerance::abs(1e-6, 1e-6));
}

TEST_F(HandwrittenEmulated, Histogram) {
  const int n = 2 * 8192 + 1001, bins = 100;  // two whole tiles and a partial one, over 2 persistent blocks
  const float lo = -0.5f, hi = 0.75f;
  auto x = f32(size_t(n), -0.7, 0.9);
  std::vector<int> h(bins);
  for (auto& c : h) c = int(rng_.below(1000));  // accumulated into
  std::vector<int64_t> start(h.begin(), h.end());
  Vec want(start.begin(), start.end());
  const float scale = float(bins) / (hi - lo);
  for (float v : x)
    if (v >= lo && v < hi) want[size_t(std::min(int((v - lo) * scale), bins - 1))] += 1;
  parity_emu::launch({2}, {256}, size_t(bins) * 4, [&] { histogram(x.data(), h.data(), lo, hi, n, bins); });
  expect("histogram", doubles(h), want, Tolerance::exact());
}

TEST_F(HandwrittenEmulated, BiasGeluAndRowNorms) {
  const int M = 3, N = 3000;
  auto x = f32(size_t(M * N), -3, 3), bias = f32(size_t(N), -1, 1);
  auto y = nans(size_t(M * N)), s = nans(size_t(M));
  parity_emu::launch({unsigned(M)}, {256}, 0, [&] { bias_gelu(x.data(), bias.data(), y.data(), s.data(), N); });
  Vec wy, ws;
  bench::refBiasGelu(doubles(x), doubles(bias), M, N, wy, ws);
  expect("bias_gelu y", doubles(y), wy, Tolerance::abs(1e-6, 1e-5));
  expect("bias_gelu rowsum", doubles(s), ws, Tolerance::abs(1e-6 * N, 1e-5));

  const int R = 20, C = 1000;  // 3 blocks of 8 rows, the last partial; a tail after the unrolled steps
  auto xr = f32(size_t(R * C), -1, 1);
  auto amax = nans(R), l2 = nans(R);
  parity_emu::launch({blocks(R, 8)}, {256}, 0, [&] { row_norms(xr.data(), amax.data(), l2.data(), R, C); });
  Vec wa, wl;
  bench::refRowNorms(doubles(xr), R, C, wa, wl);
  expect("row_norms amax", doubles(amax), wa, Tolerance::exact());
  expect("row_norms l2", doubles(l2), wl, Tolerance::abs(redTol(C), redTol(C)));
}

TEST_F(HandwrittenEmulated, FusedAddRmsnormAndActAndMul) {
  for (int H : {4096, 12288}) {  // blocks of 512, then of 1024 with two runs for some threads
    SCOPED_TRACE("H = " + std::to_string(H));
    const int M = 3;
    auto x = bf16(size_t(M * H), -2, 2), r = bf16(size_t(M * H), -3, 3), w = bf16(size_t(H), 0.5, 1.5);
    Vec wantX, wantR;
    bench::refFusedAddRmsnorm(fromBf16s(x), fromBf16s(r), fromBf16s(w), M, H, 1e-6, bench::roundBf16, wantX, wantR);
    parity_emu::launch({unsigned(M)}, {unsigned(std::min(H / 8, 1024))}, 0,
                       [&] { fused_add_rmsnorm(bf(x), bf(r), bf(w), 1e-6f, H); });
    expect("fused_add_rmsnorm residual", fromBf16s(r), wantR, Tolerance::exact());
    expect("fused_add_rmsnorm x", fromBf16s(x), wantX, Tolerance::bf16(2, 1e-5));
  }
  const int M = 2, D = 14336;  // 1792 runs over 1024 threads
  auto x = bf16(size_t(M * 2 * D), -5, 5);
  struct Activation {
    const char* name;
    void (*kernel)(const __nv_bfloat16*, __nv_bfloat16*, int);
    double (*ref)(double);
  };
  for (Activation a :
       {Activation{"silu", act_and_mul_silu, bench::actSilu}, Activation{"gelu", act_and_mul_gelu, bench::actGelu},
        Activation{"gelu_tanh", act_and_mul_gelu_tanh, bench::actGeluTanh}}) {
    std::vector<uint16_t> out(size_t(M * D), 0xFFFF);
    parity_emu::launch({unsigned(M)}, {1024}, 0, [&] { a.kernel(bf(x), bf(out), D); });
    // The activation is rounded to bf16 before the product (vLLM's
    // rounding, which the reference follows): an f32 activation a few ulps
    // off may round to the other neighbour, a step of 2^-8, so the result
    // may be 2 bf16 ulps from the reference. And gelu's 1 + erf(v / sqrt(2))
    // and gelu_tanh's 1 + tanh(...) lose their digits in f32 for v far below
    // 0 (the kernels' formula, vLLM's): about |v| 2^-23 absolute where the
    // result is near 0, so an atol of 1e-6 for |v| <= 5 (gpu_check allows
    // 2e-3 + 1.6e-2 relative).
    expect(std::string("act_and_mul ") + a.name, fromBf16s(out),
           bench::refActAndMul(fromBf16s(x), M, D, a.ref, bench::roundBf16), Tolerance::bf16(2, 1e-5, 1e-6));
  }
}

TEST_F(HandwrittenEmulated, RotaryEmbedding) {
  for (int ROT : {128, 64}) {  // full and partial rotary
    for (bool neox : {true, false}) {
      SCOPED_TRACE("ROT = " + std::to_string(ROT) + (neox ? ", GPT-NeoX" : ", GPT-J"));
      const int NT = 3, NH = 4, NKV = 2, HS = 128, W = (NH + 2 * NKV) * HS, MAXPOS = 50;
      auto qkv = bf16(size_t(NT * W), -2, 2), cache = bf16(size_t(MAXPOS * ROT), -1, 1);
      std::vector<long long> pos(NT);
      std::vector<int64_t> pos64(NT);
      for (int t = 0; t < NT; ++t) pos64[size_t(t)] = pos[size_t(t)] = rng_.below(MAXPOS);
      Vec want = fromBf16s(qkv);
      bench::refRotaryEmbedding(want, pos64, fromBf16s(cache), NT, NH, NKV, HS, ROT, neox, bench::roundBf16);
      auto kernel = neox ? rotary_embedding_neox : rotary_embedding_gptj;
      parity_emu::launch({unsigned(NT)}, {unsigned(std::min(NH * ROT / 2, 512))}, 0,
                         [&] { kernel(pos.data(), bf(qkv), bf(qkv) + NH * HS, bf(cache), W, NH, NKV, HS, ROT); });
      // Rotated values within one bf16 rounding; the rest (dims past ROT, v) bit for bit.
      expect("rotary_embedding", fromBf16s(qkv), want, Tolerance::bf16(1));
      Vec got = fromBf16s(qkv), kept, keptWant;
      for (size_t i = 0; i < got.size(); ++i)
        if (int(i % W) / HS >= NH + NKV || int(i % W) % HS >= ROT) kept.push_back(got[i]), keptWant.push_back(want[i]);
      expect("rotary_embedding untouched", kept, keptWant, Tolerance::exact());
    }
  }
}

TEST_F(HandwrittenEmulated, Adamw) {
  const int N = 5000;  // 10 blocks of 512, the last partial
  auto p16 = bf16(N, -1, 1), g16 = bf16(N, -1, 1);
  std::vector<float> master(N), m = f32(N, -1e-2, 1e-2), v = f32(N, 0, 1e-4), grads(N);
  for (int i = 0; i < N; ++i) master[size_t(i)] = fromBf16(p16[size_t(i)]), grads[size_t(i)] = fromBf16(g16[size_t(i)]);
  const bench::AdamwScalars s{3e-4f, 0.9f, 0.95f,      1.0f - 0.9f * 0.9f * 0.9f, 1.0f - 0.95f * 0.95f * 0.95f, 1e-8f,
                              0.1f,  0.5f, 0x5eed1234u};
  std::vector<float> wm = m, wv = v, wp;
  std::vector<uint16_t> rounded;
  bench::refAdamw(master, grads, wm, wv, s, 512, wp, rounded);
  parity_emu::launch({blocks(N, 512)}, {512}, 0, [&] {
    adamw(bf(p16), master.data(), bf(g16), m.data(), v.data(), N, s.lr, s.beta1, s.beta2, s.beta1Correction,
          s.beta2Correction, s.eps, s.weightDecay, s.gradScale, s.seed);
  });
  expect("adamw m", doubles(m), doubles(wm), Tolerance::abs(0, 3e-7));
  expect("adamw v", doubles(v), doubles(wv), Tolerance::abs(0, 3e-7));
  expect("adamw master", doubles(master), doubles(wp), Tolerance::abs(1e-9, 1e-6));
  // llm.c's stochastic rounding: the same rule on the same p gives the same bf16.
  std::vector<uint16_t> got(p16.begin(), p16.end());
  expect("adamw params", fromBf16s(got), fromBf16s(rounded), Tolerance::exact());
}

TEST_F(HandwrittenEmulated, QuantPerToken) {
  const int M = 4, N = 4096;  // blocks of 512
  auto x = bf16(size_t(M * N), -3, 3);
  for (int j = 0; j < N; ++j) x[size_t(N + j)] = 0;  // a row of zeros: the minimum scale
  const Vec xd = fromBf16s(x);
  const std::vector<float> xf(xd.begin(), xd.end());  // exact: bf16 values
  for (bool int8 : {false, true}) {
    SCOPED_TRACE(int8 ? "int8" : "fp8");
    std::vector<unsigned char> y(size_t(M * N), 0xA5);
    std::vector<float> scales = nans(M);
    parity_emu::launch({unsigned(M)}, {512}, 0, [&] {
      if (int8) quant_per_token_int8(bf(x), y.data(), scales.data(), N);
      else quant_per_token_fp8(bf(x), y.data(), scales.data(), N);
    });
    Vec wantY, wantScales, gotY(y.size());
    bench::refQuantPerToken(xf, M, N, int8, float(1.0 / (448.0 * 512.0)), wantY, wantScales);
    for (size_t i = 0; i < y.size(); ++i) gotY[i] = int8 ? double(int8_t(y[i])) : bench::fromF8e4m3(y[i]);
    expect("quant_per_token y", gotY, wantY, Tolerance::exact());
    expect("quant_per_token scales", doubles(scales), wantScales, Tolerance::exact());
  }
}

TEST_F(HandwrittenEmulated, EncoderForward) {
  const int B = 2, T = 3, C = 24, V = 10, MAXT = 4, BT = B * T;
  std::vector<int32_t> tokens(BT);
  for (auto& t : tokens) t = int32_t(rng_.below(V));
  auto wte = bf16(size_t(V * C), -2, 2), wpe = bf16(size_t(MAXT * C), -2, 2);
  std::vector<uint16_t> out(size_t(BT * C), 0xFFFF);
  parity_emu::launch({blocks(BT * C / 8, 256)}, {256}, 0,
                     [&] { encoder_forward(tokens.data(), bf(wte), bf(wpe), bf(out), BT, T, C); });
  expect("encoder_forward", fromBf16s(out), refEncoderForward(tokens, fromBf16s(wte), fromBf16s(wpe), B, T, C),
         Tolerance::exact());
}

TEST_F(HandwrittenEmulated, CrossentropyBackward) {
  struct Shape {
    int BT, V, P;
  };
  // 8197: 8 threads take a second run, one of them partial; 100: most threads have no column.
  for (Shape s : {Shape{2, 8197, 8200}, Shape{3, 100, 104}}) {
    SCOPED_TRACE("V = " + std::to_string(s.V));
    auto logits = bf16(size_t(s.BT * s.P), -6, 6);
    std::vector<int32_t> targets(size_t(s.BT));
    for (auto& t : targets) t = int32_t(rng_.below(s.V));
    // The row's largest logit in its last (partial) column, and in odd rows
    // also one at random: a term left out of the max or the sum shows.
    for (int r = 0; r < s.BT; ++r) {
      logits[size_t(r * s.P + s.V - 1)] = toBf16(7.0f);
      if (r % 2) logits[size_t(r * s.P + rng_.below(s.V))] = toBf16(6.5f);
    }
    std::vector<uint16_t> grad(size_t(s.BT * s.P), 0xFFFF);
    const float dloss = 1.0f / float(s.BT);
    parity_emu::launch({unsigned(s.BT)}, {1024}, 0,
                       [&] { crossentropy_backward(bf(logits), targets.data(), dloss, bf(grad), s.V, s.P); });
    const Vec x = fromBf16s(logits), g = fromBf16s(grad);
    Vec got, want(size_t(s.V)), wantAll;
    int padding = 0;
    for (int r = 0; r < s.BT; ++r) {
      refCrossentropyBackwardRow(&x[size_t(r * s.P)], s.V, targets[size_t(r)], dloss, want.data());
      wantAll.insert(wantAll.end(), want.begin(), want.end());
      got.insert(got.end(), g.begin() + r * s.P, g.begin() + r * s.P + s.V);
      for (int j = s.V; j < s.P; ++j) padding += grad[size_t(r * s.P + j)] != 0xFFFF;
    }
    expect("crossentropy_backward", got, wantAll, Tolerance::bf16(0.5, 4e-5));
    EXPECT_EQ(padding, 0) << "padding columns written";
  }
}

TEST_F(HandwrittenEmulated, AttentionSoftmax) {
  for (int T : {296, 40}) {  // lanes with two runs; rows shorter than a warp's runs
    SCOPED_TRACE("T = " + std::to_string(T));
    const int BH = 2, rows = BH * T;
    auto att = bf16(size_t(rows * T), -16, 16);
    for (int r = 0; r < rows; r += 2) att[size_t(r * T + r % T)] = toBf16(17.0f);  // the diagonal as the max
    std::vector<uint16_t> out(size_t(rows * T), 0xFFFF);
    parity_emu::launch({blocks(rows, 8)}, {256}, 0, [&] { attention_softmax(bf(att), 0.125f, bf(out), rows, T); });
    const Vec x = fromBf16s(att);
    Vec want(size_t(rows * T));
    for (int r = 0; r < rows; ++r) refAttentionSoftmaxRow(&x[size_t(r * T)], T, r % T, 0.125, &want[size_t(r * T)]);
    expect("attention_softmax", fromBf16s(out), want, Tolerance::bf16(0.5, 4e-5));
  }
}

TEST_F(HandwrittenEmulated, L2FlushReadsWithoutWriting) {
  std::vector<float4> buf(5000, float4{0, 0, 0, 0});
  float sink = 7.0f;
  parity_emu::launch({3}, {256}, 0, [&] { l2_flush(buf.data(), int(buf.size()), &sink); });
  EXPECT_EQ(sink, 7.0f);
}

}  // namespace
}  // namespace parity
