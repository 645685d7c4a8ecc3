// tune_goal: issue 19's autotuning goal, measured on one GPU in one run.
// For each case (gemm across shapes and dtypes, softmax and layernorm at
// short and long rows):
//   1. a runtime in blocking mode launches the kernel once: it tunes and
//      launches the choice (timed: the cost of tuning);
//   2. a second runtime on the same cache directory (a second process) asks
//      for the choice: the pick's wall time, and no tuning launch;
//   3. an exhaustive sweep timed the same way (Kernel::tune with retune:
//      every config, warm-up, L2 flush, interleaved rounds, medians);
//   4. goal: the tuned config's median within 3% of the sweep's best and at
//      most 1% above the default config's.
// Also the host cost of a tuned handle's launch against a plain one.
//
//   tune_goal [--samples DIR] [--json FILE] [--only NAME]
// Exit status 1 when a case misses the goal.
#include <spindle/runtime.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace spindle;

namespace {

double wallMs(const std::chrono::steady_clock::time_point& since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

struct Case {
  std::string name, sample, kernel;
  std::map<std::string, ScalarType> types;
  std::map<std::string, int64_t> dims;
  std::vector<std::string> staticDims;
};

// Device tensors with random contents for every parameter of `info`.
struct Tensors {
  std::vector<DeviceBuffer> buffers;
  std::vector<Arg> args;
};

Tensors makeArgs(Runtime& rt, const KernelInfo& info, const Case& c, std::mt19937_64& rng) {
  Tensors t;
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  for (const auto& p : info.params) {
    ScalarType type = p.typeParam.empty() ? p.dtype : c.types.at(p.typeParam);
    if (!p.isTensor) {
      t.args.push_back(scalar(type, 0.5));
      continue;
    }
    std::vector<int64_t> shape;
    int64_t count = 1;
    for (const auto& d : p.dims) {
      shape.push_back(*evaluateDim(d, c.dims));
      count *= shape.back();
    }
    size_t size = scalarBytes(type);
    std::vector<char> host(size_t(count) * size);
    for (int64_t i = 0; i < count; ++i) {
      uint64_t bits = scalar(type, real(rng)).bits;
      std::memcpy(host.data() + size_t(i) * size, &bits, size);
    }
    t.buffers.push_back(rt.allocate(host.size()));
    rt.copyToDevice(t.buffers.back(), host.data(), host.size());
    t.args.push_back(tensor(t.buffers.back().data(), type, shape.data(), int(shape.size())));
  }
  return t;
}

std::string shapeText(const Case& c) {
  std::string s;
  for (const auto& [k, v] : c.dims) s += (s.empty() ? "" : " ") + k + "=" + std::to_string(v);
  for (const auto& [k, v] : c.types) s += std::string(" ") + k + "=" + std::string(scalarName(v));
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::string samples = "samples", jsonPath, only;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--samples" && i + 1 < argc) samples = argv[++i];
    else if (a == "--json" && i + 1 < argc) jsonPath = argv[++i];
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else {
      std::fprintf(stderr, "usage: tune_goal [--samples DIR] [--json FILE] [--only NAME]\n");
      return 2;
    }
  }
  const ScalarType F16 = ScalarType::F16, BF16 = ScalarType::BF16, F32 = ScalarType::F32;
  std::vector<Case> cases;
  for (auto [t, u] : {std::pair{F16, F32}, std::pair{BF16, BF16}})
    for (auto [m, n, k] : {std::tuple{512, 512, 512}, std::tuple{1024, 1024, 1024}, std::tuple{4096, 4096, 4096},
                           std::tuple{128, 4096, 4096}, std::tuple{4096, 256, 2048}})
      cases.push_back({"gemm", "gemm", "gemm", {{"T", t}, {"U", u}}, {{"M", m}, {"N", n}, {"K", k}}, {}});
  for (auto [m, n] : {std::pair{65536, 128}, std::pair{32768, 256}, std::pair{8192, 1024}, std::pair{4096, 8192}}) {
    cases.push_back({"softmax", "softmax", "softmax", {}, {{"M", m}, {"N", n}}, {"N"}});
    cases.push_back({"layernorm", "layernorm", "layernorm", {}, {{"M", m}, {"N", n}}, {"N"}});
  }

  // TUNE_GOAL_SCALE=S divides M of every case by S (a dry run on the cpu
  // target: SPINDLE_BACKEND=cpu TUNE_GOAL_SCALE=512 tune_goal --only softmax).
  if (const char* s = std::getenv("TUNE_GOAL_SCALE"))
    for (Case& c : cases) c.dims["M"] = std::max<int64_t>(1, c.dims["M"] / std::atoll(s));
  std::string cache = (std::filesystem::temp_directory_path() / ("tune_goal." + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(cache);
  RuntimeOptions options;
  options.cacheDir = cache;
  options.tune.mode = TuneMode::Blocking;
  Runtime rt(options);
  if (!rt.hasDevice()) {
    std::fprintf(stderr, "tune_goal: no GPU: %s\n", rt.deviceStatus().c_str());
    return 2;
  }
  std::printf("device: %s (%s, %s)\n", rt.deviceName().c_str(), rt.target().c_str(), rt.compilerIdentity().c_str());
  std::FILE* json = jsonPath.empty() ? nullptr : std::fopen(jsonPath.c_str(), "w");
  std::mt19937_64 rng(7);
  int misses = 0, ran = 0;
  std::map<std::string, Module> modules;
  std::printf("%-10s %-34s %-26s %9s %9s %9s %7s %7s %8s %7s %s\n", "kernel", "shape", "tuned", "tuned ms", "best ms",
              "dflt ms", "vs best", "vs dflt", "tune ms", "pick ms", "goal");
  for (const Case& c : cases) {
    if (!only.empty() && c.name != only) continue;
    try {
      if (!modules.count(c.sample)) modules.emplace(c.sample, rt.loadModule(samples + "/" + c.sample + ".spn"));
      KernelOptions ko;
      ko.staticDims = c.staticDims;
      Kernel k = modules.at(c.sample).kernel(c.kernel, ko);
      Tensors t = makeArgs(rt, k.info(), c, rng);
      // 1. The first launch tunes (blocking mode), then launches the choice.
      rt.synchronize();
      uint64_t launchesBefore = rt.stats().tuningLaunches;
      auto start = std::chrono::steady_clock::now();
      k.launch(nullptr, t.args.data(), t.args.size());
      rt.synchronize();
      double tuneMs = wallMs(start);
      uint64_t tuningLaunches = rt.stats().tuningLaunches - launchesBefore;
      CompileReport chosen = k.compileFor(t.args.data(), t.args.size());
      // 2. A second runtime on the cache directory: the pick, and no tuning launch.
      double pickMs = 0;
      uint64_t secondTuningLaunches = 0;
      {
        RuntimeOptions o = options;
        Runtime second(o);
        Module m = second.loadModule(samples + "/" + c.sample + ".spn");
        Kernel k2 = m.kernel(c.kernel, ko);
        auto s0 = std::chrono::steady_clock::now();
        TuneReport stored = k2.tune(nullptr, t.args.data(), t.args.size());
        pickMs = wallMs(s0);
        k2.launch(nullptr, t.args.data(), t.args.size());
        second.synchronize();
        secondTuningLaunches = second.stats().tuningLaunches;
        if (!stored.stored || stored.configs[size_t(stored.chosen)] != chosen.tuneConfig)
          std::printf("  second runtime did not read the stored choice back\n"), ++misses;
      }
      // 3. The exhaustive sweep, timed the same way.
      TuneReport sweep = k.tune(nullptr, t.args.data(), t.args.size(), /*retune=*/true);
      double best = -1, tuned = -1, dflt = sweep.medianMs[0];
      for (size_t i = 0; i < sweep.configs.size(); ++i) {
        if (sweep.medianMs[i] >= 0 && (best < 0 || sweep.medianMs[i] < best)) best = sweep.medianMs[i];
        if (sweep.configs[i] == chosen.tuneConfig) tuned = sweep.medianMs[i];
      }
      bool ok = tuned > 0 && tuned <= best * 1.03 && (dflt < 0 || tuned <= dflt * 1.01) && secondTuningLaunches == 0;
      misses += ok ? 0 : 1;
      ++ran;
      std::printf("%-10s %-34s %-26s %9.4f %9.4f %9.4f %6.1f%% %6.1f%% %8.0f %7.2f %s\n", c.name.c_str(),
                  shapeText(c).c_str(), chosen.tuneConfig.c_str(), tuned, best, dflt, 100 * (tuned / best - 1),
                  dflt > 0 ? 100 * (tuned / dflt - 1) : 0.0, tuneMs, pickMs, ok ? "ok" : "MISS");
      std::printf("           sweep:");
      for (size_t i = 0; i < sweep.configs.size(); ++i)
        std::printf(" [%s] %s", sweep.configs[i].c_str(),
                    sweep.medianMs[i] >= 0 ? std::to_string(sweep.medianMs[i]).c_str() : "skipped");
      std::printf("\n           tuning launches %llu, second runtime's %llu, sweep rounds %d\n",
                  (unsigned long long)tuningLaunches, (unsigned long long)secondTuningLaunches, sweep.rounds);
      if (json)
        std::fprintf(
            json,
            "{\"kernel\": \"%s\", \"shape\": \"%s\", \"tuned\": \"%s\", \"tuned_ms\": %.6f, \"best_ms\": %.6f, "
            "\"default_ms\": %.6f, \"tune_wall_ms\": %.1f, \"pick_ms\": %.3f, \"ok\": %s}\n",
            c.name.c_str(), shapeText(c).c_str(), chosen.tuneConfig.c_str(), tuned, best, dflt, tuneMs, pickMs,
            ok ? "true" : "false");
      // The host cost of a tuned handle's launch against the chosen config's own handle.
      if (c.name == "softmax" && c.dims.at("N") == 128) {
        KernelOptions fixed = ko;
        int64_t block = std::stoll(chosen.tuneConfig.substr(chosen.tuneConfig.find('=') + 1));
        fixed.consts["BLOCK"] = ConstOverride::ofInt(block);
        Kernel plain = modules.at(c.sample).kernel(c.kernel, fixed);
        plain.launch(nullptr, t.args.data(), t.args.size());
        rt.synchronize();
        for (Kernel* h : {&plain, &k}) {
          auto h0 = std::chrono::steady_clock::now();
          for (int i = 0; i < 2000; ++i) h->launch(nullptr, t.args.data(), t.args.size());
          double per = wallMs(h0) * 1e3 / 2000;
          rt.synchronize();
          std::printf("           host time per launch (queue full, includes back-pressure): %s %.2f us\n",
                      h == &plain ? "plain handle" : "tuned handle", per);
        }
      }
    } catch (const std::exception& e) {
      std::printf("%-10s %-34s ERROR %s\n", c.name.c_str(), shapeText(c).c_str(), e.what());
      ++misses;
    }
  }
  std::printf("%d cases, %d missed the goal\n", ran, misses);
  if (json) std::fclose(json);
  std::filesystem::remove_all(cache);
  return misses ? 1 : 0;
}
