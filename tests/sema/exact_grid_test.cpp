// The exact-grid fact (Specialization::exactGridDims, `--exact-grid D`) and
// the bounds tests it lets the printer leave out (printer/tile_bounds.h):
// what is proven, and, as much, what is not.
#include <functional>

#include "sema_test_util.h"

namespace spindle::test {
namespace {

// A kernel over tiles of 64 columns (axis 0) and 32 rows (axis 1) whose body
// ends with `body`; `grid` replaces the @grid line.
std::string tiledModule(const std::string& body, const std::string& grid = "@grid(cdiv(N, T), cdiv(M, 32))") {
  return "const T = 64\n" + grid + R"(
@block(16, 8)
kernel k(x: f32[M, N], y: f32[M, N], flag: i32):
    col0 = i64(block_id(0)) * T
    row0 = i64(block_id(1)) * 32
    tx = thread_id(0)
    ty = thread_id(1)
)" + body;
}

// The kernel function's text (after the prelude and the host launcher).
std::string kernelBody(const std::string& source) {
  size_t at = source.find("__launch_bounds__");
  return at == std::string::npos ? "" : source.substr(at);
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

struct Printed {
  std::string body;
  int ifs = 0;     // `if (` left in the kernel
  int proven = 0;  // `always:` comments
  bool elses = false;
};

Printed print(const std::string& body, std::set<std::string> exact = {"M", "N"}, bool index32 = false,
              const std::string& grid = "@grid(cdiv(N, T), cdiv(M, 32))") {
  Specialization spec;
  spec.exactGridDims = std::move(exact);
  spec.index32 = index32;
  spec.lineDirectives = false;
  Printed p;
  p.body = kernelBody(generate(tiledModule(body, grid), "k", spec));
  p.ifs = count(p.body, "if (");
  p.proven = count(p.body, " always: ");
  p.elses = p.body.find("else") != std::string::npos;
  return p;
}

// Every line of `text` four spaces further in.
std::string indent(const std::string& text) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    out += "    " + text.substr(at, end - at) + "\n";
    at = end + 1;
  }
  return out;
}

// `if COND:` storing one value, else another.
std::string ifElse(const std::string& cond) {
  return "    if " + cond + ":\n        y[0, 0] = 1.0\n    else:\n        y[0, 1] = 2.0\n";
}

TEST(ExactGrid, KernelInfoListsTheDimsTheGridCoversInTiles) {
  DiagnosticEngine diags;
  auto m = CompiledModule::fromString("test.spn", tiledModule("    y[0, 0] = 1.0\n"), diags);
  ASSERT_TRUE(m) << diags.renderAll();
  const auto& dims = m->kernels()[0].exactGridDims;
  ASSERT_EQ(dims.size(), 2u);
  EXPECT_EQ(dims[0].dim, "N");
  EXPECT_EQ(dims[0].tile, 64);
  EXPECT_EQ(dims[1].dim, "M");
  EXPECT_EQ(dims[1].tile, 32);
  // Not cdiv(D, T) with T a constant: no candidate.
  auto other = CompiledModule::fromString(
      "test.spn", tiledModule("    y[0, 0] = 1.0\n", "@grid(cdiv(N, T) + 1, cdiv(M, flag))"), diags);
  ASSERT_TRUE(other) << diags.renderAll();
  EXPECT_TRUE(other->kernels()[0].exactGridDims.empty());
  // Two axes over one dim: a multiple of both tiles.
  auto both = CompiledModule::fromString("test.spn",
                                         tiledModule("    y[0, 0] = 1.0\n", "@grid(cdiv(N, T), cdiv(N, 48))"), diags);
  ASSERT_TRUE(both) << diags.renderAll();
  ASSERT_EQ(both->kernels()[0].exactGridDims.size(), 1u);
  EXPECT_EQ(both->kernels()[0].exactGridDims[0].tile, 192);
}

TEST(ExactGrid, TheFactIsAssumedStatedAndKeyed) {
  DiagnosticEngine diags;
  auto m = CompiledModule::fromString("test.spn", tiledModule(ifElse("col0 + tx < N")), diags);
  ASSERT_TRUE(m) << diags.renderAll();
  Specialization exact;
  exact.exactGridDims = {"N"};
  auto fast = m->generate("k", exact);
  auto general = m->generate("k", {});
  EXPECT_NE(fast.source.find("__builtin_assume(N % 64 == 0);  // a whole number of grid tiles at launch"),
            std::string::npos)
      << fast.source;
  EXPECT_EQ(general.source.find("__builtin_assume("), std::string::npos);
  EXPECT_NE(fast.source.find("N whole grid tiles"), std::string::npos);  // the header
  EXPECT_NE(fast.source.find("--exact-grid N\n"), std::string::npos);    // the "Regenerate with" line
  EXPECT_NE(fast.key, general.key);
  EXPECT_NE(fast.key, m->generate("k",
                                  [] {
                                    Specialization s;
                                    s.exactGridDims = {"M"};
                                    return s;
                                  }())
                          .key);

  auto refuses = [&](Specialization spec, const std::string& needle) {
    try {
      m->generate("k", spec);
      ADD_FAILURE() << "no error; expected: " << needle;
    } catch (const GeneratorError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  Specialization bad;
  bad.exactGridDims = {"K"};
  refuses(bad,
          "no @grid axis is cdiv(K, T) with T a constant, so --exact-grid K states nothing (such dims: N (tiles "
          "of 64), M (tiles of 32))");
  bad.exactGridDims = {"N"};
  bad.staticDims = {{"N", 256}};
  refuses(bad, "dim N is static");
}

TEST(ExactGrid, FlagsReadBack) {
  Specialization spec;
  spec.exactGridDims = {"N", "M"};
  spec.divisible = {{"N", 16}};
  std::vector<std::string> flags = specializationFlags(spec);
  EXPECT_EQ(::testing::PrintToString(flags), ::testing::PrintToString(std::vector<std::string>{
                                                 "--divisible", "N", "--exact-grid", "M", "--exact-grid", "N"}));
  Specialization back;
  for (size_t i = 0; i < flags.size(); ++i) ASSERT_TRUE(parseSpecializationFlag(flags, i, back));
  EXPECT_EQ(back, spec);
  size_t i = 0;
  std::vector<std::string> missing = {"--exact-grid"};
  EXPECT_THROW(parseSpecializationFlag(missing, i, back), std::invalid_argument);
}

// R up to T - 1 after the tile's start: below D. R up to T: not.
TEST(TileBounds, TheRestUpToTheTileFolds) {
  // tx * 4 + 3 <= 63 = T - 1.
  auto p = print(ifElse("col0 + tx * 4 + 3 < N"));
  EXPECT_EQ(p.ifs, 0) << p.body;
  EXPECT_EQ(p.proven, 1) << p.body;
  EXPECT_FALSE(p.elses) << p.body;
  EXPECT_NE(p.body.find("// col0 + tx * 4 + 3 < N always: col0 <= N - 64 (block_id(0) < cdiv(N, 64), N % 64 == 0) "
                        "and tx * 4 + 3 <= 63"),
            std::string::npos)
      << p.body;
  // tx * 4 + 4 <= 64: not below T.
  p = print(ifElse("col0 + tx * 4 + 4 < N"));
  EXPECT_EQ(p.ifs, 1) << p.body;
  EXPECT_EQ(p.proven, 0) << p.body;
  EXPECT_TRUE(p.elses);
}

TEST(TileBounds, RunsThatEndAtTheTileEdgeFold) {
  EXPECT_EQ(print(ifElse("col0 + tx * 4 + 4 <= N")).ifs, 0);  // 60 + 4 <= 64
  EXPECT_EQ(print(ifElse("col0 + tx * 4 + 5 <= N")).ifs, 1);  // 65
  EXPECT_EQ(print(ifElse("col0 + tx * 4 <= N - 4")).ifs, 0);
  EXPECT_EQ(print(ifElse("col0 + tx * 4 <= N - 5")).ifs, 1);
  EXPECT_EQ(print(ifElse("N > col0 + tx * 4 + 3")).ifs, 0);  // written the other way round
  EXPECT_EQ(print(ifElse("N >= col0 + tx * 4 + 4")).ifs, 0);
  // Through a local, the product either way round, a widening cast.
  EXPECT_EQ(print("    r = T * i64(block_id(0)) + tx\n" + ifElse("r < N")).ifs, 0);
  EXPECT_EQ(print("    r = row0 + ty * 4 + 3\n" + ifElse("r < M")).ifs, 0);  // 28 + 3 <= 31
  EXPECT_EQ(print("    r = row0 + ty * 4 + 4\n" + ifElse("r < M")).ifs, 1);  // 32
  // thread_id % and // keep their ranges.
  EXPECT_EQ(print(ifElse("col0 + (tx + 16 * ty) % 64 < N")).ifs, 0);
  EXPECT_EQ(print(ifElse("col0 + (tx + 16 * ty) // 2 < N")).ifs, 0);  // 127 // 2 = 63
  EXPECT_EQ(print(ifElse("col0 + (tx + 16 * ty) // 1 < N")).ifs, 1);
}

TEST(TileBounds, NothingIsProvenWithoutTheFactOrOnAnotherTile) {
  EXPECT_EQ(print(ifElse("col0 + tx < N"), {}).ifs, 1);                               // N % 64 unknown
  EXPECT_EQ(print(ifElse("col0 + tx < N"), {"M"}).ifs, 1);                            // only M's fact
  EXPECT_EQ(print(ifElse("col0 + tx < M")).ifs, 1);                                   // another dim
  EXPECT_EQ(print(ifElse("row0 + tx < N")).ifs, 1);                                   // axis 1's tile against N
  EXPECT_EQ(print("    c = i64(block_id(0)) * 32\n" + ifElse("c + tx < N")).ifs, 1);  // not T
  EXPECT_EQ(print("    c = i64(block_id(0)) * 128\n" + ifElse("c + tx < N")).ifs, 1);
  // An axis that is not cdiv(D, T): block_id(1) < M + 1 blocks.
  EXPECT_EQ(print(ifElse("row0 + ty < M"), {"N"}, false, "@grid(cdiv(N, T), M + 1)").ifs, 1);
  // A rest with no known range.
  EXPECT_EQ(print(ifElse("col0 + flag < N")).ifs, 1);
}

// A 32-bit unsigned product may wrap without 32-bit indices (a block index
// up to 2^31 - 1, times 64): proven only where the ranges say it cannot.
TEST(TileBounds, NarrowArithmeticMustNotWrap) {
  const std::string body = "    c = i64(u32(block_id(0)) * 64 + u32(tx))\n" + ifElse("c < N");
  EXPECT_EQ(print(body, {"M", "N"}, /*index32=*/false).ifs, 1);
  EXPECT_EQ(print(body, {"M", "N"}, /*index32=*/true).ifs, 0);
}

TEST(TileBounds, ProvenConjunctsAreDroppedAndTheOthersKept) {
  auto p = print(ifElse("col0 + tx < N and x[0, 0] > 0.0 and row0 + ty < M"));
  EXPECT_EQ(p.ifs, 1) << p.body;
  EXPECT_EQ(p.proven, 2) << p.body;
  EXPECT_NE(p.body.find("// col0 + tx < N always: col0 <= N - 64 (block_id(0) < cdiv(N, 64), N % 64 == 0) and tx <= "
                        "15\n"),
            std::string::npos)
      << p.body;
  EXPECT_TRUE(p.elses);
  EXPECT_NE(p.body.find("if (x[0 * N + 0] > 0.0f) {"), std::string::npos) << p.body;
  // A disjunction with a proven disjunct is true when those before it have
  // no effect; `flag > 0` has none.
  EXPECT_EQ(print(ifElse("flag > 0 or col0 + tx < N")).ifs, 0);
  EXPECT_EQ(print(ifElse("atomic_add(y[0, 0], 1.0) > 0.0 or col0 + tx < N")).ifs, 1);
}

TEST(TileBounds, AnElifProvenTrueIsTheLastBranch) {
  auto p = print(
      "    if flag > 0:\n        y[0, 0] = 1.0\n    elif col0 + tx < N:\n        y[0, 1] = 2.0\n    else:\n"
      "        y[0, 2] = 3.0\n");
  EXPECT_EQ(p.ifs, 1) << p.body;
  EXPECT_EQ(p.proven, 1) << p.body;
  EXPECT_EQ(p.body.find("y[2]"), std::string::npos) << p.body;  // the else never runs
}

// A loop variable running to D in steps of multiples of g, D a multiple of
// g: j + R < D for R <= g - 1 (here K static, slabs of 8).
TEST(TileBounds, ALoopVariableIsABaseToo) {
  const std::string module = R"(
@grid(1)
@block(64)
@static(K)
kernel slabs(x: f32[K], y: f32[K]):
    tid = thread_id()
    for k0 in range(0, K, 8):
        if k0 + tid % 8 < K:
            y[k0] = x[k0 + tid % 8]
        if k0 + tid % 8 + 2 <= K:
            y[k0] = 1.0
        if k0 + tid % 16 < K:
            y[k0] = 2.0
)";
  Specialization spec;
  spec.staticDims = {{"K", 4096}};
  spec.lineDirectives = false;
  std::string body = kernelBody(generate(module, "slabs", spec));
  EXPECT_EQ(count(body, " always: "), 1) << body;  // the first; tid % 8 + 2 <= 9, tid % 16 <= 15
  EXPECT_NE(body.find("k0 + tid % 8 < K always: k0 <= K - 8 (k0 < K, both multiples of 8) and tid % 8 <= 7"),
            std::string::npos)
      << body;
  spec.staticDims = {{"K", 4100}};  // a multiple of 4 only
  EXPECT_EQ(count(kernelBody(generate(module, "slabs", spec)), " always: "), 0);
}

// A local an enclosing `if` tested: `L + g <= D` there makes L a base of
// g, with no fact about the launch; only in that branch, and only while
// the branch leaves L alone.
TEST(TileBounds, AnEnclosingIfIsABaseToo) {
  const std::set<std::string> none;
  // tx <= 15: the then-branch of a 64-column test proves col0 + tx < N.
  auto p = print("    if col0 + T <= N:\n" + indent(ifElse("col0 + tx < N")), none);
  EXPECT_EQ(p.ifs, 1) << p.body;  // the outer test stays
  EXPECT_EQ(p.proven, 1) << p.body;
  EXPECT_NE(p.body.find("// col0 + tx < N always: col0 <= N - 64 (tested: col0 + T <= N) and tx <= 15"),
            std::string::npos)
      << p.body;
  // The other spellings of the test, a conjunct among others, an elif.
  EXPECT_EQ(print("    if col0 <= N - 64:\n" + indent(ifElse("col0 + tx < N")), none).ifs, 1);
  EXPECT_EQ(print("    if col0 + 63 < N:\n" + indent(ifElse("col0 + tx < N")), none).ifs, 1);
  EXPECT_EQ(print("    if flag > 0 and col0 + 16 <= N:\n" + indent(ifElse("col0 + tx < N")), none).ifs, 1);
  EXPECT_EQ(
      print("    if flag > 0:\n        y[0, 3] = 0.0\n    elif col0 + 16 <= N:\n" + indent(ifElse("col0 + tx < N")),
            none)
          .ifs,
      2);
  // Not enough room: tx reaches 15, the test gives 8.
  EXPECT_EQ(print("    if col0 + 8 <= N:\n" + indent(ifElse("col0 + tx < N")), none).ifs, 2);
  // The else branch, a disjunction, another local, another dim: nothing.
  EXPECT_EQ(
      print("    if col0 + T <= N:\n        y[0, 3] = 0.0\n    else:\n" + indent(ifElse("col0 + tx < N")), none).ifs,
      2);
  EXPECT_EQ(print("    if flag > 0 or col0 + T <= N:\n" + indent(ifElse("col0 + tx < N")), none).ifs, 2);
  EXPECT_EQ(print("    if row0 + T <= N:\n" + indent(ifElse("col0 + tx < N")), none).ifs, 2);
  EXPECT_EQ(print("    if col0 + T <= M:\n" + indent(ifElse("col0 + tx < N")), none).ifs, 2);
  // A branch that assigns the local (here through a closure): its value
  // at the inner test is not the one the outer test saw.
  p = print(
      "    def bump():\n        nonlocal col0\n        col0 = col0 + 1000\n    if col0 + T <= N:\n        bump()\n" +
          indent(ifElse("col0 + tx < N")),
      none);
  EXPECT_EQ(p.ifs, 2) << p.body;
  EXPECT_EQ(p.proven, 0) << p.body;
}

// mma_store's tile, proven inside C by the test around it: no bounds test
// in the then-branch, the tested store in the else.
TEST(TileBounds, AStoreInsideATestedTileHasNoBoundsTest) {
  const std::string module = R"(
@grid(4)
@block(64)
kernel tiles(C: f32[M, N]):
    row0 = i64(block_id()) * 16
    col0 = i64(block_id()) * 32
    acc = mma_zero(f32, [1, 1])
    if row0 + 16 <= M and col0 + 16 <= N:
        mma_store(C, row0, col0, acc[0, 0])
    else:
        mma_store(C, row0, col0, acc[0, 0])
)";
  Specialization spec;
  spec.lineDirectives = false;
  const std::string body = kernelBody(generate(module, "tiles", spec));
  EXPECT_EQ(count(body, "__spn_mma_store_f32<true>("), 1) << body;
  EXPECT_EQ(count(body, "__spn_mma_store_f32("), 1) << body;
  EXPECT_NE(
      body.find(
          "// the tile is inside C always: row0 <= M - 16 (tested: row0 + 16 <= M); col0 <= N - 16 (tested: col0 + "
          "16 <= N)\n"),
      std::string::npos)
      << body;
}

// A warp's rows of the tile, from warp_id(): its range (below the block's
// warps) bounds the rest of the sum. Without it gemm_ws's whole-tile
// stores kept their bounds tests (session 25's warp_id(), found in
// session 26).
TEST(TileBounds, AWarpsRowsFromWarpIdAreBounded) {
  const std::string module = R"(
@grid(4)
@block(4 * warp_size())
kernel tiles(C: f32[M, N]):
    row0 = i64(block_id()) * 64
    q = warp_id() % 4
    acc = mma_zero(f32, [1, 1])
    if row0 + 64 <= M and row0 + 16 <= N:
        mma_store(C, row0 + q * 16, row0, acc[0, 0])
)";
  Specialization spec;
  spec.lineDirectives = false;
  const std::string body = kernelBody(generate(module, "tiles", spec));
  EXPECT_NE(body.find("// the tile is inside C always: row0 <= M - 64 (tested: row0 + 64 <= M) and q * 16 <= 48;"),
            std::string::npos)
      << body;
  EXPECT_EQ(count(body, "__spn_mma_store_f32<true>("), 1) << body;
}

}  // namespace
}  // namespace spindle::test
