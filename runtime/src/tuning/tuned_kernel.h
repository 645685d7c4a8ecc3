// A kernel handle with @tune: one Kernel per config (made on first use),
// the choice per key bucket (memory, then the tuning store, then timing),
// and the launch. docs/runtime.md, "Autotuning", states the behavior; the
// method is tuner.h's, the side-effect-free launches scratch_args.h's.
#pragma once

#include <spindle/runtime.hpp>

#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend.h"
#include "launch_binding.h"
#include "tuning/tuning_store.h"

namespace spindle::rt {

// What every tuned kernel of one runtime shares.
struct TuneContext {
  Backend* backend = nullptr;
  bool hasDevice = false;
  std::unique_ptr<TuningStore> store;
  TuneOptions options;            // SPINDLE_TUNE_BUDGET_MS applied
  TuneMode mode = TuneMode::Off;  // options.mode or the backend's default, SPINDLE_TUNE applied
  // The device and toolchain part of every key: device name, target,
  // multiprocessors and driver, compiler, Spindle's version.
  std::string deviceText;
  std::function<void(const std::string&)> warn;
  std::atomic<uint64_t> tunings{0}, tuningLaunches{0}, storeHits{0};
};

// One launch's place among the choices: its specialization key words, then
// the bucket of each key dim (TuneInfo::keyDims, in order). Fixed size, so
// the launch path builds it without allocating.
struct TuneKey {
  int count = 0;
  int64_t words[kMaxKeyWords + kMaxDimSymbols] = {};
  bool operator==(const TuneKey& o) const {
    return count == o.count && std::memcmp(words, o.words, sizeof(int64_t) * size_t(count)) == 0;
  }
  std::vector<int64_t> vector() const { return std::vector<int64_t>(words, words + count); }
};

class TunedKernel {
 public:
  // `makeConfig(i)`: the kernel handle of config i (its consts set).
  TunedKernel(TuneContext& ctx, const KernelInfo& info, std::function<Kernel(size_t)> makeConfig);

  const TuneInfo& info() const { return *info_.tune; }
  // Config i's handle, made on first use (its address stays valid).
  const Kernel& config(size_t i);
  // "M=4096 N=1024": the key dims' buckets of `key`.
  std::string bucketText(const TuneKey& key) const;

  // The config a launch with these arguments uses: memory, store, or (as
  // the mode and capture allow) tuning now. `specText()` gives the
  // specialization's key text (for the store's key), asked only on a miss;
  // `capturing()`: the stream is being captured into a graph (no tuning),
  // asked only when there is nothing to read back.
  // `launching`: a real launch (counts toward the deferred mode's first).
  size_t choose(void* stream, const Arg* args, size_t count, const TuneKey& key,
                const std::function<std::string()>& specText, const std::function<bool()>& capturing, bool launching,
                std::string* how);

  // Tunes now (Kernel::tune).
  TuneReport tune(void* stream, const Arg* args, size_t count, const TuneKey& key,
                  const std::function<std::string()>& specText, bool retune);

 private:
  std::string keyHex(const TuneKey& key, const std::string& specText) const;
  // Reads a stored choice; -1 when there is none (or it does not fit).
  int readStored(const std::string& keyHex);
  // Times every config and stores the choice; releases the key's lease
  // when `holdsLease`. Caller holds mu_.
  TuneReport runTuning(void* stream, const Arg* args, size_t count, const TuneKey& key, const std::string& keyHex,
                       bool holdsLease);

  TuneContext& ctx_;
  KernelInfo info_;
  std::function<Kernel(size_t)> makeConfig_;
  std::mutex mu_;
  std::mutex configMu_;
  std::vector<std::unique_ptr<Kernel>> configs_;
  struct Choice {
    int config = -1;
    std::string how;   // "tuned", "stored", "default"
    int launches = 0;  // deferred mode: launches on the default before tuning
  };
  std::map<std::vector<int64_t>, Choice> choices_;
  // The last key answered from memory and its config: repeated launches of
  // one shape skip the map.
  TuneKey lastKey_;
  int lastConfig_ = -1;
};

// The blob stored per key: readable text naming the kernel, the bucket,
// the configs and the choice (with each config's median).
std::string tuneRecord(const TuneReport& r, const std::string& configList);
// The chosen config's text from a record, and the config list it was made
// for; false when `blob` is not a record.
bool parseTuneRecord(const std::string& blob, std::string& chosen, std::string& configList);

}  // namespace spindle::rt
