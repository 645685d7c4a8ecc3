#include "launch_args.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <random>
#include <stdexcept>

namespace spindle::cli {

namespace {

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

void parseScalar(const std::string& text, std::map<std::string, double>& out) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) throw std::invalid_argument("--scalar expects NAME=VALUE");
  out[text.substr(0, eq)] = std::stod(text.substr(eq + 1));
}

std::string applyStaticDims(const KernelSelection& sel, const std::string& command,
                            std::map<std::string, int64_t>& dims, KernelOptions& out) {
  out.consts = sel.spec.consts;
  for (const auto& [dim, v] : sel.spec.staticDims) {
    out.staticDims.push_back(dim);
    auto it = dims.find(dim);
    if (it != dims.end() && it->second != v)
      return fmt::format("{}: --static {}={} disagrees with --dims {}={}", command, dim, v, dim, it->second);
    dims[dim] = v;
  }
  return "";
}

std::string missingLaunchInputs(const KernelInfo& info, const KernelSelection& sel,
                                const std::map<std::string, int64_t>& dims, const std::string& command) {
  std::vector<std::string> missing;
  for (const auto& d : info.dimSymbols)
    if (!dims.count(d)) missing.push_back(d);
  if (!missing.empty())
    return fmt::format("{}: give every dim a size with --dims (missing: {})", command, fmt::join(missing, ", "));
  for (const auto& t : info.typeParams)
    if (!sel.spec.typeArgs.count(t)) return fmt::format("{}: --dtype {}=TYPE is needed", command, t);
  return "";
}

std::string makeLaunchArgs(Runtime& runtime, const KernelInfo& info, const KernelSelection& sel,
                           const std::map<std::string, int64_t>& dims, const std::map<std::string, double>& scalars,
                           const std::string& command, LaunchArgs& out) {
  // The arguments in parameter order: random contents in device buffers
  // where a GPU is present. Without one, distinct stand-in addresses aligned
  // as a device allocation is (binding checks pointers, never reads them),
  // so what is compiled is the binary a launch would use either way.
  const bool device = runtime.hasDevice();
  std::mt19937_64 rng(12345);
  uintptr_t standIn = uintptr_t(1) << 20;
  for (const auto& p : info.params) {
    ScalarType t = p.typeParam.empty() ? p.dtype : sel.spec.typeArgs.at(p.typeParam);
    if (!p.isTensor) {
      auto it = scalars.find(p.name);
      double v = it != scalars.end() ? it->second : isFloat(t) ? std::uniform_real_distribution<double>(0, 1)(rng) : 1;
      out.args.push_back(scalar(t, v));
      continue;
    }
    if (sel.spec.absentTensors.count(p.name)) {  // --absent: the launch passes none
      out.args.push_back(none());
      continue;
    }
    std::vector<int64_t> shape;
    int64_t count = 1;
    for (const auto& d : p.dims) {
      auto size = evaluateDim(d, dims);
      if (!size || *size < 1)
        return fmt::format("{}: parameter '{}' has a dim {} that the given --dims do not make a size", command, p.name,
                           d.expressionText.empty() ? d.symbol : d.expressionText);
      shape.push_back(*size);
      count *= shape.back();
    }
    uint64_t bytes = uint64_t(count) * scalarBytes(t);
    out.bytes += bytes;
    const void* data = reinterpret_cast<const void*>(standIn);
    if (device) {
      std::vector<char> host;
      fillRandom(host, t, count, rng);
      out.buffers.push_back(runtime.allocate(host.size()));
      runtime.copyToDevice(out.buffers.back(), host.data(), host.size());
      data = out.buffers.back().data();
    } else {
      standIn += (bytes + 255) / 256 * 256;
    }
    out.args.push_back(tensor(data, t, shape.data(), int(shape.size())));
  }
  return {};
}

}  // namespace spindle::cli
