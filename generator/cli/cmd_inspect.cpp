// `spindle inspect FILE --stage S [options]`: show one stage of the front end.
// Adding a stage is one row in kStages.
#include <fmt/format.h>

#include <filesystem>

#include "commands.h"
#include "frontend/ast_dump.h"
#include "frontend/diagnostics.h"
#include "frontend/parser.h"
#include "inspect_stages.h"
#include "load_module.h"

namespace spindle::cli {

namespace {

struct Stage {
  const char* name;
  bool needsSema;     // false: parse only, so the stage shows even where sema fails
  bool takesOptions;  // whether arguments besides FILE and --stage are passed on
  std::string (*show)(const LoadedModule&, const Args& options);
};

std::string showAst(const LoadedModule& r, const Args&) { return dumpAst(*r.module); }
std::string showScopes(const LoadedModule& r, const Args&) { return inspectScopes(r); }

const Stage kStages[] = {
    {"ast", false, false, showAst},    {"scopes", true, false, showScopes}, {"key", true, true, inspectKey},
    {"runs", true, true, inspectRuns}, {"tune", true, true, inspectTune},
};

std::string stageNames() {
  std::string names;
  for (const auto& s : kStages) names += names.empty() ? s.name : std::string(", ") + s.name;
  return names;
}

const Stage* findStage(const std::string& name) {
  for (const auto& s : kStages)
    if (name == s.name) return &s;
  return nullptr;
}

}  // namespace

int cmdInspect(const Args& args) {
  std::string path, stageName;
  Args options;  // everything else, in order, for the stage to read
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--stage") {
      if (i + 1 == args.size()) return usageError("inspect: '--stage' needs a value");
      stageName = args[++i];
    } else if (a.rfind("--stage=", 0) == 0) {
      stageName = a.substr(8);
    } else if (path.empty() && !(a.size() > 1 && a[0] == '-')) {
      path = a;
    } else {
      options.push_back(a);
    }
  }
  if (path.empty()) return usageError("inspect: expected a FILE");
  if (stageName.empty()) return usageError(fmt::format("inspect: expected --stage ({})", stageNames()));
  const Stage* stage = findStage(stageName);
  if (!stage) return usageError(fmt::format("inspect: unknown stage '{}' (expected {})", stageName, stageNames()));
  if (!stage->takesOptions && !options.empty())
    return usageError(fmt::format("inspect: unknown option '{}' for stage '{}'", options.front(), stage->name));

  std::string error;
  // A directory opens as an empty stream; SourceFile::load does not notice.
  auto file = std::filesystem::is_directory(path) ? nullptr : SourceFile::load(path, error);
  if (!file) {
    if (error.empty()) error = fmt::format("cannot open '{}': is a directory", path);
    fmt::print(stderr, "spindle: error: {}\n", error);
    return 1;
  }
  DiagnosticEngine diags;
  LoadedModule result;
  if (stage->needsSema) result = loadModule(file, diags);
  else result.module = parseModule(file, diags);
  fmt::print(stderr, "{}", diags.renderAll());
  if (diags.hasErrors()) return 1;
  fmt::print("{}", stage->show(result, options));
  return 0;
}

}  // namespace spindle::cli
