// How many programs a fuzz test runs, from which seed, on how many threads
// (SPINDLE_FUZZ_PROGRAMS, SPINDLE_FUZZ_SEED, SPINDLE_FUZZ_JOBS), and the
// loop that runs them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace spindle::cpu_fuzz {

struct Campaign {
  uint64_t firstSeed = 1;
  int programs = 0;
  int jobs = 2;
  std::string dumpDir;  // SPINDLE_FUZZ_DUMP: every program is written there

  // `defaultPrograms` unless SPINDLE_FUZZ_PROGRAMS says otherwise; seeds
  // from 1 unless SPINDLE_FUZZ_SEED gives the first (a number, or "random").
  static Campaign fromEnvironment(int defaultPrograms);
  std::string describe() const;  // "programs 1..40 on 2 threads"
};

// Calls `check(seed, worker)` for every seed of the campaign, on `jobs`
// threads (worker in [0, jobs)); returns the failures it reported (non-empty
// strings), in seed order.
std::vector<std::string> forEachSeed(const Campaign& c, const std::function<std::string(uint64_t, int)>& check);

// A program with its line numbers, for failure reports.
std::string numbered(const std::string& text);

}  // namespace spindle::cpu_fuzz
