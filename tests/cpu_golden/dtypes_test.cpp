// Element types: dtypes_f16_bf16, dtypes_int, generic (axpby on f32, f64,
// f16, bf16; clamp_count on i32, f32), type_tests (bf16, f16, f32, f64),
// types_bits (bf16, f32), math_classify (f32, f64), body_consts (bf16 at
// N=4096, f32 at N=1000), body_consts_launch (bf16, f32) and literals.
// f16/bf16/fp8 results are rounded by this folder's own FloatFormat.
#include <string>
#include <vector>

#include "cpu_golden.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::cpu_golden {
namespace {

// v rounded to T as a store (or a cast) of the kernel's value does.
template <class T>
double roundAs(double v) {
  if constexpr (std::is_same_v<T, float>) return f32(v);
  else if constexpr (std::is_same_v<T, double>) return v;
  else return roundTo(Elem<T>::format, v);
}

template <class T>
const char* typeName() {
  if constexpr (std::is_same_v<T, float>) return "f32";
  else if constexpr (std::is_same_v<T, double>) return "f64";
  else if constexpr (std::is_same_v<T, F16>) return "f16";
  else if constexpr (std::is_same_v<T, BF16>) return "bf16";
  else return "i32";
}

class Dtypes : public GoldenTest {
 protected:
  template <class T>
  void axpby();
  template <class T>
  void clampCount();
  template <class T>
  void scaleByType();
  template <class T>
  void convert();
  template <class T>
  void classify();
  template <class T>
  void bodyConsts(int64_t N);
  template <class T>
  void bodyConstsLaunch();
};

// ---- dtypes_f16_bf16.spn: rms_scale

TEST_F(Dtypes, RmsScaleF16Bf16) {
  atBothWidths([&] {
    Kernel k = kernel("dtypes_f16_bf16.spn", "rms_scale");
    const int64_t M = 4, B = 128;
    for (int64_t N : {300, 64}) {
      SCOPED_TRACE("N = " + std::to_string(N));
      std::vector<F16> x = random<F16>(size_t(M * N), -2, 2);
      std::vector<BF16> g = random<BF16>(size_t(N), -1.5, 1.5);
      const double bias = value(from<BF16>(uniform(-1, 1)));
      auto dx = upload(x);
      auto dg = upload(g);
      auto y = poisoned<BF16>(size_t(M * N));
      auto clipped = poisoned<F16>(size_t(M));
      k.launch(nullptr, {dx.arg({M, N}), dg.arg({N}), y.arg({M, N}), scalarOf<BF16>(bias), clipped.arg({M})});
      auto gy = y.read();
      auto gc = clipped.read();
      Check cy("y"), cc("clipped");
      for (int64_t r = 0; r < M; ++r) {
        double ss = 0;
        for (int64_t j = 0; j < N; ++j) ss += value(x[size_t(r * N + j)]) * value(x[size_t(r * N + j)]);
        const double ms = ss / N + double(f32(1e-6)), rstd = 1 / std::sqrt(ms);
        // The f32 sum of exact squares, the divide and add, rsqrtf (a square
        // root and a divide): relative errors that add up.
        const double rel = sumTol32(ss, int((N + B - 1) / B) + levels(B) + 1) / ss + 6 * 0x1p-24;
        double peak = 0, peakTol = 0;
        for (int64_t j = 0; j < N; ++j) {
          const double xg = value(x[size_t(r * N + j)]) * value(g[size_t(j)]);
          const double out = xg * rstd + bias;
          const double tol = std::fabs(xg * rstd) * (rel + 3 * 0x1p-24) + ulp32(out);
          cy.near(at(r, j), value(gy[size_t(r * N + j)]), out, tol + 0.5 * ulpIn(kBF16, std::fabs(out) + tol));
          peak = std::max(peak, std::fabs(out)), peakTol = std::max(peakTol, tol);
        }
        // The largest |out| rounded to f16 (the largest of the rounded), plus
        // 1, rounded again.
        const double roundedTol = peakTol + 0.5 * ulpIn(kF16, peak + peakTol);
        cc.near(at(r), value(gc[size_t(r)]), peak + 1, roundedTol + 0.5 * ulpIn(kF16, peak + 1 + roundedTol));
      }
    }
  });
}

// ---- dtypes_int.spn: quantize

TEST_F(Dtypes, QuantizeInt) {
  atBothWidths([&] {
    Kernel k = kernel("dtypes_int.spn", "quantize");
    const int64_t N = 700;
    std::vector<float> x = random<float>(size_t(N), -3, 3);
    x[0] = 0, x[1] = -0.0f, x[2] = 3, x[3] = -3;
    const float scale = float(uniform(0.01, 0.03));  // past +-127 (and +-32767) now and then
    const uint64_t check0 = bits64();
    auto dx = upload(x);
    auto q8 = poisoned<int8_t>(size_t(N));
    auto u8v = poisoned<uint8_t>(size_t(N));
    auto q16 = poisoned<int16_t>(size_t(N));
    auto u16v = poisoned<uint16_t>(size_t(N));
    auto mixed = poisoned<uint64_t>(size_t(N)), checksum = upload(std::vector<uint64_t>{check0});
    auto deq = poisoned<float>(size_t(N));
    k.launch(nullptr, {dx.arg({N}), scalar(scale), q8.arg({N}), u8v.arg({N}), q16.arg({N}), u16v.arg({N}),
                       mixed.arg({N}), checksum.arg({1}), deq.arg({N})});
    auto gq8 = q8.read();
    auto gu8 = u8v.read();
    auto gq16 = q16.read();
    auto gu16 = u16v.read();
    auto gmixed = mixed.read(), gsum = checksum.read();
    auto gdeq = deq.read();
    Check c8("q8, u8v"), c16("q16, u16v"), cm("mixed"), cd("deq");
    uint64_t sum = check0;
    for (int64_t i = 0; i < N; ++i) {
      const size_t u = size_t(i);
      const double r = std::floor(f32(double(f32(double(x[u]) / scale)) + 0.5));
      const int32_t code8 = int32_t(std::clamp(r, -127.0, 127.0));
      const double r16 = std::floor(f32(double(f32(double(f32(x[u] * 256.0)) / scale)) + 0.5));
      const int32_t code16 = int32_t(std::clamp(r16, -32767.0, 32767.0));
      c8.exact(at(i), gq8[u], code8);
      c8.exact(at(i), gu8[u], code8 + 128);
      c16.exact(at(i), gq16[u], code16);
      c16.exact(at(i), gu16[u], code16 + 32768);
      uint64_t h = 0xcbf29ce484222325ull ^ uint64_t(code8 + 128);
      h *= 0x100000001b3ull;
      h ^= h >> 33;
      cm.exact(at(i), double(gmixed[u] >> 11), double(h >> 11));  // doubles hold 53 bits: compare twice
      cm.exact(at(i), double(gmixed[u] & 0x7ff), double(h & 0x7ff));
      sum += uint64_t(code16 + 32768) + uint64_t(code8 + 128);
      cd.exact(at(i), gdeq[u], f32(double(code8) * scale));
    }
    EXPECT_EQ(gsum[0], sum);
  });
}

// ---- generic.spn: axpby[T] for f32, f64, f16, bf16

template <class T>
void Dtypes::axpby() {
  SCOPED_TRACE(std::string("T = ") + typeName<T>());
  Kernel k = kernel("generic.spn", "axpby");
  const int64_t N = 1000;
  std::vector<T> x = random<T>(size_t(N), -10, 10), y0 = random<T>(size_t(N), -10, 10);
  const double a = value(from<T>(uniform(-3, 3))), b = value(from<T>(uniform(-3, 3)));
  auto dx = upload(x), dy = upload(y0);
  k.launch(nullptr, {dx.arg({N}), dy.arg({N}), scalarOf<T>(a), scalarOf<T>(b)});
  auto got = dy.read();
  Check check(std::string("y (") + typeName<T>() + ")");
  for (int64_t i = 0; i < N; ++i) {
    const size_t u = size_t(i);
    // f16/bf16 compute in f32 (their products are exact there); f64 in f64.
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const double acc = roundAs<T>(C(a * value(x[u])));
    check.exact(at(i), value(got[u]), roundAs<T>(C(acc + double(C(b * value(y0[u]))))));
  }
}
TEST_F(Dtypes, AxpbyF32) {
  atBothWidths([&] { axpby<float>(); });
}
TEST_F(Dtypes, AxpbyF64) {
  atBothWidths([&] { axpby<double>(); });
}
TEST_F(Dtypes, AxpbyF16) {
  atBothWidths([&] { axpby<F16>(); });
}
TEST_F(Dtypes, AxpbyBf16) {
  atBothWidths([&] { axpby<BF16>(); });
}

// ---- generic.spn: clamp_count[T] for i32, f32

template <class T>
void Dtypes::clampCount() {
  SCOPED_TRACE(std::string("T = ") + typeName<T>());
  Kernel k = kernel("generic.spn", "clamp_count");
  const int64_t N = 700;
  std::vector<T> x = random<T>(size_t(N), -1000, 1000);
  if constexpr (std::is_same_v<T, float>) x[3] = NAN, x[4] = -0.0f, x[5] = INFINITY;
  const T lo = T(integer(1, 300)) * T(integer(0, 1) ? 1 : -1);
  const int32_t count0 = int32_t(integer(-50, 50));
  auto dx = upload(x), out = poisoned<T>(size_t(N));
  auto count = upload(std::vector<int32_t>{count0});
  k.launch(nullptr, {dx.arg({N}), out.arg({N}), scalarOf<T>(double(lo)), count.arg({1})});
  auto got = out.read();
  Check check(std::string("out (") + typeName<T>() + ")");
  int64_t above = 0;
  for (int64_t i = 0; i < N; ++i) {
    const T v = x[size_t(i)];
    above += double(v) > double(lo) * 2;
    // fmaxf: a NaN is ignored.
    check.exact(at(i), double(got[size_t(i)]), std::isnan(double(v)) ? double(lo) : std::max(double(v), double(lo)));
  }
  EXPECT_EQ(count.read()[0], count0 + above);
}
TEST_F(Dtypes, ClampCountI32) {
  atBothWidths([&] { clampCount<int32_t>(); });
}
TEST_F(Dtypes, ClampCountF32) {
  atBothWidths([&] { clampCount<float>(); });
}

// ---- type_tests.spn: scale_by_type[T] for bf16, f16, f32, f64

template <class T>
void Dtypes::scaleByType() {
  SCOPED_TRACE(std::string("T = ") + typeName<T>());
  Kernel k = kernel("type_tests.spn", "scale_by_type");
  const int64_t N = 300;
  std::vector<T> x = random<T>(size_t(N), -100, 100);
  if constexpr (!std::is_same_v<T, double>) {
    // Past f16's range once bumped (clamped to 65504 for f16), and a NaN
    // (fminf ignores it: 65504 for f16).
    x[7] = from<T>(65504), x[8] = from<T>(-65504), x[9] = from<T>(INFINITY), x[10] = from<T>(NAN);
  } else {
    x[7] = 1e39, x[8] = 3.0000001;  // rounded to f32 first
  }
  auto dx = upload(x);
  auto y = poisoned<T>(size_t(N));
  auto seen = poisoned<int32_t>(size_t(N));
  k.launch(nullptr, {dx.arg({N}), y.arg({N}), seen.arg({N})});
  auto gy = y.read();
  auto gs = seen.read();
  const bool half = std::is_same_v<T, F16> || std::is_same_v<T, BF16>;
  const double eps = f32(half ? 1e-3 : 1e-7);
  const int wantSeen = std::is_same_v<T, BF16> ? 16 : std::is_same_v<T, F16> ? 15 : std::is_same_v<T, float> ? 32 : 64;
  Check cy(std::string("y (") + typeName<T>() + ")"), cs("seen");
  for (int64_t i = 0; i < N; ++i) {
    const double v = f32(value(x[size_t(i)]));
    double bumped = std::is_same_v<T, double> ? f32(v + eps) : f32(v * f32(1 + eps));
    if (std::is_same_v<T, F16>) bumped = std::isnan(bumped) ? 65504 : std::min(bumped, 65504.0);
    cy.exact(at(i), value(gy[size_t(i)]), roundAs<T>(bumped));
    cs.exact(at(i), gs[size_t(i)], wantSeen);
  }
}
TEST_F(Dtypes, TypeTestsBf16) {
  atBothWidths([&] { scaleByType<BF16>(); });
}
TEST_F(Dtypes, TypeTestsF16) {
  atBothWidths([&] { scaleByType<F16>(); });
}
TEST_F(Dtypes, TypeTestsF32) {
  atBothWidths([&] { scaleByType<float>(); });
}
TEST_F(Dtypes, TypeTestsF64) {
  atBothWidths([&] { scaleByType<double>(); });
}

// ---- types_bits.spn: convert[T] for bf16, f32

// saturate(T, v) to a float format: NaN stays, +-max clamps, then rounds.
double saturateTo(const FloatFormat& f, double v) {
  if (std::isnan(v)) return v;
  return roundTo(f, std::clamp(v, -f.maxFinite, f.maxFinite));
}
// saturate to an integer type: NaN gives 0, the bounds clamp, else truncation.
template <class I>
I saturateInt(double v) {
  if (std::isnan(v)) return 0;
  if (v <= double(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (v >= std::ldexp(1.0, std::numeric_limits<I>::digits)) return std::numeric_limits<I>::max();
  return I(std::trunc(v));
}

template <class T>
void Dtypes::convert() {
  SCOPED_TRACE(std::string("T = ") + typeName<T>());
  constexpr bool isBf16 = std::is_same_v<T, BF16>;
  Kernel k = kernel("types_bits.spn", "convert");
  const int64_t N = 400;
  // Magnitudes from 1e-13 to 10 (each saturation is reached by some), with
  // either sign, and the special values.
  std::vector<T> x(static_cast<size_t>(N));
  for (auto& v : x) v = from<T>((integer(0, 1) ? 1 : -1) * std::pow(10.0, uniform(-13, 1)));
  const double special[] = {0.0, -0.0, NAN, INFINITY, -INFINITY, 4.48, 4.64, 4.65, -4.64, 1.0, 0.0655, 1e-11};
  for (size_t s = 0; s < std::size(special); ++s) x[s * 5] = from<T>(special[s]);
  std::vector<int64_t> big0(static_cast<size_t>(N));
  for (auto& v : big0) v = integer(0, 2) == 0 ? integer(0, 255) : int64_t(bits64()) >> integer(0, 62);
  auto dx = upload(x);
  auto e4 = poisoned<F8E4M3>(size_t(N));
  auto e5 = poisoned<F8E5M2>(size_t(N));
  auto h = poisoned<F16>(size_t(N));
  auto b = poisoned<BF16>(size_t(N));
  auto q = poisoned<int8_t>(size_t(N));
  auto w = poisoned<uint16_t>(size_t(N));
  auto big = upload(big0);
  auto small = poisoned<uint8_t>(size_t(N));
  auto bits = poisoned<uint32_t>(size_t(N));
  auto limits = poisoned<double>(8);
  k.launch(nullptr, {dx.arg({N}), e4.arg({N}), e5.arg({N}), h.arg({N}), b.arg({N}), q.arg({N}), w.arg({N}),
                     big.arg({N}), small.arg({N}), bits.arg({N}), limits.arg({8})});
  auto gx = dx.read();
  auto ge4 = e4.read();
  auto ge5 = e5.read();
  auto gh = h.read();
  auto gb = b.read();
  auto gq = q.read();
  auto gw = w.read();
  auto gbig = big.read();
  auto gsmall = small.read();
  auto gbits = bits.read();
  auto glimits = limits.read();
  Check ce4("e4"), ce5("e5"), ch("h"), cb("b"), cq("q"), csmall("small"), cbig("big"), cbits("bits"), cw("w, x");
  for (int64_t i = 0; i < N; ++i) {
    const size_t u = size_t(i);
    const float v = f32(value(x[u]));
    const double e4sat = saturateTo(kE4M3, f32(double(v) * 100));
    const double e5sat = saturateTo(kE5M2, f32(e4sat * 1000));
    const uint32_t vbits = bitsOf(v);
    // Bits of v past f32's upper half: a plain cast (NaN past 464) replaces e4.
    const double e4want = (vbits & 0xFFFF) > 0x8000 ? roundTo(kE4M3, floatFromBits(vbits | 0xFFFF)) : e4sat;
    ce4.exact(at(i), value(ge4[u]), e4want);
    ce5.exact(at(i), value(ge5[u]), e5sat);
    ch.exact(at(i), value(gh[u]), saturateTo(kF16, f32(double(v) * double(1e6f))));
    cb.exact(at(i), value(gb[u]), saturateTo(kBF16, e5sat));
    cq.exact(at(i), gq[u], saturateInt<int8_t>(std::nearbyint(f32(double(v) * 127))));
    csmall.exact(at(i), gsmall[u], double(std::clamp<int64_t>(big0[u], 0, 255)));
    const int64_t wantBig = saturateInt<int64_t>(double(v) * 1e30);
    cbig.exact(at(i), double(gbig[u] >> 11), double(wantBig >> 11));  // 53 bits at a time
    cbig.exact(at(i), double(gbig[u] & 0x7ff), double(wantBig & 0x7ff));
    cbits.exact(at(i), gbits[u], vbits);
    if constexpr (isBf16) {
      cw.exact(at(i), gw[u], x[u].bits);                           // the stored bits
      cw.exact(at(i), double(gx[u].bits), double(x[u].bits | 1));  // stored back with the last bit set
    } else {
      cw.that(at(i), isPoison(gw[u]), "w written for T = f32");
      cw.exact(at(i), value(gx[u]), value(x[u]));
    }
  }
  const double maxT = isBf16 ? 0x1.fep127 : double(std::numeric_limits<float>::max());
  const double want[8] = {maxT, -maxT, 0x1p-126, 57344.0 + 0x1p-6, -0x1p63, 0x1p64, std::numeric_limits<double>::max(),
                          32767};
  Check cl("limits");
  for (int j = 0; j < 8; ++j) cl.exact(at(j), glimits[size_t(j)], want[j]);
}
TEST_F(Dtypes, TypesBitsBf16) {
  atBothWidths([&] { convert<BF16>(); });
}
TEST_F(Dtypes, TypesBitsF32) {
  atBothWidths([&] { convert<float>(); });
}

// ---- math_classify.spn: classify[T] for f32, f64

template <class T>
void Dtypes::classify() {
  SCOPED_TRACE(std::string("T = ") + typeName<T>());
  Kernel k = kernel("math_classify.spn", "classify");
  const int64_t N = 300;
  std::vector<T> x = random<T>(size_t(N), -50, 50);
  const double special[] = {0.0, -0.0, NAN, -NAN, INFINITY, -INFINITY, 1e-40, -1e-40, 1e300, -1e300};
  for (size_t s = 0; s < std::size(special); ++s) x[s * 3] = T(special[s]);
  std::vector<BF16> hv = random<BF16>(size_t(N), -3, 3);
  const double hspecial[] = {0.0, -0.0, NAN, -NAN, INFINITY, -INFINITY};
  for (size_t s = 0; s < std::size(hspecial); ++s) hv[s * 7 + 1] = from<BF16>(hspecial[s]);
  auto dx = upload(x);
  auto dh = upload(hv);
  auto flags = poisoned<int32_t>(size_t(N));
  auto y = poisoned<T>(size_t(N));
  k.launch(nullptr, {dx.arg({N}), dh.arg({N}), flags.arg({N}), y.arg({N})});
  auto gf = flags.read();
  auto gy = y.read();
  Check cf("flags"), cy(std::string("y (") + typeName<T>() + ")");
  const double ef = f32(2.718281828459045), pif = f32(3.141592653589793), twoPif = f32(6.283185307179586);
  for (int64_t i = 0; i < N; ++i) {
    const double v = x[size_t(i)], hb = value(hv[size_t(i)]);
    const int want = (std::isnan(v) ? 1 : 0) | (std::isinf(v) ? 2 : 0) | (std::isfinite(v) && std::signbit(v) ? 4 : 0) |
                     (std::isnan(hb) || std::signbit(hb) ? 8 : 0);
    cf.exact(at(i), gf[size_t(i)], want);
    const double grown = f32(double(f32(v)) * ef);  // grow() is f32 whatever T
    const double wantY = std::is_same_v<T, float> ? f32(double(f32(grown * pif)) + twoPif)
                                                  : grown * 3.141592653589793 + 6.283185307179586;
    cy.exact(at(i), gy[size_t(i)], wantY);
  }
}
TEST_F(Dtypes, MathClassifyF32) {
  atBothWidths([&] { classify<float>(); });
}
TEST_F(Dtypes, MathClassifyF64) {
  atBothWidths([&] { classify<double>(); });
}

// ---- body_consts.spn: scale_rows[T] at static N; body_consts_launch.spn: scale[T]

template <class T>
void Dtypes::bodyConsts(int64_t N) {
  SCOPED_TRACE(std::string("T = ") + typeName<T>() + ", static N = " + std::to_string(N));
  KernelOptions o;
  o.staticDims = {"N"};  // @static in the file
  Kernel k = kernel("body_consts.spn", "scale_rows", o);
  const int64_t M = 3;
  std::vector<T> x = random<T>(size_t(M * N), -100, 100);
  auto dx = upload(x), y = poisoned<T>(size_t(M * N));
  k.launch(nullptr, {dx.arg({M, N}), y.arg({M, N})});
  auto got = y.read();
  Check check("y");
  for (int64_t i = 0; i < M * N; ++i) check.exact(at(i / N, i % N), value(got[size_t(i)]), 2 * value(x[size_t(i)]));
}
TEST_F(Dtypes, BodyConstsBf16N4096) {
  atBothWidths([&] { bodyConsts<BF16>(4096); });
}
TEST_F(Dtypes, BodyConstsF32N1000) {
  atBothWidths([&] { bodyConsts<float>(1000); });
}

template <class T>
void Dtypes::bodyConstsLaunch() {
  SCOPED_TRACE(std::string("T = ") + typeName<T>());
  Kernel k = kernel("body_consts_launch.spn", "scale");
  const int64_t N = 5000;  // blocks of 2048 elements
  std::vector<T> x = random<T>(size_t(N), -100, 100);
  auto dx = upload(x), y = poisoned<T>(size_t(N));
  k.launch(nullptr, {dx.arg({N}), y.arg({N})});
  auto got = y.read();
  Check check("y");
  for (int64_t i = 0; i < N; ++i) check.exact(at(i), value(got[size_t(i)]), 2 * value(x[size_t(i)]));
}
TEST_F(Dtypes, BodyConstsLaunchBf16) {
  atBothWidths([&] { bodyConstsLaunch<BF16>(); });
}
TEST_F(Dtypes, BodyConstsLaunchF32) {
  atBothWidths([&] { bodyConstsLaunch<float>(); });
}

// ---- literals.spn: blend

TEST_F(Dtypes, LiteralsBlend) {
  atBothWidths([&] {
    Kernel k = kernel("literals.spn", "blend");
    const int64_t N = 300;
    std::vector<float> x = random<float>(size_t(N), -5, 5);
    x[1] = 2e30f, x[2] = -2e30f, x[3] = NAN, x[4] = INFINITY;
    std::vector<double> d = random<double>(size_t(N), -5, 5);
    d[1] = 1e301, d[2] = NAN, d[3] = 0, d[4] = -1e301, d[5] = 1e300;
    std::vector<uint32_t> bits0 = random<uint32_t>(size_t(N), 0, UINT32_MAX);
    auto dx = upload(x);
    auto dd = upload(d);
    auto bits = upload(bits0);
    auto out32 = poisoned<float>(size_t(N * 2));
    auto out64 = poisoned<double>(size_t(N * 3));
    auto mask = poisoned<Bool8>(size_t(N));
    auto wide = poisoned<int64_t>(size_t(N));
    k.launch(nullptr, {dx.arg({N}), dd.arg({N}), out32.arg({N, 2}), out64.arg({N, 3}), mask.arg({N}), wide.arg({N}),
                       bits.arg({N})});
    auto g32 = out32.read();
    auto g64 = out64.read();
    auto gm = mask.read();
    auto gw = wide.read();
    auto gb = bits.read();
    Check c32("out32"), c64("out64"), cm("mask"), cw("wide"), cb("bits");
    const double thousandth = f32(1e-3);
    for (int64_t i = 0; i < N; ++i) {
      const size_t u = size_t(i);
      const double v = x[u], e = d[u];
      c32.exact(at(i, 0), g32[u * 2],
                f32(double(f32(double(f32(double(f32(v * 2)) + double(f32(0.5 * v)))) + 0.25)) -
                    double(f32(thousandth * v))));
      c32.exact(at(i, 1), g32[u * 2 + 1], v > 1e30 ? INFINITY : v < -1e30 ? -INFINITY : v);
      c64.exact(at(i, 0), g64[u * 3], (0.5 * e + e * 2.0) + 0.1 * (e - 1.5e-7));
      // pow from long double, rounded: libm's pow is within an ulp of it.
      const double p = double(std::pow(static_cast<long double>(e), static_cast<long double>(0.1)));
      const double want1 = ((std::fmin(e, 0.1) + std::fmax(0.1, e)) + std::fma(e, 0.1, 0.3)) + p;
      c64.near(at(i, 1), g64[u * 3 + 1], want1, ulp64(p) + 2 * ulp64(want1));
      c64.exact(at(i, 2), g64[u * 3 + 2], ((e > 0 ? 0.1 : 0.2) + e) + (e > 1e300 ? INFINITY : 0.0));
      const bool big = e > 1e300 || std::isnan(e);
      cm.exact(at(i), gm[u].byte, big ? 1 : 0);
      cw.exact(at(i), double(gw[u]), double(i * 3 + 0x7fffffff + int64_t(big)));
      cb.exact(at(i), gb[u], double(uint32_t(bits0[u] * 2u + 0xffu)));
    }
  });
}

}  // namespace

}  // namespace spindle::cpu_golden
#endif  // SPINDLE_HAVE_CPU_TARGET
