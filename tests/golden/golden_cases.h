// The golden cases: every sample and focused test kernel, with the flags
// each of its `# gen:` lines names. Shared by the golden tests and the
// run-time compilation tests (tests/runtime/rtc_goldens_test.cpp).
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "spindle/generator.h"

namespace spindle::golden {

namespace fs = std::filesystem;

struct GoldenCase {
  std::string name;     // golden file stem, also the test name
  std::string spnPath;  // relative to the source root, as it appears in #line
  std::vector<std::string> flags;
};

// gtest prints a case by its name, not its bytes.
inline void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.name; }

inline std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<std::string> splitWords(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// "--dtype T=f32 --static K=64 --aligned x --divisible N=8" -> ".T-f32.K-64.aligned-x.divisible-N-8"
inline std::string suffixFor(const std::vector<std::string>& flags) {
  std::string suffix;
  for (size_t i = 0; i < flags.size(); ++i) {
    if (flags[i] == "--no-line-directives") {
      suffix += ".nolines";
    } else if (flags[i] == "--checked") {
      suffix += ".checked";
    } else if (flags[i] == "--index32") {
      suffix += ".index32";
    } else if (i + 1 < flags.size()) {
      // --aligned and --divisible name a tensor or dim, as --contiguous does:
      // tell them apart.
      std::string prefix = flags[i] == "--aligned"       ? "aligned-"
                           : flags[i] == "--divisible"   ? "divisible-"
                           : flags[i] == "--exact-grid"  ? "exact-grid-"
                           : flags[i] == "--absent"      ? "absent-"
                           : flags[i] == "--unit-stride" ? "unit-stride-"
                                                         : "";
      std::string v = flags[++i];
      for (char& c : v)
        if (c == '=') c = '-';
      suffix += "." + prefix + v;
    }
  }
  return suffix;
}

inline std::vector<GoldenCase> discoverCases() {
  std::vector<GoldenCase> cases;
  const fs::path root = SPINDLE_SOURCE_DIR;
  for (const char* dir : {"samples", "tests/golden/kernels"}) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(root / dir))
      if (e.path().extension() == ".spn") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::string rel = fs::relative(f, root).string();
      std::istringstream text(readFile(f));
      std::vector<std::vector<std::string>> genLines;
      for (std::string line; std::getline(text, line);)
        if (line.rfind("# gen:", 0) == 0) genLines.push_back(splitWords(line.substr(6)));
      if (genLines.empty()) genLines.push_back({});
      for (auto& flags : genLines) cases.push_back({f.stem().string() + suffixFor(flags), rel, flags});
    }
  }
  return cases;
}

// A golden's `# gen:` flags, read as `spindle gen` reads them.
inline spindle::Specialization parseFlags(const std::vector<std::string>& flags, std::string& kernel) {
  spindle::Specialization spec;
  for (size_t i = 0; i < flags.size(); ++i) {
    if (flags[i] == "--kernel" && i + 1 < flags.size()) kernel = flags[++i];
    else if (!spindle::parseSpecializationFlag(flags, i, spec))
      throw std::runtime_error("unknown gen flag: " + flags[i]);
  }
  return spec;
}

}  // namespace spindle::golden
