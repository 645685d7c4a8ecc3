// The Spindle runtime: load a .spn module, bind a kernel's type parameters
// and dim symbols from the launch arguments, compile the specialized HIP
// source at run time (hiprtc on AMD, nvrtc + the CUDA driver API on NVIDIA)
// and cache the binary by specialization, in memory and on disk.
//
//   spindle::Runtime rt;                                  // backend and device from what is present
//   auto mod = rt.loadModule("softmax.spn");
//   auto k = mod.kernel("softmax");
//   k.launch(stream, {spindle::tensor(x, spindle::ScalarType::F32, {M, N}),
//                     spindle::tensor(y, spindle::ScalarType::F32, {M, N}),
//                     spindle::scalar(0.5f)});
//
// Every launch is bound and validated first (arity, dtypes, ranks, repeated
// dim symbols, contiguity, null pointers, launch limits); a mismatch throws
// spindle::Error naming the kernel, the parameter, the dimension and the
// values. See docs/runtime.md.
#pragma once

#include <spindle/generator.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace spindle {

// Every failure of the runtime: a bad launch, a compile error (with the
// compiler's log), a missing backend or device, a bad module.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Cpu: the cpu target (docs/runtime.md): kernels run on the host with GPU
// semantics, compiled by a host C++ compiler; only when asked for.
enum class BackendKind { Auto, Hip, Cuda, Cpu };
const char* backendName(BackendKind kind);  // "auto", "hip", "cuda", "cpu"

// The language's rank limit (docs/language.md, 4.3).
inline constexpr int kMaxRank = 8;

// One launch argument: a device tensor or a scalar. Plain data, no
// allocation; build it with spindle::tensor() and spindle::scalar().
struct Arg {
  // None: no tensor, for an optional parameter (`T[N] | None`); spindle::none().
  enum class Kind : uint8_t { Tensor, Scalar, None };
  Kind kind = Kind::Scalar;
  ScalarType dtype = ScalarType::Invalid;
  // Tensor: device pointer, rank, shape and (optionally) strides in elements.
  const void* data = nullptr;
  int rank = 0;  // as given; more than kMaxRank is reported at bind time
  bool hasStrides = false;
  // The device ordinal the tensor lives on, where the caller knows it (the
  // Python package sets it from torch and DLPack). -1: unknown; on a machine
  // with more than one device the runtime then asks the driver
  // (docs/runtime.md, "Several GPUs"). Fits the padding: Arg keeps its size.
  int16_t device = -1;
  int64_t shape[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
  // Scalar: the value's bytes in `dtype`, little-endian in the low bytes.
  uint64_t bits = 0;
};

Arg tensor(const void* data, ScalarType dtype, std::initializer_list<int64_t> shape);
Arg tensor(const void* data, ScalarType dtype, std::initializer_list<int64_t> shape,
           std::initializer_list<int64_t> strides);
Arg tensor(const void* data, ScalarType dtype, const int64_t* shape, int rank, const int64_t* strides = nullptr);

// No tensor, for an optional tensor parameter (declared `T[...] | None`): the
// specialization without it runs, and its pointer is null. A null pointer in
// spindle::tensor() stays an error: absence is said, not implied.
Arg none();

Arg scalar(float v);
Arg scalar(double v);
Arg scalar(bool v);
Arg scalar(int32_t v);
Arg scalar(int64_t v);
Arg scalar(uint32_t v);
Arg scalar(uint64_t v);
// `v` converted to `type` (f16/bf16 round to nearest even); Error when it does
// not fit an integer type exactly.
Arg scalar(ScalarType type, double v);

// Autotuning of kernels with @tune (docs/runtime.md, "Autotuning").
//   Deferred: a key bucket with no stored choice runs the default config
//     (the first) on its first launch and is tuned at its second, so code
//     that launches a shape once never pays for tuning; launches after the
//     switch may differ from the first in low bits (another reduction order).
//   Blocking: tuned before the first launch; every launch uses the tuned config.
//   Off: always the default config (SPINDLE_TUNE=0).
enum class TuneMode { Deferred, Blocking, Off };

struct TuneOptions {
  // Unset: Deferred on GPUs, Off on the cpu target (host timings say
  // nothing about a GPU's choice; tests of the mechanics set it).
  // SPINDLE_TUNE overrides: 0 (Off), 1 (this value), blocking, deferred.
  std::optional<TuneMode> mode;
  // Wall-clock budget for warm-up and timing of one tuning; after it the
  // best so far wins (SPINDLE_TUNE_BUDGET_MS overrides). Compiling the
  // configs comes before it and is not counted.
  double budgetMs = 1000;
  // Scratch copies of written tensors above this many bytes: the tensors
  // are saved to host memory and restored instead.
  uint64_t scratchMaxBytes = UINT64_MAX;
  // How long a process waits for another that is tuning the same key
  // before it uses the default config for the rest of its run.
  double waitMs = 30000;
};

struct RuntimeOptions {
  // Auto: SPINDLE_BACKEND (hip|cuda|cpu) if set, else from `target`, else
  // the first GPU backend with a device, else the first with a compiler
  // (never the cpu target: it is used only when asked for).
  BackendKind backend = BackendKind::Auto;
  // Compile for this target ("sm_90", "gfx90a", "gfx942:sramecc+:xnack-";
  // "cpu" or "cpu:warp32", "cpu:warp64" for the cpu target's warp width).
  // Empty: the device's own. With a target and no device the runtime is
  // compile-only: compile() works, launch() throws.
  std::string target;
  // The runtime's device: its target, allocate() and the copies. With
  // several CUDA devices a launch runs on its tensors' device, any of them
  // (docs/runtime.md, "Several GPUs").
  int device = 0;
  // Empty: SPINDLE_CACHE_DIR, else $XDG_CACHE_HOME/spindle, else ~/.cache/spindle.
  std::string cacheDir;
  // False, or SPINDLE_DISABLE_DISK_CACHE=1: memory cache only.
  bool diskCache = true;
  // LRU bound on the cache directory (SPINDLE_CACHE_MAX_BYTES overrides).
  uint64_t cacheMaxBytes = uint64_t(1) << 30;
  // #line directives to the .spn in generated sources (compile errors point there).
  bool lineDirectives = true;
  // Checked builds (docs/language.md 5.12): `assert` statements compiled in
  // and every element access bounds-checked; a failure names the .spn
  // location, block and thread, and the launch fails. Unset: SPINDLE_CHECKED
  // (1 or 0) if set, else on for the cpu target and off on GPUs. Checked
  // binaries have keys of their own.
  std::optional<bool> checked;
  // 32-bit index arithmetic (Specialization::index32) for every launch whose
  // dims, strides and tensor extents are all below 2^31, the common case;
  // larger launches get the 64-bit form. False, or SPINDLE_INDEX32=0: always
  // 64-bit. Part of the key (a launch's bit is checked like its alignment).
  bool index32 = true;
  // AMD: compile with -munsafe-fp-atomics (SPINDLE_UNSAFE_FP_ATOMICS=1 too),
  // so f32 atomic_add and f16 (gfx90a, gfx94x) / bf16 (gfx94x) atomic_add on
  // global memory use the hardware's float atomics instead of a
  // compare-and-swap loop. Those may be lost on fine-grained (host-coherent)
  // memory: opt in only when no tensor lives there (docs/language.md 8.5).
  // Part of the cache key. NVIDIA ignores it: its native atomics are safe.
  bool unsafeFpAtomics = false;
  // A second-level cache behind the disk cache, shared by machines through
  // Redis (docs/runtime.md, "Remote cache"): "redis://[user:password@]host:port/db"
  // or "unix:///path/redis.sock". Empty: SPINDLE_CACHE_REDIS; neither: off.
  // Entries are authenticated with a shared secret; without one the remote
  // cache stays off and says why.
  std::string remoteCache;
  // The secret (at least 16 bytes), then the previous one during a rotation.
  // Empty: remoteCacheSecretFile, else SPINDLE_CACHE_SECRET
  // (+ SPINDLE_CACHE_SECRET_PREVIOUS), else SPINDLE_CACHE_SECRET_FILE.
  std::vector<std::string> remoteCacheSecrets;
  // A file holding the secret (line 1) and the previous one (line 2); it must
  // be this user's and private (chmod 600).
  std::string remoteCacheSecretFile;
  // Where warnings go (a read-only cache directory, ...). Default: stderr.
  std::function<void(const std::string&)> warn;
  TuneOptions tune;
};

struct CacheStats {
  uint64_t memoryHits = 0;  // launches/compiles served by the in-memory cache
  uint64_t diskHits = 0;    // binaries read back from the disk cache
  uint64_t misses = 0;      // neither cache had it
  uint64_t compiles = 0;    // compiler invocations (successful or not)
  uint64_t compileFailures = 0;
  double compileSeconds = 0;       // total time inside the compiler
  uint64_t corruptEntries = 0;     // disk entries rejected (bad magic, checksum, size, key)
  uint64_t diskWriteFailures = 0;  // entries that could not be published
  // The remote cache (RuntimeOptions::remoteCache), binaries only.
  uint64_t remoteHits = 0;      // binaries read back from Redis (and copied to the disk cache)
  uint64_t remoteMisses = 0;    // the server had no entry
  uint64_t remoteRejects = 0;   // entries refused: failed authentication, checksum, malformed, too large
  uint64_t remoteStores = 0;    // binaries published to Redis
  uint64_t remoteErrors = 0;    // lookups or stores that found the server unreachable, slow or refusing
  uint64_t tunings = 0;         // key buckets this process tuned (timed configs for)
  uint64_t tuningLaunches = 0;  // launches made to time configs (warm-up included)
  uint64_t tuneStoreHits = 0;   // choices read back from the tuning store
  // copy_tile tensor maps a launch could not make (the tensor not readable
  // by TMA as the map says, a driver without cuTensorMapEncodeTiled, or
  // its refusal; always on the cpu target and AMD): those copies took the
  // element path, right and far slower (docs/language.md 8.14).
  uint64_t tensorMapFallbacks = 0;
};

enum class CacheOutcome { MemoryHit, DiskHit, Miss, RemoteHit };
const char* cacheOutcomeName(CacheOutcome o);  // "hit (memory)", "hit (disk)", "hit (remote)", "miss"

// What one compile produced (Kernel::compile).
struct CompileReport {
  std::string kernelSymbol;
  std::string target;
  std::string keyHex;  // the disk cache key: SHA-256, 64 hex digits
  CacheOutcome outcome = CacheOutcome::Miss;
  size_t binaryBytes = 0;
  double compileSeconds = 0;  // 0 unless this call compiled
  std::string source;         // the specialized HIP source
  // A kernel with @tune: the config this binary is ("BLOCK=256 VEC=8") and
  // how it was picked (tuneChoice: "tuned" in this process, "stored" in
  // the tuning store, "default"); both empty without @tune.
  std::string tuneConfig;
  std::string tuneChoice;
};

// What one tuning found (Kernel::tune), per config in @tune's order.
struct TuneReport {
  std::string kernel;
  std::string keyHex;  // the tuning store's key
  std::string bucket;  // the key dims' buckets: "N=1024"; "" without key dims
  std::vector<std::string> configs;
  std::vector<double> medianMs;       // negative: skipped (see failures), or not timed (stored)
  std::vector<std::string> failures;  // why a config was skipped; empty when it ran
  int chosen = 0;
  bool stored = false;  // read back from the store: nothing was timed
  int rounds = 0;
  bool budgetExhausted = false;
  double timingMs = 0;  // wall time of warm-up and timing
};

// A checked binding (Kernel::bind): what a launch with these arguments would
// use. Nothing has been compiled or launched.
struct LaunchPlan {
  std::map<std::string, int64_t> dims;        // every dim symbol
  std::map<std::string, int64_t> staticDims;  // those baked into the binary
  std::map<std::string, ScalarType> typeArgs;
  LaunchGeometry geometry;
};

class Runtime;

class Kernel {
 public:
  const KernelInfo& info() const;
  const std::string& name() const;
  // Dim symbols specialized into the binary: @static plus the caller's.
  std::vector<std::string> staticDims() const;

  // Bind and validate only (no device, no compiler needed).
  LaunchPlan bind(std::initializer_list<Arg> args) const { return bind(args.begin(), args.size()); }
  LaunchPlan bind(const Arg* args, size_t count) const;

  // Bind, validate, get the binary (memory cache, disk cache, compiler) and
  // launch on `stream` (hipStream_t / CUstream; nullptr: the default stream).
  // On a machine with several CUDA devices the launch runs on the device its
  // tensors live on (Arg::device, else the driver's answer for the
  // pointers); tensors on two devices, or a stream of another device, throw
  // spindle::Error before anything is launched. The thread's current
  // context is restored afterwards (docs/runtime.md, "Several GPUs").
  // Inside graph (stream) capture only a binary already loaded is used: a
  // launch that would compile or load one throws spindle::Error naming the
  // kernel and the specialization, before any driver call, so the capture
  // stays valid. Warm the cache first (a launch, compileFor, compile).
  void launch(void* stream, std::initializer_list<Arg> args) const { launch(stream, args.begin(), args.size()); }
  void launch(void* stream, const Arg* args, size_t count) const;

  // Compile the binary a launch with these arguments would use (their
  // static dims, dtypes and layout: contiguous views, 16-byte alignment,
  // dims divisible by 16) without launching; works compile-only. With a
  // device the binary is loaded too, so a later launch (one inside graph
  // capture, say) needs neither compiler nor loader. Pointers are checked
  // (null, overlap, alignment), never dereferenced.
  CompileReport compileFor(std::initializer_list<Arg> args) const { return compileFor(args.begin(), args.size()); }
  CompileReport compileFor(const Arg* args, size_t count) const;

  // Compile one specialization for the runtime's target without launching
  // (works compile-only). `spec.staticDims` must give every static dim; its
  // layout sets name what the arguments would be (a strided parameter passed
  // contiguous, a tensor indexed in runs 16-byte aligned, a row dim divisible
  // by 16) and are checked against the kernel. `spec.lineDirectives` is the
  // runtime's option and is ignored here. Loads the binary with a device,
  // as compileFor does.
  CompileReport compile(const Specialization& spec) const;
  // The same with no layout facts: the general binary.
  CompileReport compile(const std::map<std::string, int64_t>& staticValues,
                        const std::map<std::string, ScalarType>& typeArgs) const;

  // The specialized HIP source that compile(spec) and compileFor(args) would
  // compile, checked the same way, generated without compiling: no compiler,
  // device or cache needed (the Python package's `source()`).
  std::string source(const Specialization& spec) const;
  std::string sourceFor(const Arg* args, size_t count) const;

  // A kernel with @tune: tunes the key bucket these arguments fall in now
  // (launching on `stream`, on scratch copies of the tensors it writes) and
  // stores the choice, unless one is stored already and `retune` is false.
  // Error for a kernel without @tune.
  TuneReport tune(void* stream, std::initializer_list<Arg> args, bool retune = false) const {
    return tune(stream, args.begin(), args.size(), retune);
  }
  TuneReport tune(void* stream, const Arg* args, size_t count, bool retune = false) const;

  struct State;
  explicit Kernel(std::shared_ptr<State> state) : state_(std::move(state)) {}

 private:
  std::shared_ptr<State> state_;
};

struct KernelOptions {
  std::vector<std::string> staticDims;  // dim symbols to specialize in addition to @static
  // Module consts given other values for this kernel handle (`--const`):
  // every binary it compiles uses them, and they are part of its keys.
  std::map<std::string, ConstOverride> consts = {};
};

class Module {
 public:
  const CompiledModule& compiled() const;
  std::vector<std::string> kernelNames() const;
  // Error when there is no such kernel or an option names an unknown dim.
  Kernel kernel(const std::string& name, const KernelOptions& options = {}) const;

  struct State;
  explicit Module(std::shared_ptr<State> state) : state_(std::move(state)) {}

 private:
  std::shared_ptr<State> state_;
};

// Device memory owned by the runtime's device (for apps and the CLI that do
// not link HIP or CUDA themselves).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();
  void* data() const { return ptr_; }
  size_t size() const { return bytes_; }

 private:
  friend class Runtime;
  struct Owner;
  std::shared_ptr<Owner> owner_;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

class Runtime {
 public:
  // Error when no backend can be used at all (neither compiler nor device).
  explicit Runtime(RuntimeOptions options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  BackendKind backend() const;
  const std::string& target() const;     // what binaries are compiled for
  int64_t warpSize() const;              // warp_size() on target(): 32 or 64 (cpu: the warp width it emulates)
  std::string compilerIdentity() const;  // "nvrtc 13.0", "hiprtc 5.2 (HIP 50221153)"
  bool hasDevice() const;                // false: compile-only
  std::string deviceName() const;        // "" without a device
  std::string deviceStatus() const;      // why there is no device, or the device
  const std::string& cacheDir() const;   // "" when the disk cache is off
  bool diskCacheEnabled() const;         // false after a failed write too
  // The remote cache's server ("redis://host:6379/0", no password), or ""
  // when there is none (not asked for, or off: the warning said why).
  std::string remoteCache() const;

  // Errors in the .spn come back as spindle::Error carrying the diagnostics.
  Module loadModule(const std::string& path);
  Module loadModuleFromString(const std::string& name, const std::string& text);

  CacheStats stats() const;
  void resetStats();

  // Device helpers (Error in compile-only mode), on the runtime's device.
  DeviceBuffer allocate(size_t bytes);
  void copyToDevice(const DeviceBuffer& dst, const void* src, size_t bytes);
  void copyToHost(void* dst, const DeviceBuffer& src, size_t bytes);
  void synchronize(void* stream = nullptr);
  // Milliseconds `body` takes on `stream`, measured with device events (of
  // the stream's device, with several GPUs).
  float timeMs(void* stream, const std::function<void()>& body);

  // Tuning results (docs/runtime.md, "Autotuning"): every stored choice
  // written to a JSON file, and read back into this runtime's store, so an
  // application can ship them. Both return the number of entries; Error
  // when the file cannot be written or read, or is not such a file.
  size_t exportTuning(const std::string& path) const;
  size_t importTuning(const std::string& path);

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace spindle
