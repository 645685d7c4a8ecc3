// A checked build on the cpu target reports reads of shared memory that no
// thread of the block wrote since the block began (docs/runtime.md,
// "Checked builds"): static and dynamic shared buffers, writes through a
// def's tensor parameter and through atomics, at both warp widths. Kernels
// that write before they read run and compute the right values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "spindle/runtime.hpp"
#include "test_util.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::test {
namespace {

using ::testing::HasSubstr;

RuntimeOptions cpuOptions(const std::string& target, bool checked) {
  RuntimeOptions o;
  o.backend = BackendKind::Cpu;
  o.target = target;
  o.diskCache = false;
  o.checked = checked;
  return o;
}

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

class CpuSharedReads : public ::testing::TestWithParam<const char*> {};

TEST_P(CpuSharedReads, AReadOfSharedMemoryTheBlockNeverWroteIsNamed) {
  Runtime rt(cpuOptions(GetParam(), /*checked=*/true));
  Kernel k = rt.loadModuleFromString("stale.spn", kStaleShared).kernel("stale");
  const int64_t N = 200;
  DeviceBuffer dx = rt.allocate(N * 4), dy = rt.allocate(N * 4);
  std::vector<float> x(N, 1.0f);
  rt.copyToDevice(dx, x.data(), N * 4);
  std::string error = errorFrom(
      [&] { k.launch(nullptr, {tensor(dx.data(), ScalarType::F32, {N}), tensor(dy.data(), ScalarType::F32, {N})}); });
  EXPECT_THAT(error, HasSubstr("stale.spn:12:16: s["));
  EXPECT_THAT(error, HasSubstr("] is read before any thread of its block wrote it"));
  EXPECT_THAT(error, ::testing::Not(HasSubstr("in block (0, 0, 0)")));
  // Unchecked, nothing looks.
  Runtime unchecked(cpuOptions(GetParam(), /*checked=*/false));
  Kernel u = unchecked.loadModuleFromString("stale.spn", kStaleShared).kernel("stale");
  u.launch(nullptr, {tensor(dx.data(), ScalarType::F32, {N}), tensor(dy.data(), ScalarType::F32, {N})});
}

TEST_P(CpuSharedReads, WritesThroughDefsAndAtomicsCount) {
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

TEST_P(CpuSharedReads, DynamicSharedAndAtomicsAreTracked) {
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

INSTANTIATE_TEST_SUITE_P(Widths, CpuSharedReads, ::testing::Values("cpu", "cpu:warp64"),
                         [](const auto& info) { return std::string(info.index == 0 ? "warp32" : "warp64"); });

}  // namespace
}  // namespace spindle::test
#endif  // SPINDLE_HAVE_CPU_TARGET
