// shfl / shfl_up / shfl_down, sync_warp and the votes: their types and
// errors, and what they print.
#include "sema_test_util.h"

namespace spindle::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(WarpPrimitives, TypesAndPrinting) {
  const char* text = R"(
@grid(1)
@block(64)
kernel k(x: f64[N], h: f16[N], c: i64[N], b: u64[N], flags: bool[N]):
    t = thread_id()
    x[t] = shfl(x[t], 3) + shfl_down(x[t], 1)
    c[t] = shfl_up(c[t], 2)
    x[t] += shfl(h[t], t + 1)       # an f16 value is f32 by then
    sync_warp()
    b[t] = ballot(x[t] > 0.0)
    flags[t] = warp_any(c[t]) and warp_all(flags[t])
)";
  std::string s = generate(text, "k");
  EXPECT_THAT(s, HasSubstr("x[t] = __spn_shfl(x[t], 3) + __spn_shfl_down_by(x[t], 1);"));
  EXPECT_THAT(s, HasSubstr("c[t] = __spn_shfl_up_by(c[t], 2);"));
  EXPECT_THAT(s, HasSubstr("__spn_shfl(float(h[t]), t + 1)"));
  EXPECT_THAT(s, HasSubstr("__spn_sync_warp();"));
  EXPECT_THAT(s, HasSubstr("b[t] = __spn_ballot(bool(x[t] > 0.0));"));
  EXPECT_THAT(s, HasSubstr("flags[t] = __spn_warp_any(bool(c[t])) && __spn_warp_all(bool(flags[t]));"));
}

TEST(WarpPrimitives, Errors) {
  auto a = analyze(R"(
@grid(1)
@block(64)
kernel k(x: f32[N], q: i8[N], u: u32[N]):
    t = thread_id()
    q[t] = shfl(q[t], 1)
    x[t] = shfl_down(x[t], 1.5)
    v = sync_warp()
)");
  EXPECT_THAT(diagIds(*a), ElementsAre("sema-collective-type", "sema-index-type", "sema-void-value"));
}

}  // namespace
}  // namespace spindle::test
