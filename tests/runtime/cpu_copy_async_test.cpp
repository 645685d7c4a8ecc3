// copy_async / copy_commit / copy_wait (docs/language.md 8.12) on the cpu
// target, by value, at both warp widths, unchecked and checked: a block
// copies a window of a tensor into a shared buffer in runs, zero past the
// tensor's edges, and writes the buffer out; the expectation is computed
// here from the window's definition, on fresh random inputs, at windows
// inside, across and wholly past the edges, and with rows that are not
// 16-byte aligned (an odd column count). Also: shared buffers past 48 KiB
// together are placed in dynamic shared memory (launch_geometry's
// sharedPastStaticLimit) and still read back what was written. And copies
// whose source row and column the generator proves fit 32 bits, tested in
// 32-bit arithmetic, over tiles past both edges. And copies from one matrix
// of a 3-D tensor (a batch index), contiguous and strided.
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

// A 16 x 32 window of X at (r0, c0), in runs of 16 bytes, into S; then S to Y.
constexpr const char* kWindowKernel = R"(const TR = 16
const TC = 32

@grid(1)
@block(64)
kernel window[T](X: T[R, C], Y: T[P, Q], r0: i64, c0: i64):
    const W = 16 // sizeof(T)
    S = shared(T, [TR, TC])
    tid = thread_id()
    for l in static_range(TR * TC // W // 64):
        e = tid + l * 64
        r = e // (TC // W)
        c = (e % (TC // W)) * W
        copy_async(S, r, c, X, r0 + r, c0 + c, W)
    copy_commit()
    copy_wait(0)
    sync()
    for l in static_range(TR * TC // 64):
        e = tid + l * 64
        Y[e // TC, e % TC] = S[e // TC, e % TC]
)";

// The same copies from windows that tile X, one a block, and one block
// past X's last row and column: the source row and column are sums of
// block geometry and constants, so with 32-bit indices the generator
// proves them within 32 bits and the copies test them against X's
// extents in 32-bit arithmetic (docs/language.md 8.12).
constexpr const char* kTilesKernel = R"(const TR = 16
const TC = 32

@grid(cdiv(C, TC) + 1, cdiv(R, TR) + 1)
@block(64)
kernel tiles[T](X: T[R, C], Y: T[P, Q]):
    const W = 16 // sizeof(T)
    S = shared(T, [TR, TC])
    tid = thread_id()
    r0 = i64(block_id(1)) * TR
    c0 = i64(block_id(0)) * TC
    for l in static_range(TR * TC // W // 64):
        e = tid + l * 64
        r = e // (TC // W)
        c = (e % (TC // W)) * W
        copy_async(S, r, c, X, r0 + r, c0 + c, W)
    copy_commit()
    copy_wait(0)
    sync()
    for l in static_range(TR * TC // 64):
        f = tid + l * 64
        Y[r0 + f // TC, c0 + f % TC] = S[f // TC, f % TC]
)";

// The window kernel's copies from matrix b of a 3-D X (copy_async's batch
// index), contiguous or through its strides.
constexpr const char* kBatchWindowKernel = R"(const TR = 16
const TC = 32

@grid(1)
@block(64)
kernel batch_window[T](X: T[NB, R, C], Xs: T[SB, SR, SC] strided, Y: T[2, TR, TC], b: i64, r0: i64, c0: i64):
    const W = 16 // sizeof(T)
    S = shared(T, [2 * TR, TC])
    tid = thread_id()
    for l in static_range(TR * TC // W // 64):
        e = tid + l * 64
        r = e // (TC // W)
        c = (e % (TC // W)) * W
        copy_async(S, r, c, X, b, r0 + r, c0 + c, W)
        copy_async(S, TR + r, c, Xs, b, r0 + r, c0 + c, W)
    copy_commit()
    copy_wait(0)
    sync()
    for l in static_range(2 * TR * TC // 64):
        e = tid + l * 64
        Y[e // (TR * TC), (e // TC) % TR, e % TC] = S[e // TC, e % TC]
)";

// 72 KiB of shared buffers (past the 48 KiB of static shared memory): each
// thread writes its column of both, and reads back another thread's.
constexpr const char* kBigSharedKernel = R"(@grid(1)
@block(128)
kernel big(X: f32[N], Y: f32[N]):
    S = shared(f32, [128, 128])
    U = shared(f32, [64, 32])
    tid = thread_id()
    for r in range(128):
        S[r, tid] = X[r * 128 + tid]
    for r in range(64):
        if tid < 32:
            U[r, tid] = X[r * 32 + tid] * 2.0
    sync()
    for r in range(128):
        Y[r * 128 + tid] = S[r, 127 - tid] + U[r % 64, tid % 32]
)";

class CpuCopyAsync : public ::testing::TestWithParam<std::tuple<const char*, bool>> {};

TEST_P(CpuCopyAsync, CopiesTheWindowWithZerosPastTheEdges) {
  const auto [target, checked] = GetParam();
  Runtime rt(cpuOptions(target, checked));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Kernel k = rt.loadModuleFromString("window.spn", kWindowKernel).kernel("window");
  std::mt19937_64 rng(std::random_device{}());
  struct Case {
    int64_t R, C, r0, c0;
  };
  // Inside; across the bottom and right edges; an odd C (rows not 16-byte
  // aligned, so the copies take the element path on GPUs too); past both.
  const Case cases[] = {{40, 64, 8, 16}, {20, 40, 10, 24}, {37, 53, 5, 7}, {37, 53, 30, 40}, {16, 32, 16, 32}};
  for (ScalarType t : {ScalarType::F32, ScalarType::F16}) {
    const size_t bytes = t == ScalarType::F32 ? 4 : 2;
    for (const Case& cs : cases) {
      std::vector<uint8_t> X(size_t(cs.R * cs.C) * bytes);
      for (auto& b : X) b = uint8_t(rng());
      if (t == ScalarType::F16)  // finite values: clear the top exponent bit of each element
        for (size_t i = 1; i < X.size(); i += 2) X[i] &= 0xbf;
      else
        for (size_t i = 3; i < X.size(); i += 4) X[i] &= 0xbf;
      std::vector<uint8_t> Y(16 * 32 * bytes, 0xff);
      DeviceBuffer dX = rt.allocate(X.size()), dY = rt.allocate(Y.size());
      rt.copyToDevice(dX, X.data(), X.size());
      rt.copyToDevice(dY, Y.data(), Y.size());
      k.launch(nullptr,
               {tensor(dX.data(), t, {cs.R, cs.C}), tensor(dY.data(), t, {16, 32}), scalar(cs.r0), scalar(cs.c0)});
      rt.copyToHost(Y.data(), dY, Y.size());
      for (int64_t r = 0; r < 16; ++r)
        for (int64_t c = 0; c < 32; ++c) {
          const int64_t xr = cs.r0 + r, xc = cs.c0 + c;
          const bool inside = xr < cs.R && xc < cs.C;
          for (size_t b = 0; b < bytes; ++b) {
            const uint8_t want = inside ? X[size_t(xr * cs.C + xc) * bytes + b] : 0;
            ASSERT_EQ(Y[size_t(r * 32 + c) * bytes + b], want)
                << target << (checked ? " checked " : " ") << (bytes == 4 ? "f32" : "f16") << " X " << cs.R << "x"
                << cs.C << " at (" << cs.r0 << ", " << cs.c0 << "): Y[" << r << ", " << c << "] byte " << b;
          }
        }
    }
  }
}

TEST_P(CpuCopyAsync, CopiesTilesWithThirtyTwoBitIndices) {
  const auto [target, checked] = GetParam();
  Runtime rt(cpuOptions(target, checked));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Kernel k = rt.loadModuleFromString("tiles.spn", kTilesKernel).kernel("tiles");
  std::mt19937_64 rng(std::random_device{}());
  // Whole tiles; partial ones at the bottom and right; an odd C (rows not
  // 16-byte aligned); every case has a block wholly past each edge.
  const int64_t shapes[][2] = {{32, 64}, {20, 40}, {37, 53}, {5, 9}};
  for (ScalarType t : {ScalarType::F32, ScalarType::F16}) {
    const size_t bytes = t == ScalarType::F32 ? 4 : 2;
    for (const auto& shape : shapes)
      for (int64_t shift : {0, 1}) {  // X at its allocation's start (16-byte aligned), or one element on
        const int64_t R = shape[0], C = shape[1];
        const int64_t P = ((R + 15) / 16 + 1) * 16, Q = ((C + 31) / 32 + 1) * 32;
        std::vector<uint8_t> X(size_t(R * C + shift) * bytes);
        for (auto& b : X) b = uint8_t(rng());
        for (size_t i = bytes - 1; i < X.size(); i += bytes) X[i] &= 0xbf;  // finite values
        std::vector<uint8_t> Y(size_t(P * Q) * bytes, 0xff);
        DeviceBuffer dX = rt.allocate(X.size()), dY = rt.allocate(Y.size());
        rt.copyToDevice(dX, X.data(), X.size());
        rt.copyToDevice(dY, Y.data(), Y.size());
        const Arg args[] = {tensor(static_cast<uint8_t*>(dX.data()) + shift * int64_t(bytes), t, {R, C}),
                            tensor(dY.data(), t, {P, Q})};
        k.launch(nullptr, args, 2);
        rt.copyToHost(Y.data(), dY, Y.size());
        for (int64_t r = 0; r < P; ++r)
          for (int64_t c = 0; c < Q; ++c)
            for (size_t b = 0; b < bytes; ++b) {
              const uint8_t want = r < R && c < C ? X[size_t(shift + r * C + c) * bytes + b] : 0;
              ASSERT_EQ(Y[size_t(r * Q + c) * bytes + b], want)
                  << target << (checked ? " checked " : " ") << (bytes == 4 ? "f32" : "f16") << " X " << R << "x" << C
                  << " shifted " << shift << ": Y[" << r << ", " << c << "] byte " << b;
            }
        // The launch's specialization has 32-bit indices, and its copies
        // pass the source row and column in 32 bits: the row as an int32_t
        // (the grid's second axis is below 65536), the column as a
        // uint32_t (c0 + c can pass INT32_MAX by a tile, never
        // UINT32_MAX). A checked build keeps 64 bits: it tests each
        // element. A copy's source is read in runs, so its alignment is
        // specialized on.
        const std::string source = k.sourceFor(args, 2);
        if (!checked)
          EXPECT_NE(source.find("int32_t(r0) + r, uint32_t(c0) + uint32_t(c))"), std::string::npos) << source;
        EXPECT_EQ(source.find("X 16-byte aligned") != std::string::npos, shift == 0) << source;
      }
  }
}

// A 3-D source: matrix b's window, zero past its edges and for a b outside
// [0, NB); the strided source is the same values seen through a view whose
// matrices are not adjacent and whose rows are padded (strides (R * (C + 3)
// * 2, C + 3, 1): every other matrix of a padded buffer), so the batch
// stride and row stride are its own.
TEST_P(CpuCopyAsync, CopiesFromAMatrixOfABatch) {
  const auto [target, checked] = GetParam();
  Runtime rt(cpuOptions(target, checked));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Kernel k = rt.loadModuleFromString("batch_window.spn", kBatchWindowKernel).kernel("batch_window");
  std::mt19937_64 rng(std::random_device{}());
  struct Case {
    int64_t NB, R, C, b, r0, c0;
  };
  const Case cases[] = {{3, 40, 64, 1, 8, 16},  {3, 20, 40, 2, 10, 24}, {2, 37, 53, 0, 5, 7},
                        {2, 37, 53, 1, 30, 40}, {2, 20, 40, 2, 0, 0},   {2, 20, 40, -1, 0, 0}};
  for (ScalarType t : {ScalarType::F32, ScalarType::F16}) {
    const size_t bytes = t == ScalarType::F32 ? 4 : 2;
    for (const Case& cs : cases) {
      const int64_t pitch = cs.C + 3, matrix = cs.R * pitch * 2;
      std::vector<uint8_t> X(size_t(cs.NB * cs.R * cs.C) * bytes), Xs(size_t(cs.NB * matrix) * bytes);
      for (auto& v : X) v = uint8_t(rng());
      for (size_t i = bytes - 1; i < X.size(); i += bytes) X[i] &= 0xbf;  // finite values
      for (auto& v : Xs) v = uint8_t(rng());                              // what the view does not see is anything
      auto xAt = [&](int64_t b, int64_t r, int64_t c) { return size_t((b * cs.R + r) * cs.C + c) * bytes; };
      auto xsAt = [&](int64_t b, int64_t r, int64_t c) { return size_t(b * matrix + r * pitch + c) * bytes; };
      for (int64_t b = 0; b < cs.NB; ++b)
        for (int64_t r = 0; r < cs.R; ++r)
          for (int64_t c = 0; c < cs.C; ++c) std::memcpy(&Xs[xsAt(b, r, c)], &X[xAt(b, r, c)], bytes);
      std::vector<uint8_t> Y(2 * 16 * 32 * bytes, 0xff);
      DeviceBuffer dX = rt.allocate(X.size()), dXs = rt.allocate(Xs.size()), dY = rt.allocate(Y.size());
      rt.copyToDevice(dX, X.data(), X.size());
      rt.copyToDevice(dXs, Xs.data(), Xs.size());
      rt.copyToDevice(dY, Y.data(), Y.size());
      const int64_t shape[] = {cs.NB, cs.R, cs.C}, strides[] = {matrix, pitch, 1};
      k.launch(nullptr, {tensor(dX.data(), t, {cs.NB, cs.R, cs.C}), tensor(dXs.data(), t, shape, 3, strides),
                         tensor(dY.data(), t, {2, 16, 32}), scalar(cs.b), scalar(cs.r0), scalar(cs.c0)});
      rt.copyToHost(Y.data(), dY, Y.size());
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t r = 0; r < 16; ++r)
          for (int64_t c = 0; c < 32; ++c) {
            const int64_t xr = cs.r0 + r, xc = cs.c0 + c;
            const bool inside = cs.b >= 0 && cs.b < cs.NB && xr < cs.R && xc < cs.C;
            for (size_t v = 0; v < bytes; ++v) {
              const uint8_t want = inside ? X[xAt(cs.b, xr, xc) + v] : 0;
              ASSERT_EQ(Y[size_t((h * 16 + r) * 32 + c) * bytes + v], want)
                  << target << (checked ? " checked " : " ") << (bytes == 4 ? "f32 " : "f16 ") << (h ? "strided " : "")
                  << "X " << cs.NB << "x" << cs.R << "x" << cs.C << " matrix " << cs.b << " at (" << cs.r0 << ", "
                  << cs.c0 << "): Y[" << r << ", " << c << "] byte " << v;
            }
          }
    }
  }
}

TEST_P(CpuCopyAsync, SharedBuffersPast48KiBLiveInDynamicSharedMemory) {
  const auto [target, checked] = GetParam();
  Runtime rt(cpuOptions(target, checked));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Module m = rt.loadModuleFromString("big.spn", kBigSharedKernel);
  Kernel k = m.kernel("big");
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
    for (int64_t t = 0; t < 128; ++t) {
      const float want = X[size_t(r * 128 + 127 - t)] + X[size_t((r % 64) * 32 + t % 32)] * 2.0f;
      ASSERT_EQ(Y[size_t(r * 128 + t)], want) << r << ", " << t;
    }
  // The generated file places both buffers in the launch's dynamic shared
  // memory (72 KiB, 16-aligned slices) and the launcher opts in.
  const std::string source = k.sourceFor(args, 2);
  EXPECT_NE(source.find("__SPN_DYNAMIC_SHARED(__spn_dynamic_shared)"), std::string::npos) << source;
  EXPECT_NE(source.find("__spn_allow_dynamic_shared"), std::string::npos) << source;
  EXPECT_EQ(source.find("__shared__ float S["), std::string::npos) << source;
}

INSTANTIATE_TEST_SUITE_P(WidthsAndChecks, CpuCopyAsync,
                         ::testing::Combine(::testing::Values("cpu", "cpu:warp64"), ::testing::Bool()));

}  // namespace
}  // namespace spindle::test
#endif
