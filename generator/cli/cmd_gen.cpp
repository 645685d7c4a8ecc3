// `spindle gen FILE [-o OUT] [--kernel K] [--static N=V]... [--dtype T=TY]...
//               [--no-line-directives] [--verify]`: print readable HIP.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "commands.h"
#include "frontend/diagnostics.h"
#include "spec_options.h"

namespace spindle::cli {

namespace {

// spindle-verify is installed next to spindle.
std::string verifierPath() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "spindle-verify";
  std::string self(buf, static_cast<size_t>(n));
  return self.substr(0, self.rfind('/') + 1) + "spindle-verify";
}

int runVerifier(const std::string& hipPath) {
  std::string tool = verifierPath();
  if (access(tool.c_str(), X_OK) != 0) {
    fmt::print(stderr,
               "spindle: error: --verify needs spindle-verify, which was not built (Clang LibTooling 15 missing)\n");
    return 1;
  }
  std::string command = fmt::format("'{}' '{}'", tool, hipPath);
  int rc = std::system(command.c_str());
  return rc == 0 ? 0 : 1;
}

}  // namespace

int cmdGen(const Args& args) {
  std::string path, outPath;
  bool verify = false;
  KernelSelection sel;
  try {
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (parseSpecOption(args, i, sel)) continue;
      if (a == "-o") {
        if (i + 1 >= args.size()) return usageError("gen: '-o' needs a file name");
        outPath = args[++i];
      } else if (a == "--verify") {
        verify = true;
      } else if (a.size() > 1 && a[0] == '-') {
        return usageError(fmt::format("gen: unknown option '{}'", a));
      } else if (path.empty()) {
        path = a;
      } else {
        return usageError(fmt::format("gen: unexpected argument '{}'", a));
      }
    }
  } catch (const std::invalid_argument& e) {
    return usageError(std::string("gen: ") + e.what());
  }
  if (path.empty()) return usageError("gen: expected a FILE");

  DiagnosticEngine diags;
  std::unique_ptr<CompiledModule> module;
  try {
    module = CompiledModule::fromFile(path, diags);
  } catch (const GeneratorError& e) {
    fmt::print(stderr, "spindle: error: {}\n", e.what());
    return 1;
  }
  if (!module) {
    fmt::print(stderr, "{}", diags.renderAll());
    return 1;
  }
  GeneratedKernel generated;
  try {
    generated = module->generate(chooseKernel(*module, sel.kernel), sel.spec);
  } catch (const GeneratorError& e) {
    std::string msg = e.what();
    // Messages that carry a location are already clang-style.
    if (msg.find(": error: ") != std::string::npos) fmt::print(stderr, "{}{}", msg, msg.back() == '\n' ? "" : "\n");
    else fmt::print(stderr, "spindle: error: {}\n", msg);
    return 1;
  } catch (const std::invalid_argument& e) {
    return usageError(std::string("gen: ") + e.what());
  }

  std::string written = outPath;
  if (outPath.empty() && verify) {
    char tmpl[] = "/tmp/spindle-gen-XXXXXX.hip";
    int fd = mkstemps(tmpl, 4);
    if (fd < 0) {
      fmt::print(stderr, "spindle: error: cannot create a temporary file for --verify\n");
      return 1;
    }
    close(fd);
    written = tmpl;
  }
  if (!written.empty()) {
    std::ofstream out(written, std::ios::binary);
    out << generated.source;
    if (!out) {
      fmt::print(stderr, "spindle: error: cannot write '{}'\n", written);
      return 1;
    }
  }
  if (outPath.empty()) fmt::print("{}", generated.source);
  int status = verify ? runVerifier(written) : 0;
  if (outPath.empty() && verify) std::remove(written.c_str());
  return status;
}

}  // namespace spindle::cli
