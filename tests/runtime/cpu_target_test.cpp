// The cpu target end to end: .spn kernels compiled by the host compiler and
// run with GPU semantics through the public Runtime API, checked by value
// against references computed here in double precision.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "spindle/runtime.hpp"
#include "test_util.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::test {
namespace {

using ::testing::HasSubstr;

std::vector<float> randomFloats(size_t n, std::mt19937& rng, float lo = -4, float hi = 4) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

class CpuTarget : public ::testing::TestWithParam<const char*> {};

// samples/softmax.spn: block_max and block_sum (warp shuffles and the block
// barrier), a static row length that is not a multiple of the block.
TEST_P(CpuTarget, SoftmaxMatchesADoublePrecisionReference) {
  Runtime rt(cpuOptions(GetParam()));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  EXPECT_EQ(rt.backend(), BackendKind::Cpu);
  Module m = rt.loadModule(std::string(SPINDLE_SOURCE_DIR) + "/samples/softmax.spn");
  KernelOptions ko;
  ko.staticDims = {"N"};
  Kernel k = m.kernel("softmax", ko);
  std::mt19937 rng(std::random_device{}());
  const int64_t M = 5, N = 1000;
  std::vector<float> x = randomFloats(size_t(M * N), rng), y(x.size(), -1.0f);
  DeviceBuffer dx = rt.allocate(x.size() * 4), dy = rt.allocate(y.size() * 4);
  rt.copyToDevice(dx, x.data(), x.size() * 4);
  k.launch(nullptr, {tensor(dx.data(), ScalarType::F32, {M, N}), tensor(dy.data(), ScalarType::F32, {M, N})});
  rt.copyToHost(y.data(), dy, y.size() * 4);
  for (int64_t r = 0; r < M; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < N; ++j) mx = std::max(mx, double(x[size_t(r * N + j)]));
    for (int64_t j = 0; j < N; ++j) sum += std::exp(double(x[size_t(r * N + j)]) - mx);
    for (int64_t j = 0; j < N; ++j) {
      double want = std::exp(double(x[size_t(r * N + j)]) - mx) / sum;
      // f32 arithmetic, libm's expf: a few ulp of the value.
      ASSERT_NEAR(y[size_t(r * N + j)], want, 1e-6 * want + 1e-9) << "row " << r << " column " << j;
    }
  }
}

// A failed assert in a checked build stops the launch with the .spn
// location, the block and the thread, and the message.
TEST_P(CpuTarget, AFailedAssertReportsItsLocation) {
  Runtime rt(cpuOptions(GetParam(), /*checked=*/true));
  Module m = rt.loadModule(std::string(SPINDLE_SOURCE_DIR) + "/tests/golden/kernels/asserts.spn");
  Kernel k = m.kernel("gather_scale");
  const int64_t N = 300;
  std::vector<float> x(N, 1.0f);
  std::vector<int32_t> idx(N);
  for (int64_t i = 0; i < N; ++i) idx[size_t(i)] = int32_t(i);
  idx[261] = int32_t(N);  // out of range: block 1, thread 5
  DeviceBuffer dx = rt.allocate(N * 4), dy = rt.allocate(N * 4), di = rt.allocate(N * 4);
  rt.copyToDevice(dx, x.data(), N * 4);
  rt.copyToDevice(di, idx.data(), N * 4);
  std::string error = errorFrom([&] {
    k.launch(nullptr, {tensor(dx.data(), ScalarType::F32, {N}), tensor(dy.data(), ScalarType::F32, {N}),
                       tensor(di.data(), ScalarType::I32, {N}), scalar(2.0f)});
  });
  EXPECT_THAT(error, HasSubstr("asserts.spn:20:"));
  EXPECT_THAT(error, HasSubstr("index out of range: check idx"));
  EXPECT_THAT(error, HasSubstr("block (1, 0, 0), thread (5, 0, 0)"));
  // The same launch with every index in range runs and divides by 2.
  idx[261] = 0;
  rt.copyToDevice(di, idx.data(), N * 4);
  k.launch(nullptr, {tensor(dx.data(), ScalarType::F32, {N}), tensor(dy.data(), ScalarType::F32, {N}),
                     tensor(di.data(), ScalarType::I32, {N}), scalar(2.0f)});
  std::vector<float> y(N);
  rt.copyToHost(y.data(), dy, N * 4);
  for (float v : y) ASSERT_EQ(v, 0.5f);
}

// A range's stop is evaluated once, before the first iteration, as Python
// does (docs/language.md 5.8), also where evaluating it again would differ:
// a call with effects, an element the body changes, and a collective, which
// every thread must meet equally often (found by tests/cpu_fuzz, seed 31:
// `range(..., block_max(v) % 3, ...)` with a `return` in the body hung at
// the block_max the condition evaluated again).
TEST_P(CpuTarget, ARangeStopIsEvaluatedOnce) {
  Runtime rt(cpuOptions(GetParam(), /*checked=*/true));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Module m = rt.loadModuleFromString("stops.spn", R"(
@grid(1)
@block(64)
kernel stops(x: i32[64], y: i32[64], out: i32[64, 3]):
    t = thread_id()
    calls = 0
    def bound() -> i32:
        nonlocal calls
        calls += 1
        return 3
    n = 0
    for k in range(bound()):
        n += 1
    trips = 0
    for k in range(x[t]):
        x[t] -= 1
        trips += 1
    out[t, 0] = calls * 100 + n
    out[t, 1] = trips
    for k in range(block_max(y[t]) + 1):
        if t == k:
            out[t, 2] = k
            return
    out[t, 2] = -1
)");
  Kernel k = m.kernel("stops");
  std::vector<int32_t> x(64), y(64), out(64 * 3, 7);
  for (int t = 0; t < 64; ++t) x[size_t(t)] = t % 5, y[size_t(t)] = t % 4;
  DeviceBuffer dx = rt.allocate(64 * 4), dy = rt.allocate(64 * 4), dout = rt.allocate(64 * 3 * 4);
  rt.copyToDevice(dx, x.data(), 64 * 4);
  rt.copyToDevice(dy, y.data(), 64 * 4);
  k.launch(nullptr, {tensor(dx.data(), ScalarType::I32, {64}), tensor(dy.data(), ScalarType::I32, {64}),
                     tensor(dout.data(), ScalarType::I32, {64, 3})});
  rt.copyToHost(out.data(), dout, out.size() * 4);
  for (int t = 0; t < 64; ++t) {
    EXPECT_EQ(out[size_t(t * 3)], 103) << "thread " << t << ": bound() is called once, the loop runs 3 times";
    EXPECT_EQ(out[size_t(t * 3 + 1)], t % 5) << "thread " << t << ": x[t] as it was before the loop";
    EXPECT_EQ(out[size_t(t * 3 + 2)], t < 4 ? t : -1) << "thread " << t;
  }
}

// A shift has the type of both its operands (docs/language.md 6.5): an i32
// shifted by an i64 count is an i64 shift, a u8 shifted by a u32 a u32
// one. C++ shifts in the left operand's type, so the left operand is
// converted (seen in the HIP of tests/cpu_fuzz's programs: `x << n` with x
// an i32 gave 1 << (n & 31) for n >= 32, where the language says 2^n).
TEST_P(CpuTarget, AShiftHasTheTypeOfBothOperands) {
  Runtime rt(cpuOptions(GetParam(), /*checked=*/true));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Module m = rt.loadModuleFromString("shifts.spn", R"(
@grid(1)
@block(64)
kernel shifts(n: i64[64], c: u32[64], out: i64[64], bits: u64[64], small: u32[64]):
    t = thread_id()
    x: i32 = 1
    out[t] = x << n[t]
    y: u32 = 0xffffffff
    bits[t] = y << u64(n[t])
    z: u8 = 255
    small[t] = z << c[t]
)");
  Kernel k = m.kernel("shifts");
  std::vector<int64_t> n(64), out(64);
  std::vector<uint32_t> c(64), small(64);
  std::vector<uint64_t> bits(64);
  for (int t = 0; t < 64; ++t) n[size_t(t)] = t % 63, c[size_t(t)] = uint32_t(t % 32);
  DeviceBuffer dn = rt.allocate(64 * 8), dc = rt.allocate(64 * 4), dout = rt.allocate(64 * 8),
               dbits = rt.allocate(64 * 8), dsmall = rt.allocate(64 * 4);
  rt.copyToDevice(dn, n.data(), 64 * 8);
  rt.copyToDevice(dc, c.data(), 64 * 4);
  k.launch(nullptr, {tensor(dn.data(), ScalarType::I64, {64}), tensor(dc.data(), ScalarType::U32, {64}),
                     tensor(dout.data(), ScalarType::I64, {64}), tensor(dbits.data(), ScalarType::U64, {64}),
                     tensor(dsmall.data(), ScalarType::U32, {64})});
  rt.copyToHost(out.data(), dout, 64 * 8);
  rt.copyToHost(bits.data(), dbits, 64 * 8);
  rt.copyToHost(small.data(), dsmall, 64 * 4);
  for (int t = 0; t < 64; ++t) {
    EXPECT_EQ(out[size_t(t)], int64_t(1) << n[size_t(t)]) << "i32(1) << " << n[size_t(t)];
    EXPECT_EQ(bits[size_t(t)], uint64_t(0xffffffff) << n[size_t(t)])
        << "u32(0xffffffff) << u64(" << n[size_t(t)] << ")";
    EXPECT_EQ(small[size_t(t)], uint32_t(255) << c[size_t(t)]) << "u8(255) << u32(" << c[size_t(t)] << ")";
  }
}

// A condition that starts with a cast of a call of casts of one name reads
// to C++ as a declaration too; g++ refused it ("redefinition of 'uint32_t
// v'", "expression list treated as compound expression") until the printer
// parenthesized such conditions (found by tests/cpu_fuzz, seeds 1840,
// 400458, 400682).
TEST_P(CpuTarget, AConditionThatIsACastCompiles) {
  Runtime rt(cpuOptions(GetParam(), /*checked=*/true));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Module m = rt.loadModuleFromString("cast_conditions.spn", R"(
@grid(1)
@block(32)
kernel casts(x: u64[32], out: i32[32]):
    t = thread_id()
    v = x[t]
    r = 0
    if bool(cdiv(u32(v), u32(v))):
        r = 10
    w = 0
    while bool(cdiv(u32(v), u32(v)) - u32(w)):
        w += 1
    if bool(max(i64(v), i64(v))) and w > 0:
        r += 100
    if u64(cdiv(u32(v), u32(v))) + u64(w) > u64(0):
        r += 1000
    out[t] = r + w
)");
  Kernel k = m.kernel("casts");
  std::vector<uint64_t> x(32);
  for (int t = 0; t < 32; ++t) x[size_t(t)] = uint64_t(t + 1);
  std::vector<int32_t> out(32);
  DeviceBuffer dx = rt.allocate(32 * 8), dout = rt.allocate(32 * 4);
  rt.copyToDevice(dx, x.data(), 32 * 8);
  k.launch(nullptr, {tensor(dx.data(), ScalarType::U64, {32}), tensor(dout.data(), ScalarType::I32, {32})});
  rt.copyToHost(out.data(), dout, 32 * 4);
  for (int t = 0; t < 32; ++t) EXPECT_EQ(out[size_t(t)], 1111) << "thread " << t;
}

// The same text as a statement is a declaration of `check` in C++: the call
// never happened, nor the assert inside it.
TEST_P(CpuTarget, ACallStatementInACastIsCalled) {
  Runtime rt(cpuOptions(GetParam(), /*checked=*/true));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Module m = rt.loadModuleFromString("cast_statement.spn", R"(
def check(a: u32) -> u32:
    assert a < 20, "check() ran"
    return a

@grid(1)
@block(32)
kernel casts(out: i32[32]):
    t = thread_id()
    i64(check(u32(t)))
    out[t] = t
)");
  Kernel k = m.kernel("casts");
  DeviceBuffer dout = rt.allocate(32 * 4);
  const std::string error = errorFrom([&] { k.launch(nullptr, {tensor(dout.data(), ScalarType::I32, {32})}); });
  EXPECT_THAT(error, HasSubstr("check() ran"));
}

// A condition that a static dim makes constant is pruned at generation, and
// decided as the dynamic kernel decides it: in the condition's own types
// (u32 wraps, a cast to i8 keeps 8 bits, u64 compares unsigned, u16 operands
// compute in int as the generated C++ does them). Generation
// computed them in 64-bit integers, so the static and dynamic kernels took
// different branches (found by tests/cpu_fuzz, seeds 1236 and 1817).
TEST_P(CpuTarget, PrunedConditionsAreDecidedInTheirTypes) {
  Runtime rt(cpuOptions(GetParam(), /*checked=*/true));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Module m = rt.loadModuleFromString("typed_conditions.spn", R"(
@grid(1)
@block(32)
kernel typed(out: i32[M]):
    if thread_id() == 0:
        r = 0
        if -u32(M) < 0:
            r += 1
        if u32(M) - u32(5) > u32(100):
            r += 2
        if (u32(M) << 31) * u32(2) == u32(0):
            r += 4
        if i8(M * 100) < 0:
            r += 8
        if u64(0) - u64(M) > u64(M):
            r += 16
        if max(u64(0) - u64(1), u64(M)) == u64(M):
            r += 32
        if u16(M) + u16(65535) > u16(5):
            r += 64
        out[0] = r
)");
  KernelOptions staticM;
  staticM.staticDims = {"M"};
  for (int64_t M : {2, 3, 7}) {
    const uint32_t m32 = uint32_t(M);
    int32_t want = 0;
    if (uint32_t(m32 - 5u) > 100u) want += 2;
    if (uint32_t(uint32_t(m32 << 31) * 2u) == 0u) want += 4;
    if (int8_t(M * 100) < 0) want += 8;
    if (uint64_t(0) - uint64_t(M) > uint64_t(M)) want += 16;
    // 8- and 16-bit operands compute in int in the generated code (and so
    // in the pruned condition): no wrap at 2^16.
    want += 64;
    for (bool isStatic : {false, true}) {
      Kernel k = m.kernel("typed", isStatic ? staticM : KernelOptions{});
      DeviceBuffer dout = rt.allocate(size_t(M) * 4);
      k.launch(nullptr, {tensor(dout.data(), ScalarType::I32, {M})});
      int32_t got = -1;
      rt.copyToHost(&got, dout, 4);
      EXPECT_EQ(got, want) << "M = " << M << (isStatic ? ", static" : ", dynamic");
    }
  }
}

// samples/matmul.spn where M and N are whole 128 x 128 tiles (the
// exact-grid binary, which prints none of the bounds tests), where one of
// them is, and where neither is: each launch gets its own binary, and every
// one is right by value.
TEST_P(CpuTarget, MatmulIsRightWithAndWithoutAnExactGrid) {
  Runtime rt(cpuOptions(GetParam()));
  Module m = rt.loadModule(std::string(SPINDLE_SOURCE_DIR) + "/samples/matmul.spn");
  KernelOptions ko;
  ko.staticDims = {"K"};
  Kernel k = m.kernel("matmul", ko);
  std::mt19937 rng(std::random_device{}());
  struct Shape {
    int64_t M, N, K;
    bool mExact, nExact;
  };
  std::vector<std::string> keys;
  for (Shape s :
       {Shape{256, 128, 40, true, true}, Shape{256, 136, 40, true, false}, Shape{200, 136, 40, false, false}}) {
    SCOPED_TRACE(::testing::Message() << s.M << " x " << s.N << " x " << s.K);
    std::vector<float> a = randomFloats(size_t(s.M * s.K), rng, -1, 1), b = randomFloats(size_t(s.K * s.N), rng, -1, 1);
    std::vector<float> c(size_t(s.M * s.N), -1.0f);
    DeviceBuffer da = rt.allocate(a.size() * 4), db = rt.allocate(b.size() * 4), dc = rt.allocate(c.size() * 4);
    rt.copyToDevice(da, a.data(), a.size() * 4);
    rt.copyToDevice(db, b.data(), b.size() * 4);
    std::vector<Arg> args = {tensor(da.data(), ScalarType::F32, {s.M, s.K}),
                             tensor(db.data(), ScalarType::F32, {s.K, s.N}),
                             tensor(dc.data(), ScalarType::F32, {s.M, s.N})};
    CompileReport report = k.compileFor(args.data(), args.size());
    keys.push_back(report.keyHex);
    const std::string mFact = "__builtin_assume(M % 128 == 0);  // a whole number of grid tiles at launch";
    const std::string nFact = "__builtin_assume(N % 128 == 0);  // a whole number of grid tiles at launch";
    EXPECT_EQ(report.source.find(mFact) != std::string::npos, s.mExact);
    EXPECT_EQ(report.source.find(nFact) != std::string::npos, s.nExact);
    EXPECT_EQ(report.source.find("// row0 + ar < M always:") != std::string::npos, s.mExact);
    EXPECT_EQ(report.source.find("// col0 + bc + VEC <= N always:") != std::string::npos, s.nExact);
    k.launch(nullptr, args.data(), args.size());
    rt.copyToHost(c.data(), dc, c.size() * 4);
    for (int64_t i = 0; i < s.M; ++i)
      for (int64_t j = 0; j < s.N; ++j) {
        double want = 0;
        for (int64_t l = 0; l < s.K; ++l) want += double(a[size_t(i * s.K + l)]) * double(b[size_t(l * s.N + j)]);
        ASSERT_NEAR(c[size_t(i * s.N + j)], want, 1e-6 * double(s.K) + 1e-5 * std::abs(want))
            << "C[" << i << ", " << j << "]";
      }
  }
  EXPECT_NE(keys[0], keys[1]);
  EXPECT_NE(keys[1], keys[2]);
  EXPECT_NE(keys[0], keys[2]);
}

// A @tune config's binary states its own tiles: samples/gemm.spn's default
// (128 x 256) and a handle fixing BM = 64, BN = 128 (BK = 64), at shapes that are
// whole tiles of each.
TEST_P(CpuTarget, EachTuneConfigGetsTheExactGridOfItsTiles) {
  Runtime rt(cpuOptions(GetParam()));
  Module m = rt.loadModule(std::string(SPINDLE_SOURCE_DIR) + "/samples/gemm.spn");
  auto source = [&](Kernel k, int64_t M, int64_t N) {
    const int64_t K = 64;
    DeviceBuffer da = rt.allocate(size_t(M * K) * 2), db = rt.allocate(size_t(K * N) * 2),
                 dc = rt.allocate(size_t(M * N) * 4);
    std::vector<Arg> args = {tensor(da.data(), ScalarType::F16, {M, K}), tensor(db.data(), ScalarType::F16, {K, N}),
                             tensor(dc.data(), ScalarType::F32, {M, N})};
    return k.compileFor(args.data(), args.size()).source;
  };
  KernelOptions small;
  small.consts = {
      {"BM", ConstOverride::ofInt(64)}, {"BN", ConstOverride::ofInt(128)}, {"BK", ConstOverride::ofInt(64)}};
  std::string tuned = source(m.kernel("gemm"), 128, 256);  // the default config
  EXPECT_THAT(tuned, HasSubstr("__builtin_assume(M % 128 == 0);"));
  EXPECT_THAT(tuned, HasSubstr("__builtin_assume(N % 256 == 0);"));
  // The epilogue's mma_store is proven inside C: no bounds test.
  EXPECT_THAT(tuned, HasSubstr("// the tile is inside C always: row0 <= M - 128"));
  EXPECT_THAT(tuned, HasSubstr("col0 <= N - 256"));
  std::string fixed = source(m.kernel("gemm", small), 64, 384);
  EXPECT_THAT(fixed, HasSubstr("__builtin_assume(M % 64 == 0);"));
  EXPECT_THAT(fixed, HasSubstr("__builtin_assume(N % 128 == 0);"));
  EXPECT_THAT(fixed, HasSubstr("// the tile is inside C always: row0 <= M - 64"));
  EXPECT_THAT(fixed, HasSubstr("col0 <= N - 128"));
  // 384 is not a whole number of the default's 256-column tiles: the
  // store keeps its bounds tests.
  std::string partial = source(m.kernel("gemm"), 128, 384);
  EXPECT_THAT(partial, HasSubstr("__builtin_assume(M % 128 == 0);"));
  EXPECT_EQ(partial.find("__builtin_assume(N % 256"), std::string::npos);
  EXPECT_EQ(partial.find("the tile is inside C always"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Widths, CpuTarget, ::testing::Values("cpu", "cpu:warp64"),
                         [](const auto& info) { return std::string(info.index == 0 ? "warp32" : "warp64"); });

TEST(CpuTargetSetup, UsedOnlyWhenAskedFor) {
  // SPINDLE_BACKEND=cpu and the target name choose it; "auto" never does.
  EXPECT_EQ(Runtime(cpuOptions("cpu:warp64")).backend(), BackendKind::Cpu);
  // The warp width it emulates is the runtime's warpSize (bench/gpu_check's
  // warp references use it).
  EXPECT_EQ(Runtime(cpuOptions("cpu:warp64")).warpSize(), 64);
  EXPECT_EQ(Runtime(cpuOptions("cpu")).warpSize(), 32);
  RuntimeOptions byTarget;
  byTarget.target = "cpu";
  byTarget.diskCache = false;
  EXPECT_EQ(Runtime(byTarget).backend(), BackendKind::Cpu);
  EXPECT_THAT(errorFrom([] {
                RuntimeOptions o = cpuOptions("sm_90");
                Runtime rt(o);
              }),
              HasSubstr("target 'sm_90' is not a cpu target"));
}

TEST(CpuTargetSetup, NoHostCompilerIsAClearError) {
  ScopedEnv env("SPINDLE_HOST_CXX", "/nonexistent/c++");
  Runtime rt(cpuOptions("cpu"));
  EXPECT_FALSE(rt.hasDevice());
  EXPECT_THAT(rt.deviceStatus(), HasSubstr("SPINDLE_HOST_CXX='/nonexistent/c++' is not an executable"));
}

// A loop that never ends (here: waiting for a flag nobody sets) fails the
// launch once the time limit is up, naming the loop; it never hangs.
TEST(CpuTargetSetup, ALoopPastTheTimeLimitIsNamed) {
  ScopedEnv env("SPINDLE_CPU_TIMEOUT_S", "1");
  Runtime rt(cpuOptions("cpu", /*checked=*/true));
  Kernel k = rt.loadModuleFromString("spin.spn", R"(
@grid(2)
@block(64)
kernel spin(x: i32[N]):
    i = thread_id()
    while x[0] == 0:
        i += 1
    x[1] = i
)")
                 .kernel("spin");
  DeviceBuffer d = rt.allocate(8);
  const int32_t zeros[2] = {0, 0};
  rt.copyToDevice(d, zeros, 8);
  std::string error = errorFrom([&] { k.launch(nullptr, {tensor(d.data(), ScalarType::I32, {2})}); });
  EXPECT_THAT(error, HasSubstr("spin.spn:6:5: this loop is still running when the launch's time limit"));
}

// Numbers set through the environment: a bad one is named, with what was
// expected, where it is read (at construction or at launch).
TEST(CpuTargetSetup, BadEnvironmentNumbersAreNamed) {
  {
    ScopedEnv env("SPINDLE_CPU_THREADS", "0");
    EXPECT_THAT(errorFrom([] { Runtime rt(cpuOptions("cpu")); }),
                HasSubstr("SPINDLE_CPU_THREADS='0': expected a number of threads from 1 to 4096"));
  }
  {
    ScopedEnv env("SPINDLE_CACHE_MAX_BYTES", "-1");
    RuntimeOptions o = cpuOptions("cpu");
    o.diskCache = true;
    EXPECT_THAT(errorFrom([&] { Runtime rt(o); }), HasSubstr("SPINDLE_CACHE_MAX_BYTES='-1': expected a byte count"));
  }
  Runtime rt(cpuOptions("cpu"));
  Kernel k = rt.loadModuleFromString("one.spn", R"(
@grid(1)
@block(32)
kernel one(x: f32[N]):
    x[0] = 1.0
)")
                 .kernel("one");
  DeviceBuffer d = rt.allocate(4);
  auto launch = [&] { k.launch(nullptr, {tensor(d.data(), ScalarType::F32, {1})}); };
  {
    ScopedEnv env("SPINDLE_CPU_STACK_BYTES", "4096");
    EXPECT_THAT(errorFrom(launch), HasSubstr("SPINDLE_CPU_STACK_BYTES='4096': expected a byte count from 16384"));
  }
  {
    ScopedEnv env("SPINDLE_CPU_TIMEOUT_S", "soon");
    EXPECT_THAT(errorFrom(launch), HasSubstr("SPINDLE_CPU_TIMEOUT_S='soon': expected a number of seconds"));
  }
  EXPECT_EQ(errorFrom(launch), "(no error)");
}

// A thread's `local` arrays live on its fiber's stack, which grows past the
// 256 KiB default where they need it (here 400 KB per thread, in a closure
// and in the kernel, at a 64 KiB SPINDLE_CPU_STACK_BYTES); arrays the
// host's memory cannot hold for the threads that run at once are refused
// with the numbers before anything runs.
TEST(CpuTargetSetup, StacksHoldTheKernelsLocalArrays) {
  ScopedEnv env("SPINDLE_CPU_STACK_BYTES", "65536");
  Runtime rt(cpuOptions("cpu"));
  Module m = rt.loadModuleFromString("locals.spn", R"(
@grid(2)
@block(8)
kernel big(y: f32[N]):
    a = local(f32, [50000], 1.0)
    t = thread_id()
    def half_sum() -> f32:
        b = local(f32, [50000], 0.5)
        s = 0.0
        for k in range(50000):
            s += b[k] + a[k]
        return s
    y[block_id() * 8 + t] = half_sum() + f32(t)

@grid(1)
@block(1024)
kernel huge(y: f32[N]):
    a = local(f32, [268435456], 1.0)
    y[thread_id()] = a[thread_id()]
)");
  const int64_t N = 16;
  DeviceBuffer d = rt.allocate(N * 4);
  m.kernel("big").launch(nullptr, {tensor(d.data(), ScalarType::F32, {N})});
  std::vector<float> y(N);
  rt.copyToHost(y.data(), d, N * 4);
  for (int64_t i = 0; i < N; ++i) ASSERT_EQ(y[size_t(i)], 75000.0f + float(i % 8)) << "thread " << i;
  EXPECT_THAT(errorFrom([&] { m.kernel("huge").launch(nullptr, {tensor(d.data(), ScalarType::F32, {N})}); }),
              HasSubstr("cpu target: the kernel's `local` arrays take 1073741824 bytes per thread, 1024.0 GiB for "
                        "the 1024 threads that run at once (1024 per block, 1 block at a time"));
}

// A stand-in host compiler: a shell script that answers --version and
// otherwise runs `body` (its arguments end with -o LIBRARY SOURCE).
std::string fakeCompiler(const TempDir& dir, const std::string& body) {
  const std::string path = dir.path() + "/fake-cxx";
  std::ofstream(path) << "#!/bin/sh\n"
                         "if [ \"$1\" = --version ]; then echo 'fake-cxx 1.0'; exit 0; fi\n"
                      << body << "\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

// The host compiler's failures: one that does not answer --version has no
// device; one that fails to compile gives its log; one whose library is no
// kernel of this runtime is refused when it is loaded.
TEST(CpuTargetSetup, HostCompilerFailuresSayWhy) {
  const char* kKernel = R"(
@grid(1)
@block(32)
kernel one(x: f32[N]):
    x[0] = 1.0
)";
  TempDir dir;
  {
    ScopedEnv env("SPINDLE_HOST_CXX", "false");
    Runtime rt(cpuOptions("cpu"));
    EXPECT_FALSE(rt.hasDevice());
    EXPECT_THAT(rt.deviceStatus(), HasSubstr("--version failed"));
  }
  {
    ScopedEnv env("SPINDLE_HOST_CXX", fakeCompiler(dir, "echo 'fake-cxx: error: boom' >&2; exit 1").c_str());
    Runtime rt(cpuOptions("cpu"));
    Kernel k = rt.loadModuleFromString("one.spn", kKernel).kernel("one");
    std::string error = errorFrom([&] { k.compile({}, {}); });
    EXPECT_THAT(error, HasSubstr("compiling for cpu with fake-cxx 1.0"));
    EXPECT_THAT(error, HasSubstr("fake-cxx: error: boom"));
  }
  {
    // A real library without the cpu target's entry points.
    ScopedEnv env("SPINDLE_HOST_CXX", fakeCompiler(dir,
                                                   "while [ \"$1\" != -o ]; do shift; done; "
                                                   "exec c++ -shared -fPIC -x c++ /dev/null -o \"$2\"")
                                          .c_str());
    Runtime rt(cpuOptions("cpu"));
    Kernel k = rt.loadModuleFromString("one.spn", kKernel).kernel("one");
    DeviceBuffer d = rt.allocate(4);
    EXPECT_THAT(errorFrom([&] { k.launch(nullptr, {tensor(d.data(), ScalarType::F32, {1})}); }),
                HasSubstr("the library of one is not a kernel of this runtime"));
  }
}

// The host compiler is part of the key: another compiler, another binary.
TEST(CpuTargetSetup, TheHostCompilerIsInTheKey) {
  const char* kKernel = R"(
@grid(cdiv(N, 64))
@block(64)
kernel twice(x: f32[N]):
    i = block_id() * 64 + thread_id()
    if i < N:
        x[i] = 2.0 * x[i]
)";
  std::string keys[2];
  const char* compilers[2] = {"g++", "clang++"};
  for (int c = 0; c < 2; ++c) {
    ScopedEnv env("SPINDLE_HOST_CXX", compilers[c]);
    Runtime rt(cpuOptions("cpu"));
    if (!rt.hasDevice()) GTEST_SKIP() << compilers[c] << " is not installed";
    Kernel k = rt.loadModuleFromString("twice.spn", kKernel).kernel("twice");
    const int64_t N = 100;
    std::vector<float> x(N);
    for (int64_t i = 0; i < N; ++i) x[size_t(i)] = float(i);
    DeviceBuffer d = rt.allocate(N * 4);
    rt.copyToDevice(d, x.data(), N * 4);
    k.launch(nullptr, {tensor(d.data(), ScalarType::F32, {N})});
    rt.copyToHost(x.data(), d, N * 4);
    for (int64_t i = 0; i < N; ++i) ASSERT_EQ(x[size_t(i)], 2.0f * float(i));
    keys[c] = k.compile({}, {}).keyHex;
  }
  EXPECT_NE(keys[0], keys[1]);
}

}  // namespace
}  // namespace spindle::test
#endif  // SPINDLE_HAVE_CPU_TARGET
