// The bad-input corpus: every tests/bad/*.spn starts with one or more lines
//   # expect: LINE:COL diag-id
// and must produce exactly those diagnostics, in that order, through the
// whole front end (parse and sema). Also checks that each renders like clang.
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "frontend_test_util.h"
#include "load_module.h"

namespace spindle::test {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> corpusFiles() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(SPINDLE_SOURCE_DIR) / "tests" / "bad"))
    if (entry.path().extension() == ".spn") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

// The `# expect:` lines at the top of the file, as "line:col id".
std::vector<std::string> expectations(const std::string& text) {
  static const std::regex kExpect(R"(^# expect: (\d+:\d+ [a-z][a-z0-9-]*)\s*$)");
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_match(line, m, kExpect)) break;
    out.push_back(m[1]);
  }
  return out;
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class BadInput : public ::testing::TestWithParam<fs::path> {};

TEST_P(BadInput, ReportsExactlyTheExpectedDiagnostics) {
  std::string error;
  auto file = SourceFile::load(GetParam().string(), error);
  ASSERT_TRUE(file) << error;
  std::vector<std::string> expected = expectations(file->text());
  ASSERT_FALSE(expected.empty()) << "no '# expect: LINE:COL id' line at the top of " << GetParam();

  DiagnosticEngine diags;
  LoadedModule result = loadModule(file, diags);
  EXPECT_EQ(diagList(diags), expected) << diags.renderAll();
  EXPECT_TRUE(diags.hasErrors());
  EXPECT_EQ(result.sema, nullptr);

  // clang-style rendering: "path:line:col: error: ... [id]", the line, a caret.
  std::string rendered = diags.renderAll();
  const Diagnostic& first = diags.diagnostics().front();
  std::string head = fmt::format("{}:{}:{}: error: ", file->path(), first.range.begin.line, first.range.begin.col);
  EXPECT_NE(rendered.find(head), std::string::npos) << rendered;
  EXPECT_NE(rendered.find(fmt::format("[{}]\n", diagName(first.id))), std::string::npos) << rendered;
  std::string caretLine = std::string(first.range.begin.col - 1, ' ') + "^";
  bool plainLine = file->lineText(first.range.begin.line).find('\t') == std::string_view::npos &&
                   findInvalidUtf8(file->text()) == std::nullopt;
  if (plainLine) {  // tabs and bad bytes shift display columns
    EXPECT_NE(rendered.find("\n" + caretLine), std::string::npos) << rendered;
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadInput, ::testing::ValuesIn(corpusFiles()),
                         [](const ::testing::TestParamInfo<fs::path>& info) {
                           std::string name = info.param.stem().string();
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

TEST(BadInputCorpus, IsLargeEnough) {
  size_t frontend = 0;
  for (const auto& path : corpusFiles()) {
    auto expected = expectations(readFile(path));
    if (!expected.empty() && expected[0].find(" sema-") == std::string::npos) ++frontend;
  }
  EXPECT_GE(frontend, 35u);
}

}  // namespace
}  // namespace spindle::test
