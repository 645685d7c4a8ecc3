// Scope outlining and nonlocal scratch binding: what each closure captures,
// and how the outlined function receives it.
#include "sema_test_util.h"

namespace spindle::test {
namespace {

using ::testing::ElementsAre;

const char* kLayernormLike = R"(
const BLOCK = 128
@grid(M)
@block(BLOCK)
kernel k(x: f32[M, N], y: f32[M, N], scale: f32):
    row = block_id()
    acc = 0.0
    buf = shared(f32, [BLOCK])
    def stats():
        nonlocal acc
        for j in range(thread_id(), N, BLOCK):
            acc += x[row, j]
        buf[thread_id()] = acc
    def write():
        def inner():
            for j in range(thread_id(), N, BLOCK):
                y[row, j] = acc * scale
        inner()
    stats()
    write()
)";

TEST(Captures, TensorsScalarsNonlocalsAndImpliedDims) {
  auto a = analyze(kLayernormLike);
  ASSERT_FALSE(a->diags.hasErrors()) << a->diags.renderAll();
  SemaModule& sema = *a->result.sema;
  FunctionScope* k = sema.findKernel("k");
  analyzeCaptures(sema, *k, {});
  // N is named by stats' loop and also needed to address x[row, j].
  EXPECT_THAT(captureStrings(*findScope(sema, "stats")),
              ElementsAre("x:pointer", "buf:pointer", "row:value", "acc:reference", "N:dim"));
  // inner writes y and reads acc and scale; write() names none of them but
  // must thread them all through.
  EXPECT_THAT(captureStrings(*findScope(sema, "inner")),
              ElementsAre("y:pointer", "scale:value", "row:value", "acc:value", "N:dim"));
  EXPECT_THAT(captureStrings(*findScope(sema, "write")),
              ElementsAre("y:pointer", "scale:value", "row:value", "acc:value", "N:dim"));
}

TEST(Captures, StaticDimsAreNeverCaptured) {
  auto a = analyze(kLayernormLike);
  SemaModule& sema = *a->result.sema;
  analyzeCaptures(sema, *sema.findKernel("k"), {"N"});
  EXPECT_THAT(captureStrings(*findScope(sema, "stats")),
              ElementsAre("x:pointer", "buf:pointer", "row:value", "acc:reference"));
}

TEST(Captures, DimImpliedByATensorTheClosureNeverSizes) {
  auto a = analyze(R"(
@grid(M)
@block(64)
kernel k(x: f32[M, N, P], out: f32[M]):
    def first() -> f32:
        return x[0, 0, 0]
    out[block_id()] = first()
)");
  ASSERT_FALSE(a->diags.hasErrors()) << a->diags.renderAll();
  SemaModule& sema = *a->result.sema;
  analyzeCaptures(sema, *sema.findKernel("k"), {});
  // Neither N nor P is named in first(), but x[i, j, k] needs both; M is
  // never needed to address a row-major tensor.
  EXPECT_THAT(captureStrings(*findScope(sema, "first")), ElementsAre("x:pointer", "N:dim(x)", "P:dim(x)"));
}

// dim(x, 0) with x: T[N + 1] reads N: a closure that asks for it captures N,
// also in an unchecked build, where no bounds check names it (generation
// failed an internal check; found by the cpu fuzzer, seed 300351).
TEST(Captures, DimOfADimExpressionCapturesItsDims) {
  const std::string module = R"(
@grid(1)
@block(32)
kernel k(y: i32[N], x: i64[N + 1], out: i64[32]):
    def last() -> i64:
        return dim(x, 0) - 1
    out[thread_id()] = last()
)";
  auto a = analyze(module);
  ASSERT_FALSE(a->diags.hasErrors()) << a->diags.renderAll();
  SemaModule& sema = *a->result.sema;
  analyzeCaptures(sema, *sema.findKernel("k"), {});
  EXPECT_THAT(captureStrings(*findScope(sema, "last")), ElementsAre("N:dim"));
  for (bool checked : {false, true}) {
    Specialization spec;
    spec.checked = checked;
    const std::string hip = generate(module, "k", spec);
    EXPECT_NE(hip.find("k_last(int64_t N)"), std::string::npos) << hip;
  }
}

TEST(Captures, StridedTensorsPassStridesNotDims) {
  auto a = analyze(R"(
@grid(M)
@block(64)
kernel k(x: f32[M, N] strided, out: f32[M]):
    def get(i: i64) -> f32:
        return x[i, 0]
    out[block_id()] = get(i64(block_id()))
)");
  ASSERT_FALSE(a->diags.hasErrors()) << a->diags.renderAll();
  SemaModule& sema = *a->result.sema;
  analyzeCaptures(sema, *sema.findKernel("k"), {});
  EXPECT_THAT(captureStrings(*findScope(sema, "get")),
              ElementsAre("x:pointer", "x.stride0:stride", "x.stride1:stride"));
}

TEST(Captures, ReferenceWinsWhenACalleeRebinds) {
  auto a = analyze(R"(
@grid(1)
@block(32)
kernel k(out: f32[1]):
    total = 0.0
    def add(v: f32):
        nonlocal total
        total += v
    def twice(v: f32):
        add(v)
        add(total)
    twice(1.0)
    out[0] = total
)");
  ASSERT_FALSE(a->diags.hasErrors()) << a->diags.renderAll();
  SemaModule& sema = *a->result.sema;
  analyzeCaptures(sema, *sema.findKernel("k"), {});
  // twice() reads total itself, but add() rebinds it: by reference.
  EXPECT_THAT(captureStrings(*findScope(sema, "twice")), ElementsAre("total:reference"));
}

// Nonlocal scratch binding, end to end in the generated HIP: the closure
// binds the kernel's accumulator and buffer, never a fresh local.
TEST(NonlocalBinding, OutlinedClosureTakesOuterStorageByReferenceAndPointer) {
  std::string hip = generate(kLayernormLike, "k");
  EXPECT_NE(hip.find("__device__ __forceinline__ void k_stats(const float* __restrict__ x, float* buf, int32_t row, "
                     "float& acc, int64_t N)"),
            std::string::npos)
      << hip;
  EXPECT_NE(hip.find("k_stats(x, buf, row, acc, N);"), std::string::npos) << hip;
  // No declaration of acc inside the outlined function: it is the kernel's.
  size_t body = hip.find("void k_stats(");
  size_t end = hip.find("\n}\n", body);
  std::string stats = hip.substr(body, end - body);
  EXPECT_EQ(stats.find("float acc"), std::string::npos) << stats;
  EXPECT_NE(stats.find("acc += x[row * N + j];"), std::string::npos) << stats;
}

TEST(NonlocalBinding, ReadingAClosureLocalBeforeAssignmentSuggestsNonlocal) {
  auto a = analyze(R"(
@grid(1)
@block(32)
kernel k(out: f32[4]):
    scratch = 0.0
    def step():
        scratch = scratch + 1.0
    step()
    out[0] = scratch
)");
  ASSERT_THAT(diagIds(*a), ElementsAre("sema-closure-local-before-assign"));
  std::string text = a->diags.renderAll();
  EXPECT_NE(text.find("test.spn:7:19: error:"), std::string::npos) << text;
  EXPECT_NE(text.find("did you mean 'nonlocal'?"), std::string::npos) << text;
  EXPECT_NE(text.find("add 'nonlocal scratch'"), std::string::npos) << text;
}

}  // namespace
}  // namespace spindle::test
