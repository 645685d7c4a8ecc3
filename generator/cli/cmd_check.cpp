// `spindle check FILE...`: parse and analyze each file; print diagnostics only.
#include <fmt/format.h>

#include <filesystem>

#include "commands.h"
#include "frontend/diagnostics.h"
#include "load_module.h"

namespace spindle::cli {

int cmdCheck(const Args& args) {
  if (args.empty()) return usageError("check: expected at least one FILE");
  for (const auto& a : args)
    if (a.size() > 1 && a[0] == '-') return usageError(fmt::format("check: unknown option '{}'", a));

  int status = 0;
  for (const auto& path : args) {
    std::string error;
    // A directory opens as an empty stream; SourceFile::load does not notice.
    auto file = std::filesystem::is_directory(path) ? nullptr : SourceFile::load(path, error);
    if (!file) {
      if (error.empty()) error = fmt::format("cannot open '{}': is a directory", path);
      fmt::print(stderr, "spindle: error: {}\n", error);
      status = 1;
      continue;
    }
    DiagnosticEngine diags;  // one per file: each file's error limit is its own
    loadModule(file, diags);
    fmt::print(stderr, "{}", diags.renderAll());
    if (diags.hasErrors()) status = 1;
  }
  return status;
}

}  // namespace spindle::cli
