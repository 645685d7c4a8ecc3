// docs/language.md 8.5, the atomics of language v2 part 2: which element
// types each atomic takes (and the message when not), the types of their
// results, the C++ they print as, and the prelude parts they take in.
#include "sema_test_util.h"

namespace spindle::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::string kernelWith(const std::string& params, const std::string& body) {
  return "@grid(1)\n@block(32)\nkernel k(" + params + "):\n" + body;
}

std::string lineWith(const std::string& hip, const std::string& needle) {
  size_t at = hip.find(needle, hip.find("__global__ __launch_bounds__"));
  if (at == std::string::npos) return "<not found: " + needle + ">";
  size_t begin = hip.rfind('\n', at) + 1;
  size_t end = hip.find('\n', at);
  std::string line = hip.substr(begin, end - begin);
  return line.substr(line.find_first_not_of(' '));
}

TEST(Atomics, ElementTypesEachAtomicTakes) {
  struct Case {
    const char* call;
    const char* element;
    bool ok;
  };
  const Case cases[] = {
      {"atomic_add(x[0], 1)", "f16", true},    {"atomic_add(x[0], 1)", "bf16", true},
      {"atomic_add(x[0], 1)", "i16", false},   {"atomic_add(x[0], 1)", "u8", false},
      {"atomic_cas(x[0], 0, 1)", "f16", true}, {"atomic_cas(x[0], 0, 1)", "bf16", true},
      {"atomic_cas(x[0], 0, 1)", "f64", true}, {"atomic_cas(x[0], 0, 1)", "u64", true},
      {"atomic_cas(x[0], 0, 1)", "i8", false}, {"atomic_and(x[0], 1)", "i32", true},
      {"atomic_or(x[0], 1)", "u64", true},     {"atomic_xor(x[0], 1)", "i64", true},
      {"atomic_xor(x[0], 1)", "f32", false},   {"atomic_and(x[0], 1)", "f16", false},
      {"atomic_or(x[0], 1)", "u16", false},    {"atomic_max(x[0], 1)", "f32", true},
      {"atomic_min(x[0], 1)", "f64", true},    {"atomic_max(x[0], 1)", "bf16", false},
      {"atomic_min(x[0], 1)", "f16", false},   {"atomic_exch(x[0], 1)", "f16", false},
  };
  for (const auto& c : cases) {
    auto a = analyze(kernelWith(std::string("x: ") + c.element + "[4]", std::string("    ") + c.call + "\n"));
    if (c.ok) EXPECT_THAT(diagIds(*a), ElementsAre()) << c.call << " on " << c.element << a->diags.renderAll();
    else EXPECT_THAT(diagIds(*a), ElementsAre("sema-atomic-type")) << c.call << " on " << c.element;
  }
}

TEST(Atomics, TypeErrorListsWhatTheAtomicTakes) {
  struct Case {
    const char* element;
    const char* call;
    const char* message;
  };
  const Case cases[] = {
      {"f32", "atomic_and(x[0], 1)", "'atomic_and' is not available for f32 elements; it takes i32, u32, i64, u64"},
      {"bf16", "atomic_max(x[0], 1)",
       "'atomic_max' is not available for bf16 elements; it takes i32, u32, i64, u64, f32, f64"},
      {"bool", "atomic_cas(x[0], True, False)",
       "'atomic_cas' is not available for bool elements; it takes i32, u32, i64, u64, f16, bf16, f32, f64"},
      {"f16", "atomic_exch(x[0], 1.0)",
       "'atomic_exch' is not available for f16 elements; it takes i32, u32, i64, u64, f32"},
  };
  for (const auto& c : cases) {
    auto a = analyze(kernelWith(std::string("x: ") + c.element + "[4]", std::string("    ") + c.call + "\n"));
    ASSERT_THAT(diagIds(*a), ElementsAre("sema-atomic-type")) << c.call;
    EXPECT_EQ(a->diags.diagnostics()[0].message, c.message);
  }
}

TEST(Atomics, CasTakesThreeArgumentsThatConvert) {
  auto two = analyze(kernelWith("x: i32[4]", "    atomic_cas(x[0], 1)\n"));
  EXPECT_THAT(diagIds(*two), ElementsAre("sema-call-arity")) << two->diags.renderAll();
  auto boolean = analyze(kernelWith("x: i32[4]", "    atomic_cas(x[0], 0, True)\n"));
  EXPECT_THAT(diagIds(*boolean), ElementsAre("sema-convert")) << boolean->diags.renderAll();
  auto local =
      analyze(kernelWith("x: i32[4]", "    a = local(i32, [2], 0)\n    atomic_cas(a[0], 0, 1)\n    x[0] = a[0]\n"));
  EXPECT_THAT(diagIds(*local), ElementsAre("sema-atomic-target")) << local->diags.renderAll();
}

// f16/bf16 atomics return the element type (an f16 read: f32 in
// arithmetic), take values rounded to it, and print by element name.
TEST(Atomics, HalfPrecisionAtomicsPrintTheirOwnHelpers) {
  std::string hip = generate(kernelWith("h: f16[4], b: bf16[4], y: f32[4]",
                                        "    old = atomic_add(h[0], y[0])\n"
                                        "    y[1] = old + atomic_add(b[1], 1)\n"
                                        "    keep: f16 = atomic_cas(h[2], h[3], 0.5)\n"
                                        "    b[0] = atomic_cas(b[2], 0.0, y[2])\n"
                                        "    h[1] = keep\n"),
                             "k");
  EXPECT_EQ(lineWith(hip, "old = "), "float old = float(__spn_atomic_add_f16(&h[0], __half(y[0])));");
  EXPECT_EQ(lineWith(hip, "y[1] = "), "y[1] = old + float(__spn_atomic_add_bf16(&b[1], __spn_bf16(1.0f)));");
  EXPECT_EQ(lineWith(hip, "keep = "), "__half keep = __spn_atomic_cas_f16(&h[2], h[3], __half(0.5f));");
  EXPECT_EQ(lineWith(hip, "b[0] = "), "b[0] = __spn_atomic_cas_bf16(&b[2], __spn_bf16(0.0f), __spn_bf16(y[2]));");
  EXPECT_THAT(hip, HasSubstr("__spn_atomic_half_update(void* p, Op op)"));
}

TEST(Atomics, FloatMaxMinAndBitwisePrintAsTheirHelpers) {
  std::string hip = generate(kernelWith("s: f32[2], d: f64[2], m: u32[3], n: i64[1], c: f32[1]",
                                        "    atomic_max(s[0], abs(s[1]))\n"
                                        "    atomic_min(d[0], 2)\n"
                                        "    atomic_and(m[0], u32(6))\n"
                                        "    atomic_or(m[1], 1)\n"
                                        "    atomic_xor(n[0], 5)\n"
                                        "    atomic_cas(c[0], -0.0, 1)\n"),
                             "k");
  EXPECT_EQ(lineWith(hip, "atomic_max"), "__spn_atomic_max_f32(&s[0], fabsf(s[1]));");
  EXPECT_EQ(lineWith(hip, "atomic_min"), "__spn_atomic_min_f64(&d[0], 2.0);");
  EXPECT_EQ(lineWith(hip, "atomic_and"), "__spn_atomic_and(&m[0], uint32_t(6));");
  EXPECT_EQ(lineWith(hip, "atomic_or"), "__spn_atomic_or(&m[1], 1);");
  EXPECT_EQ(lineWith(hip, "atomic_xor"), "__spn_atomic_xor(&n[0], 5);");
  EXPECT_EQ(lineWith(hip, "atomic_cas"), "__spn_atomic_cas(&c[0], -0.0f, 1.0f);");
  EXPECT_THAT(hip, HasSubstr("__spn_float_max_bits"));
  EXPECT_THAT(hip, HasSubstr("__spn_float_min_bits"));
  EXPECT_THAT(hip, Not(HasSubstr("__spn_half_shift")));  // no 2-byte atomics here
}

// Integer atomics alone take in none of the new helpers (the goldens of
// older kernels stay as they were).
TEST(Atomics, IntegerAtomicsTakeInNothingNew) {
  std::string hip = generate(kernelWith("c: i32[2]", "    atomic_max(c[0], 1)\n    atomic_add(c[1], 1)\n"), "k");
  EXPECT_THAT(hip, Not(HasSubstr("__spn_float_key")));
  EXPECT_THAT(hip, Not(HasSubstr("__spn_atomic_half_update")));
  EXPECT_THAT(hip, Not(HasSubstr("cuda_fp16.h")));
}

}  // namespace
}  // namespace spindle::test
