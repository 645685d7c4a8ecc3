// Flash attention's matrix steps through the language, on the cpu target,
// by value, at both warp widths, in checked builds (docs/language.md 8.11):
// accumulator elements written through `elements` (v = ...), row fragments
// set and read through `elements(m[i])` and `elements(acc[i, j], m[i])`,
// row_max / row_sum over one tile and over a row of tiles, and mma_to_a
// (the converted tile times the identity gives the tile back, rounded to
// the operand type). The expected values come from the inputs alone, in
// double; tests/prelude_host/mma_layout_test.cpp checks the same helpers
// against the documented per-lane layouts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "references.hpp"  // bench::halfValue (header only)
#include "spindle/runtime.hpp"
#include "test_util.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::test {
namespace {

// X: two 16 x 16 tiles side by side; start: each row's starting value.
// Outputs: mxRow (row_max over both tiles), sm1 (row_sum over the second
// tile only, from start), shifted (tile 0 minus its row's max), back
// (mma_to_a of tile 1 times the identity).
constexpr const char* kRowsKernel = R"(
@grid(1)
@block(64)
kernel rows[T](X: f32[16, 32], start: f32[16], I: T[16, 16], mxRow: f32[16], sm1: f32[16],
               shifted: f32[16, 16], back: f32[16, 16]):
    acc = mma_zero(f32, [1, 2])
    out = mma_zero(f32, [1, 1])
    a = mma_a(T, [1])
    b = mma_b(T, [1])
    m = mma_rows(f32, [1])
    l = mma_rows(f32, [1])
    first = thread_id() < warp_size()    # one warp stores (the others compute the same)
    for j in static_range(2):
        for r, c, v in elements(acc[0, j]):
            v = X[r, j * 16 + c]
    for r, x in elements(m[0]):
        x = start[r]
    for r, x, y in elements(l[0], m[0]):
        x = y                            # l starts as start too
    row_max(m[0], acc[0])
    row_sum(l[0], acc[0, 1])
    for r, c, v, mx, s in elements(acc[0, 0], m[0], l[0]):
        if first and c == 0:
            mxRow[r] = mx
            sm1[r] = s
        v -= mx
    for r, c, v in elements(acc[0, 0]):
        if first:
            shifted[r, c] = v
    mma_to_a(a[0], acc[0, 1])
    mma_load_b(b[0], I, 0, 0)
    out[0, 0] = mma(a[0], b[0], out[0, 0])
    for r, c, v in elements(out[0, 0]):
        if first:
            back[r, c] = v
)";

double roundTo(ScalarType t, double v) { return bench::halfValue(t == ScalarType::BF16, uint16_t(scalar(t, v).bits)); }

class CpuMmaRows : public ::testing::TestWithParam<std::tuple<const char*, ScalarType>> {};

TEST_P(CpuMmaRows, RowValuesReductionsAndConversionHoldTheirDefinitions) {
  const auto [target, dtype] = GetParam();
  Runtime rt(cpuOptions(target, /*checked=*/true));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Kernel k = rt.loadModuleFromString("rows.spn", kRowsKernel).kernel("rows", KernelOptions{});
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  std::vector<float> X(16 * 32), start(16);
  for (float& v : X) v = dist(gen);
  for (float& v : start) v = dist(gen);
  start[3] = 50.0f;        // a row whose starting value beats its elements
  X[7 * 32 + 20] = 40.0f;  // a row whose max is in the second tile
  std::vector<uint16_t> I(256, 0);
  for (int d = 0; d < 16; ++d) I[size_t(d * 17)] = uint16_t(scalar(dtype, 1.0).bits);
  DeviceBuffer dX = rt.allocate(X.size() * 4), dS = rt.allocate(64), dI = rt.allocate(512);
  rt.copyToDevice(dX, X.data(), X.size() * 4);
  rt.copyToDevice(dS, start.data(), 64);
  rt.copyToDevice(dI, I.data(), 512);
  std::vector<float> mx(16, NAN), sm(16, NAN), shifted(256, NAN), back(256, NAN);
  DeviceBuffer dmx = rt.allocate(64), dsm = rt.allocate(64), dsh = rt.allocate(1024), dback = rt.allocate(1024);
  rt.copyToDevice(dmx, mx.data(), 64);
  rt.copyToDevice(dsm, sm.data(), 64);
  rt.copyToDevice(dsh, shifted.data(), 1024);
  rt.copyToDevice(dback, back.data(), 1024);
  k.launch(nullptr, {tensor(dX.data(), ScalarType::F32, {16, 32}), tensor(dS.data(), ScalarType::F32, {16}),
                     tensor(dI.data(), dtype, {16, 16}), tensor(dmx.data(), ScalarType::F32, {16}),
                     tensor(dsm.data(), ScalarType::F32, {16}), tensor(dsh.data(), ScalarType::F32, {16, 16}),
                     tensor(dback.data(), ScalarType::F32, {16, 16})});
  rt.copyToHost(mx.data(), dmx, 64);
  rt.copyToHost(sm.data(), dsm, 64);
  rt.copyToHost(shifted.data(), dsh, 1024);
  rt.copyToHost(back.data(), dback, 1024);
  for (int r = 0; r < 16; ++r) {
    double wantMax = start[size_t(r)], wantSum = start[size_t(r)];
    for (int c = 0; c < 32; ++c) wantMax = std::max(wantMax, double(X[size_t(r * 32 + c)]));
    for (int c = 16; c < 32; ++c) wantSum += X[size_t(r * 32 + c)];
    EXPECT_EQ(mx[size_t(r)], float(wantMax)) << target << " row_max, row " << r;
    EXPECT_NEAR(sm[size_t(r)], wantSum, 1e-4) << target << " row_sum, row " << r;
    for (int c = 0; c < 16; ++c) {
      EXPECT_EQ(shifted[size_t(r * 16 + c)], X[size_t(r * 32 + c)] - float(wantMax))
          << target << " v -= the row's max, (" << r << ", " << c << ")";
      // Each output is one product T(x) * 1 plus zeros, exact in f32.
      EXPECT_EQ(back[size_t(r * 16 + c)], float(roundTo(dtype, X[size_t(r * 32 + 16 + c)])))
          << target << " mma_to_a, (" << r << ", " << c << ")";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(WidthsAndTypes, CpuMmaRows,
                         ::testing::Combine(::testing::Values("cpu", "cpu:warp64"),
                                            ::testing::Values(ScalarType::F16, ScalarType::BF16)));

}  // namespace
}  // namespace spindle::test
#endif
