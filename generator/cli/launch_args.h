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

// --static N=V fixes dim N of the kernel (out.staticDims) and sizes it:
// N joins `dims`, and a --dims giving N another value is a usage error.
// Also copies --const into out.consts. Empty on success, else the error
// ("run: --static N=V disagrees with --dims N=W").
std::string applyStaticDims(const KernelSelection& sel, const std::string& command,
                            std::map<std::string, int64_t>& dims, KernelOptions& out);

// A usage error naming what --dims and --dtype leave out for `info` (every
// dim missing, else the first type parameter), or empty.
std::string missingLaunchInputs(const KernelInfo& info, const KernelSelection& sel,
                                const std::map<std::string, int64_t>& dims, const std::string& command);

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
