// A random valid Spindle module from a seed (issue 16, item 5): one kernel
// over integers only, written grammar- and type-directed (expr_gen.h,
// stmt_gen.h) so that it is valid and free of undefined behaviour by
// construction, and deterministic: every element is stored by one thread,
// atomics only combine in an order-independent way, barriers and
// collectives sit where control flow is uniform. Its result may depend on
// the warp width only when FuzzProgram::widthDependent says so.
//
// The same seed gives the same program on every machine.
#pragma once

#include <cstdint>

#include "fuzz_program.h"

namespace spindle::cpu_fuzz {

FuzzProgram randomKernel(uint64_t seed);

}  // namespace spindle::cpu_fuzz
