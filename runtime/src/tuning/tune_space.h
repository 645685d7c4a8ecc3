// A kernel's @tune as the runtime uses it: the configs as const overrides,
// their text, the key dims' buckets, and the tuning controls
// (SPINDLE_TUNE). docs/runtime.md, "Autotuning".
#pragma once

#include <spindle/runtime.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace spindle::rt {

// Config `index` of `tune` as the module consts it sets.
std::map<std::string, ConstOverride> configConsts(const TuneInfo& tune, size_t index);
// "BLOCK=256 VEC=8": how reports, warnings and the store name a config.
std::string configText(const TuneInfo& tune, size_t index);
// The index of the config `text` names, or -1.
int findConfig(const TuneInfo& tune, const std::string& text);
// Every config in order, one line: part of the tuning key, so a changed
// list (a value added, a `where` changed) tunes again.
std::string configListText(const TuneInfo& tune);

// The bucket of a key dim's value: the smallest power of `base` at least
// `value` (base 2: 1000 -> 1024, 1024 -> 1024, 1025 -> 2048); the value
// itself when base is 0 (bucket=exact).
int64_t bucketOf(int64_t value, int64_t base);

// SPINDLE_TUNE: "0" is TuneMode::Off, "1" leaves `mode`, "blocking" is
// TuneMode::Blocking, "deferred" TuneMode::Deferred; anything else is an Error.
TuneMode tuneModeFromEnv(TuneMode mode);

}  // namespace spindle::rt
