// The matrix API's golden kernels (mma.spn) against fp64 references: tiles
// loaded straight (A M x K) and transposed (B stored N x K, A stored K x M),
// f16 and bf16, shapes that cut every 16 x 16 tile (the loads zero-fill,
// the epilogue stores only inside C), a bias epilogue and a closure that
// rounds to T. The products of f16/bf16 values are exact in f32, so the
// sums' only error is f32 accumulation: |got - want| <= 1e-6 K + 1e-5
// |want| for inputs in [-1, 1] (an f16/bf16 C adds half an ulp of it).
#include <string>
#include <vector>

#include "cpu_golden.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::cpu_golden {
namespace {

class Mma : public GoldenTest {
 protected:
  template <class T>
  void tiles() {
    Kernel k = kernel("mma.spn", "mma_tiles");
    const int64_t M = 45, N = 38, K = 27;
    std::vector<T> A = random<T>(size_t(M * K), -1, 1), Bt = random<T>(size_t(N * K), -1, 1);
    std::vector<float> bias = random<float>(size_t(N), -1, 1);
    auto dA = upload(A), dB = upload(Bt), db = upload(bias);
    auto C = poisoned<float>(size_t(M * N));
    k.launch(nullptr, {dA.arg({M, K}), dB.arg({N, K}), db.arg({N}), C.arg({M, N})});
    auto got = C.read();
    Check check("C");
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t kk = 0; kk < K; ++kk) s += value(A[size_t(i * K + kk)]) * value(Bt[size_t(j * K + kk)]);
        const double want = s + double(bias[size_t(j)]);
        check.near(at(i, j), got[size_t(i * N + j)], want, 1e-6 * double(K) + 1e-5 * std::fabs(want) + 1e-7);
      }
  }
};

TEST_F(Mma, TilesF16) {
  atBothWidths([&] { tiles<F16>(); });
}
TEST_F(Mma, TilesBf16) {
  atBothWidths([&] { tiles<BF16>(); });
}

// A stored K x M, B row-major, C in bf16 through a closure's epilogue.
TEST_F(Mma, TransposedBf16) {
  atBothWidths([&] {
    Kernel k = kernel("mma.spn", "mma_transposed");
    const int64_t M = 21, N = 35, K = 40;
    std::vector<BF16> At = random<BF16>(size_t(K * M), -1, 1), B = random<BF16>(size_t(K * N), -1, 1);
    auto dA = upload(At), dB = upload(B);
    auto C = poisoned<BF16>(size_t(M * N));
    k.launch(nullptr, {dA.arg({K, M}), dB.arg({K, N}), C.arg({M, N})});
    auto got = C.read();
    Check check("C");
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t kk = 0; kk < K; ++kk) s += value(At[size_t(kk * M + i)]) * value(B[size_t(kk * N + j)]);
        const double tol = 1e-6 * double(K) + 1e-5 * std::fabs(s);
        check.near(at(i, j), value(got[size_t(i * N + j)]), s, tol + 0.5 * ulpIn(kBF16, std::fabs(s) + tol));
      }
  });
}

}  // namespace
}  // namespace spindle::cpu_golden
#endif
