// NVIDIA backend: nvrtc (source to CUBIN for an exact sm_XX) and the CUDA
// driver API, both opened with dlopen. The few prototypes needed are declared
// here as function-pointer types, so building needs no CUDA headers.
#include <dlfcn.h>
#include <fmt/format.h>

#include <sys/stat.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <mutex>

#include "backend.h"
#include "dynlib.h"

namespace spindle::rt {
namespace {

// --- nvrtc ---------------------------------------------------------------------
using nvrtcResult = int;
using nvrtcProgram = void*;
using PFN_nvrtcVersion = nvrtcResult (*)(int*, int*);
using PFN_nvrtcGetErrorString = const char* (*)(nvrtcResult);
using PFN_nvrtcCreateProgram = nvrtcResult (*)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                                               const char* const*);
using PFN_nvrtcCompileProgram = nvrtcResult (*)(nvrtcProgram, int, const char* const*);
using PFN_nvrtcGetSize = nvrtcResult (*)(nvrtcProgram, size_t*);
using PFN_nvrtcGetBytes = nvrtcResult (*)(nvrtcProgram, char*);
using PFN_nvrtcDestroyProgram = nvrtcResult (*)(nvrtcProgram*);

// --- driver --------------------------------------------------------------------
using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUstream = void*;
using CUevent = void*;
using CUdeviceptr = unsigned long long;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
constexpr int CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9;
// Stream handles that mean a stream of the current context, not an object.
constexpr uintptr_t CU_STREAM_LEGACY = 0x1, CU_STREAM_PER_THREAD = 0x2;
constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INVALID_CONTEXT = 201;
// cuStreamIsCapturing on the legacy default stream while another (blocking)
// stream is being captured: a launch there would join the capture illegally.
constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906;
using CUstreamCaptureStatus = int;  // 0 none, 1 active, 2 invalidated

struct Nvrtc {
  DynLib lib;
  PFN_nvrtcVersion version = nullptr;
  PFN_nvrtcGetErrorString errorString = nullptr;
  PFN_nvrtcCreateProgram create = nullptr;
  PFN_nvrtcCompileProgram compile = nullptr;
  PFN_nvrtcGetSize logSize = nullptr;
  PFN_nvrtcGetBytes log = nullptr;
  PFN_nvrtcGetSize cubinSize = nullptr;
  PFN_nvrtcGetBytes cubin = nullptr;
  PFN_nvrtcDestroyProgram destroy = nullptr;
};

struct Driver {
  DynLib lib;
  CUresult (*init)(unsigned) = nullptr;
  CUresult (*getErrorName)(CUresult, const char**) = nullptr;
  CUresult (*getErrorString)(CUresult, const char**) = nullptr;
  CUresult (*deviceGetCount)(int*) = nullptr;
  CUresult (*deviceGet)(CUdevice*, int) = nullptr;
  CUresult (*deviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*deviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*primaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*ctxSetCurrent)(CUcontext) = nullptr;
  CUresult (*ctxGetCurrent)(CUcontext*) = nullptr;
  // Several devices: which device a pointer and a stream belong to.
  CUresult (*pointerGetAttribute)(void*, int, CUdeviceptr) = nullptr;
  CUresult (*streamGetCtx)(CUstream, CUcontext*) = nullptr;  // optional (CUDA 9.2+)
  CUresult (*ctxPushCurrent)(CUcontext) = nullptr;
  CUresult (*ctxPopCurrent)(CUcontext*) = nullptr;
  CUresult (*ctxGetDevice)(CUdevice*) = nullptr;
  CUresult (*moduleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*moduleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*funcSetAttribute)(CUfunction, int, int) = nullptr;
  CUresult (*occupancyMaxActiveBlocksPerMultiprocessor)(int*, CUfunction, int, size_t) = nullptr;
  CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                           void**, void**) = nullptr;
  CUresult (*memAlloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*memFree)(CUdeviceptr) = nullptr;
  CUresult (*memcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*memcpyDtoH)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*streamSynchronize)(CUstream) = nullptr;
  CUresult (*streamIsCapturing)(CUstream, CUstreamCaptureStatus*) = nullptr;  // optional (CUDA 10+)
  // cuTensorMapEncodeTiled, its enums as int (CUDA 12+; optional): map, data
  // type, rank, address, dims, strides, box, element strides, interleave,
  // swizzle, L2 promotion, out-of-bounds fill.
  CUresult (*tensorMapEncodeTiled)(void*, int, unsigned, void*, const uint64_t*, const uint64_t*, const unsigned*,
                                   const unsigned*, int, int, int, int) = nullptr;
  // Optional, for autotuning: without them the Backend defaults are used.
  CUresult (*memcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t) = nullptr;
  CUresult (*memsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream) = nullptr;
  CUresult (*driverGetVersion)(int*) = nullptr;
  CUresult (*eventCreate)(CUevent*, unsigned) = nullptr;
  CUresult (*eventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*eventSynchronize)(CUevent) = nullptr;
  CUresult (*eventElapsedTime)(float*, CUevent, CUevent) = nullptr;
  CUresult (*eventDestroy)(CUevent) = nullptr;
};

class CudaBackend final : public Backend {
 public:
  BackendKind kind() const override { return BackendKind::Cuda; }

  bool hasCompiler(std::string* why) override {
    loadNvrtc();
    if (!nvrtcError_.empty() && why) *why = nvrtcError_;
    return nvrtcError_.empty();
  }

  std::string compilerIdentity() override {
    requireNvrtc();
    return identity_;
  }

  bool acceptsTarget(const std::string& target) const override {
    if (target.size() < 5 || target.compare(0, 3, "sm_") != 0) return false;
    for (size_t i = 3; i < target.size(); ++i)
      if (!std::isalnum(static_cast<unsigned char>(target[i]))) return false;
    return std::isdigit(static_cast<unsigned char>(target[3]));
  }

  std::vector<std::string> compileOptions(const std::string& target) override {
    requireNvrtc();
    std::vector<std::string> opts = {"--std=c++17", "-arch=" + target};
    if (!includeDir_.empty()) opts.push_back("-I" + includeDir_);
    return opts;
  }

  // atomicAdd on f32, f16 and bf16 is native and safe on every memory kind.
  std::vector<std::string> unsafeFpAtomicsOptions() const override { return {}; }

  CompileOutput compile(const std::string& source, const std::string& fileName, const std::string& /*symbol*/,
                        const std::vector<std::string>& options) override {
    requireNvrtc();
    CompileOutput out;
    nvrtcProgram prog = nullptr;
    checkNvrtc(nv_.create(&prog, source.c_str(), fileName.c_str(), 0, nullptr, nullptr), "nvrtcCreateProgram");
    std::vector<const char*> argv;
    for (const auto& o : options) argv.push_back(o.c_str());
    nvrtcResult rc = nv_.compile(prog, int(argv.size()), argv.data());
    size_t logSize = 0;
    if (nv_.logSize(prog, &logSize) == 0 && logSize > 1) {
      out.log.resize(logSize);
      nv_.log(prog, out.log.data());
      out.log.resize(logSize - 1);
    }
    if (rc == 0) {
      size_t size = 0;
      if (nv_.cubinSize(prog, &size) == 0 && size > 0) {
        out.binary.resize(size);
        out.ok = nv_.cubin(prog, out.binary.data()) == 0;
      }
      if (!out.ok) out.log += "\nnvrtc produced no CUBIN (is the target an sm_XX?)";
    } else if (out.log.empty()) {
      out.log = nv_.errorString(rc);
    }
    nv_.destroy(&prog);
    return out;
  }

  int deviceCount(std::string* why) override {
    loadDriver();
    if (!driverError_.empty()) {
      if (why) *why = driverError_;
      return 0;
    }
    int n = 0;
    CUresult rc = drv_.deviceGetCount(&n);
    if (rc != CUDA_SUCCESS || n == 0) {
      if (why) *why = rc != CUDA_SUCCESS ? "cuDeviceGetCount: " + errorText(rc) : "no CUDA device";
      return 0;
    }
    return n;
  }

  // Retains the device's primary context (the one the CUDA runtime, torch
  // and CuPy use), without making it current: the caller's context stays.
  void useDevice(int device) override {
    std::lock_guard<std::mutex> lock(mu_);
    int count = 0;
    checkCu(drv_.deviceGetCount(&count), "cuDeviceGetCount");
    CUdevice dev = 0;
    checkCu(drv_.deviceGet(&dev, device), "cuDeviceGet");
    checkCu(drv_.primaryCtxRetain(&ctx_, dev), "cuDevicePrimaryCtxRetain");
    device_ = dev;
    primary_ = device;
    deviceCount_ = count;
    contexts_ = std::make_unique<std::atomic<CUcontext>[]>(size_t(count));
    for (int d = 0; d < count; ++d) contexts_[d].store(d == device ? ctx_ : nullptr);
  }

  // --- several devices ---------------------------------------------------------
  bool multiDevice() const override { return true; }

  int pointerDevice(const void* ptr) override {
    int ordinal = -1;
    auto query = [&] {
      return drv_.pointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                      reinterpret_cast<CUdeviceptr>(ptr));
    };
    CUresult rc = query();
    // A thread with no current context: ask from the runtime's, and leave none.
    if (rc == CUDA_ERROR_INVALID_CONTEXT && ctx_ && drv_.ctxPushCurrent(ctx_) == CUDA_SUCCESS) {
      rc = query();
      CUcontext popped = nullptr;
      drv_.ctxPopCurrent(&popped);
    }
    return rc == CUDA_SUCCESS ? ordinal : -1;  // else host or unregistered memory: the driver cannot tell
  }

  int streamDevice(void* stream) override {
    auto handle = reinterpret_cast<uintptr_t>(stream);
    if (!drv_.streamGetCtx || handle == 0 || handle == CU_STREAM_LEGACY || handle == CU_STREAM_PER_THREAD) return -1;
    CUcontext c = nullptr;
    if (drv_.streamGetCtx(stream, &c) != CUDA_SUCCESS || !c) return -1;
    for (int d = 0; d < deviceCount_; ++d)
      if (contexts_[d].load(std::memory_order_acquire) == c) return d;
    // Not a primary context this backend holds (one of cuCtxCreate, or of a
    // device not used yet): ask the context itself.
    if (drv_.ctxPushCurrent(c) != CUDA_SUCCESS) return -1;
    CUdevice dev = -1;
    CUresult rc = drv_.ctxGetDevice(&dev);
    CUcontext popped = nullptr;
    drv_.ctxPopCurrent(&popped);
    if (rc != CUDA_SUCCESS) return -1;
    for (int d = 0; d < deviceCount_; ++d) {
      CUdevice candidate = -1;
      if (drv_.deviceGet(&candidate, d) == CUDA_SUCCESS && candidate == dev) return d;
    }
    return -1;
  }

  void* enterDevice(int device) override {
    auto token = std::make_unique<ScopeToken>();
    token->outer = tlsScope;
    CUcontext want = context(device);
    checkCu(drv_.ctxGetCurrent(&token->previous), "cuCtxGetCurrent");
    checkCu(drv_.ctxSetCurrent(want), "cuCtxSetCurrent");
    tlsScope = ScopeState{this, device};
    return token.release();
  }

  void leaveDevice(void* t) noexcept override {
    std::unique_ptr<ScopeToken> token(static_cast<ScopeToken*>(t));
    if (!token) return;
    tlsScope = token->outer;
    drv_.ctxSetCurrent(token->previous);
  }

  std::string deviceTarget(int device) override {
    CUdevice dev = 0;
    checkCu(drv_.deviceGet(&dev, device), "cuDeviceGet");
    int major = 0, minor = 0;
    checkCu(drv_.deviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cuDeviceGetAttribute");
    checkCu(drv_.deviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cuDeviceGetAttribute");
    // Hopper (9.0) compiles for sm_90a: its arch-specific instructions
    // (wgmma, for dot: docs/language.md 8.13) exist only there, and a
    // binary is built for this device alone anyway.
    return fmt::format("sm_{}{}{}", major, minor, major == 9 && minor == 0 ? "a" : "");
  }

  std::string deviceName(int device) override {
    CUdevice dev = 0;
    checkCu(drv_.deviceGet(&dev, device), "cuDeviceGet");
    char name[256] = {};
    checkCu(drv_.deviceGetName(name, sizeof name - 1, dev), "cuDeviceGetName");
    return name;
  }

  // A module is loaded into one context: each device loads the binary for
  // itself (the runtime asks the first time a launch goes there), and the
  // handle, its attributes and occupancy are that device's.
  void* loadFunction(const std::vector<char>& binary, const std::string& symbol, int device) override {
    ContextGuard guard(*this, device);
    CUmodule mod = nullptr;
    checkCu(drv_.moduleLoadData(&mod, binary.data()), "cuModuleLoadData");
    CUfunction fn = nullptr;
    checkCu(drv_.moduleGetFunction(&fn, mod, symbol.c_str()), fmt::format("cuModuleGetFunction('{}')", symbol));
    return fn;
  }

  void launch(void* function, const LaunchGeometry& g, void* stream, void** args, int device) override {
    ContextGuard guard(*this, device);
    allowDynamicShared(function, g.dynamicSharedBytes);
    CUresult rc = drv_.launchKernel(function, unsigned(g.grid[0]), unsigned(g.grid[1]), unsigned(g.grid[2]),
                                    unsigned(g.block[0]), unsigned(g.block[1]), unsigned(g.block[2]),
                                    unsigned(g.dynamicSharedBytes), stream, args, nullptr);
    // The message is formatted only on failure: this is the launch hot path.
    if (rc != CUDA_SUCCESS)
      checkCu(rc,
              fmt::format("cuLaunchKernel(grid [{}, {}, {}], block [{}, {}, {}], {} bytes dynamic shared memory)",
                          g.grid[0], g.grid[1], g.grid[2], g.block[0], g.block[1], g.block[2], g.dynamicSharedBytes));
  }

  // CUDA's enums (cuda.h): data types by size (UINT8, UINT16, UINT32,
  // UINT64: a box copy moves bits), swizzle NONE / 128B, L2 promotion 256B,
  // zeros out of bounds. A failure leaves the kernel's element path.
  bool encodeTensorMap(const TensorMapRequest& r, void* out) override {
    if (!drv_.tensorMapEncodeTiled) return false;
    if (r.elementBytes != 1 && r.elementBytes != 2 && r.elementBytes != 4 && r.elementBytes != 8) return false;
    const int type = r.elementBytes == 1 ? 0 : r.elementBytes == 2 ? 1 : r.elementBytes == 4 ? 2 : 4;
    // Without a current context the driver refuses (CUDA_ERROR_INVALID_CONTEXT),
    // and the kernel would copy elements, right and far slower. 86-97 ns a
    // map with the context current (H200, session 22).
    ContextGuard guard(*this, r.device);
    const uint64_t dims[2] = {uint64_t(r.cols), uint64_t(r.rows)};
    const uint64_t strides[1] = {uint64_t(r.rowStrideBytes)};
    const unsigned box[2] = {unsigned(r.boxCols), unsigned(r.boxRows)};
    const unsigned elementStrides[2] = {1, 1};
    const int swizzle = r.swizzle == 128 ? 3 : 0;
    return drv_.tensorMapEncodeTiled(out, type, 2, const_cast<void*>(r.base), dims, strides, box, elementStrides, 0,
                                     swizzle, 3, 0) == CUDA_SUCCESS;
  }

  CaptureStatus captureStatus(void* stream, int device) override {
    if (!drv_.streamIsCapturing) return CaptureStatus::None;
    ContextGuard guard(*this, device);  // the legacy default stream (0) is the current context's
    CUstreamCaptureStatus status = 0;
    CUresult rc = drv_.streamIsCapturing(stream, &status);
    if (rc == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) return CaptureStatus::Active;
    checkCu(rc, "cuStreamIsCapturing");
    return status == 1 ? CaptureStatus::Active : status == 2 ? CaptureStatus::Invalidated : CaptureStatus::None;
  }

  int64_t residentBlocks(void* function, int64_t blockThreads, uint64_t dynamicSharedBytes, int device) override {
    ContextGuard guard(*this, device);
    allowDynamicShared(function, dynamicSharedBytes);  // else the query counts as if it could not launch
    CUdevice dev = 0;
    checkCu(drv_.deviceGet(&dev, device), "cuDeviceGet");
    int multiprocessors = 0, perMultiprocessor = 0;
    checkCu(drv_.deviceGetAttribute(&multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
            "cuDeviceGetAttribute(multiprocessor count)");
    checkCu(drv_.occupancyMaxActiveBlocksPerMultiprocessor(&perMultiprocessor, function, int(blockThreads),
                                                           size_t(dynamicSharedBytes)),
            fmt::format("cuOccupancyMaxActiveBlocksPerMultiprocessor(block of {} threads, {} bytes dynamic shared)",
                        blockThreads, dynamicSharedBytes));
    return int64_t(multiprocessors) * perMultiprocessor;
  }

  void* allocate(size_t bytes) override {
    ContextGuard guard(*this, scopeDevice());
    CUdeviceptr p = 0;
    checkCu(drv_.memAlloc(&p, bytes), fmt::format("cuMemAlloc({} bytes)", bytes));
    return reinterpret_cast<void*>(p);
  }
  void release(void* ptr) noexcept override {
    if (!ptr || !ctx_) return;
    try {
      ContextGuard guard(*this, scopeDevice());
      drv_.memFree(reinterpret_cast<CUdeviceptr>(ptr));
    } catch (const Error&) {  // no context: nothing to free it in
    }
  }
  void copyToDevice(void* dst, const void* src, size_t bytes) override {
    ContextGuard guard(*this, scopeDevice());
    checkCu(drv_.memcpyHtoD(reinterpret_cast<CUdeviceptr>(dst), src, bytes), "cuMemcpyHtoD");
  }
  void copyToHost(void* dst, const void* src, size_t bytes) override {
    ContextGuard guard(*this, scopeDevice());
    checkCu(drv_.memcpyDtoH(dst, reinterpret_cast<CUdeviceptr>(src), bytes), "cuMemcpyDtoH");
  }
  void synchronize(void* stream) override {
    ContextGuard guard(*this, scopeDevice());
    checkCu(drv_.streamSynchronize(stream), "cuStreamSynchronize");
  }
  std::string deviceIdentity(int device) override {
    CUdevice dev = 0;
    checkCu(drv_.deviceGet(&dev, device), "cuDeviceGet");
    int multiprocessors = 0, driver = 0;
    checkCu(drv_.deviceGetAttribute(&multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
            "cuDeviceGetAttribute(multiprocessor count)");
    if (drv_.driverGetVersion) drv_.driverGetVersion(&driver);
    return fmt::format("multiprocessors {}, driver {}", multiprocessors, driver);
  }
  void copyOnDevice(void* dst, const void* src, size_t bytes) override {
    if (!drv_.memcpyDtoD) return Backend::copyOnDevice(dst, src, bytes);
    ContextGuard guard(*this, scopeDevice());
    checkCu(drv_.memcpyDtoD(reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src), bytes),
            "cuMemcpyDtoD");
  }
  size_t cacheFlushBytes() override {
    int l2 = 0;
    CUdevice dev = device_;
    drv_.deviceGet(&dev, scopeDevice());
    drv_.deviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev);
    // Twice the L2 (an H100's is 50 MiB), at least 32 MiB.
    return std::max<size_t>(size_t(32) << 20, size_t(l2) * 2);
  }
  void fill(void* dst, unsigned char value, size_t bytes, void* stream) override {
    if (!drv_.memsetD8Async) return Backend::fill(dst, value, bytes, stream);
    ContextGuard guard(*this, scopeDevice());
    checkCu(drv_.memsetD8Async(reinterpret_cast<CUdeviceptr>(dst), value, bytes, stream), "cuMemsetD8Async");
  }
  float timeMs(void* stream, const std::function<void()>& body) override {
    ContextGuard guard(*this, scopeDevice());
    CUevent start = nullptr, stop = nullptr;
    checkCu(drv_.eventCreate(&start, 0), "cuEventCreate");
    checkCu(drv_.eventCreate(&stop, 0), "cuEventCreate");
    float ms = 0;
    try {
      checkCu(drv_.eventRecord(start, stream), "cuEventRecord");
      body();
      checkCu(drv_.eventRecord(stop, stream), "cuEventRecord");
      checkCu(drv_.eventSynchronize(stop), "cuEventSynchronize");
      checkCu(drv_.eventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
    } catch (...) {
      drv_.eventDestroy(start);
      drv_.eventDestroy(stop);
      throw;
    }
    drv_.eventDestroy(start);
    drv_.eventDestroy(stop);
    return ms;
  }

 private:
  void loadNvrtc() {
    std::lock_guard<std::mutex> lock(mu_);
    if (nvrtcTried_) return;
    nvrtcTried_ = true;
    std::vector<std::string> candidates;
    if (const char* p = std::getenv("SPINDLE_NVRTC")) candidates.push_back(p);
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
      if (const char* home = std::getenv(var)) candidates.push_back(std::string(home) + "/lib64/libnvrtc.so");
    for (const char* n : {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"})
      candidates.push_back(n);
    candidates.push_back("/usr/local/cuda/lib64/libnvrtc.so");
    if (!nv_.lib.open(candidates)) {
      nvrtcError_ = "nvrtc (the CUDA run-time compiler) is not available: " + nv_.lib.error() +
                    "\n(set CUDA_HOME or SPINDLE_NVRTC to the toolkit's libnvrtc.so)";
      return;
    }
    bool ok = nv_.lib.sym(nv_.version, "nvrtcVersion") && nv_.lib.sym(nv_.errorString, "nvrtcGetErrorString") &&
              nv_.lib.sym(nv_.create, "nvrtcCreateProgram") && nv_.lib.sym(nv_.compile, "nvrtcCompileProgram") &&
              nv_.lib.sym(nv_.logSize, "nvrtcGetProgramLogSize") && nv_.lib.sym(nv_.log, "nvrtcGetProgramLog") &&
              nv_.lib.sym(nv_.cubinSize, "nvrtcGetCUBINSize") && nv_.lib.sym(nv_.cubin, "nvrtcGetCUBIN") &&
              nv_.lib.sym(nv_.destroy, "nvrtcDestroyProgram");
    if (!ok) {
      nvrtcError_ =
          fmt::format("{} lacks the nvrtc functions Spindle needs (nvrtcGetCUBIN needs CUDA 11.1+)", nv_.lib.path());
      return;
    }
    int major = 0, minor = 0;
    nv_.version(&major, &minor);
    std::string file = nv_.lib.realPath();
    identity_ = fmt::format("nvrtc {}.{} ({}, {} bytes)", major, minor, baseName(file), fileSize(file));
    includeDir_ = findCudaInclude(file);
  }

  // The toolkit's include directory, for <cuda_fp16.h> and <cuda_bf16.h>.
  static std::string findCudaInclude(const std::string& nvrtcFile) {
    std::vector<std::string> dirs;
    // Named outright: the Python package sets it to the nvidia-cuda-runtime
    // wheel's include directory when nvrtc comes from the wheels.
    if (const char* d = std::getenv("SPINDLE_CUDA_INCLUDE")) dirs.push_back(d);
    if (!nvrtcFile.empty()) dirs.push_back(parentDir(parentDir(nvrtcFile)) + "/include");
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
      if (const char* home = std::getenv(var)) dirs.push_back(std::string(home) + "/include");
    dirs.push_back("/usr/local/cuda/include");
    for (const auto& d : dirs) {
      struct stat st;
      if (::stat((d + "/cuda_fp16.h").c_str(), &st) == 0) return d;
    }
    return {};
  }

  void requireNvrtc() {
    loadNvrtc();
    if (!nvrtcError_.empty()) throw Error(nvrtcError_);
  }

  void loadDriver() {
    std::lock_guard<std::mutex> lock(mu_);
    if (driverTried_) return;
    driverTried_ = true;
    if (!drv_.lib.open({"libcuda.so.1", "libcuda.so"})) {
      driverError_ = "no CUDA driver (libcuda.so.1): " + drv_.lib.error();
      return;
    }
    bool ok =
        drv_.lib.sym(drv_.init, "cuInit") && drv_.lib.sym(drv_.getErrorName, "cuGetErrorName") &&
        drv_.lib.sym(drv_.getErrorString, "cuGetErrorString") &&
        drv_.lib.sym(drv_.deviceGetCount, "cuDeviceGetCount") && drv_.lib.sym(drv_.deviceGet, "cuDeviceGet") &&
        drv_.lib.sym(drv_.deviceGetName, "cuDeviceGetName") &&
        drv_.lib.sym(drv_.deviceGetAttribute, "cuDeviceGetAttribute") &&
        drv_.lib.sym(drv_.primaryCtxRetain, "cuDevicePrimaryCtxRetain") &&
        drv_.lib.sym(drv_.ctxSetCurrent, "cuCtxSetCurrent") && drv_.lib.sym(drv_.ctxGetCurrent, "cuCtxGetCurrent") &&
        drv_.lib.sym(drv_.pointerGetAttribute, "cuPointerGetAttribute") &&
        drv_.lib.sym(drv_.ctxPushCurrent, "cuCtxPushCurrent_v2") &&
        drv_.lib.sym(drv_.ctxPopCurrent, "cuCtxPopCurrent_v2") && drv_.lib.sym(drv_.ctxGetDevice, "cuCtxGetDevice") &&
        drv_.lib.sym(drv_.moduleLoadData, "cuModuleLoadData") &&
        drv_.lib.sym(drv_.moduleGetFunction, "cuModuleGetFunction") &&
        drv_.lib.sym(drv_.funcSetAttribute, "cuFuncSetAttribute") &&
        drv_.lib.sym(drv_.occupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor") &&
        drv_.lib.sym(drv_.launchKernel, "cuLaunchKernel") && drv_.lib.sym(drv_.memAlloc, "cuMemAlloc_v2") &&
        drv_.lib.sym(drv_.memFree, "cuMemFree_v2") && drv_.lib.sym(drv_.memcpyHtoD, "cuMemcpyHtoD_v2") &&
        drv_.lib.sym(drv_.memcpyDtoH, "cuMemcpyDtoH_v2") &&
        drv_.lib.sym(drv_.streamSynchronize, "cuStreamSynchronize") &&
        drv_.lib.sym(drv_.eventCreate, "cuEventCreate") && drv_.lib.sym(drv_.eventRecord, "cuEventRecord") &&
        drv_.lib.sym(drv_.eventSynchronize, "cuEventSynchronize") &&
        (drv_.lib.sym(drv_.eventElapsedTime, "cuEventElapsedTime_v2") ||
         drv_.lib.sym(drv_.eventElapsedTime, "cuEventElapsedTime")) &&
        (drv_.lib.sym(drv_.eventDestroy, "cuEventDestroy_v2") || drv_.lib.sym(drv_.eventDestroy, "cuEventDestroy"));
    if (!ok) {
      driverError_ = drv_.lib.path() + " lacks driver API functions Spindle needs (driver too old?)";
      return;
    }
    drv_.lib.sym(drv_.streamIsCapturing, "cuStreamIsCapturing");        // optional: null without it
    drv_.lib.sym(drv_.tensorMapEncodeTiled, "cuTensorMapEncodeTiled");  // optional: copy_tile copies elements
    drv_.lib.sym(drv_.streamGetCtx, "cuStreamGetCtx");
    drv_.lib.sym(drv_.memcpyDtoD, "cuMemcpyDtoD_v2");
    drv_.lib.sym(drv_.memsetD8Async, "cuMemsetD8Async");
    drv_.lib.sym(drv_.driverGetVersion, "cuDriverGetVersion");
    CUresult rc = drv_.init(0);
    if (rc != CUDA_SUCCESS) driverError_ = "cuInit: " + errorText(rc);
  }

  // Above 48 KiB a kernel must opt in to dynamic shared memory.
  void allowDynamicShared(void* function, uint64_t bytes) {
    if (bytes > 48 * 1024)
      checkCu(drv_.funcSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(bytes)),
              fmt::format("cuFuncSetAttribute(max dynamic shared memory = {} bytes)", bytes));
  }

  // The primary context of `device`, retained the first time it is asked for.
  CUcontext context(int device) {
    if (device == primary_ && ctx_) return ctx_;  // the launch path on one device: a compare
    if (!ctx_) throw Error("CUDA backend: no device in use (compile-only runtime)");
    if (device < 0 || device >= deviceCount_)
      throw Error(fmt::format("CUDA backend: no device {} ({} present)", device, deviceCount_));
    CUcontext c = contexts_[device].load(std::memory_order_acquire);
    if (c) return c;
    std::lock_guard<std::mutex> lock(mu_);
    c = contexts_[device].load(std::memory_order_acquire);
    if (c) return c;
    CUdevice dev = 0;
    checkCu(drv_.deviceGet(&dev, device), "cuDeviceGet");
    checkCu(drv_.primaryCtxRetain(&c, dev), fmt::format("cuDevicePrimaryCtxRetain(device {})", device));
    contexts_[device].store(c, std::memory_order_release);
    return c;
  }

  // The device the memory, copy and timing calls act on: a DeviceScope's
  // on this thread, else the runtime's.
  int scopeDevice() const { return tlsScope.owner == this ? tlsScope.device : primary_; }

  // Makes `device`'s primary context current for one call and restores the
  // thread's own afterwards, so torch or CuPy code around a launch sees its
  // context (and cudaGetDevice()) unchanged. One driver call when the
  // context is current already (the common case: torch's, or an earlier
  // launch's). A thread with no current context keeps the runtime's device's
  // afterwards, as the CUDA runtime would make it current: later launches
  // from a program that uses only Spindle then cost one call too.
  class ContextGuard {
   public:
    ContextGuard(CudaBackend& b, int device) : drv_(b.drv_) {
      CUcontext want = b.context(device);
      CUresult rc = drv_.ctxGetCurrent(&previous_);
      if (rc != CUDA_SUCCESS) b.checkCu(rc, "cuCtxGetCurrent");
      if (previous_ == want) return;
      b.checkCu(drv_.ctxSetCurrent(want), "cuCtxSetCurrent");
      restore_ = previous_ || device != b.primary_;
    }
    ~ContextGuard() {
      if (restore_) drv_.ctxSetCurrent(previous_);
    }
    ContextGuard(const ContextGuard&) = delete;
    ContextGuard& operator=(const ContextGuard&) = delete;

   private:
    const Driver& drv_;
    CUcontext previous_ = nullptr;
    bool restore_ = false;
  };

  // The thread's open DeviceScope (at most one per backend is in effect:
  // the innermost), and what leaving it restores.
  struct ScopeState {
    const CudaBackend* owner = nullptr;
    int device = -1;
  };
  struct ScopeToken {
    ScopeState outer;
    CUcontext previous = nullptr;
  };
  static thread_local ScopeState tlsScope;

  std::string errorText(CUresult rc) const {
    const char* name = nullptr;
    const char* text = nullptr;
    if (drv_.getErrorName) drv_.getErrorName(rc, &name);
    if (drv_.getErrorString) drv_.getErrorString(rc, &text);
    return fmt::format("{} ({}): {}", name ? name : "CUDA error", rc, text ? text : "unknown error");
  }

  void checkCu(CUresult rc, const std::string& what) const {
    if (rc != CUDA_SUCCESS) throw Error(fmt::format("CUDA: {} failed: {}", what, errorText(rc)));
  }
  void checkNvrtc(nvrtcResult rc, const char* what) const {
    if (rc != 0) throw Error(fmt::format("nvrtc: {} failed: {}", what, nv_.errorString(rc)));
  }

  std::mutex mu_;
  Nvrtc nv_;
  bool nvrtcTried_ = false;
  std::string nvrtcError_;
  std::string identity_;
  std::string includeDir_;
  Driver drv_;
  bool driverTried_ = false;
  std::string driverError_;
  CUcontext ctx_ = nullptr;  // the primary context of useDevice()'s device
  CUdevice device_ = 0;
  int primary_ = -1;  // useDevice()'s ordinal
  int deviceCount_ = 0;
  // Primary contexts by ordinal, null until a call needs one.
  std::unique_ptr<std::atomic<CUcontext>[]> contexts_;
};

thread_local CudaBackend::ScopeState CudaBackend::tlsScope;

}  // namespace

std::unique_ptr<Backend> makeCudaBackend() { return std::make_unique<CudaBackend>(); }

}  // namespace spindle::rt
