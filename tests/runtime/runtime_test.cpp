// The public API end to end with the real generator, compile-only (no GPU
// needed): in-memory and disk hits, which dims enter the key, module and
// kernel errors, the compile-only launch error, and real nvrtc (sm_90) and
// hiprtc (gfx90a) compiles of generated sources.
#include <spindle/runtime.hpp>

#include <filesystem>
#include <fstream>

#include "../../runtime/src/backend.h"
#include "test_util.h"

namespace spindle {
namespace {

using test::errorFrom;

const char* kRowscale = R"(const BLOCK = 128

@grid(M)
@block(BLOCK)
@static(N)
kernel rowscale(x: f32[M, N], y: f32[M, N], s: f32):
    row = block_id()
    for j in range(thread_id(), N, BLOCK):
        y[row, j] = x[row, j] * s
)";

const std::string kAxpyPath = SPINDLE_SOURCE_DIR "/samples/app/axpy.spn";

bool hasCompiler(BackendKind k) {
  auto b = k == BackendKind::Cuda ? rt::makeCudaBackend() : rt::makeHipBackend();
  return b->hasCompiler(nullptr);
}

RuntimeOptions compileOnly(const std::string& target, const std::string& cacheDir,
                           std::vector<std::string>* warnings = nullptr) {
  RuntimeOptions o;
  o.target = target;
  o.cacheDir = cacheDir;
  o.warn = [warnings](const std::string& m) {
    if (warnings) warnings->push_back(m);
  };
  return o;
}

class RuntimeCompile : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    BackendKind k = std::string(GetParam()).rfind("sm_", 0) == 0 ? BackendKind::Cuda : BackendKind::Hip;
    if (!hasCompiler(k)) GTEST_SKIP() << backendName(k) << " compiler library not installed";
  }
};

TEST_P(RuntimeCompile, MemoryHitDiskHitAndStaticKeys) {
  test::TempDir dir;
  Runtime rt(compileOnly(GetParam(), dir.path()));
  EXPECT_EQ(rt.target(), GetParam());
  Kernel k = rt.loadModuleFromString("rowscale.spn", kRowscale).kernel("rowscale");
  CompileReport first = k.compile({{"N", 256}}, {});
  EXPECT_EQ(first.outcome, CacheOutcome::Miss);
  EXPECT_GT(first.binaryBytes, 0u);
  EXPECT_CONTAINS(first.source, "constexpr int64_t N = 256;");
  CompileReport again = k.compile({{"N", 256}}, {});
  EXPECT_EQ(again.outcome, CacheOutcome::MemoryHit);
  EXPECT_EQ(again.keyHex, first.keyHex);
  CompileReport other = k.compile({{"N", 512}}, {});
  EXPECT_EQ(other.outcome, CacheOutcome::Miss);
  EXPECT_NE(other.keyHex, first.keyHex) << "a different static value is a different binary";
  CacheStats s = rt.stats();
  EXPECT_EQ(s.compiles, 2u);
  EXPECT_EQ(s.memoryHits, 1u);
  EXPECT_EQ(s.misses, 2u);
  EXPECT_GT(s.compileSeconds, 0.0);

  // A second runtime (a new process, as far as memory goes) finds it on disk.
  Runtime rt2(compileOnly(GetParam(), dir.path()));
  CompileReport disk = rt2.loadModuleFromString("rowscale.spn", kRowscale).kernel("rowscale").compile({{"N", 256}}, {});
  EXPECT_EQ(disk.outcome, CacheOutcome::DiskHit);
  EXPECT_EQ(disk.keyHex, first.keyHex);
  EXPECT_EQ(rt2.stats().compiles, 0u);
  EXPECT_EQ(rt2.stats().diskHits, 1u);
}

// Runtime::warpSize is warp_size() on the target: 32 lanes on NVIDIA, 64
// on AMD's CDNA (gfx90a).
TEST_P(RuntimeCompile, WarpSizeIsTheTargets) {
  test::TempDir dir;
  Runtime rt(compileOnly(GetParam(), dir.path()));
  EXPECT_EQ(rt.warpSize(), std::string(GetParam()) == "sm_90" ? 32 : 64);
}

INSTANTIATE_TEST_SUITE_P(Targets, RuntimeCompile, ::testing::Values("sm_90", "gfx90a"),
                         [](const auto& info) { return std::string(info.param); });

// A grid that uses resident_blocks() depends on the device and the binary:
// a compile-only runtime compiles such a kernel, but cannot tell its grid.
TEST(Runtime, ResidentBlocksGridNeedsADevice) {
  if (!hasCompiler(BackendKind::Cuda)) GTEST_SKIP() << "nvrtc not installed";
  test::TempDir dir;
  Runtime rt(compileOnly("sm_90", dir.path()));
  Kernel k = rt.loadModule(SPINDLE_SOURCE_DIR "/samples/histogram.spn").kernel("histogram");
  EXPECT_TRUE(k.info().gridUsesResidentBlocks);
  const void* xs = reinterpret_cast<const void*>(uintptr_t(1) << 24);
  const void* hs = reinterpret_cast<const void*>(uintptr_t(1) << 30);
  const Arg args[] = {tensor(xs, ScalarType::F32, {100000}), tensor(hs, ScalarType::I32, {256}), scalar(-1.0f),
                      scalar(1.0f)};
  CompileReport r = k.compileFor(args, 4);
  EXPECT_GT(r.binaryBytes, 0u);
  const std::string error = errorFrom([&] { k.bind(args, 4); });
  EXPECT_CONTAINS(error, "histogram: ");
  EXPECT_CONTAINS(error, "error: cannot evaluate @grid: resident_blocks() is known only when launching on a device");
}

TEST(Runtime, DynamicDimsDoNotEnterTheKeyAndCallerStaticOnesDo) {
  if (!hasCompiler(BackendKind::Cuda)) GTEST_SKIP() << "nvrtc not installed";
  test::TempDir dir;
  Runtime rt(compileOnly("sm_90", dir.path()));
  Module m = rt.loadModule(kAxpyPath);
  Kernel dynamicN = m.kernel("axpy");
  EXPECT_TRUE(dynamicN.staticDims().empty());
  // Distinct fake device addresses: binding never dereferences them, but it
  // does refuse overlapping tensors.
  const void* xs = reinterpret_cast<const void*>(uintptr_t(1) << 24);
  const void* ys = reinterpret_cast<const void*>(uintptr_t(1) << 25);
  LaunchPlan p1 =
      dynamicN.bind({tensor(xs, ScalarType::F32, {1000}), tensor(ys, ScalarType::F32, {1000}), scalar(2.0f)});
  LaunchPlan p2 =
      dynamicN.bind({tensor(xs, ScalarType::F32, {5000}), tensor(ys, ScalarType::F32, {5000}), scalar(2.0f)});
  EXPECT_TRUE(p1.staticDims.empty());
  EXPECT_EQ(p1.typeArgs, p2.typeArgs);
  EXPECT_EQ(p1.dims.at("N"), 1000);
  EXPECT_EQ(p1.geometry.grid[0], 4);   // cdiv(1000, 256)
  EXPECT_EQ(p2.geometry.grid[0], 20);  // cdiv(5000, 256)
  EXPECT_EQ(p1.geometry.block[0], 256);
  CompileReport f32 = dynamicN.compile({}, {{"T", ScalarType::F32}});
  CompileReport f16 = dynamicN.compile({}, {{"T", ScalarType::F16}});
  EXPECT_NE(f32.keyHex, f16.keyHex) << "bound dtypes are in the key";

  Kernel staticN = m.kernel("axpy", KernelOptions{{"N"}});
  EXPECT_EQ(staticN.staticDims(), std::vector<std::string>{"N"});
  CompileReport n1000 = staticN.compile({{"N", 1000}}, {{"T", ScalarType::F32}});
  CompileReport n2000 = staticN.compile({{"N", 2000}}, {{"T", ScalarType::F32}});
  EXPECT_NE(n1000.keyHex, n2000.keyHex);
  EXPECT_NE(n1000.keyHex, f32.keyHex);
  EXPECT_CONTAINS(n1000.source, "constexpr int64_t N = 1000;");
}

// The geometry a Kernel remembers between launches depends on the dtypes
// too: a generic kernel's dynamic shared buffer of N elements of T is 2000
// bytes for 1000 f16s and 4000 for 1000 f32s. Keyed on the dims alone, the
// f32 launch got 2000 bytes and wrote past its shared memory.
TEST(Runtime, RememberedGeometryFollowsTheDtypes) {
  if (!hasCompiler(BackendKind::Cuda)) GTEST_SKIP() << "nvrtc not installed";
  test::TempDir dir;
  Runtime rt(compileOnly("sm_90", dir.path()));
  Kernel k = rt.loadModuleFromString("staged.spn", R"(@grid(1)
@block(64)
kernel staged[T](x: T[N], y: T[N]):
    buf = shared(T, [N])
    i = thread_id()
    buf[i] = x[i]
    sync()
    y[i] = buf[N - 1 - i]
)")
                 .kernel("staged");
  const void* xs = reinterpret_cast<const void*>(uintptr_t(1) << 24);
  const void* ys = reinterpret_cast<const void*>(uintptr_t(1) << 25);
  auto bindAs = [&](ScalarType t) { return k.bind({tensor(xs, t, {1000}), tensor(ys, t, {1000})}); };
  EXPECT_EQ(bindAs(ScalarType::F16).geometry.dynamicSharedBytes, 2000u);
  EXPECT_EQ(bindAs(ScalarType::F32).geometry.dynamicSharedBytes, 4000u);
  EXPECT_EQ(bindAs(ScalarType::F16).geometry.dynamicSharedBytes, 2000u);
  EXPECT_EQ(bindAs(ScalarType::F64).geometry.dynamicSharedBytes, 8000u);
}

const char* kRowRuns = R"(const BLOCK = 64
const VEC = 4

@grid(M)
@block(BLOCK)
kernel row_runs(x: f32[M, N], y: f32[M, N]):
    j = thread_id() * VEC
    if j + VEC <= N:
        for k in static_range(VEC):
            y[block_id(), j + k] = 2.0 * x[block_id(), j + k]
)";

// compileFor(args) builds what a launch with those arguments would use: the
// alignment of tensors indexed in runs and the divisibility of their row
// dims come from the arguments; compile(spec) takes them by name and
// refuses names that cannot matter.
TEST(Runtime, CompileFromArgumentsFollowsTheirLayout) {
  if (!hasCompiler(BackendKind::Cuda)) GTEST_SKIP() << "nvrtc not installed";
  test::TempDir dir;
  Runtime rt(compileOnly("sm_90", dir.path()));
  Kernel k = rt.loadModuleFromString("row_runs.spn", kRowRuns).kernel("row_runs");
  const char* base = reinterpret_cast<const char*>(uintptr_t(1) << 24);
  const void* ys = reinterpret_cast<const void*>(uintptr_t(1) << 25);
  auto compileAt = [&](const char* x, int64_t n) {
    return k.compileFor({tensor(x, ScalarType::F32, {8, n}), tensor(ys, ScalarType::F32, {8, n})});
  };
  CompileReport aligned = compileAt(base, 64);
  EXPECT_CONTAINS(aligned.source, "x = __spn_assume_aligned<16>(x);");
  EXPECT_CONTAINS(aligned.source, "y = __spn_assume_aligned<16>(y);");
  EXPECT_CONTAINS(aligned.source, "__builtin_assume(N % 16 == 0);");
  CompileReport offset = compileAt(base + 4, 64);  // x 4 bytes past a 16-byte boundary
  EXPECT_EQ(offset.source.find("x = __spn_assume_aligned"), std::string::npos) << offset.source;
  EXPECT_CONTAINS(offset.source, "y = __spn_assume_aligned<16>(y);");
  CompileReport eights = compileAt(base, 72);  // 72 is a multiple of 8, not of 16
  EXPECT_CONTAINS(eights.source, "__builtin_assume(N % 8 == 0);");
  CompileReport odd = compileAt(base, 73);
  EXPECT_EQ(odd.source.find("__builtin_assume(N"), std::string::npos) << odd.source;
  EXPECT_NE(aligned.keyHex, offset.keyHex);
  EXPECT_NE(aligned.keyHex, eights.keyHex);
  EXPECT_NE(eights.keyHex, odd.keyHex);
  EXPECT_EQ(compileAt(base + 16, 128).keyHex, aligned.keyHex);  // same layout facts: the same binary
  EXPECT_EQ(compileAt(base, 24).keyHex, eights.keyHex);

  Specialization spec;
  spec.alignedTensors = {"x", "y"};
  spec.divisible = {{"N", 16}};
  spec.index32 = true;  // the launches fit 32-bit indices
  EXPECT_EQ(k.compile(spec).keyHex, aligned.keyHex);
  spec.divisible = {{"N", 8}};
  EXPECT_EQ(k.compile(spec).keyHex, eights.keyHex);
  spec.alignedTensors = {"z"};
  EXPECT_CONTAINS(errorFrom([&] { k.compile(spec); }), "row_runs: no tensor parameter indexed in runs named 'z'");
  spec.alignedTensors.clear();
  spec.divisible = {{"M", 16}};
  EXPECT_CONTAINS(errorFrom([&] { k.compile(spec); }),
                  "row_runs: 'M' is not a dynamic dim, row stride or dim expression that places rows of a tensor "
                  "indexed in runs");
  spec.divisible = {{"N", 32}};
  EXPECT_CONTAINS(errorFrom([&] { k.compile(spec); }), "--divisible N=32: the granularity must be 2, 4, 8 or 16");
}

// compile(spec) refuses an exact-grid fact for a dim that no @grid axis
// tiles as cdiv(D, T), naming the dims that are tiled (or none).
TEST(Runtime, ExactGridForAnUntiledDimIsRefusedNamingTheTiledOnes) {
  if (!hasCompiler(BackendKind::Cuda)) GTEST_SKIP() << "nvrtc not installed";
  test::TempDir dir;
  Runtime rt(compileOnly("sm_90", dir.path()));
  const char* tiled = R"(@grid(cdiv(N, 256), M)
@block(256)
kernel tiled(x: f32[M, N]):
    j = block_id(0) * 256 + thread_id()
    if j < N:
        x[block_id(1), j] = 0.0
)";
  Kernel k = rt.loadModuleFromString("tiled.spn", tiled).kernel("tiled");
  Specialization spec;
  spec.exactGridDims = {"N"};
  EXPECT_CONTAINS(k.compile(spec).source, "__builtin_assume(N % 256 == 0);");
  spec.exactGridDims = {"M"};
  EXPECT_CONTAINS(errorFrom([&] { k.compile(spec); }),
                  "tiled: --exact-grid M: no @grid axis covers dynamic dim 'M' as cdiv(M, T) (such dims: N (tiles of "
                  "256))");
  Kernel rows = rt.loadModuleFromString("row_runs.spn", kRowRuns).kernel("row_runs");
  EXPECT_CONTAINS(errorFrom([&] { rows.compile(spec); }), "(such dims: none)");
}

const char* kStridedRows = R"(@grid(M)
@block(128)
kernel copy_rows(x: bf16[M, D] strided, y: bf16[M, D]):
    j = thread_id() * 8
    if j + 8 <= D:
        for k in static_range(8):
            y[block_id(), j + k] = x[block_id(), j + k]
)";

// A strided view with unit inner stride and a padded row pitch (a hidden
// state of 1024 bf16 in rows of 1032) compiles to the unit-stride form with
// the row stride's granularity; inner stride 2 keeps the general form.
TEST(Runtime, CompileFromArgumentsFindsUnitInnerStride) {
  if (!hasCompiler(BackendKind::Cuda)) GTEST_SKIP() << "nvrtc not installed";
  test::TempDir dir;
  Runtime rt(compileOnly("sm_90", dir.path()));
  Kernel k = rt.loadModuleFromString("copy_rows.spn", kStridedRows).kernel("copy_rows");
  const void* xs = reinterpret_cast<const void*>(uintptr_t(1) << 24);
  const void* ys = reinterpret_cast<const void*>(uintptr_t(1) << 25);
  auto compileWith = [&](std::initializer_list<int64_t> xStrides) {
    return k.compileFor({tensor(xs, ScalarType::BF16, {8, 1024}, xStrides), tensor(ys, ScalarType::BF16, {8, 1024})});
  };
  CompileReport padded = compileWith({1032, 1});
  EXPECT_CONTAINS(padded.source, "y[int(blockIdx.x) * D + j + k] = x[int(blockIdx.x) * x_stride0 + j + k];");
  EXPECT_CONTAINS(padded.source, "__builtin_assume(x_stride0 % 8 == 0);");
  EXPECT_CONTAINS(padded.source, "x = __spn_assume_aligned<16>(x);");
  EXPECT_EQ(padded.source.find("x_stride1"), std::string::npos) << padded.source;
  CompileReport everyOther = compileWith({2064, 2});
  EXPECT_CONTAINS(everyOther.source, "x[int(blockIdx.x) * x_stride0 + (j + k) * x_stride1]");
  EXPECT_EQ(everyOther.source.find("__builtin_assume(x_stride0"), std::string::npos) << everyOther.source;
  EXPECT_NE(padded.keyHex, everyOther.keyHex);

  Specialization spec;
  spec.unitStrideTensors = {"x"};
  spec.alignedTensors = {"x", "y"};
  spec.index32 = true;  // the launches fit 32-bit indices
  spec.divisible = {{"D", 16}, {"x.stride0", 8}};
  EXPECT_EQ(k.compile(spec).keyHex, padded.keyHex);
  spec.unitStrideTensors = {"y"};
  EXPECT_CONTAINS(errorFrom([&] { k.compile(spec); }), "copy_rows: no strided tensor parameter named 'y'");
}

// KernelOptions::consts: one module, one kernel handle per const value;
// each compiles its own binary, with the key `spindle compile --const`
// gives (CompiledModule::withConsts and Specialization::consts agree).
TEST(Runtime, KernelConstsAreFixedPerHandleAndKeyed) {
  if (!hasCompiler(BackendKind::Cuda)) GTEST_SKIP() << "nvrtc not installed";
  test::TempDir dir;
  Runtime rt(compileOnly("sm_90", dir.path()));
  Module m = rt.loadModule(SPINDLE_SOURCE_DIR "/samples/softmax.spn");
  KernelOptions narrow;
  narrow.staticDims = {"N"};
  narrow.consts["BLOCK"] = ConstOverride::ofInt(256);
  KernelOptions plain;
  plain.staticDims = {"N"};
  CompileReport a = m.kernel("softmax", narrow).compile({{"N", 4096}}, {});
  CompileReport b = m.kernel("softmax", plain).compile({{"N", 4096}}, {});
  EXPECT_CONTAINS(a.source, "__launch_bounds__(256)");
  EXPECT_CONTAINS(b.source, "__launch_bounds__(512)");
  EXPECT_NE(a.keyHex, b.keyHex);
  Specialization spec;
  spec.staticDims["N"] = 4096;
  spec.consts["BLOCK"] = ConstOverride::ofInt(256);
  EXPECT_EQ(m.compiled().generate("softmax", spec).source, a.source);
  EXPECT_CONTAINS(errorFrom([&] { m.kernel("softmax", plain).compile(spec); }),
                  "a kernel's consts are fixed when it is made (KernelOptions::consts)");
  KernelOptions bad;
  bad.consts["BLOCKS"] = ConstOverride::ofInt(1);
  EXPECT_CONTAINS(errorFrom([&] { m.kernel("softmax", bad); }),
                  "the module has no const or compile-time parameter named 'BLOCKS'");
}

TEST(Runtime, CheckedRuntimesCompileAssertsInUnderKeysOfTheirOwn) {
  if (!hasCompiler(BackendKind::Cuda)) GTEST_SKIP() << "nvrtc not installed";
  test::TempDir dir;
  const char* text = R"(
@grid(cdiv(N, 128))
@block(128)
kernel gather(x: f32[N], y: f32[N], idx: i32[N]):
    i = i64(block_id()) * 128 + thread_id()
    if i < N:
        assert idx[i] >= 0 and idx[i] < N, "idx out of range"
        y[i] = x[idx[i]]
)";
  RuntimeOptions checkedOptions = compileOnly("sm_90", dir.path());
  checkedOptions.checked = true;
  Runtime checked(checkedOptions);
  Runtime plain(compileOnly("sm_90", dir.path()));
  CompileReport a = checked.loadModuleFromString("gather.spn", text).kernel("gather").compile({}, {});
  CompileReport b = plain.loadModuleFromString("gather.spn", text).kernel("gather").compile({}, {});
  EXPECT_CONTAINS(a.source,
                  "__spn_assert_fail(\"gather.spn\", 7, 9, \"idx[i] >= 0 and idx[i] < N\", \"idx out of range\")");
  EXPECT_EQ(b.source.find("__spn_assert_fail"), std::string::npos);
  EXPECT_NE(a.keyHex, b.keyHex);
  EXPECT_EQ(b.outcome, CacheOutcome::Miss) << "a plain build must not reuse the checked binary";
}

TEST(Runtime, UnsafeFpAtomicsReachTheAmdCompilerAndTheKey) {
  // -munsafe-fp-atomics turns the f16 compare-and-swap loop into one packed
  // hardware add on gfx90a (tests/golden/isa_check.sh shows the instruction;
  // here: the option reaches hiprtc, changes the binary, and keys it apart).
  // NVIDIA's atomics are safe already: the option changes nothing there.
  const char* text = R"(
@grid(cdiv(N, 128))
@block(128)
kernel acc(x: f16[N], total: f16[4]):
    i = i64(block_id()) * 128 + thread_id()
    if i < N:
        atomic_add(total[i % 4], x[i])
)";
  for (const char* target : {"gfx90a", "sm_90"}) {
    const bool amd = target[0] == 'g';
    if (!hasCompiler(amd ? BackendKind::Hip : BackendKind::Cuda)) continue;
    SCOPED_TRACE(target);
    test::TempDir dir;
    RuntimeOptions unsafeOptions = compileOnly(target, dir.path());
    unsafeOptions.unsafeFpAtomics = true;
    Runtime unsafe(unsafeOptions);
    Runtime safe(compileOnly(target, dir.path()));
    CompileReport a = unsafe.loadModuleFromString("acc.spn", text).kernel("acc").compile({}, {});
    CompileReport b = safe.loadModuleFromString("acc.spn", text).kernel("acc").compile({}, {});
    EXPECT_EQ(a.source, b.source) << "a compiler option, not a different source";
    if (amd) {
      EXPECT_NE(a.keyHex, b.keyHex);
      EXPECT_EQ(b.outcome, CacheOutcome::Miss) << "a safe build must not reuse the unsafe binary";
      EXPECT_NE(a.binaryBytes, b.binaryBytes) << "the loop and the packed add are different code";
    } else {
      EXPECT_EQ(a.keyHex, b.keyHex);
      EXPECT_EQ(b.outcome, CacheOutcome::DiskHit);
    }
  }
}

TEST(Runtime, CompileOnlyRuntimeRefusesToLaunch) {
  if (!hasCompiler(BackendKind::Cuda)) GTEST_SKIP() << "nvrtc not installed";
  test::TempDir dir;
  Runtime rt(compileOnly("sm_75", dir.path()));
  if (rt.hasDevice()) GTEST_SKIP() << "an sm_75 device is present";
  Kernel k = rt.loadModule(kAxpyPath).kernel("axpy");
  int xs[10], ys[10];
  const std::string error = errorFrom([&] {
    k.launch(nullptr, {tensor(xs, ScalarType::F32, {10}), tensor(ys, ScalarType::F32, {10}), scalar(1.0f)});
  });
  EXPECT_CONTAINS(error, "cannot launch");
  EXPECT_CONTAINS(error, "compile-only runtime, target sm_75");
  // Validation comes first: a bad launch says what is wrong with it.
  const Arg mismatched[] = {tensor(xs, ScalarType::F32, {10}), tensor(ys, ScalarType::F32, {11}), scalar(1.0f)};
  EXPECT_CONTAINS(errorFrom([&] { k.launch(nullptr, mismatched, 3); }),
                  "axpy: parameter 'y' dim 0 (N): bound to 10 by 'x' dim 0 but 11 by 'y'");
  EXPECT_THROW(rt.allocate(16), Error);
  EXPECT_EQ(rt.stats().compiles, 0u) << "nothing compiles for a launch that cannot happen";
}

TEST(Runtime, ModuleAndKernelErrors) {
  if (!hasCompiler(BackendKind::Cuda)) GTEST_SKIP() << "nvrtc not installed";
  test::TempDir dir;
  Runtime rt(compileOnly("sm_90", dir.path()));
  const std::string error =
      errorFrom([&] { rt.loadModuleFromString("broken.spn", "kernel k(x: f32[N]):\n    y = \n"); });
  EXPECT_CONTAINS(error, "module 'broken.spn' has errors");
  EXPECT_CONTAINS(error, "broken.spn:2");
  const std::string missing = errorFrom([&] { rt.loadModule(dir.path() + "/missing.spn"); });
  EXPECT_CONTAINS(missing, "spindle: cannot load module '" + dir.path() + "/missing.spn'");
  Module m = rt.loadModuleFromString("rowscale.spn", kRowscale);
  EXPECT_CONTAINS(errorFrom([&] { m.kernel("softmax"); }), "has no kernel 'softmax' (it has: rowscale)");
  Kernel k = m.kernel("rowscale");
  EXPECT_CONTAINS(errorFrom([&] { k.compile({}, {}); }), "rowscale: static dim N needs a value");
  EXPECT_CONTAINS(errorFrom([&] { k.compile({{"N", 4}, {"M", 4}}, {}); }), "rowscale: dim 'M' is dynamic");
}

TEST(Runtime, BackendSelectionErrors) {
  EXPECT_THROW(Runtime(compileOnly("sm_90x!", "")), Error);
  EXPECT_CONTAINS(errorFrom([&] { Runtime rt(compileOnly("vax11", "")); }), "unknown target 'vax11'");
  RuntimeOptions o = compileOnly("gfx90a", "");
  o.backend = BackendKind::Cuda;
  EXPECT_CONTAINS(errorFrom([&] { Runtime rt(o); }), "target 'gfx90a' is not a cuda target");
  ::setenv("SPINDLE_BACKEND", "metal", 1);
  EXPECT_CONTAINS(errorFrom([&] { Runtime rt(compileOnly("", "")); }),
                  "SPINDLE_BACKEND='metal': expected hip, cuda, cpu or auto");
  ::unsetenv("SPINDLE_BACKEND");
}

TEST(Runtime, UnwritableCacheDirectoryDegradesToMemory) {
  if (!hasCompiler(BackendKind::Cuda)) GTEST_SKIP() << "nvrtc not installed";
  test::TempDir dir;
  std::string file = dir.path() + "/not-a-dir";
  { std::ofstream(file) << "x"; }
  std::vector<std::string> warnings;
  Runtime rt(compileOnly("sm_90", file + "/cache", &warnings));
  Kernel k = rt.loadModuleFromString("rowscale.spn", kRowscale).kernel("rowscale");
  EXPECT_EQ(k.compile({{"N", 64}}, {}).outcome, CacheOutcome::Miss);
  EXPECT_EQ(k.compile({{"N", 64}}, {}).outcome, CacheOutcome::MemoryHit);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_CONTAINS(warnings[0], "memory only");
  EXPECT_FALSE(rt.diskCacheEnabled());
  EXPECT_EQ(rt.stats().diskWriteFailures, 1u);
}

TEST(Runtime, DisableDiskCacheFromTheEnvironment) {
  if (!hasCompiler(BackendKind::Cuda)) GTEST_SKIP() << "nvrtc not installed";
  test::TempDir dir;
  ::setenv("SPINDLE_DISABLE_DISK_CACHE", "1", 1);
  Runtime rt(compileOnly("sm_90", dir.path()));
  ::unsetenv("SPINDLE_DISABLE_DISK_CACHE");
  EXPECT_FALSE(rt.diskCacheEnabled());
  rt.loadModuleFromString("rowscale.spn", kRowscale).kernel("rowscale").compile({{"N", 64}}, {});
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

// source(spec) and sourceFor(args) give the text compile(spec) and
// compileFor(args) compile, with the same checks, without compiling (the
// Python package's source()); the cpu target has a compiler wherever the
// suite runs, so the two can be compared.
TEST(Runtime, SourceIsWhatCompileCompiles) {
#if SPINDLE_HAVE_CPU_TARGET
  test::TempDir dir;
  RuntimeOptions o;
  o.backend = BackendKind::Cpu;
  o.target = "cpu";
  o.cacheDir = dir.path();
  Runtime rt(o);
  Kernel k = rt.loadModuleFromString("rowscale.spn", kRowscale).kernel("rowscale");
  Specialization spec;
  spec.staticDims = {{"N", 64}};
  std::string generated = k.source(spec);
  EXPECT_EQ(rt.stats().compiles, 0u);
  EXPECT_EQ(generated, k.compile(spec).source);
  std::vector<float> x(4 * 96), y(4 * 96);
  Arg args[] = {tensor(x.data(), ScalarType::F32, {4, 96}), tensor(y.data(), ScalarType::F32, {4, 96}), scalar(2.0f)};
  std::string bound = k.sourceFor(args, 3);
  EXPECT_CONTAINS(bound, "constexpr int32_t N = 96;");  // the arguments fit 32-bit indices
  EXPECT_NE(bound, generated);
  EXPECT_EQ(bound, k.compileFor(args, 3).source);
  spec.staticDims.clear();
  EXPECT_EQ(errorFrom([&] { k.source(spec); }), errorFrom([&] { k.compile(spec); }));
  EXPECT_CONTAINS(errorFrom([&] { k.source(spec); }), "rowscale: static dim N needs a value");
  args[2] = scalar(2.0);
  EXPECT_EQ(errorFrom([&] { k.sourceFor(args, 3); }), errorFrom([&] { k.compileFor(args, 3); }));
#else
  GTEST_SKIP() << "built without the cpu target";
#endif
}

}  // namespace
}  // namespace spindle
