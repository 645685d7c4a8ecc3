// Runs spindle-verify on every tests/verify/*.hip and compares what it
// reports with the file's own `// expect:` comments (LLVM lit style).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct RunResult {
  int exitCode = -1;
  std::string out;
};

RunResult runVerify(const std::string& args) {
  // stderr (clang's own parse errors) is left on the test's stderr for debugging.
  std::string cmd = std::string("'") + SPINDLE_VERIFY_EXE + "' " + args;
  RunResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

using Expectation = std::multiset<std::pair<int, std::string>>;  // (line, "verify-x")

struct FileExpectations {
  Expectation errors;
  int exitCode = 0;
};

FileExpectations readExpectations(const fs::path& file) {
  FileExpectations e;
  std::ifstream in(file);
  std::string line;
  bool explicitExit = false;
  static const std::regex idRe("verify-[a-z-]+");
  for (int lineNo = 1; std::getline(in, line); ++lineNo) {
    if (auto pos = line.find("// expect: "); pos != std::string::npos) {
      std::string rest = line.substr(pos + 11);
      for (std::sregex_iterator it(rest.begin(), rest.end(), idRe), end; it != end; ++it)
        e.errors.insert({lineNo, it->str()});
    }
    if (auto pos = line.find("// expect-exit: "); pos != std::string::npos) {
      e.exitCode = std::stoi(line.substr(pos + 16));
      explicitExit = true;
    }
  }
  if (!explicitExit) e.exitCode = e.errors.empty() ? 0 : 1;
  return e;
}

Expectation parseReported(const std::string& out) {
  Expectation got;
  static const std::regex diagRe(R"(^.*:(\d+):\d+: error: .* \[(verify-[a-z-]+)\]$)");
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, diagRe)) got.insert({std::stoi(m[1]), m[2]});
  }
  return got;
}

std::string describe(const Expectation& e) {
  std::string s;
  for (const auto& [line, id] : e) s += "  line " + std::to_string(line) + ": " + id + "\n";
  return s.empty() ? "  (none)\n" : s;
}

std::vector<std::string> hipFiles() {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(SPINDLE_VERIFY_TEST_DIR))
    if (entry.path().extension() == ".hip") files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  return files;
}

class VerifyFile : public ::testing::TestWithParam<std::string> {};

TEST_P(VerifyFile, ReportsExactlyTheExpectedErrors) {
  fs::path file = fs::path(SPINDLE_VERIFY_TEST_DIR) / GetParam();
  FileExpectations want = readExpectations(file);
  RunResult r = runVerify("'" + file.string() + "'");
  EXPECT_EQ(r.exitCode, want.exitCode) << r.out;
  Expectation got = parseReported(r.out);
  EXPECT_EQ(got, want.errors) << "expected:\n"
                              << describe(want.errors) << "reported:\n"
                              << describe(got) << "output:\n"
                              << r.out;
}

INSTANTIATE_TEST_SUITE_P(Files, VerifyFile, ::testing::ValuesIn(hipFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = fs::path(info.param).stem().string();
                           std::replace_if(
                               name.begin(), name.end(), [](char c) { return !isalnum(c); }, '_');
                           return name;
                         });

TEST(VerifyCli, ListsEveryCheck) {
  RunResult r = runVerify("--list-checks");
  EXPECT_EQ(r.exitCode, 0);
  for (const char* id : {"verify-kernel-extern-c", "verify-launch-bounds", "verify-shadow", "verify-unused-param",
                         "verify-const-pointer", "verify-shared-scope"})
    EXPECT_NE(r.out.find(id), std::string::npos) << id;
}

TEST(VerifyCli, SeveralFilesAndParseFailureWins) {
  std::string dir = SPINDLE_VERIFY_TEST_DIR;
  RunResult clean = runVerify("'" + dir + "/good.hip' '" + dir + "/good.hip'");
  EXPECT_EQ(clean.exitCode, 0) << clean.out;
  RunResult mixed = runVerify("'" + dir + "/fail_shadow.hip' '" + dir + "/fail_parse.hip' 2>/dev/null");
  EXPECT_EQ(mixed.exitCode, 2);
  EXPECT_NE(mixed.out.find("[verify-shadow]"), std::string::npos) << mixed.out;
}

TEST(VerifyCli, NoFilesIsAUsageError) { EXPECT_EQ(runVerify("2>/dev/null").exitCode, 2); }

}  // namespace
