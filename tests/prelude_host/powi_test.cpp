// x ** N on integers (prelude __spn_powi, docs/language.md 6.6), compiled for
// the host through prelude_host_shim.h: exact wherever the power fits its
// type. It squared the base once more than it used it, which overflows a
// signed type (undefined behaviour) where the power itself fits: 1290 ** 3
// is an i32, 1290 ** 4 is not (seen while building tests/cpu_fuzz's
// -fsanitize=undefined mode: clang reported it in a kernel computing
// `i32(x) ** 3`). Evaluated as constants, such an overflow does not
// compile; the sweep checks the values.
#include <gtest/gtest.h>

#include <cstdint>

#include "prelude_host_shim.h"
// clang-format off
#include "prelude_powi_helpers.inc"
// clang-format on

namespace {

// The largest bases whose cube and square fit: a square or a fourth power
// of them does not.
static_assert(__spn_powi<3>(int32_t(1290)) == 2146689000);
static_assert(__spn_powi<3>(int32_t(-1290)) == -2146689000);
static_assert(__spn_powi<2>(int32_t(46340)) == 2147395600);
static_assert(__spn_powi<3>(int64_t(2097151)) == int64_t(9223358842721533951));
static_assert(__spn_powi<5>(int32_t(73)) == 2073071593);
static_assert(__spn_powi<1>(int32_t(-7)) == -7 && __spn_powi<0>(int32_t(5)) == 1);

template <typename T>
T slowPower(T x, int n) {
  T r = 1;
  for (int i = 0; i < n; ++i) r *= x;
  return r;
}

template <int N>
void sweep32(int32_t largest) {
  for (int32_t x = -largest; x <= largest; ++x) ASSERT_EQ(__spn_powi<N>(x), slowPower(x, N)) << x << " ** " << N;
}

TEST(Powi, ExactWhereverThePowerFits) {
  sweep32<2>(46340);
  sweep32<3>(1290);
  sweep32<4>(215);
  sweep32<5>(73);
  sweep32<7>(21);
  for (int64_t x : {int64_t(-2097151), int64_t(-1), int64_t(0), int64_t(3), int64_t(2097151)})
    EXPECT_EQ(__spn_powi<3>(x), slowPower(x, 3));
  // Unsigned powers wrap, as the language's u32 arithmetic does.
  EXPECT_EQ(__spn_powi<3>(uint32_t(4000000000u)), slowPower(uint32_t(4000000000u), 3));
}

}  // namespace
