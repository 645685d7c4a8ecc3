// The hand-written CUDA kernels (bench/parity/handwritten/*.cu), embedded at
// build time, compiled with nvrtc for the device's sm_XX and loaded with
// the driver.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cuda_api.hpp"

namespace parity {

struct EmbeddedFile {
  const char* name;  // "softmax.cu", "common.cuh"
  const char* text;
};
// Every file of bench/parity/handwritten/, sorted by name (generated:
// embed_handwritten.cmake).
const std::vector<EmbeddedFile>& embeddedFiles();

// The CUBIN of one embedded .cu for `arch`, with `defines` ("N=8192") as
// -D options; every embedded .cuh is available to #include. Throws
// std::runtime_error with nvrtc's log.
std::vector<char> compileHandwritten(const Nvrtc& nvrtc, const std::string& file, const std::string& arch,
                                     const std::vector<std::string>& defines = {});

// The loaded modules of the hand-written files, one per (file, defines).
class HandwrittenModules {
 public:
  HandwrittenModules(const Driver* driver, const Nvrtc& nvrtc, std::string arch)
      : driver_(driver), nvrtc_(nvrtc), arch_(std::move(arch)) {}
  CUfunction function(const std::string& file, const std::string& kernel, const std::vector<std::string>& defines = {});

 private:
  const Driver* driver_;
  const Nvrtc& nvrtc_;
  std::string arch_;
  std::map<std::string, CUmodule> modules_;
};

}  // namespace parity
