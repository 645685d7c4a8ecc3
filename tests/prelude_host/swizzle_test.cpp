// The swizzled shared layout (docs/language.md 5.4, `shared(T, [R, C],
// swizzle=S)`): the prelude's __spn_swizzle_offset, compiled for the host,
// against two independent statements of the layout, for every element of
// buffers of every allowed shape class, element size and swizzle:
//  - the language's definition: W = S / e columns a panel, lin = (p * R +
//    r) * S + w * e, physical = lin ^ (((lin >> 7) & (S / 16 - 1)) << 4);
//  - CUTLASS's Swizzle<B, 4, 3> (S = 16 << B) on the same linear byte
//    offset, as CuTe states it: bits [4, 4 + B) XORed with bits [7, 7 + B)
//    (yyy_msk = ((1 << B) - 1) << 7; offset ^ ((offset & yyy_msk) >> 3)),
//    which is what wgmma's shared-memory descriptors read.
// And the layout is a permutation of the buffer, with each 16-byte chunk
// of a panel row kept whole (copy_async's runs and ldmatrix's rows rely on
// it), and for S = 128 with 128-byte rows chunk k of row r lands on chunk
// k ^ (r % 8) of the same row.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "prelude_host_shim.h"

namespace swz {
// clang-format off
#include "prelude_swizzle_helpers.inc"
// clang-format on
}  // namespace swz

namespace {

int64_t languageOffset(int64_t S, int64_t e, int64_t R, int64_t r, int64_t c) {
  const int64_t W = S / e, p = c / W, w = c % W;
  const int64_t lin = (p * R + r) * S + w * e;
  return lin ^ (((lin >> 7) & (S / 16 - 1)) << 4);
}

int64_t cutlassSwizzle(int B, int64_t offset) {  // Swizzle<B, 4, 3>
  const int64_t yyy = ((int64_t(1) << B) - 1) << (4 + 3);
  return offset ^ ((offset & yyy) >> 3);
}

template <int S, typename T>
void checkSwizzle(const char* type) {
  const int64_t e = sizeof(T), W = S / e;
  const int B = S == 32 ? 1 : S == 64 ? 2 : 3;
  for (int64_t R : {8, 16, 24, 64})
    for (int64_t panels : {1, 2, 3}) {
      const int64_t C = panels * W;
      std::vector<int> hits(size_t(R * C), 0);
      for (int64_t r = 0; r < R; ++r)
        for (int64_t c = 0; c < C; ++c) {
          const int64_t got = int64_t(swz::__spn_swizzle_offset<S, T>(R, r, c)) * e;  // bytes
          const int64_t lin = (c / W * R + r) * S + c % W * e;
          const auto where = [&] {
            return ::testing::Message() << type << " swizzle " << S << " buffer " << R << " x " << C << " [" << r
                                        << ", " << c << "]";
          };
          ASSERT_EQ(got, languageOffset(S, e, R, r, c)) << where();
          ASSERT_EQ(got, cutlassSwizzle(B, lin)) << where();
          // The chunk moves whole, within its panel row.
          ASSERT_EQ(got % 16, lin % 16) << where();
          ASSERT_EQ(got / S, lin / S) << where();
          ASSERT_GE(got, 0);
          ASSERT_LT(got, R * C * e);
          ++hits[size_t(got / e)];
        }
      for (size_t i = 0; i < hits.size(); ++i)
        ASSERT_EQ(hits[i], 1) << type << " swizzle " << S << " buffer " << R << " x " << C << ": element slot " << i;
    }
}

template <typename T>
void checkAllSwizzles(const char* type) {
  checkSwizzle<32, T>(type);
  checkSwizzle<64, T>(type);
  checkSwizzle<128, T>(type);
}

TEST(Swizzle, OffsetsAreTheLanguagesAndCutlassLayout) {
  checkAllSwizzles<uint8_t>("1-byte");
  checkAllSwizzles<uint16_t>("2-byte");
  checkAllSwizzles<float>("4-byte");
  checkAllSwizzles<double>("8-byte");
}

// The statement everyone remembers: 128-byte rows, S = 128, chunk k of row
// r is stored as chunk k ^ (r % 8) of row r.
TEST(Swizzle, OneHundredTwentyEightByteRowsXorTheChunkWithTheRow) {
  for (int64_t r = 0; r < 32; ++r)
    for (int64_t c = 0; c < 64; ++c) {  // f16: 64 columns, 8 chunks of 8
      const int64_t got = swz::__spn_swizzle_offset<128, uint16_t>(32, r, c);
      EXPECT_EQ(got, r * 64 + ((c / 8) ^ (r % 8)) * 8 + c % 8) << "[" << r << ", " << c << "]";
    }
}

}  // namespace
