// Closures, defs and the tensors they take: closures_nested,
// closures_siblings, tuples (row_stats; order_pairs on bf16),
// tensor_params (rows on bf16 and at static C=256 on f32; rope on f16 with
// NEOX and general strides, on bf16 without and with unit inner strides)
// and strided_capture (col_dot on general strides and unit inner stride).
#include <string>
#include <vector>

#include "cpu_golden.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::cpu_golden {
namespace {

class Closures : public GoldenTest {
 protected:
  template <class T>
  void checkRows(Kernel& k, int64_t R, int64_t C);
  template <class T>
  void checkRope(Kernel& k, bool neox, bool unitStride, const std::string& golden);
};

// ---- closures_nested.spn: row_moments

TEST_F(Closures, ClosuresNestedRowMoments) {
  atBothWidths([&] {
    Kernel k = kernel("closures_nested.spn", "row_moments");
    const int64_t M = 4, B = 128;
    for (int64_t N : {1000, 50}) {
      SCOPED_TRACE("N = " + std::to_string(N));
      std::vector<float> x = random<float>(size_t(M * N), -2, 3);
      auto dx = upload(x);
      auto out = poisoned<float>(size_t(M * 3));
      k.launch(nullptr, {dx.arg({M, N}), out.arg({M, 3})});
      auto got = out.read();
      Check check("out");
      const int depth = int((N + B - 1) / B) + levels(B) + 2;
      for (int64_t r = 0; r < M; ++r) {
        const float* row = &x[size_t(r * N)];
        double sum = 0, sumAbs = 0, sq = 0;
        for (int64_t j = 0; j < N; ++j) sum += row[j], sumAbs += std::fabs(row[j]), sq += double(row[j]) * row[j];
        const double mean = sum / N, meanTol = sumTol32(sumAbs, depth) / N + ulp32(mean);
        const float gotMean = got[size_t(r * 3)];
        check.near(at(r, 0), gotMean, mean, meanTol);
        // The variance from the kernel's own mean: E[x^2] - mean^2.
        const double m2 = double(gotMean) * gotMean, var = sq / N - m2;
        check.near(at(r, 1), got[size_t(r * 3 + 1)], var,
                   sumTol32(sq, depth) / N + ulp32(sq / N) + ulp32(m2) + ulp32(var));
        // The spread from the kernel's own mean: f32 differences, an exact maximum.
        double spread = 0;
        for (int64_t j = 0; j < N; ++j) spread = std::max(spread, std::fabs(double(f32(double(row[j]) - gotMean))));
        check.exact(at(r, 2), got[size_t(r * 3 + 2)], spread);
      }
    }
  });
}

// ---- closures_siblings.spn: segmented_argmax

TEST_F(Closures, ClosuresSiblingsSegmentedArgmax) {
  atBothWidths([&] {
    Kernel k = kernel("closures_siblings.spn", "segmented_argmax");
    const int64_t R = 6, B = 128;
    for (int64_t N : {1000, 77}) {
      SCOPED_TRACE("N = " + std::to_string(N));
      // A few values, so that the largest repeats (ties: the first wins); one
      // row of -inf only.
      std::vector<float> x = pick<float>(size_t(R * N), {-2, -1, 0, 1, 2, 3, -INFINITY});
      for (int64_t j = 0; j < N; ++j) x[size_t(2 * N + j)] = -INFINITY;
      auto dx = upload(x);
      auto idx = poisoned<int64_t>(size_t(R));
      auto val = poisoned<float>(size_t(R));
      auto seen = poisoned<int32_t>(size_t(R));
      k.launch(nullptr, {dx.arg({R, N}), idx.arg({R}), val.arg({R}), seen.arg({R})});
      auto gi = idx.read();
      auto gv = val.read();
      auto gs = seen.read();
      Check check("idx, val, seen");
      for (int64_t r = 0; r < R; ++r) {
        const float* row = &x[size_t(r * N)];
        const int64_t best = int64_t(std::max_element(row, row + N) - row);  // the first of the largest
        check.exact("idx " + at(r), double(gi[size_t(r)]), double(best));
        check.exact("val " + at(r), gv[size_t(r)], row[best]);
        // Thread 0 considers columns 0, 128, ...; its history holds a second
        // winner when a later one of them beats the first.
        bool improved = false;
        for (int64_t j = B; j < N; j += B) improved |= row[j] > row[0];
        check.exact("seen " + at(r), gs[size_t(r)], double((N + B - 1) / B + (improved ? 1 : 0)));
      }
    }
  });
}

// ---- tuples.spn: row_stats

TEST_F(Closures, TuplesRowStats) {
  atBothWidths([&] {
    Kernel k = kernel("tuples.spn", "row_stats");
    const int64_t M = 4, B = 128;
    for (int64_t N : {300, 100}) {  // 100: tile[127] holds 0
      SCOPED_TRACE("N = " + std::to_string(N));
      std::vector<float> x = random<float>(size_t(M * N), -2, 3);
      std::vector<F16> h0 = random<F16>(size_t(M * 4), -10, 10);
      auto dx = upload(x);
      auto h = upload(h0);
      auto out = poisoned<float>(size_t(M * 6));
      auto swapped = poisoned<int32_t>(size_t(M));
      k.launch(nullptr, {dx.arg({M, N}), h.arg({M, 4}), out.arg({M, 6}), swapped.arg({M})});
      auto got = out.read();
      auto gh = h.read();
      auto gs = swapped.read();
      Check check("out, h, swapped");
      const int depth = int((N + B - 1) / B) + levels(B) + 2;
      for (int64_t r = 0; r < M; ++r) {
        const float* row = &x[size_t(r * N)];
        const float* o = &got[size_t(r * 6)];
        double sum = 0, sumAbs = 0, sq = 0;
        for (int64_t j = 0; j < N; ++j) sum += row[j], sumAbs += std::fabs(row[j]), sq += double(row[j]) * row[j];
        const double mean = sum / N;
        check.near(at(r, 0), o[0], mean, sumTol32(sumAbs, depth) / N + ulp32(mean));
        const double m2 = double(o[0]) * o[0], var = sq / N - m2;
        check.near(at(r, 1), o[1], var, sumTol32(sq, depth) / N + ulp32(sq / N) + ulp32(m2) + ulp32(var));
        // lo, hi = mean + var, mean - var (after the swap), then put in order.
        const double lo = f32(double(o[0]) + o[1]), hi = f32(double(o[0]) - o[1]);
        const bool flip = hi < lo;
        check.exact(at(r, 2), o[2], flip ? hi : lo);
        check.exact(at(r, 3), o[3], flip ? lo : hi);
        check.exact("swapped " + at(r), gs[size_t(r)], flip ? 1 : 0);
        // tile[0] after the mirrored swap holds x[row, 127] (0 past N).
        const double first = f32(double(row[0]) / N), last = f32(double(row[N - 1]) / N);
        const double tile0 = 127 < N ? row[127] : 0.0;
        const double v = f32(double(f32(tile0 + first)) - last), rounded = roundTo(kF16, v);
        check.exact(at(r, 4), o[4], rounded);
        check.exact(at(r, 5), o[5], f32(v - rounded));
        const F16* hr = &gh[size_t(r * 4)];
        const F16* h0r = &h0[size_t(r * 4)];
        check.exact("h " + at(r, 0), hr[0].bits, h0r[1].bits);
        check.exact("h " + at(r, 1), hr[1].bits, h0r[0].bits);
        check.exact("h " + at(r, 2), hr[2].bits, h0r[2].bits);
        check.exact("h " + at(r, 3), hr[3].bits, h0r[3].bits);
      }
    }
  });
}

// ---- tuples.spn: order_pairs[bf16]

TEST_F(Closures, TuplesOrderPairsBf16) {
  atBothWidths([&] {
    Kernel k = kernel("tuples.spn", "order_pairs");
    const int64_t N = 601;  // odd: the last element has no pair
    std::vector<BF16> x = pick<BF16>(size_t(N), {-3, -1.5, -0.0, 0.0, 0.5, 1, 2.25, NAN});
    auto dx = upload(x);
    auto moved = poisoned<int32_t>(size_t(N));
    k.launch(nullptr, {dx.arg({N}), moved.arg({N})});
    auto gx = dx.read();
    auto gm = moved.read();
    Check check("x, moved");
    for (int64_t i = 0; i + 1 < N; i += 2) {
      const size_t u = size_t(i);
      const bool swap = value(x[u + 1]) < value(x[u]);  // NaN never swaps, nor do -0.0 and 0.0
      check.exact("x " + at(i), gx[u].bits, (swap ? x[u + 1] : x[u]).bits);
      check.exact("x " + at(i + 1), gx[u + 1].bits, (swap ? x[u] : x[u + 1]).bits);
      check.exact("moved " + at(i), gm[u], swap);
      check.exact("moved " + at(i + 1), gm[u + 1], swap);
    }
    check.exact("x " + at(N - 1), gx[size_t(N - 1)].bits, x[size_t(N - 1)].bits);
    check.that("moved " + at(N - 1), isPoison(gm[size_t(N - 1)]), "written for an element with no pair");
  });
}

// ---- tensor_params.spn: rows[T] (bf16, dynamic C; f32, static C=256)

template <class T>
void Closures::checkRows(Kernel& k, int64_t R, int64_t C) {
  Runtime& rt = this->rt();
  auto draw = [&](size_t n) { return random<float>(n, -4, 4); };
  std::vector<float> a = draw(size_t(R * C)), b = draw(size_t(R * C)), out0 = draw(size_t(R * C));
  // wide: every other element of rows 4C + 3 apart (general strides), in a
  // buffer whose elements outside the view must stay as they were.
  const int64_t pitch = 4 * C + 3;
  std::vector<float> wide0 = draw(size_t(R * pitch));
  auto da = Buffer<float>::of(rt, a), db = Buffer<float>::of(rt, b), dout = Buffer<float>::of(rt, out0);
  auto dwide = Buffer<float>::of(rt, wide0);
  auto h = Buffer<T>::poisoned(rt, size_t(R * C));
  k.launch(nullptr,
           {da.arg({R, C}), db.arg({R, C}), dout.arg({R, C}), dwide.view({R, 2 * C}, {pitch, 2}), h.arg({R, C})});
  auto gout = dout.read(), gwide = dwide.read();
  auto gh = h.read();
  Check check("out, wide, h");
  for (int64_t r = 0; r < R; ++r) {
    float dot = 0;  // row_dot: a sequential f32 sum of rounded products
    for (int64_t j = 0; j < C; ++j)
      dot = f32(double(dot) + double(f32(double(a[size_t(r * C + j)]) * b[size_t(r * C + j)])));
    const float s = f32(double(dot) + 2016);  // + total(tile): 0 + 1 + ... + 63
    for (int64_t j = 0; j < C; ++j) {
      const size_t p = size_t(r * C + j);
      check.exact("out " + at(r, j), gout[p], f32(double(out0[p]) * s));
      check.exact("h " + at(r, j), value(gh[p]), value(from<T>(s)));
    }
  }
  for (int64_t e = 0; e < R * pitch; ++e) {
    const int64_t c = e % pitch;
    const double w = wide0[size_t(e)];
    const bool inView = c % 2 == 0 && c / 2 < 2 * C;  // scaled by 0.5 twice
    check.exact("wide buffer " + at(e / pitch, c), gwide[size_t(e)], inView ? f32(double(f32(w * 0.5)) * 0.5) : w);
  }
}

TEST_F(Closures, TensorParamsRowsBf16) {
  atBothWidths([&] {
    Kernel k = kernel("tensor_params.spn", "rows");
    checkRows<BF16>(k, 5, 37);
  });
}

TEST_F(Closures, TensorParamsRowsF32StaticC) {
  atBothWidths([&] {
    KernelOptions o;
    o.staticDims = {"C"};
    Kernel k = kernel("tensor_params.spn", "rows", o);
    checkRows<float>(k, 3, 256);
  });
}

// ---- tensor_params.spn: rope[T, NEOX] (f16 with NEOX, general strides;
// bf16 without, unit inner strides)

template <class T>
void Closures::checkRope(Kernel& k, bool neox, bool unitStride, const std::string& golden) {
  Runtime& rt = this->rt();
  const int64_t NT = 5, NH = 6, NKV = 2, HS = 20, ROT = 16, MAXPOS = 16, half = ROT / 2;
  std::vector<int64_t> positions = random<int64_t>(size_t(NT), 0, MAXPOS - 1);
  auto draw = [&](size_t n) { return random<T>(n, -2, 2); };
  // q and k inside larger buffers: every other element (general strides),
  // or rows of tokens further apart than a token's heads (inner stride 1).
  auto layout = [&](int64_t H) {
    struct L {
      int64_t s0, s1, s2, size;
    };
    if (unitStride) return L{H * HS + 5, HS, 1, NT * (H * HS + 5)};
    return L{2 * H * HS, 2 * HS, 2, NT * 2 * H * HS};
  };
  const auto lq = layout(NH), lk = layout(NKV);
  std::vector<T> q0 = draw(size_t(lq.size)), k0 = draw(size_t(lk.size)), cache = draw(size_t(MAXPOS * ROT));
  auto dpos = Buffer<int64_t>::of(rt, positions);
  auto dq = Buffer<T>::of(rt, q0), dk = Buffer<T>::of(rt, k0), dcache = Buffer<T>::of(rt, cache);
  std::vector<Arg> args = {dpos.arg({NT}), dq.view({NT, NH, HS}, {lq.s0, lq.s1, lq.s2}),
                           dk.view({NT, NKV, HS}, {lk.s0, lk.s1, lk.s2}), dcache.arg({MAXPOS, ROT})};
  EXPECT_EQ(specializationLine(k.compileFor(args.data(), args.size()).source), goldenSpecialization(golden));
  k.launch(nullptr, args.data(), args.size());
  auto check = [&](const char* name, const std::vector<T>& before, const std::vector<T>& after, int64_t H,
                   const decltype(lq)& l) {
    std::vector<double> want(before.size());
    for (size_t e = 0; e < before.size(); ++e) want[e] = value(before[e]);
    for (int64_t t = 0; t < NT; ++t)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t r = 0; r < half; ++r) {
          const int64_t xi = neox ? r : 2 * r, yi = neox ? half + r : 2 * r + 1;
          const size_t pa = size_t(t * l.s0 + h * l.s1 + xi * l.s2), pb = size_t(t * l.s0 + h * l.s1 + yi * l.s2);
          const double c = value(cache[size_t(positions[size_t(t)] * ROT + r)]);
          const double s = value(cache[size_t(positions[size_t(t)] * ROT + half + r)]);
          const double a = value(before[pa]), b = value(before[pb]);
          // Products of two 16-bit floats are exact in f32: one f32 rounding, one T rounding.
          want[pa] = value(from<T>(f32(a * c - b * s)));
          want[pb] = value(from<T>(f32(b * c + a * s)));
        }
    Check ck(name);
    for (size_t e = 0; e < before.size(); ++e) ck.exact(at(int64_t(e)), value(after[e]), want[e]);
  };
  check("q buffer", q0, dq.read(), NH, lq);
  check("k buffer", k0, dk.read(), NKV, lk);
}

TEST_F(Closures, TensorParamsRopeF16Neox) {
  atBothWidths([&] {
    KernelOptions o;
    o.consts = {{"NEOX", ConstOverride::ofInt(1)}};
    Kernel k = kernel("tensor_params.spn", "rope", o);
    checkRope<F16>(k, true, false, "tensor_params.rope.T-f16.NEOX-True.hip");
  });
}

TEST_F(Closures, TensorParamsRopeBf16UnitStride) {
  atBothWidths([&] {
    KernelOptions o;
    o.consts = {{"NEOX", ConstOverride::ofInt(0)}};
    Kernel k = kernel("tensor_params.spn", "rope", o);
    checkRope<BF16>(k, false, true, "tensor_params.rope.T-bf16.NEOX-False.unit-stride-q.unit-stride-k.hip");
  });
}

// ---- strided_capture.spn: col_dot (general strides: a transposed view;
// unit inner stride: padded rows; and a contiguous view)

TEST_F(Closures, StridedCaptureColDot) {
  atBothWidths([&] {
    Kernel k = kernel("strided_capture.spn", "col_dot");
    const int64_t M = 300, N = 7, K = 3, B = 256;
    struct Case {
      const char* what;
      int64_t s0, s1, size;
      const char* golden;
    };
    const Case cases[] = {{"transposed", 1, M, M * N, "strided_capture.col_dot.hip"},
                          {"padded rows", N + 3, 1, M * (N + 3), "strided_capture.col_dot.unit-stride-a.hip"},
                          {"contiguous", N, 1, M * N, nullptr}};
    for (const Case& c : cases) {
      SCOPED_TRACE(c.what);
      std::vector<float> abuf = random<float>(size_t(c.size), -2, 2), w = random<float>(size_t(M), -1, 1);
      auto da = upload(abuf), dw = upload(w), out = poisoned<float>(size_t(N * K));
      std::vector<Arg> args = {da.view({M, N}, {c.s0, c.s1}), dw.arg({M}), out.arg({N, K})};
      if (c.golden) {
        EXPECT_EQ(specializationLine(k.compileFor(args.data(), args.size()).source), goldenSpecialization(c.golden));
      }
      k.launch(nullptr, args.data(), args.size());
      auto got = out.read();
      Check check("out");
      for (int64_t j = 0; j < N; ++j) {
        double dot = 0, dotAbs = 0;
        for (int64_t i = 0; i < M; ++i) {
          const double p = double(abuf[size_t(i * c.s0 + j * c.s1)]) * w[size_t(i)];
          dot += p, dotAbs += std::fabs(p);
        }
        const float v = got[size_t(j * K)];
        check.near(at(j, 0), v, dot, sumTol32(dotAbs, int((M + B - 1) / B) + levels(B) + 2));
        check.exact(at(j, 1), got[size_t(j * K + 1)], f32(double(v) / N));  // from the stored sum
        check.that(at(j, 2), isPoison(got[size_t(j * K + 2)]), "written: the kernel stores two columns");
      }
    }
  });
}

}  // namespace

}  // namespace spindle::cpu_golden
#endif  // SPINDLE_HAVE_CPU_TARGET
