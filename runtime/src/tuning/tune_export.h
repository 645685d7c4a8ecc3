// `spindle tune --export/--import` and Runtime::exportTuning/importTuning:
// a tuning store's entries as one JSON file an application ships.
//
//   {"spindle_tuning": 1, "entries": [
//     {"key": "<64 hex>", "record": "spindle-tune-record 1\nkernel ...\n"}, ...]}
//
// The record is the stored blob (tuned_kernel.h, tuneRecord), readable as it
// is. Import checks each key and record and writes them through the store.
#pragma once

#include <string>

#include "tuning/tuning_store.h"

namespace spindle::rt {

std::string exportTuningJson(TuningStore& store, size_t* entries);
// Error when `text` is not such a file (nothing is written then).
size_t importTuningJson(TuningStore& store, const std::string& text);

}  // namespace spindle::rt
