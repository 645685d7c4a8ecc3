// `spindle run FILE [--kernel K] --dims M=4096,N=4096 [--static N=V]...
//              [--dtype T=TY]... [--scalar NAME=VALUE]... [--reps R] [--target T] [--unchecked]`:
// on a GPU, fill every tensor with random values, launch, and print the
// median time and achieved bandwidth over R runs. Without a GPU, compile
// for the target (or the backend's default) and say that nothing launched.
// `--target cpu` runs on the host (the cpu target), checked unless
// --unchecked: an out-of-bounds access fails the run with its .spn line.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <stdexcept>

#include "commands.h"
#include "launch_args.h"
#include "spec_options.h"

#include <spindle/runtime.hpp>

namespace spindle::cli {

int cmdRun(const Args& args) {
  std::string path, target;
  bool unchecked = false;  // the cpu target runs checked builds unless told not to
  KernelSelection sel;
  std::map<std::string, int64_t> dims;
  std::map<std::string, double> scalars;
  int reps = 20;
  try {
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (parseSpecOption(args, i, sel)) continue;
      auto value = [&]() -> const std::string& {
        if (i + 1 >= args.size()) throw std::invalid_argument(fmt::format("'{}' needs a value", a));
        return args[++i];
      };
      if (a == "--dims") {
        parseDims(value(), dims);
      } else if (a == "--target") {
        target = value();
      } else if (a == "--unchecked") {
        unchecked = true;
      } else if (a == "--reps") {
        reps = int(parseIntegerFlag("--reps", "", value()));
        if (reps < 1) throw std::invalid_argument("--reps must be at least 1");
      } else if (a == "--scalar") {
        parseScalar(value(), scalars);
      } else if (a.size() > 1 && a[0] == '-') {
        return usageError(fmt::format("run: unknown option '{}'", a));
      } else if (path.empty()) {
        path = a;
      } else {
        return usageError(fmt::format("run: unexpected argument '{}'", a));
      }
    }
  } catch (const std::exception& e) {
    return usageError(std::string("run: ") + e.what());
  }
  if (path.empty()) return usageError("run: expected a FILE");
  if (!sel.spec.contiguousTensors.empty() || !sel.spec.unitStrideTensors.empty() || !sel.spec.alignedTensors.empty() ||
      !sel.spec.divisible.empty() || !sel.spec.exactGridDims.empty())
    return usageError(
        "run: --contiguous, --unit-stride, --aligned, --divisible and --exact-grid follow from the arguments, and run "
        "allocates them itself (contiguous, 16-byte aligned); drop them");
  KernelOptions kernelOptions;
  if (std::string why = applyStaticDims(sel, "run", dims, kernelOptions); !why.empty()) return usageError(why);

  RuntimeOptions options;
  options.target = target;
  // A kernel with @tune is tuned before the warm-up launch, so no timed
  // run includes tuning (SPINDLE_TUNE still overrides).
  if (target.rfind("cpu", 0) != 0) options.tune.mode = TuneMode::Blocking;  // the cpu target does not tune
  options.lineDirectives = sel.spec.lineDirectives;
  if (sel.spec.checked && unchecked) return usageError("run: --checked and --unchecked contradict each other");
  if (sel.spec.checked) options.checked = true;
  if (unchecked) options.checked = false;
  auto runtime = std::make_unique<Runtime>(options);
  if (!runtime->hasDevice() && target.empty()) {
    // Compile for the backend's flagship target so the kernel is still checked.
    options.target = runtime->backend() == BackendKind::Hip ? "gfx90a" : "sm_90";
    std::string status = runtime->deviceStatus();
    runtime = std::make_unique<Runtime>(options);
    fmt::print("{}; compiling for {} instead\n", status, options.target);
  }
  Module module = runtime->loadModule(path);
  std::string name;
  try {
    name = chooseKernel(module.compiled(), sel.kernel);
  } catch (const std::invalid_argument& e) {
    return usageError(std::string("run: ") + e.what());
  }
  Kernel kernel = module.kernel(name, kernelOptions);
  const KernelInfo& info = kernel.info();
  if (std::string why = missingLaunchInputs(info, sel, dims, "run"); !why.empty()) return usageError(why);

  // The arguments in parameter order: random contents in device buffers
  // where a GPU is present. Without one, distinct stand-in addresses aligned
  // as a device allocation is (binding checks pointers, never reads them),
  // so what is compiled below is the binary a launch would use either way.
  const bool device = runtime->hasDevice();
  LaunchArgs launch;
  std::string why = makeLaunchArgs(*runtime, info, sel, dims, scalars, "run", launch);
  if (!why.empty()) return usageError(why);
  std::vector<Arg>& launchArgs = launch.args;
  const uint64_t bytesMoved = launch.bytes;
  CompileReport report = kernel.compileFor(launchArgs.data(), launchArgs.size());
  fmt::print("kernel: {}  target: {}  cache: {}  key: {}\n", name, report.target,
             report.outcome == CacheOutcome::Miss ? "miss" : "hit", report.keyHex);
  if (!report.tuneConfig.empty()) fmt::print("tune: {} ({})\n", report.tuneConfig, report.tuneChoice);
  if (report.outcome == CacheOutcome::Miss) fmt::print("compile time: {:.1f} ms\n", report.compileSeconds * 1e3);
  if (!device) {
    fmt::print("no GPU ({}): compiled, did not launch\n", runtime->deviceStatus());
    return 0;
  }

  kernel.launch(nullptr, launchArgs.data(), launchArgs.size());  // warm-up (and tuning, for @tune)
  runtime->synchronize();
  if (!report.tuneConfig.empty()) {
    CompileReport tuned = kernel.compileFor(launchArgs.data(), launchArgs.size());
    fmt::print("tune: timed with {} ({})\n", tuned.tuneConfig, tuned.tuneChoice);
  }
  std::vector<float> times;
  for (int r = 0; r < reps; ++r)
    times.push_back(runtime->timeMs(nullptr, [&] { kernel.launch(nullptr, launchArgs.data(), launchArgs.size()); }));
  std::sort(times.begin(), times.end());
  double median = reps % 2 ? times[size_t(reps / 2)] : 0.5 * (times[size_t(reps / 2 - 1)] + times[size_t(reps / 2)]);
  fmt::print("device: {}\n", runtime->deviceName());
  fmt::print("median: {:.4f} ms over {} runs (min {:.4f}, max {:.4f})\n", median, reps, times.front(), times.back());
  fmt::print("bandwidth: {:.1f} GB/s ({} bytes: each tensor counted once)\n",
             double(bytesMoved) / (median * 1e-3) / 1e9, bytesMoved);
  return 0;
}

}  // namespace spindle::cli
