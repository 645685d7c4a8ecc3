// The CUDA driver and nvrtc, opened with dlopen at run time (as gpu_check
// and the Spindle runtime do), so the parity benchmark links only
// Spindle::runtime and builds on machines without CUDA. Only what the
// benchmark needs is declared; every call's result is checked and a failure
// throws std::runtime_error naming the call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace parity {

using CUresult = int;
using CUfunction = void*;
using CUmodule = void*;

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

// nvrtc: CUDA C++ source to a CUBIN for one sm_XX.
class Nvrtc {
 public:
  // False (and why) when no libnvrtc is found or it lacks a function.
  bool open(std::string* why);
  const std::string& identity() const { return identity_; }  // "nvrtc 13.0 (/usr/local/cuda/lib64/libnvrtc.so.13)"
  // `headers`: (include name, text) pairs the source may #include.
  // Throws std::runtime_error with nvrtc's log when the source does not compile.
  std::vector<char> compile(const std::string& source, const std::string& name, const std::string& arch,
                            const std::vector<std::pair<std::string, std::string>>& headers,
                            const std::vector<std::string>& options) const;

 private:
  void* lib_ = nullptr;
  std::string identity_, includeDir_;
  int (*version_)(int*, int*) = nullptr;
  const char* (*errorString_)(int) = nullptr;
  int (*create_)(void**, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  int (*compile_)(void*, int, const char* const*) = nullptr;
  int (*logSize_)(void*, size_t*) = nullptr;
  int (*log_)(void*, char*) = nullptr;
  int (*cubinSize_)(void*, size_t*) = nullptr;
  int (*cubin_)(void*, char*) = nullptr;
  int (*destroy_)(void**) = nullptr;
};

// The driver, used in the context the Spindle runtime made current (its
// primary context), on the default stream as the runtime's launches.
class Driver {
 public:
  bool open(std::string* why);
  void check(CUresult rc, const char* what) const;  // throws with cuGetErrorName/String
  int attribute(int attr) const;                    // of the current context's device
  std::string arch() const;                         // "sm_90"
  int multiprocessors() const;
  int l2Bytes() const;
  CUmodule loadModule(const std::vector<char>& cubin) const;
  CUfunction function(CUmodule module, const std::string& name) const;
  // Asynchronous on the default stream; `params` as cuLaunchKernel takes them.
  void launch(CUfunction f, Dim3 grid, Dim3 block, unsigned sharedBytes, void** params) const;
  int blocksPerMultiprocessor(CUfunction f, int blockSize, size_t sharedBytes) const;
  void synchronize() const;  // cuCtxSynchronize: also reports an earlier launch's fault

 private:
  void* lib_ = nullptr;
  CUresult (*getErrorName_)(CUresult, const char**) = nullptr;
  CUresult (*getErrorString_)(CUresult, const char**) = nullptr;
  CUresult (*ctxGetDevice_)(int*) = nullptr;
  CUresult (*deviceGetAttribute_)(int*, int, int) = nullptr;
  CUresult (*moduleLoadData_)(CUmodule*, const void*) = nullptr;
  CUresult (*moduleGetFunction_)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*launchKernel_)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*,
                            void**, void**) = nullptr;
  CUresult (*occupancy_)(int*, CUfunction, int, size_t) = nullptr;
  CUresult (*ctxSynchronize_)() = nullptr;
};

}  // namespace parity
