// The tuning method (runtime/src/tuning/tuner.h) with made-up timings and a
// made-up clock: ties, noise, skipped configs, rounds, the budget.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_util.h"
#include "tuning/tune_space.h"
#include "tuning/tuner.h"

namespace spindle::rt {
namespace {

using test::errorFrom;

// A clock that advances by each timed launch's milliseconds (plus 0.01 ms
// of overhead), and timings from a table, optionally with noise.
struct FakeDevice {
  std::vector<double> ms;  // per config
  double noise = 0;        // each sample scaled by a uniform factor in [1 - noise, 1 + noise]
  std::mt19937 rng{0};
  std::map<size_t, std::string> failing;  // configs that cannot launch
  double now = 0;
  std::vector<size_t> order;  // configs in the order they were run
  double time(size_t i) {
    order.push_back(i);
    if (failing.count(i)) throw Error(failing[i]);
    double t = ms[i] * (1 + std::uniform_real_distribution<double>(-noise, noise)(rng));
    now += t + 0.01;
    return t;
  }
};

TuneOutcome tuneOn(FakeDevice& d, TuneMethod m = {}, std::vector<std::string> failures = {}) {
  if (failures.empty()) failures.assign(d.ms.size(), "");
  std::vector<std::string> names;
  for (size_t i = 0; i < d.ms.size(); ++i) names.push_back("C" + std::to_string(i));
  return runTuning(
      failures, names, m, [&](size_t i) { return d.time(i); }, [&] { return d.now; });
}

TEST(Tuner, PicksTheFastestMedian) {
  FakeDevice d{{3.0, 1.0, 2.0}};
  TuneOutcome o = tuneOn(d);
  EXPECT_EQ(o.chosen, 1);
  EXPECT_DOUBLE_EQ(o.medianMs[1], 1.0);
  EXPECT_GE(o.rounds, 5);
}

// Within 2% of the fastest is a tie, and the earliest config wins: the
// default keeps its place against a config 1.5% faster.
TEST(Tuner, TiesWithinTwoPercentGoToTheEarlierConfig) {
  FakeDevice d{{1.000, 0.985, 1.2}};
  EXPECT_EQ(tuneOn(d).chosen, 0);
  FakeDevice e{{1.000, 0.975, 1.2}};  // 2.5% faster: not a tie
  EXPECT_EQ(tuneOn(e).chosen, 1);
  EXPECT_EQ(chooseConfig({1.5, 1.01, 1.0}, 0.02), 1);  // the earliest of the tied, not the fastest
  EXPECT_EQ(chooseConfig({-1, 2.0, 1.0}, 0.02), 2);    // a skipped config (negative) never wins
  EXPECT_EQ(chooseConfig({-1, -1}, 0.02), -1);
}

// Noise of up to +-1% on every sample (uniform, seeded): a config 0.5%
// faster than the default (a difference inside the noise) never takes its
// place, whatever the seed or the round count, and one 10% faster always does.
TEST(Tuner, NoiseDoesNotFlipTheChoice) {
  for (unsigned seed = 0; seed < 50; ++seed) {
    for (int rounds : {5, 6, 20}) {
      for (double faster : {0.995, 0.90}) {
        FakeDevice d{{1.0, faster, 1.3}};
        d.rng.seed(seed);
        d.noise = 0.01;
        TuneMethod m;
        m.minRounds = m.maxRounds = rounds;
        EXPECT_EQ(tuneOn(d, m).chosen, faster > 0.95 ? 0 : 1) << "seed " << seed << ", " << rounds << " rounds";
      }
    }
  }
}

TEST(Tuner, MedianIgnoresOutliers) {
  EXPECT_DOUBLE_EQ(medianOf({1, 100, 2, 3, 2}), 2);
  EXPECT_DOUBLE_EQ(medianOf({4, 1, 3, 2}), 2.5);
}

// Every config runs once per round, in an order rotated each round
// (interleaved), after `warmup` untimed launches each.
TEST(Tuner, RoundsAreInterleavedAndRotated) {
  FakeDevice d{{1.0, 1.0, 1.0}};
  TuneMethod m;
  m.warmup = 1;
  m.minRounds = m.maxRounds = 5;
  TuneOutcome o = tuneOn(d, m);
  EXPECT_EQ(o.rounds, 5);
  ASSERT_EQ(d.order.size(), 3u + 5u * 3u);
  std::vector<size_t> round0(d.order.begin() + 3, d.order.begin() + 6);
  std::vector<size_t> round1(d.order.begin() + 6, d.order.begin() + 9);
  EXPECT_EQ(round0, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(round1, (std::vector<size_t>{1, 2, 0}));
}

// A config that cannot launch is skipped with its reason; one that failed
// to compile never runs; the rest are timed as usual.
TEST(Tuner, SkipsConfigsThatFailAndReportsWhy) {
  FakeDevice d{{0.5, 2.0, 1.0}};
  d.failing[0] = "too many resources requested for launch";
  std::vector<std::string> failures = {"", "", ""};
  TuneOutcome o = tuneOn(d, {}, failures);
  EXPECT_EQ(o.chosen, 2);
  EXPECT_EQ(o.failures[0], "too many resources requested for launch");
  EXPECT_LT(o.medianMs[0], 0);

  FakeDevice e{{0.5, 2.0, 1.0}};
  TuneOutcome p = tuneOn(e, {}, {"", "compile error", ""});
  EXPECT_EQ(p.chosen, 0);
  for (size_t i : e.order) EXPECT_NE(i, 1u) << "a config that failed to compile was launched";
  EXPECT_EQ(p.failures[1], "compile error");
}

TEST(Tuner, AllFailingIsAnErrorNamingEachConfig) {
  FakeDevice d{{1.0, 1.0}};
  d.failing[0] = "no good";
  std::string error = errorFrom([&] { tuneOn(d, {}, {"", "did not compile"}); });
  EXPECT_CONTAINS(error, "every config failed");
  EXPECT_CONTAINS(error, "C0: no good");
  EXPECT_CONTAINS(error, "C1: did not compile");
}

// Launches of 100 ms against a 250 ms budget: timing stops after the round
// that passes it, short of 5 rounds, and the best so far wins.
TEST(Tuner, TheBudgetEndsTimingAndTheBestSoFarWins) {
  FakeDevice d{{100, 90, 120}};
  TuneMethod m;
  m.warmup = 0;
  m.budgetMs = 250;
  TuneOutcome o = tuneOn(d, m);
  EXPECT_TRUE(o.budgetExhausted);
  EXPECT_EQ(o.rounds, 1);
  EXPECT_EQ(o.chosen, 1);
}

// Fast configs keep going past 5 rounds until settleMs of timing, bounded
// by maxRounds.
TEST(Tuner, FastConfigsGetMoreRoundsUpToTheMaximum) {
  FakeDevice d{{0.01, 0.02}};
  TuneMethod m;
  TuneOutcome o = tuneOn(d, m);
  EXPECT_EQ(o.rounds, m.maxRounds);
  EXPECT_FALSE(o.budgetExhausted);
}

TEST(TuneSpace, BucketsArePowersOfTheBaseAtOrAboveTheValue) {
  EXPECT_EQ(bucketOf(1000, 2), 1024);
  EXPECT_EQ(bucketOf(1024, 2), 1024);
  EXPECT_EQ(bucketOf(1025, 2), 2048);
  EXPECT_EQ(bucketOf(1, 2), 1);
  EXPECT_EQ(bucketOf(17, 4), 64);
  EXPECT_EQ(bucketOf(1000, 0), 1000);  // bucket=exact
  EXPECT_EQ(bucketOf(INT64_MAX - 5, 2), INT64_MAX);
}

TEST(TuneSpace, ConfigTextNamesEveryConst) {
  TuneInfo t;
  t.consts = {"BLOCK", "VEC"};
  t.configs = {{128, 4}, {256, 8}};
  EXPECT_EQ(configText(t, 1), "BLOCK=256 VEC=8");
  EXPECT_EQ(findConfig(t, "BLOCK=256 VEC=8"), 1);
  EXPECT_EQ(findConfig(t, "BLOCK=512 VEC=8"), -1);
  EXPECT_EQ(configListText(t), "BLOCK=128 VEC=4; BLOCK=256 VEC=8");
  EXPECT_EQ(configConsts(t, 0).at("VEC").i, 4);
}

TEST(TuneSpace, SpindleTuneSelectsTheMode) {
  {
    test::ScopedEnv env("SPINDLE_TUNE", "0");
    EXPECT_EQ(tuneModeFromEnv(TuneMode::Deferred), TuneMode::Off);
  }
  {
    test::ScopedEnv env("SPINDLE_TUNE", "blocking");
    EXPECT_EQ(tuneModeFromEnv(TuneMode::Deferred), TuneMode::Blocking);
  }
  {
    test::ScopedEnv env("SPINDLE_TUNE", "1");
    EXPECT_EQ(tuneModeFromEnv(TuneMode::Blocking), TuneMode::Blocking);
  }
  test::ScopedEnv env("SPINDLE_TUNE", "fast");
  EXPECT_CONTAINS(errorFrom([] { tuneModeFromEnv(TuneMode::Deferred); }), "expected 0, 1, blocking or deferred");
}

}  // namespace
}  // namespace spindle::rt
