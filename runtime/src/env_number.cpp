#include "env_number.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>

#include <spindle/runtime.hpp>

namespace spindle::rt {

std::optional<uint64_t> envNumber(const char* name, uint64_t min, uint64_t max, const char* expected) {
  const char* text = std::getenv(name);
  if (!text) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  // strtoull takes a sign ("-1" wraps around): digits only.
  if (end == text || *end != '\0' || *text < '0' || *text > '9' || errno == ERANGE || v < min || v > max)
    throw Error(fmt::format("spindle: {}='{}': expected {}", name, text, expected));
  return v;
}

}  // namespace spindle::rt
