#include "tuning/tune_space.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

namespace spindle::rt {

std::map<std::string, ConstOverride> configConsts(const TuneInfo& tune, size_t index) {
  std::map<std::string, ConstOverride> out;
  for (size_t i = 0; i < tune.consts.size(); ++i) out[tune.consts[i]] = ConstOverride::ofInt(tune.configs[index][i]);
  return out;
}

std::string configText(const TuneInfo& tune, size_t index) {
  std::string out;
  for (size_t i = 0; i < tune.consts.size(); ++i)
    out += fmt::format("{}{}={}", i ? " " : "", tune.consts[i], tune.configs[index][i]);
  return out;
}

int findConfig(const TuneInfo& tune, const std::string& text) {
  for (size_t i = 0; i < tune.configs.size(); ++i)
    if (configText(tune, i) == text) return int(i);
  return -1;
}

std::string configListText(const TuneInfo& tune) {
  std::string out;
  for (size_t i = 0; i < tune.configs.size(); ++i) out += (i ? "; " : "") + configText(tune, i);
  return out;
}

int64_t bucketOf(int64_t value, int64_t base) {
  if (base <= 1 || value <= 1) return value;
  int64_t b = 1;
  while (b < value) {
    if (b > INT64_MAX / base) return INT64_MAX;  // past the largest power: one bucket
    b *= base;
  }
  return b;
}

TuneMode tuneModeFromEnv(TuneMode mode) {
  const char* v = std::getenv("SPINDLE_TUNE");
  if (!v || !*v || std::strcmp(v, "1") == 0) return mode;
  if (std::strcmp(v, "0") == 0) return TuneMode::Off;
  if (std::strcmp(v, "blocking") == 0) return TuneMode::Blocking;
  if (std::strcmp(v, "deferred") == 0) return TuneMode::Deferred;
  throw Error(fmt::format("spindle: SPINDLE_TUNE='{}': expected 0, 1, blocking or deferred", v));
}

}  // namespace spindle::rt
