// Math builtins and defs: math_f32, math_f64, math_more (f32, f64),
// defs_pow, pow_nested, header_names and compile_time_params (act_and_mul
// with silu on bf16 and gelu_tanh on f16; rotate with NEOX and W=4, and
// without at W=8). References of the library's functions are the long
// double ones of the same (rounded) arguments; the tolerances are a few
// ulps of the result per function.
#include <string>
#include <vector>

#include "cpu_golden.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::cpu_golden {
namespace {

using LD = long double;

class MathBuiltins : public GoldenTest {
 protected:
  template <class T>
  void mathBasic(const char* file, const char* name);
  template <class T>
  void mathMore();
};

template <class T>
double ulpT(double v) {
  return std::is_same_v<T, float> ? ulp32(v) : ulp64(v);
}
template <class T>
double roundT(LD v) {
  return std::is_same_v<T, float> ? double(float(v)) : double(v);
}

// ---- math_f32.spn, math_f64.spn: the builtins of 8.3 on f32 and f64

template <class T>
void MathBuiltins::mathBasic(const char* file, const char* name) {
  Kernel k = kernel(file, name);
  const int64_t N = 300;  // blocks of 128
  std::vector<T> x = random<T>(size_t(N), -4, 4);
  auto dx = upload(x);
  auto y = poisoned<T>(size_t(17 * N));
  k.launch(nullptr, {dx.arg({N}), y.arg({17, N})});
  auto got = y.read();
  const char* names[17] = {"exp", "exp2",  "log",  "log2", "sqrt", "rsqrt", "sin", "cos", "tanh",
                           "erf", "floor", "ceil", "abs",  "pow",  "fma",   "min", "max"};
  for (int f = 0; f < 17; ++f) {
    Check check(std::string(name) + " " + names[f]);
    for (int64_t i = 0; i < N; ++i) {
      const double v = x[size_t(i)];
      const double p = roundT<T>(LD(std::fabs(v)) + 1);  // |v| + 1, rounded to T
      const LD lv = v, lp = p;
      double want = 0;
      int ulps = 0;  // 0: exact (correctly rounded or no rounding at all)
      switch (f) {
        case 0: want = roundT<T>(std::exp(lv)), ulps = 3; break;
        case 1: want = roundT<T>(std::exp2(lv)), ulps = 3; break;
        case 2: want = roundT<T>(std::log(lp)), ulps = 3; break;
        case 3: want = roundT<T>(std::log2(lp)), ulps = 3; break;
        case 4: want = roundT<T>(std::sqrt(p)); break;  // correctly rounded (a long double one, rounded again, is not)
        case 5: want = roundT<T>(1 / std::sqrt(lp)), ulps = 3; break;
        case 6: want = roundT<T>(std::sin(lv)), ulps = 3; break;
        case 7: want = roundT<T>(std::cos(lv)), ulps = 3; break;
        case 8: want = roundT<T>(std::tanh(lv)), ulps = 3; break;
        case 9: want = roundT<T>(std::erf(lv)), ulps = 3; break;
        case 10: want = std::floor(v); break;
        case 11: want = std::ceil(v); break;
        case 12: want = std::fabs(v); break;
        case 13: want = roundT<T>(std::pow(lp, LD(0.5))), ulps = 3; break;
        case 14: want = roundT<T>(lv * 2 + 1); break;
        case 15: want = std::min(v, 0.0); break;
        case 16: want = std::max(v, 0.0); break;
      }
      const double g = got[size_t(f * N + i)];
      if (ulps == 0) check.exact(at(f, i), g, want);
      else check.near(at(f, i), g, want, ulps * ulpT<T>(want));
    }
  }
}
TEST_F(MathBuiltins, MathF32) {
  atBothWidths([&] { mathBasic<float>("math_f32.spn", "math_f32"); });
}
TEST_F(MathBuiltins, MathF64) {
  atBothWidths([&] { mathBasic<double>("math_f64.spn", "math_f64"); });
}

// ---- math_more.spn: math_more[T] for f32 and f64

template <class T>
void MathBuiltins::mathMore() {
  SCOPED_TRACE((std::is_same_v<T, float> ? "T = f32" : "T = f64"));
  Kernel k = kernel("math_more.spn", "math_more");
  const int64_t N = 300;
  std::vector<T> x = random<T>(size_t(N), -4, 4);
  x[0] = T(0.125), x[1] = T(-0.375), x[2] = T(0.625), x[3] = T(-0.875);  // v * 4 halfway: half to even
  auto dx = upload(x);
  auto y = poisoned<T>(size_t(27 * N));
  k.launch(nullptr, {dx.arg({N}), y.arg({27, N})});
  auto got = y.read();
  const char* names[27] = {"tan",   "asin",     "acos",     "atan",      "atan2",    "sinh",     "cosh",
                           "asinh", "acosh",    "atanh",    "expm1",     "log1p",    "log10",    "cbrt",
                           "erfc",  "lgamma",   "hypot",    "copysign",  "trunc",    "round",    "rint",
                           "fmod",  "fast_exp", "fast_log", "fast_exp2", "fast_div", "fast_tanh"};
  for (int f = 0; f < 27; ++f) {
    Check check(std::string("math_more ") + names[f]);
    for (int64_t i = 0; i < N; ++i) {
      const double v = x[size_t(i)];
      const double p = roundT<T>(LD(std::fabs(v)) + 1), a = roundT<T>(LD(v) / p);
      const LD lv = v, lp = p, la = a;
      LD ref = 0;
      bool exact = false;
      switch (f) {
        case 0: ref = std::tan(la); break;
        case 1: ref = std::asin(la); break;
        case 2: ref = std::acos(la); break;
        case 3: ref = std::atan(lv); break;
        case 4: ref = std::atan2(lv, lp); break;
        case 5: ref = std::sinh(la); break;
        case 6: ref = std::cosh(la); break;
        case 7: ref = std::asinh(lv); break;
        case 8: ref = std::acosh(lp); break;
        case 9: ref = std::atanh(la); break;
        case 10: ref = std::expm1(la); break;
        case 11: ref = std::log1p(lp); break;
        case 12: ref = std::log10(lp); break;
        case 13: ref = std::cbrt(lv); break;
        case 14: ref = std::erfc(lv); break;
        case 15: ref = std::lgamma(lp); break;
        case 16: ref = std::hypot(lv, lp); break;
        case 17: ref = std::copysign(lp, lv), exact = true; break;
        case 18: ref = std::trunc(lv * 4), exact = true; break;
        case 19:  // round and rint: half to even
        case 20: ref = std::nearbyint(lv * 4), exact = true; break;
        case 21: ref = std::fmod(lv * 8, LD(3)), exact = true; break;
        case 22: ref = std::exp(la); break;
        case 23: ref = std::log(lp); break;
        case 24: ref = std::exp2(la); break;
        case 25: ref = LD(v) / lp; break;
        case 26: ref = std::tanh(lv); break;
      }
      const double want = roundT<T>(ref), g = got[size_t(f * N + i)];
      if (exact) {
        check.exact(at(f, i), g, want);
      } else {
        // The C library's bounds on these (glibc's are up to 3 or 4 ulp),
        // plus the rounding of the reference; lgamma's error is absolute
        // near its zeros at 1 and 2.
        const double floor = f == 15 ? 4 * ulpT<T>(1.0) : 0;
        check.near(at(f, i), g, want, 5 * ulpT<T>(want) + floor);
      }
    }
  }
}
TEST_F(MathBuiltins, MathMoreF32) {
  atBothWidths([&] { mathMore<float>(); });
}
TEST_F(MathBuiltins, MathMoreF64) {
  atBothWidths([&] { mathMore<double>(); });
}

// ---- defs_pow.spn: gelu_poly

TEST_F(MathBuiltins, DefsPowGeluPoly) {
  atBothWidths([&] {
    Kernel k = kernel("defs_pow.spn", "gelu_poly");
    const int64_t N = 300;
    std::vector<float> x = random<float>(size_t(N), -4, 4);
    const float special[] = {0.0f, -0.0f, NAN, INFINITY, -INFINITY, -2e31f, 1e-3f, -5.5f};
    for (size_t s = 0; s < std::size(special); ++s) x[s * 11] = special[s];
    std::vector<double> d = random<double>(size_t(N), -3, 3);
    d[0] = NAN;
    const double shift = uniform(-0.5, 0.5);
    d[1] = -shift;  // e = 0: 1 / 0
    std::vector<int32_t> n0 = random<int32_t>(size_t(N), -1000, 1000);
    auto dx = upload(x);
    auto dd = upload(d);
    auto y = poisoned<float>(size_t(N * 4));
    auto z = poisoned<double>(size_t(N * 2));
    auto kk = upload(n0);
    k.launch(nullptr, {dx.arg({N}), dd.arg({N}), y.arg({N, 4}), z.arg({N, 2}), kk.arg({N}), scalar(shift)});
    auto gy = y.read();
    auto gz = z.read();
    auto gk = kk.read();
    Check cy("y"), cz("z"), ck("k");
    // C2 = C1 * 3.0 is a weak const: the double the const evaluator makes of
    // it, 0.134145 (C1's expression times 3; the f32 C1 the kernel itself
    // uses, times 3, would be 0.13414499536...: a different f32, whose
    // effect here stays within one ulp of s3).
    const double C0 = f32(0.7978845608), C1 = f32(0.044715), C2 = f32(0.134145);
    for (int64_t i = 0; i < N; ++i) {
      const size_t u = size_t(i);
      const double v = x[u];
      // gelu: the f32 operations as written, tanhf within 2 ulp of tanh.
      const double cube = f32(double(f32(v * v)) * v);
      const double inner = f32(C0 * double(f32(v + double(f32(C1 * cube)))));
      const double t = std::tanh(inner);
      const double a = f32(double(f32(0.5 * v)) * double(f32(1 + t)));
      const double aTol = std::fabs(0.5 * v) * (2 * ulp32(t) + ulp32(1 + t)) + ulp32(a);
      cy.near(at(i, 0), gy[u * 4], a, aTol);
      // poly: the f32 operations as written; x ** 5 (repeated squaring) within 3 ulp of v^5.
      const double p = f32(v * v), q = f32(LD(v) * v * v * v * v);
      const double s1 = f32(1 + double(f32(C0 * v)));
      const double s2 = f32(s1 - double(f32(double(f32(double(f32(C2 * p)) * v)) / 3)));
      const double s3 = f32(s2 + double(f32(double(f32(0.01)) * q)));
      const double poly = f32(double(f32(0.5 * v)) * s3);
      const double polyTol = std::fabs(0.5 * v) * (0.01 * 3 * ulp32(q) + ulp32(s3)) + ulp32(poly);
      cy.near(at(i, 1), gy[u * 4 + 1], poly, polyTol);
      // The relative error, from the two values the kernel stored: exact.
      const double ga = gy[u * 4], gp = gy[u * 4 + 1];
      const double absA = std::fabs(ga);
      const double recip = std::isnan(absA) || std::isinf(absA) ? NAN : absA == 0 ? INFINITY : f32(1 / absA);
      cy.exact(at(i, 2), gy[u * 4 + 2], f32(double(f32(std::fabs(ga - gp))) * recip));
      cy.exact(at(i, 3), gy[u * 4 + 3], v < -1e30 ? -INFINITY : f32(v * 2));
      // The f64 path.
      const double e = d[u] + shift;
      const double er = double(std::erf(LD(e * 0.7071067811865476)));
      const double z0 = 0.5 * e * (1.0 + er);
      cz.near(at(i, 0), gz[u * 2], z0, std::fabs(0.5 * e) * (2 * ulp64(er) + ulp64(1 + er)) + ulp64(z0));
      const double e5 = double(LD(e) * e * e * e * e);
      const double z1 = ((1 / e + e * e) + e * e * e) + e5;
      cz.near(at(i, 1), gz[u * 2 + 1], z1,
              3 * ulp64(e5) + 2 * ulp64(std::fabs(1 / e) + e * e + std::fabs(e * e * e) + std::fabs(e5)));
      const int32_t n = n0[u];
      ck.exact(at(i), gk[u], n * n + n * 2);
    }
  });
}

// ---- pow_nested.spn: powers

TEST_F(MathBuiltins, PowNested) {
  atBothWidths([&] {
    Kernel k = kernel("pow_nested.spn", "powers");
    const int64_t N = 300;
    std::vector<float> x = random<float>(size_t(N), -3, 3);
    x[0] = 0, x[1] = -0.0f, x[2] = 1, x[3] = -1;
    auto dx = upload(x);
    auto y = poisoned<float>(size_t(N * 5));
    k.launch(nullptr, {dx.arg({N}), y.arg({N, 5})});
    auto got = y.read();
    Check check("y");
    for (int64_t i = 0; i < N; ++i) {
      const size_t u = size_t(i);
      const LD v = x[u];
      const double p4 = double(v * v * v * v), p8 = double(v * v * v * v * v * v * v * v);
      // x ** 4 and x ** 8 by repeated squaring: 2 and 3 roundings, a relative
      // error that doubles with each squaring.
      check.near(at(i, 0), got[u * 5], p4, 4 * ulp32(p4));
      check.near(at(i, 1), got[u * 5 + 1], p8, 8 * ulp32(p8));
      check.exact(at(i, 2), got[u * 5 + 2], f32(8 * double(v)));
      check.exact(at(i, 3), got[u * 5 + 3], -f32(double(v * v)));
      check.near(at(i, 4), got[u * 5 + 4], p8, 8 * ulp32(p8));
    }
  });
}

// ---- header_names.spn: tgamma (names the C headers define)

TEST_F(MathBuiltins, HeaderNames) {
  atBothWidths([&] {
    Kernel k = kernel("header_names.spn", "tgamma");
    const int64_t N = 200;  // blocks of 64
    std::vector<float> x = random<float>(size_t(N), -30, 30);
    std::vector<int32_t> bits0 = random<int32_t>(size_t(N), -1000, 1000);
    auto dx = upload(x);
    auto y = poisoned<float>(size_t(N));
    auto bits = upload(bits0);
    k.launch(nullptr, {dx.arg({N}), y.arg({N}), bits.arg({N})});
    auto gy = y.read();
    auto gb = bits.read();
    Check cy("y"), cb("bits");
    const double cbrtRoot2 = std::exp(std::log(double(f32(1.41421356))) / 3), log1e30 = std::log(double(f32(1e30)));
    for (int64_t i = 0; i < N; ++i) {
      const double v = x[size_t(i)];
      const double rint = std::floor(f32(double(f32(v * double(f32(3.14159)))) + 0.5));
      const double trunc = double(int32_t(v));
      const double expm1 = f32(f32(f32(rint + trunc) + cbrtRoot2) + log1e30);  // |expm1| > 0.2: its sign is sure
      const int32_t errno_ = expm1 < 0 ? 0 : bits0[size_t(i)] % 8;
      const double want = f32(f32(expm1 + double(f32(2.718281828))) + double(errno_ + 32767 - 1));
      const double tol = 2 * ulp32(cbrtRoot2) + 2 * ulp32(log1e30) + 3 * ulp32(expm1) + ulp32(want);
      cy.near(at(i), gy[size_t(i)], want, tol);
      cb.exact(at(i), gb[size_t(i)], -1);  // i32(2^31 - 1 + 2^32 - 1 - (2^31 - 1))
    }
  });
}

// ---- compile_time_params.spn: act_and_mul and rotate

// gelu_tanh(x) in f32 and how far it may be from the exact value: tanh's
// error is absolute, so 1 + tanh near -1 loses its relative precision.
struct Approx {
  double value, tol;
};
Approx geluTanh(double x) {
  const double inner = 0.7978845608 * (x + 0.044715 * x * x * x), t = std::tanh(inner);
  const double value = 0.5 * x * (1 + t);
  const double tTol = 2 * ulp32(t) + 6 * ulp32(inner) * (1 - t * t) + ulp32(1 + t);
  return {value, std::fabs(0.5 * x) * tTol + 2 * ulp32(value)};
}
Approx silu(double x) {
  const double value = x / (1 + std::exp(-x));
  return {value, 5 * ulp32(value)};  // expf, the add, the divide
}

template <class T>
void checkActAndMul(Kernel& k, Runtime& rt, bool actFirst, Approx (*act)(double), const std::vector<T>& a,
                    const std::vector<T>& b, int64_t M, int64_t D) {
  auto da = Buffer<T>::of(rt, a), db = Buffer<T>::of(rt, b), out = Buffer<T>::poisoned(rt, size_t(M * D));
  k.launch(nullptr, {da.arg({M, D}), db.arg({M, D}), out.arg({M, D})});
  auto got = out.read();
  Check check("out");
  for (int64_t i = 0; i < M * D; ++i) {
    const double x = value(a[size_t(i)]), y = value(b[size_t(i)]);
    const Approx r = act(actFirst ? x : y);
    const double other = actFirst ? y : x, want = r.value * other;
    const double tol = r.tol * std::fabs(other) + ulp32(want);
    check.near(at(i / D, i % D), value(got[size_t(i)]), want,
               tol + 0.5 * ulpIn(Elem<T>::format, std::fabs(want) + tol));
  }
}

TEST_F(MathBuiltins, ActAndMulSiluBf16) {
  atBothWidths([&] {
    KernelOptions o;
    o.consts = {{"ACT", ConstOverride::ofFunction("silu")}, {"ACT_FIRST", ConstOverride::ofInt(1)}};
    Kernel k = kernel("compile_time_params.spn", "act_and_mul", o);
    const int64_t M = 3, D = 300;  // blocks of 256 striding over 300 columns
    checkActAndMul<BF16>(k, rt(), true, silu, random<BF16>(size_t(M * D), -6, 6), random<BF16>(size_t(M * D), -3, 3), M,
                         D);
  });
}

TEST_F(MathBuiltins, ActAndMulGeluTanhF16) {
  atBothWidths([&] {
    KernelOptions o;
    o.consts = {{"ACT", ConstOverride::ofFunction("gelu_tanh")}, {"ACT_FIRST", ConstOverride::ofInt(0)}};
    Kernel k = kernel("compile_time_params.spn", "act_and_mul", o);
    const int64_t M = 3, D = 300;
    checkActAndMul<F16>(k, rt(), false, geluTanh, random<F16>(size_t(M * D), -3, 3), random<F16>(size_t(M * D), -6, 6),
                        M, D);
  });
}

void checkRotate(Kernel& k, Runtime& rt, bool neox, int64_t W, const std::vector<float>& x, const std::vector<float>& c,
                 const std::vector<float>& s) {
  const int64_t N = int64_t(x.size()) / W;
  auto dx = Buffer<float>::of(rt, x), dc = Buffer<float>::of(rt, c), ds = Buffer<float>::of(rt, s);
  k.launch(nullptr, {dx.arg({N, W}), dc.arg({W}), ds.arg({W})});
  auto got = dx.read();
  Check check("x");
  for (int64_t i = 0; i < N; ++i) {
    std::vector<double> want(static_cast<size_t>(W));
    for (int64_t kk = 0; kk < W / 2; ++kk) {
      const int64_t ia = neox ? kk : 2 * kk, ib = neox ? kk + W / 2 : 2 * kk + 1;
      const double a = x[size_t(i * W + ia)], b = x[size_t(i * W + ib)];
      want[size_t(ia)] = f32(double(f32(a * c[size_t(kk)])) - f32(b * s[size_t(kk)]));
      want[size_t(ib)] = f32(double(f32(b * c[size_t(kk)])) + f32(a * s[size_t(kk)]));
    }
    for (int64_t j = 0; j < W; ++j) check.exact(at(i, j), got[size_t(i * W + j)], want[size_t(j)]);
  }
}

TEST_F(MathBuiltins, RotateNeoxW4) {
  atBothWidths([&] {
    KernelOptions o;
    o.consts = {{"NEOX", ConstOverride::ofInt(1)}, {"W", ConstOverride::ofInt(4)}};
    Kernel k = kernel("compile_time_params.spn", "rotate", o);
    const int64_t N = 300, W = 4;
    checkRotate(k, rt(), true, W, random<float>(size_t(N * W), -2, 2), random<float>(size_t(W), -1, 1),
                random<float>(size_t(W), -1, 1));
  });
}

TEST_F(MathBuiltins, RotatePairsW8) {
  atBothWidths([&] {
    KernelOptions o;
    o.consts = {{"NEOX", ConstOverride::ofInt(0)}, {"W", ConstOverride::ofInt(8)}};
    Kernel k = kernel("compile_time_params.spn", "rotate", o);
    const int64_t N = 300, W = 8;
    checkRotate(k, rt(), false, W, random<float>(size_t(N * W), -2, 2), random<float>(size_t(W), -1, 1),
                random<float>(size_t(W), -1, 1));
  });
}

}  // namespace

}  // namespace spindle::cpu_golden
#endif  // SPINDLE_HAVE_CPU_TARGET
