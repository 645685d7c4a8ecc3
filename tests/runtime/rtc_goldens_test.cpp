// Every golden case compiles through the runtime with the real run-time
// compilers, compile-only: hiprtc for gfx90a and nvrtc for sm_90. (hipcc and
// nvcc compile the same files ahead of time in golden_compile_*.)
#include <gtest/gtest.h>

#include <filesystem>

#include "../golden/golden_cases.h"
#include "spindle/runtime.hpp"

namespace {

using namespace spindle::golden;

struct RtcCase {
  GoldenCase golden;
  std::string target;
};

void PrintTo(const RtcCase& c, std::ostream* os) { *os << c.golden.name << " for " << c.target; }

std::vector<RtcCase> rtcCases() {
  std::vector<RtcCase> out;
  for (const auto& c : discoverCases())
    for (const char* target : {"gfx90a", "sm_90"}) out.push_back({c, target});
  return out;
}

class RtcGolden : public ::testing::TestWithParam<RtcCase> {};

TEST_P(RtcGolden, CompilesWithTheRunTimeCompiler) {
  const RtcCase& c = GetParam();
  spindle::RuntimeOptions options;
  options.target = c.target;
  options.diskCache = false;  // compile for real every time
  std::unique_ptr<spindle::Runtime> runtime;
  try {
    runtime = std::make_unique<spindle::Runtime>(options);
  } catch (const spindle::Error& e) {
    GTEST_SKIP() << "no run-time compiler for " << c.target << ": " << e.what();
  }
  const fs::path root = SPINDLE_SOURCE_DIR;
  spindle::Module module = runtime->loadModuleFromString(c.golden.spnPath, readFile(root / c.golden.spnPath));
  std::string kernelName;
  spindle::Specialization spec = parseFlags(c.golden.flags, kernelName);
  if (kernelName.empty()) kernelName = module.kernelNames().at(0);
  spindle::KernelOptions kernelOptions;
  for (const auto& [dim, value] : spec.staticDims) kernelOptions.staticDims.push_back(dim);
  kernelOptions.consts = spec.consts;  // the golden's --const values, compile-time parameters included
  spindle::Kernel kernel = module.kernel(kernelName, kernelOptions);
  spindle::CompileReport report = kernel.compile(spec.staticDims, spec.typeArgs);
  EXPECT_GT(report.binaryBytes, 0u);
}

INSTANTIATE_TEST_SUITE_P(All, RtcGolden, ::testing::ValuesIn(rtcCases()),
                         [](const ::testing::TestParamInfo<RtcCase>& info) {
                           std::string n = info.param.golden.name + "_" + info.param.target;
                           for (char& ch : n)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

}  // namespace
