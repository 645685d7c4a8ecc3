// Swizzled shared buffers (docs/language.md 5.4, `shared(T, [R, C],
// swizzle=S)`) on the cpu target, by value, at both warp widths, unchecked
// and checked, for S = 32, 64 and 128: a buffer written by one access path
// and read by another must give back what was written, whatever the
// layout. Element stores then the four tile loads (mma_load_a, _a_t, _b,
// _b_t: the element path the CPU and AMD take, ldmatrix's fallback) in
// products checked against the host's; copy_async (runs of 4, 8 and 16
// bytes, chunk-aligned or not, zero past the edges) then element loads,
// f32, f16 and bf16; a swizzled buffer in dynamic shared memory past
// another buffer (its offset rounded to 1024); a checked build's reports of
// an index outside the buffer and of a read of an element no thread wrote.
// That the layout is the swizzle and not row-major is the host tests'
// (tests/prelude_host/swizzle_test.cpp); here the generated source is
// checked to take it on every access.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "spindle/runtime.hpp"
#include "test_util.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::test {
namespace {

using ::testing::HasSubstr;

std::string withSwizzle(std::string text, int swizzle) {
  const std::string key = "@SW@";
  text.replace(text.find(key), key.size(), std::to_string(swizzle));
  return text;
}

// Four swizzled buffers written element by element, then read by the four
// tile loads: Y[0] = A @ B, Y[1] = A @ Bt^T, Y[2] = At[:, 16:32]^T @ B.
constexpr const char* kProducts = R"(const SW = @SW@

@grid(1)
@block(64)
kernel products[T](A: T[16, 64], B: T[64, 64], Bt: T[64, 64], At: T[64, 64], Y: f32[3, 16, 64]):
    As = shared(T, [16, 64], swizzle=SW)
    Bs = shared(T, [64, 64], swizzle=SW)
    Bts = shared(T, [64, 64], swizzle=SW)
    Ats = shared(T, [64, 64], swizzle=SW)
    tid = thread_id()
    for i in range(tid, 16 * 64, 64):
        As[i // 64, i % 64] = A[i // 64, i % 64]
    for i in range(tid, 64 * 64, 64):
        Bs[i // 64, i % 64] = B[i // 64, i % 64]
        Bts[i // 64, i % 64] = Bt[i // 64, i % 64]
        Ats[i // 64, i % 64] = At[i // 64, i % 64]
    sync()
    acc = mma_zero(f32, [3, 4])
    a = mma_a(T, [2])
    b = mma_b(T, [2])
    for k in static_range(4):
        mma_load_a(a[0], As, 0, k * 16)
        mma_load_a_t(a[1], Ats, k * 16, 16)
        for j in static_range(4):
            mma_load_b(b[0], Bs, k * 16, j * 16)
            mma_load_b_t(b[1], Bts, j * 16, k * 16)
            acc[0, j] = mma(a[0], b[0], acc[0, j])
            acc[1, j] = mma(a[0], b[1], acc[1, j])
            acc[2, j] = mma(a[1], b[0], acc[2, j])
    for j in static_range(4):
        for r, c, v in elements(acc[0, j]):
            Y[0, r, j * 16 + c] = v
        for r, c, v in elements(acc[1, j]):
            Y[1, r, j * 16 + c] = v
        for r, c, v in elements(acc[2, j]):
            Y[2, r, j * 16 + c] = v
)";

// Small integers, exact in f16 and bf16 and in every f32 sum here.
uint16_t halfCode(int v, bool bf16) {
  static const uint16_t f16[] = {0xc000, 0xbc00, 0x0000, 0x3c00, 0x4000};
  static const uint16_t b16[] = {0xc000, 0xbf80, 0x0000, 0x3f80, 0x4000};
  return (bf16 ? b16 : f16)[v + 2];
}

class CpuSwizzle : public ::testing::TestWithParam<std::tuple<const char*, bool, int>> {};

TEST_P(CpuSwizzle, TileLoadsReadWhatElementStoresWrote) {
  const auto [target, checked, swizzle] = GetParam();
  Runtime rt(cpuOptions(target, checked));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Kernel k = rt.loadModuleFromString("products.spn", withSwizzle(kProducts, swizzle)).kernel("products");
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> small(-2, 2);
  for (ScalarType t : {ScalarType::F16, ScalarType::BF16}) {
    const bool bf16 = t == ScalarType::BF16;
    std::vector<int> A(16 * 64), B(64 * 64), Bt(64 * 64), At(64 * 64);
    for (auto* v : {&A, &B, &Bt, &At})
      for (int& x : *v) x = small(rng);
    auto codes = [&](const std::vector<int>& v) {
      std::vector<uint16_t> out(v.size());
      for (size_t i = 0; i < v.size(); ++i) out[i] = halfCode(v[i], bf16);
      return out;
    };
    const std::vector<uint16_t> hA = codes(A), hB = codes(B), hBt = codes(Bt), hAt = codes(At);
    std::vector<float> Y(3 * 16 * 64, -1.0f);
    DeviceBuffer dA = rt.allocate(hA.size() * 2), dB = rt.allocate(hB.size() * 2), dBt = rt.allocate(hBt.size() * 2),
                 dAt = rt.allocate(hAt.size() * 2), dY = rt.allocate(Y.size() * 4);
    rt.copyToDevice(dA, hA.data(), hA.size() * 2);
    rt.copyToDevice(dB, hB.data(), hB.size() * 2);
    rt.copyToDevice(dBt, hBt.data(), hBt.size() * 2);
    rt.copyToDevice(dAt, hAt.data(), hAt.size() * 2);
    rt.copyToDevice(dY, Y.data(), Y.size() * 4);
    const Arg args[] = {tensor(dA.data(), t, {16, 64}), tensor(dB.data(), t, {64, 64}), tensor(dBt.data(), t, {64, 64}),
                        tensor(dAt.data(), t, {64, 64}), tensor(dY.data(), ScalarType::F32, {3, 16, 64})};
    k.launch(nullptr, args, 5);
    rt.copyToHost(Y.data(), dY, Y.size() * 4);
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 64; ++n) {
        int want[3] = {0, 0, 0};
        for (int kk = 0; kk < 64; ++kk) {
          want[0] += A[size_t(m * 64 + kk)] * B[size_t(kk * 64 + n)];
          want[1] += A[size_t(m * 64 + kk)] * Bt[size_t(n * 64 + kk)];
          want[2] += At[size_t(kk * 64 + 16 + m)] * B[size_t(kk * 64 + n)];
        }
        for (int p = 0; p < 3; ++p)
          ASSERT_EQ(Y[size_t((p * 16 + m) * 64 + n)], float(want[p]))
              << target << (checked ? " checked" : "") << " swizzle " << swizzle << (bf16 ? " bf16" : " f16")
              << " product " << p << " [" << m << ", " << n << "]";
      }
    // Every access of the buffers takes the swizzle: the stores, and the
    // loads (an unchecked build tries ldmatrix first, which takes it too).
    const std::string source = k.sourceFor(args, 5);
    const std::string s = std::to_string(swizzle);
    if (checked) {
      EXPECT_NE(source.find("__spn_checked_swizzled<1, " + s + ">(As, "), std::string::npos) << source;
      EXPECT_NE(source.find("__spn_mma_load_b_t<" + s + ">(b[1], Bts, "), std::string::npos) << source;
    } else {
      EXPECT_NE(source.find("__spn_swizzled<" + s + ">(Bs, 64, "), std::string::npos) << source;
      EXPECT_NE(source.find("__spn_mma_load_a_t_shared<" + s + ">(a[1], Ats, "), std::string::npos) << source;
    }
    EXPECT_NE(source.find("alignas(1024) __shared__"), std::string::npos) << source;
  }
}

// copy_async into a swizzled buffer in runs of RUN bytes from column off
// (off = 1: runs that start inside a 16-byte chunk, copied element by
// element), then element loads out; zero past X's edges; Y's other
// elements untouched. Rows of 256 bytes (2 to 8 panels).
constexpr const char* kCopies = R"(const SW = @SW@
const TR = 16

@grid(1)
@block(64)
kernel copies[T](X: T[R, C], Y: T[P, Q], r0: i64, c0: i64, off: i32):
    const TC = 256 // sizeof(T)
    const N = RUN // sizeof(T)
    const RUNS = TC // N - 1
    S = shared(T, [TR, TC], swizzle=SW)
    tid = thread_id()
    for e in range(tid, TR * RUNS, 64):
        r = e // RUNS
        c = off + (e % RUNS) * N
        copy_async(S, r, c, X, r0 + r, c0 + c, N)
    copy_commit()
    copy_wait(0)
    sync()
    for f in range(tid, TR * RUNS * N, 64):
        y = f // (RUNS * N)
        x = off + f % (RUNS * N)
        Y[y, x] = S[y, x]
)";

TEST_P(CpuSwizzle, ElementLoadsReadWhatCopiesWrote) {
  const auto [target, checked, swizzle] = GetParam();
  Runtime rt(cpuOptions(target, checked));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  std::mt19937_64 rng(std::random_device{}());
  for (int run : {4, 8, 16}) {
    std::string text = withSwizzle(kCopies, swizzle);
    text.replace(text.find("RUN //"), 3, std::to_string(run));
    Kernel k = rt.loadModuleFromString("copies.spn", text).kernel("copies");
    for (ScalarType t : {ScalarType::F32, ScalarType::F16, ScalarType::BF16}) {
      const int64_t bytes = t == ScalarType::F32 ? 4 : 2;
      if (run < bytes) continue;
      const int64_t TC = 256 / bytes, N = run / bytes, RUNS = TC / N - 1;
      struct Case {
        int64_t R, C, r0, c0, off;
      };
      const Case cases[] = {{40, 200, 8, 16, 0}, {40, 200, 3, 5, 1}, {20, 70, 10, 24, 0}, {20, 70, 10, 24, 1}};
      for (const Case& cs : cases) {
        std::vector<uint8_t> X(size_t(cs.R * cs.C * bytes));
        for (auto& b : X) b = uint8_t(rng());
        for (size_t i = size_t(bytes) - 1; i < X.size(); i += size_t(bytes)) X[i] &= 0xbf;  // finite values
        std::vector<uint8_t> Y(size_t(16 * TC * bytes), 0xff);
        DeviceBuffer dX = rt.allocate(X.size()), dY = rt.allocate(Y.size());
        rt.copyToDevice(dX, X.data(), X.size());
        rt.copyToDevice(dY, Y.data(), Y.size());
        k.launch(nullptr, {tensor(dX.data(), t, {cs.R, cs.C}), tensor(dY.data(), t, {16, TC}), scalar(cs.r0),
                           scalar(cs.c0), scalar(int32_t(cs.off))});
        rt.copyToHost(Y.data(), dY, Y.size());
        for (int64_t r = 0; r < 16; ++r)
          for (int64_t c = 0; c < TC; ++c) {
            const bool copied = c >= cs.off && c < cs.off + RUNS * N;
            const int64_t xr = cs.r0 + r, xc = cs.c0 + c;
            const bool inside = xr < cs.R && xc < cs.C;
            for (int64_t b = 0; b < bytes; ++b) {
              const uint8_t want = !copied ? 0xff : inside ? X[size_t((xr * cs.C + xc) * bytes + b)] : 0;
              ASSERT_EQ(Y[size_t((r * TC + c) * bytes + b)], want)
                  << target << (checked ? " checked" : "") << " swizzle " << swizzle << " runs of " << run << " bytes, "
                  << bytes << "-byte elements, X " << cs.R << "x" << cs.C << " at (" << cs.r0 << ", " << cs.c0
                  << ") from column " << cs.off << ": Y[" << r << ", " << c << "] byte " << b;
            }
          }
      }
    }
  }
}

// Past 48 KiB, both buffers go to dynamic shared memory: the swizzled one
// after the small one, at an offset rounded up to 1024 bytes (and the
// launch's size counts the padding). A closure writes it, through the
// layout (it captures the buffer, not a row-major view of it).
constexpr const char* kDynamic = R"(const SW = @SW@

@grid(1)
@block(128)
kernel dynamic(X: f32[N], Y: f32[N]):
    U = shared(f32, [5])
    S = shared(f32, [128, 128], swizzle=SW)
    tid = thread_id()
    def put(r: i32, v: f32):
        S[r, tid] = v
    if tid < 5:
        U[tid] = f32(tid)
    for r in range(128):
        put(r, X[r * 128 + tid])
    sync()
    for r in range(128):
        Y[r * 128 + tid] = S[r, 127 - tid] + U[tid % 5]
)";

TEST_P(CpuSwizzle, ASwizzledBufferInDynamicSharedMemoryStartsOnAMultipleOf1024Bytes) {
  const auto [target, checked, swizzle] = GetParam();
  Runtime rt(cpuOptions(target, checked));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Kernel k = rt.loadModuleFromString("dynamic.spn", withSwizzle(kDynamic, swizzle)).kernel("dynamic");
  const int64_t N = 128 * 128;
  std::vector<float> X(static_cast<size_t>(N)), Y(static_cast<size_t>(N), -1.0f);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> d(-1, 1);
  for (auto& v : X) v = d(rng);
  DeviceBuffer dX = rt.allocate(size_t(N) * 4), dY = rt.allocate(size_t(N) * 4);
  rt.copyToDevice(dX, X.data(), size_t(N) * 4);
  rt.copyToDevice(dY, Y.data(), size_t(N) * 4);
  const Arg args[] = {tensor(dX.data(), ScalarType::F32, {N}), tensor(dY.data(), ScalarType::F32, {N})};
  k.launch(nullptr, args, 2);
  rt.copyToHost(Y.data(), dY, size_t(N) * 4);
  for (int64_t r = 0; r < 128; ++r)
    for (int64_t t = 0; t < 128; ++t)
      ASSERT_EQ(Y[size_t(r * 128 + t)], X[size_t(r * 128 + 127 - t)] + float(t % 5)) << r << ", " << t;
  const std::string source = k.sourceFor(args, 2);
  EXPECT_NE(source.find("__SPN_DYNAMIC_SHARED_1024(__spn_dynamic_shared)"), std::string::npos) << source;
  EXPECT_NE(source.find(checked ? "__spn_checked_swizzled<1, " : "__spn_swizzled<"), std::string::npos) << source;
  EXPECT_NE(source.find("__spn_dynamic_shared + __spn_align1024(__spn_align16(5 * sizeof(float)))"), std::string::npos)
      << source;
  EXPECT_NE(source.find("__spn_align1024(__spn_align16(5 * sizeof(float))) + __spn_align16(128 * 128 * sizeof(float))"),
            std::string::npos)
      << source;
}

INSTANTIATE_TEST_SUITE_P(WidthsChecksAndSwizzles, CpuSwizzle,
                         ::testing::Combine(::testing::Values("cpu", "cpu:warp64"), ::testing::Bool(),
                                            ::testing::Values(32, 64, 128)));

// A checked build: an index outside the swizzled buffer is reported with
// the buffer's shape (not wrapped into another element by the layout), and
// so is a read of an element no thread wrote.
constexpr const char* kChecks = R"(@grid(1)
@block(64)
kernel outside(Y: f32[64], col: i32):
    S = shared(f32, [8, 32], swizzle=128)
    t = thread_id()
    for r in range(8):
        S[r, t % 32] = f32(t)
    sync()
    Y[t] = S[t % 8, col]

@grid(1)
@block(64)
kernel unwritten(Y: f32[64]):
    S = shared(f32, [8, 32], swizzle=64)
    t = thread_id()
    if t < 32:
        S[0, t] = f32(t)
    sync()
    Y[t] = S[t % 8, t % 32]
)";

class CpuSwizzleChecks : public ::testing::TestWithParam<const char*> {};

TEST_P(CpuSwizzleChecks, OutOfBufferAndUnwrittenReadsAreReported) {
  Runtime rt(cpuOptions(GetParam(), /*checked=*/true));
  Module m = rt.loadModuleFromString("checks.spn", kChecks);
  DeviceBuffer dY = rt.allocate(64 * 4);
  const std::string past = errorFrom([&] {
    m.kernel("outside").launch(nullptr, {tensor(dY.data(), ScalarType::F32, {64}), scalar(int32_t(32))});
  });
  EXPECT_THAT(past, HasSubstr("checks.spn:9:12: S["));
  EXPECT_THAT(past, HasSubstr(", 32] is out of bounds: shape [8, 32], axis 1"));
  // Inside, the same kernel runs.
  EXPECT_EQ(errorFrom([&] {
              m.kernel("outside").launch(nullptr, {tensor(dY.data(), ScalarType::F32, {64}), scalar(int32_t(31))});
            }),
            "(no error)");
  const std::string unwritten =
      errorFrom([&] { m.kernel("unwritten").launch(nullptr, {tensor(dY.data(), ScalarType::F32, {64})}); });
  EXPECT_THAT(unwritten, HasSubstr("checks.spn:19:12: S["));
  EXPECT_THAT(unwritten, HasSubstr("is read before any thread of its block wrote it"));
}

INSTANTIATE_TEST_SUITE_P(Widths, CpuSwizzleChecks, ::testing::Values("cpu", "cpu:warp64"));

}  // namespace
}  // namespace spindle::test
#endif
