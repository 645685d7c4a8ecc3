// samples/attention.spn through the Spindle runtime, as a user launches it
// (the runtime specializes: the static head dim, 32-bit indices, alignment):
// checked by value against bench/references.cpp's fp64 attention on fresh
// random inputs (O and L poisoned with NaN first; every query row of the
// small shapes up to S = 1000, every 7th past that, every 127th of the timed
// ones), then the timed shapes timed
// (median of CUDA-event timings after warm-up). torch's
// scaled_dot_product_attention is timed by the caller in the same session
// (bench/attention_gpu.sh), which reads the --results file.
//
//   attention_check [SPN] [--reps N] [--seq S] [--bh N] [--results FILE]
//                   [--types f16,bf16] [--dims 64,128] [--no-small]
#include <spindle/runtime.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "attention_args.hpp"
#include "references.hpp"

using spindle::DeviceBuffer;
using spindle::ScalarType;

namespace {

uint16_t toCode(ScalarType t, double v) { return uint16_t(spindle::scalar(t, v).bits); }
double fromCode(ScalarType t, uint16_t h) { return bench::halfValue(t == ScalarType::BF16, h); }

struct Config {
  ScalarType t;
  int64_t B, HQ, HKV, S, D;
  bool causal;
  bool timed;
};

std::string describe(const Config& c) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s B=%ld HQ=%ld HKV=%ld S=%ld D=%ld %s", c.t == ScalarType::BF16 ? "bf16" : "f16",
                long(c.B), long(c.HQ), long(c.HKV), long(c.S), long(c.D), c.causal ? "causal" : "full");
  return buf;
}

// The reference for the query rows q of head row block qh (B * HQ of them)
// with q % step == 0 (bench::refAttention on a one-row "sequence" would lose
// the causal mask's position, so this is its loop, row by row).
void referenceRow(const std::vector<double>& Q, const std::vector<double>& K, const std::vector<double>& V,
                  const Config& c, int64_t qh, int64_t q, double scale, std::vector<double>& o, double& lse) {
  const int64_t kh = (qh / c.HQ) * c.HKV + (qh % c.HQ) / (c.HQ / c.HKV);
  const double* qv = &Q[size_t((qh * c.S + q) * c.D)];
  const int64_t keys = c.causal ? q + 1 : c.S;
  std::vector<double> s(static_cast<size_t>(keys));
  double mx = -INFINITY;
  for (int64_t k = 0; k < keys; ++k) {
    const double* kv = &K[size_t((kh * c.S + k) * c.D)];
    double dot = 0;
    for (int64_t d = 0; d < c.D; ++d) dot += qv[d] * kv[d];
    s[size_t(k)] = scale * dot;
    mx = std::max(mx, s[size_t(k)]);
  }
  double sum = 0;
  for (int64_t k = 0; k < keys; ++k) sum += std::exp(s[size_t(k)] - mx);
  o.assign(size_t(c.D), 0.0);
  for (int64_t k = 0; k < keys; ++k) {
    const double p = std::exp(s[size_t(k)] - mx) / sum;
    const double* vv = &V[size_t((kh * c.S + k) * c.D)];
    for (int64_t d = 0; d < c.D; ++d) o[size_t(d)] += p * vv[d];
  }
  lse = mx + std::log(sum);
}

}  // namespace

int main(int argc, char** argv) {
  std::string spn = "samples/attention.spn", results;
  int reps = 20;
  int64_t seq = 4096, bh = 32;
  bool small = true;
  std::vector<ScalarType> types = {ScalarType::F16, ScalarType::BF16};
  std::vector<int64_t> dims = {64, 128};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (a == "--seq" && i + 1 < argc) seq = std::atol(argv[++i]);
    else if (a == "--bh" && i + 1 < argc) bh = std::atol(argv[++i]);
    else if (a == "--results" && i + 1 < argc) results = argv[++i];
    else if (a == "--no-small") small = false;
    else if (a == "--dims" && i + 1 < argc) {
      dims.clear();
      for (const char* p = argv[++i]; *p;) {
        dims.push_back(std::strtol(p, const_cast<char**>(&p), 10));
        if (*p == ',') ++p;
      }
    } else if (a == "--types" && i + 1 < argc) {
      std::string t = argv[++i];
      types.clear();
      if (t.find("f16") != std::string::npos && t.find("bf16") != 0) types.push_back(ScalarType::F16);
      if (t.find("bf16") != std::string::npos) types.push_back(ScalarType::BF16);
    } else spn = a;
  }
  spindle::Runtime rt;
  std::printf("device: %s (%s, %s)\n", rt.deviceName().c_str(), rt.target().c_str(), rt.compilerIdentity().c_str());
  // The kernel is named as its file (attention.spn: attention, attention_dot.spn: attention_dot).
  const size_t base = spn.find_last_of('/') + 1;
  spindle::Kernel k = rt.loadModule(spn).kernel(spn.substr(base, spn.rfind(".spn") - base));
  // Q as [B * HQ, S, D] with S a dim (samples/attention_dot.spn), or as the
  // 2-D [B * HQ * S, D] with S a scalar (samples/attention.spn).
  const bool perHead = !k.info().params.empty() && k.info().params[0].dims.size() == 3;
  FILE* out = results.empty() ? nullptr : std::fopen(results.c_str(), "w");

  std::vector<Config> configs;
  for (ScalarType t : types)
    for (int64_t D : dims) {
      if (small) {  // edges: odd lengths, grouped-query, several batches
        configs.push_back({t, 1, 4, 2, 77, D, true, false});
        configs.push_back({t, 2, 2, 1, 300, D, false, false});
        configs.push_back({t, 1, 8, 1, 1000, D, true, false});
        configs.push_back({t, 1, 2, 2, 4097, D, false, false});
      }
      for (bool causal : {false, true}) configs.push_back({t, 1, bh, bh, seq, D, causal, true});
    }

  int failures = 0;
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> dist(-1, 1);
  for (const Config& c : configs) {
    const size_t nq = size_t(c.B * c.HQ * c.S), nk = size_t(c.B * c.HKV * c.S);
    const size_t eq = nq * size_t(c.D), ek = nk * size_t(c.D);
    std::vector<uint16_t> Q(eq), K(ek), V(ek);
    std::vector<double> Qv(eq), Kv(ek), Vv(ek);
    auto fill = [&](std::vector<uint16_t>& h, std::vector<double>& v) {
      for (size_t i = 0; i < h.size(); ++i) {
        h[i] = toCode(c.t, dist(rng));
        v[i] = fromCode(c.t, h[i]);
      }
    };
    fill(Q, Qv);
    fill(K, Kv);
    fill(V, Vv);
    const double scale = 2.0 / std::sqrt(double(c.D));  // sharper rows than 1 / sqrt(D)
    DeviceBuffer dQ = rt.allocate(eq * 2), dK = rt.allocate(ek * 2), dV = rt.allocate(ek * 2);
    DeviceBuffer dO = rt.allocate(eq * 2), dL = rt.allocate(nq * 4);
    rt.copyToDevice(dQ, Q.data(), eq * 2);
    rt.copyToDevice(dK, K.data(), ek * 2);
    rt.copyToDevice(dV, V.data(), ek * 2);
    std::vector<uint16_t> O(eq, 0xffff);  // NaN
    std::vector<float> L(nq);
    std::memset(L.data(), 0xff, nq * 4);
    rt.copyToDevice(dO, O.data(), eq * 2);
    rt.copyToDevice(dL, L.data(), nq * 4);
    const std::vector<spindle::Arg> args = bench::attentionArgs(perHead, {c.B, c.HQ, c.HKV, c.S, c.D, c.causal, scale},
                                                                c.t, dQ.data(), dK.data(), dV.data(), dO.data(),
                                                                dL.data());  // the kernel's form: perHead above
    auto launch = [&] { k.launch(nullptr, args.data(), args.size()); };
    launch();
    rt.synchronize();
    rt.copyToHost(O.data(), dO, eq * 2);
    rt.copyToHost(L.data(), dL, nq * 4);
    // The bound (tests/cpu_samples, attention): P rounded to T before P V
    // and O rounded to T, with |V| <= 1: |err| <= 1.5 u (1 + |O|) + 1e-5,
    // u the unit roundoff (2^-11 f16, 2^-8 bf16); L only f32 errors.
    const double u = c.t == ScalarType::BF16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
    const int64_t step = c.timed ? 127 : c.S > 1000 ? 7 : 1;
    double worst = 0;
    int bad = 0;
    std::vector<double> o;
    for (int64_t qh = 0; qh < c.B * c.HQ; ++qh)
      for (int64_t q = (qh * 13) % step; q < c.S; q += step) {
        double lse = 0;
        referenceRow(Qv, Kv, Vv, c, qh, q, scale, o, lse);
        const size_t row = size_t(qh * c.S + q);
        for (int64_t d = 0; d < c.D; ++d) {
          const double got = fromCode(c.t, O[row * size_t(c.D) + size_t(d)]), want = o[size_t(d)];
          const double tol = 1.5 * u * (1 + std::fabs(want)) + 1e-5, err = std::fabs(got - want);
          if (!(err <= tol) && bad++ < 3)
            std::printf("  O[%ld, %ld, %ld] = %g, want %g\n", long(qh), long(q), long(d), got, want);
          worst = std::max(worst, std::isnan(err) ? 1e30 : err / tol);
        }
        const double tolL = 1e-4 + 1e-5 * std::fabs(lse), errL = std::fabs(double(L[row]) - lse);
        if (!(errL <= tolL) && bad++ < 3) std::printf("  L[%ld, %ld] = %g, want %g\n", long(qh), long(q), L[row], lse);
        worst = std::max(worst, std::isnan(errL) ? 1e30 : errL / tolL);
      }
    failures += bad != 0;
    std::printf("attention %s: %s (worst error %.3g of the bound)", describe(c).c_str(), bad ? "FAILED" : "ok", worst);
    if (c.timed) {
      for (int w = 0; w < 3; ++w) launch();
      rt.synchronize();
      std::vector<float> ms;
      for (int r = 0; r < reps; ++r) ms.push_back(rt.timeMs(nullptr, launch));
      std::sort(ms.begin(), ms.end());
      const double med = ms[ms.size() / 2];
      // FlashAttention's count: 4 B H S^2 D (two matmuls), half with causal.
      const double flops = 4.0 * double(c.B * c.HQ) * double(c.S) * double(c.S) * double(c.D) / (c.causal ? 2 : 1);
      const double tflops = flops / (med * 1e-3) / 1e12;
      std::printf("; %.4f ms, %.1f TFLOP/s", med, tflops);
      if (out)
        std::fprintf(out, "%s %ld %ld %ld %d %.6f %.3f\n", c.t == ScalarType::BF16 ? "bf16" : "f16", long(c.B * c.HQ),
                     long(c.S), long(c.D), c.causal ? 1 : 0, med, tflops);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  if (out) std::fclose(out);
  std::printf(failures ? "FAILURES: %d\n" : "all ok\n", failures);
  return failures != 0;
}
