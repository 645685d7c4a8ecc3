// When the runtime library is not built (-DSPINDLE_BUILD_RUNTIME=OFF),
// `compile` and `run` say so instead of failing to link.

#include <cstdio>

#include "commands.h"

namespace spindle::cli {

static int noRuntime(const char* command) {
  std::fprintf(stderr, "spindle: error: '%s' needs the runtime, and this build has none (SPINDLE_BUILD_RUNTIME=OFF)\n",
               command);
  return 1;
}
int cmdCompile(const Args&) { return noRuntime("compile"); }
int cmdRun(const Args&) { return noRuntime("run"); }
int cmdTune(const Args&) { return noRuntime("tune"); }

}  // namespace spindle::cli
