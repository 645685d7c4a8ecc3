// Double-precision CPU references for the kernels of bench/parity/kernels/,
// shared by the parity benchmark (checked on a GPU before timing) and the
// cpu-target tests (tests/parity_kernels). Inputs are given as the values
// the kernel reads (already rounded to their storage type), as doubles.
#pragma once

#include <cstdint>
#include <vector>

namespace parity {

// `v` rounded to the nearest bf16 value, ties to even (subnormals
// included; overflow is not handled: the kernels stay far from it).
double roundBf16(double v);

// encoder_forward, one element: bf16(f32(wte + wpe)).
double refEncoderElement(double wte, double wpe);

// encoder_forward: out[b, t, c] = bf16(f32(wte[tokens[b, t], c] + wpe[t, c])).
// The sum of two bf16 values is exact in double; rounding it to f32 and then
// to bf16 is exactly what the kernel does, so the result is exact.
// wte is [V, C], wpe [MAXT, C], tokens [B, T]; returns [B, T, C].
std::vector<double> refEncoderForward(const std::vector<int32_t>& tokens, const std::vector<double>& wte,
                                      const std::vector<double>& wpe, int64_t B, int64_t T, int64_t C);

// crossentropy_backward, one row of V logits: out[j] = (softmax(x)[j] -
// (j == target)) * dloss, exact (not rounded to bf16).
void refCrossentropyBackwardRow(const double* logits, int64_t V, int64_t target, double dloss, double* out);

// attention_softmax, row i of a [T, T] block of scores: out[j] =
// exp(scale * (x[j] - m)) / sum_{j' <= i} exp(scale * (x[j'] - m)) for j <= i
// (m the max over j <= i), 0 for j > i; exact (not rounded to bf16).
void refAttentionSoftmaxRow(const double* att, int64_t T, int64_t i, double scale, double* out);

}  // namespace parity
