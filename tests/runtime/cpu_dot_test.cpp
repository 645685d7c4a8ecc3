// dot(acc, As, r, k, Bs, k2, c, D) through the language on the cpu target,
// by value, at both warp widths, checked and not (docs/language.md 8.13):
// the four warps of a group each add their 16 rows of the product; a fresh
// accumulator's first dot ignores its (never written) registers; an
// accumulator read before its first dot is zeros; a dot after an in-place
// update adds to the updated values; a dot at a column and k offset; dot_bt
// (B stored N x K) and A from registers (mma_a tiles of each warp's rows),
// both forms of B; all of it with As and Bs row-major and swizzled (32, 64,
// 128 bytes). The expected values are sums of products of the inputs, in
// double.
#include <gtest/gtest.h>

#include <cmath>
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

// C = 2 (A B + A[:, 32:] B[32:, :]) + A[:, :16] B[:16, :]; Z0 = zeros (read
// before its dot), Z1 = A[:, :16] B[:16, :]; H = (A B)[:, 32:]; P, R = A B
// (dot_bt from Bt = B^T in shared memory, dot with A in registers); Q =
// (A B)[:, 32:] (dot_bt with A in registers).
std::string dotKernel(const std::string& swizzleA, const std::string& swizzleB) {
  return R"(
@grid(1)
@block(4 * warp_size())
kernel dots[T](A: T[64, 64], B: T[64, 64], C: f32[64, 64], Z0: f32[64, 64], Z1: f32[64, 64], H: f32[64, 32],
               P: f32[64, 64], R: f32[64, 64], Q: f32[64, 32]):
    As = shared(T, [64, 64])" +
         swizzleA + R"()
    Bs = shared(T, [64, 64])" +
         swizzleB + R"()
    Bt = shared(T, [64, 64])" +
         swizzleB + R"()
    p = mma_zero(f32, [1, 4])
    rg = mma_zero(f32, [1, 4])
    qt = mma_zero(f32, [1, 2])
    a = mma_a(T, [4])
    acc = mma_zero(f32, [1, 4])
    z = mma_zero(f32, [1, 4])
    h = mma_zero(f32, [1, 2])
    tid = thread_id()
    q = (tid // warp_size()) % 4
    for e in range(tid, 64 * 64, block_dim()):
        As[e // 64, e % 64] = A[e // 64, e % 64]
        Bs[e // 64, e % 64] = B[e // 64, e % 64]
        Bt[e % 64, e // 64] = B[e // 64, e % 64]
    sync()
    for k in static_range(4):
        mma_load_a(a[k], As, q * 16, k * 16)
    dot_bt(p, As, 0, 0, Bt, 0, 0, 64)
    dot(rg, a, Bs, 0, 0, 64)
    dot_bt(qt, a, Bt, 32, 0, 64)
    for j in static_range(4):
        for r, c, v in elements(z[0, j]):
            Z0[q * 16 + r, j * 16 + c] = v
    dot(acc, As, 0, 0, Bs, 0, 0, 64)
    dot(acc, As, 0, 32, Bs, 32, 0, 32)
    dot(z, As, 0, 0, Bs, 0, 0, 16)
    dot(h, As, 0, 0, Bs, 0, 32, 64)
    dot_wait(0)
    for j in static_range(4):
        for r, c, v in elements(acc[0, j]):
            v = v * 2.0
    dot(acc, As, 0, 0, Bs, 0, 0, 16)
    for j in static_range(4):
        for r, c, v in elements(acc[0, j]):
            C[q * 16 + r, j * 16 + c] = v
        for r, c, v in elements(z[0, j]):
            Z1[q * 16 + r, j * 16 + c] = v
    for j in static_range(2):
        for r, c, v in elements(h[0, j]):
            H[q * 16 + r, j * 16 + c] = v
        mma_store(Q, q * 16, j * 16, qt[0, j])
    for j in static_range(4):
        mma_store(P, q * 16, j * 16, p[0, j])
        mma_store(R, q * 16, j * 16, rg[0, j])
)";
}

class CpuDot : public ::testing::TestWithParam<std::tuple<const char*, bool, ScalarType, int, int>> {};

TEST_P(CpuDot, WarpGroupsAddTheirRowsOfTheProduct) {
  const auto [target, checked, dtype, swA, swB] = GetParam();
  auto sw = [](int s) { return s ? ", swizzle=" + std::to_string(s) : std::string(); };
  Runtime rt(cpuOptions(target, checked));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Kernel k = rt.loadModuleFromString("dots.spn", dotKernel(sw(swA), sw(swB))).kernel("dots", KernelOptions{});
  std::mt19937 gen(uint32_t(swA * 7 + swB + (checked ? 1 : 0)));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const bool bf16 = dtype == ScalarType::BF16;
  std::vector<uint16_t> A(64 * 64), B(64 * 64);
  std::vector<double> a(A.size()), b(B.size());
  for (size_t i = 0; i < A.size(); ++i) {
    A[i] = uint16_t(scalar(dtype, dist(gen)).bits);
    a[i] = bench::halfValue(bf16, A[i]);
    B[i] = uint16_t(scalar(dtype, dist(gen)).bits);
    b[i] = bench::halfValue(bf16, B[i]);
  }
  DeviceBuffer dA = rt.allocate(A.size() * 2), dB = rt.allocate(B.size() * 2);
  rt.copyToDevice(dA, A.data(), A.size() * 2);
  rt.copyToDevice(dB, B.data(), B.size() * 2);
  std::vector<float> C(64 * 64, NAN), Z0(64 * 64, NAN), Z1(64 * 64, NAN), H(64 * 32, NAN), P(64 * 64, NAN),
      R(64 * 64, NAN), Q(64 * 32, NAN);
  std::vector<std::vector<float>*> outs = {&C, &Z0, &Z1, &H, &P, &R, &Q};
  std::vector<DeviceBuffer> bufs;
  std::vector<Arg> args = {tensor(dA.data(), dtype, {64, 64}), tensor(dB.data(), dtype, {64, 64})};
  for (std::vector<float>* o : outs) {
    bufs.push_back(rt.allocate(o->size() * 4));
    rt.copyToDevice(bufs.back(), o->data(), o->size() * 4);
    args.push_back(tensor(bufs.back().data(), ScalarType::F32, {64, int64_t(o->size() / 64)}));
  }
  k.launch(nullptr, args.data(), args.size());
  for (size_t i = 0; i < outs.size(); ++i) rt.copyToHost(outs[i]->data(), bufs[i], outs[i]->size() * 4);
  auto sum = [&](int r, int c, int k0, int k1) {
    double s = 0;
    for (int kk = k0; kk < k1; ++kk) s += a[size_t(r * 64 + kk)] * b[size_t(kk * 64 + c)];
    return s;
  };
  // Products of f16/bf16 values are exact in f32; only the f32 sums round.
  const double tol = 1e-4;
  for (int r = 0; r < 64; ++r) {
    for (int c = 0; c < 64; ++c) {
      const size_t at = size_t(r * 64 + c);
      const double want = 2 * (sum(r, c, 0, 64) + sum(r, c, 32, 64)) + sum(r, c, 0, 16);
      ASSERT_NEAR(C[at], want, tol) << target << " C(" << r << ", " << c << ")";
      ASSERT_EQ(Z0[at], 0.0f) << target << " an accumulator read before its first dot, (" << r << ", " << c << ")";
      ASSERT_NEAR(Z1[at], sum(r, c, 0, 16), tol) << target << " Z1(" << r << ", " << c << ")";
      if (c < 32)
        ASSERT_NEAR(H[size_t(r * 32 + c)], sum(r, 32 + c, 0, 64), tol) << target << " H(" << r << ", " << c << ")";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(WidthsTypesLayouts, CpuDot,
                         ::testing::Values(std::make_tuple("cpu", false, ScalarType::F16, 0, 0),
                                           std::make_tuple("cpu:warp64", false, ScalarType::BF16, 0, 0),
                                           std::make_tuple("cpu", true, ScalarType::F16, 128, 128),
                                           std::make_tuple("cpu:warp64", true, ScalarType::BF16, 128, 128),
                                           std::make_tuple("cpu", false, ScalarType::BF16, 64, 32),
                                           std::make_tuple("cpu:warp64", false, ScalarType::F16, 32, 64),
                                           std::make_tuple("cpu", true, ScalarType::F16, 0, 128)));

}  // namespace
}  // namespace spindle::test
#endif
