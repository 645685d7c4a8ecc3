// A CPU-target launch: the grid's blocks shared out among worker OS threads
// (one per core, SPINDLE_CPU_THREADS to change it), each running its
// blocks one at a time with a BlockRunner. Returns when every block has
// run, or throws spindle::Error with the first failure (the other workers
// stop taking blocks).
#pragma once

#include <cstddef>
#include <cstdint>

#include "spindle_cpu_abi.h"

namespace spindle::rt::cpu {

// The table a kernel library calls back through (__spn_cpu_bind).
const __spn_cpu_api& runtimeApi();

struct BlockShape {
  __spn_cpu_dim3 grid, block;
  unsigned warpSize = 32;
  uint64_t dynamicSharedBytes = 0;
};

// Worker threads a launch uses: SPINDLE_CPU_THREADS, else the host's cores.
unsigned workerThreads();

// The order a block's threads run in (BlockRunner): SPINDLE_CPU_SCHEDULE, a
// seed; 0 (the default) runs them in thread order.
uint64_t scheduleSeed();

// A launch's time limit in seconds: SPINDLE_CPU_TIMEOUT_S, else 60; 0: none.
// Past it, checked builds' `while` loops fail the launch (spindle_cpu.h).
unsigned launchTimeoutSeconds();

void runGrid(const BlockShape& shape, __spn_cpu_entry_fn entry, void** args, size_t stackBytes);

}  // namespace spindle::rt::cpu
