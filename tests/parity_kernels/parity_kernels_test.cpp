// The kernels bench/parity adds (bench/parity/kernels/*.spn: encoder_forward,
// crossentropy_backward, attention_softmax) by value on the cpu target, at
// warp widths 32 and 64, in checked builds (every access bounds-checked),
// on fresh random inputs at small shapes chosen to reach every path: runs
// that are whole and partial, threads or lanes with no column, threads with
// several runs, rows whose pitch is or is not a multiple of 8. Outputs start
// poisoned (NaN); every element the kernel should write is compared with
// bench/parity/parity_references.cpp, and every element it should leave
// (padding columns) must still be poisoned.
//
// Tolerances: encoder_forward is exact (the reference rounds as the kernel
// does). The softmax-based kernels round an f32 result to bf16: got is the
// bf16 nearest to an f32 value f with |f - want| <= 2e-5 |want| (f32 exp
// and sums over at most a few hundred terms), so |got - want| <= ulp/2 +
// 2 * 2e-5 |want| (ulp: bf16's spacing at want). Each row's largest value
// is put where a path ends (the last, partial run of a cross-entropy row;
// the diagonal of an attention row) and, in some rows, at a random column,
// so that a value left out of the max or the sum moves the whole row by more
// than that.
#include <string>
#include <vector>

#include "../cpu_golden/cpu_golden.h"
#include "parity_references.hpp"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::cpu_golden {
namespace {

class ParityKernels : public GoldenTest {
 protected:
  // A kernel of bench/parity/kernels/FILE, its module loaded once per runtime.
  Kernel parityKernel(const std::string& file, const std::string& name) const {
    static std::mutex mu;
    static std::map<std::pair<Runtime*, std::string>, std::unique_ptr<Module>> modules;
    std::lock_guard<std::mutex> lock(mu);
    Runtime& r = rt();
    auto& slot = modules[{&r, file}];
    if (!slot)
      slot = std::make_unique<Module>(r.loadModule(std::string(SPINDLE_SOURCE_DIR) + "/bench/parity/kernels/" + file));
    return slot->kernel(name);
  }
};

double bf16Tol(double want) { return 0.5 * ulpIn(kBF16, want) + 4e-5 * std::fabs(want); }

std::vector<double> values(const std::vector<BF16>& v) {
  std::vector<double> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = value(v[i]);
  return out;
}

// ---- encoder_forward

TEST_F(ParityKernels, EncoderForward) {
  atBothWidths([&] {
    Kernel k = parityKernel("encoder_forward.spn", "encoder_forward");
    struct Shape {
      int64_t B, T, C, V, MAXT;
    };
    // C = 24: whole runs, 24 % 16 = 8; C = 13 and 300: a partial last run
    // per row (and runs no longer 16-byte aligned); C = 8: one run per row;
    // C = 1040: 130 runs per row, so a block ends inside a row.
    for (Shape s : {Shape{2, 5, 24, 50, 7}, Shape{3, 4, 13, 20, 4}, Shape{1, 1, 8, 3, 1}, Shape{2, 3, 300, 17, 5},
                    Shape{2, 2, 1040, 9, 2}}) {
      SCOPED_TRACE("B, T, C, V, MAXT = " + at(s.B, s.T, s.C) + ", " + at(s.V, s.MAXT));
      std::vector<int32_t> tokens(size_t(s.B * s.T));
      for (auto& t : tokens) t = int32_t(integer(0, s.V - 1));
      auto wte = random<BF16>(size_t(s.V * s.C), -2, 2);
      auto wpe = random<BF16>(size_t(s.MAXT * s.C), -2, 2);
      auto dtok = upload(tokens);
      auto dwte = upload(wte);
      auto dwpe = upload(wpe);
      auto out = poisoned<BF16>(size_t(s.B * s.T * s.C));
      k.launch(nullptr,
               {dtok.arg({s.B, s.T}), dwte.arg({s.V, s.C}), dwpe.arg({s.MAXT, s.C}), out.arg({s.B, s.T, s.C})});
      const auto want = parity::refEncoderForward(tokens, values(wte), values(wpe), s.B, s.T, s.C);
      const auto got = out.read();
      Check check("out");
      for (size_t i = 0; i < want.size(); ++i) check.exact(at(int64_t(i)), value(got[i]), want[i]);
    }
  });
}

// ---- crossentropy_backward

TEST_F(ParityKernels, CrossentropyBackward) {
  atBothWidths([&] {
    Kernel k = parityKernel("crossentropy_backward.spn", "crossentropy_backward");
    struct Shape {
      int64_t BT, V, pitch;  // rows, columns, row pitch in elements (>= V)
    };
    // V = 100 (pitch 104): most of the 1024 threads have no column (their
    // running max is -inf and sum 0); 8197 (pitch 8200): 8 threads take a
    // second run, one of them partial; 37 (pitch 37): rows 2-byte aligned
    // only (the binary without vector facts), a partial run; 40 (pitch 40).
    for (Shape s : {Shape{4, 100, 104}, Shape{2, 8197, 8200}, Shape{3, 37, 37}, Shape{2, 40, 40}}) {
      SCOPED_TRACE("BT, V, pitch = " + at(s.BT, s.V, s.pitch));
      const size_t n = size_t(s.BT * s.pitch);
      auto logits = random<BF16>(n, -6, 6);
      std::vector<int32_t> targets(size_t(s.BT));
      for (auto& t : targets) t = int32_t(integer(0, s.V - 1));
      for (int64_t r = 0; r < s.BT; ++r) {
        logits[size_t(r * s.pitch + s.V - 1)] = from<BF16>(7.0);
        if (r % 2) logits[size_t(r * s.pitch + integer(0, s.V - 1))] = from<BF16>(6.5);
      }
      const float dloss = float(1.0 / double(s.BT));
      auto dl = upload(logits);
      auto dt = upload(targets);
      auto grad = poisoned<BF16>(n);
      k.launch(nullptr, {dl.view({s.BT, s.V}, {s.pitch, 1}), dt.arg({s.BT}), scalarOf<float>(dloss),
                         grad.view({s.BT, s.V}, {s.pitch, 1})});
      const auto x = values(logits);
      const auto got = grad.read();
      Check check("dlogits");
      std::vector<double> want(size_t(s.V));
      for (int64_t r = 0; r < s.BT; ++r) {
        parity::refCrossentropyBackwardRow(&x[size_t(r * s.pitch)], s.V, targets[size_t(r)], dloss, want.data());
        for (int64_t j = 0; j < s.pitch; ++j) {
          const BF16 g = got[size_t(r * s.pitch + j)];
          if (j >= s.V) check.that(at(r, j), isPoison(g), "a padding column was written");
          else check.near(at(r, j), value(g), want[size_t(j)], bf16Tol(want[size_t(j)]));
        }
      }
    }
  });
}

// ---- attention_softmax

TEST_F(ParityKernels, AttentionSoftmax) {
  atBothWidths([&] {
    Kernel k = parityKernel("attention_softmax.spn", "attention_softmax");
    // T = 37: runs straddle the diagonal and the row's end; 64: whole runs
    // only; 300: lanes with two runs (warp 32), a row of 4 runs past 256;
    // BH * T not a multiple of the rows per block: warps with no row.
    for (auto [BH, T] : std::vector<std::pair<int64_t, int64_t>>{{3, 37}, {2, 64}, {1, 300}, {5, 9}}) {
      SCOPED_TRACE("BH, T = " + at(BH, T));
      const size_t n = size_t(BH * T * T);
      auto att = random<BF16>(n, -8, 8);
      for (int64_t r = 0; r < BH * T; r += 2) att[size_t(r * T + r % T)] = from<BF16>(9.0);  // the diagonal as the max
      const float scale = float(uniform(0.05, 0.6));
      auto da = upload(att);
      auto out = poisoned<BF16>(n);
      k.launch(nullptr, {da.arg({BH, T, T}), scalarOf<float>(scale), out.arg({BH, T, T})});
      const auto x = values(att);
      const auto got = out.read();
      Check check("out");
      std::vector<double> want(static_cast<size_t>(T));
      for (int64_t r = 0; r < BH * T; ++r) {
        parity::refAttentionSoftmaxRow(&x[size_t(r * T)], T, r % T, scale, want.data());
        for (int64_t j = 0; j < T; ++j) {
          const double g = value(got[size_t(r * T + j)]);
          if (j > r % T) check.exact(at(r / T, r % T, j), g, 0.0);
          else check.near(at(r / T, r % T, j), g, want[size_t(j)], bf16Tol(want[size_t(j)]));
        }
      }
    }
  });
}

}  // namespace
}  // namespace spindle::cpu_golden
#endif  // SPINDLE_HAVE_CPU_TARGET
