// The LLM samples: fused_add_rmsnorm, act_and_mul (silu), rotary_embedding
// (GPT-NeoX), adamw, quant_per_token. Timing shapes and bytes are
// gpu_check's. The in-place kernels get one copy of their in-place tensors
// per side, so both start the check from the same values.
#include <climits>

#include "cases.hpp"

namespace parity {

using spindle::ScalarType;

void caseFusedAddRmsnorm(Ctx& c) {
  spindle::Kernel k = c.spindle("samples/fused_add_rmsnorm.spn", "fused_add_rmsnorm");
  HandKernel h = c.hand("fused_add_rmsnorm.cu", "fused_add_rmsnorm");
  const float eps = 1e-6f;
  for (auto [M, H] : {std::pair<int64_t, int64_t>{8192, 4096}, {4096, 8192}}) {
    const int64_t block = std::min<int64_t>((H + 7) / 8, 1024);
    if (!require(c, "fused_add_rmsnorm", H % 8 == 0 && block % 32 == 0 && M * H < INT_MAX,
                 "H % 8 == 0, a block of whole warps and M * H < 2^31"))
      continue;
    const size_t n = size_t(M * H);
    const auto x0 = randomBf16(c.rng, n, -2, 2), r0 = randomBf16(c.rng, n, -3, 3);
    auto w = c.upload(randomBf16(c.rng, size_t(H), 0.5, 1.5));
    auto xs = c.upload(x0), rs = c.upload(r0), xh = c.upload(x0), rh = c.upload(r0);
    auto spindle = [&] {
      c.launch(k, {typed(xs.data(), ScalarType::BF16, {M, H}), typed(rs.data(), ScalarType::BF16, {M, H}),
                   typed(w.data(), ScalarType::BF16, {H}), spindle::scalar(eps)});
    };
    auto hand = [&] { h(Dim3{unsigned(M)}, Dim3{unsigned(block)}, 0, xh.data(), rh.data(), w.data(), eps, int(H)); };
    spindle();
    hand();
    const std::string shape = shapeText({M, H}) + " bf16";
    const auto gxs = c.download<uint16_t>(xs, n), gxh = c.download<uint16_t>(xh, n);
    const auto grs = c.download<uint16_t>(rs, n), grh = c.download<uint16_t>(rh, n);
    // residual = bf16(x + residual): the same rounding of the same sum on both sides.
    const bool ok = c.check(
        "fused_add_rmsnorm", "residual", shape, n, [&](size_t i) { return double(fromBf16(grs[i])); },
        [&](size_t i) { return double(fromBf16(grh[i])); }, Tolerance::exact());
    // x: rounded twice from values that differ by the sum's order.
    const bool ok2 = c.check(
        "fused_add_rmsnorm", "x", shape, n, [&](size_t i) { return double(fromBf16(gxs[i])); },
        [&](size_t i) { return double(fromBf16(gxh[i])); }, Tolerance::bf16(2));
    if (ok && ok2) c.time("fused_add_rmsnorm", shape, 8.0 * double(M * H) + 2.0 * double(H), spindle, hand);
  }
}

// Llama-3 8B's MLP at 4096 tokens, each activation (a kernel handle per
// activation on the Spindle side, as vLLM instantiates its template).
void caseActAndMul(Ctx& c) {
  const int64_t M = 4096, D = 14336;
  const int64_t block = std::min<int64_t>((D + 7) / 8, 1024);
  if (!require(c, "act_and_mul", D % 8 == 0 && block % 32 == 0 && M * 2 * D < INT_MAX,
               "D % 8 == 0, a block of whole warps and M * 2D < 2^31"))
    return;
  auto x = c.upload(randomBf16(c.rng, size_t(M * 2 * D), -5, 5));
  for (const char* act : {"silu", "gelu", "gelu_tanh"}) {
    spindle::Kernel k =
        c.spindle("samples/act_and_mul.spn", "act_and_mul", {{"ACT", spindle::ConstOverride::ofFunction(act)}});
    HandKernel h = c.hand("act_and_mul.cu", std::string("act_and_mul_") + act);
    auto os = c.filled(size_t(M * D) * 2), oh = c.filled(size_t(M * D) * 2);
    auto spindle = [&] {
      c.launch(k, {typed(x.data(), ScalarType::BF16, {M, 2 * D}), typed(os.data(), ScalarType::BF16, {M, D})});
    };
    auto hand = [&] { h(Dim3{unsigned(M)}, Dim3{unsigned(block)}, 0, x.data(), oh.data(), int(D)); };
    spindle();
    hand();
    const std::string shape = shapeText({M, D}) + " bf16 " + act;
    const auto gs = c.download<uint16_t>(os, size_t(M * D)), gh = c.download<uint16_t>(oh, size_t(M * D));
    // Two roundings (the activation, then the product): activations a few
    // f32 ulps apart (the compiler may contract either side's expression
    // differently) can round to neighbouring bf16 values, and gelu's and
    // gelu_tanh's 1 + erf / 1 + tanh lose their digits near 0 for v << 0.
    if (c.check(
            "act_and_mul", "out", shape, gs.size(), [&](size_t i) { return double(fromBf16(gs[i])); },
            [&](size_t i) { return double(fromBf16(gh[i])); }, Tolerance::bf16(2, 0, 1e-6)))
      c.time("act_and_mul", shape, 6.0 * double(M * D), spindle, hand);
  }
}

// A 4096-token prefill of Llama-3 8B (NH 32, NKV 8, HS = ROT = 128), q and k
// slices of one qkv buffer, positions 0 .. 4095, true cos/sin in the cache;
// the GPT-NeoX and the GPT-J layout (a kernel handle each on the Spindle side).
void caseRotaryEmbedding(Ctx& c) {
  const int64_t NT = 4096, NH = 32, NKV = 8, HS = 128, ROT = 128, MAXPOS = 8192;
  const int64_t W = (NH + 2 * NKV) * HS;
  if (!require(c, "rotary_embedding", NT * W < INT_MAX, "NT * W < 2^31")) return;
  const auto qkv0 = randomBf16(c.rng, size_t(NT * W), -2, 2);
  std::vector<uint16_t> cache(size_t(MAXPOS * ROT));
  for (int64_t p = 0; p < MAXPOS; ++p)
    for (int64_t j = 0; j < ROT / 2; ++j) {
      const double angle = double(p) * std::pow(500000.0, -2.0 * double(j) / double(ROT));
      cache[size_t(p * ROT + j)] = toBf16(float(std::cos(angle)));
      cache[size_t(p * ROT + ROT / 2 + j)] = toBf16(float(std::sin(angle)));
    }
  std::vector<int64_t> pos(static_cast<size_t>(NT));
  for (int64_t i = 0; i < NT; ++i) pos[size_t(i)] = i;
  auto dpos = c.upload(pos), dcache = c.upload(cache);
  const int64_t block = std::min<int64_t>(NH * ROT / 2, 512);
  // Bytes, per token: the rotated parts of q and k read and written, its
  // position, its cache row (read once: the positions are distinct).
  const double bytes = double(NT) * (2.0 * double((NH + NKV) * ROT) * 2.0 + 8.0 + 2.0 * double(ROT));
  for (bool neox : {true, false}) {
    spindle::Kernel k = c.spindle("samples/rotary_embedding.spn", "rotary_embedding",
                                  {{"NEOX", spindle::ConstOverride::ofInt(neox ? 1 : 0)}});
    HandKernel h = c.hand("rotary_embedding.cu", neox ? "rotary_embedding_neox" : "rotary_embedding_gptj");
    auto qs = c.upload(qkv0), qh = c.upload(qkv0);
    auto spindle = [&] {
      const uint16_t* q = static_cast<const uint16_t*>(qs.data());
      c.launch(k, {spindle::tensor(dpos.data(), ScalarType::I64, {NT}),
                   spindle::tensor(q, ScalarType::BF16, {NT, NH, HS}, {W, HS, 1}),
                   spindle::tensor(q + NH * HS, ScalarType::BF16, {NT, NKV, HS}, {W, HS, 1}),
                   typed(dcache.data(), ScalarType::BF16, {MAXPOS, ROT})});
    };
    auto hand = [&] {
      uint16_t* q = static_cast<uint16_t*>(qh.data());
      h(Dim3{unsigned(NT)}, Dim3{unsigned(block)}, 0, dpos.data(), static_cast<void*>(q),
        static_cast<void*>(q + NH * HS), dcache.data(), int(W), int(NH), int(NKV), int(HS), int(ROT));
    };
    spindle();
    hand();
    const std::string shape = shapeText({NT, NH, NKV, HS}) + (neox ? " bf16 neox" : " bf16 gptj");
    const auto gs = c.download<uint16_t>(qs, qkv0.size()), gh = c.download<uint16_t>(qh, qkv0.size());
    // The whole buffer: the rotated q and k (same products, same roundings),
    // and the v slice neither side may touch.
    if (c.check(
            "rotary_embedding", "qkv", shape, gs.size(), [&](size_t i) { return double(fromBf16(gs[i])); },
            [&](size_t i) { return double(fromBf16(gh[i])); }, Tolerance::exact()))
      c.time("rotary_embedding", shape, bytes, spindle, hand);
  }
}

// GPT-2 124M's parameter count, bf16 parameters with the f32 master copy
// and bf16 gradients (llm.c's default), random moments.
void caseAdamw(Ctx& c) {
  const int64_t N = 124439808;
  if (!require(c, "adamw", N < INT_MAX, "N < 2^31")) return;
  spindle::Kernel k = c.spindle("samples/adamw.spn", "adamw");
  HandKernel h = c.hand("adamw.cu", "adamw");
  const size_t n = size_t(N);
  const auto p0 = randomBf16(c.rng, n, -1, 1);
  std::vector<float> master0(n);
  for (size_t i = 0; i < n; ++i) master0[i] = fromBf16(p0[i]) + float(c.rng.uniform(-1e-3, 1e-3));
  const auto m0 = randomF32(c.rng, n, -1e-2, 1e-2), v0 = randomF32(c.rng, n, 0, 1e-4);
  auto grads = c.upload(randomBf16(c.rng, n, -1, 1));
  auto ps = c.upload(p0), ph = c.upload(p0), mas = c.upload(master0), mah = c.upload(master0);
  auto ms = c.upload(m0), mh = c.upload(m0), vs = c.upload(v0), vh = c.upload(v0);
  const float lr = 3e-4f, beta1 = 0.9f, beta2 = 0.95f, c1 = 1.0f - 0.9f * 0.9f * 0.9f,
              c2 = 1.0f - 0.95f * 0.95f * 0.95f, eps = 1e-8f, wd = 0.1f, gscale = 0.5f;
  const uint32_t seed = 0x5eed1234u;
  auto spindle = [&] {
    c.launch(k, {typed(ps.data(), ScalarType::BF16, {N}), f32Arg(mas, {N}), typed(grads.data(), ScalarType::BF16, {N}),
                 f32Arg(ms, {N}), f32Arg(vs, {N}), spindle::scalar(lr), spindle::scalar(beta1), spindle::scalar(beta2),
                 spindle::scalar(c1), spindle::scalar(c2), spindle::scalar(eps), spindle::scalar(wd),
                 spindle::scalar(gscale), spindle::scalar(seed)});
  };
  auto hand = [&] {
    h(Dim3{unsigned((N + 511) / 512)}, Dim3{512}, 0, ph.data(), mah.data(), grads.data(), mh.data(), vh.data(), int(N),
      lr, beta1, beta2, c1, c2, eps, wd, gscale, seed);
  };
  spindle();
  hand();
  const std::string shape = std::to_string(N) + " bf16 master";
  auto f32s = [&](const spindle::DeviceBuffer& b) { return c.download<float>(b, n); };
  const auto gms = f32s(ms), gmh = f32s(mh), gvs = f32s(vs), gvh = f32s(vh), gmas = f32s(mas), gmah = f32s(mah);
  const auto gps = c.download<uint16_t>(ps, n), gph = c.download<uint16_t>(ph, n);
  auto of = [](const std::vector<float>& v) { return [p = &v](size_t i) { return double((*p)[i]); }; };
  // The same f32 operations in the same order; the device compiler may
  // contract p's multiply-adds differently in the two programs (an ulp), and
  // a p an ulp apart may round the other way stochastically (a bf16 step).
  bool ok = c.check("adamw", "m", shape, n, of(gms), of(gmh), Tolerance::abs(0, 3e-7));
  ok &= c.check("adamw", "v", shape, n, of(gvs), of(gvh), Tolerance::abs(0, 3e-7));
  ok &= c.check("adamw", "master", shape, n, of(gmas), of(gmah), Tolerance::abs(1e-9, 1e-6));
  ok &= c.check(
      "adamw", "params", shape, n, [&](size_t i) { return double(fromBf16(gps[i])); },
      [&](size_t i) { return double(fromBf16(gph[i])); }, Tolerance::bf16(1));
  if (ok) c.time("adamw", shape, 30.0 * double(N), spindle, hand);
}

void caseQuantPerToken(Ctx& c) {
  const int64_t M = 4096, N = 8192;
  const int64_t block = std::min<int64_t>((N + 7) / 8, 1024);
  if (!require(c, "quant_per_token", N % 8 == 0 && block % 32 == 0 && M * N < INT_MAX,
               "N % 8 == 0, a block of whole warps and M * N < 2^31"))
    return;
  spindle::Kernel k = c.spindle("samples/quant_per_token.spn", "quant_per_token");
  auto x = c.upload(randomBf16(c.rng, size_t(M * N), -3, 3));
  for (ScalarType q : {ScalarType::F8E4M3, ScalarType::I8}) {
    const bool int8 = q == ScalarType::I8;
    // Codes are bytes, so the two sides start from different poison (0xFF,
    // 0xFE): a code one side leaves unwritten cannot agree with the other's.
    auto ys = c.filled(size_t(M * N), 0xFF), yh = c.filled(size_t(M * N), 0xFE);
    auto ss = c.filled(size_t(M) * 4), sh = c.filled(size_t(M) * 4);
    HandKernel h = c.hand("quant_per_token.cu", int8 ? "quant_per_token_int8" : "quant_per_token_fp8");
    auto spindle = [&] {
      c.launch(k, {typed(x.data(), ScalarType::BF16, {M, N}), typed(ys.data(), q, {M, N}), f32Arg(ss, {M})});
    };
    auto hand = [&] { h(Dim3{unsigned(M)}, Dim3{unsigned(block)}, 0, x.data(), yh.data(), sh.data(), int(N)); };
    spindle();
    hand();
    const std::string shape = shapeText({M, N}) + " bf16->" + (int8 ? "i8" : "f8e4m3");
    const auto gys = c.download<uint8_t>(ys, size_t(M * N)), gyh = c.download<uint8_t>(yh, size_t(M * N));
    const auto gss = c.download<float>(ss, size_t(M)), gsh = c.download<float>(sh, size_t(M));
    // Codes as their bytes: the same f32 value quantized the same way.
    const bool ok = c.check(
        "quant_per_token", "y", shape, gys.size(), [&](size_t i) { return double(gys[i]); },
        [&](size_t i) { return double(gyh[i]); }, Tolerance::exact());
    const bool ok2 = c.check(
        "quant_per_token", "scales", shape, gss.size(), [&](size_t i) { return double(gss[i]); },
        [&](size_t i) { return double(gsh[i]); }, Tolerance::exact());
    if (ok && ok2) c.time("quant_per_token", shape, double(M * N) * 3.0 + double(M) * 4.0, spindle, hand);
  }
}

}  // namespace parity
