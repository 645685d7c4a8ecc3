// Defs and closures that take tensors: what their outlined functions take,
// what their callers learn from them, and the errors of a call.
#include "sema_test_util.h"

namespace spindle::test {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> names(const std::vector<Symbol*>& symbols) {
  std::vector<std::string> out;
  for (const Symbol* s : symbols) out.push_back(s->name);
  return out;
}

// A def takes only the dims it reads: the ones its code names (directly or
// by dim(x, k)), the ones that place its tensors' rows, and the ones its
// callees need from the tensors it passes on.
TEST(TensorParams, DefsTakeTheDimsTheyRead) {
  auto a = analyze(R"(
def rows_of(x: f32[N, D]) -> i64:
    return dim(x, 0)
def first(x: f32[N, D]) -> f32:
    return x[0, 0]
def last_of(x: f32[N]) -> f32:
    return x[N - 1]
def pass_on(v: f32[A, B], w: f32[C]) -> f32:
    return rows_of(v) + last_of(w)
@grid(M)
@block(64)
kernel k(x: f32[M, K], y: f32[M]):
    y[0] = pass_on(x, y) + first(x)
)");
  ASSERT_FALSE(a->diags.hasErrors()) << a->diags.renderAll();
  SemaModule& sema = *a->result.sema;
  analyzeModuleDefs(sema);
  EXPECT_THAT(names(findScope(sema, "rows_of")->dimParams), ElementsAre("N"));
  EXPECT_THAT(names(findScope(sema, "first")->dimParams), ElementsAre("D"));
  EXPECT_THAT(names(findScope(sema, "last_of")->dimParams), ElementsAre("N"));
  // rows_of needs v's A and last_of w's C; pass_on never indexes v, so B
  // (which would place v's rows) is not taken.
  EXPECT_THAT(names(findScope(sema, "pass_on")->dimParams), ElementsAre("A", "C"));
}

// A closure that passes a captured tensor to a def captures the dims the
// def reads from it, and nothing else.
TEST(TensorParams, ClosurePassingACapturedTensorCapturesTheDimsItsCalleeReads) {
  auto a = analyze(R"(
def rows_of(x: f32[N, D]) -> i64:
    return dim(x, 0)
@grid(M)
@block(64)
kernel k(x: f32[M, K] strided, y: f32[M]):
    def count():
        y[0] = f32(rows_of_strided(x))
    def rows_of_strided(v: f32[P, Q] strided) -> i64:
        return P
    count()
)");
  ASSERT_FALSE(a->diags.hasErrors()) << a->diags.renderAll();
  SemaModule& sema = *a->result.sema;
  analyzeModuleDefs(sema);
  analyzeCaptures(sema, *sema.findKernel("k"), {});
  EXPECT_THAT(names(findScope(sema, "rows_of_strided")->dimParams), ElementsAre("P"));
  EXPECT_THAT(captureStrings(*findScope(sema, "count")),
              ElementsAre("x:pointer", "x.stride0:stride", "x.stride1:stride", "y:pointer", "M:dim(x)"));
}

// Stores and runs in a def are stores and runs of the argument: the
// kernel's pointer loses const, and its alignment becomes worth
// specializing on; through a chain of defs too.
TEST(TensorParams, StoresAndRunsReachTheKernelsTensors) {
  auto a = analyze(R"(
def fill8(x: f32[N], at: i64, v: f32):
    for k in static_range(8):
        x[at + k] = v
def via(z: f32[N], at: i64):
    fill8(z, at, 1.0)
def read(r: f32[N]) -> f32:
    return r[0]
@grid(M)
@block(64)
kernel k(out: f32[M], inp: f32[M]):
    via(out, 0)
    out[1] = read(inp)
)");
  ASSERT_FALSE(a->diags.hasErrors()) << a->diags.renderAll();
  FunctionScope* k = a->result.sema->findKernel("k");
  EXPECT_TRUE(k->params[0]->written);
  EXPECT_TRUE(k->params[0]->accessedInRuns);
  EXPECT_FALSE(k->params[1]->written);
  EXPECT_FALSE(k->params[1]->accessedInRuns);
}

// One helper, two tensors of different sizes: each call binds the def's
// dims from its own argument, a contiguous argument to a strided parameter
// passes its row-major strides, and the def's pointer has no __restrict__
// (the same tensor may arrive twice).
TEST(TensorParams, EachCallBindsDimsFromItsArgument) {
  std::string src = generate(R"(
def zero_row(x: f32[N, D] strided, r: i64):
    for j in range(D):
        x[r, j] = 0.0
@grid(M)
@block(64)
kernel k(a: f32[M, A], b: f32[M, 3 * B] strided, c: f32[B]):
    zero_row(a, 1)
    zero_row(b, 2)
)",
                             "k");
  EXPECT_NE(src.find("zero_row(float* x, int64_t x_stride0, int64_t x_stride1, int64_t r, int64_t D)"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("zero_row(a, A, 1, 1, A);"), std::string::npos) << src;
  EXPECT_NE(src.find("zero_row(b, b_stride0, b_stride1, 2, 3 * B);"), std::string::npos) << src;
}

// A def's dim named like one of the kernel's static dims is the def's own:
// bound from the argument, never the static value.
TEST(TensorParams, ADefsDimIsNotTheKernelsStaticDimOfTheSameName) {
  Specialization spec;
  spec.staticDims["N"] = 128;
  std::string src = generate(R"(
def size(x: f32[N]) -> i64:
    return N
@grid(N)
@block(64)
@static(N)
kernel k(x: f32[N], w: f32[M]):
    x[0] = f32(size(w))
)",
                             "k", spec);
  // N is the kernel's static dim, a file-scope constexpr; the def's own N
  // is a parameter that the call binds to w's M.
  EXPECT_NE(src.find("size(const float* x, int64_t N_1)"), std::string::npos) << src;
  EXPECT_NE(src.find("size(w, M)"), std::string::npos) << src;
}

TEST(TensorParams, CallErrorsNameTheArgumentAndTheParameter) {
  auto a = analyze(R"(
def dot(x: f32[N], y: f32[N]) -> f32:
    return x[0] * y[0]
@grid(M)
@block(64)
kernel k(a: f32[M], b: f32[K], h: f16[M], s: f32[M] strided):
    a[0] = dot(a, b) + dot(a, h) + dot(s, a) + dot(a[0], a)
)");
  EXPECT_THAT(diagIds(*a), ElementsAre("sema-def-dim-conflict", "sema-tensor-arg-mismatch", "sema-tensor-arg-strided",
                                       "sema-tensor-arg-not-tensor"));
  std::string text = a->diags.renderAll();
  EXPECT_NE(text.find("dim 'N' of 'dot' is bound twice at this call, to M and to K"), std::string::npos) << text;
  EXPECT_NE(text.find("'h' is f16[M], but parameter 'y' of 'dot' is f32[N]"), std::string::npos) << text;
}

}  // namespace
}  // namespace spindle::test
