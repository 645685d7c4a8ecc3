// The public API: Runtime (backend, device, caches), Module, Kernel.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <utility>

#include <spindle/runtime.hpp>

#include "backend.h"
#include "compilation.h"
#include "disk_cache.h"
#include "env_number.h"
#include "launch_binding.h"
#include "launch_device.h"
#include "memory_cache.h"
#include "remote_cache/remote_setup.h"
#include "stream_capture.h"
#include "tuning/tune_export.h"
#include "tuning/tune_space.h"
#include "tuning/tuned_kernel.h"

namespace spindle {

// ---------------------------------------------------------------------------
// Runtime

struct Runtime::Impl {
  RuntimeOptions opts;
  std::unique_ptr<rt::Backend> backend;
  std::string target;
  bool hasDevice = false;
  std::string deviceName;
  std::string deviceStatus;
  std::unique_ptr<rt::DiskCache> disk;
  // Behind the disk cache; also the store that tuning results can share
  // (rt::RemoteNamespace::Tuning). Null when not asked for or unusable.
  std::unique_ptr<rt::RemoteCache> remote;
  rt::Counters counters;
  std::unique_ptr<rt::BinaryCompiler> compiler;
  rt::TuneContext tune;  // what kernels with @tune share (tuning/tuned_kernel.h)
  // Several devices (docs/runtime.md, "Several GPUs"): with more than one
  // CUDA device a launch runs on its tensors' device. Off (one device, or a
  // backend with one context): every launch uses opts.device and asks
  // nothing of its arguments or the driver.
  int deviceCount = 0;
  bool multiDevice = false;
  // By ordinal: the target a device's binaries are compiled for, `target`
  // where that device runs its binaries, else the device's own (another
  // architecture: its own binaries, under keys of their own).
  std::vector<std::string> deviceTargets;
  std::vector<std::string> extraOptions;  // of every compiler (unsafeFpAtomics)
  std::mutex compilersMu;
  std::map<std::string, std::unique_ptr<rt::BinaryCompiler>> otherCompilers;  // by target

  // The compiler of another target than `target` (a device of another architecture).
  rt::BinaryCompiler& compilerFor(const std::string& t) {
    std::lock_guard<std::mutex> lock(compilersMu);
    auto& c = otherCompilers[t];
    if (!c) c = std::make_unique<rt::BinaryCompiler>(*backend, t, disk.get(), counters, extraOptions, remote.get());
    return *c;
  }

  // The device a launch with these arguments runs on, its stream checked
  // (launch_device.h). Called only when multiDevice.
  int launchDevice(const rt::KernelPlan& plan, const Arg* args, size_t count, void* stream) {
    rt::Backend& be = *backend;
    int d = rt::launchDevice(plan, args, count, deviceCount, opts.device,
                             [&be](const void* p) { return be.pointerDevice(p); });
    rt::checkStreamDevice(plan, stream, be.streamDevice(stream), d);
    return d;
  }

  void warn(const std::string& message) const {
    if (opts.warn) opts.warn(message);
    else std::fprintf(stderr, "%s\n", message.c_str());
  }

  rt::BinaryCompiler& binaries() {
    if (!compiler)
      throw Error(
          fmt::format("spindle: nothing to compile for: no {} device ({}) and no target given "
                      "(RuntimeOptions::target, or --target)",
                      backendName(backend->kind()), deviceStatus));
    return *compiler;
  }

  void requireDevice() const {
    if (!hasDevice)
      throw Error(fmt::format("spindle: cannot launch: {} (compile-only runtime{})", deviceStatus,
                              target.empty() ? "" : ", target " + target));
  }
};

namespace {

BackendKind parseBackend(const std::string& s, const char* where) {
  if (s == "hip") return BackendKind::Hip;
  if (s == "cuda") return BackendKind::Cuda;
  if (s == "cpu") return BackendKind::Cpu;
  if (s == "auto" || s.empty()) return BackendKind::Auto;
  throw Error(fmt::format("spindle: {}='{}': expected hip, cuda, cpu or auto", where, s));
}

std::unique_ptr<rt::Backend> makeBackend(BackendKind k) {
  switch (k) {
    case BackendKind::Hip: return rt::makeHipBackend();
    case BackendKind::Cpu: return rt::makeCpuBackend();
    default: return rt::makeCudaBackend();
  }
}

// The architecture without target features: "gfx90a:xnack-" -> "gfx90a".
std::string baseArch(const std::string& t) { return t.substr(0, t.find(':')); }

// The warp width of a target, the value of warp_size() in @grid and @block:
// 32 on NVIDIA and on AMD's RDNA (gfx10 and later compile wave32 by
// default), 64 on AMD's CDNA and GCN (gfx9 and earlier). 0 without a target.
int64_t warpSizeOf(const std::string& target) {
  if (int w = rt::cpuWarpSize(target)) return w;
  if (target.rfind("sm_", 0) == 0) return 32;
  // gfx9xx (three characters after "gfx") is GCN or CDNA; gfx10xx and up, RDNA.
  if (target.rfind("gfx", 0) == 0) return baseArch(target).size() > 6 ? 32 : 64;
  return 0;
}

bool envIs(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v && std::strcmp(v, value) == 0;
}

}  // namespace

Runtime::Runtime(RuntimeOptions options) : impl_(std::make_shared<Impl>()) {
  Impl& im = *impl_;
  im.opts = std::move(options);

  // 1. Backend: the caller's, else SPINDLE_BACKEND, else the target's, else what is present.
  BackendKind kind = im.opts.backend;
  if (kind == BackendKind::Auto)
    if (const char* env = std::getenv("SPINDLE_BACKEND")) kind = parseBackend(env, "SPINDLE_BACKEND");
  if (kind == BackendKind::Auto && !im.opts.target.empty()) {
    for (BackendKind k : {BackendKind::Cuda, BackendKind::Hip})
      if (makeBackend(k)->acceptsTarget(im.opts.target)) kind = k;
    if (rt::cpuWarpSize(im.opts.target)) kind = BackendKind::Cpu;
    if (kind == BackendKind::Auto)
      throw Error(
          fmt::format("spindle: unknown target '{}' (expected sm_XX for NVIDIA, gfxNNN for AMD, or cpu, "
                      "cpu:warp32, cpu:warp64)",
                      im.opts.target));
  }
  std::string why;
  if (kind == BackendKind::Auto) {
    std::vector<std::unique_ptr<rt::Backend>> candidates;
    candidates.push_back(rt::makeCudaBackend());
    candidates.push_back(rt::makeHipBackend());
    std::string reasons;
    for (auto& c : candidates) {  // a backend with a device first
      std::string w;
      if (c->deviceCount(&w) > im.opts.device) {
        im.backend = std::move(c);
        break;
      }
      reasons += fmt::format("\n  {}: {}", backendName(c->kind()), w);
    }
    for (auto& c : candidates) {  // else one that can at least compile
      if (im.backend || !c) continue;
      std::string w;
      if (c->hasCompiler(&w)) im.backend = std::move(c);
      else reasons += fmt::format("\n  {}: {}", backendName(c->kind()), w);
    }
    if (!im.backend) throw Error("no usable GPU backend:" + reasons);
  } else {
    im.backend = makeBackend(kind);
    if (!im.opts.target.empty() && !im.backend->acceptsTarget(im.opts.target))
      throw Error(fmt::format("spindle: target '{}' is not a {} target", im.opts.target, backendName(kind)));
  }
  rt::Backend& be = *im.backend;
  if (!im.opts.checked) {
    if (envIs("SPINDLE_CHECKED", "1")) im.opts.checked = true;
    else if (envIs("SPINDLE_CHECKED", "0")) im.opts.checked = false;
    else im.opts.checked = be.kind() == BackendKind::Cpu;
  }
  if (envIs("SPINDLE_INDEX32", "0")) im.opts.index32 = false;

  // 2. Device and target.
  int count = be.deviceCount(&why);
  if (count > im.opts.device) {
    be.useDevice(im.opts.device);
    std::string devTarget = be.deviceTarget(im.opts.device);
    im.deviceName = be.deviceName(im.opts.device);
    // The host runs every cpu target (either warp width).
    if (im.opts.target.empty() || im.opts.target == devTarget ||
        (im.opts.target.find(':') == std::string::npos && im.opts.target == baseArch(devTarget)) ||
        (be.kind() == BackendKind::Cpu && be.acceptsTarget(im.opts.target))) {
      im.hasDevice = true;
      im.deviceStatus = fmt::format("device {}: {} ({})", im.opts.device, im.deviceName, devTarget);
      if (im.opts.target.empty()) im.opts.target = devTarget;
    } else {
      im.deviceStatus = fmt::format("device {} ({}) is a {}, not the requested target {}", im.opts.device,
                                    im.deviceName, devTarget, im.opts.target);
    }
  } else {
    im.deviceStatus = count > 0 ? fmt::format("no device {} ({} present)", im.opts.device, count)
                                : fmt::format("no {} device: {}", backendName(be.kind()), why);
  }
  im.target = im.opts.target;
  if (envIs("SPINDLE_UNSAFE_FP_ATOMICS", "1")) im.opts.unsafeFpAtomics = true;
  im.deviceCount = std::max(count, 0);
  im.multiDevice = im.hasDevice && count > 1 && be.multiDevice();
  if (im.multiDevice) {
    for (int d = 0; d < count; ++d) {
      std::string t = be.deviceTarget(d);
      bool runsTarget = t == im.target || (im.target.find(':') == std::string::npos && im.target == baseArch(t));
      im.deviceTargets.push_back(runsTarget ? im.target : t);
    }
  }

  // 3. Caches.
  if (im.opts.diskCache && !envIs("SPINDLE_DISABLE_DISK_CACHE", "1")) {
    std::string dir = im.opts.cacheDir.empty() ? rt::defaultCacheDir() : im.opts.cacheDir;
    uint64_t maxBytes = im.opts.cacheMaxBytes;
    if (auto m = rt::envNumber("SPINDLE_CACHE_MAX_BYTES", 0, UINT64_MAX, "a byte count")) maxBytes = *m;
    Impl* self = &im;
    im.disk = std::make_unique<rt::DiskCache>(dir, maxBytes, [self](const std::string& m) { self->warn(m); });
    if (dir.empty()) im.warn("spindle: warning: no cache directory (set SPINDLE_CACHE_DIR or HOME); memory cache only");
  }
  {
    Impl* self = &im;
    // No connection yet: the first lookup connects, so a server that is
    // down costs nothing until a kernel is compiled.
    im.remote = rt::makeRemoteCache(im.opts.remoteCache, im.opts.remoteCacheSecrets, im.opts.remoteCacheSecretFile,
                                    [self](const std::string& m) { self->warn(m); });
  }
  if (!im.target.empty()) {
    std::string compilerWhy;
    if (!be.hasCompiler(&compilerWhy) && im.hasDevice) im.deviceStatus += "; no compiler: " + compilerWhy;
    if (im.opts.unsafeFpAtomics) im.extraOptions = be.unsafeFpAtomicsOptions();
    im.compiler = std::make_unique<rt::BinaryCompiler>(be, im.target, im.disk.get(), im.counters, im.extraOptions,
                                                       im.remote.get());
  }

  // 4. Autotuning: the store beside the binary cache (outside its eviction),
  // and the device facts every tuning key holds.
  rt::TuneContext& t = im.tune;
  t.backend = &be;
  t.hasDevice = im.hasDevice;
  t.options = im.opts.tune;
  t.mode =
      rt::tuneModeFromEnv(t.options.mode.value_or(be.kind() == BackendKind::Cpu ? TuneMode::Off : TuneMode::Deferred));
  if (auto ms = rt::envNumber("SPINDLE_TUNE_BUDGET_MS", 1, 3600000, "milliseconds")) t.options.budgetMs = double(*ms);
  {
    Impl* self = &im;
    t.warn = [self](const std::string& m) { self->warn(m); };
  }
  if (im.disk && !im.disk->dir().empty()) t.store = std::make_unique<rt::TuningStore>(im.disk->dir() + "/tune", t.warn);
  if (t.store && im.remote) t.store->setRemote(im.remote.get());  // tuning results shared between machines
  std::string identity, compiler;
  try {
    if (im.hasDevice) identity = be.deviceIdentity(im.opts.device);
    compiler = be.compilerIdentity();
  } catch (const Error&) {  // no compiler or device facts: the key says so
  }
  t.deviceText = fmt::format("spindle {}\nbackend {}\ndevice {}\ntarget {}\ndevice facts {}\ncompiler {}\n",
                             SPINDLE_VERSION, backendName(be.kind()), im.deviceName, im.target, identity, compiler);
}

Runtime::~Runtime() = default;

BackendKind Runtime::backend() const { return impl_->backend->kind(); }
const std::string& Runtime::target() const { return impl_->target; }
int64_t Runtime::warpSize() const { return warpSizeOf(impl_->target); }
std::string Runtime::compilerIdentity() const { return impl_->backend->compilerIdentity(); }
bool Runtime::hasDevice() const { return impl_->hasDevice; }
std::string Runtime::deviceName() const { return impl_->hasDevice ? impl_->deviceName : std::string(); }
std::string Runtime::deviceStatus() const { return impl_->deviceStatus; }
const std::string& Runtime::cacheDir() const {
  static const std::string kNone;
  return impl_->disk && impl_->disk->enabled() ? impl_->disk->dir() : kNone;
}
bool Runtime::diskCacheEnabled() const { return impl_->disk && impl_->disk->enabled(); }
std::string Runtime::remoteCache() const {
  return impl_->remote && !impl_->remote->off() ? impl_->remote->describe() : std::string();
}

CacheStats Runtime::stats() const {
  const rt::Counters& c = impl_->counters;
  CacheStats s;
  s.memoryHits = c.memoryHits;
  s.diskHits = c.diskHits;
  s.misses = c.misses;
  s.compiles = c.compiles;
  s.compileFailures = c.compileFailures;
  s.compileSeconds = double(c.compileNanos.load()) * 1e-9;
  s.tensorMapFallbacks = c.tensorMapFallbacks;
  if (impl_->disk) {
    s.corruptEntries = impl_->disk->corruptEntries();
    s.diskWriteFailures = impl_->disk->writeFailures();
  }
  if (impl_->remote) {
    const rt::RemoteCounters& r = impl_->remote->counters(rt::RemoteNamespace::Binary);
    s.remoteHits = r.hits;
    s.remoteMisses = r.misses;
    s.remoteRejects = r.rejects;
    s.remoteStores = r.stores;
    s.remoteErrors = r.errors;
  }
  s.tunings = impl_->tune.tunings;
  s.tuningLaunches = impl_->tune.tuningLaunches;
  s.tuneStoreHits = impl_->tune.storeHits;
  return s;
}

size_t Runtime::exportTuning(const std::string& path) const {
  if (!impl_->tune.store) throw Error("spindle: no tuning results to export: the disk cache is off");
  size_t n = 0;
  std::string json = rt::exportTuningJson(*impl_->tune.store, &n);
  std::ofstream out(path, std::ios::binary);
  out << json;
  if (!out.flush()) throw Error(fmt::format("spindle: cannot write {}", path));
  return n;
}

size_t Runtime::importTuning(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("spindle: cannot read {}", path));
  std::stringstream text;
  text << in.rdbuf();
  if (!impl_->tune.store) throw Error("spindle: cannot import tuning results: the disk cache is off");
  try {
    return rt::importTuningJson(*impl_->tune.store, text.str());
  } catch (const Error& e) {
    throw Error(fmt::format("spindle: {}: {}", path, e.what()));
  }
}

void Runtime::resetStats() {
  rt::Counters& c = impl_->counters;
  c.memoryHits = c.diskHits = c.misses = c.compiles = c.compileFailures = c.compileNanos = 0;
  c.tensorMapFallbacks = 0;
  if (impl_->remote) impl_->remote->resetCounters();
  impl_->tune.tunings = impl_->tune.tuningLaunches = impl_->tune.storeHits = 0;
}

// ---------------------------------------------------------------------------
// Device memory

struct DeviceBuffer::Owner {
  std::shared_ptr<Runtime::Impl> rt;
};

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : owner_(std::move(o.owner_)), ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    DeviceBuffer old(std::move(*this));
    owner_ = std::move(o.owner_);
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (owner_ && ptr_) owner_->rt->backend->release(ptr_);
}

DeviceBuffer Runtime::allocate(size_t bytes) {
  impl_->requireDevice();
  DeviceBuffer b;
  b.ptr_ = impl_->backend->allocate(bytes == 0 ? 1 : bytes);
  b.bytes_ = bytes;
  b.owner_ = std::make_shared<DeviceBuffer::Owner>(DeviceBuffer::Owner{impl_});
  return b;
}

void Runtime::copyToDevice(const DeviceBuffer& dst, const void* src, size_t bytes) {
  impl_->requireDevice();
  if (bytes > dst.size())
    throw Error(fmt::format("spindle: copy of {} bytes into a {}-byte device buffer", bytes, dst.size()));
  impl_->backend->copyToDevice(dst.data(), src, bytes);
}

void Runtime::copyToHost(void* dst, const DeviceBuffer& src, size_t bytes) {
  impl_->requireDevice();
  if (bytes > src.size())
    throw Error(fmt::format("spindle: copy of {} bytes out of a {}-byte device buffer", bytes, src.size()));
  impl_->backend->copyToHost(dst, src.data(), bytes);
}

void Runtime::synchronize(void* stream) {
  impl_->requireDevice();
  impl_->backend->synchronize(stream);
}

float Runtime::timeMs(void* stream, const std::function<void()>& body) {
  impl_->requireDevice();
  // The events must be of the stream's device (several GPUs).
  std::optional<rt::Backend::DeviceScope> scope;
  if (impl_->multiDevice)
    if (int d = impl_->backend->streamDevice(stream); d >= 0 && d != impl_->opts.device)
      scope.emplace(*impl_->backend, d);
  return impl_->backend->timeMs(stream, body);
}

// ---------------------------------------------------------------------------
// Module

struct Module::State {
  std::shared_ptr<Runtime::Impl> rt;
  std::shared_ptr<const CompiledModule> compiled;
};

namespace {
// CompiledModule::load and loadString throw ModuleError with the rendered
// diagnostics, and GeneratorError when the file cannot be read.
template <typename LoadFn>
Module makeModule(std::shared_ptr<Runtime::Impl> rt, const std::string& name, LoadFn load) {
  std::unique_ptr<CompiledModule> m;
  try {
    m = load();
  } catch (const ModuleError& e) {
    throw Error(fmt::format("spindle: module '{}' has errors:\n{}", name, e.what()));
  } catch (const GeneratorError& e) {
    throw Error(fmt::format("spindle: cannot load module '{}': {}", name, e.what()));
  }
  return Module(std::make_shared<Module::State>(Module::State{std::move(rt), std::move(m)}));
}
}  // namespace

Module Runtime::loadModule(const std::string& path) {
  return makeModule(impl_, path, [&] { return CompiledModule::load(path); });
}

Module Runtime::loadModuleFromString(const std::string& name, const std::string& text) {
  return makeModule(impl_, name, [&] { return CompiledModule::loadString(name, text); });
}

const CompiledModule& Module::compiled() const { return *state_->compiled; }

std::vector<std::string> Module::kernelNames() const {
  std::vector<std::string> names;
  for (const auto& k : state_->compiled->kernels()) names.push_back(k.name);
  return names;
}

// ---------------------------------------------------------------------------
// Kernel

namespace {
// One specialization, compiled and (when there is a device) loaded.
struct Loaded {
  std::string symbol;
  std::vector<rt::PackOp> ops;
  // Kept until loaded; with several devices kept for good, for the devices
  // a launch reaches later.
  std::vector<char> binary;
  // What is loaded on each device, by ordinal (one entry per device; one
  // entry in a compile-only runtime). A function handle, its attributes and
  // its occupancy belong to one device.
  struct OnDevice {
    void* function = nullptr;
    // resident_blocks() for the last dynamic shared size asked (< 0: none
    // yet): the driver's occupancy query is not free, and a shape repeats.
    int64_t residentBlocks = -1;
    uint64_t residentSharedBytes = 0;
  };
  std::vector<OnDevice> devices;
  CompileReport report;
};
}  // namespace

struct Kernel::State {
  std::shared_ptr<Module::State> module;
  // The module with KernelOptions::consts (CompiledModule::withConsts);
  // null without them.
  std::shared_ptr<const CompiledModule> withConsts;
  std::map<std::string, ConstOverride> consts;  // KernelOptions::consts, as given
  const KernelInfo* info = nullptr;
  rt::KernelPlan plan;
  std::mutex mu;
  rt::MemoryCache<Loaded> cache;
  // The last geometry and everything it was computed from: every dim, the
  // specialization key (static dims, dtypes, which size dynamic shared
  // memory, and the layout bits) and, for a grid using resident_blocks(),
  // the binary. Repeated launches of one shape skip the generator's
  // geometry evaluation; comparing is allocation-free. The integer scalars
  // @grid and @block use are compared too.
  bool memoValid = false;
  int64_t memoDims[rt::kMaxDimSymbols];
  int64_t memoScalars[rt::kMaxLaunchScalars];
  rt::SpecKey memoKey;
  const Loaded* memoBinary = nullptr;
  int memoDevice = -1;
  LaunchGeometry memoGeometry;
  // @tune: the configs and their choices (null without @tune, or when
  // KernelOptions::consts fixes a tuned const), and the key dims' indices.
  std::shared_ptr<rt::TunedKernel> tune;
  std::vector<int> tuneKeyDims;

  rt::TuneKey tuneKey(const rt::Binding& b) const {
    rt::TuneKey k;
    std::memcpy(k.words, b.key.words, sizeof(int64_t) * size_t(b.key.count));
    k.count = b.key.count;
    // Each config has its own tiles and so its own exact-grid facts (its
    // handle's key has them): the choice among configs is made without.
    if (plan.exactGridWord >= 0) k.words[plan.exactGridWord] = 0;
    for (int d : tuneKeyDims) k.words[k.count++] = rt::bucketOf(b.dims[d], info->tune->bucketBase);
    return k;
  }
  std::function<std::string()> tuneSpecText(const rt::Binding& b) const {
    return [this, &b] {
      Specialization spec = specialization(b);
      spec.exactGridDims.clear();  // per config (tuneKey)
      return compiled().specializationKey(info->name, spec);
    };
  }

  Runtime::Impl& rt() const { return *module->rt; }
  const CompiledModule& compiled() const { return withConsts ? *withConsts : *module->compiled; }

  Specialization specialization(const rt::Binding& b) const {
    Specialization spec;
    for (int s : plan.staticSymbols) spec.staticDims[plan.dimSymbols[size_t(s)]] = b.dims[s];
    for (size_t t = 0; t < plan.typeParams.size(); ++t) spec.typeArgs[plan.typeParams[t]] = b.types[t];
    for (size_t p = 0; p < plan.params.size() && p < 64; ++p) {
      if (b.contiguousStrided & (uint64_t(1) << p)) spec.contiguousTensors.insert(plan.params[p].name);
      if (b.unitStride & (uint64_t(1) << p)) spec.unitStrideTensors.insert(plan.params[p].name);
      if (b.alignedTensors & (uint64_t(1) << p)) spec.alignedTensors.insert(plan.params[p].name);
    }
    for (size_t i = 0; i < plan.divisibilitySlots.size(); ++i)
      if (b.granularity[i]) spec.divisible[plan.divisibilitySlots[i].name] = b.granularity[i];
    for (size_t i = 0; i < plan.exactGridSlots.size(); ++i)
      if (b.exactGrid & (uint64_t(1) << i))
        spec.exactGridDims.insert(plan.dimSymbols[size_t(plan.exactGridSlots[i].dim)]);
    for (size_t p = 0; p < plan.params.size() && p < 64; ++p)
      if (b.absentTensors & (uint64_t(1) << p)) spec.absentTensors.insert(plan.params[p].name);
    spec.lineDirectives = rt().opts.lineDirectives;
    spec.checked = *rt().opts.checked;
    spec.index32 = b.index32;
    return spec;
  }

  // Memory cache, else disk cache or compiler; loaded on `device` when
  // `load`. Caller holds `mu`.
  Loaded& get(const rt::SpecKey& key, const Specialization& spec, bool load, int device) {
    Runtime::Impl& r = rt();
    Loaded* e = cache.find(key);
    if (e) {
      ++r.counters.memoryHits;
      e->report.outcome = CacheOutcome::MemoryHit;
      e->report.compileSeconds = 0;
    } else {
      GeneratedKernel g;
      try {
        g = compiled().generate(info->name, spec);
      } catch (const GeneratorError& err) {
        throw Error(fmt::format("{}: {}", info->name, err.what()));
      }
      auto loaded = std::make_unique<Loaded>();
      loaded->symbol = g.kernelSymbol;
      loaded->ops = rt::makePackOps(plan, g.abi);
      rt::CompiledBinary bin =
          r.binaries().get(g.source, g.pathFreeSource, g.kernelSymbol, info->name + ".hip", info->name);
      CompileReport& report = loaded->report;  // tuneConfig/tuneChoice: the tuned handle's, set by its caller
      report.kernelSymbol = g.kernelSymbol;
      report.target = r.target;
      report.keyHex = bin.keyHex;
      report.outcome = bin.outcome;
      report.binaryBytes = bin.binary.size();
      report.compileSeconds = bin.compileSeconds;
      report.source = std::move(g.source);
      loaded->binary = std::move(bin.binary);
      loaded->devices.resize(size_t(std::max(r.deviceCount, 1)));
      e = cache.insert(key, std::move(loaded));
    }
    if (load && !e->devices[size_t(device)].function) loadOn(*e, spec, device);
    return *e;
  }

  // Loads `e` on `device`: its binary where the device runs the runtime's
  // target, else the binary compiled for the device's own architecture
  // (the source is generated again; its key has that target).
  void loadOn(Loaded& e, const Specialization& spec, int device) {
    Runtime::Impl& r = rt();
    void*& function = e.devices[size_t(device)].function;
    if (!r.multiDevice || r.deviceTargets[size_t(device)] == r.target) {
      function = r.backend->loadFunction(e.binary, e.symbol, device);
      if (!r.multiDevice) std::vector<char>().swap(e.binary);  // one device: never loaded again
      return;
    }
    GeneratedKernel g;
    try {
      g = compiled().generate(info->name, spec);
    } catch (const GeneratorError& err) {
      throw Error(fmt::format("{}: {}", info->name, err.what()));
    }
    rt::CompiledBinary bin = r.compilerFor(r.deviceTargets[size_t(device)])
                                 .get(g.source, g.pathFreeSource, g.kernelSymbol, info->name + ".hip", info->name);
    function = r.backend->loadFunction(bin.binary, e.symbol, device);
  }

  // `loaded` is the binary the launch uses on `device`; a grid that uses
  // resident_blocks() needs it (its registers and the device set the
  // occupancy), other grids ignore both.
  LaunchGeometry geometry(const rt::Binding& b, Loaded* loaded, int device) {
    if (!info->gridUsesResidentBlocks) loaded = nullptr;
    if (!loaded) device = -1;
    size_t n = plan.dimSymbols.size(), scalars = plan.launchScalars.size();
    if (memoValid && memoBinary == loaded && memoDevice == device && memoKey == b.key &&
        std::memcmp(memoDims, b.dims, n * sizeof(int64_t)) == 0 &&
        std::memcmp(memoScalars, b.launchScalars, scalars * sizeof(int64_t)) == 0)
      return memoGeometry;
    ResidentBlocksQuery residentBlocks;
    if (loaded) {
      Loaded::OnDevice* on = &loaded->devices[size_t(device)];
      residentBlocks = [this, on, device](int64_t threads, uint64_t sharedBytes) {
        if (on->residentBlocks < 0 || on->residentSharedBytes != sharedBytes) {
          on->residentBlocks = rt().backend->residentBlocks(on->function, threads, sharedBytes, device);
          on->residentSharedBytes = sharedBytes;
        }
        // Zero when the block cannot run at all; the launch then reports why.
        return std::max<int64_t>(on->residentBlocks, 1);
      };
    }
    LaunchGeometry g;
    try {
      g = compiled().launchGeometry(info->name, specialization(b), rt::launchValueMap(plan, b), residentBlocks,
                                    warpSizeOf(rt().target));
    } catch (const GeneratorError& err) {
      throw Error(fmt::format("{}: {}", info->name, err.what()));
    }
    rt::checkGeometry(plan, b, g);
    std::memcpy(memoDims, b.dims, n * sizeof(int64_t));
    std::memcpy(memoScalars, b.launchScalars, scalars * sizeof(int64_t));
    memoKey = b.key;
    memoBinary = loaded;
    memoDevice = device;
    memoGeometry = g;
    memoValid = true;
    return g;
  }
};

Kernel Module::kernel(const std::string& name, const KernelOptions& options) const {
  std::shared_ptr<const CompiledModule> withConsts;
  if (!options.consts.empty()) {
    try {
      withConsts = state_->compiled->withConsts(options.consts);
    } catch (const GeneratorError& e) {
      throw Error(fmt::format("spindle: module '{}': {}", state_->compiled->path(), e.what()));
    }
  }
  const KernelInfo* info = (withConsts ? *withConsts : *state_->compiled).findKernel(name);
  if (!info) {
    std::string names;
    for (const auto& k : state_->compiled->kernels()) names += (names.empty() ? "" : ", ") + k.name;
    throw Error(fmt::format("spindle: module '{}' has no kernel '{}' (it has: {})", state_->compiled->path(), name,
                            names.empty() ? "none" : names));
  }
  auto s = std::make_shared<Kernel::State>();
  s->module = state_;
  s->withConsts = std::move(withConsts);
  s->consts = options.consts;
  s->info = info;
  s->plan = rt::KernelPlan::make(*info, options.staticDims);
  s->plan.index32 = state_->rt->opts.index32;
  bool constsFixTune = false;
  if (info->tune)
    for (const auto& c : info->tune->consts) constsFixTune |= options.consts.count(c) > 0;
  if (info->tune && !constsFixTune) {
    // Config i is this kernel with the config's consts added to the caller's.
    std::shared_ptr<Module::State> module = state_;
    const TuneInfo tune = *info->tune;
    auto makeConfig = [module, name, options, tune](size_t i) {
      KernelOptions o = options;
      for (auto& [c, v] : rt::configConsts(tune, i)) o.consts[c] = v;
      return Module(module).kernel(name, o);
    };
    s->tune = std::make_shared<rt::TunedKernel>(state_->rt->tune, *info, makeConfig);
    for (const auto& d : tune.keyDims)
      s->tuneKeyDims.push_back(
          int(std::find(s->plan.dimSymbols.begin(), s->plan.dimSymbols.end(), d) - s->plan.dimSymbols.begin()));
  }
  return Kernel(std::move(s));
}

const KernelInfo& Kernel::info() const { return *state_->info; }
const std::string& Kernel::name() const { return state_->info->name; }

std::vector<std::string> Kernel::staticDims() const {
  std::vector<std::string> out;
  for (int s : state_->plan.staticSymbols) out.push_back(state_->plan.dimSymbols[size_t(s)]);
  return out;
}

LaunchPlan Kernel::bind(const Arg* args, size_t count) const {
  State& s = *state_;
  rt::Binding b;
  rt::bindArguments(s.plan, args, count, b);
  if (s.tune) {  // the plan of the config a launch would use now (stored, else the default)
    std::string how;
    size_t c = s.tune->choose(
        nullptr, args, count, s.tuneKey(b), s.tuneSpecText(b), [] { return false; }, false, &how);
    return s.tune->config(c).bind(args, count);
  }
  LaunchPlan p;
  p.dims = rt::dimMap(s.plan, b);
  Specialization spec = s.specialization(b);
  p.staticDims = spec.staticDims;
  p.typeArgs = spec.typeArgs;
  std::lock_guard<std::mutex> lock(s.mu);
  // A grid that uses resident_blocks() depends on the loaded binary: with a
  // device, get it (compiling if needed); without one it cannot be known,
  // and launchGeometry says so.
  Loaded* loaded = nullptr;
  // The runtime's device stands for every device here (bind does not ask
  // where the tensors are).
  int device = s.rt().opts.device;
  if (s.info->gridUsesResidentBlocks && s.rt().hasDevice) loaded = &s.get(b.key, spec, /*load=*/true, device);
  p.geometry = s.geometry(b, loaded, device);
  return p;
}

void Kernel::launch(void* stream, const Arg* args, size_t count) const {
  State& s = *state_;
  Runtime::Impl& r = s.rt();
  rt::Binding b;
  rt::bindArguments(s.plan, args, count, b);
  r.requireDevice();
  // One device: a launch asks nothing of its arguments or the driver here.
  int device = r.opts.device;
  if (r.multiDevice) device = r.launchDevice(s.plan, args, count, stream);
  if (s.tune) {  // a config's own handle launches (memory-cache hit path and capture rules included)
    // Tuning's scratch, flush buffer and timing go to the launch's device.
    std::optional<rt::Backend::DeviceScope> scope;
    if (device != r.opts.device) scope.emplace(*r.backend, device);
    auto capturing = [&] { return r.backend->captureStatus(stream, device) != rt::CaptureStatus::None; };
    size_t c = s.tune->choose(stream, args, count, s.tuneKey(b), s.tuneSpecText(b), capturing, true, nullptr);
    s.tune->config(c).launch(stream, args, count);
    return;
  }
  void* function;
  const std::vector<rt::PackOp>* ops;
  LaunchGeometry g;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    Loaded* e = s.cache.find(b.key);
    if (e && e->devices[size_t(device)].function) {
      ++r.counters.memoryHits;  // the hit path: no generator, no hashing of source, no allocation
    } else {
      // A miss compiles or loads a module: never inside graph capture
      // (stream_capture.h). Asked only here, so hits pay nothing for it.
      Specialization spec = s.specialization(b);
      std::string refusal = rt::captureRefusal(r.backend->captureStatus(stream, device), false, s.info->name, spec);
      if (!refusal.empty()) throw Error(refusal);
      e = &s.get(b.key, spec, /*load=*/true, device);
    }
    function = e->devices[size_t(device)].function;
    ops = &e->ops;
    g = s.geometry(b, e, device);
  }
  rt::PackedArgs packed;
  rt::packArguments(*ops, args, b, packed, r.backend.get(), device);
  if (packed.mapsNotMade) r.counters.tensorMapFallbacks += uint64_t(packed.mapsNotMade);
  r.backend->launch(function, g, stream, packed.pointers, device);
}

CompileReport Kernel::compileFor(const Arg* args, size_t count) const {
  State& s = *state_;
  rt::Binding b;
  rt::bindArguments(s.plan, args, count, b);
  if (s.tune) {  // the config a launch would use now: stored, else the default
    std::string how;
    size_t c = s.tune->choose(
        nullptr, args, count, s.tuneKey(b), s.tuneSpecText(b), [] { return false; }, false, &how);
    CompileReport report = s.tune->config(c).compileFor(args, count);
    report.tuneConfig = rt::configText(*s.info->tune, c);
    report.tuneChoice = how;
    return report;
  }
  std::lock_guard<std::mutex> lock(s.mu);
  // With a device the binary is loaded too: a later launch (one inside graph
  // capture, say) then needs neither the compiler nor the module loader.
  return s.get(b.key, s.specialization(b), /*load=*/s.rt().hasDevice, s.rt().opts.device).report;
}

CompileReport Kernel::compile(const std::map<std::string, int64_t>& staticValues,
                              const std::map<std::string, ScalarType>& typeArgs) const {
  Specialization spec;
  spec.staticDims = staticValues;
  spec.typeArgs = typeArgs;
  return compile(spec);
}

namespace {
// The binding compile(spec) and source(spec) use: `spec` checked against the
// kernel, its static values, dtypes and layout facts as bindArguments would
// have found them.
rt::Binding bindSpecialization(const Kernel::State& s, const Specialization& spec) {
  const rt::KernelPlan& plan = s.plan;
  // A kernel handle's consts are fixed when it is made; the binary must be
  // the one its launches use.
  if (!spec.consts.empty() && spec.consts != s.consts)
    throw Error(
        fmt::format("{}: a kernel's consts are fixed when it is made (KernelOptions::consts); make a "
                    "kernel with these",
                    plan.kernel));
  rt::Binding b;
  for (const auto& [sym, value] : spec.staticDims) {
    auto it = std::find(plan.dimSymbols.begin(), plan.dimSymbols.end(), sym);
    if (it == plan.dimSymbols.end())
      throw Error(fmt::format("{}: no dim symbol '{}' (static values were given for it)", plan.kernel, sym));
    if (!plan.isStatic[size_t(it - plan.dimSymbols.begin())])
      throw Error(fmt::format("{}: dim '{}' is dynamic; mark it static (KernelOptions::staticDims) to give it a value",
                              plan.kernel, sym));
    if (value <= 0)
      throw Error(fmt::format("{}: static dim {} = {}: sizes must be at least 1", plan.kernel, sym, value));
    b.dims[it - plan.dimSymbols.begin()] = value;
  }
  for (int sIdx : plan.staticSymbols)
    if (!spec.staticDims.count(plan.dimSymbols[size_t(sIdx)]))
      throw Error(fmt::format("{}: static dim {} needs a value (--static {}=VALUE)", plan.kernel,
                              plan.dimSymbols[size_t(sIdx)], plan.dimSymbols[size_t(sIdx)]));
  for (const auto& [t, type] : spec.typeArgs)
    if (std::find(plan.typeParams.begin(), plan.typeParams.end(), t) == plan.typeParams.end())
      throw Error(fmt::format("{}: no type parameter '{}'", plan.kernel, t));
  for (size_t t = 0; t < plan.typeParams.size(); ++t) {
    auto it = spec.typeArgs.find(plan.typeParams[t]);
    if (it == spec.typeArgs.end())
      throw Error(fmt::format("{}: type parameter {} needs a dtype (--dtype {}=TYPE)", plan.kernel, plan.typeParams[t],
                              plan.typeParams[t]));
    b.types[t] = it->second;
  }
  // The layout facts, as bindArguments would have found them.
  auto paramIndex = [&](const std::string& name, auto qualifies, const char* what) {
    for (size_t p = 0; p < plan.params.size() && p < 64; ++p)
      if (plan.params[p].name == name && qualifies(plan.params[p])) return p;
    throw Error(fmt::format("{}: no {} named '{}'", plan.kernel, what, name));
  };
  for (const auto& name : spec.contiguousTensors)
    b.contiguousStrided |= uint64_t(1) << paramIndex(
                               name, [](const rt::ParamPlan& p) { return p.strided; }, "strided tensor parameter");
  for (const auto& name : spec.unitStrideTensors)
    b.unitStride |= uint64_t(1) << paramIndex(
                        name, [](const rt::ParamPlan& p) { return p.strided; }, "strided tensor parameter");
  for (const auto& name : spec.alignedTensors)
    b.alignedTensors |=
        uint64_t(1) << paramIndex(
            name, [](const rt::ParamPlan& p) { return p.accessedInRuns; }, "tensor parameter indexed in runs");
  for (const auto& [name, granularity] : spec.divisible) {
    auto it = std::find_if(plan.divisibilitySlots.begin(), plan.divisibilitySlots.end(),
                           [&](const auto& slot) { return slot.name == name; });
    if (it == plan.divisibilitySlots.end())
      throw Error(fmt::format(
          "{}: '{}' is not a dynamic dim, row stride or dim expression that places rows of a tensor indexed in runs",
          plan.kernel, name));
    if (!isDivisibilityGranularity(granularity))
      throw Error(
          fmt::format("{}: --divisible {}={}: the granularity must be 2, 4, 8 or 16", plan.kernel, name, granularity));
    b.granularity[it - plan.divisibilitySlots.begin()] = uint8_t(granularity);
  }
  for (const auto& name : spec.exactGridDims) {
    auto it = std::find_if(plan.exactGridSlots.begin(), plan.exactGridSlots.end(),
                           [&](const auto& slot) { return plan.dimSymbols[size_t(slot.dim)] == name; });
    if (it == plan.exactGridSlots.end()) {
      std::string names;
      for (const auto& slot : plan.exactGridSlots)
        names +=
            fmt::format("{}{} (tiles of {})", names.empty() ? "" : ", ", plan.dimSymbols[size_t(slot.dim)], slot.tile);
      throw Error(
          fmt::format("{}: --exact-grid {}: no @grid axis covers dynamic dim '{}' as cdiv({}, T) (such dims: {})",
                      plan.kernel, name, name, name, names.empty() ? "none" : names));
    }
    b.exactGrid |= uint64_t(1) << (it - plan.exactGridSlots.begin());
  }
  for (const auto& name : spec.absentTensors)
    b.absentTensors |= uint64_t(1) << paramIndex(
                           name, [](const rt::ParamPlan& p) { return p.optional; }, "optional tensor parameter");
  b.index32 = spec.index32;
  rt::makeSpecKey(plan, b);
  return b;
}

std::string generateSource(const Kernel::State& s, const rt::Binding& b) {
  try {
    return s.compiled().generate(s.info->name, s.specialization(b)).source;
  } catch (const GeneratorError& err) {
    throw Error(fmt::format("{}: {}", s.info->name, err.what()));
  }
}
}  // namespace

CompileReport Kernel::compile(const Specialization& spec) const {
  State& s = *state_;
  rt::Binding b = bindSpecialization(s, spec);
  std::lock_guard<std::mutex> lock(s.mu);
  return s.get(b.key, s.specialization(b), /*load=*/s.rt().hasDevice, s.rt().opts.device).report;  // as compileFor
}

std::string Kernel::source(const Specialization& spec) const {
  return generateSource(*state_, bindSpecialization(*state_, spec));
}

TuneReport Kernel::tune(void* stream, const Arg* args, size_t count, bool retune) const {
  State& s = *state_;
  if (!s.info->tune) throw Error(fmt::format("{}: has no @tune, nothing to tune (docs/language.md 9.6)", s.info->name));
  if (!s.tune)
    throw Error(
        fmt::format("{}: this handle fixes a tuned const (KernelOptions::consts); nothing to tune", s.info->name));
  rt::Binding b;
  rt::bindArguments(s.plan, args, count, b);
  Runtime::Impl& r = s.rt();
  r.requireDevice();
  // With several devices: tuned on the tensors' device (scratch, timing).
  std::optional<rt::Backend::DeviceScope> scope;
  if (r.multiDevice)
    if (int device = r.launchDevice(s.plan, args, count, stream); device != r.opts.device)
      scope.emplace(*r.backend, device);
  return s.tune->tune(stream, args, count, s.tuneKey(b), s.tuneSpecText(b), retune);
}

std::string Kernel::sourceFor(const Arg* args, size_t count) const {
  State& s = *state_;
  rt::Binding b;
  rt::bindArguments(s.plan, args, count, b);
  if (s.tune) {  // the config a launch would use now (as compileFor): stored, else the default
    size_t c = s.tune->choose(
        nullptr, args, count, s.tuneKey(b), s.tuneSpecText(b), [] { return false; }, false, nullptr);
    return s.tune->config(c).sourceFor(args, count);
  }
  return generateSource(s, b);
}

}  // namespace spindle
