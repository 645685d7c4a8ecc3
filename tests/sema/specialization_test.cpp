// Shape-keyed specialization: static dims become constexpr and enter the
// key, dynamic dims become parameters and do not, and every input the
// printer reads is in the key.
#include <functional>

#include "sema_test_util.h"

namespace spindle::test {
namespace {

const char* kModule = R"(
const BLOCK = 64
@grid(M)
@block(BLOCK)
kernel scale[T](x: T[M, N], y: T[M, N], a: f32):
    row = block_id()
    assert row < M, "one block per row"
    for j in range(thread_id(), N, BLOCK):
        y[row, j] = T(a * f32(x[row, j]))

@grid(1)
@block(BLOCK)
@static(K)
kernel fill(z: f32[K]):
    for j in range(thread_id(), K, BLOCK):
        z[j] = 1.0

@grid(cdiv(N, BLOCK * 4))
@block(BLOCK)
kernel scale_runs(x: f32[N], y: f32[N], z: f32[N], w: f32[N]):
    start = (i64(block_id()) * BLOCK + thread_id()) * 4
    for k in static_range(4):
        if start + k < N:
            y[k + start] = x[start + k] * z[start] * w[start + k + 1]
    for k in range(4):
        w[start + k] = 0.0

@grid(M)
@block(BLOCK)
kernel row_runs(x: f32[M, N], y: f32[M, N], z: f32[K, L]):
    j = thread_id() * 4
    for k in static_range(4):
        if j + k < N:
            y[block_id(), j + k] = x[block_id(), j + k] + z[0, 0]

@grid(M)
@block(BLOCK)
kernel copy_view(x: f32[M, N] strided, y: f32[M, N]):
    for j in range(thread_id(), N, BLOCK):
        y[block_id(), j] = x[block_id(), j]

@grid(M)
@block(BLOCK)
kernel strided_runs(x: f32[M, N] strided, y: f32[M, N], v: f32[N] strided):
    j = thread_id() * 4
    for k in static_range(4):
        if j + k < N:
            y[block_id(), j + k] = x[block_id(), j + k] + v[j + k]

@grid(M)
@block(BLOCK)
kernel expression_runs(x: f32[M, 2 * D], y: f32[M, D]):
    j = thread_id() * 4
    for k in static_range(4):
        if j + k < D:
            y[block_id(), j + k] = x[block_id(), j + k] * x[block_id(), D + j + k]
)";

struct Variant {
  const char* what;
  std::string kernel;
  Specialization spec;
};

std::vector<Variant> variants() {
  Specialization base;
  base.typeArgs = {{"T", ScalarType::F32}};
  std::vector<Variant> v = {{"base", "scale", base}};
  auto with = [&](const char* what, auto change) {
    Variant r{what, "scale", base};
    change(r);
    v.push_back(r);
  };
  with("static N", [](Variant& r) { r.spec.staticDims["N"] = 1024; });
  with("other static N", [](Variant& r) { r.spec.staticDims["N"] = 2048; });
  with("static M and N", [](Variant& r) { r.spec.staticDims = {{"M", 8}, {"N", 1024}}; });
  with("T = f16", [](Variant& r) { r.spec.typeArgs["T"] = ScalarType::F16; });
  with("T = f64", [](Variant& r) { r.spec.typeArgs["T"] = ScalarType::F64; });
  with("no line directives", [](Variant& r) { r.spec.lineDirectives = false; });
  with("checked", [](Variant& r) { r.spec.checked = true; });
  // A non-generic kernel of the module, with `change` applied on top.
  auto onKernel = [&](const char* what, const char* kernel, auto change) {
    with(what, [&](Variant& r) {
      r.kernel = kernel;
      r.spec.typeArgs.clear();
      change(r.spec);
    });
  };
  auto asIs = [](Specialization&) {};
  onKernel("other kernel", "fill", [](Specialization& r) { r.staticDims = {{"K", 256}}; });
  onKernel("strided view", "copy_view", asIs);
  onKernel("strided view passed contiguous", "copy_view", [](Specialization& r) { r.contiguousTensors = {"x"}; });
  onKernel("runs", "scale_runs", asIs);
  onKernel("runs, x aligned", "scale_runs", [](Specialization& r) { r.alignedTensors = {"x"}; });
  onKernel("runs, x and y aligned", "scale_runs", [](Specialization& r) { r.alignedTensors = {"x", "y"}; });
  onKernel("row runs", "row_runs", asIs);
  onKernel("row runs, N divisible", "row_runs", [](Specialization& r) { r.divisible = {{"N", 16}}; });
  onKernel("row runs, N a multiple of 8", "row_runs", [](Specialization& r) { r.divisible = {{"N", 8}}; });
  onKernel("strided view, unit inner stride", "copy_view", [](Specialization& r) { r.unitStrideTensors = {"x"}; });
  onKernel("strided runs", "strided_runs", asIs);
  onKernel("strided runs, unit inner stride", "strided_runs", [](Specialization& r) { r.unitStrideTensors = {"x"}; });
  onKernel("strided runs, unit inner stride, row stride a multiple of 8", "strided_runs", [](Specialization& r) {
    r.unitStrideTensors = {"x"};
    r.divisible = {{"x.stride0", 8}};
  });
  onKernel("strided runs, unit inner stride, row stride a multiple of 16", "strided_runs", [](Specialization& r) {
    r.unitStrideTensors = {"x"};
    r.divisible = {{"x.stride0", 16}};
  });
  onKernel("expression rows", "expression_runs", asIs);
  onKernel("expression rows, 2 * D a multiple of 16", "expression_runs", [](Specialization& r) {
    r.divisible = {{"x.dim1", 16}};
  });
  return v;
}

// kModule through the public API; null (and a test failure) on errors.
std::unique_ptr<CompiledModule> compileTestModule() {
  DiagnosticEngine diags;
  auto m = CompiledModule::fromString("test.spn", kModule, diags);
  EXPECT_TRUE(m) << diags.renderAll();
  return m;
}

// `call` must throw a GeneratorError whose message contains `needle`.
void expectGeneratorError(const std::function<void()>& call, const std::string& needle) {
  try {
    call();
    ADD_FAILURE() << "no error; expected one containing: " << needle;
  } catch (const GeneratorError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(SpecializationKey, EveryPrinterInputChangesTheKeyAndEqualKeysPrintEqualSources) {
  auto module = compileTestModule();
  ASSERT_TRUE(module);
  std::vector<std::pair<std::string, std::string>> keyed;  // key, source
  for (const auto& v : variants()) {
    std::string key = module->specializationKey(v.kernel, v.spec);
    std::string source = module->generate(v.kernel, v.spec).source;
    for (const auto& [otherKey, otherSource] : keyed) {
      // Different inputs: the sources differ, and so must the keys.
      EXPECT_NE(source, otherSource) << v.what;
      EXPECT_NE(key, otherKey) << v.what;
    }
    keyed.push_back({key, source});
    // The same specialization again: the same key and byte-identical source.
    EXPECT_EQ(key, module->specializationKey(v.kernel, v.spec)) << v.what;
    EXPECT_EQ(source, module->generate(v.kernel, v.spec).source) << v.what;
  }
}

TEST(SpecializationKey, ModuleTextIsPartOfTheKey) {
  DiagnosticEngine diags;
  auto a = CompiledModule::fromString("test.spn", kModule, diags);
  auto b = CompiledModule::fromString(
      "test.spn", std::string(kModule) + "\n# an appended comment: same kernels, different text\n", diags);
  ASSERT_TRUE(a && b) << diags.renderAll();
  Specialization r;
  r.typeArgs = {{"T", ScalarType::F32}};
  EXPECT_NE(a->specializationKey("scale", r), b->specializationKey("scale", r));
}

TEST(Specialization, StaticDimsAreConstexprAndDynamicDimsAreParameters) {
  Specialization spec;
  spec.typeArgs["T"] = ScalarType::F32;
  spec.staticDims["N"] = 1024;
  std::string hip = generate(kModule, "scale", spec);
  EXPECT_NE(hip.find("constexpr int64_t N = 1024;  // static dim"), std::string::npos) << hip;
  EXPECT_NE(hip.find("float a, int64_t M) {"), std::string::npos) << hip;
  EXPECT_EQ(hip.find("int64_t N)"), std::string::npos) << hip;
  EXPECT_NE(hip.find("// specialization:  M dynamic, N = 1024 (static), T = f32"), std::string::npos) << hip;

  DiagnosticEngine diags;
  auto m = CompiledModule::fromString("test.spn", kModule, diags);
  auto g = m->generate("scale", spec);
  ASSERT_EQ(g.abi.size(), 4u);  // x, y, a, M
  EXPECT_EQ(g.abi[3].kind, AbiArgKind::Dim);
  EXPECT_EQ(g.abi[3].dimSymbol, "M");
}

TEST(Specialization, DynamicDimValuesNeverReachTheKey) {
  DiagnosticEngine diags;
  auto m = CompiledModule::fromString("test.spn", kModule, diags);
  Specialization spec;
  spec.typeArgs["T"] = ScalarType::F32;
  std::string key = m->specializationKey("scale", spec);
  // Launch geometry for two shapes uses the same key: M and N are dynamic.
  auto g1 = m->launchGeometry("scale", spec, {{"M", 10}, {"N", 7}});
  auto g2 = m->launchGeometry("scale", spec, {{"M", 99}, {"N", 3}});
  EXPECT_EQ(g1.grid[0], 10);
  EXPECT_EQ(g2.grid[0], 99);
  EXPECT_EQ(g1.block[0], 64);
  EXPECT_EQ(key, m->specializationKey("scale", spec));
  EXPECT_EQ(key.find("M="), std::string::npos) << key;
}

TEST(Specialization, BadRequestsNameTheOffendingValues) {
  auto m = compileTestModule();
  ASSERT_TRUE(m);
  auto expectError = [&](const std::string& kernel, const Specialization& spec, const std::string& needle) {
    expectGeneratorError([&] { m->generate(kernel, spec); }, needle);
  };
  Specialization f32;
  f32.typeArgs["T"] = ScalarType::F32;
  expectError("nope", f32, "no kernel named 'nope'");
  expectError("scale", {}, "kernel 'scale' is generic in T; bind it with --dtype T=TYPE");
  expectError("fill", {}, "declares @static(K) but no value was given for it");
  Specialization bad = f32;
  bad.staticDims["Q"] = 3;
  expectError("scale", bad, "has no dim symbol 'Q'");
  bad = f32;
  bad.staticDims["N"] = 0;
  expectError("scale", bad, "static dim N = 0 must be at least 1");
  bad.staticDims["N"] = (int64_t(1) << 62) + 1;  // loops to a dim rely on dims of at most 2^62
  expectError("scale", bad, "static dim N = 4611686018427387905 must be at least 1 and at most 2^62");
  bad = f32;
  bad.typeArgs["U"] = ScalarType::F32;
  expectError("scale", bad, "has no type parameter 'U'");
}

// A strided parameter known to be contiguous at launch is addressed through
// its dims and its strides leave the ABI; the analysis is left as it was.
TEST(Specialization, ContiguousViewsOfStridedParameters) {
  auto m = compileTestModule();
  ASSERT_TRUE(m);
  Specialization contiguous;
  contiguous.contiguousTensors = {"x"};
  auto fast = m->generate("copy_view", contiguous);
  auto general = m->generate("copy_view", {});
  EXPECT_NE(fast.source.find("y[int(blockIdx.x) * N + j] = x[int(blockIdx.x) * N + j];"), std::string::npos)
      << fast.source;
  EXPECT_EQ(fast.source.find("x_stride"), std::string::npos) << fast.source;
  EXPECT_NE(general.source.find("x[int(blockIdx.x) * x_stride0 + j * x_stride1]"), std::string::npos) << general.source;
  EXPECT_EQ(fast.abi.size(), 4u);     // x, y, M, N
  EXPECT_EQ(general.abi.size(), 6u);  // x, x_stride0, x_stride1, y, M, N
  EXPECT_NE(fast.key, general.key);
  // The general form again: nothing of the contiguous one leaked into sema.
  EXPECT_EQ(m->generate("copy_view", {}).source, general.source);
  contiguous.contiguousTensors = {"y"};
  expectGeneratorError([&] { m->generate("copy_view", contiguous); },  // y is not strided
                       "kernel 'copy_view' has no strided tensor parameter 'y' to treat as contiguous");
}

// Tensors indexed in runs (last index `e + k` or `k + e`, k a static_range
// variable) are the ones whose alignment is specialized on; an offset run
// (`e + k + 1`), a dynamic loop variable or a plain index do not count.
TEST(Specialization, TensorsAccessedInRunsAreFound) {
  auto m = compileTestModule();
  ASSERT_TRUE(m);
  std::map<std::string, bool> runs;
  for (const auto& k : m->kernels())
    if (k.name == "scale_runs")
      for (const auto& p : k.params) runs[p.name] = p.accessedInRuns;
  EXPECT_EQ(runs, (std::map<std::string, bool>{{"x", true}, {"y", true}, {"z", false}, {"w", false}}));
}

// A tensor the runtime found 16-byte aligned is declared so to the compiler
// at the top of the kernel, so neighbouring accesses may become vector ones;
// nothing else changes, and only tensors accessed in runs can be named.
TEST(Specialization, AlignedTensorsAreAssumedAlignedAtKernelEntry) {
  auto m = compileTestModule();
  ASSERT_TRUE(m);
  Specialization aligned;
  aligned.alignedTensors = {"x"};
  auto fast = m->generate("scale_runs", aligned);
  auto general = m->generate("scale_runs", {});
  EXPECT_NE(fast.source.find("x = __spn_assume_aligned<16>(x);"), std::string::npos) << fast.source;
  EXPECT_EQ(fast.source.find("y = __spn_assume_aligned"), std::string::npos) << fast.source;
  EXPECT_EQ(general.source.find("= __spn_assume_aligned"), std::string::npos) << general.source;
  EXPECT_NE(fast.source.find("x 16-byte aligned"), std::string::npos);  // the header says why
  EXPECT_EQ(fast.abi.size(), general.abi.size());
  EXPECT_NE(fast.key, general.key);
  aligned.alignedTensors = {"N"};
  expectGeneratorError([&] { m->generate("scale_runs", aligned); },
                       "kernel 'scale_runs' has no tensor parameter 'N' to treat as 16-byte aligned");
  aligned.alignedTensors = {"z"};
  expectGeneratorError([&] { m->generate("scale_runs", aligned); },
                       "kernel 'scale_runs': tensor 'z' is never indexed in runs of consecutive elements");
}

// A dynamic dim that places the rows of a tensor indexed in runs may be
// known to be a multiple of 16: the kernel says so to the compiler, so an
// aligned tensor's rows stay aligned. Other dims and static ones are refused.
TEST(Specialization, DivisibleRowDimsAreAssumedAtKernelEntry) {
  auto m = compileTestModule();
  ASSERT_TRUE(m);
  for (const auto& k : m->kernels()) {
    if (k.name == "row_runs") {
      EXPECT_EQ(k.runRowDims, std::vector<std::string>{"N"});  // z is not run-indexed
    }
    if (k.name == "scale_runs") {
      EXPECT_TRUE(k.runRowDims.empty());  // 1-D tensors: no rows
    }
  }
  Specialization divisible;
  divisible.divisible = {{"N", 16}};
  auto fast = m->generate("row_runs", divisible);
  auto general = m->generate("row_runs", {});
  EXPECT_NE(fast.source.find("__builtin_assume(N % 16 == 0);  // a multiple of 16 at launch"), std::string::npos)
      << fast.source;
  EXPECT_EQ(general.source.find("__builtin_assume("), std::string::npos) << general.source;
  EXPECT_NE(fast.source.find("L dynamic, N % 16 == 0\n"), std::string::npos);  // the header comment
  EXPECT_NE(fast.key, general.key);
  // A coarser granularity is its own specialization, said as such.
  divisible.divisible = {{"N", 8}};
  auto eight = m->generate("row_runs", divisible);
  EXPECT_NE(eight.source.find("__builtin_assume(N % 8 == 0);  // a multiple of 8 at launch"), std::string::npos)
      << eight.source;
  EXPECT_NE(eight.source.find("L dynamic, N % 8 == 0\n"), std::string::npos);
  EXPECT_NE(eight.source.find("--divisible N=8\n"), std::string::npos);  // the "Regenerate with" line
  EXPECT_NE(eight.key, fast.key);
  divisible.divisible = {{"M", 16}};
  expectGeneratorError([&] { m->generate("row_runs", divisible); },
                       "kernel 'row_runs': 'M' is not a value that places the rows of a tensor indexed in runs");
  divisible.divisible = {{"N", 3}};  // built by hand: the flag parser refuses it first
  expectGeneratorError([&] { m->generate("row_runs", divisible); }, "the granularity must be 2, 4, 8 or 16");
  divisible.divisible = {{"N", 16}};
  divisible.staticDims = {{"N", 64}};
  expectGeneratorError([&] { m->generate("row_runs", divisible); }, "dim N is static");
}

// A strided parameter whose innermost stride is 1 at launch is addressed
// without a multiply on its last axis, and that stride leaves the ABI (and a
// rank-1 one is indexed directly); its other strides stay.
TEST(Specialization, UnitInnerStrideDropsTheLastStride) {
  auto m = compileTestModule();
  ASSERT_TRUE(m);
  Specialization unit;
  unit.unitStrideTensors = {"x", "v"};
  auto fast = m->generate("strided_runs", unit);
  auto general = m->generate("strided_runs", {});
  EXPECT_NE(fast.source.find("x[int(blockIdx.x) * x_stride0 + j + k]"), std::string::npos) << fast.source;
  EXPECT_NE(fast.source.find("v[j + k]"), std::string::npos) << fast.source;
  EXPECT_EQ(fast.source.find("x_stride1"), std::string::npos) << fast.source;
  EXPECT_EQ(fast.source.find("v_stride0"), std::string::npos) << fast.source;
  EXPECT_NE(general.source.find("x[int(blockIdx.x) * x_stride0 + (j + k) * x_stride1]"), std::string::npos)
      << general.source;
  EXPECT_NE(general.source.find("v[(j + k) * v_stride0]"), std::string::npos) << general.source;
  EXPECT_NE(fast.source.find("N dynamic, v inner stride 1, x inner stride 1\n"), std::string::npos);  // the header
  EXPECT_NE(fast.source.find("tensor f32[M, N] strided, inner stride 1, read-only"), std::string::npos);
  EXPECT_EQ(general.abi.size(), 8u);  // x, x_stride0, x_stride1, y, v, v_stride0, M, N
  ASSERT_EQ(fast.abi.size(), 6u);     // x, x_stride0, y, v, M, N
  EXPECT_EQ(fast.abi[1].kind, AbiArgKind::Stride);
  EXPECT_EQ(fast.abi[1].axis, 0);
  EXPECT_EQ(fast.abi[3].kind, AbiArgKind::TensorPointer);  // v, with no stride after it
  EXPECT_EQ(fast.abi[4].kind, AbiArgKind::Dim);
  EXPECT_NE(fast.key, general.key);
  EXPECT_EQ(m->generate("strided_runs", {}).source, general.source);  // nothing leaked into sema

  unit.unitStrideTensors = {"y"};
  expectGeneratorError([&] { m->generate("strided_runs", unit); },
                       "kernel 'strided_runs' has no strided tensor parameter 'y' to address with unit inner stride "
                       "(its strided tensors: x, v)");
  unit.unitStrideTensors = {"x"};
  unit.contiguousTensors = {"x"};
  expectGeneratorError([&] { m->generate("strided_runs", unit); }, "drop --unit-stride x");
}

// An outlined closure that reads a unit-stride tensor takes only the strides
// its addressing uses.
TEST(Specialization, ClosuresCaptureOnlyTheStridesLeft) {
  const char* text = R"(
@grid(N)
@block(64)
kernel col_sum(a: f32[M, N] strided, out: f32[N]):
    j = block_id()
    def total() -> f32:
        acc = 0.0
        for i in range(thread_id(), M, 64):
            acc += a[i, j]
        return block_sum(acc)
    out[j] = total()
)";
  DiagnosticEngine diags;
  auto m = CompiledModule::fromString("closure.spn", text, diags);
  ASSERT_TRUE(m) << diags.renderAll();
  Specialization unit;
  unit.unitStrideTensors = {"a"};
  std::string fast = m->generate("col_sum", unit).source;
  std::string general = m->generate("col_sum", {}).source;
  EXPECT_NE(
      fast.find("float col_sum_total(\n    const float* __restrict__ a, int64_t a_stride0, int32_t j, int64_t M,"),
      std::string::npos)
      << fast;
  EXPECT_NE(fast.find("acc += a[i * a_stride0 + j];"), std::string::npos) << fast;
  EXPECT_NE(fast.find("col_sum_total(a, a_stride0, j, M, __spn_reduce_scratch)"), std::string::npos) << fast;
  EXPECT_EQ(fast.find("a_stride1"), std::string::npos) << fast;
  EXPECT_NE(general.find("acc += a[i * a_stride0 + j * a_stride1];"), std::string::npos) << general;
  EXPECT_NE(general.find("col_sum_total(a, a_stride0, a_stride1, j, M, __spn_reduce_scratch)"), std::string::npos)
      << general;
}

// A strided tensor with unit inner stride indexed in runs: its row strides
// place its rows, so their granularity is specialized on like a dim's.
TEST(Specialization, RowStridesOfUnitStrideTensorsMayBeDivisible) {
  auto m = compileTestModule();
  ASSERT_TRUE(m);
  Specialization spec;
  spec.unitStrideTensors = {"x"};
  spec.alignedTensors = {"x"};
  spec.divisible = {{"x.stride0", 8}};
  auto fast = m->generate("strided_runs", spec);
  EXPECT_NE(fast.source.find("__builtin_assume(x_stride0 % 8 == 0);  // a multiple of 8 at launch"), std::string::npos)
      << fast.source;
  EXPECT_NE(fast.source.find("x.stride0 % 8 == 0"), std::string::npos);  // the header comment
  EXPECT_NE(fast.source.find("--unit-stride x --aligned x --divisible x.stride0=8\n"), std::string::npos);
  spec.unitStrideTensors.clear();  // the general form has no use for it
  expectGeneratorError([&] { m->generate("strided_runs", spec); },
                       "'x.stride0' is not a value that places the rows of a tensor indexed in runs here, so its "
                       "divisibility cannot matter (such values: N; a row stride places rows with --unit-stride x "
                       "only)");
  spec.unitStrideTensors = {"x"};
  spec.divisible = {{"x.stride1", 8}};  // the inner stride is 1: no row stride
  expectGeneratorError([&] { m->generate("strided_runs", spec); }, "(such values: N, x.stride0)");
}

// A dim expression that places rows (axis 1 of x: f32[M, 2 * D]) has its
// value's granularity specialized on, per tensor axis.
TEST(Specialization, DimExpressionsThatPlaceRowsMayBeDivisible) {
  auto m = compileTestModule();
  ASSERT_TRUE(m);
  Specialization spec;
  spec.divisible = {{"x.dim1", 16}, {"D", 8}};
  auto fast = m->generate("expression_runs", spec);
  EXPECT_NE(fast.source.find("__builtin_assume((2 * D) % 16 == 0);  // a multiple of 16 at launch"), std::string::npos)
      << fast.source;
  EXPECT_NE(fast.source.find("__builtin_assume(D % 8 == 0);"), std::string::npos) << fast.source;
  EXPECT_NE(fast.source.find("--divisible D=8 --divisible x.dim1\n"), std::string::npos) << fast.source;
  for (const char* name : {"x.dim0", "y.dim1", "x.stride0"}) {
    spec.divisible = {{name, 16}};
    expectGeneratorError([&] { m->generate("expression_runs", spec); }, "(such values: D, x.dim1");
  }
  spec.divisible = {{"x.dim1", 16}};
  spec.staticDims = {{"D", 64}};  // 2 * D is then a number
  expectGeneratorError([&] { m->generate("expression_runs", spec); }, "(such values: none)");
}

// A swizzled shared buffer's layout needs (docs/language.md 5.4) that only
// a specialization can check: a swizzle that is a body const of sizeof(T),
// a row whose bytes depend on T, a row count that is a dim. Each error is
// located, and the specializations that meet them generate.
TEST(Specialization, SwizzledBuffersAreCheckedWhenGenerated) {
  const char* text = R"(
@grid(1)
@block(64)
kernel a[T](x: T[N]):
    const SW = 16 * sizeof(T)
    S = shared(T, [16, 64], swizzle=SW)
    S[0, 0] = x[0]
    x[1] = S[0, 0]

@grid(1)
@block(64)
kernel b[T](x: T[N]):
    S = shared(T, [16, 48], swizzle=64)
    S[0, 0] = x[0]
    x[1] = S[0, 0]

@grid(1)
@block(64)
kernel c(x: f32[R]):
    S = shared(f32, [R, 32], swizzle=128)
    S[0, 0] = x[0]
    x[1] = S[0, 0]
)";
  DiagnosticEngine diags;
  auto m = CompiledModule::fromString("test.spn", text, diags);
  ASSERT_TRUE(m) << diags.renderAll();
  Specialization spec;
  spec.typeArgs = {{"T", ScalarType::F16}};
  EXPECT_NE(m->generate("a", spec).source.find("__spn_swizzled<32>(S, 16, 0, 0) = x[0];"), std::string::npos);
  spec.typeArgs = {{"T", ScalarType::F64}};
  EXPECT_NE(m->generate("a", spec).source.find("__spn_swizzled<128>(S, 16, 0, 0) = x[0];"), std::string::npos);
  spec.typeArgs = {{"T", ScalarType::I8}};
  expectGeneratorError([&] { m->generate("a", spec); },
                       "test.spn:6:37: error: the swizzle of shared buffer 'S' is the bytes of its panel rows, 32, 64 "
                       "or 128 (wgmma's swizzled layouts), not 16 [sema-swizzle-value]");
  spec.typeArgs = {{"T", ScalarType::F16}};
  expectGeneratorError([&] { m->generate("b", spec); },
                       "test.spn:13:24: error: a row of swizzled shared buffer 'S' is 96 bytes (48 columns of f16), "
                       "not a multiple of its swizzle (64 bytes)");
  spec.typeArgs = {{"T", ScalarType::F32}};
  EXPECT_NO_THROW(m->generate("b", spec));
  spec.typeArgs = {};
  expectGeneratorError([&] { m->generate("c", spec); },
                       "test.spn:20:22: error: swizzled shared buffer 'S' needs its shape when the kernel is generated "
                       "(its layout is checked then), but 'R' has no compile-time value; make its dims static (@static "
                       "or --static) [spec-swizzle-shape]");
  spec.staticDims = {{"R", 12}};
  expectGeneratorError([&] { m->generate("c", spec); },
                       "test.spn:20:22: error: swizzled shared buffer 'S' has 12 rows, not a multiple of 8");
  spec.staticDims = {{"R", 16}};
  EXPECT_NE(m->generate("c", spec).source.find("alignas(1024) __shared__ float S[R * 32];"), std::string::npos);
}

// What only a specialization can tell: a dim used where a compile-time
// value is needed must be static there. Each error is located and names it.
TEST(Specialization, CompileTimeUsesOfDynamicDimsAreLocatedErrors) {
  const char* text = R"(
@grid(M)
@block(B)
kernel k(x: f32[M, N, B]):
    acc = local(f32, [N], 0.0)
    for i in static_range(N):
        acc[i] = x[block_id(), i, thread_id()]
    x[block_id(), 0, thread_id()] = acc[0]
)";
  DiagnosticEngine diags;
  auto m = CompiledModule::fromString("test.spn", text, diags);
  ASSERT_TRUE(m) << diags.renderAll();
  auto expectError = [&](const Specialization& spec, const std::string& needle) {
    expectGeneratorError([&] { m->generate("k", spec); }, needle);
  };
  Specialization spec;
  expectError(spec,
              "test.spn:3:8: error: @block needs an upper bound known at generation, but 'B' is a dynamic dim, "
              "known only at launch; bound it (min(B, 1024)) or make B static [spec-block-unbounded]");
  spec.staticDims["B"] = 2048;
  expectError(spec, "test.spn:3:8: error: @block must be an integer from 1 to 1024, got 2048 [spec-block-range]");
  spec.staticDims["B"] = 64;
  expectError(spec,
              "test.spn:5:11: error: local buffer 'acc' needs a compile-time size, but dim 'N' is dynamic in "
              "this specialization; add it to @static or specialize it (--static N=VALUE) [spec-local-dynamic-size]");
  spec.staticDims["N"] = 4;
  EXPECT_NO_THROW(m->generate("k", spec));
  // Launch geometry needs every dim @grid uses.
  expectGeneratorError(
      [&] {
        m->launchGeometry("k", spec, {{"N", 4}, {"B", 64}});
      },
      "test.spn:2:7: error: cannot evaluate @grid: 'M' has no compile-time value [spec-grid-eval]");
  // A float const makes the grid a float: refused at launch, with the reason.
  const char* floatGridText = R"(
const HALF = 1.5
@grid(cdiv(N, 64) * HALF)
@block(64)
kernel f(x: f32[N]):
    x[0] = 1.0
)";
  auto f = CompiledModule::fromString("test.spn", floatGridText, diags);
  ASSERT_TRUE(f) << diags.renderAll();
  expectGeneratorError(
      [&] {
        f->launchGeometry("f", {}, {{"N", 128}});
      },
      "test.spn:3:7: error: cannot evaluate @grid: the grid must be an integer [spec-grid-eval]");
  // static_range over a dynamic bound, with the buffer sized statically.
  const char* rangeText = R"(
@grid(M)
@block(32)
kernel r(x: f32[M, N]):
    acc = local(f32, [4], 0.0)
    for i in static_range(N):
        acc[0] += x[block_id(), i]
    x[block_id(), 0] = acc[0]
)";
  auto r = CompiledModule::fromString("test.spn", rangeText, diags);
  ASSERT_TRUE(r) << diags.renderAll();
  expectGeneratorError(
      [&] { r->generate("r", {}); },
      "test.spn:6:27: error: static_range needs compile-time bounds, but 'N' has no compile-time value");
}

// resident_blocks() in @grid: asked once, after the block and the dynamic
// shared bytes are known, and only through the caller's query.
// The matrix API needs whole warps (docs/language.md 8.11): a block that is
// not a multiple of 64 threads, or follows the launch, is refused at the
// first matrix builtin; 64 threads (one AMD wave, two NVIDIA warps) are fine.
TEST(Specialization, MatrixBuiltinsNeedWholeWarps) {
  auto source = [](const std::string& block) {
    return "@grid(1)\n@block(" + block +
           ")\nkernel k(A: f16[M, K], C: f32[M, K]):\n    acc = mma_zero(f32, [1, 1])\n    a = mma_a(f16, [1])\n"
           "    b = mma_b(f16, [1])\n    mma_load_a(a[0], A, 0, 0)\n    mma_load_b_t(b[0], A, 0, 0)\n"
           "    acc[0, 0] = mma(a[0], b[0], acc[0, 0])\n    for r, c, v in elements(acc[0, 0]):\n"
           "        if r < M and c < K:\n            C[r, c] = v\n";
  };
  for (const std::string block : {"96", "min(M, 128)"}) {
    DiagnosticEngine diags;
    auto m = CompiledModule::fromString("test.spn", source(block), diags);
    ASSERT_TRUE(m) << diags.renderAll();
    const std::string why = block == "96" ? "is not a whole number" : "follows the launch";
    expectGeneratorError(
        [&] { m->generate("k", Specialization{}); },
        "test.spn:7:5: error: 'mma_load_a' needs every lane of a warp, but this kernel's block " + why);
  }
  DiagnosticEngine diags;
  auto m = CompiledModule::fromString("test.spn", source("64"), diags);
  ASSERT_TRUE(m) << diags.renderAll();
  EXPECT_NO_THROW(m->generate("k", Specialization{}));
}

// dot (docs/language.md 8.13) needs whole groups of four warps at both
// widths: 64 threads (one AMD wave, two NVIDIA warps) is refused at the
// dot, 256 (a group of AMD waves, two of NVIDIA warps) is fine. Its accumulator is named only in
// the kernel's body: a closure that reads it is refused where it does.
TEST(Specialization, DotNeedsWholeWarpGroupsAndItsAccumulatorStaysInTheBody) {
  auto source = [](const std::string& block, bool closure) {
    std::string s = "@grid(1)\n@block(" + block +
                    ")\nkernel k(A: f16[M, 16], B: f16[16, 16], C: f32[64, 16]):\n"
                    "    As = shared(f16, [64, 16], swizzle=32)\n    Bs = shared(f16, [16, 16], swizzle=32)\n"
                    "    acc = mma_zero(f32, [1, 1])\n    dot(acc, As, 0, 0, Bs, 0, 0, 16)\n";
    if (closure)
      s += "    def store():\n        for r, c, v in elements(acc[0, 0]):\n            C[r, c] = v\n    store()\n";
    else s += "    mma_store(C, 0, 0, acc[0, 0])\n";
    return s;
  };
  // A block that follows the launch may end in a partial warp: the matrix
  // API's first rule says so first.
  for (const auto& [block, want] : std::vector<std::pair<std::string, std::string>>{
           {"64", "'dot' needs the four warps of each group, but this kernel's block is not a whole number of groups"},
           {"min(M, 256)", "'dot' needs every lane of a warp, but this kernel's block follows the launch"}}) {
    DiagnosticEngine diags;
    auto m = CompiledModule::fromString("test.spn", source(block, false), diags);
    ASSERT_TRUE(m) << diags.renderAll();
    expectGeneratorError([&] { m->generate("k", Specialization{}); }, "test.spn:7:5: error: " + want);
  }
  {
    DiagnosticEngine diags;
    auto m = CompiledModule::fromString("test.spn", source("256", true), diags);
    ASSERT_TRUE(m) << diags.renderAll();
    expectGeneratorError([&] { m->generate("k", Specialization{}); },
                         "test.spn:9:33: error: 'acc' is updated by dot, so only the kernel body that declares it may "
                         "use it");
  }
  DiagnosticEngine diags;
  auto m = CompiledModule::fromString("test.spn", source("256", false), diags);
  ASSERT_TRUE(m) << diags.renderAll();
  EXPECT_NO_THROW(m->generate("k", Specialization{}));
}

TEST(Specialization, GridAsksResidentBlocksWithTheBlockAndSharedBytes) {
  const char* text = R"(
@grid(min(cdiv(N, 1024), resident_blocks()), max(resident_blocks() // 4, 1))
@block(128, 2)
kernel k(x: f32[N], h: i32[B]):
    counts = shared(i32, [B])
    counts[thread_id()] = 0
    sync()
    tile = i64(block_id())
    while tile < cdiv(N, 1024):
        tile += grid_dim()
)";
  DiagnosticEngine diags;
  auto m = CompiledModule::fromString("test.spn", text, diags);
  ASSERT_TRUE(m) << diags.renderAll();
  EXPECT_TRUE(m->findKernel("k")->gridUsesResidentBlocks);
  int calls = 0;
  int64_t seenThreads = 0;
  uint64_t seenBytes = 0;
  ResidentBlocksQuery query = [&](int64_t threads, uint64_t bytes) {
    ++calls;
    seenThreads = threads;
    seenBytes = bytes;
    return int64_t(528);
  };
  // 100 tiles fit in one wave of 528 blocks; 1000 do not.
  auto small = m->launchGeometry("k", {}, {{"N", 100 * 1024}, {"B", 100}}, query);
  EXPECT_EQ(small.grid[0], 100);
  EXPECT_EQ(small.grid[1], 132);
  EXPECT_EQ(calls, 1);  // two uses, one question
  EXPECT_EQ(seenThreads, 256);
  EXPECT_EQ(seenBytes, 400u);  // 100 i32, 16-byte aligned
  auto large = m->launchGeometry("k", {}, {{"N", 1000 * 1024}, {"B", 1000}}, query);
  EXPECT_EQ(large.grid[0], 528);
  EXPECT_EQ(seenBytes, 4000u);
  // Without a device there is no answer, and the error says so.
  expectGeneratorError(
      [&] {
        m->launchGeometry("k", {}, {{"N", 1024}, {"B", 4}});
      },
      "test.spn:2:26: error: cannot evaluate @grid: resident_blocks() is known only when launching "
      "on a device [spec-grid-eval]");
  // The host launcher asks the HIP (or CUDA) occupancy API the same question.
  std::string hip = m->generate("k", {}).source;
  EXPECT_NE(hip.find("const int64_t resident_blocks = __spn_resident_blocks(reinterpret_cast<const void*>(&k), "
                     "block, dynamic_shared_bytes);\n"
                     "  const dim3 grid = dim3(uint32_t(__spn_min<int64_t>(__spn_cdiv(N, 1024), resident_blocks)), "),
            std::string::npos)
      << hip;
  EXPECT_NE(hip.find("hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_multiprocessor, kernel, threads, "
                     "dynamic_shared_bytes);"),
            std::string::npos);
  // A kernel whose grid does not ask gets no helper.
  EXPECT_EQ(compileTestModule()
                ->generate("scale",
                           [] {
                             Specialization s;
                             s.typeArgs["T"] = ScalarType::F32;
                             return s;
                           }())
                .source.find("__spn_resident_blocks"),
            std::string::npos);
}

// resident_blocks() is a fact of one launch: @block cannot use it, it takes
// no arguments, and a kernel body cannot ask for it.
TEST(Specialization, ResidentBlocksOutsideTheGridIsRefused) {
  const char* text = R"(
@block(resident_blocks())
@grid(resident_blocks(2))
kernel k(x: f32[N]):
    n = resident_blocks()
)";
  DiagnosticEngine diags;
  EXPECT_FALSE(CompiledModule::fromString("test.spn", text, diags));
  std::string out = diags.renderAll();
  EXPECT_NE(out.find("test.spn:2:8: error: 'resident_blocks()' cannot be used in @block: the block size is fixed "
                     "when the kernel is compiled [sema-launch-query-in-block]"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("test.spn:3:7: error: 'resident_blocks' takes 0 argument(s), got 1 [sema-call-arity]"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("test.spn:5:9: error: 'resident_blocks()' is a fact of the launch: it can only be used in "
                     "@grid [sema-launch-query-position]"),
            std::string::npos)
      << out;
}

// A dim named like a launcher local is renamed, so the launcher compiles.
TEST(Specialization, DimsNamedLikeLauncherLocalsAreRenamed) {
  const char* text = R"(
@grid(min(cdiv(block, 64), resident_blocks()))
@block(64)
kernel k(x: f32[block], y: f32[resident_blocks]):
    i = block_id() * 64 + thread_id()
    if i < block and i < resident_blocks:
        x[i] = y[i]
)";
  DiagnosticEngine diags;
  auto m = CompiledModule::fromString("test.spn", text, diags);
  ASSERT_TRUE(m) << diags.renderAll();
  std::string hip = m->generate("k", {}).source;
  EXPECT_NE(hip.find("int64_t block_1, int64_t resident_blocks_1) {"), std::string::npos) << hip;
  EXPECT_NE(hip.find("__spn_cdiv(block_1, 64), resident_blocks)"), std::string::npos) << hip;
}

TEST(Specialization, DynamicSharedBufferBytesFollowTheBoundDims) {
  const char* text = R"(
@grid(M)
@block(128)
kernel k(x: f32[M, N], y: f32[M, N]):
    a = shared(f32, [N])
    b = shared(f64, [N, 3])
    c = shared(i32, [128])
    for j in range(thread_id(), N, 128):
        a[j] = x[block_id(), j]
        b[j, 0] = f64(a[j])
        y[block_id(), j] = f32(b[j, 0])
    c[thread_id()] = 1
)";
  DiagnosticEngine diags;
  auto m = CompiledModule::fromString("test.spn", text, diags);
  ASSERT_TRUE(m) << diags.renderAll();
  // N = 10: a takes 40 bytes -> 48 aligned; b takes 240 -> 240. c is static.
  EXPECT_EQ(m->launchGeometry("k", {}, {{"M", 2}, {"N", 10}}).dynamicSharedBytes, 48u + 240u);
  // With N static both buffers are ordinary __shared__ arrays.
  Specialization spec;
  spec.staticDims["N"] = 10;
  EXPECT_EQ(m->launchGeometry("k", spec, {{"M", 2}, {"N", 10}}).dynamicSharedBytes, 0u);
  std::string hip = m->generate("k", spec).source;
  EXPECT_NE(hip.find("__shared__ double b[N * 3];"), std::string::npos) << hip;
  std::string dyn = m->generate("k", {}).source;
  EXPECT_NE(dyn.find("double* b = reinterpret_cast<double*>(__spn_dynamic_shared + __spn_align16(N * sizeof(float)));"),
            std::string::npos)
      << dyn;
}

// A body const may size shared memory by which optional tensor a launch
// gives (samples/gemm_ex.spn stages A's slab as BM rows of BK, or At's as
// BK rows of BM). A launch's geometry is computed on the module as loaded,
// whose symbols know no presence: the specialization's absent tensors
// decide there, so the bytes and the static/dynamic choice (past 48 KiB)
// agree with the generated file's.
TEST(Specialization, SharedMemoryThatPresenceSizesFollowsTheLaunch) {
  const char* text = R"(
@grid(1)
@block(64)
kernel k(x: f32[N] | None, xt: f32[N] | None, y: f32[N]):
    const ROWS = 64 if x is not None else 256
    s = shared(f32, [ROWS, 64])
    t = shared(f32, [ROWS // 64, 4])
    s[0, thread_id()] = 1.0
    t[0, 0] = 2.0
    sync()
    y[thread_id()] = s[0, thread_id()] + t[0, 0]
)";
  DiagnosticEngine diags;
  auto m = CompiledModule::fromString("test.spn", text, diags);
  ASSERT_TRUE(m) << diags.renderAll();
  Specialization withX, withXt;
  withX.absentTensors = {"xt"};
  withXt.absentTensors = {"x"};
  // x: 16 KiB + 16 bytes, static __shared__ arrays. xt: 64 KiB + 64 bytes,
  // past 48 KiB, so both buffers are dynamic.
  EXPECT_EQ(m->launchGeometry("k", withX, {{"N", 64}}).dynamicSharedBytes, 0u);
  EXPECT_EQ(m->launchGeometry("k", withXt, {{"N", 64}}).dynamicSharedBytes, 256u * 64 * 4 + 16 * 4);
  EXPECT_EQ(m->generate("k", withX).source.find("__spn_dynamic_shared"), std::string::npos);
  EXPECT_NE(m->generate("k", withXt).source.find("__spn_dynamic_shared"), std::string::npos);
}

// Specialize-and-prune: a branch whose condition is false in this
// specialization is neither checked nor printed, so it may use what this
// specialization lacks (here a static_range over K, which must be static);
// the condition itself stays when it is not a compile-time constant.
TEST(Specialization, DeadBranchesAreNeitherCheckedNorPrinted) {
  const char* text = R"(
@grid(M)
@block(64)
kernel k(x: f32[M, N], y: f32[M, K]):
    acc = 0.0
    if N >= 8:
        for i in static_range(K):
            acc += y[block_id(), i]
    x[block_id(), thread_id()] = acc
)";
  auto m = CompiledModule::loadString("test.spn", text);
  Specialization small;
  small.staticDims["N"] = 4;
  std::string source = m->generate("k", small).source;
  EXPECT_EQ(source.find("for ("), std::string::npos) << source;
  EXPECT_EQ(source.find("if ("), std::string::npos) << source;

  Specialization large;
  large.staticDims["N"] = 16;
  expectGeneratorError([&] { m->generate("k", large); }, "[spec-static-range-dynamic]");
  large.staticDims["K"] = 2;
  source = m->generate("k", large).source;
  EXPECT_NE(source.find("for (int64_t i = 0; i < K; ++i)"), std::string::npos) << source;
  EXPECT_EQ(source.find("if ("), std::string::npos) << source;

  // N dynamic: the if stays, so its body is checked.
  expectGeneratorError([&] { m->generate("k", Specialization{}); }, "[spec-static-range-dynamic]");
}

// Consts as generation parameters (--const): the given value replaces the
// const's own, consts computed from it follow, and it reaches @block, the
// code, the launch geometry and the key; bad values name the const.
TEST(Specialization, ConstOverridesReplaceValuesAndReachDependents) {
  const char* text = R"(
const BS = 128
const HALF = BS // 2
const EPS: f32 = 1e-5
const SMALL: i8 = 3
const W = 8

@grid(M)
@block(BS)
kernel k(x: f32[M, W], y: f32[M, W]):
    t = thread_id()
    if t < HALF and t < W:
        y[block_id(), t] = x[block_id(), t] * f32(SMALL) + EPS
)";
  auto m = CompiledModule::loadString("test.spn", text);
  Specialization base;
  Specialization wide;
  wide.consts["BS"] = ConstOverride::ofInt(256);
  std::string source = m->generate("k", wide).source;
  EXPECT_NE(source.find("__launch_bounds__(256)"), std::string::npos) << source;
  EXPECT_NE(source.find("t < 128"), std::string::npos) << source;  // HALF, computed from BS
  EXPECT_NE(source.find("--const BS=256"), std::string::npos) << source;
  EXPECT_EQ(m->launchGeometry("k", wide, {{"M", 4}}).block[0], 256);
  EXPECT_EQ(m->launchGeometry("k", base, {{"M", 4}}).block[0], 128);
  EXPECT_NE(m->specializationKey("k", wide), m->specializationKey("k", base));

  // A float const takes an integer as the float it is: one key for both.
  Specialization one, onePointZero;
  one.consts["EPS"] = ConstOverride::ofInt(1);
  onePointZero.consts["EPS"] = ConstOverride::ofFloat(1.0);
  EXPECT_EQ(m->specializationKey("k", one), m->specializationKey("k", onePointZero));
  EXPECT_EQ(m->generate("k", one).source, m->generate("k", onePointZero).source);

  auto expectError = [&](const char* name, ConstOverride value, const std::string& needle) {
    Specialization s;
    s.consts[name] = value;
    expectGeneratorError([&] { m->generate("k", s); }, needle);
  };
  expectError("SMALL", ConstOverride::ofInt(300), "--const SMALL=300: 'SMALL' is declared i8, which does not hold 300");
  expectError("BS", ConstOverride::ofFloat(1.5), "--const BS=1.5: 'BS' is an integer const; give it an integer");
  expectError(
      "NOPE", ConstOverride::ofInt(1),
      "--const NOPE: the module has no const or compile-time parameter named 'NOPE' (it has: BS, HALF, EPS, SMALL, W)");
  expectError("BS", ConstOverride::ofInt(4096), "@block must be an integer from 1 to 1024, got 4096");
  // A value the module's own consts cannot take: the copy loaded with it
  // reports where (HALF = BS // 2 is fine with 0, so a divisor instead).
  auto divided = CompiledModule::loadString("div.spn", "const WD = 8\nconst DD = 16 // WD\n" + std::string(text));
  Specialization zero;
  zero.consts["WD"] = ConstOverride::ofInt(0);
  expectGeneratorError([&] { divided->generate("k", zero); },
                       "div.spn:2:12: error: const 'DD' is not a compile-time constant: division by zero");

  // withConsts: a module whose kernels and every specialization carry the
  // values; a const in a tensor's shape follows them.
  auto narrow = m->withConsts({{"W", ConstOverride::ofInt(4)}});
  EXPECT_EQ(narrow->findKernel("k")->params[0].dims[1].value, 4);
  EXPECT_EQ(m->findKernel("k")->params[0].dims[1].value, 8);
  Specialization w4;
  w4.consts["W"] = ConstOverride::ofInt(4);
  EXPECT_EQ(narrow->specializationKey("k", base), m->specializationKey("k", w4));
  EXPECT_EQ(narrow->generate("k", base).source, m->generate("k", w4).source);
  Specialization w2;
  w2.consts["W"] = ConstOverride::ofInt(2);
  expectGeneratorError([&] { narrow->generate("k", w2); },
                       "--const W: this module was loaded with another value for it");
}

// A static_range bound that is not compile-time: the advice follows the
// cause (make a dynamic dim static; a local is never compile-time, so use a
// const; anything else, say what a bound may use).
TEST(Specialization, StaticRangeBoundMessagesFollowTheCause) {
  const char* text = R"(
@grid(M)
@block(64)
kernel k(x: f32[M, N], n: i32):
    m = 4
    acc = 0.0
    for i in static_range(N):
        acc += x[block_id(), i]
    for j in static_range(m):
        acc += 1.0
    for q in static_range(thread_id()):
        acc += 1.0
    x[block_id(), 0] = acc
)";
  auto m = CompiledModule::loadString("test.spn", text);
  expectGeneratorError([&] { m->generate("k", {}); },
                       "make the dim static (@static or --static) [spec-static-range-dynamic]");
  Specialization n;
  n.staticDims["N"] = 4;
  expectGeneratorError(
      [&] { m->generate("k", n); },
      "test.spn:9:27: error: static_range needs compile-time bounds, but 'm' is a local, and locals are "
      "never compile-time values; use a const instead");
  const char* other = R"(
@grid(M)
@block(64)
kernel k(x: f32[M]):
    for q in static_range(thread_id()):
        x[q] = 1.0
)";
  auto m2 = CompiledModule::loadString("test.spn", other);
  expectGeneratorError([&] { m2->generate("k", {}); }, "[spec-static-range-not-constant]");
}

// @grid may use integer scalar parameters and warp_size(); @block may use
// warp_size() and, within a bound generation proves, dynamic dims and
// scalars (docs/language.md 9.1, 9.2).
TEST(LaunchGeometry, ScalarsWarpSizeAndBlocksThatFollowTheLaunch) {
  const char* text = R"(
@grid(cdiv(n, warp_size() * 4), tiles)
@block(warp_size() * 4)
kernel k(x: f32[N], n: i32, tiles: u32):
    x[0] = 1.0

@grid(R)
@block(min(N, 1024))
kernel rows(x: f32[R, N]):
    x[block_id(), thread_id()] = block_sum(1.0)

@grid(1)
@block(min(n, 256), 2)
kernel by_scalar(x: f32[N], n: i64):
    x[0] = 1.0

@grid(1)
@block(n)
kernel unbounded(x: f32[N], n: i32):
    x[0] = 1.0
)";
  DiagnosticEngine diags;
  auto m = CompiledModule::fromString("test.spn", text, diags);
  ASSERT_TRUE(m) << diags.renderAll();
  EXPECT_EQ(m->findKernel("k")->launchScalars, (std::vector<std::string>{"n", "tiles"}));
  EXPECT_EQ(m->findKernel("by_scalar")->launchScalars, (std::vector<std::string>{"n"}));

  // The target's warp width decides both the block and the grid.
  auto on32 = m->launchGeometry("k", {}, {{"N", 8}, {"n", 1000}, {"tiles", 3}}, {}, 32);
  EXPECT_EQ(on32.block[0], 128);
  EXPECT_EQ(on32.grid[0], 8);  // cdiv(1000, 128)
  EXPECT_EQ(on32.grid[1], 3);
  auto on64 = m->launchGeometry("k", {}, {{"N", 8}, {"n", 1000}, {"tiles", 3}}, {}, 64);
  EXPECT_EQ(on64.block[0], 256);
  EXPECT_EQ(on64.grid[0], 4);
  expectGeneratorError(
      [&] {
        m->launchGeometry("k", {}, {{"N", 8}, {"n", 1000}, {"tiles", 3}});
      },
      "cannot evaluate @block: warp_size() depends on the target: it is known at launch");
  // Target-neutral text: the macro in the bounds and in the launcher.
  std::string source = m->generate("k", {}).source;
  EXPECT_NE(source.find("__launch_bounds__(__SPN_WARP_SIZE * 4)"), std::string::npos) << source;
  EXPECT_NE(source.find("dim3(uint32_t(__spn_cdiv(n, __SPN_WARP_SIZE * 4)), uint32_t(tiles))"), std::string::npos)
      << source;

  // A block that follows a dynamic dim: the bound in __launch_bounds__, the
  // value per launch; a static dim makes it a number again.
  EXPECT_EQ(m->launchGeometry("rows", {}, {{"R", 2}, {"N", 100}}).block[0], 100);
  EXPECT_EQ(m->launchGeometry("rows", {}, {{"R", 2}, {"N", 5000}}).block[0], 1024);
  std::string rows = m->generate("rows", {}).source;
  EXPECT_NE(rows.find("__launch_bounds__(1024)"), std::string::npos) << rows;
  EXPECT_NE(rows.find("block (min(N, 1024), at most 1024 threads)"), std::string::npos) << rows;
  Specialization n100;
  n100.staticDims["N"] = 100;
  EXPECT_NE(m->generate("rows", n100).source.find("__launch_bounds__(100)"), std::string::npos);

  // A scalar bounded by min(): the product of the bounds; a value outside
  // [1, bound] at launch names it.
  EXPECT_NE(m->generate("by_scalar", {}).source.find("__launch_bounds__(512)"), std::string::npos);
  auto g = m->launchGeometry("by_scalar", {}, {{"N", 8}, {"n", 100}});
  EXPECT_EQ(g.block[0], 100);
  EXPECT_EQ(g.block[1], 2);
  expectGeneratorError(
      [&] {
        m->launchGeometry("by_scalar", {}, {{"N", 8}, {"n", 0}});
      },
      "test.spn:13:8: error: cannot evaluate @block: it is 0, outside [1, 512] [spec-block-eval]");
  // warp_size() past 1024 on one target only: the message says which.
  auto wide = CompiledModule::loadString("wide.spn",
                                         "@grid(1)\n@block(warp_size() * 20)\nkernel w(x: f32[N]):\n"
                                         "    x[0] = 1.0\n");
  expectGeneratorError([&] { wide->generate("w", {}); },
                       "@block must be an integer from 1 to 1024, got 1280 with 64-wide warps [spec-block-range]");
  // No bound: refused at generation, naming the scalar.
  expectGeneratorError([&] { m->generate("unbounded", {}); },
                       "test.spn:18:8: error: @block needs an upper bound known at generation, but 'n' is a scalar "
                       "parameter, known only at launch, and it can reach 2147483647; bound it: min(n, 1024) "
                       "[spec-block-unbounded]");
}

// Values and defs in a kernel's brackets (docs/language.md 3.5): bound by
// --const, checked against their kind, in the key, and required.
TEST(CompileTimeParams, BindCheckAndKeyLikeConsts) {
  const char* text = R"(
def silu(x: f32) -> f32:
    return x / (1.0 + exp(-x))

def twice(x: f32) -> f32:
    return 2.0 * x

@grid(cdiv(N, 64))
@block(64)
kernel k[ACT: fn, FLAG: bool, W: i32](x: f32[N, W]):
    i = block_id() * block_dim() + thread_id()
    if i < N:
        for j in static_range(W):
            if FLAG:
                x[i, j] = ACT(x[i, j])
)";
  DiagnosticEngine diags;
  auto m = CompiledModule::fromString("test.spn", text, diags);
  ASSERT_TRUE(m) << diags.renderAll();
  const auto& params = m->findKernel("k")->compileTimeParams;
  ASSERT_EQ(params.size(), 3u);
  EXPECT_EQ(params[0].name, "ACT");
  EXPECT_EQ(params[0].kind, "fn");
  EXPECT_EQ(params[2].kind, "i32");

  Specialization spec;
  expectGeneratorError([&] { m->generate("k", spec); },
                       "test.spn:10:10: error: kernel 'k' takes compile-time parameter 'ACT: fn'; bind it with "
                       "--const ACT=DEF [spec-param-unbound]");
  spec.consts["ACT"] = ConstOverride::ofFunction("twice");
  expectGeneratorError([&] { m->generate("k", spec); }, "bind it with --const FLAG=VALUE [spec-param-unbound]");
  spec.consts["FLAG"] = ConstOverride::ofInt(1);
  spec.consts["W"] = ConstOverride::ofInt(3);
  std::string twice = m->generate("k", spec).source;
  EXPECT_NE(twice.find("x[int64_t(i) * W + j] = twice(x[int64_t(i) * W + j]);"), std::string::npos) << twice;
  EXPECT_EQ(twice.find("silu"), std::string::npos) << "only the bound def is printed";
  EXPECT_NE(twice.find("constexpr bool FLAG = true;  // compile-time parameter"), std::string::npos) << twice;

  // Another def, another key; FLAG false prunes the call away.
  Specialization silu = spec;
  silu.consts["ACT"] = ConstOverride::ofFunction("silu");
  EXPECT_NE(m->specializationKey("k", spec), m->specializationKey("k", silu));
  Specialization off = spec;
  off.consts["FLAG"] = ConstOverride::ofInt(0);
  EXPECT_EQ(m->generate("k", off).source.find("twice("), std::string::npos);

  // The flags read back, a def's name included.
  std::vector<std::string> flags = specializationFlags(silu);
  Specialization back;
  for (size_t i = 0; i < flags.size(); ++i) ASSERT_TRUE(parseSpecializationFlag(flags, i, back)) << flags[i];
  EXPECT_EQ(back, silu);

  // Values of the wrong kind name the parameter and the value.
  auto expectBad = [&](const std::string& name, const ConstOverride& v, const std::string& needle) {
    Specialization bad = spec;
    bad.consts[name] = v;
    expectGeneratorError([&] { m->generate("k", bad); }, needle);
  };
  expectBad("ACT", ConstOverride::ofInt(2), "--const ACT=2: 'ACT' is a fn parameter; give it the name of a module def");
  expectBad("ACT", ConstOverride::ofFunction("relu"),
            "fn parameter 'ACT' is bound to 'relu', which is not a module def (module defs: silu, twice) "
            "[sema-fn-param-binding]");
  expectBad("FLAG", ConstOverride::ofInt(2), "--const FLAG=2: 'FLAG' is declared bool, which does not hold 2");
  expectBad("W", ConstOverride::ofFunction("silu"), "--const W=silu: 'W' is a compile-time i32; give it a value");
  expectBad("FLAG", ConstOverride::ofFunction("true"),
            "--const FLAG=true: 'FLAG' is a compile-time bool; give it a value (True or False, or 1 or 0)");
  expectBad("W", ConstOverride::ofFloat(2.5), "--const W=2.5: 'W' is a compile-time i32; give it an integer");
}

// Kernel-body consts take their value per specialization: from static dims
// and sizeof(T); one that needs a dynamic dim is a located error.
TEST(BodyConsts, EvaluatedPerSpecializationWithSizeofT) {
  const char* text = R"(
@grid(M)
@block(64)
kernel k[T](x: T[M, N]):
    const VEC = 16 // sizeof(T)
    const ROWS: i64 = N * 2
    v = local(T, [VEC], 0.0)
    for i in static_range(VEC):
        x[block_id(), i] = v[i] + T(ROWS)
)";
  DiagnosticEngine diags;
  auto m = CompiledModule::fromString("test.spn", text, diags);
  ASSERT_TRUE(m) << diags.renderAll();
  Specialization spec;
  spec.typeArgs["T"] = ScalarType::F16;
  spec.staticDims["N"] = 8;
  std::string f16 = m->generate("k", spec).source;
  EXPECT_NE(f16.find("__half v[8];"), std::string::npos) << f16;
  EXPECT_NE(f16.find("constexpr int64_t ROWS = 16;  // const of the kernel's body"), std::string::npos) << f16;
  spec.typeArgs["T"] = ScalarType::F64;
  EXPECT_NE(m->generate("k", spec).source.find("double v[2];"), std::string::npos);
  spec.staticDims.clear();
  expectGeneratorError([&] { m->generate("k", spec); },
                       "test.spn:6:23: error: const 'ROWS' needs a compile-time value in this specialization: 'N' has "
                       "no compile-time value [spec-body-const]");
}

// A module const may be computed from dims: each specialization computes it
// from the kernel's static dims (and consts after it see the value); where a
// dim it needs is dynamic, or is not the kernel's, using it is a located
// error with the reason, and not using it is fine.
TEST(ModuleConstsOfDims, ComputedPerSpecializationFromStaticDims) {
  const char* text = R"(
const THREADS = 128
const VPT = max(1, H // THREADS)
const SCALE: f32 = 1.0 / VPT

@grid(cdiv(M, VPT))
@block(THREADS)
kernel k(x: f32[M, H]):
    vals = local(f32, [VPT], 0.0)
    for v in static_range(VPT):
        x[block_id(), thread_id() * VPT + v] = vals[v] * SCALE

@grid(N)
@block(64)
kernel plain(z: f32[N]):
    z[thread_id()] = 0.0

@grid(N)
@block(64)
kernel other(z: f32[N]):
    z[thread_id()] = f32(VPT)
)";
  DiagnosticEngine diags;
  auto m = CompiledModule::fromString("test.spn", text, diags);
  ASSERT_TRUE(m) << diags.renderAll();
  Specialization spec;
  spec.staticDims["H"] = 1024;
  std::string src = m->generate("k", spec).source;
  EXPECT_NE(src.find("float vals[8];"), std::string::npos) << src;
  EXPECT_NE(src.find("constexpr float SCALE = 0.125f;"), std::string::npos) << src;
  EXPECT_NE(src.find("__spn_cdiv(M, 8)"), std::string::npos) << src;
  spec.staticDims["H"] = 64;  // max(1, 0)
  EXPECT_NE(m->generate("k", spec).source.find("float vals[1];"), std::string::npos);
  // The launch evaluates it too, from the launch's dims.
  LaunchGeometry g = m->launchGeometry("k", spec, {{"M", 1000}, {"H", 64}});
  EXPECT_EQ(g.grid[0], 1000);
  spec.staticDims["H"] = 4096;
  g = m->launchGeometry("k", spec, {{"M", 1000}, {"H", 4096}});
  EXPECT_EQ(g.grid[0], 32);  // cdiv(1000, 32)

  spec.staticDims.clear();
  expectGeneratorError([&] { m->generate("k", spec); },
                       "test.spn:6:15: error: const 'VPT' is used here, but this specialization cannot compute it: dim "
                       "'H' is dynamic; make it static (@static(H) or --static H=VALUE) [spec-const-needs-dim]");
  EXPECT_NE(m->generate("plain", spec).source.find("z[int(threadIdx.x)] = 0.0f;"), std::string::npos);
  expectGeneratorError([&] { m->generate("other", spec); },
                       "test.spn:21:26: error: const 'VPT' is used here, but this specialization cannot compute it: "
                       "'H' is not a dim of kernel 'other' [spec-const-needs-dim]");
  // An override is a value like any other: no dims needed.
  spec.consts["VPT"] = ConstOverride::ofInt(2);
  EXPECT_NE(m->generate("other", spec).source.find("z[int(threadIdx.x)] = float(2.0f);"), std::string::npos);
}

// @block and @grid may name the kernel's body consts: generation computes
// them per type binding, and so does the launch, from the shared module.
TEST(BodyConsts, NamedByBlockAndGridPerTypeBinding) {
  const char* text = R"(
@grid(cdiv(N, THREADS * VEC) + ROWS)
@block(THREADS)
kernel scale[T](x: T[N, C], y: T[N, C]):
    const VEC = 16 // sizeof(T)
    const THREADS = 2048 // VEC
    const ROWS = C // 100
    y[0, 0] = x[0, 0]
)";
  DiagnosticEngine diags;
  auto m = CompiledModule::fromString("test.spn", text, diags);
  ASSERT_TRUE(m) << diags.renderAll();
  Specialization spec;
  spec.typeArgs["T"] = ScalarType::BF16;
  spec.staticDims["C"] = 300;
  EXPECT_NE(m->generate("scale", spec).source.find("__launch_bounds__(256)"), std::string::npos);
  LaunchGeometry g = m->launchGeometry("scale", spec, {{"N", 5000}, {"C", 300}});
  EXPECT_EQ(g.block[0], 256);
  EXPECT_EQ(g.grid[0], 3 + 3);  // cdiv(5000, 2048) + 300 // 100
  spec.typeArgs["T"] = ScalarType::F64;
  EXPECT_NE(m->generate("scale", spec).source.find("__launch_bounds__(1024)"), std::string::npos);
  g = m->launchGeometry("scale", spec, {{"N", 5000}, {"C", 300}});
  EXPECT_EQ(g.block[0], 1024);
  // A body const that needs a dim the specialization leaves dynamic.
  spec.staticDims.clear();
  expectGeneratorError([&] { m->generate("scale", spec); },
                       "const 'ROWS' needs a compile-time value in this specialization: 'C' has no compile-time value "
                       "[spec-body-const]");
}

// A body const may use warp_size(): computed for both warp widths, it is a
// literal where they agree and a constexpr choosing by __SPN_WARP_SIZE where
// they differ, usable in local sizes, static_range and @block; a launch
// computes it for its target's width.
TEST(BodyConsts, WarpSizeGivesAValuePerWarpWidth) {
  const char* text = R"(
@grid(M)
@block(LANES * 2)
@static(E)
kernel k(x: f32[M, E]):
    const VPT = max(1, E // warp_size())
    const LANES = warp_size()
    const SAME = min(warp_size(), 32)
    vals = local(f32, [VPT], 0.0)
    for v in static_range(VPT):
        x[block_id(), v] = vals[v] + f32(SAME)
)";
  DiagnosticEngine diags;
  auto m = CompiledModule::fromString("test.spn", text, diags);
  ASSERT_TRUE(m) << diags.renderAll();
  Specialization spec;
  spec.staticDims["E"] = 256;
  std::string src = m->generate("k", spec).source;
  EXPECT_NE(src.find("constexpr int32_t VPT = __SPN_WARP_SIZE == 64 ? 4 : 8;"), std::string::npos) << src;
  EXPECT_NE(src.find("float vals[VPT];"), std::string::npos) << src;
  EXPECT_NE(src.find("for (int32_t v = 0; v < VPT; ++v)"), std::string::npos) << src;
  EXPECT_NE(src.find("__launch_bounds__((__SPN_WARP_SIZE == 64 ? 64 : 32) * 2)"), std::string::npos) << src;
  EXPECT_NE(src.find("vals[v] + float(32.0f)"), std::string::npos) << src;  // SAME: one value, a literal
  EXPECT_EQ(m->launchGeometry("k", spec, {{"M", 3}, {"E", 256}}, {}, 32).block[0], 64);
  EXPECT_EQ(m->launchGeometry("k", spec, {{"M", 3}, {"E", 256}}, {}, 64).block[0], 128);
  // A value only one width can give is an error of the specialization.
  const char* bad = R"(
@grid(M)
@block(64)
kernel k(x: f32[M]):
    const INV = 1 // (warp_size() - 32)
    x[0] = f32(INV)
)";
  auto b = CompiledModule::fromString("test.spn", bad, diags);
  ASSERT_TRUE(b) << diags.renderAll();
  expectGeneratorError([&] { b->generate("k", {}); },
                       "const 'INV' needs a compile-time value in this specialization: division by zero (with 32-wide "
                       "warps) [spec-body-const]");
}

// Error paths of this session's specialization facts, each with its message.
TEST(SpecializationErrors, AbsentUsesWrongKindsAndBodyConstTypes) {
  const char* text = R"(
const SCALE = 2

@grid(M)
@block(64)
kernel k(x: f32[M, N], bias: f32[N] | None):
    const HALF: i32 = 1.5 * SCALE
    for j in range(thread_id(), N, block_dim()):
        x[block_id(), j] += bias[j]
)";
  DiagnosticEngine diags;
  auto m = CompiledModule::fromString("test.spn", text, diags);
  ASSERT_TRUE(m) << diags.renderAll();
  Specialization spec;
  expectGeneratorError([&] { m->generate("k", spec); },
                       "test.spn:7:23: error: const 'HALF' has a float value but is declared i32 "
                       "[sema-const-float-to-int]");
  const char* absentText = R"(
@grid(M)
@block(64)
kernel k(x: f32[M, N], bias: f32[N] | None):
    for j in range(thread_id(), N, block_dim()):
        x[block_id(), j] += bias[j]
)";
  auto a = CompiledModule::fromString("test.spn", absentText, diags);
  ASSERT_TRUE(a) << diags.renderAll();
  spec.absentTensors = {"bias"};
  expectGeneratorError([&] { a->generate("k", spec); },
                       "test.spn:6:29: error: 'bias' is absent in this specialization (--absent bias) but used here; "
                       "guard the use with 'if bias is not None:' [spec-absent-use]");
  spec.absentTensors = {"x"};
  expectGeneratorError([&] { a->generate("k", spec); },
                       "kernel 'k' has no optional tensor parameter 'x' to leave absent (its optional tensors, "
                       "declared 'T[...] | None': bias)");
  spec.absentTensors.clear();
  spec.consts["SCALE"] = ConstOverride::ofFunction("k");
  expectGeneratorError([&] { m->generate("k", spec); }, "--const SCALE=k: 'SCALE' is a const; give it a number");
}

}  // namespace
}  // namespace spindle::test
