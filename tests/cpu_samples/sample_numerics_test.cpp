// Every sample on the cpu target at warp 32 and warp 64, in checked builds
// (every access bounds-checked), with fresh random inputs, against the
// double-precision references of bench/references.cpp and the tolerances
// bench/gpu_check.cpp uses for the sample on a GPU (issue 16, item 3). The
// cases (dtypes, static and dynamic dims, sizes that are not multiples of
// the block) are in sample_cases.cpp.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

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

WidthResult runCases(const std::string& sample, const std::string& target, const std::vector<Case>& cases) {
  WidthResult r;
  Runtime& rt = sharedRuntime(target);
  if (!rt.hasDevice()) {
    r.failures.push_back(target + ": " + rt.deviceStatus());
    return r;
  }
  Device& device = originalDevice(sample, target);
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

// The same inputs at both warp widths, one width per thread.
class SampleNumerics : public ::testing::TestWithParam<std::string> {};

TEST_P(SampleNumerics, MatchesTheDoublePrecisionReferenceAtBothWarpWidths) {
  const std::string& name = GetParam();
  SCOPED_TRACE(fmt::format("random inputs from seed {} (SPINDLE_TEST_SEED={} repeats them)", testSeed(), testSeed()));
  const Sample* sample = nullptr;
  for (const Sample& s : samples())
    if (s.name == name) sample = &s;
  ASSERT_NE(sample, nullptr);
  Rng rng = rngFor(name);
  const std::vector<Case> cases = sample->cases(rng);
  WidthResult results[2];
  parallelFor(2, [&](size_t w) { results[w] = runCases(name, kWidths[w], cases); });
  for (const WidthResult& r : results) {
    for (const auto& line : r.lines) std::printf("  %s\n", line.c_str());
    for (const auto& f : r.failures) ADD_FAILURE() << f;
  }
}

INSTANTIATE_TEST_SUITE_P(Samples, SampleNumerics, ::testing::ValuesIn(sampleNames()),
                         [](const auto& info) { return info.param; });

// A sample added to samples/ must get cases here, or it would go untested.
TEST(SampleNumericsCoverage, EverySampleHasCases) { EXPECT_EQ(sampleFiles(), sampleNames()); }

}  // namespace
}  // namespace spindle::cpu_samples
#endif  // SPINDLE_HAVE_CPU_TARGET
