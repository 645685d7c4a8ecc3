// Helpers shared by the runtime tests: temporary directories and the
// hand-written kernel info / HIP sources the lower layers are tested with.
#pragma once

#include <gtest/gtest.h>
#include <spindle/runtime.hpp>

#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <string>

// EXPECT_CONTAINS(text, part): the failure shows both strings.
#define EXPECT_CONTAINS(text, part)                                        \
  do {                                                                     \
    const std::string spnText_ = (text);                                   \
    const std::string spnPart_ = (part);                                   \
    EXPECT_NE(spnText_.find(spnPart_), std::string::npos)                  \
        << "expected to find:\n  " << spnPart_ << "\nin:\n  " << spnText_; \
  } while (0)

namespace spindle::test {

// The message of the spindle::Error that `action` throws, or "(no error)":
// for tests that check what a refused call says.
template <class Action>
std::string errorFrom(Action&& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Options of a runtime on the cpu target ("cpu" or "cpu:warp64"), without
// the disk cache, checked or not.
inline RuntimeOptions cpuOptions(const std::string& target, bool checked = false) {
  RuntimeOptions o;
  o.backend = BackendKind::Cpu;
  o.target = target;
  o.diskCache = false;
  o.checked = checked;
  return o;
}

// Sets an environment variable for a scope, restoring what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, hadOld_ = true;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (hadOld_) ::setenv(name_.c_str(), old_.c_str(), 1);
    else ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_, old_;
  bool hadOld_ = false;
};

// A fresh directory under the system temp dir, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "spindle-rt-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A tensor parameter from its dims written as text ("M", "4").
inline KernelParamInfo tensorParam(const std::string& name, ScalarType t, std::vector<std::string> dims,
                                   bool strided = false, const std::string& typeParam = "") {
  KernelParamInfo p;
  p.name = name;
  p.isTensor = true;
  p.dtype = typeParam.empty() ? t : ScalarType::Invalid;
  p.typeParam = typeParam;
  p.strided = strided;
  for (auto& d : dims) {
    DimInfo di;
    if (std::isdigit(static_cast<unsigned char>(d[0]))) {
      di.value = std::stoll(d);
    } else {
      di.isSymbol = true;
      di.symbol = d;
    }
    p.dims.push_back(di);
  }
  return p;
}

inline KernelParamInfo scalarParam(const std::string& name, ScalarType t, const std::string& typeParam = "") {
  KernelParamInfo p;
  p.name = name;
  p.dtype = typeParam.empty() ? t : ScalarType::Invalid;
  p.typeParam = typeParam;
  return p;
}

// A kernel that nvrtc and hiprtc both compile with no headers at all.
inline std::string handWrittenSource(const std::string& symbol = "spn_axpy") {
  return "extern \"C\" __global__ void " + symbol +
         "(float* y, const float* x, float a, long long n) {\n"
         "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) y[i] += a * x[i];\n"
         "}\n";
}

}  // namespace spindle::test
