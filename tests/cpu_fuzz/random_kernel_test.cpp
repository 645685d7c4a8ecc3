// The generator on its own: the same seed gives the same program, and every
// program is a valid module (the generator library checks it; no compiler
// runs). SPINDLE_FUZZ_PRINT=SEED prints one program.
#include <gtest/gtest.h>
#include <spindle/generator.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "random_kernel.h"

namespace spindle::cpu_fuzz {
namespace {

TEST(RandomKernel, TheSameSeedGivesTheSameProgram) {
  for (uint64_t seed : {1ull, 2ull, 12345ull}) EXPECT_EQ(randomKernel(seed).text, randomKernel(seed).text);
  EXPECT_NE(randomKernel(1).text, randomKernel(2).text);
}

TEST(RandomKernel, PrintsOneProgram) {
  const char* seed = std::getenv("SPINDLE_FUZZ_PRINT");
  if (!seed) GTEST_SKIP() << "SPINDLE_FUZZ_PRINT=SEED prints the program of that seed";
  std::printf("%s", randomKernel(std::strtoull(seed, nullptr, 0)).text.c_str());
}

TEST(RandomKernel, ProgramsAreValidModules) {
  const int count = std::getenv("SPINDLE_FUZZ_CHECK") ? std::atoi(std::getenv("SPINDLE_FUZZ_CHECK")) : 200;
  int bad = 0;
  for (uint64_t seed = 1; seed <= uint64_t(count) && bad < 5; ++seed) {
    FuzzProgram p = randomKernel(seed);
    try {
      CompiledModule::loadString(p.fileName, p.text);
    } catch (const std::exception& e) {
      ++bad;
      ADD_FAILURE() << "seed " << seed << ": the generated module does not check:\n" << e.what() << "\n" << p.text;
    }
  }
}

}  // namespace
}  // namespace spindle::cpu_fuzz
