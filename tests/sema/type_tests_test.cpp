// Type tests (`if T == bf16:`, `T in (f16, bf16)`): decided when the kernel's
// types are bound; the branch not taken is neither typed nor printed, and
// `spindle check` types each branch under a binding that takes it.
#include "sema/type_test_bindings.h"
#include "sema_test_util.h"

namespace spindle::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

Specialization withT(ScalarType t) {
  Specialization spec;
  spec.typeArgs["T"] = t;
  return spec;
}

// The kernel's body as printed (from its signature on), without #line.
std::string body(const std::string& source) {
  std::string out;
  size_t at = source.find("__launch_bounds__");
  if (at == std::string::npos) return source;
  size_t line = at;
  while (line < source.size()) {
    size_t end = source.find('\n', line);
    if (end == std::string::npos) end = source.size();
    std::string text = source.substr(line, end - line);
    if (text.rfind("#line", 0) != 0) out += text + "\n";
    line = end + 1;
  }
  return out;
}

const char* kBranches = R"(
@grid(cdiv(N, 128))
@block(128)
kernel pick[T](x: T[N], y: T[N], bits: u16[N]):
    i = block_id() * 128 + thread_id()
    if i < N:
        if T == bf16:
            y[i] = x[i] * 2.0
        elif T in (f16, f64):
            y[i] = x[i] + 1.0
        else:
            y[i] = x[i]
        if T != f32:
            bits[i] = u16(3)
        y[i] += 7.0 if T not in (f32, f64) else 8.0
)";

TEST(TypeTests, EachBindingPrintsOnlyTheBranchItTakes) {
  std::string bf16 = body(generate(kBranches, "pick", withT(ScalarType::BF16)));
  EXPECT_THAT(bf16, HasSubstr("y[i] = __spn_bf16(float(x[i]) * 2.0f);"));
  EXPECT_THAT(bf16, Not(HasSubstr("1.0f")));
  EXPECT_THAT(bf16, HasSubstr("bits[i] = uint16_t(3);"));
  EXPECT_THAT(bf16, HasSubstr("7.0f"));
  EXPECT_THAT(bf16, Not(HasSubstr("8.0f")));
  EXPECT_THAT(bf16, Not(HasSubstr("if (true")));

  std::string f64 = body(generate(kBranches, "pick", withT(ScalarType::F64)));
  EXPECT_THAT(f64, HasSubstr("y[i] = x[i] + 1.0;"));
  EXPECT_THAT(f64, HasSubstr("8.0"));
  EXPECT_THAT(f64, Not(HasSubstr("7.0")));

  std::string f32 = body(generate(kBranches, "pick", withT(ScalarType::F32)));
  EXPECT_THAT(f32, HasSubstr("y[i] = x[i];"));
  EXPECT_THAT(f32, Not(HasSubstr("bits[i]")));
  EXPECT_THAT(f32, Not(HasSubstr("2.0f")));
}

TEST(TypeTests, TheBranchNotTakenMayHoldWhatOnlyAnotherTypeAllows) {
  // popcount takes integers: the branch is right for i32 only.
  const char* text = R"(
@grid(cdiv(N, 128))
@block(128)
kernel count[T](x: T[N], y: i32[N]):
    i = block_id() * 128 + thread_id()
    if i < N:
        if T in (i32, u32):
            y[i] = popcount(x[i])
        else:
            y[i] = i32(x[i] > 0.0)
)";
  auto a = analyze(text);
  EXPECT_FALSE(a->diags.hasErrors()) << a->diags.renderAll();
  EXPECT_THAT(body(generate(text, "count", withT(ScalarType::I32))), HasSubstr("__popc"));
  EXPECT_THAT(body(generate(text, "count", withT(ScalarType::F16))), Not(HasSubstr("__popc")));
}

TEST(TypeTests, CheckTypesEachBranchUnderABindingThatTakesIt) {
  // Under f32 (the placeholder) the bf16 branch is not taken; the check
  // still finds its error, under T = bf16, and says so.
  auto a = analyze(R"(
@grid(cdiv(N, 128))
@block(128)
kernel k[T](x: T[N], y: T[N]):
    i = block_id() * 128 + thread_id()
    if i < N:
        if T == bf16:
            y[i] = T(popcount(x[i]))
        else:
            y[i] = x[i]
)");
  ASSERT_THAT(diagIds(*a), ElementsAre("sema-int-builtin-type"));
  const Diagnostic& d = a->diags.diagnostics().front();
  EXPECT_EQ(d.range.begin.line, 8u);
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_THAT(d.notes[0].message, HasSubstr("with T = bf16"));
}

TEST(TypeTests, AnErrorUnderEveryBindingIsReportedOnce) {
  auto a = analyze(R"(
@grid(cdiv(N, 128))
@block(128)
kernel k[T](x: T[N], y: T[N]):
    i = block_id() * 128 + thread_id()
    if i < N:
        y[i] = undefined_name
        if T == f16:
            y[i] = x[i]
)");
  EXPECT_THAT(diagIds(*a), ElementsAre("sema-unknown-name"));
}

TEST(TypeTests, BindingsCoverBothOutcomesOfEveryTest) {
  auto a = analyze(R"(
@grid(1)
@block(32)
kernel k[T, U](x: T[N], y: U[N]):
    if T in (f16, bf16):
        y[0] = U(x[0])
    if T != f32:
        y[0] = U(x[0])
    if U == f32:
        y[0] = U(x[0])
    if U != f32:
        y[0] = U(x[0])
)");
  ASSERT_FALSE(a->diags.hasErrors()) << a->diags.renderAll();
  std::vector<TypeBinding> bindings = bindingsReachingTypeTests(*findScope(*a->result.sema, "k"));
  std::vector<std::string> described;
  for (const TypeBinding& b : bindings) described.push_back(describeBinding(b));
  // T: f32 (placeholder), f16 (takes `in (f16, bf16)`); U: f32, and f16 to
  // make `U == f32` false. f32 comes first.
  EXPECT_THAT(described, ElementsAre("T = f32, U = f32", "T = f32, U = f16", "T = f16, U = f32", "T = f16, U = f16"));
}

TEST(TypeTests, OperandsMustBeATypeParameterAndTypeNames) {
  auto a = analyze(R"(
@grid(1)
@block(32)
kernel k[T](x: T[N], y: T[N]):
    v = x[0]
    if v == f32:
        y[0] = v
    if T in (f16, T):
        y[0] = v
    if T in (f16, half):
        y[0] = v
)");
  EXPECT_THAT(diagIds(*a), ElementsAre("sema-type-test-operand", "sema-type-test-operand", "sema-type-test-operand"));
  EXPECT_THAT(a->diags.renderAll(), HasSubstr("'v' is a local"));
  EXPECT_THAT(a->diags.renderAll(), HasSubstr("'T' is a type parameter; compare each with type names"));
  EXPECT_THAT(a->diags.renderAll(), HasSubstr("'half' is not a scalar type"));
}

TEST(TypeTests, InNeedsAParenthesizedListOfNames) {
  for (const char* cond : {"T in f16", "T in ()", "x[0] in (f16, bf16)", "T in (f16, 2)"}) {
    auto a =
        analyze(std::string("@grid(1)\n@block(32)\nkernel k[T](x: T[N]):\n    if ") + cond + ":\n        x[0] = 1.0\n");
    EXPECT_TRUE(a->diags.hasErrors()) << cond;
    EXPECT_EQ(diagIds(*a).front(), std::string(cond) == "T in (f16, 2)" ? "parse-expected" : "parse-type-membership")
        << cond << "\n"
        << a->diags.renderAll();
  }
}

TEST(TypeTests, ClosuresSeeTheKernelsTypeParameter) {
  const char* text = R"(
@grid(1)
@block(32)
kernel k[T](x: T[N], y: T[N]):
    def twice(v: f32) -> f32:
        if T == f64:
            return v + v
        return 2.0 * v
    y[0] = T(twice(f32(x[0])))
)";
  EXPECT_THAT(generate(text, "k", withT(ScalarType::F64)), HasSubstr("return v + v;"));
  std::string f32 = generate(text, "k", withT(ScalarType::F32));
  EXPECT_THAT(f32, Not(HasSubstr("v + v")));
  EXPECT_THAT(f32, HasSubstr("return 2.0f * v;"));
}

TEST(TypeTests, ATypeTestLeftInAnExpressionPrintsItsValue) {
  const char* text = R"(
@grid(1)
@block(32)
kernel k[T](x: T[N], flags: bool[N]):
    flags[0] = T == f16 and x[0] > 0.0
)";
  EXPECT_THAT(body(generate(text, "k", withT(ScalarType::F16))), HasSubstr("flags[0] = true && "));
  EXPECT_THAT(body(generate(text, "k", withT(ScalarType::F32))), HasSubstr("flags[0] = false && "));
}

}  // namespace
}  // namespace spindle::test
