// CPU references for bench/gpu_check.cpp: straight from each sample's header
// math, in double, written without looking at the kernels' strategies.
#include "references.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace bench {

Vec refAxpy(const Vec& x, const Vec& y, double a) {
  Vec out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = a * x[i] + y[i];
  return out;
}

Vec refSoftmax(const Vec& x, int64_t M, int64_t N) {
  Vec out(x.size());
  for (int64_t r = 0; r < M; ++r) {
    const double* row = &x[size_t(r * N)];
    double m = -INFINITY;
    for (int64_t j = 0; j < N; ++j) m = std::max(m, row[j]);
    double s = 0;
    for (int64_t j = 0; j < N; ++j) s += std::exp(row[j] - m);
    for (int64_t j = 0; j < N; ++j) out[size_t(r * N + j)] = std::exp(row[j] - m) / s;
  }
  return out;
}

Vec refLayernorm(const Vec& x, const Vec& w, const Vec& b, int64_t M, int64_t N, double eps) {
  Vec out(x.size());
  for (int64_t r = 0; r < M; ++r) {
    const double* row = &x[size_t(r * N)];
    double mean = 0;
    for (int64_t j = 0; j < N; ++j) mean += row[j];
    mean /= double(N);
    double var = 0;
    for (int64_t j = 0; j < N; ++j) var += (row[j] - mean) * (row[j] - mean);
    var /= double(N);
    double rstd = 1.0 / std::sqrt(var + eps);
    for (int64_t j = 0; j < N; ++j) out[size_t(r * N + j)] = (row[j] - mean) * rstd * w[size_t(j)] + b[size_t(j)];
  }
  return out;
}

Vec refRmsnorm(const Vec& x, const Vec& w, int64_t M, int64_t N, double eps) {
  Vec out(x.size());
  for (int64_t r = 0; r < M; ++r) {
    const double* row = &x[size_t(r * N)];
    double ms = 0;
    for (int64_t j = 0; j < N; ++j) ms += row[j] * row[j];
    ms /= double(N);
    double rinv = 1.0 / std::sqrt(ms + eps);
    for (int64_t j = 0; j < N; ++j) out[size_t(r * N + j)] = row[j] * rinv * w[size_t(j)];
  }
  return out;
}

Vec refTranspose(const Vec& x, int64_t M, int64_t N) {
  Vec out(x.size());
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) out[size_t(j * M + i)] = x[size_t(i * N + j)];
  return out;
}

std::vector<int64_t> refHistogram(const Vec& x, int64_t B, double lo, double hi, const std::vector<int64_t>& hIn) {
  std::vector<int64_t> h = hIn;
  for (double v : x) {
    if (!(v >= lo && v < hi)) continue;
    int64_t bin = int64_t(std::floor((v - lo) * double(B) / (hi - lo)));
    h[size_t(std::min(bin, B - 1))] += 1;
  }
  return h;
}

Vec refMatmul(const Vec& A, const Vec& B, int64_t M, int64_t N, int64_t K) {
  Vec C(size_t(M * N), 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k) {
      double a = A[size_t(i * K + k)];
      const double* brow = &B[size_t(k * N)];
      double* crow = &C[size_t(i * N)];
      for (int64_t j = 0; j < N; ++j) crow[j] += a * brow[j];
    }
  return C;
}

void refAttention(const Vec& Q, const Vec& K, const Vec& V, int64_t B, int64_t HQ, int64_t HKV, int64_t S, int64_t D,
                  bool causal, double scale, Vec& O, Vec& L) {
  O.assign(size_t(B * HQ * S * D), 0.0);
  L.assign(size_t(B * HQ * S), 0.0);
  std::vector<double> s(static_cast<size_t>(S));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < HQ; ++h) {
      const int64_t qh = b * HQ + h, kh = b * HKV + h / (HQ / HKV);
      for (int64_t q = 0; q < S; ++q) {
        const double* qv = &Q[size_t((qh * S + q) * D)];
        const int64_t keys = causal ? q + 1 : S;
        double mx = -INFINITY;
        for (int64_t k = 0; k < keys; ++k) {
          const double* kv = &K[size_t((kh * S + k) * D)];
          double dot = 0;
          for (int64_t d = 0; d < D; ++d) dot += qv[d] * kv[d];
          s[size_t(k)] = scale * dot;
          mx = std::max(mx, s[size_t(k)]);
        }
        double sum = 0;
        for (int64_t k = 0; k < keys; ++k) sum += std::exp(s[size_t(k)] - mx);
        double* o = &O[size_t((qh * S + q) * D)];
        for (int64_t k = 0; k < keys; ++k) {
          const double p = std::exp(s[size_t(k)] - mx) / sum;
          const double* vv = &V[size_t((kh * S + k) * D)];
          for (int64_t d = 0; d < D; ++d) o[d] += p * vv[d];
        }
        L[size_t(qh * S + q)] = mx + std::log(sum);
      }
    }
}

Vec refScan(const Vec& x, int64_t M, int64_t N) {
  Vec out(x.size());
  for (int64_t r = 0; r < M; ++r) {
    double s = 0;
    for (int64_t j = 0; j < N; ++j) {
      s += x[size_t(r * N + j)];
      out[size_t(r * N + j)] = s;
    }
  }
  return out;
}

void refBiasGelu(const Vec& x, const Vec& bias, int64_t M, int64_t N, Vec& y, Vec& rowsum) {
  const double c = std::sqrt(2.0 / 3.14159265358979323846);
  y.assign(x.size(), 0.0);
  rowsum.assign(size_t(M), 0.0);
  for (int64_t r = 0; r < M; ++r)
    for (int64_t j = 0; j < N; ++j) {
      double v = x[size_t(r * N + j)] + bias[size_t(j)];
      double g = 0.5 * v * (1.0 + std::tanh(c * (v + 0.044715 * v * v * v)));
      y[size_t(r * N + j)] = g;
      rowsum[size_t(r)] += g;
    }
}

void refRowNorms(const Vec& x, int64_t M, int64_t N, Vec& amax, Vec& l2) {
  amax.assign(size_t(M), 0.0);
  l2.assign(size_t(M), 0.0);
  for (int64_t r = 0; r < M; ++r) {
    double m = 0, ss = 0;
    for (int64_t j = 0; j < N; ++j) {
      double v = x[size_t(r * N + j)];
      m = std::max(m, std::fabs(v));
      ss += v * v;
    }
    amax[size_t(r)] = m;
    l2[size_t(r)] = std::sqrt(ss);
  }
}

Vec refScaleStrided(const Vec& base, int64_t M, int64_t N, int64_t s0, int64_t s1, double alpha) {
  Vec out(size_t(M * N));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) out[size_t(i * N + j)] = alpha * base[size_t(i * s0 + j * s1)];
  return out;
}

// Nearest multiple of the format's spacing at |v|: 2^(e - precision) for
// v in [2^(e-1), 2^e), never finer than the subnormal spacing
// 2^(minNormalExp - precision + 1). nearbyint rounds ties to even.
static double roundToPrecision(double v, int precision, int minNormalExp) {
  if (v == 0 || !std::isfinite(v)) return v;
  int e = 0;
  std::frexp(v, &e);
  int q = std::max(e - precision, minNormalExp - precision + 1);
  return std::ldexp(std::nearbyint(std::ldexp(v, -q)), q);
}

double roundF16(double v) { return roundToPrecision(v, 11, -14); }
double roundBf16(double v) { return roundToPrecision(v, 8, -126); }

void refFusedAddRmsnorm(const Vec& x, const Vec& residual, const Vec& w, int64_t M, int64_t H, double eps,
                        double (*round)(double), Vec& out, Vec& residualOut) {
  out.assign(x.size(), 0.0);
  residualOut.assign(x.size(), 0.0);
  for (int64_t r = 0; r < M; ++r) {
    double* s = &residualOut[size_t(r * H)];
    double ms = 0;
    for (int64_t j = 0; j < H; ++j) {
      s[j] = round(x[size_t(r * H + j)] + residual[size_t(r * H + j)]);
      ms += s[j] * s[j];
    }
    ms /= double(H);
    double rinv = 1.0 / std::sqrt(ms + eps);
    for (int64_t j = 0; j < H; ++j) out[size_t(r * H + j)] = s[j] * rinv * w[size_t(j)];
  }
}

double actSilu(double v) { return v / (1.0 + std::exp(-v)); }
double actGelu(double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); }
double actGeluTanh(double v) {
  return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / 3.14159265358979323846) * (v + 0.044715 * v * v * v)));
}

Vec refActAndMul(const Vec& x, int64_t M, int64_t D, double (*act)(double), double (*round)(double)) {
  Vec out(size_t(M * D));
  for (int64_t t = 0; t < M; ++t)
    for (int64_t j = 0; j < D; ++j)
      out[size_t(t * D + j)] = round(act(x[size_t((2 * t) * D + j)])) * x[size_t((2 * t + 1) * D + j)];
  return out;
}

void refRotaryEmbedding(Vec& qkv, const std::vector<int64_t>& positions, const Vec& cache, int64_t NT, int64_t NH,
                        int64_t NKV, int64_t HS, int64_t ROT, bool neox, double (*round)(double)) {
  const int64_t width = (NH + 2 * NKV) * HS, half = ROT / 2;
  for (int64_t t = 0; t < NT; ++t) {
    const double* cs = &cache[size_t(positions[size_t(t)] * ROT)];
    for (int64_t h = 0; h < NH + NKV; ++h) {  // the q heads, then the k heads
      double* x = &qkv[size_t(t * width + h * HS)];
      for (int64_t r = 0; r < half; ++r) {
        const int64_t i = neox ? r : 2 * r, j = neox ? half + r : 2 * r + 1;
        const double c = cs[r], s = cs[half + r], a = x[i], b = x[j];
        x[i] = round(a * c) - round(b * s);
        x[j] = round(b * c) + round(a * s);
      }
    }
  }
}

double fromF8e4m3(uint8_t code) {
  const int sign = code >> 7, exp = (code >> 3) & 15, man = code & 7;
  if (exp == 15 && man == 7) return std::nan("");
  const double mag = exp == 0 ? std::ldexp(man / 8.0, -6) : std::ldexp(1.0 + man / 8.0, exp - 7);
  return sign ? -mag : mag;
}

uint8_t nearestF8e4m3(double v) {
  const double target = std::min(std::max(v, -448.0), 448.0);
  uint8_t best = 0;
  double bestErr = INFINITY;
  for (int c = 0; c < 256; ++c) {
    const double d = fromF8e4m3(uint8_t(c));
    if (std::isnan(d) || (d == 0 && std::signbit(d) != std::signbit(target))) continue;  // -0 only for -0
    const double err = std::fabs(d - target);
    if (err < bestErr || (err == bestErr && (c & 1) == 0)) best = uint8_t(c), bestErr = err;
  }
  return best;
}

void refQuantPerToken(const std::vector<float>& x, int64_t M, int64_t N, bool int8, float minScale, Vec& y,
                      Vec& scales) {
  y.assign(x.size(), 0.0);
  scales.assign(size_t(M), 0.0);
  const float qmax = int8 ? 127.0f : 448.0f;
  for (int64_t r = 0; r < M; ++r) {
    float amax = 0;
    for (int64_t j = 0; j < N; ++j) amax = std::max(amax, std::fabs(x[size_t(r * N + j)]));
    const float scale = std::max(amax / qmax, minScale), inv = 1.0f / scale;
    scales[size_t(r)] = scale;
    for (int64_t j = 0; j < N; ++j) {
      const float v = x[size_t(r * N + j)] * inv;
      y[size_t(r * N + j)] =
          int8 ? std::min(std::max(double(std::nearbyint(v)), -128.0), 127.0) : fromF8e4m3(nearestF8e4m3(double(v)));
    }
  }
}

uint32_t squirrelNoise5(uint32_t position, uint32_t seed) {
  uint32_t h = position * 0xd2a80a3fu;
  h += seed;
  h ^= h >> 9;
  h += 0xa884f197u;
  h ^= h >> 11;
  h *= 0x6c736f4bu;
  h ^= h >> 13;
  h += 0xb79f3abbu;
  h ^= h >> 15;
  h *= 0x1b56c4f5u;
  h ^= h >> 17;
  return h;
}

uint16_t stochasticBf16(float p, uint32_t random) {
  uint32_t bits;
  std::memcpy(&bits, &p, 4);
  // Low bits above the threshold: the magnitude rounds up, else down.
  const bool up = (bits & 0xFFFFu) > (random & 0xFFFFu);
  return uint16_t((bits >> 16) + (up ? 1u : 0u));
}

void refAdamw(const std::vector<float>& old, const std::vector<float>& grads, std::vector<float>& m,
              std::vector<float>& v, const AdamwScalars& s, int64_t block, std::vector<float>& p,
              std::vector<uint16_t>& rounded) {
  auto lerp = [](float start, float end, float w) { return std::fmaf(w, end, std::fmaf(-w, start, start)); };
  p.resize(old.size());
  rounded.resize(old.size());
  for (size_t i = 0; i < old.size(); ++i) {
    const float g = s.gradScale * grads[i];
    m[i] = lerp(g, m[i], s.beta1);
    v[i] = lerp(g * g, v[i], s.beta2);
    const float mh = m[i] / s.beta1Correction, vh = v[i] / s.beta2Correction;
    p[i] = old[i] - s.lr * (mh / (std::sqrt(vh) + s.eps) + s.weightDecay * old[i]);
    const uint32_t thread = uint32_t(int64_t(i) % block), blk = uint32_t(int64_t(i) / block);
    rounded[i] = stochasticBf16(p[i], squirrelNoise5(thread + 198491317u * blk, s.seed));
  }
}

}  // namespace bench
