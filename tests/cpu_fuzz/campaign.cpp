#include "campaign.h"

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace spindle::cpu_fuzz {

Campaign Campaign::fromEnvironment(int defaultPrograms) {
  Campaign c;
  c.programs = defaultPrograms;
  if (const char* n = std::getenv("SPINDLE_FUZZ_PROGRAMS")) c.programs = std::atoi(n);
  if (const char* s = std::getenv("SPINDLE_FUZZ_SEED")) {
    if (std::string(s) == "random") c.firstSeed = (uint64_t(std::random_device{}()) << 20) | 1;
    else c.firstSeed = std::strtoull(s, nullptr, 0);
  }
  if (const char* j = std::getenv("SPINDLE_FUZZ_JOBS")) c.jobs = std::max(1, std::atoi(j));
  if (const char* d = std::getenv("SPINDLE_FUZZ_DUMP")) c.dumpDir = d;
  return c;
}

std::string Campaign::describe() const {
  return fmt::format("{} programs, seeds {}..{}, on {} threads", programs, firstSeed,
                     firstSeed + uint64_t(std::max(programs, 1)) - 1, jobs);
}

std::vector<std::string> forEachSeed(const Campaign& c, const std::function<std::string(uint64_t, int)>& check) {
  std::atomic<int> next{0};
  std::mutex mu;
  std::map<uint64_t, std::string> failures;
  auto worker = [&](int id) {
    for (int i = next++; i < c.programs; i = next++) {
      const uint64_t seed = c.firstSeed + uint64_t(i);
      std::string failure;
      try {
        failure = check(seed, id);
      } catch (const std::exception& e) {
        failure = fmt::format("seed {}: {}", seed, e.what());
      }
      if (failure.empty()) continue;
      std::lock_guard<std::mutex> lock(mu);
      failures[seed] = failure;
    }
  };
  std::vector<std::thread> threads;
  for (int id = 0; id < c.jobs; ++id) threads.emplace_back(worker, id);
  for (auto& t : threads) t.join();
  std::vector<std::string> out;
  for (auto& [seed, f] : failures) out.push_back(f);
  return out;
}

std::string numbered(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  for (int n = 1; std::getline(in, line); ++n) out += fmt::format("{:4} | {}\n", n, line);
  return out;
}

}  // namespace spindle::cpu_fuzz
