#include "tuning/tuner.h"

#include <fmt/format.h>

#include <algorithm>

#include <spindle/runtime.hpp>

namespace spindle::rt {

double medianOf(std::vector<double> samples) {
  if (samples.empty()) return -1;
  std::sort(samples.begin(), samples.end());
  size_t n = samples.size();
  return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

int chooseConfig(const std::vector<double>& medianMs, double tie) {
  double best = -1;
  for (double m : medianMs)
    if (m >= 0 && (best < 0 || m < best)) best = m;
  if (best < 0) return -1;
  for (size_t i = 0; i < medianMs.size(); ++i)
    if (medianMs[i] >= 0 && medianMs[i] <= best * (1 + tie)) return int(i);
  return -1;
}

TuneOutcome runTuning(std::vector<std::string> failures, const std::vector<std::string>& names,
                      const TuneMethod& method, const std::function<double(size_t)>& timeOnce,
                      const std::function<double()>& nowMs) {
  TuneOutcome out;
  const size_t n = failures.size();
  const double start = nowMs();
  auto elapsed = [&] { return nowMs() - start; };
  // Runs config i once; a failure skips it from then on.
  auto attempt = [&](size_t i, double* ms) {
    try {
      double t = timeOnce(i);
      if (ms) *ms = t;
      return true;
    } catch (const Error& e) {
      failures[i] = e.what();
      return false;
    }
  };
  for (size_t i = 0; i < n; ++i)
    for (int w = 0; w < method.warmup && failures[i].empty(); ++w) attempt(i, nullptr);
  std::vector<size_t> live;
  for (size_t i = 0; i < n; ++i)
    if (failures[i].empty()) live.push_back(i);
  if (live.empty()) {
    std::string why;
    for (size_t i = 0; i < n; ++i)
      why += fmt::format("\n  {}: {}", i < names.size() ? names[i] : std::to_string(i), failures[i]);
    throw Error("every config failed:" + why);
  }
  std::vector<std::vector<double>> samples(n);
  for (int r = 0;; ++r) {
    for (size_t k = 0; k < live.size(); ++k) {
      size_t i = live[(k + size_t(r)) % live.size()];
      double ms = 0;
      if (failures[i].empty() && attempt(i, &ms)) samples[i].push_back(ms);
    }
    out.rounds = r + 1;
    double t = elapsed();
    if (out.rounds >= method.maxRounds) break;
    if (out.rounds >= method.minRounds && t >= method.settleMs) break;
    if (t >= method.budgetMs) {  // before minRounds: the budget cut timing short
      out.budgetExhausted = true;
      break;
    }
  }
  out.elapsedMs = elapsed();
  out.medianMs.assign(n, -1);
  for (size_t i = 0; i < n; ++i)
    if (failures[i].empty() && !samples[i].empty()) out.medianMs[i] = medianOf(samples[i]);
  out.chosen = chooseConfig(out.medianMs, method.tie);
  if (out.chosen < 0) {
    std::string why;
    for (size_t i = 0; i < n; ++i)
      why += fmt::format("\n  {}: {}", i < names.size() ? names[i] : std::to_string(i), failures[i]);
    throw Error("every config failed:" + why);
  }
  out.failures = std::move(failures);
  return out;
}

}  // namespace spindle::rt
