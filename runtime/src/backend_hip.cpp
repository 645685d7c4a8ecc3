// AMD backend: hiprtc (source to a code object for an exact gfx target) and
// the HIP module API, opened with dlopen. In ROCm 5.x hiprtc lives inside
// libamdhip64; from ROCm 6 it is libhiprtc. Prototypes are declared here, so
// building needs no ROCm headers.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "backend.h"
#include "dynlib.h"

namespace spindle::rt {
namespace {

using hiprtcResult = int;
using hiprtcProgram = void*;
using hipError_t = int;
using hipModule_t = void*;
using hipFunction_t = void*;
using hipStream_t = void*;
using hipEvent_t = void*;
// hipDeviceAttributeMultiprocessorCount: its value in hipDeviceAttribute_t
// in ROCm 5.x and 6.x (hip_runtime_api.h, not included here).
constexpr int kHipDeviceAttributeMultiprocessorCount = 63;

struct Hiprtc {
  DynLib lib;
  hiprtcResult (*version)(int*, int*) = nullptr;
  const char* (*errorString)(hiprtcResult) = nullptr;
  hiprtcResult (*create)(hiprtcProgram*, const char*, const char*, int, const char**, const char**) = nullptr;
  hiprtcResult (*compile)(hiprtcProgram, int, const char**) = nullptr;
  hiprtcResult (*logSize)(hiprtcProgram, size_t*) = nullptr;
  hiprtcResult (*log)(hiprtcProgram, char*) = nullptr;
  hiprtcResult (*codeSize)(hiprtcProgram, size_t*) = nullptr;
  hiprtcResult (*code)(hiprtcProgram, char*) = nullptr;
  hiprtcResult (*destroy)(hiprtcProgram*) = nullptr;
};

struct Hip {
  DynLib lib;
  hipError_t (*init)(unsigned) = nullptr;
  const char* (*errorString)(hipError_t) = nullptr;
  hipError_t (*getDeviceCount)(int*) = nullptr;
  hipError_t (*setDevice)(int) = nullptr;
  hipError_t (*getDeviceProperties)(void*, int) = nullptr;
  hipError_t (*deviceGetName)(char*, int, int) = nullptr;
  hipError_t (*deviceGetAttribute)(int*, int, int) = nullptr;
  hipError_t (*moduleOccupancyMaxActiveBlocksPerMultiprocessor)(int*, hipFunction_t, int, size_t) = nullptr;
  hipError_t (*moduleLoadData)(hipModule_t*, const void*) = nullptr;
  hipError_t (*moduleGetFunction)(hipFunction_t*, hipModule_t, const char*) = nullptr;
  hipError_t (*moduleLaunchKernel)(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   hipStream_t, void**, void**) = nullptr;
  hipError_t (*malloc)(void**, size_t) = nullptr;
  hipError_t (*free)(void*) = nullptr;
  hipError_t (*memcpyHtoD)(void*, void*, size_t) = nullptr;
  hipError_t (*memcpyDtoH)(void*, void*, size_t) = nullptr;
  hipError_t (*streamSynchronize)(hipStream_t) = nullptr;
  hipError_t (*streamIsCapturing)(hipStream_t, int*) = nullptr;  // optional; 0 none, 1 active, 2 invalidated
  hipError_t (*eventCreate)(hipEvent_t*) = nullptr;
  hipError_t (*eventRecord)(hipEvent_t, hipStream_t) = nullptr;
  hipError_t (*eventSynchronize)(hipEvent_t) = nullptr;
  hipError_t (*eventElapsedTime)(float*, hipEvent_t, hipEvent_t) = nullptr;
  hipError_t (*eventDestroy)(hipEvent_t) = nullptr;
  // Optional, for autotuning: without them the Backend defaults are used.
  hipError_t (*memcpyDtoD)(void*, void*, size_t) = nullptr;
  hipError_t (*memsetAsync)(void*, int, size_t, hipStream_t) = nullptr;
  hipError_t (*driverGetVersion)(int*) = nullptr;
};

// The full gcnArchName ("gfx90a:sramecc+:xnack-") from a hipDeviceProp_t
// whose layout differs between ROCm releases: the one field that holds a
// "gfx<hex>" name, preferring the spelling with target features.
std::string findArchName(const char* props, size_t size) {
  std::string best;
  for (size_t i = 0; i + 4 < size; ++i) {
    if (std::strncmp(props + i, "gfx", 3) != 0 || !std::isxdigit(static_cast<unsigned char>(props[i + 3]))) continue;
    if (i > 0 && props[i - 1] != 0) continue;  // must start a field
    size_t n = strnlen(props + i, size - i);
    std::string s(props + i, n);
    if (best.empty() || (s.find(':') != std::string::npos && best.find(':') == std::string::npos)) best = s;
    i += n;
  }
  return best;
}

class HipBackend final : public Backend {
 public:
  BackendKind kind() const override { return BackendKind::Hip; }

  bool hasCompiler(std::string* why) override {
    loadHiprtc();
    if (!rtcError_.empty() && why) *why = rtcError_;
    return rtcError_.empty();
  }

  std::string compilerIdentity() override {
    requireHiprtc();
    return identity_;
  }

  bool acceptsTarget(const std::string& target) const override {
    return target.size() > 3 && target.compare(0, 3, "gfx") == 0 &&
           std::isxdigit(static_cast<unsigned char>(target[3]));
  }

  std::vector<std::string> compileOptions(const std::string& target) override {
    requireHiprtc();
    return {"-std=c++17", "-O3", "--offload-arch=" + target};
  }

  std::vector<std::string> unsafeFpAtomicsOptions() const override { return {"-munsafe-fp-atomics"}; }

  CompileOutput compile(const std::string& source, const std::string& fileName, const std::string& /*symbol*/,
                        const std::vector<std::string>& options) override {
    requireHiprtc();
    for (const auto& o : options)
      if (o.rfind("--offload-arch=", 0) == 0) requireKnownTarget(o.substr(15));
    CompileOutput out;
    hiprtcProgram prog = nullptr;
    hiprtcResult rc = rtc_.create(&prog, source.c_str(), fileName.c_str(), 0, nullptr, nullptr);
    if (rc != 0) throw Error(fmt::format("hiprtcCreateProgram failed: {}", rtc_.errorString(rc)));
    std::vector<const char*> argv;
    for (const auto& o : options) argv.push_back(o.c_str());
    rc = rtc_.compile(prog, int(argv.size()), argv.data());
    size_t logSize = 0;
    if (rtc_.logSize(prog, &logSize) == 0 && logSize > 1) {
      out.log.resize(logSize);
      rtc_.log(prog, out.log.data());
      while (!out.log.empty() && out.log.back() == '\0') out.log.pop_back();
    }
    if (rc == 0) {
      size_t size = 0;
      if (rtc_.codeSize(prog, &size) == 0 && size > 0) {
        out.binary.resize(size);
        out.ok = rtc_.code(prog, out.binary.data()) == 0;
      }
      if (!out.ok) out.log += "\nhiprtc produced no code object";
    } else if (out.log.empty()) {
      out.log = rtc_.errorString(rc);
    }
    rtc_.destroy(&prog);
    return out;
  }

  int deviceCount(std::string* why) override {
    loadHip();
    if (!hipError_.empty()) {
      if (why) *why = hipError_;
      return 0;
    }
    int n = 0;
    hipError_t rc = hip_.getDeviceCount(&n);
    if (rc != 0 || n == 0) {
      if (why) *why = rc != 0 ? fmt::format("hipGetDeviceCount: {}", hip_.errorString(rc)) : "no AMD GPU";
      return 0;
    }
    return n;
  }

  void useDevice(int device) override {
    checkHip(hip_.setDevice(device), "hipSetDevice");
    device_ = device;
    inUse_ = true;
  }

  std::string deviceTarget(int device) override {
    // Larger than hipDeviceProp_t of any ROCm release.
    std::vector<char> props(64 * 1024, 0);
    checkHip(hip_.getDeviceProperties(props.data(), device), "hipGetDeviceProperties");
    std::string arch = findArchName(props.data(), props.size());
    if (arch.empty())
      throw Error("HIP: could not read the device's gcnArchName; pass the target explicitly (RuntimeOptions::target)");
    return arch;
  }

  std::string deviceName(int device) override {
    char name[256] = {};
    checkHip(hip_.deviceGetName(name, sizeof name - 1, device), "hipDeviceGetName");
    return name;
  }

  // One device (multiDevice() is false): `device` is always useDevice()'s.
  void* loadFunction(const std::vector<char>& binary, const std::string& symbol, int /*device*/) override {
    makeCurrent();
    hipModule_t mod = nullptr;
    checkHip(hip_.moduleLoadData(&mod, binary.data()), "hipModuleLoadData");
    hipFunction_t fn = nullptr;
    checkHip(hip_.moduleGetFunction(&fn, mod, symbol.c_str()), fmt::format("hipModuleGetFunction('{}')", symbol));
    return fn;
  }

  void launch(void* function, const LaunchGeometry& g, void* stream, void** args, int /*device*/) override {
    makeCurrent();
    hipError_t rc = hip_.moduleLaunchKernel(function, unsigned(g.grid[0]), unsigned(g.grid[1]), unsigned(g.grid[2]),
                                            unsigned(g.block[0]), unsigned(g.block[1]), unsigned(g.block[2]),
                                            unsigned(g.dynamicSharedBytes), stream, args, nullptr);
    // The message is formatted only on failure: this is the launch hot path.
    if (rc != 0)
      checkHip(rc,
               fmt::format("hipModuleLaunchKernel(grid [{}, {}, {}], block [{}, {}, {}], {} bytes dynamic shared)",
                           g.grid[0], g.grid[1], g.grid[2], g.block[0], g.block[1], g.block[2], g.dynamicSharedBytes));
  }

  int64_t residentBlocks(void* function, int64_t blockThreads, uint64_t dynamicSharedBytes, int /*device*/) override {
    makeCurrent();
    int multiprocessors = 0, perMultiprocessor = 0;
    checkHip(hip_.deviceGetAttribute(&multiprocessors, kHipDeviceAttributeMultiprocessorCount, device_),
             "hipDeviceGetAttribute(multiprocessor count)");
    checkHip(hip_.moduleOccupancyMaxActiveBlocksPerMultiprocessor(&perMultiprocessor, function, int(blockThreads),
                                                                  size_t(dynamicSharedBytes)),
             fmt::format("hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(block of {} threads, {} bytes "
                         "dynamic shared)",
                         blockThreads, dynamicSharedBytes));
    return int64_t(multiprocessors) * perMultiprocessor;
  }

  void* allocate(size_t bytes) override {
    makeCurrent();
    void* p = nullptr;
    checkHip(hip_.malloc(&p, bytes), fmt::format("hipMalloc({} bytes)", bytes));
    return p;
  }
  void release(void* ptr) noexcept override {
    if (ptr && hip_.free) hip_.free(ptr);
  }
  void copyToDevice(void* dst, const void* src, size_t bytes) override {
    makeCurrent();
    checkHip(hip_.memcpyHtoD(dst, const_cast<void*>(src), bytes), "hipMemcpyHtoD");
  }
  void copyToHost(void* dst, const void* src, size_t bytes) override {
    makeCurrent();
    checkHip(hip_.memcpyDtoH(dst, const_cast<void*>(src), bytes), "hipMemcpyDtoH");
  }
  void synchronize(void* stream) override {
    makeCurrent();
    checkHip(hip_.streamSynchronize(stream), "hipStreamSynchronize");
  }
  std::string deviceIdentity(int device) override {
    int multiprocessors = 0, driver = 0;
    checkHip(hip_.deviceGetAttribute(&multiprocessors, kHipDeviceAttributeMultiprocessorCount, device),
             "hipDeviceGetAttribute(multiprocessor count)");
    if (hip_.driverGetVersion) hip_.driverGetVersion(&driver);
    return fmt::format("multiprocessors {}, driver {}", multiprocessors, driver);
  }
  void copyOnDevice(void* dst, const void* src, size_t bytes) override {
    if (!hip_.memcpyDtoD) return Backend::copyOnDevice(dst, src, bytes);
    makeCurrent();
    checkHip(hip_.memcpyDtoD(dst, const_cast<void*>(src), bytes), "hipMemcpyDtoD");
  }
  // 256 MiB: past the last-level cache of every AMD GPU (MI300's Infinity
  // Cache is 256 MB), as Triton's do_bench flushes.
  size_t cacheFlushBytes() override { return size_t(256) << 20; }
  void fill(void* dst, unsigned char value, size_t bytes, void* stream) override {
    if (!hip_.memsetAsync) return Backend::fill(dst, value, bytes, stream);
    makeCurrent();
    checkHip(hip_.memsetAsync(dst, value, bytes, stream), "hipMemsetAsync");
  }
  CaptureStatus captureStatus(void* stream, int /*device*/) override {
    if (!hip_.streamIsCapturing) return CaptureStatus::None;
    makeCurrent();
    int status = 0;
    checkHip(hip_.streamIsCapturing(stream, &status), "hipStreamIsCapturing");
    return status == 1 ? CaptureStatus::Active : status == 2 ? CaptureStatus::Invalidated : CaptureStatus::None;
  }
  float timeMs(void* stream, const std::function<void()>& body) override {
    makeCurrent();
    hipEvent_t start = nullptr, stop = nullptr;
    checkHip(hip_.eventCreate(&start), "hipEventCreate");
    checkHip(hip_.eventCreate(&stop), "hipEventCreate");
    float ms = 0;
    try {
      checkHip(hip_.eventRecord(start, stream), "hipEventRecord");
      body();
      checkHip(hip_.eventRecord(stop, stream), "hipEventRecord");
      checkHip(hip_.eventSynchronize(stop), "hipEventSynchronize");
      checkHip(hip_.eventElapsedTime(&ms, start, stop), "hipEventElapsedTime");
    } catch (...) {
      hip_.eventDestroy(start);
      hip_.eventDestroy(stop);
      throw;
    }
    hip_.eventDestroy(start);
    hip_.eventDestroy(stop);
    return ms;
  }

 private:
  static std::vector<std::string> hipLibraryCandidates() {
    std::vector<std::string> c;
    if (const char* p = std::getenv("SPINDLE_HIP_LIBRARY")) c.push_back(p);
    for (const char* n : {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5", "/opt/rocm/lib/libamdhip64.so"})
      c.push_back(n);
    return c;
  }

  void loadHiprtc() {
    std::lock_guard<std::mutex> lock(mu_);
    if (rtcTried_) return;
    rtcTried_ = true;
    // ROCm 6+: a separate libhiprtc; ROCm 5: inside libamdhip64.
    std::vector<std::string> c;
    if (const char* p = std::getenv("SPINDLE_HIPRTC")) c.push_back(p);
    for (const char* n : {"libhiprtc.so", "libhiprtc.so.6", "/opt/rocm/lib/libhiprtc.so"}) c.push_back(n);
    for (auto& n : hipLibraryCandidates()) c.push_back(n);
    for (const auto& candidate : c) {
      Hiprtc attempt;
      if (!attempt.lib.open({candidate}) || !attempt.lib.raw("hiprtcCompileProgram")) continue;
      rtc_.lib.open({candidate});
      break;
    }
    if (!rtc_.lib.isOpen()) {
      Hiprtc probe;
      probe.lib.open(c);
      rtcError_ = "hiprtc (the HIP run-time compiler) is not available: " +
                  (probe.lib.isOpen() ? probe.lib.path() + " has no hiprtcCompileProgram" : probe.lib.error()) +
                  "\n(install ROCm, or set SPINDLE_HIPRTC to the library that exports hiprtc)";
      return;
    }
    bool ok = rtc_.lib.sym(rtc_.version, "hiprtcVersion") && rtc_.lib.sym(rtc_.errorString, "hiprtcGetErrorString") &&
              rtc_.lib.sym(rtc_.create, "hiprtcCreateProgram") && rtc_.lib.sym(rtc_.compile, "hiprtcCompileProgram") &&
              rtc_.lib.sym(rtc_.logSize, "hiprtcGetProgramLogSize") && rtc_.lib.sym(rtc_.log, "hiprtcGetProgramLog") &&
              rtc_.lib.sym(rtc_.codeSize, "hiprtcGetCodeSize") && rtc_.lib.sym(rtc_.code, "hiprtcGetCode") &&
              rtc_.lib.sym(rtc_.destroy, "hiprtcDestroyProgram");
    if (!ok) {
      rtcError_ = rtc_.lib.path() + " lacks the hiprtc functions Spindle needs";
      return;
    }
    int major = 0, minor = 0;
    rtc_.version(&major, &minor);
    std::string file = rtc_.lib.realPath();
    identity_ = fmt::format("hiprtc {}.{} ({}, {} bytes)", major, minor, baseName(file), fileSize(file));
  }

  // hiprtc of ROCm 5.x corrupts its heap and aborts when asked for a target
  // its code object manager does not know (gfx940 on ROCm 5.2): ask comgr
  // for its ISA list first and turn that into an error.
  void requireKnownTarget(const std::string& target) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!isasLoaded_) {
      isasLoaded_ = true;
      DynLib& comgr = comgr_;
      if (comgr.open({"libamd_comgr.so", "libamd_comgr.so.3", "libamd_comgr.so.2", "/opt/rocm/lib/libamd_comgr.so"})) {
        int (*count)(size_t*) = nullptr;
        int (*name)(size_t, const char**) = nullptr;
        size_t n = 0;
        if (comgr.sym(count, "amd_comgr_get_isa_count") && comgr.sym(name, "amd_comgr_get_isa_name") && count(&n) == 0)
          for (size_t i = 0; i < n; ++i) {
            const char* isa = nullptr;
            if (name(i, &isa) != 0 || !isa) continue;
            std::string full = isa;  // "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack+"
            size_t dash = full.rfind("--");
            std::string arch = full.substr(dash == std::string::npos ? 0 : dash + 2);
            isas_.push_back(arch.substr(0, arch.find(':')));
          }
      }
    }
    if (isas_.empty()) return;  // unknown: let hiprtc decide
    std::string base = target.substr(0, target.find(':'));
    if (std::find(isas_.begin(), isas_.end(), base) == isas_.end()) {
      std::string known;
      for (const auto& i : isas_)
        if (known.find(i) == std::string::npos) known += (known.empty() ? "" : " ") + i;
      throw Error(fmt::format("{} cannot compile for {}: its code object manager ({}) knows only: {}", identity_,
                              target, baseName(comgr_.realPath()), known));
    }
  }

  void requireHiprtc() {
    loadHiprtc();
    if (!rtcError_.empty()) throw Error(rtcError_);
  }

  void loadHip() {
    std::lock_guard<std::mutex> lock(mu_);
    if (hipTried_) return;
    hipTried_ = true;
    if (!hip_.lib.open(hipLibraryCandidates())) {
      hipError_ = "no HIP runtime (libamdhip64): " + hip_.lib.error();
      return;
    }
    bool ok = hip_.lib.sym(hip_.init, "hipInit") && hip_.lib.sym(hip_.errorString, "hipGetErrorString") &&
              hip_.lib.sym(hip_.getDeviceCount, "hipGetDeviceCount") && hip_.lib.sym(hip_.setDevice, "hipSetDevice") &&
              (hip_.lib.sym(hip_.getDeviceProperties, "hipGetDevicePropertiesR0600") ||
               hip_.lib.sym(hip_.getDeviceProperties, "hipGetDeviceProperties")) &&
              hip_.lib.sym(hip_.deviceGetName, "hipDeviceGetName") &&
              hip_.lib.sym(hip_.deviceGetAttribute, "hipDeviceGetAttribute") &&
              hip_.lib.sym(hip_.moduleOccupancyMaxActiveBlocksPerMultiprocessor,
                           "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor") &&
              hip_.lib.sym(hip_.moduleLoadData, "hipModuleLoadData") &&
              hip_.lib.sym(hip_.moduleGetFunction, "hipModuleGetFunction") &&
              hip_.lib.sym(hip_.moduleLaunchKernel, "hipModuleLaunchKernel") &&
              hip_.lib.sym(hip_.malloc, "hipMalloc") && hip_.lib.sym(hip_.free, "hipFree") &&
              hip_.lib.sym(hip_.memcpyHtoD, "hipMemcpyHtoD") && hip_.lib.sym(hip_.memcpyDtoH, "hipMemcpyDtoH") &&
              hip_.lib.sym(hip_.streamSynchronize, "hipStreamSynchronize") &&
              hip_.lib.sym(hip_.eventCreate, "hipEventCreate") && hip_.lib.sym(hip_.eventRecord, "hipEventRecord") &&
              hip_.lib.sym(hip_.eventSynchronize, "hipEventSynchronize") &&
              hip_.lib.sym(hip_.eventElapsedTime, "hipEventElapsedTime") &&
              hip_.lib.sym(hip_.eventDestroy, "hipEventDestroy");
    if (!ok) {
      hipError_ = hip_.lib.path() + " lacks HIP functions Spindle needs";
      return;
    }
    hip_.lib.sym(hip_.streamIsCapturing, "hipStreamIsCapturing");  // optional: null without it
    hip_.lib.sym(hip_.memcpyDtoD, "hipMemcpyDtoD");
    hip_.lib.sym(hip_.memsetAsync, "hipMemsetAsync");
    hip_.lib.sym(hip_.driverGetVersion, "hipDriverGetVersion");
    hipError_t rc = hip_.init(0);
    if (rc != 0) hipError_ = fmt::format("hipInit: {}", hip_.errorString(rc));
  }

  void makeCurrent() {
    if (!inUse_) throw Error("HIP backend: no device in use (compile-only runtime)");
    checkHip(hip_.setDevice(device_), "hipSetDevice");
  }

  void checkHip(hipError_t rc, const std::string& what) const {
    if (rc != 0) throw Error(fmt::format("HIP: {} failed: {} ({})", what, hip_.errorString(rc), rc));
  }

  std::mutex mu_;
  Hiprtc rtc_;
  bool rtcTried_ = false;
  std::string rtcError_;
  std::string identity_;
  DynLib comgr_;
  bool isasLoaded_ = false;
  std::vector<std::string> isas_;
  Hip hip_;
  bool hipTried_ = false;
  std::string hipError_;
  int device_ = 0;
  bool inUse_ = false;
};

}  // namespace

std::unique_ptr<Backend> makeHipBackend() { return std::make_unique<HipBackend>(); }

}  // namespace spindle::rt
