// Every sample on the cpu target at warp 32 and warp 64, in checked builds
// (every access bounds-checked), with fresh random inputs, against the
// double-precision references of bench/references.cpp and the tolerances
// bench/gpu_check.cpp uses for the sample on a GPU (issue 16, item 3). The
// cases (dtypes, static and dynamic dims, sizes that are not multiples of
// the block) are in sample_cases.cpp.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "../runtime/test_util.h"  // ScopedEnv
#include "sample_cases.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::cpu_samples {
namespace {

std::vector<std::string> sampleNames() {
  std::vector<std::string> names;
  for (const Sample& s : samples()) names.push_back(s.name);
  return names;
}

const std::string kWidths[] = {"cpu", "cpu:warp64"};
const char* widthName(const std::string& target) { return target == "cpu" ? "warp32" : "warp64"; }

// What one width made of the cases: a line per case, and what failed.
struct WidthResult {
  std::vector<std::string> lines, failures;
};

WidthResult runCases(const std::string& sample, const std::string& target, const std::vector<Case>& cases,
                     Device& device) {
  WidthResult r;
  for (const Case& c : cases) {
    const std::string label = fmt::format("{} {} ({})", sample, c.label, widthName(target));
    std::vector<Bytes> out;
    try {
      out = c.run(device);
    } catch (const Error& e) {
      r.failures.push_back(label + ": " + e.what());
      continue;
    }
    Checker checker;
    c.check(out, checker);
    std::string notes;
    for (const auto& n : checker.notes()) notes += (notes.empty() ? "" : "; ") + n;
    r.lines.push_back(label + ": " + notes);
    for (const auto& f : checker.failures()) r.failures.push_back(label + ": " + f);
  }
  return r;
}

const Sample* findSample(const std::string& name) {
  for (const Sample& s : samples())
    if (s.name == name) return &s;
  return nullptr;
}

// The sample's cases, fresh from its input stream, at both warp widths, one
// width per thread.
std::array<WidthResult, 2> runAtBothWidths(const Sample& sample) {
  Rng rng = rngFor(sample.name);
  const std::vector<Case> cases = sample.cases(rng);
  std::array<WidthResult, 2> results;
  parallelFor(2, [&](size_t w) {
    Runtime& rt = sharedRuntime(kWidths[w]);
    if (!rt.hasDevice()) results[w].failures.push_back(kWidths[w] + ": " + rt.deviceStatus());
    else results[w] = runCases(sample.name, kWidths[w], cases, originalDevice(sample.name, kWidths[w]));
  });
  return results;
}

class SampleNumerics : public ::testing::TestWithParam<std::string> {};

TEST_P(SampleNumerics, MatchesTheDoublePrecisionReferenceAtBothWarpWidths) {
  const std::string& name = GetParam();
  SCOPED_TRACE(fmt::format("random inputs from seed {} (SPINDLE_TEST_SEED={} repeats them)", testSeed(), testSeed()));
  const Sample* sample = findSample(name);
  ASSERT_NE(sample, nullptr);
  for (const WidthResult& r : runAtBothWidths(*sample)) {
    for (const auto& line : r.lines) std::printf("  %s\n", line.c_str());
    for (const auto& f : r.failures) ADD_FAILURE() << f;
  }
}

INSTANTIATE_TEST_SUITE_P(Samples, SampleNumerics, ::testing::ValuesIn(sampleNames()),
                         [](const auto& info) { return info.param; });

// Samples whose threads wait for one another's phases (barriers(),
// docs/language.md 8.14) under shuffled schedules too (SPINDLE_CPU_SCHEDULE,
// docs/runtime.md): the run in thread order is one order of many a GPU may
// take, and a wait outside its parity window may show only in another (the
// first epilogue group of gemm_ws passed in thread order and hung an H200).
// One worker, so that persistent blocks take several tiles each.
std::vector<std::string> phaseBarrierSampleNames() {
  std::vector<std::string> names;
  for (const Sample& s : samples()) {
    std::ifstream in(samplePath(s.name));
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().find("barriers(") != std::string::npos) names.push_back(s.name);
  }
  return names;
}

using Consts = std::map<std::string, ConstOverride>;

// The consts of every config of the module's @tune but the first, the
// default that runAtBothWidths runs.
std::vector<Consts> otherTuneConfigs(Module& module) {
  std::vector<Consts> configs;
  for (const std::string& k : module.kernelNames()) {
    const auto& tune = module.kernel(k).info().tune;
    if (!tune) continue;
    for (size_t c = 1; c < tune->configs.size(); ++c) {
      Consts consts;
      for (size_t i = 0; i < tune->consts.size(); ++i)
        consts.emplace(tune->consts[i], ConstOverride::ofInt(tune->configs[c][i]));
      configs.push_back(std::move(consts));
    }
  }
  return configs;
}

std::string configLabel(const Consts& config) {
  std::string label;
  for (const auto& [c, v] : config) label += (label.empty() ? "" : " ") + c + "=" + constOverrideText(v);
  return label;
}

// The sample's cases at warp 32 with the config's consts fixed on its kernels.
WidthResult runConfig(const std::string& name, Runtime& rt, Module& module, const Consts& config) {
  Device device(rt, module, config);
  Rng rng = rngFor(name);
  return runCases(name, "cpu", findSample(name)->cases(rng), device);
}

class SampleSchedules : public ::testing::TestWithParam<std::string> {};

// Each config of a tuned sample too: gemm_ws's default (STAGED = 1) is
// not the one a GPU takes at most shapes.
TEST_P(SampleSchedules, MatchTheReferenceUnderShuffledSchedules) {
  const std::string& name = GetParam();
  SCOPED_TRACE(fmt::format("random inputs from seed {} (SPINDLE_TEST_SEED={} repeats them)", testSeed(), testSeed()));
  const Sample* sample = findSample(name);
  ASSERT_NE(sample, nullptr);
  Runtime& rt = sharedRuntime("cpu");
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Module module = rt.loadModule(samplePath(name));
  const std::vector<Consts> configs = otherTuneConfigs(module);
  test::ScopedEnv oneWorker("SPINDLE_CPU_THREADS", "1");
  for (int seed = 1; seed <= 4; ++seed) {
    test::ScopedEnv schedule("SPINDLE_CPU_SCHEDULE", std::to_string(seed).c_str());
    for (const WidthResult& r : runAtBothWidths(*sample))
      for (const auto& f : r.failures) ADD_FAILURE() << "SPINDLE_CPU_SCHEDULE=" << seed << ": " << f;
    for (const Consts& config : configs)
      for (const auto& f : runConfig(name, rt, module, config).failures)
        ADD_FAILURE() << "SPINDLE_CPU_SCHEDULE=" << seed << " [" << configLabel(config) << "] " << f;
  }
}

INSTANTIATE_TEST_SUITE_P(Samples, SampleSchedules, ::testing::ValuesIn(phaseBarrierSampleNames()),
                         [](const auto& info) { return info.param; });

// Every config of a sample's @tune, not only the default the test above
// runs, computes what the sample promises: a tuned launch may pick any of
// them (docs/language.md 9.6). The same cases and references, at warp 32,
// each config's consts fixed on the kernels (so nothing is tuned).
std::vector<std::string> tunedSampleNames() {
  std::vector<std::string> names;
  Runtime& rt = sharedRuntime("cpu");
  for (const Sample& s : samples()) {
    Module m = rt.loadModule(samplePath(s.name));
    for (const std::string& k : m.kernelNames())
      if (m.kernel(k).info().tune) {
        names.push_back(s.name);
        break;
      }
  }
  return names;
}

class SampleTuneConfigs : public ::testing::TestWithParam<std::string> {};

TEST_P(SampleTuneConfigs, EveryConfigMatchesTheReference) {
  const std::string& name = GetParam();
  SCOPED_TRACE(fmt::format("random inputs from seed {} (SPINDLE_TEST_SEED={} repeats them)", testSeed(), testSeed()));
  ASSERT_NE(findSample(name), nullptr);
  Runtime& rt = sharedRuntime("cpu");
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  Module module = rt.loadModule(samplePath(name));
  const std::vector<Consts> configs = otherTuneConfigs(module);
  ASSERT_FALSE(configs.empty()) << name << ": @tune with one config";
  for (const Consts& config : configs) {
    const WidthResult r = runConfig(name, rt, module, config);
    for (const auto& line : r.lines) std::printf("  [%s] %s\n", configLabel(config).c_str(), line.c_str());
    for (const auto& f : r.failures) ADD_FAILURE() << "[" << configLabel(config) << "] " << f;
  }
}

INSTANTIATE_TEST_SUITE_P(Samples, SampleTuneConfigs, ::testing::ValuesIn(tunedSampleNames()),
                         [](const auto& info) { return info.param; });

// A sample added to samples/ must get cases here, or it would go untested.
TEST(SampleNumericsCoverage, EverySampleHasCases) { EXPECT_EQ(sampleFiles(), sampleNames()); }

}  // namespace
}  // namespace spindle::cpu_samples
#endif  // SPINDLE_HAVE_CPU_TARGET
