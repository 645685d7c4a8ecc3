// Every call that reports a diagnostic passes as many values as its format
// text has placeholders. fmt checks that only at run time, by throwing, so a
// mismatch on a rarely taken error path is a crash waiting for the input
// that reaches it (the fuzzer found one: `t ^= shared(...)`). This test reads
// the diagnostic tables and the generator's sources and counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
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
// index plus one ("{0} ... {0}"), else the number of "{}". (No <regex>: GCC
// 12 warns inside it under the sanitizer build.)
std::map<std::string, int> placeholderCounts() {
  std::map<std::string, int> counts;
  for (const char* def : {"generator/frontend/diag_frontend.def", "generator/frontend/diag_sema.def"}) {
    std::string text = readAll(fs::path(SPINDLE_SOURCE_DIR) / def);
    for (size_t at = text.find("\nDIAG("); at != std::string::npos; at = text.find("\nDIAG(", at + 1)) {
      size_t nameBegin = at + 6, nameEnd = text.find(',', nameBegin);
      size_t open = text.find('"', nameEnd), close = open + 1;
      while (close < text.size() && text[close] != '"') close += text[close] == '\\' ? 2 : 1;
      std::string format = text.substr(open + 1, close - open - 1);
      int highest = -1, automatic = 0;
      for (size_t b = format.find('{'); b != std::string::npos; b = format.find('{', b + 1)) {
        size_t e = format.find('}', b);
        if (e == b + 1) ++automatic;
        else if (e != std::string::npos && format.find_first_not_of("0123456789", b + 1) == e)
          highest = std::max(highest, std::stoi(format.substr(b + 1, e - b - 1)));
      }
      counts[text.substr(nameBegin, nameEnd - nameBegin)] = highest >= 0 ? highest + 1 : automatic;
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
  int checked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(SPINDLE_SOURCE_DIR) / "generator")) {
    if (entry.path().extension() != ".cpp") continue;
    std::string text = readAll(entry.path());
    for (const std::string callee : {"error", "warning", "report", "throwSpecializationError"}) {
      for (size_t at = text.find(callee + "("); at != std::string::npos; at = text.find(callee + "(", at + 1)) {
        if (at > 0 && (std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_')) continue;
        size_t open = at + callee.size();
        std::vector<std::string> args = callArguments(text, open);
        size_t id = 0;
        while (id < args.size() && trimmed(args[id]).rfind("DiagId::", 0) != 0) ++id;
        if (id == args.size()) continue;  // not a diagnostic call
        std::string name = trimmed(args[id]).substr(8);
        auto count = counts.find(name);
        ASSERT_NE(count, counts.end()) << entry.path() << ": unknown DiagId::" << name;
        // After the id: the location (a file and a range for DiagnosticEngine::report).
        bool withFile = callee == "report" && args.size() > id + 1 && args[id + 1].find("file") != std::string::npos;
        int values = int(args.size()) - int(id + 1 + (withFile ? 2 : 1));
        size_t line = size_t(std::count(text.begin(), text.begin() + long(open), '\n')) + 1;
        EXPECT_EQ(values, count->second) << entry.path().filename().string() << ":" << line << ": DiagId::" << name;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100) << "too few diagnostic calls found (" << checked << "): the scan is broken";
}

}  // namespace
}  // namespace spindle::test
