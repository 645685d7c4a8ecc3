// Launch geometry, dims and layouts: geometry_3d (laplace3d, add_2d),
// static_dims (tiled_matmul at static K=256, and K=128 with N=512),
// dim_expressions (split_qkv dynamic and at static C=768, heads),
// module_consts_dims (static H=1024) and strided_rows (general strides,
// and unit inner stride at D % 16 and D % 8; each launch checked to get
// the golden's specialization).
#include <string>
#include <vector>

#include "cpu_golden.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::cpu_golden {
namespace {

class Layout : public GoldenTest {};

// ---- geometry_3d.spn: laplace3d (3-D grid and block)

TEST_F(Layout, Geometry3dLaplace) {
  atBothWidths([&] {
    Kernel k = kernel("geometry_3d.spn", "laplace3d");
    const int64_t L = 7, M = 13, N = 19;  // blocks of (8, 8, 4): every axis partial
    std::vector<float> u = random<float>(size_t(L * M * N), -3, 3);
    auto du = upload(u);
    auto out = poisoned<float>(size_t(L * M * N));
    auto info = poisoned<int32_t>(6);
    k.launch(nullptr, {du.arg({L, M, N}), out.arg({L, M, N}), info.arg({6})});
    auto got = out.read();
    auto gi = info.read();
    Check check("out"), ci("info");
    auto U = [&](int64_t z, int64_t y, int64_t x) { return double(u[size_t((z * M + y) * N + x)]); };
    for (int64_t z = 0; z < L; ++z)
      for (int64_t y = 0; y < M; ++y)
        for (int64_t x = 0; x < N; ++x) {
          const size_t p = size_t((z * M + y) * N + x);
          if (x == 0 || x == N - 1 || y == 0 || y == M - 1 || z == 0 || z == L - 1) {
            check.that(at(z, y, x), isPoison(got[p]), "a boundary point written");
            continue;
          }
          double s = f32(U(z, y, x - 1) + U(z, y, x + 1));  // the sum in the order written, f32 at each step
          s = f32(s + U(z, y - 1, x));
          s = f32(s + U(z, y + 1, x));
          s = f32(s + U(z - 1, y, x));
          s = f32(s + U(z + 1, y, x));
          check.exact(at(z, y, x), got[p], f32(s - double(f32(6 * U(z, y, x)))));
        }
    const int32_t want[6] = {3, 2, 2, 8, 8, 4};  // cdiv(19, 8), cdiv(13, 8), cdiv(7, 4); the block
    for (int a = 0; a < 6; ++a) ci.exact(at(a), gi[size_t(a)], want[a]);
  });
}

// ---- geometry_3d.spn: add_2d (2-D grid and block)

TEST_F(Layout, Geometry3dAdd2d) {
  atBothWidths([&] {
    Kernel k = kernel("geometry_3d.spn", "add_2d");
    const int64_t M = 37, N = 70;  // blocks of (32, 4)
    std::vector<float> a = random<float>(size_t(M * N), -5, 5), b = random<float>(size_t(M * N), -5, 5);
    auto da = upload(a), db = upload(b), c = poisoned<float>(size_t(M * N));
    k.launch(nullptr, {da.arg({M, N}), db.arg({M, N}), c.arg({M, N})});
    auto got = c.read();
    Check check("c");
    for (int64_t i = 0; i < M * N; ++i)
      check.exact(at(i / N, i % N), got[size_t(i)], f32(double(a[size_t(i)]) + b[size_t(i)]));
  });
}

// ---- static_dims.spn: tiled_matmul (K static; then K and N static)

void checkMatmul(Kernel& k, Runtime& rt, const std::vector<float>& A, const std::vector<float>& B, int64_t M, int64_t K,
                 int64_t N) {
  SCOPED_TRACE("M=" + std::to_string(M) + " K=" + std::to_string(K) + " N=" + std::to_string(N));
  auto dA = Buffer<float>::of(rt, A), dB = Buffer<float>::of(rt, B), C = Buffer<float>::poisoned(rt, size_t(M * N));
  k.launch(nullptr, {dA.arg({M, K}), dB.arg({K, N}), C.arg({M, N})});
  auto got = C.read();
  Check check("C");
  for (int64_t r = 0; r < M; ++r)
    for (int64_t c = 0; c < N; ++c) {
      // acc += a * b in k order, the product and the sum each rounded to f32.
      float acc = 0;
      for (int64_t kk = 0; kk < K; ++kk)
        acc = f32(double(acc) + double(f32(double(A[size_t(r * K + kk)]) * B[size_t(kk * N + c)])));
      check.exact(at(r, c), got[size_t(r * N + c)], acc);
    }
}

TEST_F(Layout, StaticDimsMatmulK256) {
  atBothWidths([&] {
    KernelOptions o;
    o.staticDims = {"K"};  // @static in the file
    Kernel k = kernel("static_dims.spn", "tiled_matmul", o);
    const int64_t M = 37, K = 256, N = 50;  // tiles of 16: M and N partial
    checkMatmul(k, rt(), random<float>(size_t(M * K), -1, 1), random<float>(size_t(K * N), -1, 1), M, K, N);
  });
}

TEST_F(Layout, StaticDimsMatmulK128N512) {
  atBothWidths([&] {
    KernelOptions o;
    o.staticDims = {"K", "N"};
    Kernel k = kernel("static_dims.spn", "tiled_matmul", o);
    const int64_t M = 20, K = 128, N = 512;
    checkMatmul(k, rt(), random<float>(size_t(M * K), -1, 1), random<float>(size_t(K * N), -1, 1), M, K, N);
  });
}

// ---- dim_expressions.spn: split_qkv (dynamic C, static C=768), heads

void checkSplitQkv(Kernel& k, Runtime& rt, const std::vector<float>& qkv, int64_t B, int64_t T, int64_t C) {
  SCOPED_TRACE("C = " + std::to_string(C));
  auto dqkv = Buffer<float>::of(rt, qkv);
  auto q = Buffer<float>::poisoned(rt, size_t(B * T * C)), kk = Buffer<float>::poisoned(rt, size_t(B * T * C)),
       v = Buffer<float>::poisoned(rt, size_t(B * T * C));
  k.launch(nullptr, {dqkv.arg({B, T, 3 * C}), q.arg({B, T, C}), kk.arg({B, T, C}), v.arg({B, T, C})});
  auto gq = q.read(), gk = kk.read(), gv = v.read();
  Check check("q, k, v");
  for (int64_t bt = 0; bt < B * T; ++bt)
    for (int64_t c = 0; c < C; ++c) {
      const size_t o = size_t(bt * C + c), in = size_t(bt * 3 * C + c);
      check.exact("q " + at(bt, c), gq[o], qkv[in]);
      check.exact("k " + at(bt, c), gk[o], qkv[in + size_t(C)]);
      check.exact("v " + at(bt, c), gv[o], qkv[in + size_t(2 * C)]);
    }
}

TEST_F(Layout, DimExpressionsSplitQkv) {
  atBothWidths([&] {
    Kernel k = kernel("dim_expressions.spn", "split_qkv");
    const int64_t B = 2, T = 3, C = 300;  // blocks of 256 striding over C
    checkSplitQkv(k, rt(), random<float>(size_t(B * T * 3 * C), -9, 9), B, T, C);
  });
}

TEST_F(Layout, DimExpressionsSplitQkvStaticC) {
  atBothWidths([&] {
    KernelOptions o;
    o.staticDims = {"C"};
    Kernel k = kernel("dim_expressions.spn", "split_qkv", o);
    const int64_t B = 2, T = 3, C = 768;
    checkSplitQkv(k, rt(), random<float>(size_t(B * T * 3 * C), -9, 9), B, T, C);
  });
}

TEST_F(Layout, DimExpressionsHeads) {
  atBothWidths([&] {
    Kernel k = kernel("dim_expressions.spn", "heads");
    const int64_t C = 300, NH = 4, D = C / NH;  // 75 rows of w per head: blocks of 64 stride past them
    std::vector<float> x = random<float>(size_t(C), -2, 2), w = random<float>(size_t(D * NH), -2, 2);
    auto dx = upload(x), dw = upload(w), out = poisoned<float>(size_t(NH));
    k.launch(nullptr, {dx.arg({C}), dw.arg({D, NH}), out.arg({NH})});
    auto got = out.read();
    Check check("out");
    for (int64_t h = 0; h < NH; ++h) {
      double s = 0, sAbs = 0;
      for (int64_t i = 0; i < D; ++i) {
        const double p = double(x[size_t(h * D + i)]) * w[size_t(i * NH + h)];
        s += p, sAbs += std::fabs(p);
      }
      check.near(at(h), got[size_t(h)], s, sumTol32(sAbs, 2 + levels(64) + 2));
    }
  });
}

// ---- flat_index.spn: xent_grad, a flat index split with // and % (32-bit
// unsigned divisions with 32-bit indices, which the runtime picks for these
// sizes), checked and unchecked builds

TEST_F(Layout, FlatIndexSplitsItsCoordinates) {
  atBothWidths([&] {
    const int64_t B = 3, T = 5, V = 37;  // 555 elements: the last of 3 blocks is partial
    for (bool checked : {true, false}) {
      SCOPED_TRACE(checked ? "checked" : "unchecked");
      Kernel k = kernel("flat_index.spn", "xent_grad", {}, checked);
      std::vector<float> probs = random<float>(size_t(B * T * V), 0, 1);
      std::vector<int32_t> targets = random<int32_t>(size_t(B * T), 0, int32_t(V - 1));
      const float dloss = 1.0f / float(B * T);
      auto dp = upload(probs, checked), out = poisoned<float>(size_t(B * T * V), checked);
      auto dt = upload(targets, checked);
      EXPECT_CONTAINS(k.compileFor({dp.arg({B, T, V}), dt.arg({B, T}), scalar(dloss), out.arg({B, T, V})}).source,
                      "uint32_t(i) / (uint32_t(T) * uint32_t(V))");
      k.launch(nullptr, {dp.arg({B, T, V}), dt.arg({B, T}), scalar(dloss), out.arg({B, T, V})});
      auto got = out.read();
      Check check("dlogits");
      for (int64_t bt = 0; bt < B * T; ++bt)
        for (int64_t v = 0; v < V; ++v) {
          const size_t i = size_t(bt * V + v);
          const float hit = v == targets[size_t(bt)] ? 1.0f : 0.0f;
          check.exact(at(bt, v), got[i], (probs[i] - hit) * dloss);
        }
    }
  });
}

// ---- module_consts_dims.spn: scale_rows at static H=1024 (VPT = 8, SCALE = 0.125)

TEST_F(Layout, ModuleConstsDims) {
  atBothWidths([&] {
    KernelOptions o;
    o.staticDims = {"H"};
    Kernel k = kernel("module_consts_dims.spn", "scale_rows", o);
    const int64_t M = 5, H = 1024;  // two rows a block: the last block has one
    std::vector<float> x = random<float>(size_t(M * H), -8, 8);
    auto dx = upload(x), y = poisoned<float>(size_t(M * H));
    k.launch(nullptr, {dx.arg({M, H}), y.arg({M, H})});
    auto got = y.read();
    Check check("y");
    for (int64_t i = 0; i < M * H; ++i) check.exact(at(i / H, i % H), got[size_t(i)], 0.125 * x[size_t(i)]);
  });
}

// ---- strided_rows.spn: scale_rows, in its three specializations

void checkStridedRows(Kernel& k, Runtime& rt, std::vector<BF16> xbuf, int64_t M, int64_t D, int64_t s0, int64_t s1,
                      size_t offset, const std::string& golden, std::vector<BF16> w) {
  SCOPED_TRACE("D=" + std::to_string(D) + " x strides (" + std::to_string(s0) + ", " + std::to_string(s1) + ")");
  auto dx = Buffer<BF16>::of(rt, xbuf);
  // x, w and y start `offset` elements into their buffers: 2 bytes off 16-byte alignment when 1.
  std::vector<BF16> wbuf(offset, BF16{0});
  wbuf.insert(wbuf.end(), w.begin(), w.end());
  auto dw = Buffer<BF16>::of(rt, wbuf);
  auto y = Buffer<BF16>::poisoned(rt, size_t(M * D) + offset);
  std::vector<Arg> args = {dx.view({M, D}, {s0, s1}, offset), dw.view({D}, {1}, offset),
                           y.view({M, D}, {D, 1}, offset)};
  EXPECT_EQ(specializationLine(k.compileFor(args.data(), args.size()).source), goldenSpecialization(golden));
  k.launch(nullptr, args.data(), args.size());
  auto got = y.read();
  Check check("y");
  for (int64_t r = 0; r < M; ++r)
    for (int64_t j = 0; j < D; ++j) {
      // The product of two bf16 is exact in f32: one bf16 rounding.
      const double want = roundTo(kBF16, value(xbuf[offset + size_t(r * s0 + j * s1)]) * value(w[size_t(j)]));
      check.exact(at(r, j), value(got[offset + size_t(r * D + j)]), want);
    }
}

TEST_F(Layout, StridedRowsGeneral) {
  atBothWidths([&] {
    Kernel k = kernel("strided_rows.spn", "scale_rows");
    const int64_t M = 3, D = 45, s0 = 100, s1 = 2;  // D % 8 != 0: a short last run
    checkStridedRows(k, rt(), random<BF16>(size_t(M * s0), -4, 4), M, D, s0, s1, 1, "strided_rows.hip",
                     random<BF16>(size_t(D), -4, 4));
  });
}

TEST_F(Layout, StridedRowsUnitStrideD16) {
  atBothWidths([&] {
    Kernel k = kernel("strided_rows.spn", "scale_rows");
    const int64_t M = 3, D = 48, s0 = 56;  // D % 16 == 0, a row pitch % 8 == 0
    checkStridedRows(k, rt(), random<BF16>(size_t(M * s0), -4, 4), M, D, s0, 1, 0,
                     "strided_rows.unit-stride-x.aligned-x.aligned-w.aligned-y.divisible-D.divisible-x.stride0-8.hip",
                     random<BF16>(size_t(D), -4, 4));
  });
}

TEST_F(Layout, StridedRowsUnitStrideD8) {
  atBothWidths([&] {
    Kernel k = kernel("strided_rows.spn", "scale_rows");
    const int64_t M = 3, D = 40, s0 = 56;  // D % 8 == 0 only
    checkStridedRows(k, rt(), random<BF16>(size_t(M * s0), -4, 4), M, D, s0, 1, 0,
                     "strided_rows.unit-stride-x.aligned-x.aligned-w.aligned-y.divisible-D-8.divisible-x.stride0-8.hip",
                     random<BF16>(size_t(D), -4, 4));
  });
}

}  // namespace

}  // namespace spindle::cpu_golden
#endif  // SPINDLE_HAVE_CPU_TARGET
