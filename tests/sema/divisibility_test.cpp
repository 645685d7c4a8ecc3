// The divisibility analysis (generator/passes/divisibility.cpp): the power
// of two it proves divides an integer expression, rule by rule, and that it
// proves nothing it may not (an unknown value divides by 1).
#include "passes/divisibility.h"

#include "frontend/ast_walk.h"
#include "sema_test_util.h"

namespace spindle::test {
namespace {

// The divisor of every `probe_NAME = e` at the top of the kernel's body (or
// in its loops), by NAME, under `spec`.
std::map<std::string, int64_t> probes(const std::string& body, const Specialization& spec = {}) {
  auto a = analyze("@grid(1)\n@block(256)\nkernel k(x: f32[M, C], ids: i32[M], n: i32):" + body);
  EXPECT_TRUE(a->diags.diagnostics().empty()) << a->diags.renderAll();
  std::map<std::string, int64_t> out;
  if (!a->result.sema) return out;
  FunctionScope* k = findScope(*a->result.sema, "k");
  Divisibility div(*k, spec);
  std::function<void(const Block&)> walk = [&](const Block& b) {
    for (const auto& s : b) {
      if (const auto* as = s->as<AssignStmt>())
        if (const auto* n = as->target->as<NameExpr>(); n && n->name.rfind("probe_", 0) == 0)
          out[n->name.substr(6)] = div.of(*as->value);
      forEachChild(
          *s, [](const Expr&) {}, [&](const Block& inner) { walk(inner); });
    }
  };
  walk(k->kernel->body);
  return out;
}

TEST(Divisibility, LiteralsProductsAndSums) {
  auto d = probes(R"(
    probe_lit = 24
    probe_zero = 0
    probe_prod = 6 * 4
    probe_sum = 16 + 4
    probe_diff = 32 - 8
    probe_shl = n << 3
    probe_neg = -12
    probe_mod = (n * 8) % 16
)");
  EXPECT_EQ(d["lit"], 8);
  EXPECT_EQ(d["zero"], Divisibility::kZero);
  EXPECT_EQ(d["prod"], 8);
  EXPECT_EQ(d["sum"], 4);
  EXPECT_EQ(d["diff"], 8);
  EXPECT_EQ(d["shl"], 8);
  EXPECT_EQ(d["neg"], 4);
  EXPECT_EQ(d["mod"], 8);
}

TEST(Divisibility, UnknownValuesDivideByOne) {
  auto d = probes(R"(
    ix = ids[block_id()]
    probe_loaded = ix
    probe_param = n
    probe_thread = thread_id()
    probe_dim = C
    probe_div = (n * 8) // 2
    probe_and = n & 8
)");
  EXPECT_EQ(d["loaded"], 1);
  EXPECT_EQ(d["param"], 1);
  EXPECT_EQ(d["thread"], 1);
  EXPECT_EQ(d["dim"], 1);  // no granularity in this specialization
  EXPECT_EQ(d["div"], 1);
  EXPECT_EQ(d["and"], 1);
}

TEST(Divisibility, DimsFromTheSpecialization) {
  const std::string body = R"(
    ix = ids[block_id()]
    probe_row = ix * C
    probe_rows = ix * M
    probe_both = C * M + C
)";
  Specialization spec;
  spec.divisible["C"] = 8;
  spec.staticDims["M"] = 96;
  auto d = probes(body, spec);
  EXPECT_EQ(d["row"], 8);
  EXPECT_EQ(d["rows"], 32);
  EXPECT_EQ(d["both"], 8);
  EXPECT_EQ(probes(body)["row"], 1);
}

TEST(Divisibility, LoopVariablesAndLocals) {
  auto d = probes(R"(
    for c in range(thread_id() * 8, 1000, 256 * 8):
        probe_c = c
    for j in range(16, 1000, 4):
        probe_j = j
    for u in range(0, 1000, n):
        probe_u = u
    for w in range(thread_id(), 1000, 8):
        probe_w = w
    s = 0
    for i in range(10):
        s += 8
        probe_s = s
    t = 0
    for i in range(10):
        t += 8
        t += n
        probe_t = t
    v = 16
    v *= n
    probe_v = v
    probe_m = multiple_of(ids[0], 16)
    probe_m2 = multiple_of(ids[0], 4) * 2
    probe_min = min(n * 4, 8)
    probe_cast = i64(n * 4)
)");
  EXPECT_EQ(d["c"], 8);
  EXPECT_EQ(d["j"], 4);
  EXPECT_EQ(d["u"], 1);  // a run-time step
  EXPECT_EQ(d["w"], 1);  // starts at thread_id()
  EXPECT_EQ(d["s"], 8);
  EXPECT_EQ(d["t"], 1);  // one assignment adds n
  EXPECT_EQ(d["v"], 16);
  EXPECT_EQ(d["m"], 16);
  EXPECT_EQ(d["m2"], 8);
  EXPECT_EQ(d["min"], 4);
  EXPECT_EQ(d["cast"], 4);
}

TEST(Divisibility, StridesOfContiguousTensors) {
  auto a = analyze("@grid(1)\n@block(64)\nkernel k(x: f32[A, B, D]):\n    x[0, 0, 0] = 1.0\n");
  ASSERT_TRUE(a->result.sema);
  FunctionScope* k = findScope(*a->result.sema, "k");
  Specialization spec;
  spec.divisible["B"] = 2;
  spec.divisible["D"] = 4;
  Divisibility div(*k, spec);
  const Symbol& x = *k->params[0];
  EXPECT_EQ(div.strideOf(x, 0), 8);  // B * D
  EXPECT_EQ(div.strideOf(x, 1), 4);  // D
  EXPECT_EQ(div.strideOf(x, 2), 1);
}

}  // namespace
}  // namespace spindle::test

namespace spindle::test {
namespace {

// The run report of kernel k of `text` under `spec` (GeneratedKernel::runReport).
std::vector<std::string> runReport(const std::string& text, const Specialization& spec) {
  DiagnosticEngine diags;
  auto m = CompiledModule::fromString("test.spn", text, diags);
  if (!m) {
    ADD_FAILURE() << diags.renderAll();
    return {};
  }
  return m->generate("k", spec).runReport;
}

// Which run copies become vector accesses, of which word, and why the
// others do not: word sizes from the run's bytes and the start's
// alignment, a run of no whole word, a converting copy, a start on no
// word boundary.
TEST(VectorRuns, WordSizesAndReasons) {
  const std::string text = R"(@grid(M)
@block(32)
kernel k(x: bf16[M, 64], y: f32[M, 64], z: bf16[M, 64]):
    row = block_id()
    a = local(bf16, [8], 0.0)
    b = local(f32, [3], 0.0)
    c = local(bf16, [3], 0.0)
    d = local(f32, [8], 0.0)
    for k in static_range(8):
        a[k] = x[row, 8 + k]
    for k in static_range(3):
        b[k] = y[row, 5 + k]
    for k in static_range(3):
        c[k] = x[row, 0 + k]
    for k in static_range(8):
        d[k] = x[row, 0 + k]
    for k in static_range(4):
        a[k] = z[row, 2 + k]
    for k in static_range(8):
        z[row, 4 + k] = a[k]
    for k in static_range(8):
        z[row, 1 + k] = a[k]
)";
  Specialization spec;
  spec.alignedTensors = {"x", "y", "z"};
  auto r = runReport(text, spec);
  ASSERT_EQ(r.size(), 7u);
  EXPECT_EQ(r[0], "10:16: vector: x[row, 8 + k]: load of a run of 8 bf16 (16 bytes) as 1 word of 16 bytes");
  EXPECT_EQ(r[1], "12:16: vector: y[row, 5 + k]: load of a run of 3 f32 (12 bytes) as 3 words of 4 bytes");
  EXPECT_EQ(
      r[2],
      "14:16: scalar: x[row, 0 + k]: load of a run of 3 bf16 (6 bytes): a run of 6 bytes is not a multiple of 4, 8 "
      "or 16 bytes");
  EXPECT_EQ(r[3],
            "16:16: scalar: x[row, 0 + k]: load of a run of 8 bf16 (16 bytes): the local array 'd' is f32, the "
            "tensor bf16: a copy converts");
  EXPECT_EQ(r[4], "18:16: vector: z[row, 2 + k]: load of a run of 4 bf16 (8 bytes) as 2 words of 4 bytes");
  EXPECT_EQ(r[5], "20:9: vector: z[row, 4 + k]: store of a run of 8 bf16 (16 bytes) as 2 words of 8 bytes");
  EXPECT_EQ(r[6],
            "22:9: scalar: z[row, 1 + k]: store of a run of 8 bf16 (16 bytes): `1` is not a known multiple of 8 "
            "(known: 1); state it with multiple_of(1, 8)");
}

}  // namespace
}  // namespace spindle::test
