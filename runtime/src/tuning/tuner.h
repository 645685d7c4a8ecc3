// The tuning method: which config of a kernel is fastest for one key
// bucket, measured so that noise does not flip the choice. It knows
// nothing of kernels or devices: it times "config i" through a callback,
// so tests drive it with made-up timings and clocks.
//
//   1. Configs that failed to compile arrive as `failures` and are skipped.
//   2. Warm-up: each remaining config runs `warmup` untimed launches; one
//      that throws (cannot launch: too many registers or shared bytes) is
//      skipped and reported. All skipped: spindle::Error listing why.
//   3. Rounds: every config once per round, the order rotated each round
//      (interleaved, so drift in clocks or temperature is shared), each
//      timed launch after an L2 flush (the callback's job). At least
//      `minRounds` rounds, then more until `settleMs` of timing or
//      `maxRounds`; the hard `budgetMs` (warm-up included) ends timing after
//      any complete round, and the best so far wins.
//   4. The median of each config's samples; configs within `tie` of the
//      fastest median are ties, and the earliest in @tune's order wins (the
//      default, config 0, first), so a 1% wobble never changes the choice.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace spindle::rt {

struct TuneMethod {
  int warmup = 2;
  int minRounds = 5;
  int maxRounds = 50;
  double settleMs = 100;
  double budgetMs = 1000;
  double tie = 0.02;
};

struct TuneOutcome {
  int chosen = -1;
  std::vector<double> medianMs;       // per config; negative for a skipped one
  std::vector<std::string> failures;  // per config; empty for one that ran
  int rounds = 0;                     // complete rounds timed
  bool budgetExhausted = false;       // the budget, not the rounds, ended timing
  double elapsedMs = 0;
};

// `timeOnce(i)`: milliseconds of one launch of config i (after a flush);
// throws spindle::Error when it cannot launch. `nowMs`: a monotonic clock.
// `failures[i]` non-empty: config i failed before (to compile) and is skipped.
// `names[i]` names config i in the error when every config fails.
TuneOutcome runTuning(std::vector<std::string> failures, const std::vector<std::string>& names,
                      const TuneMethod& method, const std::function<double(size_t)>& timeOnce,
                      const std::function<double()>& nowMs);

// The median of `samples` (the mean of the middle two for an even count).
double medianOf(std::vector<double> samples);

// The choice among `medianMs` (negative: skipped): the earliest config
// within `tie` of the fastest; -1 when none ran.
int chooseConfig(const std::vector<double>& medianMs, double tie);

}  // namespace spindle::rt
