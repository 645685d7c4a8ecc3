// max_value / min_value / min_normal, saturate and bitcast: typing, the
// literals printed for each type, values in consts, and the fp8 types.
#include "sema/const_eval.h"
#include "sema_test_util.h"

namespace spindle::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Specialization withTypes(std::map<std::string, ScalarType> types) {
  Specialization spec;
  spec.typeArgs = std::move(types);
  return spec;
}

TEST(TypeBuiltins, LimitsOfATypeParameterFollowItsBinding) {
  const char* text = R"(
@grid(1)
@block(32)
kernel k[T, Q](x: T[N], y: Q[N], out: f64[4]):
    out[0] = f64(max_value(Q))
    out[1] = f64(min_value(Q))
    out[2] = f64(min_normal(T))
)";
  std::string i8 = generate(text, "k", withTypes({{"T", ScalarType::F16}, {"Q", ScalarType::I8}}));
  EXPECT_THAT(i8, HasSubstr("out[0] = double(int8_t(127));"));
  EXPECT_THAT(i8, HasSubstr("out[1] = double(int8_t(-127 - 1));"));
  EXPECT_THAT(i8, HasSubstr("out[2] = double(0x1p-14f);"));
  std::string fp8 = generate(text, "k", withTypes({{"T", ScalarType::F64}, {"Q", ScalarType::F8E4M3}}));
  EXPECT_THAT(fp8, HasSubstr("out[0] = double(0x1.cp+8f);"));  // 448
  EXPECT_THAT(fp8, HasSubstr("out[2] = 0x1p-1022;"));
}

TEST(TypeBuiltins, LimitsAreConstValues) {
  // Checked against the C++ numbers, not against the table they come from.
  EXPECT_EQ(typeLimit(BuiltinId::MaxValue, ScalarType::I8)->i, 127);
  EXPECT_EQ(typeLimit(BuiltinId::MinValue, ScalarType::I64)->i, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(typeLimit(BuiltinId::MaxValue, ScalarType::U32)->i, 4294967295);
  EXPECT_EQ(typeLimit(BuiltinId::MaxValue, ScalarType::F32)->f, double(std::numeric_limits<float>::max()));
  EXPECT_EQ(typeLimit(BuiltinId::MinNormal, ScalarType::F64)->f, std::numeric_limits<double>::min());
  EXPECT_EQ(typeLimit(BuiltinId::MaxValue, ScalarType::F16)->f, 65504.0);
  EXPECT_EQ(typeLimit(BuiltinId::MaxValue, ScalarType::BF16)->f, 3.3895313892515355e38);
  EXPECT_EQ(typeLimit(BuiltinId::MaxValue, ScalarType::F8E5M2)->f, 57344.0);
  EXPECT_EQ(typeLimit(BuiltinId::MinNormal, ScalarType::F8E4M3)->f, 1.0 / 64);
  EXPECT_FALSE(typeLimit(BuiltinId::MinNormal, ScalarType::I32));
  auto a = analyze("const QMAX = max_value(i8) * 2\nconst TINY = min_normal(f16)\n");
  ASSERT_FALSE(a->diags.hasErrors()) << a->diags.renderAll();
  EXPECT_EQ(a->result.sema->globals.at("QMAX")->value.i, 254);
  EXPECT_EQ(a->result.sema->globals.at("TINY")->value.f, 1.0 / 16384);
}

TEST(TypeBuiltins, SaturateAndBitcastPrintTheirTargets) {
  const char* text = R"(
@grid(1)
@block(32)
kernel k(x: bf16[N], w: u16[N], q: i8[N], f: f8e5m2[N], u: u32[N]):
    q[0] = saturate(i8, rint(f32(x[0]) * 127.0))
    f[0] = saturate(f8e5m2, f32(x[0]))
    w[0] = bitcast(u16, x[0])
    x[1] = bitcast(bf16, w[0] | u16(1))
    u[0] = bitcast(u32, 1.0)
    u[1] = u32(bitcast(f32, 0x3f800000) > 0.5)
)";
  std::string s = generate(text, "k");
  EXPECT_THAT(s, HasSubstr("q[0] = __spn_saturate<int8_t>(rintf(float(x[0]) * 127.0f));"));
  EXPECT_THAT(s, HasSubstr("f[0] = __spn_saturate_f8e5m2(float(x[0]));"));
  EXPECT_THAT(s, HasSubstr("w[0] = __spn_bitcast<uint16_t, __spn_bf16>(x[0]);"));  // the stored bits
  EXPECT_THAT(s, HasSubstr("x[1] = __spn_bitcast<__spn_bf16, uint16_t>(w[0] | uint16_t(1));"));
  EXPECT_THAT(s, HasSubstr("u[0] = __spn_bitcast<uint32_t, float>(1.0f);"));
  EXPECT_THAT(s, HasSubstr("__spn_bitcast<float, uint32_t>(0x3f800000"));
}

TEST(TypeBuiltins, Errors) {
  auto a = analyze(R"(
@grid(1)
@block(32)
kernel k(x: f32[N], b: bool[N], h: f16[N]):
    x[0] = f32(bitcast(u16, x[0]))
    x[1] = f32(saturate(bool, x[0]))
    x[2] = f32(saturate(i8, b[0]))
    x[3] = f32(bitcast(u32, h[0]))
)");
  EXPECT_THAT(diagIds(*a), ElementsAre("sema-bitcast-size", "sema-type-builtin-type", "sema-type-builtin-type",
                                       "sema-bitcast-size"));
  EXPECT_THAT(a->diags.renderAll(), HasSubstr("bitcast from f16 (16 bits) to u32 (32 bits)"));
}

}  // namespace
}  // namespace spindle::test
