// A generated program as the test driver sees it: the module's text, and
// what a launch needs (dims, parameters in order, the values inputs may
// take). random_kernel.h makes them; program_runner.h launches them.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "int_model.h"

namespace spindle::cpu_fuzz {

// A dim symbol of the kernel and the values a launch may give it.
struct DimSpec {
  std::string name;
  int64_t lo = 1, hi = 1;
  // In @static: specialized in every run. The others are static in one run
  // and dynamic in another, which must agree.
  bool alwaysStatic = false;
};

// One axis of a tensor parameter: `scale * dim + offset`, or `offset` alone
// when `dim` is empty.
struct AxisSpec {
  std::string dim;
  int64_t scale = 1, offset = 0;
};

struct ParamSpec {
  enum class Kind { Input, Output, Atomic, Scalar };
  std::string name;
  Kind kind = Kind::Input;
  IntType type;
  std::vector<AxisSpec> shape;  // tensors only
  Interval values;              // inputs and scalars: the driver draws from here
  bool isTensor() const { return kind != Kind::Scalar; }
};

struct FuzzProgram {
  uint64_t seed = 0;
  std::string fileName;  // "fuzz_<seed>.spn"
  std::string text;      // the module
  std::string kernel;    // the kernel's name
  std::vector<DimSpec> dims;
  std::vector<ParamSpec> params;  // in the kernel's order
  // The program reads the warp width (lane ids, warp collectives, shuffles,
  // warp_size()), so warp 32 and warp 64 may rightly differ.
  bool widthDependent = false;
  // Constructs the program uses ("closure", "nonlocal", "block_sum", ...),
  // for the coverage summary of a run.
  std::set<std::string> features;
};

}  // namespace spindle::cpu_fuzz
