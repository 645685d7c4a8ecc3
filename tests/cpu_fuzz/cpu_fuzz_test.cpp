// Differential fuzzing of the cpu target (issue 16, item 5). Each seed gives
// a random valid integer kernel (random_kernel.h) and its inputs; the kernel
// runs on the cpu target in checked builds (every access bounds-checked,
// every assert compiled in)
//   - with its dims static and dynamic, which must agree bit for bit;
//   - at warp widths 32 and 64, which must agree too unless the program
//     reads the width (lanes, warp collectives, shuffles);
// and its generated HIP must compile with hipcc (gfx90a) and nvcc (sm_90)
// where they are installed. A module Spindle refuses, a launch that fails
// and a difference are all failures, reported with the seed, the program
// and how to repeat it.
//
// CI runs a fixed subset from seed 1 (kCiPrograms, kCiVendorPrograms: counts
// and cost below). For long runs:
//   SPINDLE_FUZZ_PROGRAMS=2000 SPINDLE_FUZZ_SEED=random build/bin/cpu_fuzz_tests
// (scripts/cpu_fuzz.sh); SPINDLE_FUZZ_JOBS sets the threads (default 2),
// SPINDLE_FUZZ_DUMP=DIR writes every program there, SPINDLE_FUZZ_TEXT=FILE
// runs a seed with its program's text replaced (to reduce a failure).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <spindle/generator.h>
#include <spindle/runtime.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "campaign.h"
#include "program_runner.h"
#include "random_kernel.h"
#include "ubsan_host.h"
#include "vendor_compilers.h"

namespace spindle::cpu_fuzz {
namespace {

// The CI subset, from seed 1: kCiPrograms programs run on the cpu target,
// kCiVendorPrograms of them through hipcc and nvcc (0.7 s and 0.3 s a file:
// the larger cost). Measured on the 2-core development machine
// (RelWithDebInfo, a load average of 3 from other work): 60 programs in
// 19 s, 30 through both compilers in 42 s; each test prints its own count
// and time at the end.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kCiPrograms = 8;  // under ASan a sample: the host compiler is the cost either way
constexpr int kCiVendorPrograms = 4;
#else
constexpr int kCiPrograms = 60;
constexpr int kCiVendorPrograms = 30;
#endif

std::string repeatHint(uint64_t seed) {
  return fmt::format("SPINDLE_FUZZ_SEED={} SPINDLE_FUZZ_PROGRAMS=1 build/bin/cpu_fuzz_tests repeats it", seed);
}

std::string report(const FuzzProgram& p, const LaunchData& d, const std::string& what) {
  std::string dims;
  for (const auto& [name, value] : d.dims) dims += fmt::format(" {}={}", name, value);
  return fmt::format("seed {}: {}\n({}; dims{})\n{}", p.seed, what, repeatHint(p.seed), dims, numbered(p.text));
}

void dump(const Campaign& c, const FuzzProgram& p) {
  if (c.dumpDir.empty()) return;
  std::filesystem::create_directories(c.dumpDir);
  std::ofstream(c.dumpDir + "/" + p.fileName) << p.text;
}

// What a run of the campaign saw, for its closing line.
struct Tally {
  std::mutex mu;
  int programs = 0, widthDependent = 0, launches = 0;
  std::map<std::string, int> features;
  void add(const FuzzProgram& p, int runs) {
    std::lock_guard<std::mutex> lock(mu);
    ++programs;
    widthDependent += p.widthDependent;
    launches += runs;
    for (const auto& f : p.features) ++features[f];
  }
  std::string summary() {
    std::string s =
        fmt::format("{} programs ({} read the warp width), {} launches; programs using each construct:", programs,
                    widthDependent, launches);
    for (const auto& [f, n] : features) s += fmt::format(" {} {},", f, n);
    s.pop_back();
    return s;
  }
};

RuntimeOptions cpuOptions(int warp) {
  RuntimeOptions o;
  o.backend = BackendKind::Cpu;
  o.target = warp == 64 ? "cpu:warp64" : "cpu";
  o.diskCache = false;
  o.checked = true;
  return o;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(CpuFuzz, StaticAndDynamicDimsAndWarpWidthsAgree) {
#if !SPINDLE_HAVE_CPU_TARGET
  GTEST_SKIP() << "this build has no cpu target (Boost.Context)";
#endif
  Campaign c = Campaign::fromEnvironment(kCiPrograms);
  // SPINDLE_FUZZ_UBSAN=1: kernels compiled with -fsanitize=undefined, one
  // program at a time so that each report names its program.
  std::unique_ptr<UbsanHost> ubsan;
  if (const char* u = std::getenv("SPINDLE_FUZZ_UBSAN"); u && std::string(u) == "1") {
    ubsan = std::make_unique<UbsanHost>();
    c.jobs = 1;
  }
  {
    Runtime probe(cpuOptions(32));
    if (!probe.hasDevice()) GTEST_SKIP() << "no cpu target: " << probe.deviceStatus();
  }
  const auto start = std::chrono::steady_clock::now();
  // Each worker thread has a runtime per width: a specialization compiles
  // once per runtime.
  std::vector<std::unique_ptr<Runtime>> runtimes32(size_t(c.jobs)), runtimes64(size_t(c.jobs));
  Tally tally;
  const std::vector<std::string> failures = forEachSeed(c, [&](uint64_t seed, int worker) -> std::string {
    auto& rt32 = runtimes32[size_t(worker)];
    auto& rt64 = runtimes64[size_t(worker)];
    if (!rt32) rt32 = std::make_unique<Runtime>(cpuOptions(32));
    if (!rt64) rt64 = std::make_unique<Runtime>(cpuOptions(64));
    FuzzProgram p = randomKernel(seed);
    // SPINDLE_FUZZ_TEXT=FILE: the seed's program with its text edited (by
    // hand or by a reducer; same parameters), to narrow a failure down.
    if (const char* edited = std::getenv("SPINDLE_FUZZ_TEXT")) {
      std::ifstream in(edited);
      std::stringstream text;
      text << in.rdbuf();
      p.text = text.str();
    }
    dump(c, p);
    const LaunchData d = drawLaunch(p, seed);
    // A program that reads the width is compared with itself at one width,
    // each seed taking the other one.
    const int width = p.widthDependent && seed % 2 ? 64 : 32;
    std::vector<Config> configs = {{width, true}, {width, false}};
    if (!p.widthDependent) configs.push_back({64, false});
    std::vector<std::vector<Bytes>> results;
    if (ubsan) ubsan->begin();
    for (const Config& config : configs) {
      try {
        results.push_back(runProgram(config.warp == 64 ? *rt64 : *rt32, p, d, config));
      } catch (const Error& e) {
        if (ubsan) ubsan->takeReports();
        return report(
            p, d,
            fmt::format("{} failed (a generator bug if Spindle is right to refuse it):\n{}", config.name(), e.what()));
      }
      if (results.size() < 2) continue;
      const std::string diff = firstDifference(p, results[results.size() - 2], results.back());
      if (!diff.empty() && ubsan) ubsan->takeReports();
      if (!diff.empty())
        return report(p, d,
                      fmt::format("{} and {} differ: {}", configs[results.size() - 2].name(), config.name(), diff));
    }
    if (ubsan)
      if (const std::string reports = ubsan->takeReports(); !reports.empty())
        return report(p, d, "undefined behaviour in the compiled kernel:\n" + reports);
    tally.add(p, int(configs.size()));
    return "";
  });
  for (const std::string& f : failures) ADD_FAILURE() << f;
  std::printf("cpu fuzz: %s: %s; %zu failed, %.1f s\n", c.describe().c_str(), tally.summary().c_str(), failures.size(),
              secondsSince(start));
}

TEST(CpuFuzz, GeneratedHipCompilesWithHipccAndNvcc) {
  const Campaign c = Campaign::fromEnvironment(kCiVendorPrograms);
  std::vector<VendorCompiler> compilers;
  if (auto h = findHipcc()) compilers.push_back(*h);
  if (auto n = findNvcc()) compilers.push_back(*n);
  if (compilers.empty()) GTEST_SKIP() << "neither hipcc nor nvcc is installed";
  const auto start = std::chrono::steady_clock::now();
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("spindle_cpu_fuzz_{}", static_cast<long>(getpid()));
  std::filesystem::create_directories(dir);
  const std::vector<std::string> failures = forEachSeed(c, [&](uint64_t seed, int) -> std::string {
    const FuzzProgram p = randomKernel(seed);
    const LaunchData d = drawLaunch(p, seed);
    // One specialization per program, alternating: dims static (constants
    // folded, shared buffers sized statically) or dynamic.
    Specialization spec;
    spec.staticDims = staticValues(p, d, seed % 2 == 0);
    GeneratedKernel g;
    try {
      g = CompiledModule::loadString(p.fileName, p.text)->generate(p.kernel, spec);
    } catch (const std::exception& e) {
      return report(p, d, fmt::format("Spindle refused it:\n{}", e.what()));
    }
    for (const VendorCompiler& compiler : compilers) {
      const std::string log = compileSource(compiler, dir.string(), fmt::format("fuzz_{}", seed), g.source);
      if (!log.empty()) return report(p, d, fmt::format("{} refused the generated HIP:\n{}", compiler.name, log));
    }
    return "";
  });
  std::filesystem::remove_all(dir);
  for (const std::string& f : failures) ADD_FAILURE() << f;
  std::string names;
  for (const auto& compiler : compilers) names += (names.empty() ? "" : ", ") + compiler.name;
  std::printf("cpu fuzz, vendor compilers (%s): %s; %zu failed, %.1f s\n", names.c_str(), c.describe().c_str(),
              failures.size(), secondsSince(start));
}

}  // namespace
}  // namespace spindle::cpu_fuzz
