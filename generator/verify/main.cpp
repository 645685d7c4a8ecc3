// spindle-verify: checks generated HIP files against the rules of
// docs/language.md section 10 (see the *_check.cpp files, one rule each).
//
//   spindle-verify [--offload-arch=gfx90a] [--list-checks] FILE.hip... [-- CLANG-ARGS...]
//
// Each file is parsed with Clang 15 *as HIP, device side*, the way hipcc
// sees it: `-x hip --cuda-device-only --offload-arch=gfx90a -nogpuinc
// -nogpulib -include hip/hip_runtime.h`. -nogpuinc keeps the driver from
// hunting for a ROCm tree (Debian's ROCm 5.2 lives in /usr and the driver
// misreads its version, so it would not add its HIP wrapper), and the
// explicit -include gives every file hip_runtime.h from /usr/include, as
// hipcc and hiprtc both do implicitly. A generated file that includes it
// itself is unaffected (include guard). __HIPCC__ and __HIP__ are defined,
// so the prelude takes its hipcc branch.
//
// Output: one "file:line:col: error: message [verify-<check>]" line per
// violation on stdout, sorted; clang's own parse errors go to stderr.
// Exit status: 0 clean, 1 violations, 2 some file did not parse (or bad usage).
#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Tooling/CompilationDatabase.h>
#include <clang/Tooling/Tooling.h>

#include <iostream>
#include <string>
#include <vector>

#include "check.h"

#ifndef SPINDLE_CLANG_RESOURCE_DIR
#define SPINDLE_CLANG_RESOURCE_DIR "/usr/lib/llvm-15/lib/clang/15.0.6"
#endif

namespace spindle::verify {
namespace {

class VerifyConsumer : public clang::ASTConsumer {
 public:
  VerifyConsumer(Reporter& reporter, bool& parseFailed) : reporter_(reporter), parseFailed_(parseFailed) {}
  void HandleTranslationUnit(clang::ASTContext& ctx) override {
    if (ctx.getDiagnostics().hasErrorOccurred()) {
      parseFailed_ = true;  // the AST is not trustworthy: check nothing
      return;
    }
    auto checks = makeAllChecks(reporter_);
    clang::ast_matchers::MatchFinder finder;
    for (auto& c : checks) c->registerMatchers(finder);
    finder.matchAST(ctx);
  }

 private:
  Reporter& reporter_;
  bool& parseFailed_;
};

class VerifyAction : public clang::ASTFrontendAction {
 public:
  VerifyAction(Reporter& reporter, bool& parseFailed) : reporter_(reporter), parseFailed_(parseFailed) {}
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance&, llvm::StringRef) override {
    return std::make_unique<VerifyConsumer>(reporter_, parseFailed_);
  }

 private:
  Reporter& reporter_;
  bool& parseFailed_;
};

class VerifyActionFactory : public clang::tooling::FrontendActionFactory {
 public:
  VerifyActionFactory(Reporter& reporter, bool& parseFailed) : reporter_(reporter), parseFailed_(parseFailed) {}
  std::unique_ptr<clang::FrontendAction> create() override {
    return std::make_unique<VerifyAction>(reporter_, parseFailed_);
  }

 private:
  Reporter& reporter_;
  bool& parseFailed_;
};

std::vector<std::string> clangArgs(const std::string& arch, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {
      "-x",
      "hip",
      "--cuda-device-only",
      "--offload-arch=" + arch,
      "-nogpuinc",
      "-nogpulib",
      "-std=c++17",
      "-include",
      "hip/hip_runtime.h",
      "-resource-dir=" SPINDLE_CLANG_RESOURCE_DIR,
      "-w",  // warnings are not this tool's business; errors still stop it
  };
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

int usage() {
  std::cerr << "usage: spindle-verify [--offload-arch=ARCH] [--print-args] [--list-checks] FILE.hip... "
               "[-- CLANG-ARGS...]\n";
  return 2;
}

}  // namespace
}  // namespace spindle::verify

int main(int argc, char** argv) {
  using namespace spindle::verify;
  std::string arch = "gfx90a";
  std::vector<std::string> files, extra;
  bool printArgs = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      extra.assign(argv + i + 1, argv + argc);
      break;
    }
    if (a.rfind("--offload-arch=", 0) == 0) {
      arch = a.substr(15);
    } else if (a == "--print-args") {
      printArgs = true;
    } else if (a == "--list-checks") {
      Reporter dummy;
      for (const auto& c : makeAllChecks(dummy))
        std::cout << "verify-" << c->name() << ": " << c->description() << "\n";
      return 0;
    } else if (a == "-h" || a == "--help") {
      usage();
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      std::cerr << "spindle-verify: unknown option '" << a << "'\n";
      return usage();
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) return usage();
  std::vector<std::string> args = clangArgs(arch, extra);
  if (printArgs) {
    for (const auto& a : args) std::cerr << a << ' ';
    std::cerr << '\n';
  }

  clang::tooling::FixedCompilationDatabase db(".", args);
  Reporter reporter;
  bool anyParseFailure = false;
  for (const std::string& file : files) {
    bool parseFailed = false;
    clang::tooling::ClangTool tool(db, {file});
    VerifyActionFactory factory(reporter, parseFailed);
    int rc = tool.run(&factory);
    if (rc != 0 || parseFailed) {
      std::cerr << file << ": error: could not parse as HIP [verify-parse]\n";
      anyParseFailure = true;
    }
  }
  reporter.print(std::cout);
  if (anyParseFailure) return 2;
  return reporter.violations().empty() ? 0 : 1;
}
