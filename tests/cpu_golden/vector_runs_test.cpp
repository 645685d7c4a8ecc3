// vector_runs.spn: run copies that the generator emits as vector accesses
// (docs/language.md 9.4). A launch of aligned buffers with C a multiple of
// 8 gets the specialization whose runs are __spn_load_run/__spn_store_run
// calls; the unchecked build runs those, the checked build the element
// loops with the alignment the analysis proved checked before each. Both
// must give the values the source says, computed here: an embedding sum
// rounded once to bf16 (f32 sum of two bf16, exact in double), and halves
// doubled (exact). A false multiple_of promise is reported by the checked
// build with its location and value.
#include <string>
#include <vector>

#include "cpu_golden.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::cpu_golden {
namespace {

class VectorRuns : public GoldenTest {};

TEST_F(VectorRuns, EncoderSumsTheEmbeddings) {
  atBothWidths([&] {
    for (bool checked : {false, true}) {
      Kernel k = kernel("vector_runs.spn", "encoder", {}, checked);
      // C = 1032: thread 0 moves two runs of a row (the block covers 1024).
      for (int64_t C : {8, 24, 1032}) {
        SCOPED_TRACE("C = " + std::to_string(C) + (checked ? ", checked" : ""));
        const int64_t B = 2, T = 3, V = 5;
        std::vector<BF16> wte = random<BF16>(size_t(V * C), -4, 4);
        std::vector<BF16> wpe = random<BF16>(size_t(T * C), -4, 4);
        std::vector<int32_t> inp = random<int32_t>(size_t(B * T), 0, V - 1);
        auto dwte = upload(wte, checked);
        auto dwpe = upload(wpe, checked);
        auto dinp = upload(inp, checked);
        auto out = poisoned<BF16>(size_t(B * T * C), checked);
        std::vector<Arg> args{out.arg({B, T, C}), dinp.arg({B, T}), dwte.arg({V, C}), dwpe.arg({T, C})};
        // The launch's specialization has the runs as vector calls (the
        // unchecked build; wte is read only, so the read-only path) or
        // checks their alignment (the checked one).
        const std::string source = k.compileFor(args.data(), args.size()).source;
        EXPECT_NE(
            source.find(checked ? "__spn_check_run_aligned(" : "__spn_load_run_readonly<8, 16>(xs, &wte[ix * C + "),
            std::string::npos);
        k.launch(nullptr, args.data(), args.size());
        auto got = out.read();
        Check check("out");
        for (int64_t b = 0; b < B; ++b)
          for (int64_t t = 0; t < T; ++t)
            for (int64_t c = 0; c < C; ++c) {
              const size_t ix = size_t(inp[size_t(b * T + t)]);
              const double sum = f32(value(wte[ix * size_t(C) + size_t(c)]) + value(wpe[size_t(t * C + c)]));
              check.exact(at(b, t, c), value(got[size_t((b * T + t) * C + c)]), value(from<BF16>(sum)));
            }
      }
    }
  });
}

TEST_F(VectorRuns, HalvesAtPromisedOffsets) {
  atBothWidths([&] {
    for (bool checked : {false, true}) {
      SCOPED_TRACE(checked ? "checked" : "unchecked");
      Kernel k = kernel("vector_runs.spn", "halves", {}, checked);
      const int64_t M = 7, N = 20;
      std::vector<F16> x = random<F16>(size_t(M * N), -4, 4);
      std::vector<int32_t> offs(static_cast<size_t>(M));
      for (auto& o : offs) o = int32_t(4 * integer(0, (N - 4) / 4));
      auto dx = upload(x, checked);
      auto doffs = upload(offs, checked);
      auto y = poisoned<F16>(size_t(M * N), checked);
      std::vector<Arg> args{dx.arg({M, N}), y.arg({M, N}), doffs.arg({M})};
      const std::string source = k.compileFor(args.data(), args.size()).source;
      EXPECT_NE(
          source.find(checked ? "__spn_check_multiple_of(" : "__spn_store_run_stream<4, 8>(&y[row * N + j], hs);"),
          std::string::npos);
      k.launch(nullptr, args.data(), args.size());
      auto got = y.read();
      Check check("y");
      for (int64_t r = 0; r < M; ++r)
        for (int64_t j = 0; j < N; ++j) {
          const size_t s = size_t(r * N + j);
          const int64_t o = offs[size_t(r)];
          if (j >= o && j < o + 4) check.exact(at(r, j), value(got[s]), value(from<F16>(value(x[s]) * 2.0)));
          else check.that(at(r, j), isPoison(got[s]), "written outside the run");
        }
      if (!checked) continue;
      // A start that is not a multiple of 4: the promise is false.
      offs[3] = 6;
      doffs.write(offs);
      std::string error = errorFrom([&] { k.launch(nullptr, {dx.arg({M, N}), y.arg({M, N}), doffs.arg({M})}); });
      EXPECT_NE(error.find("vector_runs.spn:53:"), std::string::npos) << error;
      EXPECT_NE(error.find("multiple_of(offs[row], 4): offs[row] is 6"), std::string::npos) << error;
    }
  });
}

}  // namespace
}  // namespace spindle::cpu_golden
#endif  // SPINDLE_HAVE_CPU_TARGET
