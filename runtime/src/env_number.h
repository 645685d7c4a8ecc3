// A number the user sets through an environment variable
// (SPINDLE_CACHE_MAX_BYTES, SPINDLE_CPU_THREADS, ...): absent, or a decimal
// integer in [min, max], else spindle::Error naming the variable, its value
// and what was expected.
#pragma once

#include <cstdint>
#include <optional>

namespace spindle::rt {

// `expected` completes "spindle: NAME='VALUE': expected ...".
std::optional<uint64_t> envNumber(const char* name, uint64_t min, uint64_t max, const char* expected);

}  // namespace spindle::rt
