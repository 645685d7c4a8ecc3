// What the cpu target compiles in front of a generated kernel: the ABI
// (runtime/cpu/spindle_cpu_abi.h) and the HIP device API for the host
// (runtime/cpu/spindle_cpu.h), embedded at build time.
#pragma once

#include <string_view>

namespace spindle::rt::cpu {
std::string_view kernelPreamble();
}  // namespace spindle::rt::cpu
