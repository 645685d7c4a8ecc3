// The pieces every spindle-verify check shares: a Reporter that collects
// violations (sorted and printed clang-style at the end, so output order is
// stable), and the Check interface. Each check lives in its own
// <name>_check.cpp with a comment saying why it exists; all of them are
// listed in checks.cpp.
#pragma once

#include <clang/AST/Decl.h>
#include <clang/ASTMatchers/ASTMatchFinder.h>
#include <clang/Basic/SourceManager.h>

#include <memory>
#include <string>
#include <vector>

namespace spindle::verify {

struct Violation {
  std::string file;  // the .hip file as given on the command line
  unsigned line = 0, col = 0;
  std::string presumed;  // "kernel.spn:12:5" when #line maps it elsewhere
  std::string message;
  std::string checkId;  // "shadow", printed as [verify-shadow]
};

class Reporter {
 public:
  void report(const clang::SourceManager& sm, clang::SourceLocation loc, const char* checkId, std::string message);
  const std::vector<Violation>& violations() const { return violations_; }
  // Sorted by file, line, column, id; one "file:line:col: error: msg [id]" line
  // each, plus a note line pointing at the .spn source when #line says so.
  void print(std::ostream& os) const;

 private:
  std::vector<Violation> violations_;
};

class Check : public clang::ast_matchers::MatchFinder::MatchCallback {
 public:
  explicit Check(Reporter& reporter) : reporter_(reporter) {}
  // Without the "verify-" prefix, e.g. "shadow".
  virtual const char* name() const = 0;
  virtual const char* description() const = 0;
  virtual void registerMatchers(clang::ast_matchers::MatchFinder& finder) = 0;

 protected:
  // Records a violation of this check ("[verify-<name()>]").
  void report(const clang::SourceManager& sm, clang::SourceLocation loc, std::string message) {
    reporter_.report(sm, loc, name(), std::move(message));
  }

 private:
  Reporter& reporter_;
};

std::vector<std::unique_ptr<Check>> makeAllChecks(Reporter& reporter);

// Shared helpers.
bool isKernel(const clang::FunctionDecl* fn);      // __global__
bool isDeviceOnly(const clang::FunctionDecl* fn);  // __device__, not __global__
// Prelude helpers are named __spn_*; the checks about outlined closures skip them.
bool isPreludeHelper(const clang::FunctionDecl* fn);

}  // namespace spindle::verify
