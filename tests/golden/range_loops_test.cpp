// Loops with any step, by value (docs/language.md 5.8): the `for` headers the
// printer writes for tests/golden/kernels/ranges.spn, with the prelude's
// __spn_range_next and __spn_range_next_up, are compiled on the host and run over random and edge
// bounds and steps, near the limits of i32 and u32 included. Each must visit
// exactly what Python's range visits (computed here in 128-bit arithmetic),
// never overflow and never hang (a zero step runs no times).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>

#include "golden_cases.h"
#include "printer/prelude.h"
#include "spindle/generator.h"

namespace spindle::golden {
namespace {

// The `for (...) {` line that declares `var` and runs to `stop`, as printed.
std::string forHeader(const std::string& source, const std::string& type, const std::string& var,
                      const std::string& stop) {
  std::smatch m;
  std::regex re("\\n\\s*(for \\(" + type + " " + var + " = [^;]*; [^\\n]*" + var + " [<>] " + stop + "[^\\n]*\\{)\\n");
  if (!std::regex_search(source, m, re)) return "";
  return m[1];
}

TEST(RangeLoops, PrintedLoopsVisitWhatPythonsRangeVisits) {
  const fs::path root = SPINDLE_SOURCE_DIR;
  auto module = CompiledModule::load((root / "tests/golden/kernels/ranges.spn").string());
  std::string source = module->generate("ranges", {}).source;
  const std::string unknownSign = forHeader(source, "int32_t", "k", "last");  // step: the i32 parameter
  const std::string constStep = forHeader(source, "int32_t", "m", "last");    // step 256, stop a parameter
  const std::string countDown = forHeader(source, "int32_t", "d", "first");   // step -64
  const std::string unsignedStep = forHeader(source, "uint32_t", "u", "n");   // step u32(block_dim())
  ASSERT_FALSE(unknownSign.empty() || constStep.empty() || countDown.empty() || unsignedStep.empty()) << source;
  // The ones that could pass a limit advance through the helpers: the
  // sign-free one where the step is known positive.
  EXPECT_NE(constStep.find("__spn_range_next_up("), std::string::npos) << constStep;
  EXPECT_NE(unsignedStep.find("__spn_range_next_up("), std::string::npos) << unsignedStep;
  EXPECT_NE(countDown.find("__spn_range_next("), std::string::npos) << countDown;

  std::string helper;
  int helpers = 0;
  for (const auto& part : preludeTemplate().parts)
    if (part.name == "__spn_distance" || part.name == "__spn_range_next" || part.name == "__spn_range_next_up")
      helper += part.text, ++helpers;
  ASSERT_EQ(helpers, 3);

  fs::path dir = fs::temp_directory_path() / ("spindle-range-loops-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "check.cpp") << R"(#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#define __device__
#define __forceinline__ inline
struct { unsigned x = 0; } threadIdx, blockDim;
)" << helper << R"(
typedef std::vector<long long> Seq;
// Python's range, in 128-bit arithmetic; at most `cap` values.
Seq python(__int128 start, __int128 stop, __int128 step, size_t cap) {
  Seq out;
  if (step > 0) for (__int128 v = start; v < stop && out.size() < cap; v += step) out.push_back((long long)v);
  if (step < 0) for (__int128 v = start; v > stop && out.size() < cap; v += step) out.push_back((long long)v);
  return out;
}
const size_t kCap = 1 << 12;
Seq loopK(int32_t first, int32_t last, int32_t stride) {
  Seq out;
  const int32_t k_step = stride;
  )" << unknownSign << R"(
    out.push_back(k);
    if (out.size() >= kCap) break;
  }
  return out;
}
Seq loopM(unsigned thread, int32_t last) {
  Seq out;
  threadIdx.x = thread;
  )" << constStep << R"(
    out.push_back(m);
    if (out.size() >= kCap) break;
  }
  return out;
}
Seq loopD(int32_t first, int32_t last) {
  Seq out;
  )" << countDown << R"(
    out.push_back(d);
    if (out.size() >= kCap) break;
  }
  return out;
}
Seq loopU(unsigned thread, uint32_t n, unsigned block) {
  Seq out;
  threadIdx.x = thread;
  blockDim.x = block;
  const uint32_t u_step = uint32_t(int(blockDim.x));
  )" << unsignedStep << R"(
    out.push_back(u);
    if (out.size() >= kCap) break;
  }
  return out;
}
int failures = 0;
void expect(const Seq& got, const Seq& want, const char* what, long long a, long long b, long long c) {
  if (got == want) return;
  if (++failures <= 10)
    std::printf("%s(%lld, %lld, %lld): %zu values, Python's range has %zu\n", what, a, b, c, got.size(), want.size());
}
int main(int argc, char** argv) {
  std::mt19937 rng(std::strtoul(argv[1], nullptr, 10));
  const int32_t kMax = INT32_MAX, kMin = INT32_MIN;
  const int32_t edges[] = {kMin, kMin + 1, kMin + 63, -1000, -1, 0, 1, 1000, kMax - 300, kMax - 255, kMax - 1, kMax};
  const int32_t steps[] = {0, 1, -1, 2, -2, 7, -7, 256, -256, 1 << 30, -(1 << 30), kMax, kMin};
  auto any = [&] { return int32_t(rng()); };
  auto near = [&](int32_t e) { return int32_t(std::max<long long>(kMin, std::min<long long>(kMax, (long long)e + int(rng() % 9) - 4))); };
  for (int32_t a : edges)
    for (int32_t b : edges)
      for (int32_t s : steps) expect(loopK(a, b, s), python(a, b, s, kCap), "k", a, b, s);
  for (int i = 0; i < 4000; ++i) {
    int32_t a = rng() % 2 ? any() : near(edges[rng() % 12]), b = rng() % 2 ? any() : near(edges[rng() % 12]);
    int32_t s = rng() % 3 ? near(steps[rng() % 13]) : any();
    expect(loopK(a, b, s), python(a, b, s, kCap), "k", a, b, s);
    unsigned t = rng() % 256;
    int32_t last = rng() % 2 ? any() : near(edges[rng() % 12]);
    expect(loopM(t, last), python(t, last, 256, kCap), "m", t, last, 256);
    expect(loopD(a, b), python(b, a, -64, kCap), "d", a, b, -64);
    uint32_t n = rng() % 2 ? uint32_t(rng()) : UINT32_MAX - rng() % 600;
    unsigned block = 64u << (rng() % 5);  // a block has 1 to 1024 threads
    expect(loopU(t, n, block), python(t, n, block, kCap), "u", t, n, block);
  }
  std::printf("%d failures\n", failures);
  return failures ? 1 : 0;
}
)";
  const char* cxx = std::getenv("CXX");
  const std::string compiler = cxx && *cxx ? cxx : "c++";
  const unsigned seed = std::random_device()();
  std::string command = compiler + " -std=c++17 -O1 -fsanitize=signed-integer-overflow -fno-sanitize-recover=all '" +
                        (dir / "check.cpp").string() + "' -o '" + (dir / "check").string() + "' > '" +
                        (dir / "log").string() + "' 2>&1 && '" + (dir / "check").string() + "' " +
                        std::to_string(seed) + " >> '" + (dir / "log").string() + "' 2>&1";
  int status = std::system(command.c_str());
  std::ifstream log(dir / "log");
  std::string output((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  fs::remove_all(dir);
  EXPECT_EQ(status, 0) << "seed " << seed << "\n"
                       << output << "\nloops:\n"
                       << unknownSign << "\n"
                       << constStep << "\n"
                       << countDown << "\n"
                       << unsignedStep;
}

}  // namespace
}  // namespace spindle::golden
