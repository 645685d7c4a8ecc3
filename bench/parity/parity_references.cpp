#include "parity_references.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace parity {

double roundBf16(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  int e;
  std::frexp(v, &e);                           // |v| in [2^(e-1), 2^e)
  const int exponent = std::max(e - 1, -126);  // subnormals keep the spacing of the smallest normal
  const double ulp = std::ldexp(1.0, exponent - 7);
  return std::nearbyint(v / ulp) * ulp;  // the default rounding mode: nearest, ties to even
}

double refEncoderElement(double wte, double wpe) {
  return roundBf16(double(float(wte + wpe)));  // the sum of two bf16 values is exact in double
}

std::vector<double> refEncoderForward(const std::vector<int32_t>& tokens, const std::vector<double>& wte,
                                      const std::vector<double>& wpe, int64_t B, int64_t T, int64_t C) {
  std::vector<double> out(size_t(B * T * C));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      const int64_t ix = tokens[size_t(b * T + t)];
      for (int64_t c = 0; c < C; ++c)
        out[size_t((b * T + t) * C + c)] = refEncoderElement(wte[size_t(ix * C + c)], wpe[size_t(t * C + c)]);
    }
  return out;
}

void refCrossentropyBackwardRow(const double* logits, int64_t V, int64_t target, double dloss, double* out) {
  double m = logits[0];
  for (int64_t j = 1; j < V; ++j) m = std::max(m, logits[j]);
  double s = 0;
  for (int64_t j = 0; j < V; ++j) s += std::exp(logits[j] - m);
  for (int64_t j = 0; j < V; ++j) out[j] = (std::exp(logits[j] - m) / s - (j == target ? 1.0 : 0.0)) * dloss;
}

void refAttentionSoftmaxRow(const double* att, int64_t T, int64_t i, double scale, double* out) {
  double m = att[0];
  for (int64_t j = 1; j <= i; ++j) m = std::max(m, att[j]);
  double s = 0;
  for (int64_t j = 0; j <= i; ++j) s += std::exp(scale * (att[j] - m));
  for (int64_t j = 0; j < T; ++j) out[j] = j <= i ? std::exp(scale * (att[j] - m)) / s : 0.0;
}

}  // namespace parity
