// What the runtime needs from a GPU toolchain: a run-time compiler (source to
// binary for an exact target) and, when a device is present, a driver
// (load a binary, launch, memory). Two implementations: backend_hip.cpp
// (hiprtc + HIP module API) and backend_cuda.cpp (nvrtc + CUDA driver API),
// both loaded with dlopen. Every method reports failure by throwing
// spindle::Error; none crashes when a library or device is missing.
#pragma once

#include <spindle/runtime.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "stream_capture.h"

namespace spindle::rt {

struct CompileOutput {
  bool ok = false;
  std::vector<char> binary;
  std::string log;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;

  // --- compiler -------------------------------------------------------------
  // Whether the compiler library loaded; `why` says what is missing.
  virtual bool hasCompiler(std::string* why) = 0;
  // Name and version, part of the cache key: "nvrtc 13.0".
  virtual std::string compilerIdentity() = 0;
  // The exact, normalized options used for `target`; part of the cache key.
  virtual std::vector<std::string> compileOptions(const std::string& target) = 0;
  // Options that let float atomics use hardware which is not safe on every
  // memory kind (RuntimeOptions::unsafeFpAtomics); empty where all are safe.
  virtual std::vector<std::string> unsafeFpAtomicsOptions() const = 0;
  // Whether `target` names something this backend compiles for.
  virtual bool acceptsTarget(const std::string& target) const = 0;
  // `symbol`: the kernel's (extern "C") name in `source`.
  virtual CompileOutput compile(const std::string& source, const std::string& fileName, const std::string& symbol,
                                const std::vector<std::string>& options) = 0;

  // --- device ----------------------------------------------------------------
  // Number of usable devices; 0 with `why` set when there is no driver or device.
  virtual int deviceCount(std::string* why) = 0;
  // The runtime's device (RuntimeOptions::device); call before the rest.
  // CUDA makes no context current here (HIP sets its device, as before).
  virtual void useDevice(int device) = 0;
  virtual std::string deviceTarget(int device) = 0;  // "sm_90", "gfx90a:sramecc+:xnack-"
  virtual std::string deviceName(int device) = 0;

  // --- several devices (docs/runtime.md, "Several GPUs") ---------------------
  // Whether launches may go to other devices than the one of useDevice()
  // (each with its own context, modules and function handles): CUDA. The
  // others launch on their one device, and `device` below is always it.
  virtual bool multiDevice() const { return false; }
  // The device ordinal `ptr` was allocated on; -1 when the driver cannot
  // tell (host or unregistered memory). Asked only with several devices.
  virtual int pointerDevice(const void* /*ptr*/) { return -1; }
  // The device ordinal of `stream`'s context; -1 for handles that mean the
  // current context's stream (0, the legacy and per-thread default
  // streams) or when the driver cannot tell. Asked only with several devices.
  virtual int streamDevice(void* /*stream*/) { return -1; }
  // While a scope is open on a thread, the memory, copy, fill, timing and
  // synchronize calls below act on `device` (the tuner's scratch on the
  // device of the launch it tunes); the thread's current context is
  // restored when it closes.
  class DeviceScope {
   public:
    DeviceScope(Backend& b, int device) : b_(b), token_(b.enterDevice(device)) {}
    ~DeviceScope() { b_.leaveDevice(token_); }
    DeviceScope(const DeviceScope&) = delete;
    DeviceScope& operator=(const DeviceScope&) = delete;

   private:
    Backend& b_;
    void* token_;
  };
  virtual void* enterDevice(int /*device*/) { return nullptr; }
  virtual void leaveDevice(void* /*token*/) noexcept {}

  // `device`: the ordinal of the device to load, launch or ask on (the
  // useDevice() one but on multi-device backends). A function handle
  // belongs to the device it was loaded on.
  // Loads a binary and returns the kernel's function handle (owned by the backend).
  virtual void* loadFunction(const std::vector<char>& binary, const std::string& symbol, int device) = 0;
  virtual void launch(void* function, const LaunchGeometry& g, void* stream, void** args, int device) = 0;
  // A TMA tensor map (copy_tile, docs/language.md 8.14) of a row-major
  // matrix: `rows` x `cols` elements of `elementBytes` at `base`, rows
  // `rowStrideBytes` apart, read in boxes of boxRows x boxCols and written
  // swizzled by `swizzle` bytes (0 or 128). Fills the 128 bytes at `out`
  // and returns true where the driver makes one (NVIDIA, CUDA 12+);
  // false elsewhere, and the kernel copies the box element by element.
  struct TensorMapRequest {
    const void* base = nullptr;
    int elementBytes = 0;
    int64_t rows = 0, cols = 0, rowStrideBytes = 0;
    int boxRows = 0, boxCols = 0, swizzle = 0;
    // The launch's device: the map is encoded in its context, which the
    // launching thread need not have current (a new thread's first
    // launch, a device other than the runtime's own).
    int device = 0;
  };
  virtual bool encodeTensorMap(const TensorMapRequest& /*request*/, void* /*out*/) { return false; }
  // Whether `stream` is being captured into a graph (stream_capture.h).
  // Asked only on a launch that misses the loaded binaries; a backend
  // without graphs (the cpu target) never captures.
  virtual CaptureStatus captureStatus(void* /*stream*/, int /*device*/) { return CaptureStatus::None; }
  // Blocks of `function` the device holds at once with this block size and
  // dynamic shared memory: multiprocessors x the driver's occupancy (>= 0).
  virtual int64_t residentBlocks(void* function, int64_t blockThreads, uint64_t dynamicSharedBytes, int device) = 0;

  virtual void* allocate(size_t bytes) = 0;
  virtual void release(void* ptr) noexcept = 0;
  virtual void copyToDevice(void* dst, const void* src, size_t bytes) = 0;
  virtual void copyToHost(void* dst, const void* src, size_t bytes) = 0;
  virtual void synchronize(void* stream) = 0;
  virtual float timeMs(void* stream, const std::function<void()>& body) = 0;

  // --- for autotuning (runtime/src/tuning) ------------------------------------
  // What besides the name and target makes timings of one device differ
  // from another's: multiprocessor count and driver version
  // ("multiprocessors 132, driver 12080"). Part of the tuning key.
  virtual std::string deviceIdentity(int /*device*/) { return {}; }
  // Device to device copy (scratch copies of written tensors). The default
  // bounces through the host.
  virtual void copyOnDevice(void* dst, const void* src, size_t bytes) {
    std::vector<char> host(bytes);
    copyToHost(host.data(), src, bytes);
    copyToDevice(dst, host.data(), bytes);
  }
  // Bytes to write between timed runs so each starts with a cold L2 cache;
  // 0: no flush (the cpu target).
  virtual size_t cacheFlushBytes() { return 0; }
  // Sets `bytes` bytes at `dst` to `value`, queued on `stream`. The default
  // copies a host buffer (synchronous).
  virtual void fill(void* dst, unsigned char value, size_t bytes, void* /*stream*/) {
    std::vector<char> host(bytes, char(value));
    copyToDevice(dst, host.data(), bytes);
  }
};

std::unique_ptr<Backend> makeHipBackend();
std::unique_ptr<Backend> makeCudaBackend();
std::unique_ptr<Backend> makeCpuBackend();
// The warp width of a cpu target: "cpu", "cpu:warp32" 32, "cpu:warp64" 64;
// 0 for anything else.
int cpuWarpSize(const std::string& target);

}  // namespace spindle::rt
