// `spindle compile FILE --kernel K --target T [--static N=V]... [--dtype T=TY]...
//                  [--no-line-directives]`: compile one specialization through
// the runtime's backend for T (sm_XX: nvrtc; gfxNNN: hiprtc), no GPU needed,
// and report the cache key, hit or miss, binary size and compile time.
#include <fmt/format.h>

#include "commands.h"
#include "spec_options.h"

#include <spindle/runtime.hpp>

namespace spindle::cli {

int cmdCompile(const Args& args) {
  std::string path, target;
  KernelSelection sel;
  try {
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (parseSpecOption(args, i, sel)) continue;
      if (a == "--target") {
        if (i + 1 >= args.size()) return usageError("compile: '--target' needs a value (sm_90, gfx90a, ...)");
        target = args[++i];
      } else if (a.size() > 1 && a[0] == '-') {
        return usageError(fmt::format("compile: unknown option '{}'", a));
      } else if (path.empty()) {
        path = a;
      } else {
        return usageError(fmt::format("compile: unexpected argument '{}'", a));
      }
    }
  } catch (const std::invalid_argument& e) {
    return usageError(std::string("compile: ") + e.what());
  }
  if (path.empty()) return usageError("compile: expected a FILE");
  if (target.empty()) return usageError("compile: expected --target (sm_90, gfx90a, gfx940, ...)");

  RuntimeOptions options;
  options.target = target;
  options.lineDirectives = sel.spec.lineDirectives;
  if (sel.spec.checked) options.checked = true;  // else the target's default (docs/runtime.md)
  Runtime runtime(options);
  Module module = runtime.loadModule(path);
  std::string name;
  try {
    name = chooseKernel(module.compiled(), sel.kernel);
  } catch (const std::invalid_argument& e) {
    return usageError(std::string("compile: ") + e.what());
  }
  KernelOptions kernelOptions;
  for (const auto& [dim, value] : sel.spec.staticDims) kernelOptions.staticDims.push_back(dim);
  kernelOptions.consts = sel.spec.consts;
  Kernel kernel = module.kernel(name, kernelOptions);
  // The layout flags (--contiguous, --aligned, --divisible, --exact-grid) pick the binary
  // a launch with such arguments would use.
  CompileReport r = kernel.compile(sel.spec);

  fmt::print("kernel: {} (symbol {})\n", name, r.kernelSymbol);
  fmt::print("target: {} ({}, {})\n", r.target, backendName(runtime.backend()), runtime.compilerIdentity());
  fmt::print("key: {}\n", r.keyHex);
  fmt::print("cache: {}\n", r.outcome == CacheOutcome::Miss ? "miss" : "hit");
  fmt::print("binary size: {} bytes\n", r.binaryBytes);
  if (r.outcome == CacheOutcome::Miss) fmt::print("compile time: {:.1f} ms\n", r.compileSeconds * 1e3);
  else fmt::print("compile time: 0 ms (cached in {})\n", runtime.cacheDir());
  if (const auto& t = kernel.info().tune)
    fmt::print(
        "tune: {} configs; this binary has the consts as declared{} (a launch picks a config per key "
        "bucket: spindle tune, spindle inspect --stage tune)\n",
        t->configs.size(), sel.spec.consts.empty() ? "" : " and --const");
  return 0;
}

}  // namespace spindle::cli
