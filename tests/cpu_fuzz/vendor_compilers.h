// The vendors' compilers on generated HIP, as tests/golden/compile_goldens.sh
// runs them: hipcc for gfx90a and nvcc for sm_90 (on a .cu copy), device
// code only, with the runtime's -std=c++17.
#pragma once

#include <optional>
#include <string>

namespace spindle::cpu_fuzz {

struct VendorCompiler {
  std::string name;  // "hipcc (gfx90a)"
  std::string path;
  bool nvidia = false;
};

// The compiler if it is installed (hipcc on PATH; nvcc on PATH or in
// /usr/local/cuda/bin).
std::optional<VendorCompiler> findHipcc();
std::optional<VendorCompiler> findNvcc();

// Compiles `source` as `dir/stem` (.hip or .cu); "" when it compiles, else
// the compiler's output.
std::string compileSource(const VendorCompiler& c, const std::string& dir, const std::string& stem,
                          const std::string& source);

}  // namespace spindle::cpu_fuzz
