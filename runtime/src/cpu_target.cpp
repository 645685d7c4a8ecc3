// The cpu target's names, known to every build; the target itself
// (cpu/backend_cpu.cpp) is built only where Boost.Context is found.
#include "backend.h"

namespace spindle::rt {

int cpuWarpSize(const std::string& target) {
  if (target == "cpu" || target == "cpu:warp32") return 32;
  if (target == "cpu:warp64") return 64;
  return 0;
}

#if !SPINDLE_HAVE_CPU_TARGET
std::unique_ptr<Backend> makeCpuBackend() {
  throw Error(
      "spindle: this build of Spindle has no cpu target: Boost.Context was not found when it was built "
      "(install libboost-context-dev, or run scripts/setup.sh, and rebuild)");
}
#endif

}  // namespace spindle::rt
