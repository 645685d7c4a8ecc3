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
#include "spec_options.h"

#include <spindle/runtime.hpp>

namespace spindle::cli {

namespace {

// "M=4096,N=128" -> {M: 4096, N: 128}
void parseDims(const std::string& text, std::map<std::string, int64_t>& out) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument(fmt::format("--dims expects NAME=VALUE[,NAME=VALUE...], got '{}'", text));
    out[item.substr(0, eq)] = parseIntegerFlag("--dims", item.substr(0, eq), item.substr(eq + 1));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
}

// Random element bytes for `type`: floats in [-1, 1), integers in [0, 16).
void fillRandom(std::vector<char>& bytes, ScalarType type, int64_t count, std::mt19937_64& rng) {
  size_t size = scalarBytes(type);
  bytes.resize(size_t(count) * size);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 15);
  for (int64_t i = 0; i < count; ++i) {
    double v = isFloat(type) ? real(rng) : type == ScalarType::Bool ? small(rng) % 2 : small(rng);
    uint64_t bits = scalar(type, v).bits;
    std::memcpy(bytes.data() + size_t(i) * size, &bits, size);
  }
}

}  // namespace

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
        const std::string& s = value();
        size_t eq = s.find('=');
        if (eq == std::string::npos || eq == 0) throw std::invalid_argument("--scalar expects NAME=VALUE");
        scalars[s.substr(0, eq)] = std::stod(s.substr(eq + 1));
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
      !sel.spec.divisible.empty())
    return usageError(
        "run: --contiguous, --unit-stride, --aligned and --divisible follow from the arguments, and run "
        "allocates them itself (contiguous, 16-byte aligned); drop them");

  RuntimeOptions options;
  options.target = target;
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
  KernelOptions kernelOptions;
  kernelOptions.consts = sel.spec.consts;
  for (const auto& [dim, v] : sel.spec.staticDims) {
    kernelOptions.staticDims.push_back(dim);
    auto it = dims.find(dim);
    if (it != dims.end() && it->second != v)
      return usageError(fmt::format("run: --static {}={} disagrees with --dims {}={}", dim, v, dim, it->second));
    dims[dim] = v;
  }
  Kernel kernel = module.kernel(name, kernelOptions);
  const KernelInfo& info = kernel.info();
  std::vector<std::string> missing;
  for (const auto& d : info.dimSymbols)
    if (!dims.count(d)) missing.push_back(d);
  if (!missing.empty())
    return usageError(fmt::format("run: give every dim a size with --dims (missing: {})", fmt::join(missing, ", ")));
  for (const auto& t : info.typeParams)
    if (!sel.spec.typeArgs.count(t)) return usageError(fmt::format("run: --dtype {}=TYPE is needed", t));

  // The arguments in parameter order: random contents in device buffers
  // where a GPU is present. Without one, distinct stand-in addresses aligned
  // as a device allocation is (binding checks pointers, never reads them),
  // so what is compiled below is the binary a launch would use either way.
  const bool device = runtime->hasDevice();
  std::mt19937_64 rng(12345);
  std::vector<DeviceBuffer> buffers;
  std::vector<Arg> launchArgs;
  uint64_t bytesMoved = 0;
  uintptr_t standIn = uintptr_t(1) << 20;
  for (const auto& p : info.params) {
    ScalarType t = p.typeParam.empty() ? p.dtype : sel.spec.typeArgs.at(p.typeParam);
    if (!p.isTensor) {
      auto it = scalars.find(p.name);
      double v = it != scalars.end() ? it->second : isFloat(t) ? std::uniform_real_distribution<double>(0, 1)(rng) : 1;
      launchArgs.push_back(scalar(t, v));
      continue;
    }
    if (sel.spec.absentTensors.count(p.name)) {  // --absent: the launch passes none
      launchArgs.push_back(none());
      continue;
    }
    std::vector<int64_t> shape;
    int64_t count = 1;
    for (const auto& d : p.dims) {
      auto size = evaluateDim(d, dims);
      if (!size || *size < 1)
        return usageError(fmt::format("run: parameter '{}' has a dim {} that the given --dims do not make a size",
                                      p.name, d.expressionText.empty() ? d.symbol : d.expressionText));
      shape.push_back(*size);
      count *= shape.back();
    }
    uint64_t bytes = uint64_t(count) * scalarBytes(t);
    bytesMoved += bytes;
    const void* data = reinterpret_cast<const void*>(standIn);
    if (device) {
      std::vector<char> host;
      fillRandom(host, t, count, rng);
      buffers.push_back(runtime->allocate(host.size()));
      runtime->copyToDevice(buffers.back(), host.data(), host.size());
      data = buffers.back().data();
    } else {
      standIn += (bytes + 255) / 256 * 256;
    }
    launchArgs.push_back(tensor(data, t, shape.data(), int(shape.size())));
  }
  CompileReport report = kernel.compileFor(launchArgs.data(), launchArgs.size());
  fmt::print("kernel: {}  target: {}  cache: {}  key: {}\n", name, report.target,
             report.outcome == CacheOutcome::Miss ? "miss" : "hit", report.keyHex);
  if (report.outcome == CacheOutcome::Miss) fmt::print("compile time: {:.1f} ms\n", report.compileSeconds * 1e3);
  if (!device) {
    fmt::print("no GPU ({}): compiled, did not launch\n", runtime->deviceStatus());
    return 0;
  }

  kernel.launch(nullptr, launchArgs.data(), launchArgs.size());  // warm-up
  runtime->synchronize();
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
