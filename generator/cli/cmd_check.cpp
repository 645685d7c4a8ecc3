// `spindle check FILE...`: parse and analyze each file; print diagnostics only.
#include <fmt/format.h>

#include "commands.h"
#include "diagnostics.h"
#include "frontend.h"

namespace spindle::cli {

int cmdCheck(const Args& args) {
  if (args.empty()) return usageError("check: expected at least one FILE");
  for (const auto& a : args)
    if (a.size() > 1 && a[0] == '-') return usageError(fmt::format("check: unknown option '{}'", a));

  int status = 0;
  for (const auto& path : args) {
    std::string error;
    auto file = SourceFile::load(path, error);
    if (!file) {
      fmt::print(stderr, "spindle: error: {}\n", error);
      status = 1;
      continue;
    }
    DiagnosticEngine diags;  // one per file: each file's error limit is its own
    runFrontend(file, diags);
    fmt::print(stderr, "{}", diags.renderAll());
    if (diags.hasErrors()) status = 1;
  }
  return status;
}

}  // namespace spindle::cli
