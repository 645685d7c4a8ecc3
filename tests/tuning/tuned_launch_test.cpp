// Tuned launches end to end on the cpu target: the first launch's outputs
// are an untuned launch's (tuning runs on scratch copies), failing configs
// are skipped, choices persist across runtimes and buckets, SPINDLE_TUNE=0,
// the deferred mode, a key another process holds, export and import.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "test_util.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::test {
namespace {

// Sums x into total[0] with atomic adds: a tuning launch on the caller's
// tensor would add again, so the first launch's total shows any leak.
// BLOCK=2048 cannot launch (blocks hold at most 1024 threads) and
// BLOCK=48 fails to build (SPLIT divides by zero): both are skipped.
const char* kAccumulate = R"(
const BLOCK = 64
const VEC = 1
const SPLIT = 64 // (BLOCK - 48)

@grid(cdiv(N, BLOCK * VEC))
@block(BLOCK)
@tune(BLOCK=[64, 48, 128, 2048], VEC=[1, 2], key=[N], where=BLOCK * VEC <= 4096)
kernel accumulate(x: i32[N], total: i32[1]):
    base = i64(block_id()) * BLOCK * VEC + thread_id()
    for v in static_range(VEC):
        i = base + v * BLOCK
        if i < N:
            atomic_add(total[0], x[i] + SPLIT - SPLIT)
)";

// One binary cache for the whole test program (the cpu target's compiles
// are the slow part); each test gets a tuning store of its own.
const std::string& sharedCacheDir() {
  static TempDir dir;
  return dir.path();
}

struct Fixture : ::testing::Test {
  void SetUp() override { std::filesystem::remove_all(sharedCacheDir() + "/tune"); }
  RuntimeOptions options(TuneMode mode = TuneMode::Blocking) {
    RuntimeOptions o = cpuOptions("cpu");
    o.diskCache = true;
    o.cacheDir = sharedCacheDir();
    o.tune.mode = mode;
    o.tune.budgetMs = 300;
    o.warn = [this](const std::string& w) { warnings.push_back(w); };
    return o;
  }
  std::vector<std::string> warnings;
};

struct Sum {
  Runtime& rt;
  int64_t n;
  std::vector<int32_t> x;
  DeviceBuffer dx, dt;
  Sum(Runtime& r, int64_t count) : rt(r), n(count), x(size_t(count)) {
    std::iota(x.begin(), x.end(), 1);
    dx = rt.allocate(x.size() * 4);
    dt = rt.allocate(4);
    rt.copyToDevice(dx, x.data(), x.size() * 4);
    reset();
  }
  void reset() {
    int32_t zero = 0;
    rt.copyToDevice(dt, &zero, 4);
  }
  std::vector<Arg> args() const {
    return {tensor(dx.data(), ScalarType::I32, {n}), tensor(dt.data(), ScalarType::I32, {1})};
  }
  int32_t total() {
    int32_t t = 0;
    rt.copyToHost(&t, dt, 4);
    return t;
  }
  int32_t expected() const { return int32_t(n * (n + 1) / 2); }
};

TEST_F(Fixture, TheFirstTunedLaunchGivesAnUntunedLaunchsOutputs) {
  for (uint64_t scratchMax : {UINT64_MAX, uint64_t(0)}) {  // scratch copies, then save and restore
    SetUp();
    RuntimeOptions o = options();
    o.tune.scratchMaxBytes = scratchMax;
    Runtime rt(o);
    Kernel k = rt.loadModuleFromString("acc.spn", kAccumulate).kernel("accumulate");
    Sum s(rt, 1000);
    auto args = s.args();
    k.launch(nullptr, args.data(), args.size());
    EXPECT_EQ(s.total(), s.expected()) << "scratch bound " << scratchMax;
    EXPECT_EQ(rt.stats().tunings, 1u);
    EXPECT_GT(rt.stats().tuningLaunches, 8u);  // every launchable config, at least 5 rounds
    k.launch(nullptr, args.data(), args.size());
    EXPECT_EQ(s.total(), 2 * s.expected());
    EXPECT_EQ(rt.stats().tunings, 1u);
  }
}

TEST_F(Fixture, ConfigsThatFailAreSkippedAndReported) {
  // A budget no run here reaches, so that the minimum of 5 rounds is timed
  // even in a sanitizer build (the fixture's 300 ms ended it after one).
  RuntimeOptions o = options();
  o.tune.budgetMs = 600000;
  Runtime rt(o);
  Kernel k = rt.loadModuleFromString("acc.spn", kAccumulate).kernel("accumulate");
  Sum s(rt, 1000);
  auto args = s.args();
  TuneReport r = k.tune(nullptr, args.data(), args.size());
  ASSERT_EQ(r.configs.size(), 8u);
  EXPECT_EQ(r.configs[0], "BLOCK=64 VEC=1");
  for (size_t i = 0; i < r.configs.size(); ++i) {
    bool bad = r.configs[i].rfind("BLOCK=48", 0) == 0 || r.configs[i].rfind("BLOCK=2048", 0) == 0;
    EXPECT_EQ(!r.failures[i].empty(), bad) << r.configs[i] << ": " << r.failures[i];
    EXPECT_EQ(r.medianMs[i] >= 0, !bad) << r.configs[i];
  }
  EXPECT_NE(r.configs[size_t(r.chosen)].rfind("BLOCK=48", 0), 0u);
  EXPECT_GE(r.rounds, 5);
  size_t skippedWarnings = 0;
  for (const auto& w : warnings) skippedWarnings += w.find("skipped") != std::string::npos;
  EXPECT_EQ(skippedWarnings, 4u);
  EXPECT_EQ(s.total(), 0);  // tuning alone leaves the tensors as they were
}

TEST_F(Fixture, EveryConfigFailingIsAnError) {
  Runtime rt(options());
  std::string text = kAccumulate;
  text.replace(text.find("BLOCK=[64, 48, 128, 2048]"), 25, "BLOCK=[48, 2048]");
  Kernel k = rt.loadModuleFromString("acc.spn", text).kernel("accumulate");
  Sum s(rt, 100);
  auto args = s.args();
  std::string error = errorFrom([&] { k.launch(nullptr, args.data(), args.size()); });
  EXPECT_CONTAINS(error, "every config failed");
  EXPECT_CONTAINS(error, "BLOCK=48 VEC=1:");
  EXPECT_CONTAINS(error, "BLOCK=2048 VEC=2:");
}

// A second runtime (a second process) finds the choice in the store: no
// tuning launch, the same config. A size in the same bucket reuses it; one
// in another bucket tunes again.
TEST_F(Fixture, ChoicesPersistPerBucket) {
  std::string chosen;
  {
    Runtime rt(options());
    Kernel k = rt.loadModuleFromString("acc.spn", kAccumulate).kernel("accumulate");
    Sum s(rt, 1000);
    auto args = s.args();
    k.launch(nullptr, args.data(), args.size());
    chosen = k.compileFor(args.data(), args.size()).tuneConfig;
    EXPECT_EQ(k.compileFor(args.data(), args.size()).tuneChoice, "tuned");
    // bind() plans the chosen config's launch: its block is the config's BLOCK.
    int64_t block = std::stoll(chosen.substr(chosen.find('=') + 1));
    EXPECT_EQ(k.bind(args.data(), args.size()).geometry.block[0], block) << chosen;
    // sourceFor() shows the chosen config's source, the one compileFor() compiles.
    const std::string source = k.sourceFor(args.data(), args.size());
    EXPECT_EQ(source, k.compileFor(args.data(), args.size()).source);
    EXPECT_NE(source.find("--const BLOCK=" + std::to_string(block)), std::string::npos) << chosen;
  }
  Runtime rt(options());
  Kernel k = rt.loadModuleFromString("acc.spn", kAccumulate).kernel("accumulate");
  Sum same(rt, 1000), sameBucket(rt, 1020), otherBucket(rt, 1030);
  auto a = same.args(), b = sameBucket.args(), c = otherBucket.args();
  k.launch(nullptr, a.data(), a.size());
  EXPECT_EQ(same.total(), same.expected());
  CompileReport r = k.compileFor(a.data(), a.size());
  EXPECT_EQ(r.tuneConfig, chosen);
  EXPECT_EQ(r.tuneChoice, "stored");
  k.launch(nullptr, b.data(), b.size());
  EXPECT_EQ(sameBucket.total(), sameBucket.expected());
  EXPECT_EQ(rt.stats().tuningLaunches, 0u);
  EXPECT_EQ(rt.stats().tuneStoreHits, 1u);
  k.launch(nullptr, c.data(), c.size());  // 1030: bucket 2048
  EXPECT_EQ(otherBucket.total(), otherBucket.expected());
  EXPECT_EQ(rt.stats().tunings, 1u);
}

TEST_F(Fixture, SpindleTuneZeroUsesTheFirstConfig) {
  ScopedEnv env("SPINDLE_TUNE", "0");
  Runtime rt(options());
  Kernel k = rt.loadModuleFromString("acc.spn", kAccumulate).kernel("accumulate");
  Sum s(rt, 1000);
  auto args = s.args();
  k.launch(nullptr, args.data(), args.size());
  k.launch(nullptr, args.data(), args.size());
  EXPECT_EQ(s.total(), 2 * s.expected());
  EXPECT_EQ(rt.stats().tuningLaunches, 0u);
  CompileReport r = k.compileFor(args.data(), args.size());
  EXPECT_EQ(r.tuneConfig, "BLOCK=64 VEC=1");
  EXPECT_EQ(r.tuneChoice, "default");
}

// The cpu target does not tune unless asked: host timings say nothing of a
// GPU's choice, and the samples' tests launch kernels with @tune.
TEST_F(Fixture, TheCpuTargetDoesNotTuneUnlessAsked) {
  RuntimeOptions o = options();
  o.tune.mode.reset();
  Runtime rt(o);
  Kernel k = rt.loadModuleFromString("acc.spn", kAccumulate).kernel("accumulate");
  Sum s(rt, 1000);
  auto args = s.args();
  for (int i = 0; i < 3; ++i) k.launch(nullptr, args.data(), args.size());
  EXPECT_EQ(s.total(), 3 * s.expected());
  EXPECT_EQ(rt.stats().tuningLaunches, 0u);
}

// Deferred (the default mode): the first launch of a bucket runs the
// default config untuned; the second tunes, then launches the choice.
TEST_F(Fixture, TheDeferredModeTunesAtTheSecondLaunch) {
  Runtime rt(options(TuneMode::Deferred));
  Kernel k = rt.loadModuleFromString("acc.spn", kAccumulate).kernel("accumulate");
  Sum s(rt, 1000);
  auto args = s.args();
  k.launch(nullptr, args.data(), args.size());
  EXPECT_EQ(rt.stats().tunings, 0u);
  EXPECT_EQ(k.compileFor(args.data(), args.size()).tuneChoice, "default");
  k.launch(nullptr, args.data(), args.size());
  EXPECT_EQ(rt.stats().tunings, 1u);
  EXPECT_EQ(s.total(), 2 * s.expected());
}

// Another process holds the key's lease: this one waits (bounded), then
// uses the default config without tuning.
TEST_F(Fixture, AKeyAnotherProcessTunesIsNotTunedAgain) {
  RuntimeOptions o = options();
  o.tune.waitMs = 50;
  std::string keyHex;
  {
    Runtime probe(options());
    Kernel k = probe.loadModuleFromString("acc.spn", kAccumulate).kernel("accumulate");
    Sum s(probe, 1000);
    auto args = s.args();
    keyHex = k.tune(nullptr, args.data(), args.size()).keyHex;
  }
  std::filesystem::remove_all(sharedCacheDir() + "/tune");
  std::string lease = sharedCacheDir() + "/tune/v1/" + keyHex.substr(0, 2) + "/" + keyHex + ".lease";
  std::filesystem::create_directories(std::filesystem::path(lease).parent_path());
  { std::ofstream(lease) << "12345\n"; }
  Runtime rt(o);
  Kernel k = rt.loadModuleFromString("acc.spn", kAccumulate).kernel("accumulate");
  Sum s(rt, 1000);
  auto args = s.args();
  k.launch(nullptr, args.data(), args.size());
  EXPECT_EQ(s.total(), s.expected());
  EXPECT_EQ(rt.stats().tuningLaunches, 0u);
  ASSERT_FALSE(warnings.empty());
  EXPECT_CONTAINS(warnings.back(), "another process is tuning it");
  EXPECT_EQ(k.compileFor(args.data(), args.size()).tuneConfig, "BLOCK=64 VEC=1");
  // Tuning ahead of time is asked for: it tunes anyway, and leaves the
  // other process's lease in place.
  EXPECT_GT(k.tune(nullptr, args.data(), args.size()).rounds, 0);
  EXPECT_TRUE(std::filesystem::exists(lease));
}

// An application ships its choices: exported from one cache directory,
// imported into another, they are used there without tuning.
TEST_F(Fixture, ExportedChoicesImportIntoAnotherStore) {
  TempDir other, files;
  std::string json = files.path() + "/choices.json", chosen;
  {
    Runtime rt(options());
    Kernel k = rt.loadModuleFromString("acc.spn", kAccumulate).kernel("accumulate");
    Sum s(rt, 1000);
    auto args = s.args();
    TuneReport r = k.tune(nullptr, args.data(), args.size());
    chosen = r.configs[size_t(r.chosen)];
    EXPECT_EQ(rt.exportTuning(json), 1u);
  }
  RuntimeOptions o = options();
  o.cacheDir = other.path();
  Runtime rt(o);
  EXPECT_EQ(rt.importTuning(json), 1u);
  Kernel k = rt.loadModuleFromString("acc.spn", kAccumulate).kernel("accumulate");
  Sum s(rt, 1000);
  auto args = s.args();
  k.launch(nullptr, args.data(), args.size());
  EXPECT_EQ(s.total(), s.expected());
  EXPECT_EQ(rt.stats().tuningLaunches, 0u);
  EXPECT_EQ(k.compileFor(args.data(), args.size()).tuneConfig, chosen);
  EXPECT_CONTAINS(errorFrom([&] { rt.importTuning(files.path() + "/missing.json"); }), "cannot read");
}

// A handle whose KernelOptions::consts fix a tuned const is not tuned.
TEST_F(Fixture, FixingATunedConstTurnsTuningOff) {
  Runtime rt(options());
  KernelOptions ko;
  ko.consts["BLOCK"] = ConstOverride::ofInt(128);
  Kernel k = rt.loadModuleFromString("acc.spn", kAccumulate).kernel("accumulate", ko);
  Sum s(rt, 1000);
  auto args = s.args();
  k.launch(nullptr, args.data(), args.size());
  EXPECT_EQ(s.total(), s.expected());
  EXPECT_EQ(rt.stats().tuningLaunches, 0u);
  EXPECT_TRUE(k.compileFor(args.data(), args.size()).tuneConfig.empty());
  EXPECT_CONTAINS(errorFrom([&] { k.tune(nullptr, args.data(), args.size()); }), "fixes a tuned const");
}

}  // namespace
}  // namespace spindle::test
#endif
