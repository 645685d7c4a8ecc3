// A checked build on the cpu target reports reads of shared memory that no
// thread of the block wrote since the block began, and races between the
// threads of a block (docs/runtime.md, "The cpu target"): static and
// dynamic shared buffers, writes through a def's tensor parameter and
// through atomics, barriers and warp meetings, at both warp widths; and
// SharedShadow's rules one by one. Kernels that write before they read run
// and compute the right values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "../../runtime/src/cpu/shared_shadow.h"
#include "spindle/runtime.hpp"
#include "test_util.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::test {
namespace {

using ::testing::HasSubstr;

// Block 0 fills the buffer and every block reads it: in block 0 right, in
// every other block a read of memory that block never wrote (whatever an
// earlier block on the same worker left there).
constexpr const char* kStaleShared = R"(
@grid(cdiv(N, 64))
@block(64)
kernel stale(x: f32[N], y: f32[N]):
    s = shared(f32, [64])
    t = thread_id()
    i = block_id() * 64 + t
    if block_id() == 0:
        s[t] = x[i]
    sync()
    if i < N:
        y[i] = s[(t + 1) % 64]
)";

// Every read of shared memory follows a write: one through a def's tensor
// parameter, one by +=, counts by atomics on a buffer thread 0 and 1 zero.
constexpr const char* kWritesFirst = R"(
def put(b: f32[K], i: i32, v: f32):
    b[i] = v

@grid(cdiv(N, 64))
@block(64)
kernel fine(x: f32[N], y: f32[N], h: i32[G]):
    s = shared(f32, [64])
    c = shared(i32, [2])
    t = thread_id()
    i = block_id() * 64 + t
    put(s, t, 0.0)
    if t < 2:
        c[t] = 0
    sync()
    if i < N:
        s[t] += x[i]
        atomic_add(c[t % 2], 1)
    sync()
    if i < N:
        y[i] = s[(t + 1) % 64]
    if t < 2:
        h[block_id() * 2 + t] = c[t]
)";

// A dynamic shared buffer (sized by B) that only the first half of the
// threads fill, and an atomic on a counter nobody zeroed.
constexpr const char* kDynamicShared = R"(
@grid(1)
@block(64)
kernel half_filled(x: i32[B], y: i32[B]):
    s = shared(i32, [B])
    t = thread_id()
    if t < B // 2:
        s[t] = x[t]
    sync()
    if t < B:
        y[t] = s[t]

@grid(1)
@block(64)
kernel unzeroed_counter(y: i32[B]):
    n = shared(i32, [1])
    atomic_add(n[0], 1)
    sync()
    y[thread_id() % B] = n[0]
)";

// Races: a thread reads its neighbour's slot with no barrier (at warp 32
// a sync_warp() orders the lanes of one warp, not the neighbour across the
// warp boundary); a thread overwrites a slot another read; a read of a
// counter other threads update atomically.
constexpr const char* kRaces = R"(
const WARP_SYNC = 0

@grid(1)
@block(64)
kernel neighbour(y: f32[N]):
    s = shared(f32, [64])
    t = thread_id()
    s[t] = f32(t)
    if WARP_SYNC == 1:
        sync_warp()
    y[t] = s[max(t - 1, 0)]

@grid(1)
@block(64)
kernel overwrite(y: f32[N]):
    s = shared(f32, [64])
    t = thread_id()
    s[t] = 1.0
    sync()
    v = s[(t + 1) % 64]
    s[t] = v + 1.0
    sync()
    y[t] = s[t]

@grid(1)
@block(64)
kernel counter(y: i32[N]):
    c = shared(i32, [1])
    t = thread_id()
    if t == 0:
        c[0] = 0
    sync()
    atomic_add(c[0], 1)
    y[t] = c[0]
)";

class CpuSharedChecks : public ::testing::TestWithParam<const char*> {};

TEST_P(CpuSharedChecks, AReadOfSharedMemoryTheBlockNeverWroteIsNamed) {
  Runtime rt(cpuOptions(GetParam(), /*checked=*/true));
  Kernel k = rt.loadModuleFromString("stale.spn", kStaleShared).kernel("stale");
  const int64_t N = 200;
  DeviceBuffer dx = rt.allocate(N * 4), dy = rt.allocate(N * 4);
  std::vector<float> x(N, 1.0f);
  rt.copyToDevice(dx, x.data(), N * 4);
  std::string error = errorFrom([&] {
    k.launch(nullptr, {tensor(dx.data(), ScalarType::F32, {N}), tensor(dy.data(), ScalarType::F32, {N})});
  });
  EXPECT_THAT(error, HasSubstr("stale.spn:12:16: s["));
  EXPECT_THAT(error, HasSubstr("] is read before any thread of its block wrote it"));
  EXPECT_THAT(error, ::testing::Not(HasSubstr("in block (0, 0, 0)")));
  // Unchecked, nothing looks.
  Runtime unchecked(cpuOptions(GetParam(), /*checked=*/false));
  Kernel u = unchecked.loadModuleFromString("stale.spn", kStaleShared).kernel("stale");
  u.launch(nullptr, {tensor(dx.data(), ScalarType::F32, {N}), tensor(dy.data(), ScalarType::F32, {N})});
}

TEST_P(CpuSharedChecks, WritesThroughDefsAndAtomicsCount) {
  Runtime rt(cpuOptions(GetParam(), /*checked=*/true));
  Kernel k = rt.loadModuleFromString("fine.spn", kWritesFirst).kernel("fine");
  const int64_t N = 200, blocks = (N + 63) / 64, G = 2 * blocks;
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> d(-4, 4);
  std::vector<float> x(N), y(N, -1.0f);
  for (float& v : x) v = d(rng);
  std::vector<int32_t> h(G, -1);
  DeviceBuffer dx = rt.allocate(N * 4), dy = rt.allocate(N * 4), dh = rt.allocate(G * 4);
  rt.copyToDevice(dx, x.data(), N * 4);
  k.launch(nullptr, {tensor(dx.data(), ScalarType::F32, {N}), tensor(dy.data(), ScalarType::F32, {N}),
                     tensor(dh.data(), ScalarType::I32, {G})});
  rt.copyToHost(y.data(), dy, N * 4);
  rt.copyToHost(h.data(), dh, G * 4);
  for (int64_t i = 0; i < N; ++i) {
    // Thread t of the block reads element t + 1 of it: x's, or 0 past the end.
    const int64_t block = i / 64, from = block * 64 + (i % 64 + 1) % 64;
    ASSERT_EQ(y[size_t(i)], from < N ? x[size_t(from)] : 0.0f) << "i = " << i;
  }
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t threads = std::min<int64_t>(64, N - b * 64);
    EXPECT_EQ(h[size_t(2 * b)], (threads + 1) / 2) << "block " << b;
    EXPECT_EQ(h[size_t(2 * b + 1)], threads / 2) << "block " << b;
  }
}

TEST_P(CpuSharedChecks, DynamicSharedAndAtomicsAreTracked) {
  Runtime rt(cpuOptions(GetParam(), /*checked=*/true));
  Module m = rt.loadModuleFromString("dynamic.spn", kDynamicShared);
  const int64_t B = 40;
  std::vector<int32_t> x(B);
  for (int64_t i = 0; i < B; ++i) x[size_t(i)] = int32_t(3 * i + 1);
  DeviceBuffer dx = rt.allocate(B * 4), dy = rt.allocate(B * 4);
  rt.copyToDevice(dx, x.data(), B * 4);
  std::string error = errorFrom([&] {
    m.kernel("half_filled")
        .launch(nullptr, {tensor(dx.data(), ScalarType::I32, {B}), tensor(dy.data(), ScalarType::I32, {B})});
  });
  EXPECT_THAT(error, HasSubstr("dynamic.spn:11:16: s["));
  EXPECT_THAT(error, HasSubstr("is read before any thread of its block wrote it"));
  error = errorFrom([&] { m.kernel("unzeroed_counter").launch(nullptr, {tensor(dy.data(), ScalarType::I32, {B})}); });
  EXPECT_THAT(error, HasSubstr("dynamic.spn:17:16: n[0] is read before any thread of its block wrote it"));
}

TEST_P(CpuSharedChecks, RacesNameBothThreads) {
  const bool warp64 = std::string(GetParam()) == "cpu:warp64";
  Runtime rt(cpuOptions(GetParam(), /*checked=*/true));
  Module m = rt.loadModuleFromString("races.spn", kRaces);
  const int64_t N = 64;
  DeviceBuffer dy = rt.allocate(N * 4);
  auto launch = [&](const char* kernel, KernelOptions options = {}) {
    return errorFrom([&] { m.kernel(kernel, options).launch(nullptr, {tensor(dy.data(), ScalarType::F32, {N})}); });
  };
  KernelOptions noWarpSync, warpSync;  // WARP_SYNC = 0, 1
  warpSync.consts = {{"WARP_SYNC", ConstOverride::ofInt(1)}};
  EXPECT_THAT(launch("neighbour", noWarpSync),
              HasSubstr("races.spn:12:12: s[0] races: thread (0, 0, 0) wrote it since the last barrier (sync()) and "
                        "this thread reads it, in block (0, 0, 0), thread (1, 0, 0)"));
  // A sync_warp() orders a warp's lanes: at warp 64 the block is one warp.
  if (warp64) {
    EXPECT_EQ(launch("neighbour", warpSync), "(no error)");
    std::vector<float> y(N);
    rt.copyToHost(y.data(), dy, N * 4);
    for (int64_t t = 0; t < N; ++t) ASSERT_EQ(y[size_t(t)], float(std::max<int64_t>(t - 1, 0)));
  } else {
    EXPECT_THAT(launch("neighbour", warpSync), HasSubstr("s[31] races: thread (31, 0, 0) wrote it since the last "
                                                         "barrier (sync()) and this thread reads it"));
  }
  EXPECT_THAT(launch("overwrite"), HasSubstr("races.spn:22:5: s["));
  EXPECT_THAT(launch("overwrite"), HasSubstr("read it since the last barrier (sync()) and this thread writes it"));
  // Whichever side the schedule meets first: a read after other threads'
  // atomics, or an atomic after another thread's read.
  const std::string counter =
      errorFrom([&] { m.kernel("counter").launch(nullptr, {tensor(dy.data(), ScalarType::I32, {N})}); });
  EXPECT_THAT(counter, HasSubstr(": c[0] races: "));
  EXPECT_THAT(counter, HasSubstr("atomically"));
}

INSTANTIATE_TEST_SUITE_P(Widths, CpuSharedChecks, ::testing::Values("cpu", "cpu:warp64"),
                         [](const auto& info) { return std::string(info.index == 0 ? "warp32" : "warp64"); });

// SharedShadow's rules, access by access (threads 0-63 of a block, warps of 32).
TEST(SharedShadow, RulesOneByOne) {
  using S = rt::cpu::SharedShadow;
  alignas(8) unsigned char memory[64] = {};
  unsigned char* p = memory;
  uint32_t other = 0;
  S s(32);
  s.beginBlock();
  s.declare(memory, sizeof memory);
  unsigned char global[4];
  EXPECT_EQ(s.access(S::Read, global, 4, 0, 0, &other), S::Fine);  // not declared shared
  EXPECT_EQ(s.access(S::Read, p, 4, 0, 0, &other), S::Unwritten);
  EXPECT_EQ(s.access(S::Write, p, 4, 0, 0, &other), S::Fine);
  EXPECT_EQ(s.access(S::Read, p, 4, 0, 0, &other), S::Fine);  // its own write
  EXPECT_EQ(s.access(S::Read, p + 2, 4, 0, 0, &other), S::Unwritten) << "bytes 4 and 5 were never written";
  EXPECT_EQ(s.access(S::Write, p, 4, 1, 0, &other), S::AfterRead);  // thread 0 read it
  EXPECT_EQ(other, 0u);
  EXPECT_EQ(s.access(S::Read, p, 4, 1, 0, &other), S::AfterWrite);  // thread 0 wrote it
  // A warp meeting orders the lanes of the warp: thread 1 after one more meeting.
  EXPECT_EQ(s.access(S::Read, p, 4, 1, 1, &other), S::Fine);
  // ... but not another warp's.
  EXPECT_EQ(s.access(S::Read, p, 4, 40, 1, &other), S::AfterWrite);
  EXPECT_EQ(other, 0u);
  // Two plain writes are not reported; the later writer owns the bytes.
  EXPECT_EQ(s.access(S::Write, p + 8, 4, 3, 0, &other), S::Fine);
  EXPECT_EQ(s.access(S::Write, p + 8, 4, 4, 0, &other), S::Fine);
  EXPECT_EQ(s.access(S::Read, p + 8, 4, 4, 0, &other), S::Fine);
  EXPECT_EQ(s.access(S::Read, p + 8, 4, 3, 0, &other), S::AfterWrite);
  EXPECT_EQ(other, 4u);
  // A barrier orders everything; the bytes stay written for the block.
  s.barrier();
  EXPECT_EQ(s.access(S::Read, p, 4, 40, 1, &other), S::Fine);
  EXPECT_EQ(s.access(S::Read, p, 4, 41, 1, &other), S::Fine);
  EXPECT_EQ(s.access(S::Write, p, 4, 42, 1, &other), S::AfterRead);
  EXPECT_EQ(other, S::kSeveral);
  // Atomics: fine among themselves, a race with plain accesses.
  EXPECT_EQ(s.access(S::Write, p + 16, 4, 0, 1, &other), S::Fine);
  s.barrier();
  EXPECT_EQ(s.access(S::Atomic, p + 16, 4, 5, 1, &other), S::Fine);
  EXPECT_EQ(s.access(S::Atomic, p + 16, 4, 6, 1, &other), S::Fine);
  EXPECT_EQ(s.access(S::Read, p + 16, 4, 6, 1, &other), S::AfterWriteAtomically);
  EXPECT_EQ(other, S::kSeveral);
  EXPECT_EQ(s.access(S::Update, p + 16, 4, 7, 1, &other), S::AfterWriteAtomically);
  // A new block: nothing is written.
  s.beginBlock();
  EXPECT_EQ(s.access(S::Read, p, 4, 0, 1, &other), S::Unwritten);
  EXPECT_EQ(s.access(S::Atomic, p, 4, 0, 1, &other), S::Unwritten);
}

}  // namespace
}  // namespace spindle::test
#endif  // SPINDLE_HAVE_CPU_TARGET
