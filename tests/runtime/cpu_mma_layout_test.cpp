// The matrix API on the cpu target, by value, at both warp widths: which
// accumulator element each lane's register e holds (what `elements` walks),
// stated from the vendors' documents independently of the prelude (the
// NVIDIA layout at warp 32: PTX ISA, "Matrix Fragments for mma.m16n8k16
// with floating point type", C/D; the AMD one at 64: v_mfma_f32_16x16x16f16
// in the AMD CDNA2 ISA / AMD Matrix Instruction Calculator), and that an
// mma through the warp's emulated exchange computes A x B: with B the
// identity the accumulator is A, with A the identity it is B (the kernel:
// tests/golden/kernels/mma_layout.spn).
// tests/prelude_host/mma_layout_test.cpp checks the operand registers.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "spindle/runtime.hpp"
#include "test_util.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::test {
namespace {

struct Cell {
  int row, col;
};
// NVIDIA C/D of one m16n8k16 (c0..c3; registers 4..7: the second n8 half,
// columns + 8): row groupID (+8 for c2, c3), column threadID_in_group * 2 +
// (i & 1).
Cell nvidiaD(int lane, int i) {
  const int half = i / 4, c = i % 4, group = lane >> 2, tig = lane % 4;
  return {group + (c >= 2 ? 8 : 0), tig * 2 + (c & 1) + 8 * half};
}
// AMD: D[i][j] in lane j + 16 * (i / 4), register i % 4.
Cell amdD(int lane, int i) { return {4 * (lane / 16) + i, lane % 16}; }

uint16_t f16Bits(int v) {  // small integers, exact in f16
  if (v == 0) return 0;
  int e = 0;
  while ((v >> e) > 1) ++e;
  const int mantissa = (v << (10 - e)) & 0x3ff;  // v < 2048
  return uint16_t(((e + 15) << 10) | mantissa);
}
uint16_t bf16Bits(int v) {
  float f = float(v);
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return uint16_t(u >> 16);  // exact: v < 256
}

class CpuMmaLayout : public ::testing::TestWithParam<std::tuple<const char*, ScalarType>> {};
class CpuMmaShared : public ::testing::TestWithParam<const char*> {};

TEST_P(CpuMmaLayout, AccumulatorElementsAreWhereTheDocumentsSay) {
  const auto [target, dtype] = GetParam();
  Runtime rt(cpuOptions(target));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  const bool wave64 = std::string(target) == "cpu:warp64";
  const int lanes = wave64 ? 64 : 32, perLane = wave64 ? 4 : 8;
  Module m = rt.loadModule(std::string(SPINDLE_SOURCE_DIR) + "/tests/golden/kernels/mma_layout.spn");
  Kernel k = m.kernel("layout");
  auto bits = [&](int v) { return dtype == ScalarType::BF16 ? bf16Bits(v) : f16Bits(v); };
  // The coded matrix X[r][c] = 16 r + c (0..255, exact in both types) and I.
  std::vector<uint16_t> coded(256), identity(256, 0);
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c) coded[size_t(r * 16 + c)] = bits(16 * r + c);
  for (int d = 0; d < 16; ++d) identity[size_t(d * 17)] = bits(1);
  const int64_t L = 64, E = 8;
  for (bool codedIsA : {true, false}) {
    DeviceBuffer dA = rt.allocate(512), dB = rt.allocate(512);
    rt.copyToDevice(dA, (codedIsA ? coded : identity).data(), 512);
    rt.copyToDevice(dB, (codedIsA ? identity : coded).data(), 512);
    std::vector<int32_t> rows(size_t(L * E), -1), cols(size_t(L * E), -1);
    std::vector<float> vals(size_t(L * E), -1.0f);
    DeviceBuffer dr = rt.allocate(rows.size() * 4), dc = rt.allocate(cols.size() * 4),
                 dv = rt.allocate(vals.size() * 4);
    rt.copyToDevice(dr, rows.data(), rows.size() * 4);
    rt.copyToDevice(dc, cols.data(), cols.size() * 4);
    rt.copyToDevice(dv, vals.data(), vals.size() * 4);
    k.launch(nullptr, {tensor(dA.data(), dtype, {16, 16}), tensor(dB.data(), dtype, {16, 16}),
                       tensor(dr.data(), ScalarType::I32, {L, E}), tensor(dc.data(), ScalarType::I32, {L, E}),
                       tensor(dv.data(), ScalarType::F32, {L, E})});
    rt.copyToHost(rows.data(), dr, rows.size() * 4);
    rt.copyToHost(cols.data(), dc, cols.size() * 4);
    rt.copyToHost(vals.data(), dv, vals.size() * 4);
    for (int lane = 0; lane < L; ++lane)
      for (int e = 0; e < E; ++e) {
        const size_t at = size_t(lane * E + e);
        if (lane >= lanes || e >= perLane) {  // no such register: untouched
          EXPECT_EQ(rows[at], -1) << "lane " << lane << ", register " << e;
          continue;
        }
        const Cell want = wave64 ? amdD(lane, e) : nvidiaD(lane, e);
        EXPECT_EQ(rows[at], want.row) << target << " lane " << lane << ", register " << e;
        EXPECT_EQ(cols[at], want.col) << target << " lane " << lane << ", register " << e;
        EXPECT_EQ(vals[at], float(16 * want.row + want.col))
            << target << (codedIsA ? " A" : " B") << " coded, lane " << lane << ", register " << e;
      }
  }
}

// A checked build reads a tile's shared source through the block's record
// of written bytes: a tile row no thread wrote is reported at the load,
// naming the buffer; once every row is written the load is quiet.
constexpr const char* kSharedTileKernel = R"(
@grid(1)
@block(64)
kernel staged(A: f16[M, K], C: f32[M, K], written: i32):
    As = shared(f16, [16, 16])
    acc = mma_zero(f32, [1, 1])
    a = mma_a(f16, [1])
    b = mma_b(f16, [1])
    t = thread_id()
    if t < written:
        for k in static_range(16):
            As[t, k] = A[t, k]
    sync()
    mma_load_a(a[0], As, 0, 0)
    mma_load_b_t(b[0], A, 0, 0)
    acc[0, 0] = mma(a[0], b[0], acc[0, 0])
    for r, c, v in elements(acc[0, 0]):
        if thread_id() < warp_size():
            C[r, c] = v
)";

TEST_P(CpuMmaShared, AnUnwrittenTileRowIsReportedAtTheLoad) {
  Runtime rt(cpuOptions(GetParam(), /*checked=*/true));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Kernel k = rt.loadModuleFromString("staged.spn", kSharedTileKernel).kernel("staged");
  std::vector<uint16_t> A(256, 0x3c00);  // 1.0
  DeviceBuffer dA = rt.allocate(512), dC = rt.allocate(1024);
  rt.copyToDevice(dA, A.data(), 512);
  auto launch = [&](int32_t written) {
    k.launch(nullptr, {tensor(dA.data(), ScalarType::F16, {16, 16}), tensor(dC.data(), ScalarType::F32, {16, 16}),
                       scalar(written)});
  };
  const std::string error = errorFrom([&] { launch(15); });
  EXPECT_NE(error.find("staged.spn:14:5: "), std::string::npos) << error;
  EXPECT_NE(error.find("As["), std::string::npos) << error;
  EXPECT_NE(error.find("is read before any thread of its block wrote it"), std::string::npos) << error;
  launch(16);
  std::vector<float> C(256);
  rt.copyToHost(C.data(), dC, 1024);
  for (size_t i = 0; i < 256; ++i) ASSERT_EQ(C[i], 16.0f) << i;  // 16 products of 1 x 1
}

INSTANTIATE_TEST_SUITE_P(Widths, CpuMmaShared, ::testing::Values("cpu", "cpu:warp64"));

INSTANTIATE_TEST_SUITE_P(WidthsAndTypes, CpuMmaLayout,
                         ::testing::Combine(::testing::Values("cpu", "cpu:warp64"),
                                            ::testing::Values(ScalarType::F16, ScalarType::BF16)));

}  // namespace
}  // namespace spindle::test
#endif
