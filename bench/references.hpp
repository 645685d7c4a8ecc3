// Independent CPU references for the samples, in double precision. Each takes
// the inputs as doubles (already rounded to the kernel's storage type) and
// returns the exact-as-possible result the kernel approximates.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace bench {

using Vec = std::vector<double>;

// The value of an f16 (IEEE binary16) or bf16 code, exactly, infinities and
// NaN included: how the checkers read a kernel's 16-bit float outputs.
inline double halfValue(bool bf16, uint16_t bits) {
  if (bf16) {
    const uint32_t u = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  const int e = (bits >> 10) & 0x1f, m = bits & 0x3ff;
  const double v = e == 0    ? std::ldexp(double(m), -24)
                   : e == 31 ? (m ? NAN : INFINITY)
                             : std::ldexp(double(m | 0x400), e - 25);
  return (bits >> 15) ? -v : v;
}

Vec refAxpy(const Vec& x, const Vec& y, double a);
Vec refSoftmax(const Vec& x, int64_t M, int64_t N);
Vec refLayernorm(const Vec& x, const Vec& w, const Vec& b, int64_t M, int64_t N, double eps);
Vec refRmsnorm(const Vec& x, const Vec& w, int64_t M, int64_t N, double eps);
Vec refTranspose(const Vec& x, int64_t M, int64_t N);
// h_in + counts; values outside [lo, hi) are ignored.
std::vector<int64_t> refHistogram(const Vec& x, int64_t B, double lo, double hi, const std::vector<int64_t>& hIn);
Vec refMatmul(const Vec& A, const Vec& B, int64_t M, int64_t N, int64_t K);
Vec refScan(const Vec& x, int64_t M, int64_t N);
// Attention forward (samples/attention.spn): Q, O [B, HQ, S, D], K, V [B,
// HKV, S, D] (query head h reads K/V head h / (HQ / HKV)); for each query q
// the scores s_k = scale * Q[q] . K[k] over keys k < S (k <= q if causal),
// O[q] = sum_k softmax(s)_k V[k] and L[q] = log(sum_k exp(s_k)). O and L
// are resized; L has one value per query row [B, HQ, S].
void refAttention(const Vec& Q, const Vec& K, const Vec& V, int64_t B, int64_t HQ, int64_t HKV, int64_t S, int64_t D,
                  bool causal, double scale, Vec& O, Vec& L);
void refBiasGelu(const Vec& x, const Vec& bias, int64_t M, int64_t N, Vec& y, Vec& rowsum);
void refRowNorms(const Vec& x, int64_t M, int64_t N, Vec& amax, Vec& l2);
// x[i, j] = base[i * s0 + j * s1]
Vec refScaleStrided(const Vec& base, int64_t M, int64_t N, int64_t s0, int64_t s1, double alpha);

// `v` rounded to the nearest f16 / bf16 value, ties to even (subnormals
// included; the samples stay far from overflow, which is not handled).
double roundF16(double v);
double roundBf16(double v);
// vLLM's fused_add_rms_norm, per row: the new residual s = round(x + residual)
// (`round`: the storage type's rounding), and out = s * w / sqrt(mean(s^2) + eps)
// computed exactly from that rounded s.
void refFusedAddRmsnorm(const Vec& x, const Vec& residual, const Vec& w, int64_t M, int64_t H, double eps,
                        double (*round)(double), Vec& out, Vec& residualOut);

// The activations of vLLM's act_and_mul kernels, in double: silu(v) =
// v / (1 + exp(-v)), gelu(v) = v/2 * (1 + erf(v / sqrt(2))) (PyTorch's
// approximate="none"), gelu_tanh(v) = v/2 * (1 + tanh(sqrt(2/pi) * (v + 0.044715 v^3))).
double actSilu(double v);
double actGelu(double v);
double actGeluTanh(double v);
// vLLM's silu_and_mul / gelu_and_mul / gelu_tanh_and_mul: x is [M, 2 * D]
// (the gate half, then the up half of each row); out[t, j] =
// round(act(x[t, j])) * x[t, D + j]: the activation rounded to the storage
// type, as vLLM's ACT_FN returns it, and the product exact.
Vec refActAndMul(const Vec& x, int64_t M, int64_t D, double (*act)(double), double (*round)(double));

// vLLM's rotary_embedding, in place on a fused qkv buffer as vLLM's model
// code passes it: qkv is [NT, (NH + 2 * NKV) * HS], q its first NH heads of
// HS values, k the next NKV heads, v the last NKV (not touched). For each
// token t, p = positions[t], each head of q and of k and r in [0, ROT/2):
// c = cache[p, r], s = cache[p, ROT/2 + r] (cache is [MAXPOS, ROT]); the
// pair (i, j) is (r, ROT/2 + r) when `neox`, (2r, 2r + 1) otherwise (GPT-J);
// x[i] = round(x[i] * c) - round(x[j] * s), x[j] = round(x[j] * c) +
// round(x[i] * s): each product rounded to the storage type, as vLLM's
// scalar_t arithmetic does, and the sum exact. Dims [ROT, HS) of each head
// stay as they are.
void refRotaryEmbedding(Vec& qkv, const std::vector<int64_t>& positions, const Vec& cache, int64_t NT, int64_t NH,
                        int64_t NKV, int64_t HS, int64_t ROT, bool neox, double (*round)(double));

// OCP fp8 e4m3fn (bias 7, no infinities, S.1111.111 is NaN, largest 448):
// the value of a code, and the code nearest to `v`, ties to the code with an
// even mantissa, found by comparing with every finite code (a reference
// that shares nothing with the prelude's bit arithmetic). `v` must be finite;
// beyond +-448 it saturates.
double fromF8e4m3(uint8_t code);
uint8_t nearestF8e4m3(double v);
// vLLM's dynamic per-token quantization as quant_per_token computes it, in
// f32: scale = max(amax / qmax, minScale), v = x * (1 / scale), then fp8
// (nearestF8e4m3 of v clamped to +-448) or int8 (rint, clamped to
// [-128, 127]). `y` gets the quantized values (decoded), `scales` one per row.
void refQuantPerToken(const std::vector<float>& x, int64_t M, int64_t N, bool int8, float minScale, Vec& y,
                      Vec& scales);

// llm.c's adamw_kernel3, in f32 as the kernel computes it (lerp through
// fmaf; p's expression without contraction: the device compiler may fuse
// its multiply-adds, so the caller allows an ulp there). `p` gets the
// updated f32 parameters; `m`, `v` are updated in place; `rounded` gets
// p rounded stochastically to bf16 by llm.c's rule (SquirrelNoise5 of the
// thread's position, block size `block`, and `seed`).
struct AdamwScalars {
  float lr, beta1, beta2, beta1Correction, beta2Correction, eps, weightDecay, gradScale;
  uint32_t seed;
};
void refAdamw(const std::vector<float>& old, const std::vector<float>& grads, std::vector<float>& m,
              std::vector<float>& v, const AdamwScalars& s, int64_t block, std::vector<float>& p,
              std::vector<uint16_t>& rounded);
// llm.c's stochastic rounding of one value: `random`'s low 16 bits are the threshold.
uint16_t stochasticBf16(float p, uint32_t random);
uint32_t squirrelNoise5(uint32_t position, uint32_t seed);

}  // namespace bench
