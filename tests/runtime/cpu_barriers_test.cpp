// Phase barriers (docs/language.md 8.14) on the cpu target, by value, at
// both warp widths, unchecked and checked: a producer warp fills a ring of
// shared stages, consumer warps wait for each stage's phase, use it and
// release it, and the producer waits for the release before it refills the
// stage; the result is compared with one computed here on fresh random
// inputs. Also what the cpu target says where a GPU would go wrong: a wait
// for a phase whose parity a GPU would confuse with another, and a wait for
// a phase no thread completes. And warp-group roles: one warp group fills
// shared tiles and arrives, the other waits and runs dot on them
// (tests/golden/kernels/barriers.spn, kernel roles), against a product in
// double.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "references.hpp"  // bench::halfValue (header only)
#include "spindle/runtime.hpp"
#include "test_util.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::test {
namespace {

using ::testing::HasSubstr;

// Group `producer` of four 32-thread groups copies row t of X into stage
// t % STAGES and arrives at full; the other 96 threads wait for that phase
// of full, each reads its column, consumer g (0 to 2, in thread order)
// writes Y[t, c] for the rows t % 3 == g, and all 96 arrive at empty. The
// producer waits for the previous use of a stage to be released (phase
// t // STAGES - 1 of empty) before it overwrites it. The cpu target runs a
// block's threads in order until they wait: with the producer first it
// fills the ring before any consumer runs, with it last the consumers wait
// before anything is there.
constexpr const char* kRingKernel = R"(const STAGES = 3
const W = 32

@grid(1)
@block(128)
kernel ring(X: f32[T, W], Y: f32[T, W], producer: i32):
    buf = shared(f32, [STAGES, W])
    full = barriers(STAGES, W)
    empty = barriers(STAGES, 96)
    tid = thread_id()
    group = tid // W
    c = tid % W
    if group == producer:
        for t in range(T):
            s = t % STAGES
            if t >= STAGES:
                wait(empty, s, t // STAGES - 1)
            buf[s, c] = X[t, c]
            arrive(full, s)
    else:
        g = group if group < producer else group - 1
        for t in range(T):
            s = t % STAGES
            wait(full, s, t // STAGES)
            v = buf[s, c]
            if t % 3 == g:
                Y[t, c] = 2.0 * v + f32(t)
            arrive(empty, s)
)";

class CpuBarriers : public ::testing::TestWithParam<std::tuple<const char*, bool>> {};

TEST_P(CpuBarriers, ARingOfStagesPassesEveryRowOnce) {
  const auto [target, checked] = GetParam();
  Runtime rt(cpuOptions(target, checked));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Kernel k = rt.loadModuleFromString("ring.spn", kRingKernel).kernel("ring");
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int64_t T : {1, 3, 7, 20})
    for (int32_t producer : {0, 3}) {
      std::vector<float> X(size_t(T) * 32), Y(X.size(), -12345.0f);
      for (float& x : X) x = u(rng);
      DeviceBuffer dX = rt.allocate(X.size() * 4), dY = rt.allocate(Y.size() * 4);
      rt.copyToDevice(dX, X.data(), X.size() * 4);
      rt.copyToDevice(dY, Y.data(), Y.size() * 4);
      k.launch(nullptr, {tensor(dX.data(), ScalarType::F32, {T, 32}), tensor(dY.data(), ScalarType::F32, {T, 32}),
                         scalar(producer)});
      rt.copyToHost(Y.data(), dY, Y.size() * 4);
      for (int64_t t = 0; t < T; ++t)
        for (int64_t c = 0; c < 32; ++c)
          ASSERT_EQ(Y[size_t(t * 32 + c)], 2.0f * X[size_t(t * 32 + c)] + float(t))
              << target << (checked ? " checked" : "") << " T " << T << " producer " << producer << ": Y[" << t << ", "
              << c << "]";
    }
}

// The consumers (threads 0-31, which run first) wait for phase t // 3 + 1
// of stage t % 3 where the ring's phase is t // 3: at t = 0 stage 0 has
// completed no phase, and a GPU, testing phase 1's parity, would return at
// once and read the stage unfilled.
constexpr const char* kWrongPhaseKernel = R"(@grid(1)
@block(64)
kernel wrong_phase(X: f32[T, 32], Y: f32[T, 32]):
    buf = shared(f32, [3, 32])
    full = barriers(3, 32)
    tid = thread_id()
    if tid >= 32:
        for t in range(min(T, 3)):
            buf[t % 3, tid - 32] = X[t, tid - 32]
            arrive(full, t % 3)
    else:
        for t in range(min(T, 3)):
            wait(full, t % 3, t // 3 + 1)
            Y[t, tid] = buf[t % 3, tid]
)";

TEST_P(CpuBarriers, AWaitForAPhaseItsParityWouldMistakeFails) {
  const auto [target, checked] = GetParam();
  Runtime rt(cpuOptions(target, checked));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Kernel k = rt.loadModuleFromString("wrong_phase.spn", kWrongPhaseKernel).kernel("wrong_phase");
  DeviceBuffer dX = rt.allocate(3 * 32 * 4), dY = rt.allocate(3 * 32 * 4);
  const std::string error = errorFrom([&] {
    k.launch(nullptr, {tensor(dX.data(), ScalarType::F32, {3, 32}), tensor(dY.data(), ScalarType::F32, {3, 32})});
    rt.synchronize();
  });
  EXPECT_THAT(error, HasSubstr("wrong_phase.spn:13:13: wait(..., 0, 1) begins where barrier 0 has completed 0 phases"));
  EXPECT_THAT(error, HasSubstr("with fewer it returns at once"));
}

// Nothing arrives at `nobody`: every thread waits for its phase 0.
constexpr const char* kNeverKernel = R"(@grid(1)
@block(64)
kernel never(Y: f32[N]):
    nobody = barriers(1, 1)
    wait(nobody, 0, 0)
    Y[thread_id()] = 1.0
)";

TEST_P(CpuBarriers, AWaitNoThreadCanEndFailsTheLaunch) {
  const auto [target, checked] = GetParam();
  Runtime rt(cpuOptions(target, checked));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Kernel k = rt.loadModuleFromString("never.spn", kNeverKernel).kernel("never");
  DeviceBuffer dY = rt.allocate(64 * 4);
  const std::string error = errorFrom([&] {
    k.launch(nullptr, {tensor(dY.data(), ScalarType::F32, {64})});
    rt.synchronize();
  });
  EXPECT_THAT(error, HasSubstr("threads 0-63 wait for a phase of a barrier"));
}

// Two producer warps take turns filling one shared slot that a consumer
// warp drains: row t is written after phase t - 1 of `drained` (row t - 1
// read). With `early` a producer hands the turn on before its own wait for
// `drained`, so the next producer may wait for phase t - 1 while phase
// t - 2 is still open, where a GPU's parity test returns at once and row t
// overwrites row t - 2 unread (the bug of a first epilogue warp group in
// samples/gemm_ws.spn, session 22, which hung an H200). The producers
// meet as a warp twice a row (sync_warp), so in thread order the consumer
// keeps up and the launch passes; a schedule that starves the consumer
// (SPINDLE_CPU_SCHEDULE, docs/runtime.md) shows the wait. Handing the
// turn on after the wait is right under every schedule.
constexpr const char* kHandoffKernel = R"(@grid(1)
@block(3 * warp_size())
kernel handoff(X: f32[T, C], Y: f32[T, C], early: bool):
    const W = warp_size()       # C at launch
    buf = shared(f32, [1, W])
    staged = barriers(1, W)
    drained = barriers(1, W)
    turn = barriers(2, W)
    w = thread_id() // warp_size()
    c = thread_id() % W
    if w == 2:
        for t in range(T):
            wait(staged, 0, t)
            Y[t, c] = 2.0 * buf[0, c] + f32(t)
            arrive(drained, 0)
    else:
        for t in range(w, T, 2):
            if t > 0:
                wait(turn, w, (t - 1) // 2)
            if early:
                arrive(turn, 1 - w)
            sync_warp()
            sync_warp()
            if t > 0:
                wait(drained, 0, t - 1)
            buf[0, c] = X[t, c]
            arrive(staged, 0)
            if not early:
                arrive(turn, 1 - w)
)";

TEST_P(CpuBarriers, AShuffledScheduleShowsAWaitThatThreadOrderHides) {
  const auto [target, checked] = GetParam();
  Runtime rt(cpuOptions(target, checked));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Kernel k = rt.loadModuleFromString("handoff.spn", kHandoffKernel).kernel("handoff");
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const int64_t T = 12, C = rt.warpSize();
  std::vector<float> X(size_t(T * C));
  for (float& x : X) x = u(rng);
  DeviceBuffer dX = rt.allocate(X.size() * 4), dY = rt.allocate(X.size() * 4);
  rt.copyToDevice(dX, X.data(), X.size() * 4);
  // Every row once, right, or the launch's error.
  auto run = [&](bool early) {
    std::vector<float> Y(X.size(), -12345.0f);
    rt.copyToDevice(dY, Y.data(), Y.size() * 4);
    const std::string error = errorFrom([&] {
      k.launch(nullptr,
               {tensor(dX.data(), ScalarType::F32, {T, C}), tensor(dY.data(), ScalarType::F32, {T, C}), scalar(early)});
      rt.synchronize();
    });
    if (error != "(no error)") return error;
    rt.copyToHost(Y.data(), dY, Y.size() * 4);
    for (size_t i = 0; i < Y.size(); ++i)
      if (Y[i] != 2.0f * X[i] + float(int64_t(i) / C))
        return "Y[" + std::to_string(int64_t(i) / C) + ", " + std::to_string(int64_t(i) % C) + "] is wrong";
    return std::string();
  };
  EXPECT_EQ(run(true), "") << "thread order";
  int caught = 0;
  for (int seed = 1; seed <= 16; ++seed) {
    ScopedEnv schedule("SPINDLE_CPU_SCHEDULE", std::to_string(seed).c_str());
    EXPECT_EQ(run(false), "") << "handing on after the wait, seed " << seed;
    const std::string error = run(true);
    if (error.empty()) continue;
    EXPECT_THAT(error, HasSubstr("handoff.spn:25:17: wait(..., 0, ")) << "seed " << seed;
    EXPECT_THAT(error, HasSubstr("with fewer it returns at once")) << "seed " << seed;
    ++caught;
  }
  std::printf("%s%s: 16 seeds, %d caught the early handoff\n", target, checked ? " checked" : "", caught);
  EXPECT_GT(caught, 0);
}

TEST_P(CpuBarriers, OneWarpGroupFeedsTheOthersDot) {
  const auto [target, checked] = GetParam();
  Runtime rt(cpuOptions(target, checked));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Kernel k = rt.loadModule(std::string(SPINDLE_SOURCE_DIR) + "/tests/golden/kernels/barriers.spn").kernel("roles");
  std::mt19937 gen(std::random_device{}());
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const int64_t NB = 2;
  for (ScalarType t : {ScalarType::F16, ScalarType::BF16}) {
    const bool bf16 = t == ScalarType::BF16;
    std::vector<uint16_t> A(size_t(NB) * 64 * 64), B(A.size());
    std::vector<double> a(A.size()), b(B.size());
    for (size_t i = 0; i < A.size(); ++i) {
      A[i] = uint16_t(scalar(t, dist(gen)).bits);
      a[i] = bench::halfValue(bf16, A[i]);
      B[i] = uint16_t(scalar(t, dist(gen)).bits);
      b[i] = bench::halfValue(bf16, B[i]);
    }
    std::vector<float> C(A.size(), NAN);
    DeviceBuffer dA = rt.allocate(A.size() * 2), dB = rt.allocate(B.size() * 2), dC = rt.allocate(C.size() * 4);
    rt.copyToDevice(dA, A.data(), A.size() * 2);
    rt.copyToDevice(dB, B.data(), B.size() * 2);
    rt.copyToDevice(dC, C.data(), C.size() * 4);
    k.launch(nullptr, {tensor(dA.data(), t, {NB, 64, 64}), tensor(dB.data(), t, {NB, 64, 64}),
                       tensor(dC.data(), ScalarType::F32, {NB, 64, 64})});
    rt.copyToHost(C.data(), dC, C.size() * 4);
    for (int64_t m = 0; m < NB; ++m)
      for (int r = 0; r < 64; ++r)
        for (int c = 0; c < 64; ++c) {
          double want = 0;
          for (int kk = 0; kk < 64; ++kk) want += a[size_t((m * 64 + r) * 64 + kk)] * b[size_t((m * 64 + kk) * 64 + c)];
          // Products of f16/bf16 values are exact in f32; only the f32 sum rounds.
          ASSERT_NEAR(C[size_t((m * 64 + r) * 64 + c)], want, 1e-4)
              << target << (checked ? " checked " : " ") << (bf16 ? "bf16" : "f16") << " C[" << m << ", " << r << ", "
              << c << "]";
        }
  }
}

// Register budgets on the cpu target's model of sm_90a's pool (docs/runtime.md):
// group 0 releases to RELEASE, groups 1 and 2 claim CLAIM. The block of 384
// threads holds 384 x 168 = 64,512 registers: 56 + 2 x 224 fits, 64 + 2 x
// 224 (what hung an H200 in session 22) leaves a claim waiting for ever,
// which fails the launch naming it. At warp width 64 there is no pool.
constexpr const char* kBudgetKernel = R"(const RELEASE = 56
const CLAIM = 224

@grid(1)
@block(12 * warp_size())
kernel budgets(X: f32[N], Y: f32[N]):
    tid = thread_id()
    if tid // (4 * warp_size()) == 0:
        release_registers(RELEASE)
    else:
        claim_registers(CLAIM)
    if tid < N:
        Y[tid] = 2.0 * X[tid]
)";

TEST_P(CpuBarriers, RegisterBudgetsThatOverfillTheBlocksPoolFailTheLaunch) {
  const auto [target, checked] = GetParam();
  Runtime rt(cpuOptions(target, checked));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Module m = rt.loadModuleFromString("budgets.spn", kBudgetKernel);
  const int64_t N = 12 * rt.warpSize();
  std::vector<float> X(static_cast<size_t>(N));
  for (size_t i = 0; i < X.size(); ++i) X[i] = float(i) * 0.5f - 7.0f;
  DeviceBuffer dX = rt.allocate(X.size() * 4), dY = rt.allocate(X.size() * 4);
  rt.copyToDevice(dX, X.data(), X.size() * 4);
  auto launch = [&](int64_t release, int64_t claim) {
    KernelOptions o;
    o.consts = {{"RELEASE", ConstOverride::ofInt(release)}, {"CLAIM", ConstOverride::ofInt(claim)}};
    std::vector<float> Y(X.size(), -1.0f);
    rt.copyToDevice(dY, Y.data(), Y.size() * 4);
    const std::string error = errorFrom([&] {
      m.kernel("budgets", o)
          .launch(nullptr, {tensor(dX.data(), ScalarType::F32, {N}), tensor(dY.data(), ScalarType::F32, {N})});
      rt.synchronize();
    });
    if (error != "(no error)") return error;
    rt.copyToHost(Y.data(), dY, Y.size() * 4);
    for (size_t i = 0; i < Y.size(); ++i)
      if (Y[i] != 2.0f * X[i]) return "Y[" + std::to_string(i) + "] is wrong";
    return std::string();
  };
  EXPECT_EQ(launch(56, 224), "");
  EXPECT_EQ(launch(72, 216), "");
  const std::string over = launch(64, 224);
  if (rt.warpSize() == 64) {
    EXPECT_EQ(over, "") << "no pool at width 64";
    return;
  }
  // Group 1 took 7,168 of the 13,312 that group 0 gave back; group 2 waits.
  EXPECT_THAT(over, HasSubstr("threads 256-383 wait at budgets.spn:11:9: claim_registers(224) needs 7168 registers "
                              "for its warp group, and 6144 of the block's 64512 are free (384 threads x 168"));
  // setmaxnreg.dec cannot raise a budget, nor .inc lower one.
  EXPECT_THAT(launch(200, 224),
              HasSubstr("budgets.spn:9:9: release_registers(200) where the warp group's budget is "
                        "168 registers a thread: a claim only raises it and a release only lowers it"));
  EXPECT_THAT(launch(56, 160),
              HasSubstr("budgets.spn:11:9: claim_registers(160) where the warp group's budget is "
                        "168 registers a thread: a claim only raises it and a release only lowers it"));
}

// copy_tile (tests/golden/kernels/copy_tile.spn): boxes inside X, across
// its bottom and right edges and wholly past them, into a swizzled and a
// row-major buffer, f16 and f32, against the box's definition.
TEST_P(CpuBarriers, CopyTileCopiesBoxesWithZerosPastTheEdges) {
  const auto [target, checked] = GetParam();
  Runtime rt(cpuOptions(target, checked));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Kernel k = rt.loadModule(std::string(SPINDLE_SOURCE_DIR) + "/tests/golden/kernels/copy_tile.spn").kernel("tile_out");
  std::mt19937_64 rng(std::random_device{}());
  struct Case {
    int64_t R, C, r0, c0;
  };
  const Case cases[] = {{80, 160, 8, 16}, {70, 130, 10, 5}, {37, 53, 3, 7}, {20, 40, 30, 50}};
  for (ScalarType t : {ScalarType::F16, ScalarType::F32}) {
    const size_t bytes = t == ScalarType::F32 ? 4 : 2;
    for (const Case& cs : cases) {
      std::vector<uint8_t> X(size_t(cs.R * cs.C) * bytes);
      for (auto& b : X) b = uint8_t(rng());
      for (size_t i = bytes - 1; i < X.size(); i += bytes) X[i] &= 0xbf;  // finite values
      std::vector<uint8_t> Y(64 * 128 * bytes, 0xff), Z(16 * 32 * bytes, 0xff);
      DeviceBuffer dX = rt.allocate(X.size()), dY = rt.allocate(Y.size()), dZ = rt.allocate(Z.size());
      rt.copyToDevice(dX, X.data(), X.size());
      rt.copyToDevice(dY, Y.data(), Y.size());
      rt.copyToDevice(dZ, Z.data(), Z.size());
      k.launch(nullptr, {tensor(dX.data(), t, {cs.R, cs.C}), tensor(dY.data(), t, {64, 128}),
                         tensor(dZ.data(), t, {16, 32}), scalar(cs.r0), scalar(cs.c0)});
      rt.copyToHost(Y.data(), dY, Y.size());
      rt.copyToHost(Z.data(), dZ, Z.size());
      auto expectBox = [&](const std::vector<uint8_t>& out, int64_t rows, int64_t cols, int64_t r0, int64_t c0,
                           const char* what) {
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; ++c)
            for (size_t b = 0; b < bytes; ++b) {
              const int64_t xr = r0 + r, xc = c0 + c;
              const uint8_t want = xr < cs.R && xc < cs.C ? X[size_t(xr * cs.C + xc) * bytes + b] : 0;
              ASSERT_EQ(out[size_t(r * cols + c) * bytes + b], want)
                  << target << (checked ? " checked " : " ") << bytes << "-byte " << what << " of X " << cs.R << "x"
                  << cs.C << " at (" << r0 << ", " << c0 << "): [" << r << ", " << c << "] byte " << b;
            }
      };
      expectBox(Y, 64, 128, cs.r0, cs.c0, "swizzled box");
      expectBox(Z, 16, 32, cs.r0 + 1, cs.c0 + 2, "row-major box");
    }
  }
  // The cpu target makes no tensor maps: each launch's two maps (X's, for
  // the swizzled box and for the row-major one) are counted as fallbacks
  // to the element path.
  EXPECT_EQ(rt.stats().tensorMapFallbacks, 2u * 2u * std::size(cases));
}

INSTANTIATE_TEST_SUITE_P(Targets, CpuBarriers,
                         ::testing::Combine(::testing::Values("cpu", "cpu:warp64"), ::testing::Bool()));

}  // namespace
}  // namespace spindle::test
#endif
