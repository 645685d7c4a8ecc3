// Golden tests: the HIP generated for every sample and every focused test
// kernel is checked in under tests/golden/expected/ and must not change
// unnoticed. A mismatch prints a unified diff.
//
// Refresh (then review every changed line before committing):
//   SPINDLE_UPDATE_GOLDEN=1 ctest --test-dir build -R Golden
//
// Which goldens a .spn produces is written in the file itself, one line per
// golden: `# gen: --kernel K --static N=64 --dtype T=f32`. A file with no
// such line produces one golden with no flags.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "frontend/diagnostics.h"
#include "golden_cases.h"
#include "printer/prelude.h"
#include "spindle/generator.h"

namespace fs = std::filesystem;
using namespace spindle::golden;

namespace {

std::string unifiedDiff(const std::string& expected, const std::string& actual) {
  fs::path dir = fs::temp_directory_path();
  fs::path a = dir / fs::path("spindle-golden-expected-" + std::to_string(getpid()));
  fs::path b = dir / fs::path("spindle-golden-actual-" + std::to_string(getpid()));
  std::ofstream(a, std::ios::binary) << expected;
  std::ofstream(b, std::ios::binary) << actual;
  std::string cmd = "diff -u --label expected --label generated '" + a.string() + "' '" + b.string() + "'";
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
  }
  fs::remove(a);
  fs::remove(b);
  return out;
}

class Golden : public ::testing::TestWithParam<GoldenCase> {};

// A case's source, generated from its .spn with its `# gen:` flags (the
// kernel named there, else the module's first). A module with errors
// throws, which fails the test with the diagnostics.
spindle::GeneratedKernel generateCase(const GoldenCase& c) {
  spindle::DiagnosticEngine diags;
  auto module =
      spindle::CompiledModule::fromString(c.spnPath, readFile(fs::path(SPINDLE_SOURCE_DIR) / c.spnPath), diags);
  if (!module) throw std::runtime_error(c.spnPath + " has errors:\n" + diags.renderAll());
  std::string kernel;
  spindle::Specialization spec = parseFlags(c.flags, kernel);
  return module->generate(kernel.empty() ? module->kernels()[0].name : kernel, spec);
}

TEST_P(Golden, MatchesCheckedInHip) {
  const GoldenCase& c = GetParam();
  const fs::path root = SPINDLE_SOURCE_DIR;
  spindle::DiagnosticEngine diags;
  auto module = spindle::CompiledModule::fromString(c.spnPath, readFile(root / c.spnPath), diags);
  ASSERT_TRUE(module) << diags.renderAll();
  std::string kernel;
  spindle::Specialization spec = parseFlags(c.flags, kernel);
  if (kernel.empty()) {
    ASSERT_EQ(module->kernels().size(), 1u) << c.spnPath << " has several kernels: name one in its # gen: line";
    kernel = module->kernels()[0].name;
  }
  std::string actual = module->generate(kernel, spec).source;

  fs::path goldenPath = root / "tests/golden/expected" / (c.name + ".hip");
  const char* update = std::getenv("SPINDLE_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(goldenPath, std::ios::binary) << actual;
    std::printf("updated %s\n", goldenPath.string().c_str());
    return;
  }
  ASSERT_TRUE(fs::exists(goldenPath)) << "no golden " << goldenPath
                                      << "; create it with SPINDLE_UPDATE_GOLDEN=1 and review it";
  std::string expected = readFile(goldenPath);
  EXPECT_TRUE(expected == actual) << "generated HIP differs from " << goldenPath << ":\n"
                                  << unifiedDiff(expected, actual)
                                  << "If the change is intended, refresh with SPINDLE_UPDATE_GOLDEN=1 and review it.";
}

// Generation must not depend on anything but its inputs: twice the same.
TEST_P(Golden, GenerationIsDeterministic) {
  const GoldenCase& c = GetParam();
  EXPECT_EQ(generateCase(c).source, generateCase(c).source);
}

// Replays the #line directives of the generated file as a compiler does and
// checks that every statement, function and const the printer mapped
// reports its own .spn line (a multi-line signature once shifted the first
// statements of a body by one line per parameter).
TEST_P(Golden, LineDirectivesMapEveryStatementToItsOwnLine) {
  const GoldenCase& c = GetParam();
  std::string kernel;
  if (!parseFlags(c.flags, kernel).lineDirectives) GTEST_SKIP() << "generated without #line";
  spindle::GeneratedKernel g = generateCase(c);
  ASSERT_FALSE(g.lineMappings.empty());

  // reported[i]: the .spn line a compiler reports for line i + 1 of the file
  // (0 before the first directive).
  std::vector<uint32_t> reported;
  std::istringstream in(g.source);
  uint32_t next = 0;
  const std::string directive = "#line ";
  for (std::string line; std::getline(in, line);) {
    reported.push_back(next);
    if (line.compare(0, directive.size(), directive) == 0) {
      std::istringstream words(line.substr(directive.size()));
      std::string file;
      words >> next >> file;
      EXPECT_EQ(file, "\"" + c.spnPath + "\"") << line;
    } else if (next) {
      ++next;
    }
  }
  for (const auto& m : g.lineMappings) {
    ASSERT_LE(m.sourceLine, reported.size());
    EXPECT_EQ(reported[m.sourceLine - 1], m.spnLine)
        << "line " << m.sourceLine << " of the generated file should report .spn line " << m.spnLine;
  }
}

// A prelude part's text as it stands in a file: the blank line that ends a
// part is dropped when the part comes last.
std::string partText(const spindle::PreludePart& part) {
  std::string text = part.text;
  while (text.size() >= 2 && text[text.size() - 1] == '\n' && text[text.size() - 2] == '\n') text.pop_back();
  return text;
}

// The prelude carries only what the file uses: every part of it in a golden
// is named somewhere else in that file (by the kernel, the launcher or
// another part that is there).
TEST_P(Golden, PreludeCarriesNoUnusedHelper) {
  const GoldenCase& c = GetParam();
  std::string golden = generateCase(c).source;
  for (const auto& part : spindle::preludeTemplate().parts) {
    const std::string text = partText(part);
    size_t at = golden.find(text);
    if (at == std::string::npos) continue;
    std::string others = golden.substr(0, at) + golden.substr(at + text.size());
    std::vector<std::string> named = spindle::preludeNamesIn(others);
    EXPECT_NE(std::find(named.begin(), named.end(), part.name), named.end())
        << c.name << " carries the prelude part " << part.name << " but nothing in it uses " << part.name;
  }
}

INSTANTIATE_TEST_SUITE_P(All, Golden, ::testing::ValuesIn(discoverCases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

// Every part of the prelude is in some golden, so the vendor compilers and
// spindle-verify check each part (golden_compile_*, golden_verify).
TEST(GoldenFiles, EveryPreludePartIsCompiledSomewhere) {
  std::string all;
  for (const auto& e : fs::directory_iterator(fs::path(SPINDLE_SOURCE_DIR) / "tests/golden/expected"))
    if (e.path().extension() == ".hip") all += readFile(e.path());
  for (const auto& part : spindle::preludeTemplate().parts)
    EXPECT_NE(all.find(partText(part)), std::string::npos) << "no golden uses the prelude part " << part.name;
}

// The whole file a user reads for a softmax (the README's example) stays
// short: the prelude carries only what it uses (docs/language.md 10.1).
// 150 lines for the kernel that read scalar columns; 190 since it reads runs
// of 4 (a whole-run path and a checked tail for the loads and the stores).
TEST(GoldenFiles, SoftmaxFileIsUnder190Lines) {
  const fs::path root = SPINDLE_SOURCE_DIR;
  auto module = spindle::CompiledModule::load((root / "samples/softmax.spn").string());
  spindle::Specialization spec;
  spec.staticDims["N"] = 4096;
  std::string source = module->generate("softmax", spec).source;
  EXPECT_LT(std::count(source.begin(), source.end(), '\n'), 190) << source;
}

// Every golden on disk belongs to a case: a renamed kernel must not leave a
// stale golden behind.
TEST(GoldenFiles, NoOrphans) {
  std::set<std::string> names;
  for (const auto& c : discoverCases()) names.insert(c.name + ".hip");
  for (const auto& e : fs::directory_iterator(fs::path(SPINDLE_SOURCE_DIR) / "tests/golden/expected")) {
    if (e.path().extension() == ".hip") {
      EXPECT_TRUE(names.count(e.path().filename().string())) << "orphan golden " << e.path();
    }
  }
}

}  // namespace
