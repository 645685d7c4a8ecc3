// parity: every sample and the kernels of bench/parity/kernels/ against a
// hand-written CUDA kernel of the same algorithm (bench/parity/handwritten/,
// compiled by nvrtc for the device), checked against each other (and the
// new kernels against double-precision CPU references) and timed in the
// same run: interleaved, an L2 flush before every timed launch, CUDA-event
// medians. The table shows Spindle / hand-written per kernel (issue 20,
// part 4).
//
//   parity [--json FILE] [--seed S] [--reps R] [--only a,b] [--root DIR]
//   parity --compile-only [ARCH]   compile every hand-written kernel with
//                                  nvrtc for ARCH (default sm_90) and the new
//                                  .spn kernels through the runtime; no GPU
//                                  needed. Exit 77 (skipped) without nvrtc.
//   parity --dry-run [ARCH]        no GPU needed: every case with its inputs at
//                                  full size in host memory (the cpu target's
//                                  runtime), each Spindle launch bound and
//                                  compiled for ARCH (default sm_90) instead of
//                                  run, each hand-written kernel compiled with
//                                  its -D options; nothing compared or timed.
//                                  Needs a few GB of memory. Exit 77 without
//                                  nvrtc.
//   parity --list                  the case names (for --only)
//
// Exit status: 0 all agreed, 1 a kernel disagreed or a case failed, 2 the
// program could not run (no GPU, no CUDA driver or nvrtc, bad arguments).
#include <spindle/runtime.hpp>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>

#include "cases.hpp"

#ifndef SPINDLE_PARITY_ROOT
#define SPINDLE_PARITY_ROOT "."
#endif

namespace parity {

const std::vector<Case>& allCases() {
  static const std::vector<Case> list = {
      {"axpy", caseAxpy},
      {"softmax", caseSoftmax},
      {"layernorm", caseLayernorm},
      {"rmsnorm_f16", caseRmsnormF16},
      {"transpose", caseTranspose},
      {"histogram", caseHistogram},
      {"matmul", caseMatmul},
      {"scan", caseScan},
      {"bias_gelu", caseBiasGelu},
      {"row_norms", caseRowNorms},
      {"scale_strided", caseScaleStrided},
      {"fused_add_rmsnorm", caseFusedAddRmsnorm},
      {"act_and_mul", caseActAndMul},
      {"rotary_embedding", caseRotaryEmbedding},
      {"adamw", caseAdamw},
      {"quant_per_token", caseQuantPerToken},
      {"encoder_forward", caseEncoderForward},
      {"crossentropy_backward", caseCrossentropyBackward},
      {"attention_softmax", caseAttentionSoftmax},
  };
  return list;
}

namespace {

constexpr int kSkipped = 77;  // ctest's SKIP_RETURN_CODE

// The kernels of bench/parity/kernels/, compiled through the runtime for
// `arch` without a device (the general binary of each).
const char* const kNewKernels[][2] = {{"encoder_forward.spn", "encoder_forward"},
                                      {"crossentropy_backward.spn", "crossentropy_backward"},
                                      {"attention_softmax.spn", "attention_softmax"}};

int runCases(Ctx& c, const std::set<std::string>& only) {
  for (const Case& cs : allCases()) {
    if (!only.empty() && !only.count(cs.name)) continue;
    std::printf("%s\n", cs.name);
    std::fflush(stdout);
    try {
      cs.run(c);
    } catch (const std::exception& e) {  // spindle::Error included
      c.fail(cs.name, e.what());
    }
  }
  return c.failures;
}

int dryRun(const std::string& arch, const std::string& root, const std::set<std::string>& only, uint64_t seed) {
  Nvrtc nvrtc;
  std::string why;
  if (!nvrtc.open(&why)) {
    std::printf("parity --dry-run: skipped: %s\n", why.c_str());
    return kSkipped;
  }
  int failures = 0;
  try {
    spindle::RuntimeOptions compileOnly;
    compileOnly.backend = spindle::BackendKind::Cuda;
    compileOnly.target = arch;
    compileOnly.diskCache = false;
    spindle::Runtime rt(compileOnly);
    spindle::RuntimeOptions host;
    host.backend = spindle::BackendKind::Cpu;
    host.target = "cpu";
    host.diskCache = false;
    spindle::Runtime mem(host);
    Ctx c(rt, mem, nullptr, nvrtc, arch, root, seed);
    std::printf("parity --dry-run %s: Spindle launches bound and compiled with %s, hand-written kernels with %s\n",
                arch.c_str(), rt.compilerIdentity().c_str(), nvrtc.identity().c_str());
    failures = runCases(c, only);
  } catch (const std::exception& e) {
    std::printf("parity --dry-run: %s\n", e.what());
    return 2;
  }
  std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "dry run complete", failures);
  return failures ? 1 : 0;
}

int compileOnly(const std::string& arch, const std::string& root) {
  Nvrtc nvrtc;
  std::string why;
  if (!nvrtc.open(&why)) {
    std::printf("parity --compile-only: skipped: %s\n", why.c_str());
    return kSkipped;
  }
  std::printf("parity --compile-only %s with %s\n", arch.c_str(), nvrtc.identity().c_str());
  int failures = 0, files = 0;
  for (const EmbeddedFile& f : embeddedFiles()) {
    const std::string name = f.name;
    if (name.size() < 3 || name.compare(name.size() - 3, 3, ".cu") != 0) continue;
    ++files;
    try {
      const auto cubin = compileHandwritten(nvrtc, name, arch);
      std::printf("  ok    %-28s %zu bytes of CUBIN\n", name.c_str(), cubin.size());
    } catch (const std::exception& e) {
      ++failures;
      std::printf("  FAIL  %s\n", e.what());
    }
  }
  if (files == 0) ++failures, std::printf("  FAIL  no hand-written .cu file was embedded\n");
  try {
    spindle::RuntimeOptions options;
    options.backend = spindle::BackendKind::Cuda;
    options.target = arch;
    options.diskCache = false;
    spindle::Runtime rt(options);
    for (const auto& [file, kernel] : kNewKernels) {
      try {
        const spindle::CompileReport r =
            rt.loadModule(root + "/bench/parity/kernels/" + file).kernel(kernel).compile({}, {});
        std::printf("  ok    %-28s %zu bytes of CUBIN (Spindle, general binary)\n", file, r.binaryBytes);
      } catch (const spindle::Error& e) {
        ++failures;
        std::printf("  FAIL  %s: %s\n", file, e.what());
      }
    }
  } catch (const spindle::Error& e) {
    ++failures;
    std::printf("  FAIL  no compile-only CUDA runtime for %s: %s\n", arch.c_str(), e.what());
  }
  std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "all compiled", failures);
  return failures ? 1 : 0;
}

void printTable(const Ctx& c) {
  std::printf("\nkernel                  shape                              spindle ms  hand-written ms  ratio\n");
  std::printf("----------------------------------------------------------------------------------------------\n");
  int over = 0;
  double worst = 0;
  for (const Row& r : c.rows) {
    const double ratio = r.spindleMs / r.handMs;
    over += ratio > 1.03;
    worst = std::max(worst, ratio);
    std::printf("%-23s %-34s %10.4f  %15.4f  %5.2f%s\n", r.kernel.c_str(), r.shape.c_str(), r.spindleMs, r.handMs,
                ratio, ratio > 1.03 ? "  *" : "");
  }
  std::printf("%zu rows; %d above 1.03 (marked *); worst %.2f\n", c.rows.size(), over, worst);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace
}  // namespace parity

int main(int argc, char** argv) {
  using namespace parity;
  std::string jsonPath, root = SPINDLE_PARITY_ROOT, compileArch;
  std::set<std::string> only;
  uint64_t seed = 0;
  bool seeded = false, compile = false, dry = false;
  int reps = 30;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "parity: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--json") jsonPath = value();
    else if (a == "--seed") seed = std::strtoull(value().c_str(), nullptr, 0), seeded = true;
    else if (a == "--reps") reps = std::max(1, std::atoi(value().c_str()));
    else if (a == "--only")
      for (const auto& s : split(value(), ',')) only.insert(s);
    else if (a == "--root") root = value();
    else if (a == "--compile-only") {
      compile = true;
      compileArch = i + 1 < argc && argv[i + 1][0] != '-' ? argv[++i] : "sm_90";
    } else if (a == "--dry-run") {
      dry = true;
      compileArch = i + 1 < argc && argv[i + 1][0] != '-' ? argv[++i] : "sm_90";
    } else if (a == "--list") {
      for (const Case& c : allCases()) std::printf("%s\n", c.name);
      return 0;
    } else {
      std::fprintf(stderr, "parity: unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  if (compile) return compileOnly(compileArch, root);
  for (const auto& name : only) {
    bool known = false;
    for (const Case& c : allCases()) known |= name == c.name;
    if (!known) {
      std::fprintf(stderr, "parity: no case '%s' (--list names them)\n", name.c_str());
      return 2;
    }
  }
  if (!seeded) seed = uint64_t(std::chrono::system_clock::now().time_since_epoch().count());
  if (dry) return dryRun(compileArch, root, only, seed);

  std::FILE* json = nullptr;
  if (!jsonPath.empty() && !(json = std::fopen(jsonPath.c_str(), "a"))) {
    std::fprintf(stderr, "parity: cannot open %s\n", jsonPath.c_str());
    return 2;
  }
  int failures = 0;
  try {
    // Samples with @tune are tuned at their first launch (the check), so no
    // timed launch includes tuning.
    spindle::RuntimeOptions options;
    options.tune.mode = spindle::TuneMode::Blocking;
    spindle::Runtime rt(options);
    if (!rt.hasDevice()) {
      std::fprintf(stderr, "parity: no GPU: %s\n", rt.deviceStatus().c_str());
      return 2;
    }
    if (rt.backend() != spindle::BackendKind::Cuda) {
      std::fprintf(stderr, "parity: the hand-written kernels are CUDA; this runtime uses the %s backend\n",
                   spindle::backendName(rt.backend()));
      return 2;
    }
    Driver cu;
    Nvrtc nvrtc;
    std::string why;
    if (!cu.open(&why) || !nvrtc.open(&why)) {
      std::fprintf(stderr, "parity: %s\n", why.c_str());
      return 2;
    }
    rt.synchronize();  // the runtime's context current on this thread, for the driver calls
    Ctx c(rt, rt, &cu, nvrtc, cu.arch(), root, seed);
    c.reps = reps;
    c.json = json;
    std::printf("parity: device %s (%s), Spindle compiler %s, hand-written with %s\n", rt.deviceName().c_str(),
                cu.arch().c_str(), rt.compilerIdentity().c_str(), nvrtc.identity().c_str());
    std::printf("seed %" PRIu64 " (repeat with --seed %" PRIu64
                "); %d interleaved pairs per kernel, L2 (%d MB) "
                "flushed before each timed launch\n",
                seed, seed, reps, cu.l2Bytes() >> 20);
    c.emit(Json()
               .s("type", "meta")
               .s("tool", "parity")
               .s("device", rt.deviceName())
               .s("target", cu.arch())
               .s("compiler", rt.compilerIdentity())
               .s("handwritten_compiler", nvrtc.identity())
               .s("seed", std::to_string(seed))
               .i("reps", reps));
    failures = runCases(c, only);
    printTable(c);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parity: %s\n", e.what());
    if (json) std::fclose(json);
    return 2;
  }
  if (json) std::fclose(json);
  std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "all agreed", failures);
  return failures ? 1 : 0;
}
