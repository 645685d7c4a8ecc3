// The arguments `spindle run` and `spindle tune` launch a kernel with:
// every tensor sized from --dims, filled with random values in device
// memory (or distinct stand-in addresses without a device), scalars from
// --scalar.
#pragma once

#include <spindle/runtime.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "spec_options.h"

namespace spindle::cli {

// "M=4096,N=128" -> {M: 4096, N: 128}; std::invalid_argument when malformed.
void parseDims(const std::string& text, std::map<std::string, int64_t>& out);
// "--scalar a=2.5": out[a] = 2.5; std::invalid_argument when malformed.
void parseScalar(const std::string& text, std::map<std::string, double>& out);

struct LaunchArgs {
  std::vector<DeviceBuffer> buffers;
  std::vector<Arg> args;
  uint64_t bytes = 0;  // every tensor counted once
};

// Empty string on success, else what is missing or wrong (a usage error).
std::string makeLaunchArgs(Runtime& runtime, const KernelInfo& info, const KernelSelection& sel,
                           const std::map<std::string, int64_t>& dims, const std::map<std::string, double>& scalars,
                           const std::string& command, LaunchArgs& out);

}  // namespace spindle::cli
