#include "tuning/tuned_kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <sstream>
#include <thread>

#include "sha256.h"
#include "tuning/scratch_args.h"
#include "tuning/tune_space.h"
#include "tuning/tuner.h"

namespace spindle::rt {
namespace {

// The method's own version: part of every key, so a changed method retunes.
constexpr int kMethodVersion = 1;

double nowMs() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string firstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

std::string tuneRecord(const TuneReport& r, const std::string& configList) {
  std::string out = fmt::format("spindle-tune-record 1\nkernel {}\nbucket {}\nconfigs {}\nchosen {}\n", r.kernel,
                                r.bucket, configList, r.configs[size_t(r.chosen)]);
  out += "median_ms";
  for (double m : r.medianMs) out += m < 0 ? std::string(" -") : fmt::format(" {:.6g}", m);
  out += "\n";
  return out;
}

bool parseTuneRecord(const std::string& blob, std::string& chosen, std::string& configList) {
  std::istringstream in(blob);
  std::string line;
  bool header = false, haveChosen = false, haveList = false;
  while (std::getline(in, line)) {
    if (line == "spindle-tune-record 1") header = true;
    else if (line.rfind("chosen ", 0) == 0) chosen = line.substr(7), haveChosen = true;
    else if (line.rfind("configs ", 0) == 0) configList = line.substr(8), haveList = true;
  }
  return header && haveChosen && haveList;
}

TunedKernel::TunedKernel(TuneContext& ctx, const KernelInfo& info, std::function<Kernel(size_t)> makeConfig)
    : ctx_(ctx), info_(info), makeConfig_(std::move(makeConfig)), configs_(info.tune->configs.size()) {}

const Kernel& TunedKernel::config(size_t i) {
  std::lock_guard<std::mutex> lock(configMu_);
  if (!configs_[i]) configs_[i] = std::make_unique<Kernel>(makeConfig_(i));
  return *configs_[i];
}

std::string TunedKernel::bucketText(const TuneKey& key) const {
  const auto& dims = info().keyDims;
  std::string out;
  for (size_t i = 0; i < dims.size(); ++i)
    out += fmt::format("{}{}={}", i ? " " : "", dims[i], key.words[size_t(key.count) - dims.size() + i]);
  return out;
}

std::string TunedKernel::keyHex(const TuneKey& key, const std::string& specText) const {
  std::string text =
      fmt::format("spindle-tune-key {}\n{}kernel {}\nspecialization {}\nconfigs {}\nbucket {}\nbucket rule {}\n",
                  kMethodVersion, ctx_.deviceText, info_.name, specText, configListText(info()), bucketText(key),
                  info().bucketBase ? fmt::format("powers of {}", info().bucketBase) : std::string("exact"));
  return toHex(sha256(text.data(), text.size()));
}

int TunedKernel::readStored(const std::string& keyHex) {
  if (!ctx_.store) return -1;
  auto blob = ctx_.store->get(keyHex);
  if (!blob) return -1;
  std::string chosen, list;
  if (!parseTuneRecord(std::string(blob->begin(), blob->end()), chosen, list) || list != configListText(info()))
    return -1;
  int index = findConfig(info(), chosen);
  if (index >= 0) ++ctx_.storeHits;
  return index;
}

size_t TunedKernel::choose(void* stream, const Arg* args, size_t count, const TuneKey& key,
                           const std::function<std::string()>& specText, const std::function<bool()>& capturing,
                           bool launching, std::string* how) {
  auto answer = [&](int config, const char* h) {
    if (how) *how = h;
    return size_t(config);
  };
  if (ctx_.mode == TuneMode::Off) return answer(0, "default");
  std::lock_guard<std::mutex> lock(mu_);
  if (lastConfig_ >= 0 && !how && key == lastKey_) return size_t(lastConfig_);  // the launch path's hit
  Choice& c = choices_[key.vector()];
  if (c.config >= 0) {
    lastKey_ = key;
    lastConfig_ = c.config;
    return answer(c.config, c.how.c_str());
  }
  std::string hex = keyHex(key, specText());
  if (int stored = readStored(hex); stored >= 0) {
    c.config = stored;
    c.how = "stored";
    return answer(stored, "stored");
  }
  // No tuning inside graph capture, nor without a device (compile-only),
  // nor on the deferred mode's first launch of a bucket.
  if (!launching || !ctx_.hasDevice || capturing()) return answer(0, "default");
  if (ctx_.mode == TuneMode::Deferred && c.launches++ == 0) return answer(0, "default");
  // Another process tuning this key: wait for its result, bounded.
  if (ctx_.store && !ctx_.store->tryLease(hex)) {
    double deadline = nowMs() + ctx_.options.waitMs;
    while (nowMs() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      if (int stored = readStored(hex); stored >= 0) {
        c.config = stored;
        c.how = "stored";
        return answer(stored, "stored");
      }
      if (ctx_.store->tryLease(hex)) goto tune;  // its holder gave up or died
    }
    if (ctx_.warn)
      ctx_.warn(fmt::format("spindle: warning: {} ({}): another process is tuning it; using the default config {}",
                            info_.name, bucketText(key), configText(info(), 0)));
    c.config = 0;
    c.how = "default";
    return answer(0, "default");
  }
tune:
  TuneReport r = runTuning(stream, args, count, key, hex, /*holdsLease=*/true);
  c.config = r.chosen;
  c.how = "tuned";
  return answer(r.chosen, "tuned");
}

TuneReport TunedKernel::tune(void* stream, const Arg* args, size_t count, const TuneKey& key,
                             const std::function<std::string()>& specText, bool retune) {
  if (!ctx_.hasDevice) throw Error(fmt::format("{}: cannot tune without a device (compile-only runtime)", info_.name));
  std::lock_guard<std::mutex> lock(mu_);
  std::string hex = keyHex(key, specText());
  if (!retune) {
    if (int stored = readStored(hex); stored >= 0) {
      TuneReport r;
      r.kernel = info_.name;
      r.keyHex = hex;
      r.bucket = bucketText(key);
      for (size_t i = 0; i < info().configs.size(); ++i) r.configs.push_back(configText(info(), i));
      r.medianMs.assign(r.configs.size(), -1);
      r.failures.assign(r.configs.size(), "");
      r.chosen = stored;
      r.stored = true;
      choices_[key.vector()] = Choice{stored, "stored", 0};
      lastConfig_ = -1;
      return r;
    }
  }
  // Ahead-of-time tuning is asked for: it tunes even when another process
  // holds the lease (and then leaves that lease alone).
  bool leased = !ctx_.store || ctx_.store->tryLease(hex);
  TuneReport r = runTuning(stream, args, count, key, hex, leased);
  choices_[key.vector()] = Choice{r.chosen, "tuned", 0};
  lastConfig_ = -1;
  return r;
}

TuneReport TunedKernel::runTuning(void* stream, const Arg* args, size_t count, const TuneKey& key,
                                  const std::string& keyHex, bool holdsLease) {
  struct Lease {  // released however tuning ends
    TuningStore* store;
    const std::string& key;
    ~Lease() {
      if (store) store->releaseLease(key);
    }
  } lease{holdsLease ? ctx_.store.get() : nullptr, keyHex};
  const TuneInfo& t = info();
  const size_t n = t.configs.size();
  TuneReport r;
  r.kernel = info_.name;
  r.keyHex = keyHex;
  r.bucket = bucketText(key);
  for (size_t i = 0; i < n; ++i) r.configs.push_back(configText(t, i));

  // 1. Compile every config, in parallel; a config that fails is skipped.
  std::vector<std::string> failures(n);
  std::vector<const Kernel*> kernels(n, nullptr);
  {
    size_t workers = std::min<size_t>(n, std::max(1u, std::min(8u, std::thread::hardware_concurrency())));
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i; (i = next++) < n;) {
        try {  // making the handle checks the consts (a const divided by zero fails here)
          kernels[i] = &config(i);
          kernels[i]->compileFor(args, count);
        } catch (const Error& e) {
          failures[i] = e.what();
        }
      }
    };
    std::vector<std::thread> pool;
    for (size_t w = 1; w < workers; ++w) pool.emplace_back(work);
    work();
    for (auto& th : pool) th.join();
  }

  // 2. Time them on scratch copies of what the kernel writes, the stream
  // drained first so the copies see every write queued before this launch.
  Backend& be = *ctx_.backend;
  be.synchronize(stream);
  std::vector<bool> writes;
  for (const auto& p : info_.params) writes.push_back(p.isTensor && p.writes);
  ScratchArgs scratch(be, args, count, writes, ctx_.options.scratchMaxBytes);
  size_t flushBytes = be.cacheFlushBytes();
  void* flush = nullptr;
  if (flushBytes) {
    try {
      flush = be.allocate(flushBytes);
    } catch (const Error&) {
      flush = nullptr;  // no memory for it: time without flushing
    }
  }
  TuneMethod method;
  method.budgetMs = ctx_.options.budgetMs;
  auto timeOnce = [&](size_t i) -> double {
    if (flush) be.fill(flush, (unsigned char)(i), flushBytes, stream);
    ++ctx_.tuningLaunches;
    return be.timeMs(stream, [&] { kernels[i]->launch(stream, scratch.args(), count); });
  };
  TuneOutcome o;
  try {
    o = rt::runTuning(failures, r.configs, method, timeOnce, nowMs);
  } catch (const Error& e) {
    if (flush) be.release(flush);
    throw Error(fmt::format("{}: tuning ({}): {}", info_.name, bucketText(key), e.what()));
  }
  if (flush) be.release(flush);
  be.synchronize(stream);
  scratch.restore();
  ++ctx_.tunings;

  r.medianMs = o.medianMs;
  r.failures = o.failures;
  r.chosen = o.chosen;
  r.rounds = o.rounds;
  r.budgetExhausted = o.budgetExhausted;
  r.timingMs = o.elapsedMs;
  if (ctx_.warn)
    for (size_t i = 0; i < n; ++i)
      if (!r.failures[i].empty())
        ctx_.warn(fmt::format("spindle: tuning {} ({}): skipped {}: {}", info_.name, bucketText(key), r.configs[i],
                              firstLine(r.failures[i])));
  if (ctx_.store) {
    std::string blob = tuneRecord(r, configListText(t));
    ctx_.store->put(keyHex, std::vector<char>(blob.begin(), blob.end()));
  }
  return r;
}

}  // namespace spindle::rt
