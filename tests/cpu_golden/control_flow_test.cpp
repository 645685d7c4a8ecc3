// Statements and integer code: control_flow, int_ops, bits, ranges,
// comments, name_clashes, asserts (checked and not), alias,
// optional_tensors (every presence), pruned_branches (each static N and
// the dynamic one) and decided_ternary (each condition decided or not).
#include <string>
#include <vector>

#include "cpu_golden.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::cpu_golden {
namespace {

class ControlFlow : public GoldenTest {};

// ---- control_flow.spn: collatz_stats

struct Collatz {
  int32_t steps, kind;
  int64_t tail;
};

// The kernel's header comment, step by step (the window holds the last 4
// values visited, oldest first).
Collatz collatz(int64_t seed) {
  int64_t last[4] = {0, 0, 0, 0};
  __int128 n = seed;
  int32_t count = 0;
  bool capped = false;
  while (n > 1) {
    ++count;
    for (int w = 0; w < 3; ++w) last[w] = last[w + 1];
    last[3] = int64_t(n);
    if (count >= 1000) {
      capped = true;
      break;
    }
    n = n % 2 == 0 ? n / 2 : 3 * n + 1;
    EXPECT_LT(n, __int128(1) << 62) << "seed " << seed << " leaves i64";
  }
  Collatz c;
  c.steps = count;
  c.kind = seed == 1 ? 0 : capped ? 4 : count < 10 ? 1 : count < 100 ? 2 : 3;
  int64_t acc = 0;
  for (int w = 0; w < 4; ++w) acc += last[w] * (w + 1);
  for (int w = 1; w < 4; ++w) acc -= last[w] == 0;  // w == 0 never subtracts
  for (int w = 1; w < 4; ++w) acc += last[w] >= last[w - 1];
  c.tail = count > 0 || capped ? acc : -1;
  return c;
}

TEST_F(ControlFlow, CollatzStats) {
  atBothWidths([&] {
    Kernel k = kernel("control_flow.spn", "collatz_stats");
    const int64_t N = 300;  // blocks of 128: the last one partial
    std::vector<int64_t> seeds = random<int64_t>(size_t(N), 2, 3000000);
    // The seed 1, seeds at or below 1, short chains, and 9780657630 (1132
    // steps, capped at 1000; its chain stays below 2^62).
    const int64_t special[] = {1, 0, -5, 2, 3, 27, 97, 871, 9780657630, 63728127};
    for (size_t s = 0; s < std::size(special); ++s) seeds[s * 29] = special[s];
    auto dseeds = upload(seeds);
    auto steps = poisoned<int32_t>(size_t(N)), kind = poisoned<int32_t>(size_t(N));
    auto tail = poisoned<int64_t>(size_t(N));
    k.launch(nullptr, {dseeds.arg({N}), steps.arg({N}), kind.arg({N}), tail.arg({N})});
    auto gs = steps.read(), gk = kind.read();
    auto gt = tail.read();
    Check cs("steps"), ck("kind"), ct("tail");
    bool sawCapped = false;
    for (int64_t i = 0; i < N; ++i) {
      const Collatz want = collatz(seeds[size_t(i)]);
      sawCapped |= want.kind == 4;
      cs.exact(at(i), gs[size_t(i)], want.steps);
      ck.exact(at(i), gk[size_t(i)], want.kind);
      ct.exact(at(i), double(gt[size_t(i)]), double(want.tail));
    }
    EXPECT_TRUE(sawCapped);
  });
}

// ---- int_ops.spn

uint32_t mix(uint32_t x) {
  x ^= x >> 16;
  x *= 0x45d9f3bu;
  x ^= x >> 16;
  x *= 0x45d9f3bu;
  return x ^ (x >> 16);
}

// Floor division by a power of two (an arithmetic right shift).
int32_t floorDiv(int32_t a, int32_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

TEST_F(ControlFlow, IntOps) {
  atBothWidths([&] {
    Kernel k = kernel("int_ops.spn", "int_ops");
    const int64_t N = 700;
    // |k| < 2^30: abs(k) * 2 is i32 arithmetic.
    std::vector<int32_t> keys = random<int32_t>(size_t(N), -(1 << 30) + 1, (1 << 30) - 1);
    const int32_t edges[] = {0, -1, 1, 7, -7, 6, -6, 999, -1000, 1001, 16, -17, (1 << 30) - 1, -(1 << 30) + 1};
    for (size_t e = 0; e < std::size(edges); ++e) keys[e * 3] = edges[e];
    for (int64_t i = 100; i < 300; ++i) keys[size_t(i)] = int32_t(integer(-3000, 3000));
    auto dkeys = upload(keys);
    auto h = poisoned<uint32_t>(size_t(N));
    auto q = poisoned<int32_t>(size_t(N)), r = poisoned<int32_t>(size_t(N));
    auto s = poisoned<int64_t>(size_t(N * 4));
    k.launch(nullptr, {dkeys.arg({N}), h.arg({N}), q.arg({N}), r.arg({N}), s.arg({N, 4})});
    auto gh = h.read();
    auto gq = q.read(), gr = r.read();
    auto gs = s.read();
    Check ch("h"), cq("q"), cr("r"), cs("s");
    for (int64_t i = 0; i < N; ++i) {
      const int32_t key = keys[size_t(i)];
      ch.exact(at(i), gh[size_t(i)], mix(uint32_t(key)) | 0x80000000u);
      cq.exact(at(i), gq[size_t(i)], key / 7);  // truncating, as C++
      cr.exact(at(i), gr[size_t(i)], key % 7);
      int32_t m = key / 3;
      m %= 1000;
      m *= 4;
      m = floorDiv(m, 2);
      m &= 0xfff;
      m |= 1;
      m ^= ~key & 0xff;
      const int64_t want[4] = {std::clamp<int64_t>(key, -1000, 1000) + m, int64_t(std::abs(key)) * 2,
                               (std::abs(int64_t(key)) + 15) / 16, int64_t(key) * 8 + i};
      for (int c = 0; c < 4; ++c) cs.exact(at(i, c), double(gs[size_t(i * 4 + c)]), double(want[c]));
    }
  });
}

// ---- bits.spn: popcount at every width

int bitsSet(uint64_t v) {
  int n = 0;
  for (; v; v >>= 1) n += int(v & 1);
  return n;
}

TEST_F(ControlFlow, BitCounts) {
  atBothWidths([&] {
    Kernel k = kernel("bits.spn", "bit_counts");
    const int64_t N = 300;
    std::vector<uint8_t> a(static_cast<size_t>(N));
    std::vector<int32_t> b(static_cast<size_t>(N));
    std::vector<uint64_t> c(static_cast<size_t>(N));
    std::vector<int64_t> d(static_cast<size_t>(N));
    for (int64_t i = 0; i < N; ++i) {
      a[size_t(i)] = uint8_t(bits64());
      b[size_t(i)] = int32_t(uint32_t(bits64()));
      c[size_t(i)] = bits64() >> integer(0, 63);
      d[size_t(i)] = int64_t(bits64());
    }
    b[0] = -1, c[0] = ~0ull, d[0] = -1, a[0] = 255, d[1] = 0, c[1] = 0, b[1] = INT32_MIN, a[1] = 0;
    auto da = upload(a);
    auto db = upload(b);
    auto dd = upload(d);
    auto dc = upload(c);
    auto counts = poisoned<int32_t>(size_t(N));
    auto below = poisoned<int32_t>(size_t(N));
    k.launch(nullptr, {da.arg({N}), db.arg({N}), dc.arg({N}), dd.arg({N}), counts.arg({N}), below.arg({N})});
    auto got = counts.read();
    auto gotBelow = below.read();
    Check check("counts, below");
    for (int64_t i = 0; i < N; ++i) {
      const size_t u = size_t(i);
      const int want = bitsSet(a[u]) + bitsSet(uint32_t(b[u])) + bitsSet(c[u]) + bitsSet(uint64_t(d[u])) + 3;
      check.exact(at(i), got[u], want);
      // counts_of(c): the count, and whether it is below 40 (i32 arithmetic).
      check.exact(at(i), gotBelow[u], bitsSet(c[u]) * 10 + (bitsSet(c[u]) - 40 < 0 ? 1 : 0));
    }
  });
}

// ---- ranges.spn: loops of any step, hist from order-independent sums

// Python's range.
std::vector<int64_t> pyRange(int64_t start, int64_t stop, int64_t step) {
  std::vector<int64_t> v;
  if (step > 0)
    for (int64_t i = start; i < stop; i += step) v.push_back(i);
  if (step < 0)
    for (int64_t i = start; i > stop; i += step) v.push_back(i);
  return v;
}

TEST_F(ControlFlow, Ranges) {
  atBothWidths([&] {
    Kernel k = kernel("ranges.spn", "ranges");
    const int64_t blocks = 64, threads = 256, B = 4;
    struct Case {
      int64_t N;
      uint32_t n;
      int32_t first, last, stride;
    };
    // A positive and a negative run-time step (the second passes i32's
    // limit on its next step, so the loop must stop at the bound), a zero
    // step (no iterations), grid-stride loops that run more than once.
    const Case cases[] = {{1000, 1000, -7, 100, 5},
                          {40000, 300, 100, -2147483600, -(1 << 30)},
                          {77, 0, 5, 50, 0},
                          {16384 + 5, 7, 40, -30, -3}};
    for (const Case& c : cases) {
      SCOPED_TRACE("N=" + std::to_string(c.N) + " n=" + std::to_string(c.n) + " range(" + std::to_string(c.first) +
                   ", " + std::to_string(c.last) + ", " + std::to_string(c.stride) + ")");
      std::vector<float> x = random<float>(size_t(c.N), -8, 8);
      std::vector<int32_t> hist0 = random<int32_t>(size_t(B), -1000, 1000);
      auto dx = upload(x);
      auto y = poisoned<float>(size_t(c.N));
      auto hist = upload(hist0);
      k.launch(nullptr, {dx.arg({c.N}), y.arg({c.N}), hist.arg({B}), scalar(c.n), scalar(c.first), scalar(c.last),
                         scalar(c.stride)});
      std::vector<int64_t> want(hist0.begin(), hist0.end());
      for (int64_t u = 0; u < int64_t(c.n); ++u) want[size_t(u % 4)] += blocks;  // once per block
      for (int64_t kk : pyRange(c.first, c.last, c.stride)) want[size_t(kk & 3)] += blocks * threads;
      for (int64_t m : pyRange(0, 1000, 1)) want[0] += blocks * m;
      for (int64_t m : pyRange(0, c.last, 1)) want[1] += blocks * m;
      for (int64_t d : pyRange(c.last, c.first, -64)) want[2] += blocks * threads * d;
      auto gy = y.read();
      auto gh = hist.read();
      Check cy("y"), ch("hist");
      for (int64_t i = 0; i < c.N; ++i) cy.exact(at(i), gy[size_t(i)], 2.0 * x[size_t(i)]);
      for (int64_t b = 0; b < B; ++b) ch.exact(at(b), gh[size_t(b)], double(want[size_t(b)]));
    }
  });
}

// ---- comments.spn: scaled_sum

TEST_F(ControlFlow, CommentsScaledSum) {
  atBothWidths([&] {
    Kernel k = kernel("comments.spn", "scaled_sum");
    const int64_t N = 200;  // blocks of 64
    std::vector<float> x = random<float>(size_t(N), -1.2, 1.2);
    x[0] = 0, x[1] = -0.0f;
    auto dx = upload(x);
    auto y = poisoned<float>(size_t(N));
    k.launch(nullptr, {dx.arg({N}), y.arg({N})});
    auto got = y.read();
    Check check("y");
    for (int64_t i = 0; i < N; ++i) {
      const double v = x[size_t(i)];
      const float sq = f32(v * v);
      float acc = 0;
      for (int term = 0; term < 3; ++term) acc = f32(double(acc) + double(f32(double(sq) * term)));
      const float before = acc > 1 ? acc : acc > 0 ? f32(2.0 * acc) : 0.0f;
      check.exact(at(i), got[size_t(i)], f32(double(before) + 1.0));
    }
  });
}

// ---- name_clashes.spn: launch

TEST_F(ControlFlow, NameClashes) {
  atBothWidths([&] {
    Kernel k = kernel("name_clashes.spn", "launch");
    const int64_t N = 150;  // blocks of 64
    std::vector<float> d = random<float>(size_t(N), -3, 3);
    std::vector<int32_t> ints = random<int32_t>(size_t(N), -20, 20);
    auto dd = upload(d);
    auto di = upload(ints);
    auto out = poisoned<float>(size_t(N));
    k.launch(nullptr, {dd.arg({N}), out.arg({N}), di.arg({N})});
    auto got = out.read();
    Check check("unsigned");
    for (int64_t i = 0; i < N; ++i) {
      const float v = d[size_t(i)];
      const float twice = f32(2.0 * v), cls = f32(double(twice) + ints[size_t(i)]);
      // auto = 0 + 1 + 2; dim3 = 0 + 1 + 2; size_t: each (i, j) with
      // 0 <= i <= j < 3 adds j, and 0 + 10 from the inner loop.
      const double sum = f32(f32(f32(f32(double(v) + twice) + cls) + 2.0) + 3.0) + 71.0;
      const double tmp = cls * 0.5 + (std::exp(double(cls)) - 1.0);
      const double want = sum + ((i + 1) % 2 == 0 ? tmp : -tmp);
      // expf and four f32 roundings of values up to the exponential.
      const double tol = 4 * ulp32(std::exp(double(cls))) + 4 * ulp32(sum) + 2 * ulp32(want);
      check.near(at(i), got[size_t(i)], want, tol);
    }
  });
}

// ---- asserts.spn: gather_scale, checked (--checked) and not

TEST_F(ControlFlow, AssertsChecked) {
  atBothWidths([&] {
    Kernel k = kernel("asserts.spn", "gather_scale");
    const int64_t N = 300;
    std::vector<float> x = random<float>(size_t(N), -5, 5);
    std::vector<int32_t> idx = random<int32_t>(size_t(N), 0, N - 1);
    auto dx = upload(x);
    auto di = upload(idx);
    auto y = poisoned<float>(size_t(N));
    auto launch = [&](float scale) { k.launch(nullptr, {dx.arg({N}), y.arg({N}), di.arg({N}), scalar(scale)}); };
    launch(2.5f);
    auto got = y.read();
    Check check("y");
    for (int64_t i = 0; i < N; ++i) check.exact(at(i), got[size_t(i)], f32(x[size_t(idx[size_t(i)])] / 2.5));
    // `assert scale > 0.0` (no message: the condition as written) and the
    // closure's index check, each stopping the launch.
    std::string error = errorFrom([&] { launch(-2.0f); });
    EXPECT_NE(error.find("asserts.spn:"), std::string::npos) << error;
    EXPECT_NE(error.find("scale > 0.0"), std::string::npos) << error;
    idx[17] = -1;
    di.write(idx);
    error = errorFrom([&] { launch(1.0f); });
    EXPECT_NE(error.find("index out of range: check idx"), std::string::npos) << error;
  });
}

TEST_F(ControlFlow, AssertsUnchecked) {
  atBothWidths([&] {
    Kernel k = kernel("asserts.spn", "gather_scale", {}, /*checked=*/false);
    const int64_t N = 300;
    std::vector<float> x = random<float>(size_t(N), -5, 5);
    std::vector<int32_t> idx = random<int32_t>(size_t(N), 0, N - 1);
    auto dx = upload(x, false);
    auto di = upload(idx, false);
    auto y = poisoned<float>(size_t(N), false);
    // Compiled out: a negative scale divides.
    for (float scale : {2.5f, -2.0f}) {
      k.launch(nullptr, {dx.arg({N}), y.arg({N}), di.arg({N}), scalar(scale)});
      auto got = y.read();
      Check check("y with scale " + std::to_string(scale));
      for (int64_t i = 0; i < N; ++i)
        check.exact(at(i), got[size_t(i)], f32(double(x[size_t(idx[size_t(i)])]) / scale));
    }
  });
}

// ---- alias.spn: scale_into, x and y apart and the same memory

TEST_F(ControlFlow, AliasScaleInto) {
  atBothWidths([&] {
    Kernel k = kernel("alias.spn", "scale_into");
    const int64_t N = 1000;
    std::vector<float> x = random<float>(size_t(N), -10, 10);
    const float a = -1.7f;
    auto dx = upload(x);
    auto y = poisoned<float>(size_t(N));
    k.launch(nullptr, {dx.arg({N}), y.arg({N}), scalar(a)});
    {
      auto got = y.read();
      Check check("y");
      for (int64_t i = 0; i < N; ++i) check.exact(at(i), got[size_t(i)], f32(double(a) * x[size_t(i)]));
    }
    k.launch(nullptr, {dx.arg({N}), dx.arg({N}), scalar(a)});  // in place
    auto got = dx.read();
    Check check("x, scaled in place");
    for (int64_t i = 0; i < N; ++i) check.exact(at(i), got[size_t(i)], f32(double(a) * x[size_t(i)]));
  });
}

// ---- optional_tensors.spn: bias_act with every presence

TEST_F(ControlFlow, OptionalTensors) {
  atBothWidths([&] {
    Kernel k = kernel("optional_tensors.spn", "bias_act");
    const int64_t M = 3, N = 300;  // blocks of 256 threads over rows of 300
    std::vector<float> x = random<float>(size_t(M * N), -4, 4), bias = random<float>(size_t(N), -1, 1);
    std::vector<float> scale = random<float>(size_t(M), 0.5, 2);
    auto dx = upload(x), db = upload(bias), ds = upload(scale);
    for (int presence = 0; presence < 4; ++presence) {
      const bool hasBias = presence & 1, hasScale = presence & 2;
      SCOPED_TRACE(std::string("bias ") + (hasBias ? "present" : "absent") + ", scale " +
                   (hasScale ? "present" : "absent"));
      auto y = poisoned<float>(size_t(M * N));
      k.launch(nullptr,
               {dx.arg({M, N}), hasBias ? db.arg({N}) : none(), hasScale ? ds.arg({M}) : none(), y.arg({M, N})});
      auto got = y.read();
      Check check("y");
      for (int64_t r = 0; r < M; ++r)
        for (int64_t j = 0; j < N; ++j) {
          float v = f32(double(x[size_t(r * N + j)]) * (hasScale ? scale[size_t(r)] : 1.0f));
          if (hasBias) v = f32(double(v) + bias[size_t(j)]);
          check.exact(at(r, j), got[size_t(r * N + j)], v);
        }
    }
  });
}

// ---- pruned_branches.spn: row_scale at static N 4096 and 256, and dynamic

void checkRowScale(const std::vector<float>& x, const std::vector<float>& got, int64_t M, int64_t N) {
  Check check("y (N = " + std::to_string(N) + ")");
  for (int64_t r = 0; r < M; ++r) {
    const float* row = &x[size_t(r * N)];
    double scale = N > 128 ? 0.5 : 1.0, scaleTol = 0;
    if (N > 1024) {
      // The mean of the first 1024 elements: 8 per thread, then the block's tree of 128.
      double sum = 0, sumAbs = 0;
      for (int64_t j = 0; j < 1024; ++j) sum += row[j], sumAbs += std::fabs(row[j]);
      scale = sum / 1024;
      scaleTol = (8 + 7 + 2) * 0x1p-24 * sumAbs / 1024 + ulp32(scale);
    }
    for (int64_t j = 0; j < N; ++j) {
      const double want = double(row[j]) * scale;
      check.near(at(r, j), got[size_t(r * N + j)], want, std::fabs(row[j]) * scaleTol + 0.5 * ulp32(want));
    }
  }
}

TEST_F(ControlFlow, PrunedBranchesStatic) {
  atBothWidths([&] {
    for (int64_t N : {4096, 256}) {
      SCOPED_TRACE("static N = " + std::to_string(N));
      KernelOptions o;
      o.staticDims = {"N"};
      Kernel k = kernel("pruned_branches.spn", "row_scale", o);
      const int64_t M = 3;
      std::vector<float> x = random<float>(size_t(M * N), -2, 3);
      auto dx = upload(x);
      auto y = poisoned<float>(size_t(M * N));
      k.launch(nullptr, {dx.arg({M, N}), y.arg({M, N})});
      checkRowScale(x, y.read(), M, N);
    }
  });
}

TEST_F(ControlFlow, PrunedBranchesDynamic) {
  atBothWidths([&] {
    Kernel k = kernel("pruned_branches.spn", "row_scale");
    for (int64_t N : {2000, 300, 100}) {  // each branch of the first if
      const int64_t M = 3;
      std::vector<float> x = random<float>(size_t(M * N), -2, 3);
      auto dx = upload(x);
      auto y = poisoned<float>(size_t(M * N));
      k.launch(nullptr, {dx.arg({M, N}), y.arg({M, N})});
      checkRowScale(x, y.read(), M, N);
    }
  });
}

// ---- decided_ternary.spn: pick[FLIP] at static W 4 and dynamic W, FLIP
// true and false, at both warp widths (its third conditional expression
// differs between them).

TEST_F(ControlFlow, DecidedTernary) {
  atBothWidths([&] {
    for (bool staticW : {true, false})
      for (bool flip : {true, false})
        for (int64_t W : staticW ? std::vector<int64_t>{4} : std::vector<int64_t>{4, 7}) {
          SCOPED_TRACE(std::string(staticW ? "static" : "dynamic") + " W = " + std::to_string(W) +
                       ", FLIP = " + (flip ? "True" : "False"));
          KernelOptions o;
          if (staticW) o.staticDims = {"W"};
          o.consts = {{"FLIP", ConstOverride::ofInt(flip ? 1 : 0)}};
          Kernel k = kernel("decided_ternary.spn", "pick", o);
          const int64_t N = 300;
          std::vector<float> x = random<float>(size_t(N * W), -2, 2);
          auto dx = upload(x);
          auto y = poisoned<float>(size_t(N));
          k.launch(nullptr, {dx.arg({N, W}), y.arg({N})});
          auto got = y.read();
          Check check("y");
          for (int64_t i = 0; i < N; ++i) {
            const float a = W == 4 ? x[size_t(i * W)] : x[size_t(i * W + W - 1)];
            const float b = flip ? -a : a;
            const float c = warp() == 32 ? b * 2.0f : b;
            check.exact(at(i), got[size_t(i)], c > 0.0f ? c : 0.0f);
          }
        }
  });
}

}  // namespace

}  // namespace spindle::cpu_golden
#endif  // SPINDLE_HAVE_CPU_TARGET
