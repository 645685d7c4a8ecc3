// warp_argmax / warp_argmin / block_argmax / block_argmin (docs/language.md
// 8.4): their tuple types, the errors they report, what they print, and the
// block-collective scratch they double only where they are reached.
#include "sema_test_util.h"

namespace spindle::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(ArgReduce, UnpacksIntoTheValueAndIndexTypes) {
  auto a = analyze(R"(
@grid(1)
@block(64)
kernel k(x: f32[N], h: f16[N], d: f64[N], c: i64[N], u: u32[N]):
    t = thread_id()
    m, j = warp_argmax(x[t], t)
    hm, hj = block_argmin(h[t], i64(t))
    dm, dj = warp_argmin(d[t], u[t])
    cm, cj = block_argmax(c[t], 7)
)");
  ASSERT_TRUE(a->diags.diagnostics().empty()) << a->diags.renderAll();
  FunctionScope* k = findScope(*a->result.sema, "k");
  auto typeOf = [&](const char* name) { return std::string(scalarName(k->names.at(name)->type)); };
  EXPECT_EQ(typeOf("m"), "f32");
  EXPECT_EQ(typeOf("j"), "i32");
  EXPECT_EQ(typeOf("hm"), "f32");  // an f16 value is f32 by then
  EXPECT_EQ(typeOf("hj"), "i64");
  EXPECT_EQ(typeOf("dm"), "f64");
  EXPECT_EQ(typeOf("dj"), "u32");
  EXPECT_EQ(typeOf("cm"), "i64");
  EXPECT_EQ(typeOf("cj"), "i32");
}

TEST(ArgReduce, Errors) {
  auto a = analyze(R"(
@grid(1)
@block(64)
kernel k(x: f32[N], q: i8[N], c: i16[N], flags: bool[N]):
    t = thread_id()
    a, b = warp_argmax(q[t], t)
    a2, b2 = block_argmin(flags[t], t)
    a3, b3 = warp_argmin(x[t], 1.5)
    a4, b4 = block_argmax(x[t], c[t])
    one = warp_argmax(x[t], t)
    x[t] = block_argmin(x[t], t) + 1.0
    a5, b5, c5 = warp_argmax(x[t], t)
)");
  EXPECT_THAT(diagIds(*a),
              ElementsAre("sema-collective-type", "sema-collective-type", "sema-index-type", "sema-collective-type",
                          "sema-tuple-value", "sema-tuple-value", "sema-unpack-arity"));
  const std::string all = a->diags.renderAll();
  EXPECT_THAT(all, HasSubstr("'warp_argmax' works on 32- and 64-bit numbers, got i8"));
  EXPECT_THAT(all, HasSubstr("an index must be an integer, not f32"));
  EXPECT_THAT(all, HasSubstr("'block_argmax' works on 32- and 64-bit numbers, got i16"));
  EXPECT_THAT(all,
              HasSubstr("'warp_argmax' returns 2 values (f32, i32), not one; unpack them: 'a, b = warp_argmax(...)'"));
  EXPECT_THAT(all, HasSubstr("cannot unpack 2 values into 3 targets"));
}

TEST(ArgReduce, ArityAndShadowing) {
  auto arity = analyze(R"(
@grid(1)
@block(64)
kernel k(x: f32[N]):
    t = thread_id()
    a, b = warp_argmax(x[t])
)");
  EXPECT_THAT(diagIds(*arity), ElementsAre("sema-call-arity"));
  // A def of the same name is called instead, as for every builtin.
  auto shadowed = analyze(R"(
def warp_argmax(v: f32, i: i32) -> tuple[f32, i32]:
    return v, i

@grid(1)
@block(64)
kernel k(x: f32[N], y: i32[N]):
    t = thread_id()
    x[t], y[t] = warp_argmax(x[t], t)
)");
  EXPECT_TRUE(shadowed->diags.diagnostics().empty()) << shadowed->diags.renderAll();
}

TEST(ArgReduce, PrintsThePairAndItsMembers) {
  const char* text = R"(
@grid(1)
@block(256)
kernel k(x: f32[N], d: f64[N], y: f32[N], idx: i64[N]):
    t = thread_id()
    m, j = warp_argmax(x[t], t)
    dm, dj = block_argmin(d[t], i64(t))
    y[t] = m
    idx[t] = dj + j
    x[t], idx[t] = block_argmax(x[t], t)
)";
  std::string s = generate(text, "k");
  EXPECT_THAT(
      s,
      HasSubstr("const __spn_arg_pair<float, int32_t> warp_argmax_ret = __spn_warp_argmax<float, int32_t>(x[t], t);"));
  EXPECT_THAT(s, HasSubstr("float m = warp_argmax_ret.value;"));
  EXPECT_THAT(s, HasSubstr("int32_t j = warp_argmax_ret.index;"));
  EXPECT_THAT(s, HasSubstr("const __spn_arg_pair<double, int64_t> block_argmin_ret = "
                           "__spn_block_argmin<double, int64_t>(d[t], int64_t(t), __spn_reduce_scratch);"));
  // Element targets store the members as plain stores would (i32 widens).
  EXPECT_THAT(s, HasSubstr("x[t] = block_argmax_ret.value;"));
  EXPECT_THAT(s, HasSubstr("idx[t] = block_argmax_ret.index;"));
  EXPECT_THAT(s, HasSubstr("__shared__ uint64_t __spn_reduce_scratch[2 * (__SPN_MAX_WARPS + 1)];"));
}

// A block of 100 threads ends in a partial warp: the warp forms that hand
// lane 0's pair to the others, as warp_max does.
TEST(ArgReduce, PartialWarpsTakeTheAnyForm) {
  const char* text = R"(
@grid(1)
@block(100)
kernel k(x: f32[N], y: i32[N]):
    t = thread_id()
    m, j = warp_argmin(x[t], t)
    y[t] = j
)";
  EXPECT_THAT(generate(text, "k"), HasSubstr("__spn_warp_argmin_any<float, int32_t>(x[t], t)"));
}

// The scratch doubles only in kernels that reach a block argmax/argmin, also
// through a closure or a module def.
TEST(ArgReduce, ScratchDoublesOnlyWhereReached) {
  const char* text = R"(
def top(v: f32, i: i32) -> i32:
    m, j = block_argmax(v, i)
    return j

@grid(1)
@block(128)
kernel plain(x: f32[N]):
    t = thread_id()
    x[t] = block_max(x[t])

@grid(1)
@block(128)
kernel through_def(x: f32[N], y: i32[N]):
    t = thread_id()
    y[t] = top(x[t], t)

@grid(1)
@block(128)
kernel through_closure(x: f32[N], y: i32[N]):
    def pick(v: f32) -> i32:
        m, j = block_argmin(v, thread_id())
        return j
    t = thread_id()
    y[t] = pick(x[t])
)";
  EXPECT_THAT(generate(text, "plain"), HasSubstr("__shared__ uint64_t __spn_reduce_scratch[__SPN_MAX_WARPS + 1];"));
  EXPECT_THAT(generate(text, "plain"), Not(HasSubstr("__spn_arg_pair")));
  EXPECT_THAT(generate(text, "through_def"),
              HasSubstr("__shared__ uint64_t __spn_reduce_scratch[2 * (__SPN_MAX_WARPS + 1)];"));
  EXPECT_THAT(generate(text, "through_closure"),
              HasSubstr("__shared__ uint64_t __spn_reduce_scratch[2 * (__SPN_MAX_WARPS + 1)];"));
}

}  // namespace
}  // namespace spindle::test
