// The parity cases: one function per kernel, each of which makes its inputs
// at the timing shape (gpu_check's timing shape for the samples), launches
// the Spindle kernel and the hand-written one once each on the same inputs,
// compares their outputs (and, for the kernels of bench/parity/kernels/,
// compares both with a double-precision CPU reference), and only when all
// agree times them interleaved (Ctx::time).
#pragma once

#include <vector>

#include "context.hpp"

namespace parity {

struct Case {
  const char* name;  // for --only
  void (*run)(Ctx&);
};
const std::vector<Case>& allCases();

// cases_elementwise.cpp
void caseAxpy(Ctx& c);
void caseScaleStrided(Ctx& c);
void caseTranspose(Ctx& c);
void caseHistogram(Ctx& c);
void caseBiasGelu(Ctx& c);
// cases_rows.cpp
void caseSoftmax(Ctx& c);
void caseLayernorm(Ctx& c);
void caseRmsnormF16(Ctx& c);
void caseRowNorms(Ctx& c);
void caseScan(Ctx& c);
void caseMatmul(Ctx& c);
// cases_llm.cpp
void caseFusedAddRmsnorm(Ctx& c);
void caseActAndMul(Ctx& c);
void caseRotaryEmbedding(Ctx& c);
void caseAdamw(Ctx& c);
void caseQuantPerToken(Ctx& c);
// cases_new.cpp (bench/parity/kernels/)
void caseEncoderForward(Ctx& c);
void caseCrossentropyBackward(Ctx& c);
void caseAttentionSoftmax(Ctx& c);

// Spindle tensor arguments.
inline spindle::Arg f32Arg(const spindle::DeviceBuffer& b, std::initializer_list<int64_t> shape) {
  return spindle::tensor(b.data(), spindle::ScalarType::F32, shape);
}
inline spindle::Arg typed(const void* p, spindle::ScalarType t, std::initializer_list<int64_t> shape) {
  return spindle::tensor(p, t, shape);
}

// Fails the case (Ctx::fail) when a size breaks what the hand-written kernel
// assumes (32-bit indices, divisibility), and says so.
bool require(Ctx& c, const std::string& kernel, bool ok, const std::string& what);

}  // namespace parity
