// mma_store (docs/language.md 8.11) on the cpu target, by value, at both
// warp widths (so through both vendors' exchanges), unchecked and checked:
// a warp fills two accumulator tiles from an input tensor (elements, v =
// ...) and stores them side by side at (r0, c0) into C of f32, f16 and
// bf16, contiguous, strided with a padded row pitch (inner stride 1), and
// strided with an inner stride of 2 (the element path), and into one
// matrix of a 3-D tensor (a batch index, inside and outside the batch).
// Windows inside, across each edge, wholly past each edge and from a
// negative origin, rows that are not 16-byte aligned (odd N, N = 2 mod 4).
// The outputs start poisoned; every byte is compared with the window's
// definition computed here (rounded to nearest even from the f32 input),
// so an element outside C that is written, or one inside that is not,
// fails.
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

constexpr const char* kStoreKernel = R"(
@grid(1)
@block(64)
kernel store[U](X: f32[16, 32], C: U[M, N], Cs: U[SM, SN] strided, C3: U[NB, BM, BN], r0: i64, c0: i64, b: i64):
    acc = mma_zero(f32, [1, 2])
    for j in static_range(2):
        for r, c, v in elements(acc[0, j]):
            v = X[r, j * 16 + c]
    for j in static_range(2):
        mma_store(C, r0, c0 + j * 16, acc[0, j])
        mma_store(Cs, r0, c0 + j * 16, acc[0, j])
        mma_store(C3, b, r0, c0 + j * 16, acc[0, j])
)";

// The element code of U for an f32 value: its bits, or f16/bf16 rounded
// to nearest even (through the runtime's scalar conversion).
std::vector<uint8_t> codeOf(ScalarType t, float v) {
  std::vector<uint8_t> out(t == ScalarType::F32 ? 4 : 2);
  if (t == ScalarType::F32) std::memcpy(out.data(), &v, 4);
  else {
    const uint16_t h = uint16_t(scalar(t, double(v)).bits);
    std::memcpy(out.data(), &h, 2);
  }
  return out;
}

class CpuMmaStore : public ::testing::TestWithParam<std::tuple<const char*, bool>> {};

TEST_P(CpuMmaStore, StoresTheTileInsideCAndNothingElse) {
  const auto [target, checked] = GetParam();
  Runtime rt(cpuOptions(target, checked));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Kernel k = rt.loadModuleFromString("store.spn", kStoreKernel).kernel("store");
  std::mt19937 gen(std::random_device{}());
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  struct Case {
    int64_t M, N, r0, c0, b;
  };
  const Case cases[] = {
      {40, 64, 8, 16, 1},   // inside, aligned rows
      {37, 53, 5, 7, 0},    // inside, odd N: rows not 16-byte aligned
      {30, 42, 3, 2, 1},    // N = 2 mod 4: 8-byte aligned runs at most (f32)
      {37, 53, 30, 40, 1},  // across the bottom and right edges
      {20, 40, -5, -3, 0},  // across the top and left edges
      {20, 40, 24, 0, 1},   // wholly past the bottom
      {20, 40, 0, 48, 0},   // wholly past the right
      {20, 40, -16, 0, 1},  // wholly above
      {20, 40, 2, 8, 2},    // a matrix outside the batch (C3 untouched)
      {20, 40, 2, 8, -1},   // and below it
  };
  for (ScalarType t : {ScalarType::F32, ScalarType::F16, ScalarType::BF16}) {
    const size_t bytes = t == ScalarType::F32 ? 4 : 2;
    for (const Case& cs : cases)
      for (int64_t inner : {1, 2}) {
        const int64_t NB = 2, pitch = cs.N * inner + 3;
        std::vector<float> X(16 * 32);
        for (float& v : X) v = dist(gen);
        std::vector<uint8_t> C(size_t(cs.M * cs.N) * bytes, 0xa5), Cs(size_t(cs.M * pitch) * bytes, 0xa5),
            C3(size_t(NB * cs.M * cs.N) * bytes, 0xa5);
        const std::vector<uint8_t> C0 = C, Cs0 = Cs, C30 = C3;
        DeviceBuffer dX = rt.allocate(X.size() * 4), dC = rt.allocate(C.size()), dCs = rt.allocate(Cs.size()),
                     dC3 = rt.allocate(C3.size());
        rt.copyToDevice(dX, X.data(), X.size() * 4);
        rt.copyToDevice(dC, C.data(), C.size());
        rt.copyToDevice(dCs, Cs.data(), Cs.size());
        rt.copyToDevice(dC3, C3.data(), C3.size());
        const int64_t shape[] = {cs.M, cs.N}, strides[] = {pitch, inner};
        k.launch(nullptr, {tensor(dX.data(), ScalarType::F32, {16, 32}), tensor(dC.data(), t, {cs.M, cs.N}),
                           tensor(dCs.data(), t, shape, 2, strides), tensor(dC3.data(), t, {NB, cs.M, cs.N}),
                           scalar(cs.r0), scalar(cs.c0), scalar(cs.b)});
        rt.copyToHost(C.data(), dC, C.size());
        rt.copyToHost(Cs.data(), dCs, Cs.size());
        rt.copyToHost(C3.data(), dC3, C3.size());
        // The expected bytes: the poison, with the window's elements inside C.
        std::vector<uint8_t> wantC = C0, wantCs = Cs0, wantC3 = C30;
        for (int64_t m = 0; m < 16; ++m)
          for (int64_t n = 0; n < 32; ++n) {
            const int64_t r = cs.r0 + m, c = cs.c0 + n;
            if (r < 0 || r >= cs.M || c < 0 || c >= cs.N) continue;
            const std::vector<uint8_t> code = codeOf(t, X[size_t(m * 32 + n)]);
            std::memcpy(&wantC[size_t(r * cs.N + c) * bytes], code.data(), bytes);
            std::memcpy(&wantCs[size_t(r * pitch + c * inner) * bytes], code.data(), bytes);
            if (cs.b >= 0 && cs.b < NB)
              std::memcpy(&wantC3[size_t((cs.b * cs.M + r) * cs.N + c) * bytes], code.data(), bytes);
          }
        const std::string what = std::string(target) + (checked ? " checked " : " ") +
                                 (t == ScalarType::F32   ? "f32"
                                  : t == ScalarType::F16 ? "f16"
                                                         : "bf16") +
                                 " C " + std::to_string(cs.M) + "x" + std::to_string(cs.N) + " at (" +
                                 std::to_string(cs.r0) + ", " + std::to_string(cs.c0) + "), matrix " +
                                 std::to_string(cs.b) + ", inner stride " + std::to_string(inner);
        auto compare = [&](const char* name, const std::vector<uint8_t>& got, const std::vector<uint8_t>& want,
                           int64_t rowBytes) {
          for (size_t i = 0; i < got.size(); ++i)
            if (got[i] != want[i]) {
              ADD_FAILURE() << what << ": " << name << " byte " << i << " (row " << int64_t(i) / rowBytes << ") is "
                            << int(got[i]) << ", want " << int(want[i]);
              return;
            }
        };
        compare("C", C, wantC, cs.N * int64_t(bytes));
        compare("Cs", Cs, wantCs, pitch * int64_t(bytes));
        compare("C3", C3, wantC3, cs.N * int64_t(bytes));
      }
  }
}

// With 32-bit indices and the facts of an aligned launch (C 16-byte
// aligned, N a multiple of 16), the generated store takes the tile's row
// and column in 32 bits, and C's alignment is specialized on: mma_store
// writes C in runs.
TEST_P(CpuMmaStore, AnAlignedLaunchSpecializesCsAlignment) {
  const auto [target, checked] = GetParam();
  Runtime rt(cpuOptions(target, checked));
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Kernel k = rt.loadModuleFromString("store.spn", kStoreKernel).kernel("store");
  DeviceBuffer dX = rt.allocate(16 * 32 * 4), dC = rt.allocate(64 * 64 * 4), dCs = rt.allocate(64 * 64 * 4),
               dC3 = rt.allocate(2 * 64 * 64 * 4);
  const int64_t shape[] = {64, 64}, strides[] = {64, 1};
  std::vector<Arg> args = {tensor(dX.data(), ScalarType::F32, {16, 32}),
                           tensor(dC.data(), ScalarType::F32, {64, 64}),
                           tensor(dCs.data(), ScalarType::F32, shape, 2, strides),
                           tensor(dC3.data(), ScalarType::F32, {2, 64, 64}),
                           scalar(int64_t(0)),
                           scalar(int64_t(0)),
                           scalar(int64_t(0))};
  const std::string source = k.sourceFor(args.data(), args.size());
  EXPECT_NE(source.find("C = __spn_assume_aligned<16>(C);"), std::string::npos) << source;
  EXPECT_NE(source.find(checked ? "__spn_mma_store_checked{" : "__spn_mma_store_f32(C, "), std::string::npos) << source;
}

INSTANTIATE_TEST_SUITE_P(WidthsAndChecks, CpuMmaStore,
                         ::testing::Combine(::testing::Values("cpu", "cpu:warp64"), ::testing::Bool()));

}  // namespace
}  // namespace spindle::test
#endif
