// docs/language.md 5.11: tuple returns and unpacking assignments. Checked on
// the types sema gives, the errors it reports, and the C++ the printer
// writes for them (a struct per tuple-returning function, temporaries
// where Python's evaluation order needs them).
#include "sema_test_util.h"

namespace spindle::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string kernelWith(const std::string& params, const std::string& body, const std::string& before = "") {
  return before + "@grid(1)\n@block(32)\nkernel k(" + params + "):\n" + body;
}

// The C++ line the printer writes that contains `needle`, from `from` on.
std::string lineWith(const std::string& hip, const std::string& needle,
                     const std::string& from = "__global__ __launch_bounds__") {
  size_t at = hip.find(needle, hip.find(from));
  if (at == std::string::npos) return "<not found: " + needle + ">";
  size_t begin = hip.rfind('\n', at) + 1;
  size_t end = hip.find('\n', at);
  std::string line = hip.substr(begin, end - begin);
  return line.substr(line.find_first_not_of(' '));
}

// The kernel's body as printed, one statement a line, without #line
// directives: what a statement sequence is compared against.
std::vector<std::string> kernelLines(const std::string& hip) {
  std::vector<std::string> lines;
  size_t at = hip.find('\n', hip.find("extern \"C\" __global__ __launch_bounds__"));
  while (at != std::string::npos && at + 1 < hip.size()) {
    size_t end = hip.find('\n', at + 1);
    std::string line = hip.substr(at + 1, end - at - 1);
    at = end;
    size_t text = line.find_first_not_of(' ');
    if (text == std::string::npos || line.compare(text, 5, "#line") == 0) continue;
    if (line.compare(text, 4, "int6") == 0 && line.find(") {") != std::string::npos) continue;  // signature
    lines.push_back(line.substr(text));
  }
  return lines;
}

const char* const kStats =
    "def stats(v: f32, w: f32) -> tuple[f32, f32]:\n"
    "    m = (v + w) * 0.5\n"
    "    s = abs(v - w)\n"
    "    return m, s\n\n";

TEST(Tuples, ATupleReturningDefReturnsAStructNamedAfterIt) {
  std::string hip = generate(kernelWith("x: f32[4]",
                                        "    m, s = stats(x[0], x[1])\n"
                                        "    x[2] = m + s\n",
                                        kStats),
                             "k");
  EXPECT_THAT(hip, HasSubstr("struct stats_result {\n  float m;\n  float s;\n};\n"));
  EXPECT_THAT(hip, HasSubstr("__device__ __forceinline__ stats_result stats(float v, float w) {"));
  EXPECT_EQ(lineWith(hip, "return", "stats_result stats("), "return stats_result{m, s};");
  EXPECT_THAT(kernelLines(hip), ElementsAre("const stats_result stats_ret = stats(x[0], x[1]);",
                                            "float m = stats_ret.m;", "float s = stats_ret.s;", "x[2] = m + s;", "}"));
}

// Each element converts as a scalar return with that annotation would;
// inside the braces, a narrowing conversion (int to float included) is
// written out.
TEST(Tuples, ReturnedElementsConvertToTheirAnnotatedTypes) {
  std::string hip = generate(kernelWith("x: f64[4], h: f16[4]",
                                        "    a, b, c, d = conv(1, x[0])\n"
                                        "    h[0] = c\n"
                                        "    x[1] = a + f64(b) + d\n",
                                        "def conv(i: i32, d: f64) -> tuple[f32, i64, f16, f64]:\n"
                                        "    return i, d, d, i\n\n"),
                             "k");
  EXPECT_EQ(lineWith(hip, "return", "conv_result conv("),
            "return conv_result{float(i), int64_t(d), __half(d), double(i)};");
  // An f16 element is f32 in a new local, and stored as is into an f16 element.
  EXPECT_EQ(lineWith(hip, "float c ="), "float c = float(conv_ret._2);");
  // A type that names no name (`return i, d, d, i` lists `d` twice): _0, _1, ...
  EXPECT_THAT(hip, HasSubstr("struct conv_result {\n  float _0;\n  int64_t _1;\n  __half _2;\n  double _3;\n};"));
}

TEST(Tuples, UnannotatedClosureTypesEachElementFromItsFirstReturn) {
  auto a = analyze(kernelWith("x: f32[4], h: f16[4], n: i64[4]",
                              "    def pick(k: i32):\n"
                              "        if k > 0:\n"
                              "            return 1, x[k], h[k], n[k], 2.5\n"
                              "        return 2, x[0], x[0], n[0], 0.5\n"
                              "    a, b, c, d, e = pick(1)\n"
                              "    x[0] = b + c + e\n"));
  ASSERT_FALSE(a->diags.hasErrors()) << a->diags.renderAll();
  // A literal keeps its own type (i32, f32), an f16 value computes in f32.
  EXPECT_THAT(findScope(*a->result.sema, "pick")->returnTuple,
              ElementsAre(ScalarType::I32, ScalarType::F32, ScalarType::F32, ScalarType::I64, ScalarType::F32));
  EXPECT_EQ(findScope(*a->result.sema, "pick")->returnType, ScalarType::Invalid);
}

TEST(Tuples, AnOutlinedClosureKeepsExactlyItsCapturesAsParameters) {
  auto text = kernelWith("x: f32[N], out: f32[2]",
                         "    t = thread_id()\n"
                         "    def partial():\n"
                         "        s = 0.0\n"
                         "        for j in range(t, N, 32):\n"
                         "            s += x[j]\n"
                         "        return s, s * s\n"
                         "    out[0], out[1] = partial()\n");
  auto a = analyze(text);
  ASSERT_FALSE(a->diags.hasErrors()) << a->diags.renderAll();
  FunctionScope* k = a->result.sema->findKernel("k");
  analyzeCaptures(*a->result.sema, *k, {});
  EXPECT_THAT(captureStrings(*findScope(*a->result.sema, "partial")), ElementsAre("x:pointer", "t:value", "N:dim"));
  std::string hip = generate(text, "k");
  EXPECT_THAT(hip, HasSubstr("struct k_partial_result {\n  float _0;\n  float _1;\n};"));
  EXPECT_THAT(hip, HasSubstr("k_partial_result k_partial(const float* __restrict__ x, int32_t t, int64_t N) {"));
  EXPECT_THAT(kernelLines(hip),
              ElementsAre("int32_t t = int(threadIdx.x);", "const k_partial_result partial_ret = k_partial(x, t, N);",
                          "out[0] = partial_ret._0;", "out[1] = partial_ret._1;", "}"));
}

// The right side is evaluated before any store: a value an earlier store
// of the same statement changes goes into a temporary; the others are
// stored as they are.
TEST(Tuples, ASwapTakesOneTemporary) {
  std::string hip = generate(kernelWith("x: f32[4], h: f16[4]",
                                        "    a = x[0]\n"
                                        "    b = x[1]\n"
                                        "    a, b = b, a\n"
                                        "    c, d = a, b\n"
                                        "    i = thread_id() % 4\n"
                                        "    j = 3 - i\n"
                                        "    x[i], x[j] = x[j], x[i]\n"
                                        "    h[i], h[j] = h[j], h[i]\n"
                                        "    x[0] = c + d\n"),
                             "k");
  EXPECT_THAT(kernelLines(hip),
              ElementsAre("float a = x[0];", "float b = x[1];", "const float b_new = a;", "a = b;", "b = b_new;",
                          "float c = a;", "float d = b;", "int32_t i = int(threadIdx.x) % 4;", "int32_t j = 3 - i;",
                          "const float x_new = x[i];", "x[i] = x[j];", "x[j] = x_new;", "const __half h_new = h[i];",
                          "h[i] = h[j];", "h[j] = h_new;", "x[0] = c + d;", "}"));
}

// A call of a def or closure among the values may change what the others
// read: every value goes into a temporary, in order, and so does every
// index that is not a literal.
TEST(Tuples, CallsAmongTheValuesEvaluateEverythingFirst) {
  std::string hip = generate(kernelWith("x: f32[4], c: i32[1]",
                                        "    i = thread_id() % 4\n"
                                        "    def bump() -> i32:\n"
                                        "        return atomic_add(c[0], 1) % 4\n"
                                        "    x[i], x[bump()] = x[0], 2.0\n"),
                             "k");
  EXPECT_THAT(kernelLines(hip), ElementsAre("int32_t i = int(threadIdx.x) % 4;", "const float x_new = x[0];",
                                            "const float x_new_1 = 2.0f;", "const int32_t x_index = i;",
                                            "const int32_t x_index_1 = k_bump(c);", "x[x_index] = x_new;",
                                            "x[x_index_1] = x_new_1;", "}"));
}

TEST(Tuples, UnpackingAssignsExistingLocalsAndDeclaresNewOnes) {
  std::string hip = generate(kernelWith("x: f32[4]",
                                        "    m = 0.0\n"
                                        "    if x[0] > 0.0:\n"
                                        "        m, s = stats(x[0], x[1])\n"
                                        "    else:\n"
                                        "        m, s = x[2], x[3]\n"
                                        "    x[0] = m + s\n",
                                        kStats),
                             "k");
  // s is used after the if: declared before it, then assigned in each branch.
  EXPECT_THAT(kernelLines(hip),
              ElementsAre("float m = 0.0f;", "float s;", "if (x[0] > 0.0f) {",
                          "const stats_result stats_ret = stats(x[0], x[1]);", "m = stats_ret.m;", "s = stats_ret.s;",
                          "} else {", "m = x[2];", "s = x[3];", "}", "x[0] = m + s;", "}"));
}

// A loop whose body unpacks into a local its stop reads evaluates the stop
// once, before the loop, as for a plain assignment (docs/language.md 10.5).
TEST(Tuples, AnUnpackingInALoopBodyHoistsTheStopItChanges) {
  std::string hip = generate(kernelWith("x: f32[4]",
                                        "    n = 4\n"
                                        "    m = 2\n"
                                        "    for j in range(n):\n"
                                        "        n, m = m, n\n"
                                        "    x[0] = f32(n + m)\n"),
                             "k");
  EXPECT_EQ(lineWith(hip, "j_stop"), "const int32_t j_stop = n;");
}

// A tuple's values are dropped by a call statement, as any value is.
TEST(Tuples, ACallStatementDropsTheTuple) {
  std::string hip = generate(kernelWith("x: f32[4]", "    stats(x[0], x[1])\n", kStats), "k");
  EXPECT_THAT(kernelLines(hip), ElementsAre("stats(x[0], x[1]);", "}"));
}

TEST(Tuples, ElementTypesFollowTheTypeBinding) {
  const std::string text =
      "@grid(1)\n@block(32)\nkernel k[T](x: T[4]):\n"
      "    def pair() -> tuple[T, i32]:\n"
      "        return x[0], 1\n"
      "    a, n = pair()\n"
      "    x[n] = T(a)\n";
  Specialization bf16;
  bf16.typeArgs["T"] = ScalarType::BF16;
  EXPECT_THAT(generate(text, "k", bf16), HasSubstr("struct k_pair_result {\n  __spn_bf16 _0;\n  int32_t _1;\n};"));
  Specialization f64;
  f64.typeArgs["T"] = ScalarType::F64;
  std::string hip = generate(text, "k", f64);
  EXPECT_THAT(hip, HasSubstr("struct k_pair_result {\n  double _0;\n  int32_t _1;\n};"));
  EXPECT_EQ(lineWith(hip, "double a"), "double a = pair_ret._0;");
}

// Members named after the returned names keep clear of C++ keywords.
TEST(Tuples, MemberNamesAvoidCppKeywords) {
  std::string hip = generate(kernelWith("x: f32[4]",
                                        "    a, b = f(x[0])\n"
                                        "    x[0] = a + b\n",
                                        "def f(v: f32) -> tuple[f32, f32]:\n"
                                        "    new = v\n"
                                        "    old = v * 2.0\n"
                                        "    return new, old\n\n"),
                             "k");
  EXPECT_THAT(hip, HasSubstr("struct f_result {\n  float new_1;\n  float old;\n};"));
  EXPECT_EQ(lineWith(hip, "float a"), "float a = f_ret.new_1;");
}

TEST(Tuples, FloatToIntRuleHoldsForEachTarget) {
  auto bad = analyze(kernelWith("x: f32[4]",
                                "    n = 0\n"
                                "    n, v = x[0], 1.0\n"
                                "    x[1] = f32(n) + v\n"));
  EXPECT_THAT(diagIds(*bad), ElementsAre("sema-float-to-int-local"));
  auto annotated = analyze(kernelWith("x: f32[4]",
                                      "    n: i32 = 0\n"
                                      "    n, v = x[0], 1.0\n"
                                      "    x[1] = f32(n) + v\n"));
  EXPECT_FALSE(annotated->diags.hasErrors()) << annotated->diags.renderAll();
}

// An index of a later target may read what an earlier one stores only if
// it is the same in Python's order and in Spindle's; a target's own index
// may read what a later target stores.
TEST(Tuples, IndicesMayReadOnlyWhatNoEarlierTargetStores) {
  auto later = analyze(kernelWith("x: f32[4]",
                                  "    i = 0\n"
                                  "    x[i], i = 1.0, 2\n"));
  EXPECT_FALSE(later->diags.hasErrors()) << later->diags.renderAll();
  auto earlier = analyze(kernelWith("x: f32[4]",
                                    "    i = 0\n"
                                    "    i, x[i] = 2, 1.0\n"));
  EXPECT_THAT(diagIds(*earlier), ElementsAre("sema-unpack-index-order"));
  auto element = analyze(kernelWith("x: f32[4], p: i32[4]", "    p[0], x[p[0]] = 1, 1.0\n"));
  EXPECT_THAT(diagIds(*element), ElementsAre("sema-unpack-index-order"));
  auto size = analyze(kernelWith("x: f32[N], p: i32[4]", "    x[0], p[dim(x, 0) - 1] = 1.0, 1\n"));
  EXPECT_FALSE(size->diags.hasErrors()) << size->diags.renderAll();
}

TEST(Tuples, EveryMisuseHasItsOwnError) {
  struct Case {
    const char* body;
    const char* id;
  };
  const Case cases[] = {
      {"    x[0] = stats(x[0], x[1]) + 1.0\n", "sema-tuple-value"},
      {"    m = stats(x[0], x[1])\n", "sema-tuple-value"},
      {"    x[0] = f32((x[0], x[1]))\n", "sema-tuple-position"},
      {"    x[0] = (x[0], x[1]) * 2.0\n", "sema-tuple-position"},
      {"    a, b = 1.0, (2.0, 3.0)\n", "sema-tuple-position"},
      {"    a, b = 1.0, 2.0, 3.0\n", "sema-unpack-arity"},
      {"    a, b, c = stats(x[0], x[1])\n", "sema-unpack-arity"},
      {"    a, b = x[0]\n", "sema-unpack-not-tuple"},
      {"    a, b = one(x[0])\n", "sema-unpack-not-tuple"},
      {"    a, b = none(x[0])\n", "sema-unpack-not-tuple"},
      {"    a, b = True, 1.0\n    x[0] = a\n", "sema-convert"},
      {"    def f():\n        return 1.0\n    a, b = f()\n", "sema-unpack-not-tuple"},
      {"    def f(v: f32):\n        if v > 0.0:\n            return v\n        return v, v\n    f(1.0)\n",
       "sema-return-tuple-mix"},
      {"    def f(v: f32):\n        if v > 0.0:\n            return v, v\n        return v\n    f(1.0)\n",
       "sema-return-tuple-mix"},
      {"    def f(v: f32) -> f32:\n        return v, v\n    x[0] = f(1.0)\n", "sema-return-tuple-mix"},
      {"    def f(v: f32) -> tuple[f32, f32]:\n        return v, v, v\n    a, b = f(1.0)\n", "sema-return-arity"},
      {"    def f(v: f32) -> tuple[f32, f32]:\n        return v, (v, v)\n    a, b = f(1.0)\n", "sema-tuple-position"},
      {"    def f(v: f32) -> tuple[f32, f32]:\n        return stats(v, v)\n    a, b = f(1.0)\n", "sema-tuple-value"},
      {"    def f(v: f32) -> tuple[f32, bool]:\n        return v, v\n    a, b = f(1.0)\n", "sema-convert"},
      {"    def f(v: f32) -> tuple[f32, f32]:\n        return\n    a, b = f(1.0)\n", "sema-missing-return-value"},
      {"    return x[0], x[1]\n", "sema-kernel-return-value"},
  };
  const std::string defs = std::string(kStats) +
                           "def one(v: f32) -> f32:\n    return v\n\n"
                           "def none(v: f32):\n    pass\n\n";
  for (const auto& c : cases) {
    auto a = analyze(kernelWith("x: f32[4]", c.body, defs));
    EXPECT_THAT(diagIds(*a), ElementsAre(c.id)) << c.body << a->diags.renderAll();
  }
}

TEST(Tuples, ModuleDefsDeclareTheirTuple) {
  auto a = analyze(
      "def f(v: f32):\n    return v, v\n\n"
      "def g(v: f32) -> tuple[f32, f32[4]]:\n    return v, v\n\n"
      "def h(v: f32) -> tuple[f32, f23]:\n    return v, v\n");
  EXPECT_THAT(diagIds(*a), ElementsAre("sema-return-without-type", "sema-def-tensor-return", "sema-unknown-type"));
}

TEST(Tuples, MessagesNameCountsAndTypes) {
  auto a = analyze(kernelWith("x: f32[4]",
                              "    m = stats(x[0], x[1])\n"
                              "    a, b, c = stats(x[0], x[1])\n",
                              kStats));
  std::string text = a->diags.renderAll();
  EXPECT_THAT(text, HasSubstr("'stats' returns 2 values (f32, f32), not one; unpack them: 'a, b = stats(...)'"));
  EXPECT_THAT(text, HasSubstr("cannot unpack 2 values into 3 targets"));
}

}  // namespace
}  // namespace spindle::test
