// Launching a generated program (fuzz_program.h) on the cpu target: its
// dims and inputs drawn from a seed, then one launch per configuration
// (warp width, dims static or dynamic), each returning the bytes of every
// tensor the kernel writes.
#pragma once

#include <spindle/runtime.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fuzz_program.h"

namespace spindle::cpu_fuzz {

using Bytes = std::vector<unsigned char>;

// One launch's arguments on the host: every dim's value, and per parameter
// its bytes (tensors: inputs drawn from their intervals, outputs filled
// with a fixed pattern so that an element left alone compares too) or its
// value (scalars).
struct LaunchData {
  std::map<std::string, int64_t> dims;
  std::vector<Bytes> tensors;     // per parameter (empty for scalars)
  std::vector<uint64_t> scalars;  // per parameter: the value's bits (0 for tensors)
};

LaunchData drawLaunch(const FuzzProgram& p, uint64_t seed);

// Where a program runs.
struct Config {
  int warp = 32;             // 32 or 64: the cpu target's warp width
  bool staticDims = false;   // every dim static, or only those in @static
  std::string name() const;  // "warp32 static"
};

// The bytes of every written tensor (outputs and atomics), in parameter
// order. Throws spindle::Error for a module that does not compile or a
// launch that fails (an out-of-bounds access, a failed assert).
std::vector<Bytes> runProgram(Runtime& rt, const FuzzProgram& p, const LaunchData& data, const Config& c);

// The specialization a configuration compiles: its static dims' values.
std::map<std::string, int64_t> staticValues(const FuzzProgram& p, const LaunchData& data, bool staticDims);

// Where two runs' written tensors first differ, "" if nowhere.
std::string firstDifference(const FuzzProgram& p, const std::vector<Bytes>& a, const std::vector<Bytes>& b);

}  // namespace spindle::cpu_fuzz
