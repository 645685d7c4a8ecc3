#include "cpu/grid_runner.h"

#include "cpu/block_runner.h"
#include "env_number.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <spindle/runtime.hpp>

namespace spindle::rt::cpu {

unsigned workerThreads() {
  if (auto n = envNumber("SPINDLE_CPU_THREADS", 1, 4096, "a number of threads from 1 to 4096")) return unsigned(*n);
  return std::max(1u, std::thread::hardware_concurrency());
}

uint64_t scheduleSeed() {
  return envNumber("SPINDLE_CPU_SCHEDULE", 0, UINT32_MAX, "a seed from 0 to 4294967295 (0: thread order)").value_or(0);
}

unsigned launchTimeoutSeconds() {
  return unsigned(
      envNumber("SPINDLE_CPU_TIMEOUT_S", 0, 1000000, "a number of seconds up to 1000000 (0: no limit)").value_or(60));
}

namespace {

// Sets `expired` once `seconds` have passed, unless stopped first.
class Watchdog {
 public:
  Watchdog(unsigned seconds, int* expired) {
    if (seconds == 0) return;
    thread_ = std::thread([this, seconds, expired] {
      std::unique_lock<std::mutex> lock(mu_);
      if (!cv_.wait_for(lock, std::chrono::seconds(seconds), [this] { return stopped_; }))
        __atomic_store_n(expired, 1, __ATOMIC_RELAXED);
    });
  }
  ~Watchdog() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopped_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopped_ = false;
  std::thread thread_;
};

}  // namespace

void runGrid(const BlockShape& shape, __spn_cpu_entry_fn entry, void** args, size_t stackBytes) {
  const uint64_t blocks = uint64_t(shape.grid.x) * shape.grid.y * shape.grid.z;
  if (blocks == 0) return;
  int expired = 0;
  Watchdog watchdog(launchTimeoutSeconds(), &expired);
  const uint64_t seed = scheduleSeed();
  const unsigned workers = unsigned(std::min<uint64_t>(workerThreads(), blocks));
  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::string error;

  auto work = [&] {
    try {
      BlockRunner runner(shape, entry, args, stackBytes, &expired, seed);
      for (uint64_t b; !failed.load(std::memory_order_relaxed) && (b = next.fetch_add(1)) < blocks;) {
        const __spn_cpu_dim3 index{unsigned(b % shape.grid.x), unsigned(b / shape.grid.x % shape.grid.y),
                                   unsigned(b / (uint64_t(shape.grid.x) * shape.grid.y))};
        if (!runner.run(index)) {
          std::lock_guard<std::mutex> lock(mu);
          if (!failed.exchange(true)) error = runner.error();
        }
      }
    } catch (const std::exception& e) {  // no memory for stacks, ...
      std::lock_guard<std::mutex> lock(mu);
      if (!failed.exchange(true)) error = e.what();
    }
  };
  // Fibers run on workers of their own, never on the calling thread: its
  // stack then never switches (the app's, and what AddressSanitizer knows
  // of it, stay as they were), and a worker's thread_local `shared` arrays
  // go with it.
  std::vector<std::thread> pool;
  try {
    for (unsigned w = 0; w < workers; ++w) pool.emplace_back(work);
  } catch (const std::system_error&) {
    // Fewer threads than asked: the ones started share the blocks.
  }
  if (pool.empty()) work();
  for (auto& t : pool) t.join();
  if (failed) throw Error("the kernel failed on the cpu target: " + error);
}

}  // namespace spindle::rt::cpu
