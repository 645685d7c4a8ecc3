// The matrix API's per-lane layouts (docs/language.md 8.11), stated here from
// the vendors' documents, independently of the prelude, and checked by value
// against the prelude's layout functions and tile loads (templates/prelude.in,
// sections __spn_mma_*), compiled for the host at both warp widths:
//
//  - NVIDIA, warp 32: PTX ISA, "Matrix Fragments for mma.m16n8k16 with
//    floating point type" (9.7.13.4.8). groupID = lane >> 2, threadID_in_group
//    = lane % 4. A (a0..a7): row = groupID for a0, a1, a4, a5, groupID + 8
//    for a2, a3, a6, a7; col = threadID_in_group * 2 + (i & 1), + 8 for
//    i >= 4. B (b0..b3, per n8 half): row (k) = threadID_in_group * 2 +
//    (i & 1), + 8 for i >= 2; col = groupID. C/D (c0..c3, per n8 half): row =
//    groupID, + 8 for i >= 2; col = threadID_in_group * 2 + (i & 1). The
//    prelude's 16x16 tile is two n8 halves: registers 4..7 are the second
//    half's (columns + 8).
//  - AMD, wave64: v_mfma_f32_16x16x16f16 (AMD CDNA2 ISA; AMD Matrix
//    Instruction Calculator, `--detail-instruction` for that instruction):
//    A[i][k]: lane = i + 16 * (k / 4), register k % 4; B[k][j]: lane = j +
//    16 * (k / 4), register k % 4; D[i][j]: lane = j + 16 * (i / 4),
//    register i % 4.
//
// The CPU target emulates the instructions through these same functions, so
// this test is what ties its results (tests/cpu_samples, gemm) to the GPUs'.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "prelude_host_shim.h"

// The prelude's sections for one warp width, each in a namespace of its own,
// with the lane the loads read set by the test.
#define __SPN_WARP_SIZE 32
namespace w32 {
inline int lane = 0;
inline int __spn_lane_id() { return lane; }
// clang-format off
#include "prelude_mma_helpers.inc"
// clang-format on
constexpr int kN = __SPN_MMA_N;
}  // namespace w32
#undef __SPN_WARP_SIZE
#undef __SPN_MMA_N
#define __SPN_WARP_SIZE 64
namespace w64 {
inline int lane = 0;
inline int __spn_lane_id() { return lane; }
// clang-format off
#include "prelude_mma_helpers.inc"
// clang-format on
constexpr int kN = __SPN_MMA_N;
}  // namespace w64

namespace {

struct Cell {
  int row, col;
};

// ---- The documents' layouts, as stated above.
Cell nvidiaA(int lane, int i) {
  const int group = lane >> 2, tig = lane % 4;
  const bool lowRows = i == 0 || i == 1 || i == 4 || i == 5;
  return {lowRows ? group : group + 8, tig * 2 + (i & 1) + (i >= 4 ? 8 : 0)};
}
Cell nvidiaB(int lane, int i) {
  const int half = i / 4, b = i % 4;  // b0..b3 of n8 half `half`
  const int group = lane >> 2, tig = lane % 4;
  return {tig * 2 + (b & 1) + (b >= 2 ? 8 : 0), group + 8 * half};
}
Cell nvidiaD(int lane, int i) {
  const int half = i / 4, c = i % 4;
  const int group = lane >> 2, tig = lane % 4;
  return {group + (c >= 2 ? 8 : 0), tig * 2 + (c & 1) + 8 * half};
}
// AMD: the inverse maps, (lane, register) -> element.
Cell amdA(int lane, int i) { return {lane % 16, 4 * (lane / 16) + i}; }
Cell amdB(int lane, int i) { return {4 * (lane / 16) + i, lane % 16}; }
Cell amdD(int lane, int i) { return {4 * (lane / 16) + i, lane % 16}; }

// Every (lane, register) names a different element, and every element is
// named: a layout is a bijection onto the 16 x 16 tile.
template <typename F>
void expectBijection(int lanes, int n, F cell, const char* what) {
  std::vector<int> seen(256, 0);
  for (int lane = 0; lane < lanes; ++lane)
    for (int i = 0; i < n; ++i) {
      const Cell c = cell(lane, i);
      ASSERT_TRUE(c.row >= 0 && c.row < 16 && c.col >= 0 && c.col < 16) << what;
      ++seen[size_t(c.row * 16 + c.col)];
    }
  for (int k = 0; k < 256; ++k) EXPECT_EQ(seen[size_t(k)], 1) << what << ": element " << k / 16 << ", " << k % 16;
}

TEST(MmaLayout, DocumentsStateBijections) {
  expectBijection(32, 8, nvidiaA, "NVIDIA A");
  expectBijection(32, 8, nvidiaB, "NVIDIA B");
  expectBijection(32, 8, nvidiaD, "NVIDIA D");
  expectBijection(64, 4, amdA, "AMD A");
  expectBijection(64, 4, amdB, "AMD B");
  expectBijection(64, 4, amdD, "AMD D");
}

// The elements code their own place: src[r, c] = r * 64 + c + 1 (never 0, so
// a zero-filled element is told apart), in a rows x cols source.
std::vector<uint16_t> coded(int rows, int cols) {
  std::vector<uint16_t> v(size_t(rows * cols));
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) v[size_t(r * cols + c)] = uint16_t(r * 64 + c + 1);
  return v;
}
uint16_t codeOf(int r, int c, int rows, int cols) { return r < rows && c < cols ? uint16_t(r * 64 + c + 1) : 0; }

// Loads each lane's tiles from a 40 x 50 source at (r0, c0) (the bottom
// right tile hangs past the edges: zeros there) and checks each register
// against the document's element. W is the width's namespace.
template <int Lanes, int N, typename SetLane, typename Doc, typename Load>
void checkLoads(SetLane setLane, Doc doc, Load load, bool transposed, const char* what) {
  const int rows = 40, cols = 50;
  const std::vector<uint16_t> src = coded(rows, cols);
  for (auto [r0, c0] : {std::pair<int, int>{0, 0}, {16, 32}, {32, 40}}) {
    for (int lane = 0; lane < Lanes; ++lane) {
      setLane(lane);
      uint16_t h[N];
      load(h, src.data(), rows, cols, r0, c0);
      for (int i = 0; i < N; ++i) {
        const Cell c = doc(lane, i);  // the tile's element (row, col) = (A's m, k) or (B's k, n)
        // The source element: straight, src[r0 + row, c0 + col]; transposed,
        // src[r0 + col, c0 + row].
        const uint16_t want =
            transposed ? codeOf(r0 + c.col, c0 + c.row, rows, cols) : codeOf(r0 + c.row, c0 + c.col, rows, cols);
        EXPECT_EQ(h[i], want) << what << " at (" << r0 << ", " << c0 << "), lane " << lane << ", register " << i;
      }
    }
  }
}

TEST(MmaLayout, NvidiaLoadsHoldTheDocumentedElements) {
  ASSERT_EQ(w32::kN, 8);
  auto setLane = [](int l) { w32::lane = l; };
  using A = w32::__spn_mma_a<uint16_t>;
  using B = w32::__spn_mma_b<uint16_t>;
  checkLoads<32, 8>(
      setLane, nvidiaA,
      [](uint16_t* h, const uint16_t* s, int rows, int cols, int r, int c) {
        A a{};
        w32::__spn_mma_load_a(a, s, rows, cols, cols, 1, r, c);
        std::memcpy(h, a.h, sizeof a.h);
      },
      false, "mma_load_a");
  checkLoads<32, 8>(
      setLane, nvidiaA,
      [](uint16_t* h, const uint16_t* s, int rows, int cols, int k, int r) {
        A a{};
        w32::__spn_mma_load_a_t(a, s, rows, cols, cols, 1, k, r);
        std::memcpy(h, a.h, sizeof a.h);
      },
      true, "mma_load_a_t");
  checkLoads<32, 8>(
      setLane, nvidiaB,
      [](uint16_t* h, const uint16_t* s, int rows, int cols, int k, int c) {
        B b{};
        w32::__spn_mma_load_b(b, s, rows, cols, cols, 1, k, c);
        std::memcpy(h, b.h, sizeof b.h);
      },
      false, "mma_load_b");
  checkLoads<32, 8>(
      setLane, nvidiaB,
      [](uint16_t* h, const uint16_t* s, int rows, int cols, int c, int k) {
        B b{};
        w32::__spn_mma_load_b_t(b, s, rows, cols, cols, 1, c, k);
        std::memcpy(h, b.h, sizeof b.h);
      },
      true, "mma_load_b_t");
}

TEST(MmaLayout, AmdLoadsHoldTheDocumentedElements) {
  ASSERT_EQ(w64::kN, 4);
  auto setLane = [](int l) { w64::lane = l; };
  using A = w64::__spn_mma_a<uint16_t>;
  using B = w64::__spn_mma_b<uint16_t>;
  checkLoads<64, 4>(
      setLane, amdA,
      [](uint16_t* h, const uint16_t* s, int rows, int cols, int r, int c) {
        A a{};
        w64::__spn_mma_load_a(a, s, rows, cols, cols, 1, r, c);
        std::memcpy(h, a.h, sizeof a.h);
      },
      false, "mma_load_a");
  checkLoads<64, 4>(
      setLane, amdA,
      [](uint16_t* h, const uint16_t* s, int rows, int cols, int k, int r) {
        A a{};
        w64::__spn_mma_load_a_t(a, s, rows, cols, cols, 1, k, r);
        std::memcpy(h, a.h, sizeof a.h);
      },
      true, "mma_load_a_t");
  checkLoads<64, 4>(
      setLane, amdB,
      [](uint16_t* h, const uint16_t* s, int rows, int cols, int k, int c) {
        B b{};
        w64::__spn_mma_load_b(b, s, rows, cols, cols, 1, k, c);
        std::memcpy(h, b.h, sizeof b.h);
      },
      false, "mma_load_b");
  checkLoads<64, 4>(
      setLane, amdB,
      [](uint16_t* h, const uint16_t* s, int rows, int cols, int c, int k) {
        B b{};
        w64::__spn_mma_load_b_t(b, s, rows, cols, cols, 1, c, k);
        std::memcpy(h, b.h, sizeof b.h);
      },
      true, "mma_load_b_t");
}

// The accumulator's coordinates, which `for r, c, v in elements(acc)` gives
// (and the CPU emulation writes D through).
TEST(MmaLayout, AccumulatorCoordinatesAreTheDocumented) {
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 8; ++i) {
      w32::lane = lane;
      EXPECT_EQ(w32::__spn_mma_row(i), nvidiaD(lane, i).row) << "NVIDIA lane " << lane << ", register " << i;
      EXPECT_EQ(w32::__spn_mma_col(i), nvidiaD(lane, i).col) << "NVIDIA lane " << lane << ", register " << i;
    }
  for (int lane = 0; lane < 64; ++lane)
    for (int i = 0; i < 4; ++i) {
      w64::lane = lane;
      EXPECT_EQ(w64::__spn_mma_row(i), amdD(lane, i).row) << "AMD lane " << lane << ", register " << i;
      EXPECT_EQ(w64::__spn_mma_col(i), amdD(lane, i).col) << "AMD lane " << lane << ", register " << i;
    }
}

}  // namespace
