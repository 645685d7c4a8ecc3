// samples/gemm.spn through the Spindle runtime, as a user launches it (the
// runtime specializes: 32-bit indices, alignment, divisibility): checked by
// value against an fp64 reference on fresh random inputs (C poisoned with
// NaN first; every element of small shapes, every 61st row of large ones),
// then timed (median of CUDA-event timings after warm-up). The torch.matmul
// anchor is timed by the caller in the same session (bench/gemm_gpu.sh).
//
//   gemm_check [SPN] [--reps N] [--shapes MxNxK,...] [--types f16,bf16]
#include <spindle/runtime.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using spindle::DeviceBuffer;
using spindle::ScalarType;

namespace {

uint16_t toF16(float f) { return uint16_t(spindle::scalar(ScalarType::F16, double(f)).bits); }
double fromF16(uint16_t h) {
  const int e = (h >> 10) & 31, m = h & 1023;
  const double s = (h & 0x8000) ? -1 : 1;
  return e == 0 ? s * std::ldexp(double(m), -24) : s * std::ldexp(double(m + 1024), e - 25);
}
uint16_t toBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return uint16_t((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}
double fromBf16(uint16_t h) {
  const uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

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

}  // namespace

int main(int argc, char** argv) {
  std::string spn = "samples/gemm.spn";
  int reps = 20;
  std::vector<Shape> shapes = {{37, 53, 29},       {150, 260, 100},   {1000, 777, 333},   {4096, 4096, 4096},
                               {8192, 8192, 1024}, {4096, 4096, 128}, {4096, 4096, 4095}, {4000, 3000, 1000}};
  std::vector<ScalarType> types = {ScalarType::F16, ScalarType::BF16};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (a == "--shapes" && i + 1 < argc) shapes = parseShapes(argv[++i]);
    else if (a == "--types" && i + 1 < argc) {
      std::string t = argv[++i];
      types.clear();
      if (t.find("f16") != std::string::npos && t.find("bf16") != 0) types.push_back(ScalarType::F16);
      if (t.find("bf16") != std::string::npos) types.push_back(ScalarType::BF16);
    } else spn = a;
  }
  // gemm has @tune: each shape is tuned before its first launch (the check),
  // so no timed launch includes tuning; SPINDLE_TUNE=0 times the default.
  spindle::RuntimeOptions options;
  options.tune.mode = spindle::TuneMode::Blocking;
  spindle::Runtime rt(options);
  std::printf("device: %s (%s, %s)\n", rt.deviceName().c_str(), rt.target().c_str(), rt.compilerIdentity().c_str());
  spindle::Kernel k = rt.loadModule(spn).kernel("gemm");
  int failures = 0;
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<float> d(-1, 1);
  for (ScalarType t : types) {
    const bool bf = t == ScalarType::BF16;
    for (Shape s : shapes) {
      const size_t na = size_t(s.M * s.K), nb = size_t(s.K * s.N), nc = size_t(s.M * s.N);
      std::vector<uint16_t> A(na), B(nb);
      std::vector<double> Av(na), Bv(nb);
      for (size_t i = 0; i < na; ++i) {
        A[i] = bf ? toBf16(d(rng)) : toF16(d(rng));
        Av[i] = bf ? fromBf16(A[i]) : fromF16(A[i]);
      }
      for (size_t i = 0; i < nb; ++i) {
        B[i] = bf ? toBf16(d(rng)) : toF16(d(rng));
        Bv[i] = bf ? fromBf16(B[i]) : fromF16(B[i]);
      }
      DeviceBuffer dA = rt.allocate(na * 2), dB = rt.allocate(nb * 2), dC = rt.allocate(nc * 4);
      rt.copyToDevice(dA, A.data(), na * 2);
      rt.copyToDevice(dB, B.data(), nb * 2);
      std::vector<float> C(nc);
      std::memset(C.data(), 0xff, nc * 4);  // NaN
      rt.copyToDevice(dC, C.data(), nc * 4);
      auto launch = [&] {
        k.launch(nullptr, {spindle::tensor(dA.data(), t, {s.M, s.K}), spindle::tensor(dB.data(), t, {s.K, s.N}),
                           spindle::tensor(dC.data(), ScalarType::F32, {s.M, s.N})});
      };
      launch();
      rt.synchronize();
      rt.copyToHost(C.data(), dC, nc * 4);
      // The f32 sum of K exact products of values in [-1, 1]: the fp32
      // matmul's bound.
      const int64_t step = s.M * s.N * s.K > 50000000 ? 61 : 1;
      double worst = 0;
      int bad = 0;
      std::vector<double> row(size_t(s.N));
      for (int64_t i = 0; i < s.M; i += step) {
        std::fill(row.begin(), row.end(), 0.0);
        for (int64_t kk = 0; kk < s.K; ++kk) {
          const double a = Av[size_t(i * s.K + kk)];
          const double* b = &Bv[size_t(kk * s.N)];
          for (int64_t j = 0; j < s.N; ++j) row[size_t(j)] += a * b[j];
        }
        for (int64_t j = 0; j < s.N; ++j) {
          const double want = row[size_t(j)], got = C[size_t(i * s.N + j)];
          const double tol = 1e-6 * double(s.K) + 1e-5 * std::fabs(want), err = std::fabs(got - want);
          if (!(err <= tol) && bad++ < 3) std::printf("  C[%ld, %ld] = %g, want %g\n", long(i), long(j), got, want);
          worst = std::max(worst, std::isnan(err) ? 1e30 : err / tol);
        }
      }
      failures += bad != 0;
      std::printf("gemm %s %ldx%ldx%ld: %s (worst error %.3g of the bound)", bf ? "bf16" : "f16", long(s.M), long(s.N),
                  long(s.K), bad ? "FAILED" : "ok", worst);
      if (s.M * s.N * s.K >= 1000000000) {
        for (int w = 0; w < 3; ++w) launch();
        rt.synchronize();
        std::vector<float> ms;
        for (int r = 0; r < reps; ++r) ms.push_back(rt.timeMs(nullptr, launch));
        std::sort(ms.begin(), ms.end());
        const double med = ms[ms.size() / 2];
        std::printf("; %.4f ms, %.1f TFLOP/s", med,
                    2.0 * double(s.M) * double(s.N) * double(s.K) / (med * 1e-3) / 1e12);
      }
      const spindle::Arg args[3] = {spindle::tensor(dA.data(), t, {s.M, s.K}),
                                    spindle::tensor(dB.data(), t, {s.K, s.N}),
                                    spindle::tensor(dC.data(), ScalarType::F32, {s.M, s.N})};
      const spindle::CompileReport used = k.compileFor(args, 3);
      if (!used.tuneConfig.empty()) std::printf(" [%s, %s]", used.tuneConfig.c_str(), used.tuneChoice.c_str());
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  std::printf(failures ? "FAILURES: %d\n" : "all ok\n", failures);
  return failures != 0;
}
