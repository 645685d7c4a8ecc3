// 32-bit index arithmetic (Specialization::index32, docs/language.md 9.4):
// which launches get it (every dim, stride and tensor extent below 2^31),
// that its kernels compute what the 64-bit form computes, and that the
// 64-bit form stays correct past 2^31 elements. By value on the cpu target,
// unchecked (checked builds keep 64-bit offsets for their bounds checks).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "spindle/runtime.hpp"
#include "test_util.h"

namespace spindle::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Rows gathered through a loaded index, a strided view, a dim expression
// and the kernel's own 64-bit arithmetic on dims (N * 3 past 2^31 must not
// wrap even when N is int32_t in the kernel).
const char* kGather = R"(
@grid(cdiv(B * C, 64))
@block(64)
kernel gather(table: f32[V, C], ids: i32[B], w: f32[B, 2 * C] strided, out: f32[B, C], big: i64[B]):
    i = i64(block_id()) * 64 + thread_id()
    if i < B * C:
        b = i // C
        c = i % C
        out[b, c] = table[ids[b], c] * w[b, C + c]
        if c == 0:
            big[b] = C * 3000000000 + dim(w, 1) * 1000000000 + b
)";

struct GatherRun {
  std::vector<float> out;
  std::vector<int64_t> big;
  std::string source;
};

GatherRun runGather(bool index32, int64_t V, int64_t C, int64_t B, int64_t pitch, const std::vector<float>& table,
                    const std::vector<int32_t>& ids, const std::vector<float>& w) {
  RuntimeOptions o = cpuOptions("cpu");
  o.index32 = index32;
  Runtime rt(o);
  Module m = rt.loadModuleFromString("gather.spn", kGather);
  Kernel k = m.kernel("gather");
  DeviceBuffer dt = rt.allocate(table.size() * 4), di = rt.allocate(ids.size() * 4), dw = rt.allocate(w.size() * 4),
               dout = rt.allocate(size_t(B * C) * 4), dbig = rt.allocate(size_t(B) * 8);
  rt.copyToDevice(dt, table.data(), table.size() * 4);
  rt.copyToDevice(di, ids.data(), ids.size() * 4);
  rt.copyToDevice(dw, w.data(), w.size() * 4);
  const std::initializer_list<Arg> args = {
      tensor(dt.data(), ScalarType::F32, {V, C}), tensor(di.data(), ScalarType::I32, {B}),
      tensor(dw.data(), ScalarType::F32, {B, 2 * C}, {pitch, 1}), tensor(dout.data(), ScalarType::F32, {B, C}),
      tensor(dbig.data(), ScalarType::I64, {B})};
  GatherRun r;
  r.source = k.compileFor(args).source;
  k.launch(nullptr, args);
  r.out.resize(size_t(B * C));
  r.big.resize(size_t(B));
  rt.copyToHost(r.out.data(), dout, r.out.size() * 4);
  rt.copyToHost(r.big.data(), dbig, r.big.size() * 8);
  return r;
}

TEST(Index32, KernelsComputeWhatThe64BitFormComputes) {
  std::mt19937 rng(std::random_device{}());
  const int64_t V = 37, C = 45, B = 29, pitch = 2 * C + 7;
  std::uniform_real_distribution<float> value(-2, 2);
  std::uniform_int_distribution<int32_t> id(0, int32_t(V - 1));
  std::vector<float> table(size_t(V * C)), w(size_t(B * pitch));
  std::vector<int32_t> ids(static_cast<size_t>(B));
  for (auto& x : table) x = value(rng);
  for (auto& x : w) x = value(rng);
  for (auto& x : ids) x = id(rng);

  const GatherRun narrow = runGather(true, V, C, B, pitch, table, ids, w);
  const GatherRun wide = runGather(false, V, C, B, pitch, table, ids, w);
  EXPECT_THAT(narrow.source, HasSubstr("--index32"));
  EXPECT_THAT(narrow.source, HasSubstr("int32_t C,"));
  EXPECT_THAT(narrow.source, HasSubstr("int32_t w_stride0"));
  EXPECT_THAT(wide.source, Not(HasSubstr("int32_t C,")));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t c = 0; c < C; ++c) {
      const float want = table[size_t(ids[size_t(b)] * C + c)] * w[size_t(b * pitch + C + c)];
      ASSERT_EQ(narrow.out[size_t(b * C + c)], want) << "row " << b << " column " << c;
      ASSERT_EQ(wide.out[size_t(b * C + c)], want) << "row " << b << " column " << c;
    }
    const int64_t big = C * 3000000000 + 2 * C * 1000000000 + b;  // past 2^31: 64-bit arithmetic
    EXPECT_EQ(narrow.big[size_t(b)], big) << "row " << b;
    EXPECT_EQ(wide.big[size_t(b)], big) << "row " << b;
  }
}

// 2^31 + 4096 bytes of address space, reserved (MAP_NORESERVE): a tensor
// past the 32-bit limit whose untouched pages cost no memory.
struct ReservedBytes {
  static constexpr size_t kSize = (size_t(1) << 31) + 4096;
  uint8_t* bytes = nullptr;
  ReservedBytes() {
    void* p = ::mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) bytes = static_cast<uint8_t*>(p);
  }
  ~ReservedBytes() {
    if (bytes) ::munmap(bytes, kSize);
  }
  ReservedBytes(const ReservedBytes&) = delete;
  ReservedBytes& operator=(const ReservedBytes&) = delete;
};

// A byte tensor of N elements whose last four are read: at N = 2^31 - 1 the
// launch fits 32 bits, at 2^31 it takes the 64-bit form; both must read the
// right bytes. Only the pages at the end are touched (a reservation, not
// 2 GiB of memory).
TEST(Index32, TheBoundaryTakesTheRightForm) {
  ReservedBytes reserved;
  ASSERT_NE(reserved.bytes, nullptr);
  uint8_t* bytes = reserved.bytes;
  Runtime rt(cpuOptions("cpu"));
  Module m = rt.loadModuleFromString("tail.spn", R"(
@grid(1)
@block(4)
kernel tail(x: u8[N], out: u8[4]):
    t = thread_id()
    out[t] = x[N - 1 - t]
)");
  Kernel k = m.kernel("tail");
  DeviceBuffer dout = rt.allocate(4);
  for (int64_t n : {(int64_t(1) << 31) - 1, int64_t(1) << 31}) {
    for (int64_t i = 1; i <= 4; ++i) bytes[n - i] = uint8_t((n + i) & 0xff);
    const std::initializer_list<Arg> args = {tensor(bytes, ScalarType::U8, {n}),
                                             tensor(dout.data(), ScalarType::U8, {4})};
    const std::string source = k.compileFor(args).source;
    if (n < (int64_t(1) << 31)) EXPECT_THAT(source, HasSubstr("int32_t N)")) << "N = " << n;
    else EXPECT_THAT(source, HasSubstr("int64_t N)")) << "N = " << n;
    k.launch(nullptr, args);
    uint8_t out[4] = {};
    rt.copyToHost(out, dout, 4);
    for (int64_t t = 0; t < 4; ++t) EXPECT_EQ(out[t], uint8_t((n + t + 1) & 0xff)) << "N = " << n << ", thread " << t;
  }
}

// A range loop whose stop is a local (which the i64 form steps through the
// overflow-safe __spn_range_next) counts in a uint32_t with 32-bit indices
// and a plain increment: near N = 2^31 - 1 with a step of 2^30 + 1 an
// int32_t counter would overflow (UB) and a wrapping one would loop
// forever; thread 0 must visit exactly 0 and 2^30 + 1 (2^31 + 2 > N stops
// it). Four threads, each its own start and stop N // (t + 1): the visited
// positions are written (the reserved bytes' pages are touched only there).
TEST(Index32, ALoopNearTheTopStopsAtItsBound) {
  ReservedBytes reserved;
  ASSERT_NE(reserved.bytes, nullptr);
  uint8_t* bytes = reserved.bytes;
  Runtime rt(cpuOptions("cpu"));
  Module m = rt.loadModuleFromString("strides.spn", R"(
const STEP = 1073741825
@grid(1)
@block(4)
kernel strides(x: u8[N], count: i32[4]):
    t = thread_id()
    visits = 0
    stop = N // (t + 1)
    for j in range(i64(t) * 1000, stop, STEP):
        x[j] = u8(t + 1)
        visits += 1
    count[t] = visits
)");
  Kernel k = m.kernel("strides");
  DeviceBuffer dcount = rt.allocate(16);
  const int64_t n = (int64_t(1) << 31) - 1, step = 1073741825;
  const std::initializer_list<Arg> args = {tensor(bytes, ScalarType::U8, {n}),
                                           tensor(dcount.data(), ScalarType::I32, {4})};
  const std::string source = k.compileFor(args).source;
  EXPECT_THAT(source, HasSubstr("for (uint32_t j = "));
  k.launch(nullptr, args);
  int32_t count[4] = {};
  rt.copyToHost(count, dcount, 16);
  for (int64_t t = 0; t < 4; ++t) {
    int64_t want = 0;
    for (int64_t j = t * 1000; j < n / (t + 1); j += step) {
      ++want;
      EXPECT_EQ(bytes[j], uint8_t(t + 1)) << "thread " << t << ", j = " << j;
    }
    EXPECT_EQ(count[t], want) << "thread " << t;
  }
}

// Which counter a range loop gets with 32-bit indices: int32_t where j +
// step cannot pass INT32_MAX (D is below 2^30, as x's dim 2 * D is below
// 2^31; the step is at most 1024), int64_t where it could (N up to
// 2^31 - 1) and the loop is plain. Both compute what the 64-bit form does.
TEST(Index32, LoopCountersAre32BitWhereTheyCannotOverflow) {
  const char* source = R"(
@grid(M)
@block(64)
kernel pairs(x: i32[M, 2 * D], y: i32[N], out: i32[M, D], total: i64[M]):
    row = block_id()
    for j in range(thread_id(), D, block_dim()):
        out[row, j] = x[row, j] * 3 + x[row, D + j] + i32(j)
    if thread_id() == 0:
        s = i64(0)
        for n in range(0, N, 7):
            s += i64(y[n]) * n
        total[row] = s
)";
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int32_t> value(-1000, 1000);
  const int64_t M = 5, D = 301, N = 1000;
  std::vector<int32_t> x(static_cast<size_t>(M * 2 * D)), y(static_cast<size_t>(N));
  for (auto& v : x) v = value(rng);
  for (auto& v : y) v = value(rng);
  for (bool index32 : {true, false}) {
    RuntimeOptions o = cpuOptions("cpu");
    o.index32 = index32;
    Runtime rt(o);
    Kernel k = rt.loadModuleFromString("pairs.spn", source).kernel("pairs");
    DeviceBuffer dx = rt.allocate(x.size() * 4), dy = rt.allocate(y.size() * 4), dout = rt.allocate(size_t(M * D) * 4),
                 dtotal = rt.allocate(size_t(M) * 8);
    rt.copyToDevice(dx, x.data(), x.size() * 4);
    rt.copyToDevice(dy, y.data(), y.size() * 4);
    const std::initializer_list<Arg> args = {
        tensor(dx.data(), ScalarType::I32, {M, 2 * D}), tensor(dy.data(), ScalarType::I32, {N}),
        tensor(dout.data(), ScalarType::I32, {M, D}), tensor(dtotal.data(), ScalarType::I64, {M})};
    const std::string text = k.compileFor(args).source;
    if (index32) {
      EXPECT_THAT(text, HasSubstr("for (int32_t j = "));
      EXPECT_THAT(text, HasSubstr("for (int64_t n = "));
    } else {
      EXPECT_THAT(text, HasSubstr("for (int64_t j = "));
    }
    k.launch(nullptr, args);
    std::vector<int32_t> out(static_cast<size_t>(M * D));
    std::vector<int64_t> total(static_cast<size_t>(M));
    rt.copyToHost(out.data(), dout, out.size() * 4);
    rt.copyToHost(total.data(), dtotal, total.size() * 8);
    int64_t want = 0;
    for (int64_t n = 0; n < N; n += 7) want += int64_t(y[size_t(n)]) * n;
    for (int64_t r = 0; r < M; ++r) {
      EXPECT_EQ(total[size_t(r)], want) << "row " << r << (index32 ? " (32-bit)" : "");
      for (int64_t j = 0; j < D; ++j)
        ASSERT_EQ(out[size_t(r * D + j)], x[size_t(r * 2 * D + j)] * 3 + x[size_t(r * 2 * D + D + j)] + int32_t(j))
            << "row " << r << ", column " << j << (index32 ? " (32-bit)" : "");
    }
  }
}

// Two more things the bounds see through: a narrowing cast of a value that
// its type holds (i32(cdiv(N, 8)) <= 2^28) and a const whose value depends
// on the warp width (either value). So k = i64(t) * 8 is bounded, and the
// test `k < N` (k up to 8 * (2^28 + 3)) is a 32-bit unsigned compare, at
// both warp widths; the values match the 64-bit form's.
TEST(Index32, NarrowingCastsAndPerWidthConstsAreBounded) {
  const char* source = R"(
@grid(1)
@block(64)
kernel strided(x: i32[N], out: i32[N]):
    const EXTRA = 3 if warp_size() == 32 else 2
    n = i32(cdiv(N, 8))
    if thread_id() == 0:
        for t in range(0, n + EXTRA):
            k = i64(t) * 8
            if k < N:
                out[k] = x[k] * 2 + i32(t)
)";
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int32_t> value(-1000, 1000);
  const int64_t N = 1001;
  std::vector<int32_t> x(static_cast<size_t>(N));
  for (auto& v : x) v = value(rng);
  for (const char* target : {"cpu", "cpu:warp64"})
    for (bool index32 : {true, false}) {
      RuntimeOptions o = cpuOptions(target);
      o.index32 = index32;
      Runtime rt(o);
      Kernel k = rt.loadModuleFromString("strided.spn", source).kernel("strided");
      DeviceBuffer dx = rt.allocate(x.size() * 4), dout = rt.allocate(x.size() * 4);
      rt.copyToDevice(dx, x.data(), x.size() * 4);
      std::vector<int32_t> out(x.size(), -7);
      rt.copyToDevice(dout, out.data(), out.size() * 4);
      const std::initializer_list<Arg> args = {tensor(dx.data(), ScalarType::I32, {N}),
                                               tensor(dout.data(), ScalarType::I32, {N})};
      const std::string text = k.compileFor(args).source;
      if (index32) EXPECT_THAT(text, HasSubstr("if (uint32_t(k) < uint32_t(N))"));
      else EXPECT_THAT(text, HasSubstr("if (k < N)"));
      k.launch(nullptr, args);
      rt.copyToHost(out.data(), dout, out.size() * 4);
      for (int64_t i = 0; i < N; ++i)
        ASSERT_EQ(out[size_t(i)], i % 8 ? -7 : x[size_t(i)] * 2 + int32_t(i / 8))
            << target << " element " << i << (index32 ? " (32-bit)" : "");
    }
}

// A view's extent (largest offset + 1) and each of its strides decide, not
// its element count: four elements spread over 2^31 do not fit. Binding
// only; no memory is touched.
TEST(Index32, AViewsExtentDecides) {
  Runtime rt(cpuOptions("cpu"));
  Module m = rt.loadModuleFromString("corners.spn", R"(
@grid(1)
@block(1)
kernel corners(x: f32[M, N] strided):
    x[0, 0] = x[M - 1, N - 1]
)");
  // One parameter: the views below span gigabytes past `dummy`, and a second
  // tensor (a static beside it) could fall inside them, which the launch's
  // overlap check refuses (seen at -O0, where the linker placed it there).
  Kernel k = m.kernel("corners");
  static float dummy[4];
  auto sourceFor = [&](int64_t stride0, int64_t stride1) {
    return k.compileFor({tensor(dummy, ScalarType::F32, {2, 2}, {stride0, stride1})}).source;
  };
  const int64_t kMax = INT32_MAX;
  EXPECT_THAT(sourceFor(kMax - 2, 1), HasSubstr("int32_t x_stride0"));  // extent 2^31 - 1
  EXPECT_THAT(sourceFor(kMax - 1, 1), HasSubstr("int64_t x_stride0"));  // extent 2^31
  EXPECT_THAT(sourceFor(1, kMax - 2), HasSubstr("int32_t x_stride0"));  // the last axis counts as much
  EXPECT_THAT(sourceFor(1, kMax - 1), HasSubstr("int64_t x_stride0"));
  EXPECT_THAT(sourceFor(-(kMax - 2), 1), HasSubstr("int32_t x_stride0"));  // a negative stride by its size
  // A broadcast view: 2^31 elements over 2 bytes of memory (strides 0). The
  // element count decides too: a product of its dims must fit.
  const std::initializer_list<Arg> broadcast = {
      tensor(dummy, ScalarType::F32, {int64_t(1) << 16, int64_t(1) << 15}, {0, 1})};
  EXPECT_THAT(k.compileFor(broadcast).source, HasSubstr("int64_t x_stride0"));
}

}  // namespace
}  // namespace spindle::test
