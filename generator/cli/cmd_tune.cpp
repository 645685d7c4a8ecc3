// `spindle tune FILE [--kernel K] --dims M=..,N=.. [--static N=V]... [--dtype T=TY]...
//               [--scalar NAME=VALUE]... [--target T] [--retune]`: tune a kernel
// with @tune ahead of time for the key bucket these dims fall in (random
// tensor contents, as `run`), print each config's median and the choice,
// and store it in the cache directory's tuning store, where launches of
// every later process find it.
// `spindle tune --export FILE.json` writes every stored choice to a file;
// `spindle tune --import FILE.json` adds a file's choices to the store
// (docs/runtime.md, "Autotuning").
#include <fmt/format.h>

#include <stdexcept>

#include "commands.h"
#include "launch_args.h"
#include "spec_options.h"

#include <spindle/runtime.hpp>

namespace spindle::cli {

int cmdTune(const Args& args) {
  std::string path, target, exportPath, importPath;
  bool retune = false;
  KernelSelection sel;
  std::map<std::string, int64_t> dims;
  std::map<std::string, double> scalars;
  try {
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (parseSpecOption(args, i, sel)) continue;
      auto value = [&]() -> const std::string& {
        if (i + 1 >= args.size()) throw std::invalid_argument(fmt::format("'{}' needs a value", a));
        return args[++i];
      };
      if (a == "--dims") parseDims(value(), dims);
      else if (a == "--target") target = value();
      else if (a == "--retune") retune = true;
      else if (a == "--export") exportPath = value();
      else if (a == "--import") importPath = value();
      else if (a == "--scalar") parseScalar(value(), scalars);
      else if (a.size() > 1 && a[0] == '-') {
        return usageError(fmt::format("tune: unknown option '{}'", a));
      } else if (path.empty()) {
        path = a;
      } else {
        return usageError(fmt::format("tune: unexpected argument '{}'", a));
      }
    }
  } catch (const std::exception& e) {
    return usageError(std::string("tune: ") + e.what());
  }
  RuntimeOptions options;
  options.target = target;
  if (!exportPath.empty() || !importPath.empty()) {
    if (!path.empty() || (!exportPath.empty() && !importPath.empty()))
      return usageError("tune: --export and --import take only a FILE.json, one at a time");
    if (options.target.empty()) options.backend = BackendKind::Cpu;  // the store needs no device
    Runtime runtime(options);
    if (!exportPath.empty()) {
      size_t n = runtime.exportTuning(exportPath);
      fmt::print("exported {} tuning result{} from {} to {}\n", n, n == 1 ? "" : "s", runtime.cacheDir(), exportPath);
    } else {
      size_t n = runtime.importTuning(importPath);
      fmt::print("imported {} tuning result{} into {}\n", n, n == 1 ? "" : "s", runtime.cacheDir());
    }
    return 0;
  }
  if (path.empty()) return usageError("tune: expected a FILE (or --export/--import FILE.json)");
  if (!sel.spec.contiguousTensors.empty() || !sel.spec.unitStrideTensors.empty() || !sel.spec.alignedTensors.empty() ||
      !sel.spec.divisible.empty() || !sel.spec.exactGridDims.empty())
    return usageError("tune: layout flags follow from the arguments, which tune allocates itself; drop them");
  KernelOptions kernelOptions;
  if (std::string why = applyStaticDims(sel, "tune", dims, kernelOptions); !why.empty()) return usageError(why);
  options.lineDirectives = sel.spec.lineDirectives;
  if (sel.spec.checked) options.checked = true;
  Runtime runtime(options);
  if (!runtime.hasDevice())
    return usageError(fmt::format("tune: tuning times launches, and there is no device ({})", runtime.deviceStatus()));
  Module module = runtime.loadModule(path);
  std::string name;
  try {
    name = chooseKernel(module.compiled(), sel.kernel);
  } catch (const std::invalid_argument& e) {
    return usageError(std::string("tune: ") + e.what());
  }
  Kernel kernel = module.kernel(name, kernelOptions);
  const KernelInfo& info = kernel.info();
  if (!info.tune) return usageError(fmt::format("tune: kernel '{}' has no @tune", name));
  if (std::string why = missingLaunchInputs(info, sel, dims, "tune"); !why.empty()) return usageError(why);
  LaunchArgs launch;
  std::string why = makeLaunchArgs(runtime, info, sel, dims, scalars, "tune", launch);
  if (!why.empty()) return usageError(why);

  TuneReport r = kernel.tune(nullptr, launch.args.data(), launch.args.size(), retune);
  fmt::print("kernel: {}  device: {}  bucket: {}\n", name, runtime.deviceName(), r.bucket.empty() ? "-" : r.bucket);
  if (r.stored) {
    fmt::print("stored choice: {} (nothing timed; --retune to time again)\n", r.configs[size_t(r.chosen)]);
  } else {
    for (size_t i = 0; i < r.configs.size(); ++i) {
      std::string time = r.medianMs[i] >= 0 ? fmt::format("{:10.4f} ms", r.medianMs[i]) : std::string("   skipped");
      fmt::print("  {:<32} {}{}{}\n", r.configs[i], time, i == 0 ? "  (default)" : "",
                 int(i) == r.chosen ? "  <- chosen" : "");
      if (!r.failures[i].empty()) fmt::print("      {}\n", r.failures[i].substr(0, r.failures[i].find('\n')));
    }
    fmt::print("chosen: {} ({} rounds, {:.0f} ms of timing{})\n", r.configs[size_t(r.chosen)], r.rounds, r.timingMs,
               r.budgetExhausted ? ", ended by the budget" : "");
  }
  fmt::print("key: {}\nstore: {}\n", r.keyHex, runtime.cacheDir().empty() ? "(disk cache off)" : runtime.cacheDir());
  return 0;
}

}  // namespace spindle::cli
