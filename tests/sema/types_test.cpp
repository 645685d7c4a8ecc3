// docs/language.md, section 4: literal typing, promotion, storage types, and the errors
// for mixing what must not mix. Checked on the types sema gives and on the
// C++ the printer writes for them.
#include "sema_test_util.h"

namespace spindle::test {
namespace {

using ::testing::ElementsAre;

std::string kernelWith(const std::string& params, const std::string& body) {
  return "@grid(1)\n@block(32)\nkernel k(" + params + "):\n" + body;
}

// The C++ line the printer writes for the statement containing `needle`.
std::string lineWith(const std::string& hip, const std::string& needle) {
  size_t at = hip.find(needle, hip.find("__global__ __launch_bounds__"));
  if (at == std::string::npos) return "<not found: " + needle + ">";
  size_t begin = hip.rfind('\n', at) + 1;
  size_t end = hip.find('\n', at);
  std::string line = hip.substr(begin, end - begin);
  return line.substr(line.find_first_not_of(' '));
}

TEST(Types, WeakLiteralsTakeTheOtherOperandsType) {
  std::string hip = generate(kernelWith("x: f32[4], d: f64[4], n: i64[4]",
                                        "    a = x[0] * 2\n"
                                        "    b = d[0] * 0.5\n"
                                        "    c = x[0] * 0.5\n"
                                        "    e = n[0] + 1\n"
                                        "    f = 1.5\n"
                                        "    g = 7\n"
                                        "    x[1] = a + f32(b) + c + f32(e) + f + f32(g)\n"),
                             "k");
  EXPECT_EQ(lineWith(hip, "a = "), "float a = x[0] * 2.0f;");
  EXPECT_EQ(lineWith(hip, "b = "), "double b = d[0] * 0.5;");  // no f: a double context
  EXPECT_EQ(lineWith(hip, "c = "), "float c = x[0] * 0.5f;");
  EXPECT_EQ(lineWith(hip, "e = "), "int64_t e = n[0] + 1;");
  EXPECT_EQ(lineWith(hip, "f = "), "float f = 1.5f;");  // alone: f32, not f64
  EXPECT_EQ(lineWith(hip, "g = "), "int32_t g = 7;");   // alone: i32
}

TEST(Types, HalfPrecisionIsStorageArithmeticIsFloat) {
  std::string hip = generate(kernelWith("x: f16[4], y: bf16[4]",
                                        "    v = x[0] * 2.0\n"
                                        "    y[0] = v + y[1]\n"
                                        "    x[1] = x[2]\n"
                                        "    x[3] += 1.0\n"),
                             "k");
  EXPECT_EQ(lineWith(hip, "v = "), "float v = float(x[0]) * 2.0f;");
  EXPECT_EQ(lineWith(hip, "y[0] = "), "y[0] = __spn_bf16(v + float(y[1]));");
  EXPECT_EQ(lineWith(hip, "x[1] = "), "x[1] = x[2];");  // a copy needs no round trip
  EXPECT_EQ(lineWith(hip, "x[3] = "), "x[3] = __half(float(x[3]) + 1.0f);");
}

TEST(Types, MixingErrors) {
  struct Case {
    const char* params;
    const char* body;
    const char* id;
  };
  const Case cases[] = {
      {"x: i32[4], u: u32[4]", "    x[0] = x[1] + i32(u[0]) + x[2] * u[1]\n", "sema-sign-mix"},
      {"x: i32[4]", "    x[0] = x[1] / 2\n", "sema-int-division"},
      {"x: f32[4]", "    x[0] = x[1] // 2.0\n", "sema-float-floordiv"},
      {"x: f32[4]", "    x[0] = x[1] % 2.0\n", "sema-float-floordiv"},
      {"x: i32[4]", "    if x[0] and x[1]:\n        pass\n", "sema-logical-operand"},
      {"x: f32[4], n: i32[4]", "    x[0] = x[1] ** n[0]\n", "sema-pow-exponent"},
      {"x: f32[4], n: i32[4]", "    x[0] = exp(n[0])\n", "sema-math-needs-float"},
      {"x: f32[4]", "    x[0] = x\n", "sema-tensor-as-value"},
      {"x: f32[4]", "    x[0.5] = 1.0\n", "sema-index-type"},
      {"x: f16[4]", "    atomic_max(x[0], 1.0)\n", "sema-atomic-type"},
      {"x: f32[4]", "    b = True\n    b = 1.0\n", "sema-convert"},
  };
  for (const auto& c : cases) {
    auto a = analyze(kernelWith(c.params, c.body));
    EXPECT_THAT(diagIds(*a), ElementsAre(c.id)) << c.body << a->diags.renderAll();
  }
}

// The message names each operand by its signedness, whichever side it is on,
// and in a generic kernel where the mix appears only at generation.
TEST(Types, SignMixNamesTheSignedAndTheUnsignedOperand) {
  for (const char* body : {"    x[0] = x[1] + u[0]\n", "    x[0] = i32(u[0] + x[1])\n"}) {
    auto a = analyze(kernelWith("x: i32[4], u: u32[4]", body));
    ASSERT_THAT(diagIds(*a), ElementsAre("sema-sign-mix")) << body;
    EXPECT_EQ(a->diags.diagnostics()[0].message,
              "mixing signed i32 and unsigned u32 needs an explicit cast, e.g. i64(x)")
        << body;
  }
  DiagnosticEngine diags;
  auto m = CompiledModule::fromString("test.spn",
                                      "@grid(1)\n@block(32)\nkernel k[T](x: T[4], y: i32[4]):\n"
                                      "    y[0] = i32(x[0] + y[1])\n",
                                      diags);
  ASSERT_TRUE(m) << diags.renderAll();
  Specialization spec;
  spec.typeArgs["T"] = ScalarType::U64;
  try {
    m->generate("k", spec);
    ADD_FAILURE() << "T = u64 with an i32 operand generated";
  } catch (const GeneratorError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("mixing signed i32 and unsigned u64")) << e.what();
  }
}

// One error per mistake: the uses of a local whose declaring assignment was
// refused report nothing more (it used to say, at every read, that the local
// was "read by closure 'k'", the kernel, "but assigned only after").
TEST(Types, AFailedDeclarationReportsOnce) {
  const char* declarations[] = {
      "    w = thread_id() / 2\n",
      "    w = sqrt(thread_id())\n",
      "    w = x[0] + u[0]\n",
  };
  for (const char* decl : declarations) {
    auto a = analyze(kernelWith("x: i32[4], u: u32[4], y: f32[4]", std::string(decl) + "    y[w] = f32(w) * 2.0\n"
                                                                                       "    w += 1\n"
                                                                                       "    def c() -> i32:\n"
                                                                                       "        return w + 1\n"
                                                                                       "    if w > c():\n"
                                                                                       "        y[0] = f32(w)\n"));
    EXPECT_EQ(a->diags.errorCount(), 1u) << decl << a->diags.renderAll();
  }
  // A loop whose range failed: its variable is silent, its body still checked.
  auto loop = analyze(kernelWith("x: f32[4], y: f32[4]",
                                 "    for i in range(4 / 2):\n"
                                 "        y[i] = x[i] + f32(i)\n"
                                 "        y[0] = x[1] // 2.0\n"));
  EXPECT_THAT(diagIds(*loop), ElementsAre("sema-int-division", "sema-float-floordiv")) << loop->diags.renderAll();
}

// The two diagnostics this session added, by their full messages: what is
// wrong, with the offending part named.
TEST(Types, ScratchSizesAndPopcountSayWhatIsWrong) {
  struct Case {
    const char* params;
    const char* body;
    const char* message;
  };
  const Case cases[] = {
      {"x: f32[4], n: i32", "    v = local(f32, [n], 0.0)\n    x[0] = v[0]\n",
       "the size of local buffer 'v' must be known when the kernel is compiled, but 'n' is a parameter; a size may use "
       "integer literals, consts and dim symbols"},
      {"x: f32[4], n: i32", "    m = n * 2\n    v = local(f32, [m], 0.0)\n    x[0] = v[0]\n",
       "the size of local buffer 'v' must be known when the kernel is compiled, but 'm' is a local variable; a size "
       "may "
       "use integer literals, consts and dim symbols"},
      {"x: f32[4]", "    s = shared(f32, [thread_id()])\n    s[0] = x[0]\n",
       "the size of shared buffer 's' must be known when the kernel is launched, but 'thread_id(...)' is not a "
       "compile-time value; a size may use integer literals, consts and dim symbols"},
      {"x: f32[4], y: i32[4]", "    y[0] = popcount(x[0])\n", "'popcount' takes an integer, got f32"},
  };
  for (const auto& c : cases) {
    auto a = analyze(kernelWith(c.params, c.body));
    ASSERT_EQ(a->diags.diagnostics().size(), 1u) << c.body << a->diags.renderAll();
    EXPECT_EQ(a->diags.diagnostics()[0].message, c.message) << c.body;
  }
}

TEST(Types, CastsAndUnsignedAreExplicit) {
  std::string hip = generate(kernelWith("u: u32[4], x: i64[4]",
                                        "    x[0] = i64(u[0]) + x[1]\n"
                                        "    u[1] = u[2] >> 3\n"),
                             "k");
  EXPECT_EQ(lineWith(hip, "x[0] = "), "x[0] = int64_t(u[0]) + x[1];");
  EXPECT_EQ(lineWith(hip, "u[1] = "), "u[1] = u[2] >> 3;");
}

TEST(Printer, PrecedenceFollowsCppNotPython) {
  // Python: `a & b == c` is `(a & b) == c`; C++ would read it as a & (b == c).
  std::string hip = generate(kernelWith("x: i32[8], f: bool[1]",
                                        "    f[0] = x[0] & x[1] == x[2]\n"
                                        "    x[3] = (x[0] + x[1]) * x[2] - x[4] // (x[5] - x[6])\n"
                                        "    x[7] = -x[0] ** 2\n"),
                             "k");
  EXPECT_EQ(lineWith(hip, "f[0] = "), "f[0] = (x[0] & x[1]) == x[2];");
  EXPECT_EQ(lineWith(hip, "x[3] = "), "x[3] = (x[0] + x[1]) * x[2] - x[4] / (x[5] - x[6]);");
  EXPECT_EQ(lineWith(hip, "x[7] = "), "x[7] = -__spn_powi<2>(x[0]);");
}

TEST(Printer, LocalsAreDeclaredWhereEveryUseCanSeeThem) {
  Specialization noLines;
  noLines.lineDirectives = false;
  std::string hip = generate(kernelWith("x: f32[4]",
                                        "    if x[0] > 0.0:\n"
                                        "        v = 1.0\n"
                                        "    else:\n"
                                        "        v = 2.0\n"
                                        "    x[1] = v\n"
                                        "    for i in range(4):\n"
                                        "        w = x[i]\n"
                                        "        x[i] = w * 2.0\n"),
                             "k", noLines);
  // v is assigned in both branches and read after: declared before the if.
  EXPECT_NE(hip.find("  float v;\n  if (x[0] > 0.0f) {\n    v = 1.0f;\n  } else {\n    v = 2.0f;\n  }\n"),
            std::string::npos)
      << hip;
  // w lives only inside the loop body.
  EXPECT_NE(hip.find("    float w = x[i];\n"), std::string::npos) << hip;
}

TEST(Printer, NamesThatClashWithCppGetAStableSuffix) {
  std::string hip = generate(kernelWith("x: f32[4]",
                                        "    float = x[0]\n"
                                        "    new = float * 2.0\n"
                                        "    x[1] = new\n"),
                             "k");
  EXPECT_EQ(lineWith(hip, "float_1 = "), "float float_1 = x[0];");
  EXPECT_EQ(lineWith(hip, "new_1 = "), "float new_1 = float_1 * 2.0f;");
}

}  // namespace
}  // namespace spindle::test
