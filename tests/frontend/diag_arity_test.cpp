// Every call that reports a diagnostic passes as many values as its format
// text has placeholders. fmt checks that only at run time, by throwing, so a
// mismatch on a rarely taken error path is a crash waiting for the input
// that reaches it (the fuzzer found one: `t ^= shared(...)`). This test reads
// the diagnostic tables and the generator's sources and counts.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace spindle::test {
namespace {

namespace fs = std::filesystem;

std::string readAll(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// DiagId name -> number of values its text consumes: the highest positional
// index plus one ("{0} ... {0}"), else the number of "{}".
std::map<std::string, int> placeholderCounts() {
  std::map<std::string, int> counts;
  const std::regex diag(R"re(DIAG\((\w+),\s*\w+,\s*"((?:[^"\\]|\\.)*)"\))re");
  const std::regex positional(R"(\{(\d+)\})");
  for (const char* def : {"generator/diag_frontend.def", "generator/diag_sema.def"}) {
    std::string text = readAll(fs::path(SPINDLE_SOURCE_DIR) / def);
    for (std::sregex_iterator it(text.begin(), text.end(), diag), end; it != end; ++it) {
      std::string format = (*it)[2];
      int highest = -1, automatic = 0;
      for (std::sregex_iterator p(format.begin(), format.end(), positional); p != end; ++p)
        highest = std::max(highest, std::stoi((*p)[1]));
      for (size_t at = format.find("{}"); at != std::string::npos; at = format.find("{}", at + 2)) ++automatic;
      counts[(*it)[1]] = highest >= 0 ? highest + 1 : automatic;
    }
  }
  return counts;
}

// The top-level arguments of the call whose '(' is at `open`.
std::vector<std::string> callArguments(const std::string& s, size_t open) {
  std::vector<std::string> args;
  std::string current;
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"' || c == '\'') {  // a literal: copy it whole
      size_t end = i + 1;
      while (end < s.size() && s[end] != c) end += s[end] == '\\' ? 2 : 1;
      current += s.substr(i, end - i + 1);
      i = end;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') {
      if (depth++ == 0) continue;
    } else if (c == ')' || c == ']' || c == '}') {
      if (--depth == 0) {
        args.push_back(current);
        return args;
      }
    } else if (c == ',' && depth == 1) {
      args.push_back(current);
      current.clear();
      continue;
    }
    current += c;
  }
  return args;
}

std::string trimmed(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n"), e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

TEST(Diagnostics, EveryReportPassesOneValuePerPlaceholder) {
  std::map<std::string, int> counts = placeholderCounts();
  ASSERT_GT(counts.size(), 100u) << "the diagnostic tables were not found or not parsed";
  const std::regex call(R"(\b(error|warning|report|throwSpecializationError)\s*\()");
  int checked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(SPINDLE_SOURCE_DIR) / "generator")) {
    if (entry.path().extension() != ".cpp") continue;
    std::string text = readAll(entry.path());
    for (std::sregex_iterator it(text.begin(), text.end(), call), end; it != end; ++it) {
      size_t open = size_t(it->position(0) + it->length(0) - 1);
      std::vector<std::string> args = callArguments(text, open);
      size_t id = 0;
      while (id < args.size() && trimmed(args[id]).rfind("DiagId::", 0) != 0) ++id;
      if (id == args.size()) continue;  // not a diagnostic call
      std::string name = trimmed(args[id]).substr(8);
      auto count = counts.find(name);
      ASSERT_NE(count, counts.end()) << entry.path() << ": unknown DiagId::" << name;
      // After the id: the location (a file and a range for DiagnosticEngine::report).
      size_t location = (*it)[1] == "report" && args.size() > id + 1 && args[id + 1].find("file") != std::string::npos ? 2 : 1;
      int values = int(args.size()) - int(id + 1 + location);
      size_t line = size_t(std::count(text.begin(), text.begin() + long(open), '\n')) + 1;
      EXPECT_EQ(values, count->second) << entry.path().filename().string() << ":" << line << ": DiagId::" << name;
      ++checked;
    }
  }
  EXPECT_GT(checked, 100) << "too few diagnostic calls found: the scan is broken";  // 141 when written
}

}  // namespace
}  // namespace spindle::test
