// The host C++ compiler the cpu target builds kernels with: SPINDLE_HOST_CXX
// if set, else the first of c++, g++, clang++ on PATH. Kernels become
// shared libraries (compileSharedLibrary), loaded with dlopen.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace spindle::rt::cpu {

struct HostCompiler {
  std::string path;      // absolute
  std::string identity;  // the first line of `--version`, with the path: part of the cache key
};

// Nullopt with `why` set when there is none (or SPINDLE_HOST_CXX names
// something that does not run).
std::optional<HostCompiler> findHostCompiler(std::string* why);

struct HostCompileResult {
  bool ok = false;
  std::vector<char> library;  // the .so's bytes
  std::string log;            // the compiler's output
};

// Compiles `source` (named `fileName` in diagnostics) with `options` into a
// shared library, in a private temporary directory that is removed after.
HostCompileResult compileSharedLibrary(const HostCompiler& compiler, const std::string& source,
                                       const std::string& fileName, const std::vector<std::string>& options);

}  // namespace spindle::rt::cpu
