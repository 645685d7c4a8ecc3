# Writes OUT: a C++ file whose spindle::rt::cpu::kernelPreamble() returns the
# text the cpu target puts in front of every generated kernel: the ABI
# (spindle_cpu_abi.h) and the HIP device API on the host (spindle_cpu.h).
file(READ ${DIR}/spindle_cpu_abi.h abi)
file(READ ${DIR}/spindle_cpu.h api)
file(WRITE ${OUT} "// Generated from runtime/cpu/*.h by embed_cpu_headers.cmake. Do not edit.
#include <string_view>
namespace spindle::rt::cpu {
std::string_view kernelPreamble() {
  static constexpr std::string_view text = R\"SPINDLE_CPU(${abi}${api})SPINDLE_CPU\";
  return text;
}
}  // namespace spindle::rt::cpu
")
