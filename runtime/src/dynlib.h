// A library opened with dlopen at run time, so that Spindle builds and runs
// (compile-only) on machines without ROCm, CUDA or a GPU driver.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace spindle::rt {

class DynLib {
 public:
  DynLib() = default;
  ~DynLib();
  DynLib(const DynLib&) = delete;
  DynLib& operator=(const DynLib&) = delete;

  // Tries each candidate in order; false (with `error()` saying what was
  // tried) when none opens.
  bool open(const std::vector<std::string>& candidates);
  bool isOpen() const { return handle_ != nullptr; }
  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }
  // The file that was loaded, symlinks resolved: "/usr/local/cuda-13.0/lib/libnvrtc.so.13.0.88".
  std::string realPath() const;

  // The symbol, or nullptr. `sym(fp, "name")` assigns a function pointer.
  void* raw(const char* name) const;
  template <typename F>
  bool sym(F& fp, const char* name) const {
    fp = reinterpret_cast<F>(raw(name));
    return fp != nullptr;
  }

 private:
  void* handle_ = nullptr;
  std::string path_;
  std::string error_;
};

// Size of a file, 0 if unknown. Compiler identities include their library's
// size, which tells patch releases apart where the version API does not.
uint64_t fileSize(const std::string& path);
std::string baseName(const std::string& path);   // "/a/b/c.so" -> "c.so"
std::string parentDir(const std::string& path);  // "/a/b/c.so" -> "/a/b"

}  // namespace spindle::rt
