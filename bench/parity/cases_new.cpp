// The kernels of bench/parity/kernels/: encoder_forward, crossentropy_backward,
// attention_softmax at GPT-2's sizes. Besides Spindle against hand-written,
// both are compared with the double-precision references of
// parity_references.cpp: every element for encoder_forward, 64 rows (the
// first, the last and 62 drawn at random) for the two softmax kernels.
//
// Tolerances against the reference: encoder_forward exact; the softmax
// kernels round an f32 value f to bf16, with |f - want| <= 2e-5 |want| (f32
// exp and sums of at most a few thousand terms per thread), so
// |got - want| <= 0.5 bf16 ulp + 4e-5 |want|. Spindle against hand-written:
// 1 bf16 ulp + 1e-5 relative (two roundings of nearly equal f32 values).
#include <climits>

#include "cases.hpp"
#include "parity_references.hpp"

namespace parity {

using spindle::ScalarType;

namespace {

// The rows the CPU reference checks: the first, the last, and 62 at random.
std::vector<int64_t> sampledRows(Rng& rng, int64_t rows) {
  std::vector<int64_t> r = {0, rows - 1};
  for (int k = 0; k < 62; ++k) r.push_back(rng.below(rows));
  return r;
}

}  // namespace

void caseEncoderForward(Ctx& c) {
  spindle::Kernel k = c.spindle("bench/parity/kernels/encoder_forward.spn", "encoder_forward");
  HandKernel h = c.hand("encoder_forward.cu", "encoder_forward");
  const int64_t V = 50257, MAXT = 1024;
  struct Shape {
    int64_t B, T, C;
    const char* model;
  };
  for (Shape s : {Shape{8, 1024, 768, "gpt2"}, Shape{8, 1024, 1600, "gpt2-xl"}}) {
    const int64_t B = s.B, T = s.T, C = s.C, BT = B * T;
    if (!require(c, "encoder_forward", C % 8 == 0 && V * C < INT_MAX && BT * C < INT_MAX,
                 "C % 8 == 0 and 32-bit indices"))
      continue;
    std::vector<int32_t> tokens(static_cast<size_t>(BT));
    for (auto& t : tokens) t = int32_t(c.rng.below(V));
    const auto wte = randomBf16(c.rng, size_t(V * C), -1, 1), wpe = randomBf16(c.rng, size_t(MAXT * C), -1, 1);
    auto dtok = c.upload(tokens), dwte = c.upload(wte), dwpe = c.upload(wpe);
    const size_t n = size_t(BT * C);
    auto os = c.filled(n * 2), oh = c.filled(n * 2);
    auto spindle = [&] {
      c.launch(k, {typed(dtok.data(), ScalarType::I32, {B, T}), typed(dwte.data(), ScalarType::BF16, {V, C}),
                   typed(dwpe.data(), ScalarType::BF16, {MAXT, C}), typed(os.data(), ScalarType::BF16, {B, T, C})});
    };
    auto hand = [&] {
      h(Dim3{unsigned((BT * (C / 8) + 255) / 256)}, Dim3{256}, 0, dtok.data(), dwte.data(), dwpe.data(), oh.data(),
        int(BT), int(T), int(C));
    };
    spindle();
    hand();
    const std::string shape = shapeText({B, T, C}) + " bf16 " + s.model;
    const auto gs = c.download<uint16_t>(os, n), gh = c.download<uint16_t>(oh, n);
    auto want = [&](size_t i) {
      const size_t bt = i / size_t(C), ch = i % size_t(C), t = bt % size_t(T);
      return parity::refEncoderElement(fromBf16(wte[size_t(tokens[bt]) * size_t(C) + ch]),
                                       fromBf16(wpe[t * size_t(C) + ch]));
    };
    bool ok = c.check(
        "encoder_forward", "out (spindle vs reference)", shape, n, [&](size_t i) { return double(fromBf16(gs[i])); },
        want, Tolerance::exact());
    ok &= c.check(
        "encoder_forward", "out (hand-written vs reference)", shape, n,
        [&](size_t i) { return double(fromBf16(gh[i])); }, want, Tolerance::exact());
    // Bytes: out written, one row of wte gathered per token, wpe's T rows, the tokens.
    if (ok)
      c.time("encoder_forward", shape, 4.0 * double(BT * C) + 2.0 * double(T * C) + 4.0 * double(BT), spindle, hand);
  }
}

// GPT-2 124M's classifier at B = 8, T = 1024: 8192 rows of V = 50257 logits
// at llm.c's padded pitch 50304; out of place (llm.c writes in place).
void caseCrossentropyBackward(Ctx& c) {
  const int64_t BT = 8192, V = 50257, P = 50304;
  if (!require(c, "crossentropy_backward", P % 8 == 0 && BT * P < INT_MAX, "P % 8 == 0 and BT * P < 2^31")) return;
  spindle::Kernel k = c.spindle("bench/parity/kernels/crossentropy_backward.spn", "crossentropy_backward");
  HandKernel h = c.hand("crossentropy_backward.cu", "crossentropy_backward");
  const size_t n = size_t(BT * P);
  const auto logits = randomBf16(c.rng, n, -8, 8);
  std::vector<int32_t> targets(static_cast<size_t>(BT));
  for (auto& t : targets) t = int32_t(c.rng.below(V));
  const float dloss = 1.0f / float(BT);
  auto dl = c.upload(logits), dt = c.upload(targets);
  auto gs = c.filled(n * 2), gh = c.filled(n * 2);
  auto spindle = [&] {
    c.launch(k, {spindle::tensor(dl.data(), ScalarType::BF16, {BT, V}, {P, 1}), typed(dt.data(), ScalarType::I32, {BT}),
                 spindle::scalar(dloss), spindle::tensor(gs.data(), ScalarType::BF16, {BT, V}, {P, 1})});
  };
  auto hand = [&] { h(Dim3{unsigned(BT)}, Dim3{1024}, 0, dl.data(), dt.data(), dloss, gh.data(), int(V), int(P)); };
  spindle();
  hand();
  const std::string shape = shapeText({BT, V}) + " bf16 pitch " + std::to_string(P);
  const auto os = c.download<uint16_t>(gs, n), oh = c.download<uint16_t>(gh, n);
  // Columns of the rows only; the padding is checked apart.
  auto column = [&](size_t i) { return size_t(i / size_t(V)) * size_t(P) + i % size_t(V); };
  bool ok = c.check(
      "crossentropy_backward", "dlogits (spindle vs hand-written)", shape, size_t(BT * V),
      [&](size_t i) { return double(fromBf16(os[column(i)])); },
      [&](size_t i) { return double(fromBf16(oh[column(i)])); }, Tolerance::bf16(1, 1e-5));
  // Padding columns must keep their poison on both sides.
  const size_t pad = size_t(P - V);
  auto padding = [&](size_t i) { return size_t(i / pad) * size_t(P) + size_t(V) + i % pad; };
  ok &= c.check(
      "crossentropy_backward", "padding written (spindle, hand-written)", shape, size_t(BT) * pad,
      [&](size_t i) { return double(os[padding(i)] != 0xFFFF) + 2.0 * double(oh[padding(i)] != 0xFFFF); },
      [](size_t) { return 0.0; }, Tolerance::exact());
  const auto rows = sampledRows(c.rng, BT);
  std::vector<double> x(static_cast<size_t>(V)), want(rows.size() * size_t(V));
  for (size_t r = 0; r < rows.size(); ++r) {
    for (int64_t j = 0; j < V; ++j) x[size_t(j)] = fromBf16(logits[size_t(rows[r] * P + j)]);
    parity::refCrossentropyBackwardRow(x.data(), V, targets[size_t(rows[r])], dloss, &want[r * size_t(V)]);
  }
  auto sampled = [&](const std::vector<uint16_t>& out) {
    return [o = &out, r = &rows, V, P](size_t i) {
      return double(fromBf16((*o)[size_t((*r)[i / size_t(V)] * P + int64_t(i % size_t(V)))]));
    };
  };
  ok &= c.check(
      "crossentropy_backward", "dlogits (spindle vs reference, 64 rows)", shape, want.size(), sampled(os),
      [&](size_t i) { return want[i]; }, Tolerance::bf16(0.5, 4e-5));
  ok &= c.check(
      "crossentropy_backward", "dlogits (hand-written vs reference, 64 rows)", shape, want.size(), sampled(oh),
      [&](size_t i) { return want[i]; }, Tolerance::bf16(0.5, 4e-5));
  // Bytes: logits read once (the second pass is assumed to hit L2), dlogits written once.
  if (ok) c.time("crossentropy_backward", shape, 4.0 * double(BT * V) + 4.0 * double(BT), spindle, hand);
}

// GPT-2 124M's attention at B = 8: 12 heads, T = 1024, head size 64.
void caseAttentionSoftmax(Ctx& c) {
  const int64_t B = 8, NH = 12, T = 1024, BH = B * NH;
  const float scale = 0.125f;  // 1 / sqrt(64)
  if (!require(c, "attention_softmax", T % 8 == 0 && BH * T * T < INT_MAX, "T % 8 == 0 and BH * T * T < 2^31")) return;
  spindle::Kernel k = c.spindle("bench/parity/kernels/attention_softmax.spn", "attention_softmax");
  HandKernel h = c.hand("attention_softmax.cu", "attention_softmax");
  const size_t n = size_t(BH * T * T);
  const auto att = randomBf16(c.rng, n, -16, 16);
  auto da = c.upload(att);
  auto os = c.filled(n * 2), oh = c.filled(n * 2);
  auto spindle = [&] {
    c.launch(k, {typed(da.data(), ScalarType::BF16, {BH, T, T}), spindle::scalar(scale),
                 typed(os.data(), ScalarType::BF16, {BH, T, T})});
  };
  auto hand = [&] {
    h(Dim3{unsigned((BH * T + 7) / 8)}, Dim3{256}, 0, da.data(), scale, oh.data(), int(BH * T), int(T));
  };
  spindle();
  hand();
  const std::string shape = shapeText({B, NH, T, T}) + " bf16";
  const auto gs = c.download<uint16_t>(os, n), gh = c.download<uint16_t>(oh, n);
  bool ok = c.check(
      "attention_softmax", "out (spindle vs hand-written)", shape, n, [&](size_t i) { return double(fromBf16(gs[i])); },
      [&](size_t i) { return double(fromBf16(gh[i])); }, Tolerance::bf16(1, 1e-5));
  const auto rows = sampledRows(c.rng, BH * T);
  std::vector<double> x(static_cast<size_t>(T)), want(rows.size() * size_t(T));
  for (size_t r = 0; r < rows.size(); ++r) {
    for (int64_t j = 0; j < T; ++j) x[size_t(j)] = fromBf16(att[size_t(rows[r] * T + j)]);
    parity::refAttentionSoftmaxRow(x.data(), T, rows[r] % T, scale, &want[r * size_t(T)]);
  }
  auto sampled = [&](const std::vector<uint16_t>& out) {
    return [o = &out, r = &rows, T](size_t i) {
      return double(fromBf16((*o)[size_t((*r)[i / size_t(T)] * T) + i % size_t(T)]));
    };
  };
  ok &= c.check(
      "attention_softmax", "out (spindle vs reference, 64 rows)", shape, want.size(), sampled(gs),
      [&](size_t i) { return want[i]; }, Tolerance::bf16(0.5, 4e-5));
  ok &= c.check(
      "attention_softmax", "out (hand-written vs reference, 64 rows)", shape, want.size(), sampled(gh),
      [&](size_t i) { return want[i]; }, Tolerance::bf16(0.5, 4e-5));
  // Bytes: the unmasked scores read once (T (T + 1) / 2 per head), every weight written.
  if (ok) c.time("attention_softmax", shape, double(BH) * (double(T * (T + 1)) + 2.0 * double(T * T)), spindle, hand);
}

}  // namespace parity
