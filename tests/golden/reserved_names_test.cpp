// Every name the prelude's headers define as a macro or declare at global
// scope (generator/printer/reserved_*.inc, made by scripts/reserved_names.sh
// from hipcc and nvcc) is a name a kernel author may write: as a const (file
// scope) and as a local. The generated files must compile with hipcc and
// nvcc whatever the names; a name reaching the output unrenamed where it
// clashes makes the compiler refuse the file.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "frontend/diagnostics.h"
#include "load_module.h"
#include "spindle/generator.h"

namespace fs = std::filesystem;

namespace {

const char* const kHeaderNames[] = {
#include "printer/reserved_declarations.inc"
#include "printer/reserved_macros.inc"
};

// Names the language itself refuses as a const or a local (its keywords,
// builtins and type names, `inf`/`nan`): asked of the front end, one by one.
bool usableAs(const std::string& module) {
  spindle::DiagnosticEngine diags;
  auto file = std::make_shared<spindle::SourceFile>("probe.spn", module);
  spindle::loadModule(file, diags);
  return diags.errorCount() == 0;
}

std::vector<std::string> usableNames(bool asLocal) {
  std::vector<std::string> names;
  // A name may be both a macro and a declaration (an enumerator #defined to
  // itself): once.
  for (const std::string& name : std::set<std::string>(std::begin(kHeaderNames), std::end(kHeaderNames))) {
    std::string probe =
        asLocal ? "@grid(1)\n@block(1)\nkernel k(y: i32[1]):\n    " + name + " = 1\n    y[0] = " + name + "\n"
                : "const " + name + ": i32 = 1\n";
    if (usableAs(probe)) names.push_back(name);
  }
  return names;
}

std::string compilerOr(const char* env, const std::string& fallback) {
  const char* v = std::getenv(env);
  return v && *v ? v : fallback;
}

// Compiles `source` with hipcc (gfx90a) and nvcc (sm_90), those installed.
void compileWithVendors(const std::string& source, const std::string& what) {
  fs::path dir = fs::temp_directory_path() / ("spindle-reserved-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "k.hip") << source;
  std::ofstream(dir / "k.cu") << source;
  struct Vendor {
    std::string compiler, command;
  };
  std::vector<Vendor> vendors;
  std::string hipcc = "/usr/bin/hipcc", nvcc = compilerOr("SPINDLE_NVCC", "/usr/local/cuda/bin/nvcc");
  if (fs::exists(hipcc))
    vendors.push_back({hipcc, hipcc + " --offload-arch=gfx90a -c '" + (dir / "k.hip").string() + "' -o '" +
                                  (dir / "hip.o").string() + "'"});
  if (fs::exists(nvcc))
    vendors.push_back(
        {nvcc, nvcc + " -arch=sm_90 -c '" + (dir / "k.cu").string() + "' -o '" + (dir / "cu.o").string() + "'"});
  if (vendors.empty()) {
    fs::remove_all(dir);
    GTEST_SKIP() << "neither hipcc nor nvcc is installed";
  }
  for (const auto& v : vendors) {
    std::string log = (dir / "log").string();
    int status = std::system((v.command + " > '" + log + "' 2>&1").c_str());
    std::ifstream in(log);
    std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(status, 0) << v.compiler << " refused the " << what << ":\n" << output.substr(0, 4000);
  }
  fs::remove_all(dir);
}

std::string generate(const std::string& module, const std::string& kernel) {
  spindle::DiagnosticEngine diags;
  auto m = spindle::CompiledModule::fromString("names.spn", module, diags);
  if (!m) {
    ADD_FAILURE() << diags.renderAll().substr(0, 4000);
    return "";
  }
  return m->generate(kernel, {}).source;
}

TEST(ReservedNames, EveryHeaderNameWorksAsAConst) {
  std::vector<std::string> names = usableNames(/*asLocal=*/false);
  ASSERT_GT(names.size(), 5000u) << "the reserved lists look truncated";
  std::string module;
  for (const auto& n : names) module += "const " + n + ": i32 = 3\n";
  module += "@grid(1)\n@block(1)\nkernel k(y: i32[1]):\n    y[0] = " + names.front() + " + " + names.back() + "\n";
  std::string source = generate(module, "k");
  ASSERT_FALSE(source.empty());
  compileWithVendors(source, "consts named like header names");
}

TEST(ReservedNames, EveryHeaderNameWorksAsALocal) {
  std::vector<std::string> names = usableNames(/*asLocal=*/true);
  ASSERT_GT(names.size(), 5000u) << "the reserved lists look truncated";
  std::string module = "@grid(1)\n@block(1)\nkernel k(x: i32[1], y: i32[1]):\n    acc = 0\n";
  for (const auto& n : names) module += "    " + n + " = x[0]\n    acc += " + n + "\n";
  module += "    y[0] = acc\n";
  std::string source = generate(module, "k");
  ASSERT_FALSE(source.empty());
  compileWithVendors(source, "locals named like header names");
}

}  // namespace
