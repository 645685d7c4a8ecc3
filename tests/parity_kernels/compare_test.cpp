// The comparison the parity benchmark runs before it times anything
// (bench/parity/compare.hpp): which tolerance each kind allows, and that a
// mismatch is counted and its worst element found, so that a wrong
// hand-written or Spindle kernel fails the run with the element to look at.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "compare.hpp"

namespace parity {
namespace {

TEST(ParityCompare, StorageUlpsFollowTheMagnitude) {
  const Tolerance bf = Tolerance::bf16(1), h = Tolerance::f16(1);
  EXPECT_EQ(bf.allowed(1.0), 0x1p-7);
  EXPECT_EQ(bf.allowed(1.5), 0x1p-7);
  EXPECT_EQ(bf.allowed(-0.75), 0x1p-8);
  EXPECT_EQ(bf.allowed(3e-3), 0x1p-9 * 0x1p-7);  // 3e-3 is in [2^-9, 2^-8)
  EXPECT_EQ(h.allowed(1.0), 0x1p-10);
  EXPECT_EQ(h.allowed(1e-6), 0x1p-24);  // below f16's smallest normal: the subnormal spacing
  // At zero, only the smallest subnormal's spacing: a masked attention
  // weight written as 0.001 instead of 0 must fail.
  EXPECT_EQ(bf.allowed(0.0), 0x1p-133);
  EXPECT_FALSE(compare(
                   1, [](size_t) { return 0.001; }, [](size_t) { return 0.0; }, Tolerance::bf16(0.5, 4e-5))
                   .ok());
  // atol and rtol add to the ulps.
  EXPECT_DOUBLE_EQ(Tolerance::bf16(0.5, 4e-5, 1e-9).allowed(2.0), 0.5 * 0x1p-6 + 4e-5 * 2.0 + 1e-9);
  EXPECT_EQ(Tolerance::exact().allowed(123.0), 0.0);
}

TEST(ParityCompare, CountsMismatchesAndFindsTheWorst) {
  std::vector<double> want = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  std::vector<double> got = want;
  Comparison r = compare(
      got.size(), [&](size_t i) { return got[i]; }, [&](size_t i) { return want[i]; }, Tolerance::exact());
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.maxErr, 0.0);
  got[7] = 8.5;
  got[2] = 3.25;
  r = compare(
      got.size(), [&](size_t i) { return got[i]; }, [&](size_t i) { return want[i]; }, Tolerance::exact());
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.bad, 2u);
  EXPECT_EQ(r.count, 10u);
  EXPECT_EQ(r.worst, 7u);
  EXPECT_EQ(r.gotWorst, 8.5);
  EXPECT_EQ(r.wantWorst, 8.0);
  EXPECT_EQ(r.maxErr, 0.5);
}

TEST(ParityCompare, TheWorstIsAFailingElementNotTheLargestError) {
  // Relative tolerance: element 0 is off by 1 but within 1% of 1000;
  // element 1 is off by 0.1 on 1, out of tolerance.
  const std::vector<double> want = {1000, 1, 2}, got = {1001, 1.1, 2};
  const Comparison r = compare(
      3, [&](size_t i) { return got[i]; }, [&](size_t i) { return want[i]; }, Tolerance::abs(0, 1e-2));
  EXPECT_EQ(r.bad, 1u);
  EXPECT_EQ(r.worst, 1u);
  EXPECT_EQ(r.maxErr, 1.0);
}

TEST(ParityCompare, NanNeverPasses) {
  // An element left poisoned (NaN) on either side, or on both.
  const std::vector<double> a = {1, NAN, 3}, b = {1, 2, NAN};
  Comparison r = compare(
      3, [&](size_t i) { return a[i]; }, [&](size_t i) { return b[i]; }, Tolerance::abs(1, 1));
  EXPECT_EQ(r.bad, 2u);
  EXPECT_TRUE(std::isnan(r.gotWorst) || std::isnan(r.wantWorst));
  EXPECT_TRUE(std::isinf(r.maxErr));
  r = compare(
      1, [](size_t) { return double(NAN); }, [](size_t) { return double(NAN); }, Tolerance::abs(1, 1));
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace parity
