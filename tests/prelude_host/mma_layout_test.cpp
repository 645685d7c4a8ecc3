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

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "prelude_host_shim.h"

// Warp shuffles for the host, one lane at a time: lane L's k-th shuffle
// returns what lane src gave to its own k-th shuffle in the previous pass.
// The test runs every lane's code in passes until no lane gives a value it
// did not give in the pass before: a value given at a shuffle depends only
// on earlier shuffles' results, so after as many passes as shuffles (plus
// one) every result is the warp's (the row reductions' butterflies and
// mma_to_a's rounds are straight-line code, the same on every lane).
struct HostWarp {
  int lane = 0;
  std::vector<std::vector<uint64_t>> given, previous;  // [lane][k]
  std::vector<int> calls;
  template <typename T>
  T shfl(T v, int src, int width) {
    const int k = calls[size_t(lane)]++;
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof v);
    auto& mine = given[size_t(lane)];
    if (mine.size() <= size_t(k)) mine.resize(size_t(k) + 1);
    mine[size_t(k)] = bits;
    const auto& theirs = previous.empty() ? mine : previous[size_t(src & (width - 1))];
    T out{};
    if (size_t(k) < theirs.size()) std::memcpy(&out, &theirs[size_t(k)], sizeof out);
    return out;
  }
  // Runs run(lane) for every lane until the shuffles settle.
  template <typename Run>
  void lockstep(int lanes, Run run) {
    previous.clear();
    for (int pass = 0; pass < 100; ++pass) {
      given.assign(size_t(lanes), {});
      calls.assign(size_t(lanes), 0);
      for (lane = 0; lane < lanes; ++lane) run(lane);
      if (given == previous) return;
      previous = given;
    }
    ADD_FAILURE() << "the shuffles did not settle";
  }
};

// The prelude's sections for one warp width, each in a namespace of its own,
// with the lane the loads read set by the test.
#define __SPN_WARP_SIZE 32
namespace w32 {
inline int lane = 0;
inline HostWarp warp;
inline int __spn_lane_id() { return lane; }
template <typename T>
T __spn_shfl(T v, int src) {
  return warp.shfl(v, src, 32);
}
template <typename T>
T __spn_shfl_xor(T v, int mask) {
  return warp.shfl(v, lane ^ mask, 32);
}
// clang-format off
#include "prelude_mma_helpers.inc"
// clang-format on
constexpr int kN = __SPN_MMA_N;
constexpr int kRows = __SPN_MMA_ROWS;
}  // namespace w32
#undef __SPN_WARP_SIZE
#undef __SPN_MMA_N
#undef __SPN_MMA_ROWS
#undef __SPN_MMA_ROW_LANES
#define __SPN_WARP_SIZE 64
namespace w64 {
inline int lane = 0;
inline HostWarp warp;
inline int __spn_lane_id() { return lane; }
template <typename T>
T __spn_shfl(T v, int src) {
  return warp.shfl(v, src, 64);
}
template <typename T>
T __spn_shfl_xor(T v, int mask) {
  return warp.shfl(v, lane ^ mask, 64);
}
// clang-format off
#include "prelude_mma_helpers.inc"
// clang-format on
constexpr int kN = __SPN_MMA_N;
constexpr int kRows = __SPN_MMA_ROWS;
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

// ldmatrix.x4 as the PTX ISA states it ("ldmatrix"): lane l gives the
// address of row l % 8 of matrix l / 8; each lane receives, in register j,
// the elements at columns 2 (lane % 4) and + 1 of row lane / 4 of matrix j
// (with .trans, of the transposed matrix: column lane / 4, rows 2 (lane %
// 4) and + 1). The prelude's tile loads through ldmatrix (NVIDIA, shared
// buffers) put register j's pair in operand registers 2j and 2j + 1; here
// the offsets the prelude's lanes give are checked to land each operand
// element where the documented layout wants it.
template <bool NK>
void checkLdmatrixOffsets(bool trans, Cell (*doc)(int, int), bool storedTransposed, const char* what) {
  const int s0 = 24;  // a padded row stride (16 + 8)
  for (int lane = 0; lane < 32; ++lane)
    for (int j = 0; j < 4; ++j)
      for (int e = 0; e < 2; ++e) {
        // The element of the block (stored row, stored column) this lane's
        // register j, half e, receives.
        int row, col;
        if (!trans) {
          const int base = w32::__spn_mma_ldsm_offset<NK>(8 * j + lane / 4, s0);
          row = base / s0, col = base % s0 + 2 * (lane % 4) + e;
        } else {
          const int base = w32::__spn_mma_ldsm_offset<NK>(8 * j + 2 * (lane % 4) + e, s0);
          row = base / s0, col = base % s0 + lane / 4;
        }
        // The operand element of register 2j + e: stored (row, col) is
        // tile (row, col), or (col, row) where the tile is stored transposed.
        const Cell want = doc(lane, 2 * j + e);
        const Cell got = storedTransposed ? Cell{col, row} : Cell{row, col};
        EXPECT_TRUE(got.row == want.row && got.col == want.col)
            << what << " lane " << lane << ", register " << 2 * j + e << ": (" << got.row << ", " << got.col
            << ") for (" << want.row << ", " << want.col << ")";
      }
}

TEST(MmaLayout, LdmatrixOffsetsLoadTheDocumentedElements) {
  checkLdmatrixOffsets<false>(false, nvidiaA, false, "mma_load_a (A stored M x K)");
  checkLdmatrixOffsets<false>(true, nvidiaB, false, "mma_load_b (B stored K x N, .trans)");
  checkLdmatrixOffsets<true>(false, nvidiaB, true, "mma_load_b_t (B stored N x K)");
  checkLdmatrixOffsets<true>(true, nvidiaA, true, "mma_load_a_t (A stored K x M, .trans)");
}

// The same emulation on a swizzled buffer (shared(T, [R, C], swizzle=S),
// docs/language.md 5.4): each lane gives the swizzled address of its row's
// 16-byte chunk (the prelude's __spn_mma_ldsm for Swz != 0: the swizzled
// offset of the lane's row and column, __spn_mma_ldsm_row/_col), the
// hardware reads 8 contiguous elements there, and every register must hold
// the element the documented layout wants, read from where the swizzle put
// it. The buffer's memory holds, at each element's swizzled place, a code
// of its coordinates.
template <int S, bool NK>
void checkSwizzledLdmatrix(bool trans, Cell (*doc)(int, int), bool storedTransposed, const char* what) {
  const int R = 48, C = 128;  // 256-byte rows: 2 to 8 panels
  std::vector<int> memory(size_t(R * C), -1);
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) memory[size_t(w32::__spn_swizzle_offset<S, uint16_t>(R, r, c))] = r * C + c;
  for (int r0 : {0, 8, 16, 24, 32})
    for (int c0 : {0, 8, 16, 40, 64, 112}) {
      int address[32];
      for (int lane = 0; lane < 32; ++lane)
        address[lane] = w32::__spn_swizzle_offset<S, uint16_t>(R, r0 + w32::__spn_mma_ldsm_row<NK>(lane),
                                                               c0 + w32::__spn_mma_ldsm_col<NK>(lane));
      for (int lane = 0; lane < 32; ++lane)
        for (int j = 0; j < 4; ++j)
          for (int e = 0; e < 2; ++e) {
            const int at = !trans ? address[8 * j + lane / 4] + 2 * (lane % 4) + e
                                  : address[8 * j + 2 * (lane % 4) + e] + lane / 4;
            const int code = memory[size_t(at)];
            const int row = code / C - r0, col = code % C - c0;
            const Cell want = doc(lane, 2 * j + e);
            const Cell got = storedTransposed ? Cell{col, row} : Cell{row, col};
            EXPECT_TRUE(got.row == want.row && got.col == want.col)
                << what << " swizzle " << S << " block at (" << r0 << ", " << c0 << ") lane " << lane << ", register "
                << 2 * j + e << ": (" << got.row << ", " << got.col << ") for (" << want.row << ", " << want.col << ")";
          }
    }
}

template <int S>
void checkSwizzledLdmatrixLoads() {
  checkSwizzledLdmatrix<S, false>(false, nvidiaA, false, "mma_load_a (A stored M x K)");
  checkSwizzledLdmatrix<S, false>(true, nvidiaB, false, "mma_load_b (B stored K x N, .trans)");
  checkSwizzledLdmatrix<S, true>(false, nvidiaB, true, "mma_load_b_t (B stored N x K)");
  checkSwizzledLdmatrix<S, true>(true, nvidiaA, true, "mma_load_a_t (A stored K x M, .trans)");
}

TEST(MmaLayout, SwizzledLdmatrixAddressesLoadTheDocumentedElements) {
  checkSwizzledLdmatrixLoads<32>();
  checkSwizzledLdmatrixLoads<64>();
  checkSwizzledLdmatrixLoads<128>();
}

// The element-by-element loads (AMD, the CPU target, ldmatrix's fallback)
// from a swizzled buffer: every register holds the documented element.
template <int S>
void checkSwizzledElementLoads() {
  const int R = 32, C = 64;
  std::vector<uint16_t> memory(size_t(R * C));
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) memory[size_t(w32::__spn_swizzle_offset<S, uint16_t>(R, r, c))] = uint16_t(r * C + c);
  for (int lane = 0; lane < 32; ++lane) {
    w32::lane = lane;
    w32::__spn_mma_a<uint16_t> a{}, at{};
    w32::__spn_mma_b<uint16_t> b{}, bt{};
    w32::__spn_mma_load_a<S>(a, memory.data(), R, C, C, 1, 16, 24);
    w32::__spn_mma_load_a_t<S>(at, memory.data(), R, C, C, 1, 8, 32);
    w32::__spn_mma_load_b<S>(b, memory.data(), R, C, C, 1, 16, 40);
    w32::__spn_mma_load_b_t<S>(bt, memory.data(), R, C, C, 1, 8, 16);
    for (int i = 0; i < w32::kN; ++i) {
      const Cell da = nvidiaA(lane, i), db = nvidiaB(lane, i);
      EXPECT_EQ(a.h[i], (16 + da.row) * C + 24 + da.col) << "a, swizzle " << S << " lane " << lane << " reg " << i;
      EXPECT_EQ(at.h[i], (8 + da.col) * C + 32 + da.row) << "a_t, swizzle " << S << " lane " << lane << " reg " << i;
      EXPECT_EQ(b.h[i], (16 + db.row) * C + 40 + db.col) << "b, swizzle " << S << " lane " << lane << " reg " << i;
      EXPECT_EQ(bt.h[i], (8 + db.col) * C + 16 + db.row) << "b_t, swizzle " << S << " lane " << lane << " reg " << i;
    }
  }
}

TEST(MmaLayout, SwizzledElementLoadsHoldTheDocumentedElements) {
  checkSwizzledElementLoads<32>();
  checkSwizzledElementLoads<64>();
  checkSwizzledElementLoads<128>();
}

// ---- Flash attention's steps (docs/language.md 8.11): row values, row
// reductions, accumulator to A operand.

// The row fragment's layout, stated from the accumulator's documented one:
// slot s of a lane is the s-th distinct row among its D elements, in
// register order (NVIDIA: rows group, group + 8; AMD: 4 (lane / 16) + s).
int nvidiaRowOfSlot(int lane, int s) { return (lane >> 2) + 8 * s; }
int amdRowOfSlot(int lane, int s) { return 4 * (lane / 16) + s; }

template <typename W, typename DocD, typename RowOfSlot>
void checkRowSlots(W& lane, int lanes, int n, int rows, DocD docD, RowOfSlot rowOfSlot, int (*rowsAt)(int),
                   int (*slotOf)(int), const char* what) {
  for (int l = 0; l < lanes; ++l) {
    lane = l;
    for (int s = 0; s < rows; ++s) EXPECT_EQ(rowsAt(s), rowOfSlot(l, s)) << what << " lane " << l << ", slot " << s;
    for (int i = 0; i < n; ++i)
      EXPECT_EQ(rowOfSlot(l, slotOf(i)), docD(l, i).row) << what << " lane " << l << ", register " << i;
  }
}

TEST(MmaRows, SlotsAreTheRowsOfTheLanesAccumulatorElements) {
  checkRowSlots(w32::lane, 32, w32::kN, w32::kRows, nvidiaD, nvidiaRowOfSlot, w32::__spn_mma_rows_at,
                w32::__spn_mma_row_slot, "NVIDIA");
  checkRowSlots(w64::lane, 64, w64::kN, w64::kRows, amdD, amdRowOfSlot, w64::__spn_mma_rows_at, w64::__spn_mma_row_slot,
                "AMD");
}

// row_max and row_sum over a row of 3 random tiles (`row_max(m[i],
// acc[i])`; rowMax gets all 3, or is called once per tile for the
// one-tile form), from random starting row values: every lane's copy of
// every row it holds ends as the row's fold over the 48 columns.
template <typename Acc, typename Rows, typename W, typename DocD, typename RowOfSlot, typename Max, typename Sum>
void checkRowReductions(W& ns_lane, HostWarp& warp, int lanes, int n, int rows, DocD docD, RowOfSlot rowOfSlot,
                        Max rowMax, Sum rowSum, const char* what) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  float tile[3][16][16], start[16];
  for (auto& t : tile)
    for (auto& row : t)
      for (float& v : row) v = dist(gen);
  for (float& v : start) v = dist(gen);
  tile[1][5][9] = 100.0f;  // a row whose max is far from the others
  std::vector<Rows> maxOut(static_cast<size_t>(lanes)), sumOut(static_cast<size_t>(lanes));
  warp.lockstep(lanes, [&](int l) {
    ns_lane = l;
    Acc acc[3] = {};
    for (int t = 0; t < 3; ++t)
      for (int i = 0; i < n; ++i) acc[t].x[i] = tile[t][docD(l, i).row][docD(l, i).col];
    Rows m{}, s{};
    for (int k = 0; k < rows; ++k) m.x[k] = s.x[k] = start[rowOfSlot(l, k)];
    rowMax(m, acc);
    rowSum(s, acc);
    maxOut[size_t(l)] = m;
    sumOut[size_t(l)] = s;
  });
  for (int l = 0; l < lanes; ++l)
    for (int k = 0; k < rows; ++k) {
      const int r = rowOfSlot(l, k);
      double mx = start[r], sum = start[r];
      for (int t = 0; t < 3; ++t)
        for (int c = 0; c < 16; ++c) {
          mx = std::max(mx, double(tile[t][r][c]));
          sum += tile[t][r][c];
        }
      EXPECT_EQ(maxOut[size_t(l)].x[k], float(mx)) << what << " row_max, lane " << l << ", row " << r;
      EXPECT_NEAR(sumOut[size_t(l)].x[k], sum, 1e-4) << what << " row_sum, lane " << l << ", row " << r;
    }
}

TEST(MmaRows, RowMaxAndRowSumFoldEachRowOnEveryLaneThatHoldsIt) {
  // A row of tiles at once (`acc[i]`).
  checkRowReductions<w32::__spn_mma_acc, w32::__spn_mma_rows>(
      w32::lane, w32::warp, 32, w32::kN, w32::kRows, nvidiaD, nvidiaRowOfSlot,
      [](auto& m, const auto& a) { w32::__spn_mma_row_max(m, a); },
      [](auto& m, const auto& a) { w32::__spn_mma_row_sum(m, a); }, "NVIDIA");
  checkRowReductions<w64::__spn_mma_acc, w64::__spn_mma_rows>(
      w64::lane, w64::warp, 64, w64::kN, w64::kRows, amdD, amdRowOfSlot,
      [](auto& m, const auto& a) { w64::__spn_mma_row_max(m, a); },
      [](auto& m, const auto& a) { w64::__spn_mma_row_sum(m, a); }, "AMD");
  // One tile a call (`acc[i, j]`).
  checkRowReductions<w32::__spn_mma_acc, w32::__spn_mma_rows>(
      w32::lane, w32::warp, 32, w32::kN, w32::kRows, nvidiaD, nvidiaRowOfSlot,
      [](auto& m, const auto& a) {
        for (const auto& t : a) w32::__spn_mma_row_max(m, t);
      },
      [](auto& m, const auto& a) {
        for (const auto& t : a) w32::__spn_mma_row_sum(m, t);
      },
      "NVIDIA, one tile a call");
  checkRowReductions<w64::__spn_mma_acc, w64::__spn_mma_rows>(
      w64::lane, w64::warp, 64, w64::kN, w64::kRows, amdD, amdRowOfSlot,
      [](auto& m, const auto& a) {
        for (const auto& t : a) w64::__spn_mma_row_max(m, t);
      },
      [](auto& m, const auto& a) {
        for (const auto& t : a) w64::__spn_mma_row_sum(m, t);
      },
      "AMD, one tile a call");
}

// A 16-bit "type" whose code is the float's integer value: the conversion's
// movement of elements is what is checked (the rounding is T's own).
struct Code {
  uint16_t bits;
  explicit Code(float f) : bits(uint16_t(f)) {}
};

// mma_to_a: D[r][c] = r * 16 + c + 1 becomes A[m][k] with the same code at
// m = r, k = c, in the documented A layout.
template <typename Acc, typename A, typename W, typename DocD, typename DocA, typename ToA>
void checkToA(W& ns_lane, HostWarp& warp, int lanes, int n, DocD docD, DocA docA, ToA toA, const char* what) {
  std::vector<A> out(static_cast<size_t>(lanes));
  warp.lockstep(lanes, [&](int l) {
    ns_lane = l;
    Acc acc{};
    for (int i = 0; i < n; ++i) acc.x[i] = float(docD(l, i).row * 16 + docD(l, i).col + 1);
    A a{};
    toA(a, acc);
    out[size_t(l)] = a;
  });
  for (int l = 0; l < lanes; ++l)
    for (int i = 0; i < n; ++i) {
      const Cell c = docA(l, i);
      EXPECT_EQ(out[size_t(l)].h[i], uint16_t(c.row * 16 + c.col + 1)) << what << " lane " << l << ", register " << i;
    }
}

// The paired conversion is NVIDIA's only (cvt.rn.f16x2.f32, counted in
// the sm_90 PTX by tests/golden/CMakeLists.txt); the host's warp-32 form
// converts element by element.
constexpr auto kNoPack = [](float, float) { return 0u; };

TEST(MmaRows, AccumulatorBecomesTheAOperandOfTheSameTile) {
  checkToA<w32::__spn_mma_acc, w32::__spn_mma_a<Code>>(
      w32::lane, w32::warp, 32, w32::kN, nvidiaD, nvidiaA,
      [](auto& a, const auto& d) { w32::__spn_mma_to_a(a, d, kNoPack); }, "NVIDIA");
  checkToA<w64::__spn_mma_acc, w64::__spn_mma_a<Code>>(
      w64::lane, w64::warp, 64, w64::kN, amdD, amdA, [](auto& a, const auto& d) { w64::__spn_mma_to_a(a, d, kNoPack); },
      "AMD");
}

// mma_store's exchange: D[r][c] = r * 16 + c + 1 in the documented
// accumulator layout; afterwards every lane's run j holds, in order, the
// Len elements of row __spn_mma_run_row(lane, j) from column
// __spn_mma_run_col(lane, j) (f32: the floats' bits; 2-byte types: the
// codes two a word, the lower column in the low half), and the runs of the
// warp cover the tile exactly once.
template <int Bytes, typename Runs, typename Acc, typename W, typename DocD, typename Exchange, typename Row,
          typename Col>
void checkStoreRuns(W& ns_lane, HostWarp& warp, int lanes, int n, DocD docD, Exchange exchange, Row rowOf, Col colOf,
                    const char* what) {
  std::vector<Runs> out(static_cast<size_t>(lanes));
  warp.lockstep(lanes, [&](int l) {
    ns_lane = l;
    Acc acc{};
    for (int i = 0; i < n; ++i) acc.x[i] = float(docD(l, i).row * 16 + docD(l, i).col + 1);
    Runs runs{};
    exchange(runs, acc);
    out[size_t(l)] = runs;
  });
  std::vector<int> seen(256, 0);
  for (int l = 0; l < lanes; ++l)
    for (int j = 0; j < Runs::Count; ++j)
      for (int k = 0; k < Runs::Len; ++k) {
        const int row = rowOf(l, j), col = colOf(l, j) + k;
        ASSERT_TRUE(row >= 0 && row < 16 && col >= 0 && col < 16) << what << " lane " << l << " run " << j;
        ++seen[size_t(row * 16 + col)];
        const uint32_t word = out[size_t(l)].w[j][Bytes == 4 ? k : k / 2];
        float got = 0;
        if (Bytes == 4) std::memcpy(&got, &word, 4);
        else got = float(uint16_t(word >> (16 * (k % 2))));
        EXPECT_EQ(got, float(row * 16 + col + 1)) << what << " lane " << l << " run " << j << " element " << k;
      }
  for (int e = 0; e < 256; ++e) EXPECT_EQ(seen[size_t(e)], 1) << what << ": element " << e / 16 << ", " << e % 16;
}

// A 2-byte "conversion" that keeps the integer values (the rounding is
// the type's own; the movement of elements is what is checked here).
constexpr auto kIntPack = [](float lo, float hi) { return uint32_t(uint16_t(lo)) | uint32_t(uint16_t(hi)) << 16; };

TEST(MmaStore, ExchangeGivesEachLaneWholeRunsOfOneRow) {
  checkStoreRuns<4, w32::__spn_mma_runs<4>, w32::__spn_mma_acc>(
      w32::lane, w32::warp, 32, w32::kN, nvidiaD,
      [](auto& r, const auto& d) { w32::__spn_mma_store_runs(r, d, kIntPack); }, w32::__spn_mma_run_row<4>,
      w32::__spn_mma_run_col<4>, "NVIDIA f32");
  checkStoreRuns<2, w32::__spn_mma_runs<2>, w32::__spn_mma_acc>(
      w32::lane, w32::warp, 32, w32::kN, nvidiaD,
      [](auto& r, const auto& d) { w32::__spn_mma_store_runs(r, d, kIntPack); }, w32::__spn_mma_run_row<2>,
      w32::__spn_mma_run_col<2>, "NVIDIA 2-byte");
  checkStoreRuns<4, w64::__spn_mma_runs<4>, w64::__spn_mma_acc>(
      w64::lane, w64::warp, 64, w64::kN, amdD,
      [](auto& r, const auto& d) { w64::__spn_mma_store_runs(r, d, kIntPack); }, w64::__spn_mma_run_row<4>,
      w64::__spn_mma_run_col<4>, "AMD f32");
  checkStoreRuns<2, w64::__spn_mma_runs<2>, w64::__spn_mma_acc>(
      w64::lane, w64::warp, 64, w64::kN, amdD,
      [](auto& r, const auto& d) { w64::__spn_mma_store_runs(r, d, kIntPack); }, w64::__spn_mma_run_row<2>,
      w64::__spn_mma_run_col<2>, "AMD 2-byte");
}

// The runs as the documents place them: NVIDIA f32, lane 4 g + t holds row
// g + 8 (t % 2) from column 4 (t / 2) + 8 j (two runs of 4); NVIDIA 2-byte,
// run j is row g + 8 j from column 2 t (t even) or 2 t + 6 (t odd), so a
// quad's four runs j are one row's 16 columns, a whole 32-byte sector; AMD
// lane c + 16 G holds row 4 G + c % 4 from column c - c % 4 (one run of 4).
// Each run is 16 bytes (2-byte types: 8).
TEST(MmaStore, RunsAreWholeVectorsOfOneRow) {
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    for (int j = 0; j < 2; ++j) {
      EXPECT_EQ(w32::__spn_mma_run_row<4>(lane, j), g + 8 * (t % 2));
      EXPECT_EQ(w32::__spn_mma_run_col<4>(lane, j), 4 * (t / 2) + 8 * j);
      EXPECT_EQ(w32::__spn_mma_run_row<2>(lane, j), g + 8 * j);
      EXPECT_EQ(w32::__spn_mma_run_col<2>(lane, j), t % 2 == 0 ? 2 * t : 2 * t + 6);
    }
  }
  for (int lane = 0; lane < 64; ++lane) {
    const int c = lane % 16, G = lane / 16;
    EXPECT_EQ(w64::__spn_mma_run_row<4>(lane, 0), 4 * G + c % 4);
    EXPECT_EQ(w64::__spn_mma_run_col<4>(lane, 0), c - c % 4);
  }
  EXPECT_EQ(w32::__spn_mma_runs<4>::Len * 4, 16);
  EXPECT_EQ(w32::__spn_mma_runs<2>::Len * 2, 8);
  EXPECT_EQ(w64::__spn_mma_runs<4>::Len * 4, 16);
  EXPECT_EQ(w64::__spn_mma_runs<2>::Len * 2, 8);
}

}  // namespace
