// samples/gemm.spn and samples/gemm_ex.spn through the Spindle runtime, as
// a user launches them (the runtime specializes: 32-bit indices, alignment,
// divisibility): each row checked by value against an fp64 reference on
// fresh random inputs (C poisoned with NaN first; every element of small
// shapes, every 61st row of large ones), then timed (median of CUDA-event
// timings after warm-up); a dot kernel's bias_gelu row is also timed in
// turns with its plain kernel (one launch each, alternated), the ratio the
// goal reads. The anchors (torch.matmul, addmm + GELU, bmm, a
// Triton GEMM) are timed by the caller in the same session
// (bench/gemm_gpu.sh, bench/gemm_anchors.py).
//
//   gemm_check [SPN] [--reps N] [--shapes MxNxK,...] [--types f16,bf16]
//              [--rows "VARIANT[@MxNxK,...] ..."] [--ex SPN] [--c f32|t]
//              [--batch NB] [--json FILE]
//
// Variants (--rows; default "plain", at --shapes):
//   plain      gemm (SPN): C = A @ B, A [M, K], B [K, N] row-major
//   ex         gemm_ex, the same product (no bias, ACT = identity)
//   bt         gemm_ex, B stored N x K (Bt, a linear layer's weight)
//   at         gemm_ex, A stored K x M (At)
//   bias_gelu  gemm_ex, C = gelu_tanh(A @ B + bias)
//   batched    gemm_ex, NB (--batch, 4) products of M / NB x N x K: the
//              FLOPs of the plain row at the same shape
// SPN's kernel is named as its file (gemm.spn: gemm). samples/gemm_dot.spn
// (the tile-level dot) has the plain and bias_gelu rows, both its own
// kernel: gemm_dot with ACT = identity and no bias, and with gelu_tanh and
// the bias.
// --c t writes C in the input type (as torch.matmul does); f32 (the
// default) in f32. --json appends one line per timed row for the anchors.
#include <spindle/runtime.hpp>

#include "references.hpp"  // bench::halfValue (header only)

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using spindle::DeviceBuffer;
using spindle::ScalarType;

namespace {

uint16_t toF16(float f) { return uint16_t(spindle::scalar(ScalarType::F16, double(f)).bits); }
double fromF16(uint16_t h) { return bench::halfValue(false, h); }
uint16_t toBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return uint16_t((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}
double fromBf16(uint16_t h) { return bench::halfValue(true, h); }
// The median of timings in ms.
double medianMs(std::vector<float> ms) {
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}
double geluTanh(double x) { return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x))); }

struct Shape {
  int64_t M, N, K;
};

std::vector<Shape> parseShapes(const std::string& s) {
  std::vector<Shape> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    Shape sh{};
    if (std::sscanf(item.c_str(), "%ldx%ldx%ld", &sh.M, &sh.N, &sh.K) == 3) out.push_back(sh);
  }
  return out;
}

struct Row {
  std::string variant;
  std::vector<Shape> shapes;  // empty: --shapes
};

// "plain bt@4096x4096x4095,4000x3000x1000 bias_gelu"
std::vector<Row> parseRows(const std::string& s) {
  std::vector<Row> out;
  std::stringstream ss(s);
  std::string item;
  while (ss >> item) {
    const size_t at = item.find('@');
    out.push_back(
        {item.substr(0, at), at == std::string::npos ? std::vector<Shape>{} : parseShapes(item.substr(at + 1))});
  }
  return out;
}

bool known(const std::string& v) {
  return v == "plain" || v == "ex" || v == "bt" || v == "at" || v == "bias_gelu" || v == "batched";
}

}  // namespace

int main(int argc, char** argv) {
  std::string spn = "samples/gemm.spn", exSpn, jsonPath;
  int reps = 20;
  int64_t batch = 4;
  bool cInT = false;
  std::vector<Shape> shapes = {{37, 53, 29},       {150, 260, 100},   {1000, 777, 333},   {4096, 4096, 4096},
                               {8192, 8192, 1024}, {4096, 4096, 128}, {4096, 4096, 4095}, {4000, 3000, 1000}};
  std::vector<ScalarType> types = {ScalarType::F16, ScalarType::BF16};
  std::vector<Row> rows = {{"plain", {}}};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (a == "--shapes" && i + 1 < argc) shapes = parseShapes(argv[++i]);
    else if (a == "--rows" && i + 1 < argc) rows = parseRows(argv[++i]);
    else if (a == "--ex" && i + 1 < argc) exSpn = argv[++i];
    else if (a == "--json" && i + 1 < argc) jsonPath = argv[++i];
    else if (a == "--batch" && i + 1 < argc) batch = std::max<int64_t>(1, std::atoll(argv[++i]));
    else if (a == "--c" && i + 1 < argc) cInT = std::string(argv[++i]) == "t";
    else if (a == "--types" && i + 1 < argc) {
      std::string t = argv[++i];
      types.clear();
      if (t.find("f16") != std::string::npos && t.find("bf16") != 0) types.push_back(ScalarType::F16);
      if (t.find("bf16") != std::string::npos) types.push_back(ScalarType::BF16);
    } else spn = a;
  }
  if (exSpn.empty()) {  // gemm_ex.spn next to the plain sample
    const size_t slash = spn.find_last_of('/');
    exSpn = (slash == std::string::npos ? std::string() : spn.substr(0, slash + 1)) + "gemm_ex.spn";
  }
  for (const Row& r : rows)
    if (!known(r.variant)) {
      std::fprintf(stderr, "gemm_check: unknown variant '%s' (plain, ex, bt, at, bias_gelu, batched)\n",
                   r.variant.c_str());
      return 2;
    }
  FILE* json = jsonPath.empty() ? nullptr : std::fopen(jsonPath.c_str(), "a");
  // Both kernels have @tune: each shape is tuned before its first launch
  // (the check), so no timed launch includes tuning; SPINDLE_TUNE=0 times
  // the default config.
  spindle::RuntimeOptions options;
  options.tune.mode = spindle::TuneMode::Blocking;
  spindle::Runtime rt(options);
  std::printf("device: %s (%s, %s)\n", rt.deviceName().c_str(), rt.target().c_str(), rt.compilerIdentity().c_str());
  // The plain kernel is named after its file: gemm.spn's gemm, gemm_dot.spn's gemm_dot.
  const size_t base = spn.find_last_of('/') + 1;
  const std::string plainName = spn.substr(base, spn.rfind(".spn") - base);
  // gemm_dot.spn's and gemm_ws.spn's kernels take the epilogue's options
  // themselves (gemm_dot[T, U, ACT](A, B, bias | None, C)): the plain row is
  // ACT = identity with no bias, the bias_gelu row gelu_tanh with the bias;
  // they have no other variant.
  const bool dotStyle = plainName == "gemm_dot" || plainName == "gemm_ws";
  spindle::KernelOptions identity, gelu;
  identity.consts = {{"ACT", spindle::ConstOverride::ofFunction("identity")}};
  gelu.consts = {{"ACT", spindle::ConstOverride::ofFunction("gelu_tanh")}};
  spindle::Module plainModule = rt.loadModule(spn);
  spindle::Kernel plain = dotStyle ? plainModule.kernel(plainName, identity) : plainModule.kernel(plainName);
  std::optional<spindle::Kernel> dotGelu;
  if (dotStyle) dotGelu = plainModule.kernel(plainName, gelu);
  bool needEx = false;
  for (const Row& r : rows) {
    if (dotStyle && r.variant != "plain" && r.variant != "bias_gelu") {
      std::fprintf(stderr, "gemm_check: %s has the plain and bias_gelu rows only, not '%s'\n", spn.c_str(),
                   r.variant.c_str());
      return 2;
    }
    needEx |= r.variant != "plain" && !dotStyle;
  }
  std::optional<spindle::Kernel> exIdentity, exGelu;
  if (needEx) {
    spindle::Module m = rt.loadModule(exSpn);
    exIdentity = m.kernel("gemm_ex", identity);
    exGelu = m.kernel("gemm_ex", gelu);
  }
  int failures = 0;
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<float> d(-1, 1);
  for (ScalarType t : types) {
    const bool bf = t == ScalarType::BF16;
    const char* tn = bf ? "bf16" : "f16";
    const ScalarType ct = cInT ? t : ScalarType::F32;
    const size_t cBytes = cInT ? 2 : 4;
    auto draw = [&](size_t n, std::vector<uint16_t>& bits, std::vector<double>& vals) {
      bits.resize(n);
      vals.resize(n);
      for (size_t i = 0; i < n; ++i) {
        bits[i] = bf ? toBf16(d(rng)) : toF16(d(rng));
        vals[i] = bf ? fromBf16(bits[i]) : fromF16(bits[i]);
      }
    };
    for (const Row& row : rows) {
      const std::string& v = row.variant;
      const bool isBatched = v == "batched", isBt = v == "bt", isAt = v == "at", isBias = v == "bias_gelu";
      for (Shape s : row.shapes.empty() ? shapes : row.shapes) {
        // The batched row: NB products of M / NB rows (the plain row's FLOPs).
        const int64_t NB = isBatched ? batch : 1, M = isBatched ? (s.M + batch - 1) / batch : s.M, N = s.N, K = s.K;
        const size_t na = size_t(NB * M * K), nb = size_t(NB * K * N), nc = size_t(NB * M * N);
        std::vector<uint16_t> A, B, bias;
        std::vector<double> Av, Bv, biasV;
        draw(na, A, Av);
        draw(nb, B, Bv);
        draw(size_t(N), bias, biasV);
        std::vector<uint16_t> Adev = A, Bdev = B;  // as stored: A K x M for at, B N x K for bt
        if (isAt)
          for (int64_t i = 0; i < M; ++i)
            for (int64_t k = 0; k < K; ++k) Adev[size_t(k * M + i)] = A[size_t(i * K + k)];
        if (isBt)
          for (int64_t k = 0; k < K; ++k)
            for (int64_t j = 0; j < N; ++j) Bdev[size_t(j * K + k)] = B[size_t(k * N + j)];
        DeviceBuffer dA = rt.allocate(na * 2), dB = rt.allocate(nb * 2), dBias = rt.allocate(size_t(N) * 2),
                     dC = rt.allocate(nc * cBytes);
        rt.copyToDevice(dA, Adev.data(), na * 2);
        rt.copyToDevice(dB, Bdev.data(), nb * 2);
        rt.copyToDevice(dBias, bias.data(), size_t(N) * 2);
        std::vector<unsigned char> Cbytes(nc * cBytes, 0xff);  // NaN
        rt.copyToDevice(dC, Cbytes.data(), Cbytes.size());
        std::vector<spindle::Arg> args;
        spindle::Kernel k = plain;
        if (dotStyle) {
          k = isBias ? *dotGelu : plain;
          args = {spindle::tensor(dA.data(), t, {M, K}), spindle::tensor(dB.data(), t, {K, N}),
                  isBias ? spindle::tensor(dBias.data(), t, {N}) : spindle::none(),
                  spindle::tensor(dC.data(), ct, {M, N})};
        } else if (v == "plain") {
          args = {spindle::tensor(dA.data(), t, {M, K}), spindle::tensor(dB.data(), t, {K, N}),
                  spindle::tensor(dC.data(), ct, {M, N})};
        } else {
          k = isBias ? *exGelu : *exIdentity;
          args = {isAt ? spindle::none() : spindle::tensor(dA.data(), t, {NB, M, K}),
                  isAt ? spindle::tensor(dA.data(), t, {NB, K, M}) : spindle::none(),
                  isBt ? spindle::none() : spindle::tensor(dB.data(), t, {NB, K, N}),
                  isBt ? spindle::tensor(dB.data(), t, {NB, N, K}) : spindle::none(),
                  isBias ? spindle::tensor(dBias.data(), t, {N}) : spindle::none(),
                  spindle::tensor(dC.data(), ct, {NB, M, N})};
        }
        auto launch = [&] { k.launch(nullptr, args.data(), args.size()); };
        launch();
        rt.synchronize();
        rt.copyToHost(Cbytes.data(), dC, Cbytes.size());
        auto got = [&](size_t i) -> double {
          if (!cInT) {
            float f;
            std::memcpy(&f, &Cbytes[4 * i], 4);
            return f;
          }
          uint16_t h;
          std::memcpy(&h, &Cbytes[2 * i], 2);
          return bf ? fromBf16(h) : fromF16(h);
        };
        // The f32 sum of K exact products of values in [-1, 1]: the fp32
        // matmul's bound; GELU's slope is below 1.2; a C in f16 / bf16 adds
        // its rounding (half an ulp: 2^-11 / 2^-8 relative, and f16's
        // subnormal step).
        const double storageRel = !cInT ? 0.0 : bf ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
        const double storageAbs = !cInT ? 0.0 : bf ? 1e-30 : std::ldexp(1.0, -24);
        const int64_t step = NB * M * N * K > 50000000 ? 61 : 1;
        double worst = 0;
        int bad = 0;
        std::vector<double> acc(static_cast<size_t>(N));
        for (int64_t i = 0; i < NB * M; i += step) {
          const int64_t b = i / M;
          std::fill(acc.begin(), acc.end(), 0.0);
          for (int64_t kk = 0; kk < K; ++kk) {
            const double a = Av[size_t(i * K + kk)];
            const double* brow = &Bv[size_t((b * K + kk) * N)];
            for (int64_t j = 0; j < N; ++j) acc[size_t(j)] += a * brow[j];
          }
          for (int64_t j = 0; j < N; ++j) {
            const double want = isBias ? geluTanh(acc[size_t(j)] + biasV[size_t(j)]) : acc[size_t(j)];
            const double g = got(size_t(i * N + j));
            const double sumTol =
                (isBias ? 1.2 : 1.0) * (1e-6 * double(K) + 1e-5 * std::fabs(want)) + (isBias ? 1e-6 : 0.0);
            // Rounding the f32 result (within sumTol of want) to C's type.
            const double tol = sumTol + storageRel * (std::fabs(want) + sumTol) + storageAbs;
            const double err = std::fabs(g - want);
            if (!(err <= tol) && bad++ < 3)
              std::printf("  C[%ld, %ld, %ld] = %g, want %g\n", long(b), long(i % M), long(j), g, want);
            worst = std::max(worst, std::isnan(err) ? 1e30 : err / tol);
          }
        }
        failures += bad != 0;
        std::printf("%s %s %s%ldx%ldx%ld: %s (worst error %.3g of the bound)", v.c_str(), tn,
                    NB > 1 ? (std::to_string(NB) + "x").c_str() : "", long(M), long(N), long(K), bad ? "FAILED" : "ok",
                    worst);
        // copy_tile's tensor maps (gemm_ws.spn): where A's and B's rows are
        // 16-byte multiples a launch must make them. The element path it
        // takes otherwise is right, so only this count shows it.
        const uint64_t fallbacksBefore = rt.stats().tensorMapFallbacks;
        launch();
        rt.synchronize();
        const uint64_t notMade = rt.stats().tensorMapFallbacks - fallbacksBefore;
        if (notMade) {
          const bool tmaAble = dotStyle && (K * 2) % 16 == 0 && (N * 2) % 16 == 0;
          std::printf(" (%llu tensor maps not made: element copies%s)", static_cast<unsigned long long>(notMade),
                      tmaAble ? ", FAILED: the rows are 16-byte multiples" : "");
          failures += tmaAble;
        }
        double med = -1;
        if (NB * M * N * K >= 1000000000) {
          for (int w = 0; w < 3; ++w) launch();
          rt.synchronize();
          std::vector<float> ms;
          for (int r = 0; r < reps; ++r) ms.push_back(rt.timeMs(nullptr, launch));
          med = medianMs(ms);
          std::printf("; %.4f ms, %.1f TFLOP/s", med,
                      2.0 * double(NB * M) * double(N) * double(K) / (med * 1e-3) / 1e12);
        }
        // bias + GELU against the plain GEMM in turns (one launch of each,
        // reps times): the GPU's clock drifts with its temperature and power
        // over a run, and two rows timed a minute apart carry that drift
        // into their ratio (H200, 8192x8192x1024: 92.6% in one run's rows,
        // 93-104% in alternated pairs, docs/performance.md session 24).
        double turnsPlain = -1, turnsFused = -1;
        if (isBias && dotStyle && med > 0) {
          std::vector<spindle::Arg> plainArgs = args;
          plainArgs[2] = spindle::none();
          auto launchPlain = [&] { plain.launch(nullptr, plainArgs.data(), plainArgs.size()); };
          for (int w = 0; w < 3; ++w) launchPlain();  // tuned here if no plain row was
          rt.synchronize();
          std::vector<float> pm, fm;
          for (int r = 0; r < reps; ++r) {
            pm.push_back(rt.timeMs(nullptr, launchPlain));
            fm.push_back(rt.timeMs(nullptr, launch));
          }
          const double flops = 2.0 * double(M) * double(N) * double(K);
          turnsPlain = flops / (medianMs(pm) * 1e-3) / 1e12;
          turnsFused = flops / (medianMs(fm) * 1e-3) / 1e12;
          std::printf("; in turns with plain: %.1f / %.1f TFLOP/s = %.1f%%", turnsFused, turnsPlain,
                      100.0 * turnsFused / turnsPlain);
        }
        const spindle::CompileReport used = k.compileFor(args.data(), args.size());
        if (!used.tuneConfig.empty()) std::printf(" [%s, %s]", used.tuneConfig.c_str(), used.tuneChoice.c_str());
        std::printf("\n");
        std::fflush(stdout);
        if (json && med > 0) {
          std::fprintf(json,
                       "{\"variant\": \"%s\", \"dtype\": \"%s\", \"c\": \"%s\", \"M\": %ld, \"N\": %ld, \"K\": %ld, "
                       "\"NB\": %ld, \"Mb\": %ld, \"ok\": %s, \"ms\": %.6f, \"tflops\": %.3f, \"config\": \"%s\", "
                       "\"turns_tflops\": %.3f, \"turns_plain_tflops\": %.3f}\n",
                       v.c_str(), tn, cInT ? tn : "f32", long(s.M), long(N), long(K), long(NB), long(M),
                       bad ? "false" : "true", med, 2.0 * double(NB * M) * double(N) * double(K) / (med * 1e-3) / 1e12,
                       used.tuneConfig.c_str(), turnsFused, turnsPlain);
          std::fflush(json);
        }
      }
    }
  }
  if (json) std::fclose(json);
  std::printf(failures ? "FAILURES: %d\n" : "all ok\n", failures);
  return failures != 0;
}
