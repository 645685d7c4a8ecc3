// Compile-time evaluation (docs/language.md 3.2): consts may call the pure
// float builtins, computed in double precision, and abs/min/max/cdiv.
#include <gtest/gtest.h>

#include <cmath>

#include "sema/builtins.h"
#include "sema/const_eval.h"
#include "sema_test_util.h"

namespace spindle::test {
namespace {

double constValue(const SemaModule& sema, const std::string& name) {
  for (const Symbol* c : sema.consts)
    if (c->name == name) return c->value.asDouble();
  ADD_FAILURE() << "no const " << name;
  return std::nan("");
}

TEST(ConstEval, ConstsMayCallPureMathBuiltins) {
  auto a = analyze(R"(
const GELU_C = sqrt(2.0 / 3.141592653589793)
const LOG2E = 1.0 / log(2.0)
const SCALE: f32 = rsqrt(64.0)
const STEPS = i32(ceil(log2(1000.0)))
const MIXED = pow(2.0, 10) + fma(2.0, 3.0, 1.0) + abs(-2.5) + exp(0.0) + exp2(3.0) + floor(2.7)
const TRIG = sin(0.0) + cos(0.0) + tanh(0.0) + erf(0.0)
const NEG = abs(-7)
)");
  ASSERT_FALSE(a->diags.hasErrors()) << a->diags.renderAll();
  const SemaModule& sema = *a->result.sema;
  EXPECT_EQ(constValue(sema, "GELU_C"), std::sqrt(2.0 / 3.141592653589793));
  EXPECT_EQ(constValue(sema, "LOG2E"), 1.0 / std::log(2.0));
  EXPECT_EQ(constValue(sema, "SCALE"), 0.125);
  EXPECT_EQ(constValue(sema, "STEPS"), 10);
  EXPECT_EQ(constValue(sema, "MIXED"), 1024.0 + 7.0 + 2.5 + 1.0 + 8.0 + 2.0);
  EXPECT_EQ(constValue(sema, "TRIG"), 1.0);
  EXPECT_EQ(constValue(sema, "NEG"), 7);
}

// Python's round: half to even (2.5 -> 2, 3.5 -> 4, -2.5 -> -2), as rint;
// trunc toward zero; fmod keeps the dividend's sign; copysign.
TEST(ConstEval, RoundingBuiltinsAsPython) {
  auto a = analyze(R"(
const R1 = round(2.5)
const R2 = round(3.5)
const R3 = round(-2.5)
const R4 = rint(0.5)
const T1 = trunc(-2.7)
const F1 = fmod(-7.0, 3.0)
const C1 = copysign(2.0, -0.0)
const H1 = hypot(3.0, 4.0)
)");
  ASSERT_FALSE(a->diags.hasErrors()) << a->diags.renderAll();
  const SemaModule& sema = *a->result.sema;
  EXPECT_EQ(constValue(sema, "R1"), 2.0);
  EXPECT_EQ(constValue(sema, "R2"), 4.0);
  EXPECT_EQ(constValue(sema, "R3"), -2.0);
  EXPECT_EQ(constValue(sema, "R4"), 0.0);
  EXPECT_EQ(constValue(sema, "T1"), -2.0);
  EXPECT_EQ(constValue(sema, "F1"), -1.0);
  EXPECT_EQ(constValue(sema, "C1"), -2.0);
  EXPECT_EQ(constValue(sema, "H1"), 5.0);
}

// Every float builtin of the table has a compile-time value: a builtin
// added to the table and not to const evaluation would give NaN here.
TEST(ConstEval, EveryFloatBuiltinEvaluates) {
  for (const BuiltinInfo& b : allBuiltins()) {
    if (b.category != BuiltinCategory::FloatMath) continue;
    std::string args;  // in every function's domain (acosh needs at least 1)
    const char* x = b.id == BuiltinId::Acosh ? "1.5" : "0.5";
    for (int i = 0; i < b.minArgs; ++i) args += (i ? ", " : "") + std::string(x);
    auto a = analyze("const V = " + std::string(b.name) + "(" + args + ")\n");
    ASSERT_FALSE(a->diags.hasErrors()) << b.name << ": " << a->diags.renderAll();
    EXPECT_FALSE(std::isnan(constValue(*a->result.sema, "V"))) << b.name;
  }
}

}  // namespace
}  // namespace spindle::test
