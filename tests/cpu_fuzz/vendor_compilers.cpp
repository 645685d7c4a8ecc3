#include "vendor_compilers.h"

#include <sys/wait.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace spindle::cpu_fuzz {
namespace {

std::optional<std::string> onPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::string dirs = path;
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string candidate = dirs.substr(start, end - start) + "/" + name;
    if (!dirs.substr(start, end - start).empty() && std::ifstream(candidate).good()) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

// Runs `command` (stdout and stderr together); its output if it fails.
std::string run(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return "cannot run: " + command;
  std::string output;
  char chunk[4096];
  while (size_t n = std::fread(chunk, 1, sizeof chunk, pipe)) output.append(chunk, n);
  const int status = pclose(pipe);
  if (status == 0) return "";
  return command + "\nexit status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + "\n" + output;
}

}  // namespace

std::optional<VendorCompiler> findHipcc() {
  if (auto p = onPath("hipcc")) return VendorCompiler{"hipcc (gfx90a)", *p, false};
  return std::nullopt;
}

std::optional<VendorCompiler> findNvcc() {
  if (auto p = onPath("nvcc")) return VendorCompiler{"nvcc (sm_90)", *p, true};
  if (std::ifstream("/usr/local/cuda/bin/nvcc").good())
    return VendorCompiler{"nvcc (sm_90)", "/usr/local/cuda/bin/nvcc", true};
  return std::nullopt;
}

std::string compileSource(const VendorCompiler& c, const std::string& dir, const std::string& stem,
                          const std::string& source) {
  const std::string file = dir + "/" + stem + (c.nvidia ? ".cu" : ".hip");
  std::ofstream(file) << source;
  // Device code only, through the backend: what the runtime's compilers
  // do with the same text (hiprtc, nvrtc).
  if (c.nvidia) return run("'" + c.path + "' -arch=sm_90 -std=c++17 -cubin '" + file + "' -o '" + file + ".cubin'");
  return run("'" + c.path + "' --offload-arch=gfx90a -std=c++17 -Werror=return-type --cuda-device-only -c '" + file +
             "' -o '" + file + ".o'");
}

}  // namespace spindle::cpu_fuzz
