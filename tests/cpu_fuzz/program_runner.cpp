#include "program_runner.h"

#include <fmt/format.h>

#include <cstring>

#include "gen_state.h"

namespace spindle::cpu_fuzz {
namespace {

int64_t axisSize(const AxisSpec& a, const std::map<std::string, int64_t>& dims) {
  return a.dim.empty() ? a.offset : a.scale * dims.at(a.dim) + a.offset;
}

int64_t elementCount(const ParamSpec& p, const std::map<std::string, int64_t>& dims) {
  int64_t n = 1;
  for (const AxisSpec& a : p.shape) n *= axisSize(a, dims);
  return n;
}

// A value in r: often a bound or a small number, where arithmetic changes
// behaviour, else uniform.
Int drawValue(Rng& rng, const Interval& r) {
  switch (rng.below(8)) {
    case 0: return r.lo;
    case 1: return r.hi;
    case 2: {
      const Int v = rng.between(-3, 3);
      return r.holds(v) ? v : r.lo;
    }
    default: return rng.between(r.lo, r.hi);
  }
}

// The two's-complement bits of v in `bytes` bytes, little-endian.
void putBits(unsigned char* out, Int v, size_t bytes) {
  const auto u = static_cast<unsigned __int128>(v);
  for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<unsigned char>(u >> (8 * i));
}

}  // namespace

std::string Config::name() const { return fmt::format("warp{} {}", warp, staticDims ? "static" : "dynamic"); }

LaunchData drawLaunch(const FuzzProgram& p, uint64_t seed) {
  Rng rng(seed * 0x2545f4914f6cdd1dull + 7);
  LaunchData d;
  for (const DimSpec& dim : p.dims) {
    // The largest and the smallest sizes find the edge cases of blocks and
    // guards; others anything in between.
    const int roll = rng.below(10);
    d.dims[dim.name] = roll < 3 ? dim.hi : roll < 4 ? dim.lo : int64_t(rng.between(dim.lo, dim.hi));
  }
  for (const ParamSpec& param : p.params) {
    if (!param.isTensor()) {
      d.tensors.emplace_back();
      const Int v = drawValue(rng, param.values);
      uint64_t bits = 0;
      putBits(reinterpret_cast<unsigned char*>(&bits), v, size_t(param.type.bits / 8));
      d.scalars.push_back(bits);
      continue;
    }
    d.scalars.push_back(0);
    const size_t bytes = size_t(param.type.bits / 8);
    Bytes b(size_t(elementCount(param, d.dims)) * bytes);
    if (param.kind == ParamSpec::Kind::Input) {
      for (size_t i = 0; i < b.size(); i += bytes) putBits(&b[i], drawValue(rng, param.values), bytes);
    } else {
      // Outputs start as a pattern, so that the elements a run leaves alone
      // compare as well.
      for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<unsigned char>(0xA5 ^ (i * 7));
    }
    d.tensors.push_back(std::move(b));
  }
  return d;
}

std::map<std::string, int64_t> staticValues(const FuzzProgram& p, const LaunchData& data, bool staticDims) {
  std::map<std::string, int64_t> values;
  for (const DimSpec& d : p.dims)
    if (d.alwaysStatic || staticDims) values[d.name] = data.dims.at(d.name);
  return values;
}

std::vector<Bytes> runProgram(Runtime& rt, const FuzzProgram& p, const LaunchData& data, const Config& c) {
  Module module = rt.loadModuleFromString(p.fileName, p.text);
  KernelOptions options;
  if (c.staticDims)
    for (const DimSpec& d : p.dims)
      if (!d.alwaysStatic) options.staticDims.push_back(d.name);
  Kernel kernel = module.kernel(p.kernel, options);
  std::vector<DeviceBuffer> buffers;
  std::vector<Arg> args;
  for (size_t i = 0; i < p.params.size(); ++i) {
    const ParamSpec& param = p.params[i];
    if (!param.isTensor()) {
      Arg a;
      a.kind = Arg::Kind::Scalar;
      a.dtype = param.type.scalarType();
      a.bits = data.scalars[i];
      args.push_back(a);
      continue;
    }
    buffers.push_back(rt.allocate(std::max<size_t>(data.tensors[i].size(), 1)));
    rt.copyToDevice(buffers.back(), data.tensors[i].data(), data.tensors[i].size());
    int64_t shape[kMaxRank];
    for (size_t a = 0; a < param.shape.size(); ++a) shape[a] = axisSize(param.shape[a], data.dims);
    args.push_back(tensor(buffers.back().data(), param.type.scalarType(), shape, int(param.shape.size())));
  }
  kernel.launch(nullptr, args.data(), args.size());
  std::vector<Bytes> written;
  size_t buffer = 0;
  for (size_t i = 0; i < p.params.size(); ++i) {
    if (!p.params[i].isTensor()) continue;
    const DeviceBuffer& b = buffers[buffer++];
    if (p.params[i].kind == ParamSpec::Kind::Input) continue;
    Bytes out(data.tensors[i].size());
    rt.copyToHost(out.data(), b, out.size());
    written.push_back(std::move(out));
  }
  return written;
}

std::string firstDifference(const FuzzProgram& p, const std::vector<Bytes>& a, const std::vector<Bytes>& b) {
  size_t k = 0;
  for (const ParamSpec& param : p.params) {
    if (!param.isTensor() || param.kind == ParamSpec::Kind::Input) continue;
    if (k >= a.size() || k >= b.size()) return "a different number of outputs";
    const Bytes &x = a[k], &y = b[k];
    ++k;
    const size_t bytes = size_t(param.type.bits / 8);
    for (size_t i = 0; i < x.size() && i < y.size(); i += bytes) {
      if (std::memcmp(&x[i], &y[i], bytes) == 0) continue;
      uint64_t u = 0, v = 0;
      std::memcpy(&u, &x[i], bytes);
      std::memcpy(&v, &y[i], bytes);
      size_t differing = 0;
      for (size_t j = 0; j < x.size(); j += bytes) differing += std::memcmp(&x[j], &y[j], bytes) != 0;
      return fmt::format("{}: element {} is {:#x} and {:#x} ({} of {} elements differ)", param.name, i / bytes, u, v,
                         differing, x.size() / bytes);
    }
    if (x.size() != y.size()) return param.name + ": sizes differ";
  }
  return "";
}

}  // namespace spindle::cpu_fuzz
