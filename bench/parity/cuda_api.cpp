#include "cuda_api.hpp"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <cstdlib>
#include <stdexcept>
#include <type_traits>

namespace parity {
namespace {

template <class F>
bool symbol(void* lib, F& fn, const char* name) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr;
}

std::string parentDir(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// Driver API constants (cuda.h).
constexpr int kComputeCapabilityMajor = 75, kComputeCapabilityMinor = 76, kMultiprocessorCount = 16, kL2CacheSize = 38;

}  // namespace

// ---------------------------------------------------------------- nvrtc

bool Nvrtc::open(std::string* why) {
  // The Spindle runtime's own search order (runtime/src/backend_cuda.cpp).
  std::vector<std::string> candidates;
  if (const char* p = std::getenv("SPINDLE_NVRTC")) candidates.push_back(p);
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* home = std::getenv(var)) candidates.push_back(std::string(home) + "/lib64/libnvrtc.so");
  for (const char* n : {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"}) candidates.push_back(n);
  candidates.push_back("/usr/local/cuda/lib64/libnvrtc.so");
  for (const auto& c : candidates)
    if ((lib_ = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
  if (!lib_) {
    if (why) *why = "no libnvrtc (set CUDA_HOME or SPINDLE_NVRTC)";
    return false;
  }
  if (!(symbol(lib_, version_, "nvrtcVersion") && symbol(lib_, errorString_, "nvrtcGetErrorString") &&
        symbol(lib_, create_, "nvrtcCreateProgram") && symbol(lib_, compile_, "nvrtcCompileProgram") &&
        symbol(lib_, logSize_, "nvrtcGetProgramLogSize") && symbol(lib_, log_, "nvrtcGetProgramLog") &&
        symbol(lib_, cubinSize_, "nvrtcGetCUBINSize") && symbol(lib_, cubin_, "nvrtcGetCUBIN") &&
        symbol(lib_, destroy_, "nvrtcDestroyProgram"))) {
    if (why) *why = "libnvrtc lacks a function the benchmark needs (nvrtcGetCUBIN needs CUDA 11.1+)";
    return false;
  }
  std::string path;
  if (link_map* map = nullptr; dlinfo(lib_, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) path = map->l_name;
  int major = 0, minor = 0;
  version_(&major, &minor);
  identity_ = "nvrtc " + std::to_string(major) + "." + std::to_string(minor) + " (" + path + ")";
  // <cuda_bf16.h> and friends: beside the library's lib64/, else the usual places.
  std::vector<std::string> dirs;
  if (!path.empty()) {
    char* real = realpath(path.c_str(), nullptr);
    if (real) dirs.push_back(parentDir(parentDir(real)) + "/include"), std::free(real);
  }
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* home = std::getenv(var)) dirs.push_back(std::string(home) + "/include");
  dirs.push_back("/usr/local/cuda/include");
  for (const auto& d : dirs)
    if (exists(d + "/cuda_fp16.h")) {
      includeDir_ = d;
      break;
    }
  return true;
}

std::vector<char> Nvrtc::compile(const std::string& source, const std::string& name, const std::string& arch,
                                 const std::vector<std::pair<std::string, std::string>>& headers,
                                 const std::vector<std::string>& options) const {
  std::vector<const char*> headerTexts, headerNames;
  for (const auto& [n, text] : headers) headerNames.push_back(n.c_str()), headerTexts.push_back(text.c_str());
  void* prog = nullptr;
  int rc = create_(&prog, source.c_str(), name.c_str(), int(headers.size()), headerTexts.data(), headerNames.data());
  if (rc != 0) throw std::runtime_error("nvrtcCreateProgram(" + name + "): " + errorString_(rc));
  // The Spindle runtime's options (runtime/src/backend_cuda.cpp), so both
  // sides are compiled alike, plus the caller's (-D...).
  std::vector<std::string> all = {"--std=c++17", "-arch=" + arch};
  if (!includeDir_.empty()) all.push_back("-I" + includeDir_);
  all.insert(all.end(), options.begin(), options.end());
  std::vector<const char*> argv;
  for (const auto& o : all) argv.push_back(o.c_str());
  rc = compile_(prog, int(argv.size()), argv.data());
  std::string log;
  size_t size = 0;
  if (logSize_(prog, &size) == 0 && size > 1) {
    log.resize(size);
    log_(prog, log.data());
    log.resize(size - 1);
  }
  std::vector<char> cubin;
  if (rc == 0 && cubinSize_(prog, &size) == 0 && size > 0) {
    cubin.resize(size);
    if (cubin_(prog, cubin.data()) != 0) cubin.clear();
  }
  destroy_(&prog);
  if (rc != 0 || cubin.empty())
    throw std::runtime_error("nvrtc could not compile " + name + " for " + arch + ": " +
                             (rc != 0 ? errorString_(rc) : "no CUBIN") + "\n" + log);
  return cubin;
}

// ---------------------------------------------------------------- driver

bool Driver::open(std::string* why) {
  lib_ = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) {
    if (why) *why = "no CUDA driver (libcuda.so.1)";
    return false;
  }
  if (!(symbol(lib_, getErrorName_, "cuGetErrorName") && symbol(lib_, getErrorString_, "cuGetErrorString") &&
        symbol(lib_, ctxGetDevice_, "cuCtxGetDevice") && symbol(lib_, deviceGetAttribute_, "cuDeviceGetAttribute") &&
        symbol(lib_, moduleLoadData_, "cuModuleLoadData") && symbol(lib_, moduleGetFunction_, "cuModuleGetFunction") &&
        symbol(lib_, launchKernel_, "cuLaunchKernel") &&
        symbol(lib_, occupancy_, "cuOccupancyMaxActiveBlocksPerMultiprocessor") &&
        symbol(lib_, ctxSynchronize_, "cuCtxSynchronize"))) {
    if (why) *why = "libcuda.so.1 lacks a function the benchmark needs";
    return false;
  }
  return true;
}

void Driver::check(CUresult rc, const char* what) const {
  if (rc == 0) return;
  const char* name = nullptr;
  const char* text = nullptr;
  getErrorName_(rc, &name);
  getErrorString_(rc, &text);
  throw std::runtime_error(std::string(what) + ": " + (name ? name : "?") + " (" + (text ? text : "?") + ")");
}

int Driver::attribute(int attr) const {
  int device = 0, value = 0;
  check(ctxGetDevice_(&device), "cuCtxGetDevice");
  check(deviceGetAttribute_(&value, attr, device), "cuDeviceGetAttribute");
  return value;
}

std::string Driver::arch() const {
  return "sm_" + std::to_string(attribute(kComputeCapabilityMajor)) +
         std::to_string(attribute(kComputeCapabilityMinor));
}

int Driver::multiprocessors() const { return attribute(kMultiprocessorCount); }
int Driver::l2Bytes() const { return attribute(kL2CacheSize); }

CUmodule Driver::loadModule(const std::vector<char>& cubin) const {
  CUmodule m = nullptr;
  check(moduleLoadData_(&m, cubin.data()), "cuModuleLoadData");
  return m;
}

CUfunction Driver::function(CUmodule module, const std::string& name) const {
  CUfunction f = nullptr;
  check(moduleGetFunction_(&f, module, name.c_str()), ("cuModuleGetFunction(" + name + ")").c_str());
  return f;
}

void Driver::launch(CUfunction f, Dim3 grid, Dim3 block, unsigned sharedBytes, void** params) const {
  check(launchKernel_(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, sharedBytes, nullptr, params, nullptr),
        "cuLaunchKernel");
}

int Driver::blocksPerMultiprocessor(CUfunction f, int blockSize, size_t sharedBytes) const {
  int n = 0;
  check(occupancy_(&n, f, blockSize, sharedBytes), "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  return n;
}

void Driver::synchronize() const { check(ctxSynchronize_(), "cuCtxSynchronize"); }

}  // namespace parity
