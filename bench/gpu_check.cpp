// gpu_check: runs every sample through the Spindle runtime on a GPU.
//
//   gpu_check [--samples DIR] [--json FILE] [--seed S] [--only a,b] [--variant NAME=PATH]...
//             [--const SAMPLE:NAME=VALUE]... [--no-perf] [--no-probe] [--reps R] [--dump DIR]
//
// For each sample: fresh random inputs (seed printed; --seed repeats a run),
// two shapes that are not multiples of the block size, outputs poisoned with
// 0xFF bytes (NaN for floats) before the launch, results compared with the
// double-precision CPU references in references.cpp. Then language features
// by value against references written beside them (warp primitives,
// fast_tanh's accuracy, key-value reductions, the v2 atomics), the
// runtime's cache behaviour (dynamic dims: one binary; two static values:
// two), a refused launch, a timing of each sample at a GPU-filling size
// (CUDA-event median after warm-up), the launch overhead of the runtime
// against a raw cuLaunchKernel of the same binary, and cold compile against
// a disk-cache hit in fresh processes. Everything measurable goes to --json
// as JSON lines.
// Exit status: 0 all correct, 1 a kernel was numerically wrong or a check
// failed, 2 the program itself failed.
//
// --dump DIR writes, for the samples that offer it, the exact inputs and
// outputs of chosen correctness cases (raw little-endian files and one JSON
// line each in DIR/manifest.jsonl); bench/peers.py --dump DIR recomputes them
// with PyTorch and compares.
//
// --only a,b runs those samples and language-feature checks (warp_primitives,
// math_more, argmax, atomics, barriers) and no others; the cache, launch-overhead and
// compile-time checks run either way.
//
// --variant softmax=bench/variants/softmax_regs.spn runs that file in place of
// samples/softmax.spn (tagged with its file stem); with variants given, only
// the named samples run. --const softmax:BLOCK=256 gives a const of a sample
// another value (KernelOptions::consts; tagged BLOCK=256), checked against
// the same reference.
#include <spindle/runtime.hpp>

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "references.hpp"

#ifndef SPINDLE_BENCH_SAMPLES_DIR
#define SPINDLE_BENCH_SAMPLES_DIR "samples"
#endif

using bench::Vec;
using spindle::Arg;
using spindle::DeviceBuffer;
using spindle::Kernel;
using spindle::Runtime;
using spindle::ScalarType;

namespace {

// ---------------------------------------------------------------- utilities

struct Rng {  // splitmix64: fast enough to fill 64M values
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform(double lo, double hi) { return lo + (hi - lo) * double(next() >> 11) * 0x1.0p-53; }
};

uint16_t toHalf(float v) { return uint16_t(spindle::scalar(ScalarType::F16, double(v)).bits); }
double fromHalf(uint16_t h) { return bench::halfValue(false, h); }

uint16_t toBf16(float v) {  // round to nearest even (finite values)
  uint32_t u;
  std::memcpy(&u, &v, 4);
  return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
double fromBf16(uint16_t h) { return bench::halfValue(true, h); }

std::string shapeText(std::initializer_list<int64_t> dims) {
  std::string s;
  for (int64_t d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

std::string jsonEscape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += c;
    else if (c == '\n') o += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20) o += ' ';
    else o += c;
  }
  return o;
}

// A JSON object built field by field.
struct Json {
  std::string body;
  Json& s(const char* k, const std::string& v) { return raw(k, "\"" + jsonEscape(v) + "\""); }
  Json& n(const char* k, double v) {
    char b[64];
    if (std::isfinite(v)) std::snprintf(b, sizeof b, "%.6g", v);
    else std::snprintf(b, sizeof b, "null");
    return raw(k, b);
  }
  Json& i(const char* k, int64_t v) { return raw(k, std::to_string(v)); }
  Json& b(const char* k, bool v) { return raw(k, v ? "true" : "false"); }
  Json& raw(const char* k, const std::string& v) {
    body += (body.empty() ? "{" : ", ") + std::string("\"") + k + "\": " + v;
    return *this;
  }
  std::string str() const { return body + "}"; }
};

// ---------------------------------------------------------------- context

struct Ctx {
  Runtime* rt = nullptr;
  std::string samplesDir;
  std::map<std::string, std::string> variantPath;                                     // sample -> file
  std::map<std::string, std::map<std::string, spindle::ConstOverride>> sampleConsts;  // sample -> --const values
  std::FILE* json = nullptr;
  Rng rng{0};
  uint64_t seed = 0;
  bool perf = true;
  int reps = 30;
  int failures = 0;
  std::string dumpDir;  // --dump: where dumped cases go (empty: none)
  std::map<std::string, spindle::Module> modules;

  std::string pathOf(const std::string& sample) const {
    auto it = variantPath.find(sample);
    return it != variantPath.end() ? it->second : samplesDir + "/" + sample + ".spn";
  }
  std::string variantOf(const std::string& sample) const {
    auto consts = sampleConsts.find(sample);
    if (consts != sampleConsts.end()) {
      std::string tag;
      for (const auto& [name, v] : consts->second)
        tag += (tag.empty() ? "" : ",") + name + "=" + spindle::constOverrideText(v);
      return tag;
    }
    auto it = variantPath.find(sample);
    if (it == variantPath.end()) return "";
    std::string p = it->second;
    size_t slash = p.find_last_of('/');
    if (slash != std::string::npos) p = p.substr(slash + 1);
    size_t dot = p.rfind(".spn");
    return dot == std::string::npos ? p : p.substr(0, dot);
  }
  // `consts`: what the sample's run function binds for this handle (a `fn`
  // parameter such as act_and_mul's ACT); --const values for the sample are
  // added to them and win over them.
  Kernel kernel(const std::string& sample, const std::string& name,
                const std::map<std::string, spindle::ConstOverride>& consts = {}) {
    std::string path = pathOf(sample);
    auto it = modules.find(path);
    if (it == modules.end()) it = modules.emplace(path, rt->loadModule(path)).first;
    spindle::KernelOptions options;
    options.consts = consts;
    if (auto given = sampleConsts.find(sample); given != sampleConsts.end())
      for (const auto& [name, v] : given->second) options.consts[name] = v;
    return it->second.kernel(name, options);
  }
  void emit(const Json& j) {
    if (json) {
      std::fprintf(json, "%s\n", j.str().c_str());
      std::fflush(json);
    }
  }

  // Device buffers ----------------------------------------------------------
  template <class T>
  DeviceBuffer upload(const std::vector<T>& host) {
    DeviceBuffer d = rt->allocate(host.size() * sizeof(T));
    rt->copyToDevice(d, host.data(), host.size() * sizeof(T));
    return d;
  }
  DeviceBuffer poisoned(size_t bytes) {  // 0xFF bytes: NaN as f32/f16, -1 as i32
    std::vector<unsigned char> host(bytes, 0xFF);
    return upload(host);
  }
  template <class T>
  std::vector<T> download(const DeviceBuffer& d, size_t count) {
    std::vector<T> host(count);
    rt->copyToHost(host.data(), d, count * sizeof(T));
    return host;
  }
  Vec downloadF32(const DeviceBuffer& d, size_t count) {
    auto h = download<float>(d, count);
    return Vec(h.begin(), h.end());
  }
  Vec downloadF16(const DeviceBuffer& d, size_t count) {
    auto h = download<uint16_t>(d, count);
    Vec out(count);
    for (size_t i = 0; i < count; ++i) out[i] = fromHalf(h[i]);
    return out;
  }

  // f16 or bf16 (`t`) values as doubles.
  Vec downloadHalf(ScalarType t, const DeviceBuffer& d, size_t count) {
    auto h = download<uint16_t>(d, count);
    Vec out(count);
    for (size_t i = 0; i < count; ++i) out[i] = t == ScalarType::BF16 ? fromBf16(h[i]) : fromHalf(h[i]);
    return out;
  }

  // Random host data, returned both as the stored values and as doubles.
  std::vector<float> randF32(size_t n, Vec& asDouble, double lo = -1, double hi = 1) {
    std::vector<float> v(n);
    asDouble.resize(n);
    for (size_t i = 0; i < n; ++i) {
      v[i] = float(rng.uniform(lo, hi));
      asDouble[i] = v[i];
    }
    return v;
  }
  std::vector<uint16_t> randF16(size_t n, Vec& asDouble, double lo = -1, double hi = 1) {
    std::vector<uint16_t> v(n);
    asDouble.resize(n);
    for (size_t i = 0; i < n; ++i) {
      v[i] = toHalf(float(rng.uniform(lo, hi)));
      asDouble[i] = fromHalf(v[i]);
    }
    return v;
  }

  std::vector<uint16_t> randHalf(ScalarType t, size_t n, Vec& asDouble, double lo = -1, double hi = 1) {
    if (t != ScalarType::BF16) return randF16(n, asDouble, lo, hi);
    std::vector<uint16_t> v(n);
    asDouble.resize(n);
    for (size_t i = 0; i < n; ++i) {
      v[i] = toBf16(float(rng.uniform(lo, hi)));
      asDouble[i] = fromBf16(v[i]);
    }
    return v;
  }

  // Dumps for PyTorch (--dump) ---------------------------------------------
  // One tensor of a dumped case: the host bytes of what was passed in
  // (`output` false) or of what the kernel left there (`output` true).
  struct DumpTensor {
    std::string name;  // the kernel parameter
    bool output;
    ScalarType dtype;
    std::vector<int64_t> shape;
    const void* data;  // product(shape) elements of dtype
  };
  // Writes each tensor to DIR/<sample>.<case>.<in|out>.<name>.bin (raw,
  // little-endian, row-major) and one line to DIR/manifest.jsonl:
  //   {"sample": "...", "case": "...", "seed": "...", "scalars": {"eps": 1e-06},
  //    "tensors": [{"name": "x", "role": "in", "dtype": "bf16", "shape": [67, 1000], "file": "..."}, ...]}
  // bench/peers.py --dump DIR reads it (DUMP_REFERENCES there: one function
  // per sample). Does nothing without --dump.
  void dump(const std::string& sample, const std::string& caseName, const std::vector<DumpTensor>& tensors,
            const std::vector<std::pair<std::string, double>>& scalars = {}) {
    if (dumpDir.empty()) return;
    std::string stem = sample + "." + caseName;
    for (char& ch : stem)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '.') ch = '_';
    std::string list, scalarText;
    for (const auto& t : tensors) {
      size_t count = 1;
      std::string dims;
      for (int64_t d : t.shape) count *= size_t(d), dims += (dims.empty() ? "" : ", ") + std::to_string(d);
      std::string file = stem + (t.output ? ".out." : ".in.") + t.name + ".bin";
      std::ofstream f(dumpDir + "/" + file, std::ios::binary);
      f.write(static_cast<const char*>(t.data), std::streamsize(count * spindle::scalarBytes(t.dtype)));
      if (!f) return fail(sample + " dump", "cannot write " + dumpDir + "/" + file);
      list += (list.empty() ? "" : ", ") + Json()
                                               .s("name", t.name)
                                               .s("role", t.output ? "out" : "in")
                                               .s("dtype", std::string(spindle::scalarName(t.dtype)))
                                               .raw("shape", "[" + dims + "]")
                                               .s("file", file)
                                               .str();
    }
    for (const auto& [name, v] : scalars) {
      char b[64];
      std::snprintf(b, sizeof b, "%.17g", v);  // exact: PyTorch rounds it as the kernel's argument was
      scalarText += (scalarText.empty() ? "" : ", ") + std::string("\"") + jsonEscape(name) + "\": " + b;
    }
    std::ofstream m(dumpDir + "/manifest.jsonl", std::ios::app);
    m << Json()
             .s("sample", sample)
             .s("case", caseName)
             .s("seed", std::to_string(seed))
             .raw("scalars", "{" + scalarText + "}")
             .raw("tensors", "[" + list + "]")
             .str()
      << "\n";
    if (!m) fail(sample + " dump", "cannot write " + dumpDir + "/manifest.jsonl");
  }

  // Correctness -------------------------------------------------------------
  // |got - want| <= atol + rtol * |want|, NaN never passes.
  bool check(const std::string& sample, const std::string& what, const std::string& shape, const Vec& got,
             const Vec& want, double atol, double rtol) {
    double maxErr = 0, maxRel = 0;
    int64_t bad = 0, firstBad = -1;
    for (size_t i = 0; i < want.size(); ++i) {
      double err = std::fabs(got[i] - want[i]);
      bool ok = err <= atol + rtol * std::fabs(want[i]);  // false for NaN
      if (!ok && bad++ == 0) firstBad = int64_t(i);
      if (std::isfinite(err)) {
        maxErr = std::max(maxErr, err);
        maxRel = std::max(maxRel, err / std::max(std::fabs(want[i]), 1e-30));
      } else {
        maxErr = INFINITY;
      }
    }
    bool ok = bad == 0 && got.size() == want.size();
    std::string label = sample + (what.empty() ? "" : "." + what);
    if (ok) {
      std::printf("  ok     %-28s %-16s max abs err %.3g (atol %.3g, rtol %.3g)\n", label.c_str(), shape.c_str(),
                  maxErr, atol, rtol);
    } else {
      ++failures;
      std::printf("  WRONG  %-28s %-16s %" PRId64 " of %zu elements out of tolerance; first at %" PRId64
                  ": got %.9g, want %.9g (atol %.3g, rtol %.3g)\n",
                  label.c_str(), shape.c_str(), bad, want.size(), firstBad, got[size_t(firstBad)],
                  want[size_t(firstBad)], atol, rtol);
    }
    emit(Json()
             .s("type", "check")
             .s("impl", "spindle")
             .s("kernel", sample)
             .s("variant", variantOf(sample))
             .s("output", what)
             .s("shape", shape)
             .b("ok", ok)
             .n("max_abs_err", maxErr)
             .i("bad", bad)
             .n("atol", atol)
             .n("rtol", rtol));
    return ok;
  }
  // A property of an order-dependent result (who won a compare-and-swap,
  // which old values an atomic handed out), where no single wanted value
  // exists to compare with; `detail` says what broke, or what was seen.
  bool expect(const std::string& sample, const std::string& what, const std::string& shape, bool ok,
              const std::string& detail) {
    std::string label = sample + (what.empty() ? "" : "." + what);
    std::printf("  %-6s %-28s %-16s %s\n", ok ? "ok" : "WRONG", label.c_str(), shape.c_str(), detail.c_str());
    if (!ok) ++failures;
    Json j;
    j.s("type", "check")
        .s("impl", "spindle")
        .s("kernel", sample)
        .s("variant", variantOf(sample))
        .s("output", what)
        .s("shape", shape)
        .b("ok", ok);
    if (!detail.empty()) j.s(ok ? "note" : "error", detail);
    emit(j);
    return ok;
  }
  void fail(const std::string& what, const std::string& why) {
    ++failures;
    std::printf("  FAIL   %s: %s\n", what.c_str(), why.c_str());
    emit(
        Json().s("type", "check").s("impl", "spindle").s("kernel", what).s("shape", "").b("ok", false).s("error", why));
  }

  // Timing ------------------------------------------------------------------
  // Median of `reps` single-launch CUDA-event timings after 3 warm-up launches.
  double timeMedian(const std::function<void()>& launch) {
    for (int i = 0; i < 3; ++i) launch();
    rt->synchronize();
    std::vector<float> t;
    for (int r = 0; r < reps; ++r) t.push_back(rt->timeMs(nullptr, launch));
    std::sort(t.begin(), t.end());
    return reps % 2 ? t[size_t(reps / 2)] : 0.5 * (t[size_t(reps / 2 - 1)] + t[size_t(reps / 2)]);
  }
  void perfRecord(const std::string& sample, const std::string& size, double ms, double bytes, double flops = 0,
                  const std::string& note = "") {
    double gbps = bytes / (ms * 1e-3) / 1e9;
    double tflops = flops > 0 ? flops / (ms * 1e-3) / 1e12 : 0;
    std::string label = sample + (variantOf(sample).empty() ? "" : " [" + variantOf(sample) + "]");
    std::printf("  perf   %-28s %-16s %9.4f ms %8.1f GB/s", label.c_str(), size.c_str(), ms, gbps);
    if (flops > 0) std::printf(" %7.2f TFLOP/s", tflops);
    std::printf("%s%s\n", note.empty() ? "" : "  ", note.c_str());
    Json j;
    j.s("type", "perf")
        .s("impl", "spindle")
        .s("kernel", sample)
        .s("variant", variantOf(sample))
        .s("size", size)
        .n("ms", ms)
        .n("bytes", bytes)
        .n("gbps", gbps);
    if (flops > 0) j.n("flops", flops).n("tflops", tflops);
    if (!note.empty()) j.s("note", note);
    emit(j);
  }
};

Arg t32(const DeviceBuffer& b, std::initializer_list<int64_t> shape) {
  return spindle::tensor(b.data(), ScalarType::F32, shape);
}
Arg t16(const DeviceBuffer& b, std::initializer_list<int64_t> shape) {
  return spindle::tensor(b.data(), ScalarType::F16, shape);
}

// Tolerances. Elementwise f32: a few ulp. Reductions: grow with sqrt(N) (the
// error of a tree/strided sum of N terms). Sums reported as values: with N.
constexpr double kElemAtol = 1e-6, kElemRtol = 1e-5;
double redTol(int64_t n) { return 1e-5 * (1.0 + std::sqrt(double(n)) / 16.0); }
double sumAtol(int64_t n) { return 1e-6 * double(n); }
constexpr double kF16Atol = 2e-3, kF16Rtol = 1e-2;
// bf16 keeps 8 significant bits (unit roundoff 2^-8 = 3.9e-3, against 4.9e-4
// for f16); a result rounded twice (fused_add_rmsnorm, as vLLM) may be 2^-7
// off, so 4 units of roundoff relative.
constexpr double kBF16Atol = 2e-3, kBF16Rtol = 1.6e-2;

// Big device inputs shared by the timings (read-only; 64M f32 each).
struct Pool {
  DeviceBuffer a, b, h16, out1, out2, small;
  static constexpr int64_t kFloats = int64_t(1) << 26;
};

// ---------------------------------------------------------------- samples

void runAxpy(Ctx& c, Pool* pool) {
  Kernel k = c.kernel("axpy", "axpy");
  for (int64_t n : {int64_t(1000003), int64_t(4099)}) {
    Vec x, y;
    auto hx = c.randF32(size_t(n), x), hy = c.randF32(size_t(n), y);
    auto dx = c.upload(hx), dy = c.upload(hy);
    k.launch(nullptr, {t32(dx, {n}), t32(dy, {n}), spindle::scalar(0.75f)});
    c.check("axpy", "f32", shapeText({n}), c.downloadF32(dy, size_t(n)), bench::refAxpy(x, y, 0.75), kElemAtol,
            kElemRtol);
    auto gx = c.randF16(size_t(n), x), gy = c.randF16(size_t(n), y);
    auto ex = c.upload(gx), ey = c.upload(gy);
    k.launch(nullptr, {t16(ex, {n}), t16(ey, {n}), spindle::scalar(0.75f)});
    c.check("axpy", "f16", shapeText({n}), c.downloadF16(ey, size_t(n)), bench::refAxpy(x, y, 0.75), kF16Atol,
            kF16Rtol);
  }
  if (!pool) return;
  int64_t n = Pool::kFloats;
  double ms = c.timeMedian([&] {
    k.launch(nullptr, {t32(pool->a, {n}), t32(pool->out2, {n}), spindle::scalar(0.5f)});
  });
  c.perfRecord("axpy", "64M f32", ms, 12.0 * double(n));
  ms = c.timeMedian([&] { k.launch(nullptr, {t16(pool->h16, {n}), t16(pool->out1, {n}), spindle::scalar(0.5f)}); });
  c.perfRecord("axpy", "64M f16", ms, 6.0 * double(n));
}

// The row-wise samples are checked at one short and one long, odd row length.
const std::vector<std::pair<int64_t, int64_t>> kRowShapes = {{67, 1000}, {9, 8229}};

void runSoftmax(Ctx& c, Pool* pool) {
  Kernel k = c.kernel("softmax", "softmax");
  for (auto [M, N] : kRowShapes) {
    Vec x;
    auto dx = c.upload(c.randF32(size_t(M * N), x, -4, 4));
    auto dy = c.poisoned(size_t(M * N) * 4);
    k.launch(nullptr, {t32(dx, {M, N}), t32(dy, {M, N})});
    c.check("softmax", "", shapeText({M, N}), c.downloadF32(dy, size_t(M * N)), bench::refSoftmax(x, M, N), 1e-9,
            redTol(N));
  }
  if (!pool) return;
  int64_t M = 8192, N = 8192;
  double ms = c.timeMedian([&] { k.launch(nullptr, {t32(pool->a, {M, N}), t32(pool->out1, {M, N})}); });
  c.perfRecord("softmax", "8192x8192", ms, 8.0 * double(M * N));
}

void runLayernorm(Ctx& c, Pool* pool) {
  Kernel k = c.kernel("layernorm", "layernorm");
  for (auto [M, N] : kRowShapes) {
    Vec x, w, b;
    auto dx = c.upload(c.randF32(size_t(M * N), x, -2, 3));
    auto dw = c.upload(c.randF32(size_t(N), w)), db = c.upload(c.randF32(size_t(N), b));
    auto dy = c.poisoned(size_t(M * N) * 4);
    k.launch(nullptr, {t32(dx, {M, N}), t32(dw, {N}), t32(db, {N}), t32(dy, {M, N})});
    c.check("layernorm", "", shapeText({M, N}), c.downloadF32(dy, size_t(M * N)),
            bench::refLayernorm(x, w, b, M, N, 1e-5), redTol(N), redTol(N));
  }
  if (!pool) return;
  int64_t M = 8192, N = 8192;
  double ms = c.timeMedian([&] {
    k.launch(nullptr, {t32(pool->a, {M, N}), t32(pool->b, {N}), t32(pool->small, {N}), t32(pool->out1, {M, N})});
  });
  c.perfRecord("layernorm", "8192x8192", ms, 8.0 * double(M * N) + 8.0 * double(N));
}

void runRmsnorm(Ctx& c, Pool* pool) {
  Kernel k = c.kernel("rmsnorm_f16", "rmsnorm_f16");
  for (auto [M, N] : kRowShapes) {
    Vec x, w;
    auto dx = c.upload(c.randF16(size_t(M * N), x, -3, 3));
    auto dw = c.upload(c.randF16(size_t(N), w, 0.5, 1.5));
    auto dy = c.poisoned(size_t(M * N) * 2);
    k.launch(nullptr, {t16(dx, {M, N}), t16(dw, {N}), t16(dy, {M, N})});
    c.check("rmsnorm_f16", "", shapeText({M, N}), c.downloadF16(dy, size_t(M * N)), bench::refRmsnorm(x, w, M, N, 1e-6),
            kF16Atol, kF16Rtol);
  }
  if (!pool) return;
  int64_t M = 8192, N = 8192;
  double ms = c.timeMedian([&] {
    k.launch(nullptr, {t16(pool->h16, {M, N}), t16(pool->h16, {N}), t16(pool->out1, {M, N})});
  });
  c.perfRecord("rmsnorm_f16", "8192x8192", ms, 4.0 * double(M * N) + 2.0 * double(N));
}

Arg tHalf(ScalarType t, const void* p, std::initializer_list<int64_t> shape) { return spindle::tensor(p, t, shape); }

// vLLM's fused_add_rms_norm, in place on x and residual, f16 and bf16. Hidden
// sizes of real models (4096, 5120) and odd ones: 31 and 100 (fewer threads
// than a warp, a partial run), 1000 (125 threads: a partial last warp),
// 12007 (block 1024, so some threads take two runs, then a partial run);
// from one token up to 2048. x and residual are inputs too, so they cannot
// start poisoned; instead each sits between 16-byte guards of 0xFF bytes
// that must survive the launch, and an element the kernel skipped keeps its
// input, which the comparison catches.
void runFusedAddRmsnorm(Ctx& c, Pool* pool) {
  Kernel k = c.kernel("fused_add_rmsnorm", "fused_add_rmsnorm");
  const float eps = 1e-6f;
  struct Case {
    int64_t M, H;
    bool dump;  // --dump: this case goes to PyTorch too
  };
  const Case cases[] = {{1, 4096, false},  {5, 31, false},   {300, 100, false},   {67, 1000, true},
                        {16, 5120, false}, {9, 12007, true}, {2048, 4096, false}, {3, 16384, false}};
  const size_t G = 8;  // guard elements (16 bytes) on each side of x and residual
  for (ScalarType t : {ScalarType::F16, ScalarType::BF16}) {
    const bool bf = t == ScalarType::BF16;
    const std::string tn(spindle::scalarName(t));
    for (const Case& cs : cases) {
      const int64_t M = cs.M, H = cs.H;
      const size_t n = size_t(M * H);
      Vec x, r, w, wantX, wantR;
      auto hx = c.randHalf(t, n, x, -2, 2), hr = c.randHalf(t, n, r, -3, 3), hw = c.randHalf(t, size_t(H), w, 0.5, 1.5);
      auto guarded = [&](const std::vector<uint16_t>& v) {
        std::vector<uint16_t> g(n + 2 * G, 0xFFFF);
        std::copy(v.begin(), v.end(), g.begin() + long(G));
        return c.upload(g);
      };
      auto dx = guarded(hx), dr = guarded(hr), dw = c.upload(hw);
      auto at = [&](const DeviceBuffer& d) { return static_cast<const void*>(static_cast<uint16_t*>(d.data()) + G); };
      k.launch(nullptr,
               {tHalf(t, at(dx), {M, H}), tHalf(t, at(dr), {M, H}), tHalf(t, dw.data(), {H}), spindle::scalar(eps)});
      bench::refFusedAddRmsnorm(x, r, w, M, H, double(eps), bf ? bench::roundBf16 : bench::roundF16, wantX, wantR);
      auto outX = c.download<uint16_t>(dx, n + 2 * G), outR = c.download<uint16_t>(dr, n + 2 * G);
      Vec gotX(n), gotR(n);
      for (size_t i = 0; i < n; ++i) {
        gotX[i] = bf ? fromBf16(outX[G + i]) : fromHalf(outX[G + i]);
        gotR[i] = bf ? fromBf16(outR[G + i]) : fromHalf(outR[G + i]);
      }
      const std::string shape = shapeText({M, H});
      c.check("fused_add_rmsnorm", tn + " x", shape, gotX, wantX, bf ? kBF16Atol : kF16Atol, bf ? kBF16Rtol : kF16Rtol);
      c.check("fused_add_rmsnorm", tn + " residual", shape, gotR, wantR, bf ? kBF16Atol : kF16Atol,
              bf ? kBF16Rtol : kF16Rtol);
      for (const auto* out : {&outX, &outR}) {
        bool intact = std::all_of(out->begin(), out->begin() + long(G), [](uint16_t v) { return v == 0xFFFF; }) &&
                      std::all_of(out->end() - long(G), out->end(), [](uint16_t v) { return v == 0xFFFF; });
        if (!intact)
          c.fail("fused_add_rmsnorm " + tn + " " + shape,
                 std::string(out == &outX ? "x" : "residual") + ": a write outside the tensor (guard overwritten)");
      }
      if (cs.dump) {
        c.dump("fused_add_rmsnorm", tn + "_" + shape,
               {{"x", false, t, {M, H}, hx.data()},
                {"residual", false, t, {M, H}, hr.data()},
                {"w", false, t, {H}, hw.data()},
                {"x", true, t, {M, H}, outX.data() + G},
                {"residual", true, t, {M, H}, outR.data() + G}},
               {{"eps", double(eps)}});
      }
    }
  }
  if (!pool) return;
  // bf16, as served: 8192 tokens at Llama-3-8B's hidden size, 4096 at 70B's.
  // Bytes: x and residual read, residual and x written, w read once
  // (8 * M * H + 2 * H). The second pass re-reads the residual run its own
  // thread stored just before (8 or 16 KB per row, a few hundred rows in
  // flight): assumed an L2 hit, so not counted as DRAM traffic. Each launch
  // updates its inputs in place; the values stay finite and the time does
  // not depend on them.
  const size_t n = size_t(1) << 25;  // M * H for both shapes
  std::vector<uint16_t> hx(n), hr(n), hw(8192);
  Rng r{c.seed ^ 0xadd};
  for (auto& v : hx) v = toBf16(float(r.uniform(-2, 2)));
  for (auto& v : hr) v = toBf16(float(r.uniform(-3, 3)));
  for (auto& v : hw) v = toBf16(float(r.uniform(0.5, 1.5)));
  auto dx = c.upload(hx), dr = c.upload(hr), dw = c.upload(hw);
  for (auto shape : {std::pair<int64_t, int64_t>{8192, 4096}, {4096, 8192}}) {
    const int64_t M = shape.first, H = shape.second;
    const ScalarType t = ScalarType::BF16;
    double ms = c.timeMedian([&] {
      k.launch(nullptr, {tHalf(t, dx.data(), {M, H}), tHalf(t, dr.data(), {M, H}), tHalf(t, dw.data(), {H}),
                         spindle::scalar(eps)});
    });
    c.perfRecord("fused_add_rmsnorm", shapeText({M, H}) + " bf16", ms, 8.0 * double(M * H) + 2.0 * double(H));
  }
}

// vLLM's silu_and_mul, gelu_and_mul and gelu_tanh_and_mul: one source, one
// kernel handle per activation (ACT bound through KernelOptions::consts, as
// vLLM instantiates its template per activation), f16 and bf16. Shapes:
// D = 1 (one thread, a partial run only), 31 and 100 (fewer threads than a
// warp, whole runs then a partial one), 1000 (whole runs, but D is not a
// multiple of 16: the binary without the divisibility fact), 4096 and 14336
// (Llama-3 8B's intermediate size: 1792 runs over 1024 threads), 12007
// (block 1024, two runs for some threads, the last partial); one token up
// to 300. The output starts as NaN (0xFF bytes) between 16-byte guards that
// must survive the launch.
struct Activation {
  const char* name;  // the module def bound to ACT
  double (*ref)(double);
};
const Activation kActivations[] = {
    {"silu", bench::actSilu}, {"gelu", bench::actGelu}, {"gelu_tanh", bench::actGeluTanh}};

void runActAndMul(Ctx& c, Pool* pool) {
  // --const act_and_mul:ACT=NAME runs that activation alone (its reference must be in kActivations).
  std::vector<Activation> acts(std::begin(kActivations), std::end(kActivations));
  if (auto given = c.sampleConsts.find("act_and_mul"); given != c.sampleConsts.end() && given->second.count("ACT")) {
    const std::string want = given->second.at("ACT").function;
    acts.erase(std::remove_if(acts.begin(), acts.end(), [&](const Activation& a) { return want != a.name; }),
               acts.end());
    if (acts.empty()) return c.fail("act_and_mul", "no CPU reference for ACT=" + want);
  }
  struct Case {
    int64_t M, D;
    bool dump;  // --dump: this case goes to PyTorch too
  };
  const Case cases[] = {{3, 1, false},    {5, 31, false},     {300, 100, false}, {67, 1000, true},
                        {1, 4096, false}, {16, 14336, false}, {9, 12007, true},  {128, 4096, false}};
  const size_t G = 8;  // guard elements (16 bytes) on each side of out
  for (const Activation& act : acts) {
    Kernel k = c.kernel("act_and_mul", "act_and_mul", {{"ACT", spindle::ConstOverride::ofFunction(act.name)}});
    for (ScalarType t : {ScalarType::F16, ScalarType::BF16}) {
      const bool bf = t == ScalarType::BF16;
      const std::string tn(spindle::scalarName(t));
      for (const Case& cs : cases) {
        const int64_t M = cs.M, D = cs.D;
        const size_t n = size_t(M * D);
        Vec x;
        auto hx = c.randHalf(t, 2 * n, x, -5, 5);
        auto dx = c.upload(hx);
        auto dout = c.poisoned((n + 2 * G) * 2);
        const void* out = static_cast<uint16_t*>(dout.data()) + G;
        k.launch(nullptr, {tHalf(t, dx.data(), {M, 2 * D}), tHalf(t, out, {M, D})});
        auto hout = c.download<uint16_t>(dout, n + 2 * G);
        Vec got(n);
        for (size_t i = 0; i < n; ++i) got[i] = bf ? fromBf16(hout[G + i]) : fromHalf(hout[G + i]);
        const std::string shape = shapeText({M, D});
        c.check("act_and_mul", std::string(act.name) + " " + tn, shape, got,
                bench::refActAndMul(x, M, D, act.ref, bf ? bench::roundBf16 : bench::roundF16),
                bf ? kBF16Atol : kF16Atol, bf ? kBF16Rtol : kF16Rtol);
        bool intact = std::all_of(hout.begin(), hout.begin() + long(G), [](uint16_t v) { return v == 0xFFFF; }) &&
                      std::all_of(hout.end() - long(G), hout.end(), [](uint16_t v) { return v == 0xFFFF; });
        if (!intact)
          c.fail("act_and_mul " + std::string(act.name) + " " + tn + " " + shape,
                 "out: a write outside the tensor (guard overwritten)");
        // The case name carries the activation (the dump's scalars are numbers only);
        // peers.py reads it back from there.
        if (cs.dump)
          c.dump("act_and_mul", std::string(act.name) + "_" + tn + "_" + shape,
                 {{"x", false, t, {M, 2 * D}, hx.data()}, {"out", true, t, {M, D}, hout.data() + G}});
      }
    }
  }
  if (!pool) return;
  // bf16, as served: 4096 tokens at Llama-3 8B's intermediate size (the
  // MLP's gate_up projection gives [4096, 2 * 14336]). Bytes: x read once,
  // out written once (2 * M * D + M * D elements of 2 bytes).
  const int64_t M = 4096, D = 14336;
  const ScalarType t = ScalarType::BF16;
  std::vector<uint16_t> hx(size_t(2 * M * D));
  Rng r{c.seed ^ 0xac7};
  for (auto& v : hx) v = toBf16(float(r.uniform(-5, 5)));
  auto dx = c.upload(hx);
  DeviceBuffer dout = c.rt->allocate(size_t(M * D) * 2);
  for (const Activation& act : acts) {
    Kernel k = c.kernel("act_and_mul", "act_and_mul", {{"ACT", spindle::ConstOverride::ofFunction(act.name)}});
    double ms = c.timeMedian([&] {
      k.launch(nullptr, {tHalf(t, dx.data(), {M, 2 * D}), tHalf(t, dout.data(), {M, D})});
    });
    c.perfRecord("act_and_mul", shapeText({M, D}) + " bf16 " + act.name, ms, 6.0 * double(M * D));
  }
}

// vLLM's rotary_embedding_kernel, in place on q and k: one kernel handle per
// layout (NEOX bound through KernelOptions::consts, as vLLM instantiates
// IS_NEOX), f16 and bf16. q and k are strided slices of one fused qkv buffer
// [NT, (NH + 2 * NKV) * HS], as vLLM's attention layers pass them
// (qkv.split): token stride (NH + 2 * NKV) * HS, so the runtime's overlap
// check must prove the two interleaved views disjoint before it binds them.
// Shapes (NT, NH, NKV, HS, ROT): one token (decode) to 333, GQA (32 / 8) and
// equal head counts (12 / 12), HS 128 with ROT 128 and with ROT 64 (partial
// rotary), HS 64, Phi-2's HS 80 with ROT 32, and a block of 8 threads (fewer
// than a warp). positions are random in [0, MAXPOS), the cache holds random
// values in [-1, 1] (not a true rotation: the kernel does not care, and both
// products of each pair then matter). The rotated dims are compared with the
// CPU reference; every other element of the buffer (the dims past ROT, the v
// slice) must keep its bits, and 16-byte guards of 0xFF bytes on both sides
// must survive.
void runRotaryEmbedding(Ctx& c, Pool* pool) {
  struct Layout {
    const char* name;  // in labels and dumped case names
    bool neox;
  };
  std::vector<Layout> layouts = {{"neox", true}, {"gptj", false}};
  // --const rotary_embedding:NEOX=True|False runs that layout alone.
  if (auto given = c.sampleConsts.find("rotary_embedding");
      given != c.sampleConsts.end() && given->second.count("NEOX")) {
    const bool want = given->second.at("NEOX").i != 0;
    layouts.erase(std::remove_if(layouts.begin(), layouts.end(), [&](const Layout& l) { return l.neox != want; }),
                  layouts.end());
  }
  struct Case {
    int64_t NT, NH, NKV, HS, ROT;
    bool dump;  // --dump: this case goes to PyTorch too
  };
  const Case cases[] = {{1, 32, 8, 128, 128, false},  {7, 32, 8, 128, 64, true},    {333, 32, 8, 128, 128, false},
                        {7, 12, 12, 128, 128, false}, {333, 12, 12, 128, 64, true}, {333, 12, 12, 64, 64, false},
                        {65, 32, 32, 80, 32, false},  {5, 2, 1, 16, 8, false}};
  const size_t G = 8;  // guard elements (16 bytes) on each side of qkv
  for (const Layout& lay : layouts) {
    Kernel k =
        c.kernel("rotary_embedding", "rotary_embedding", {{"NEOX", spindle::ConstOverride::ofInt(lay.neox ? 1 : 0)}});
    for (ScalarType t : {ScalarType::F16, ScalarType::BF16}) {
      const bool bf = t == ScalarType::BF16;
      const std::string tn(spindle::scalarName(t));
      for (const Case& cs : cases) {
        const int64_t NT = cs.NT, NH = cs.NH, NKV = cs.NKV, HS = cs.HS, ROT = cs.ROT, MAXPOS = 4096;
        const int64_t W = (NH + 2 * NKV) * HS;  // one token's row of qkv
        const size_t n = size_t(NT * W);
        Vec qkv, cache;
        auto hqkv = c.randHalf(t, n, qkv, -2, 2);
        auto hcache = c.randHalf(t, size_t(MAXPOS * ROT), cache, -1, 1);
        std::vector<int64_t> pos(static_cast<size_t>(NT));
        for (auto& p : pos) p = int64_t(c.rng.next() % uint64_t(MAXPOS));
        std::vector<uint16_t> guarded(n + 2 * G, 0xFFFF);
        std::copy(hqkv.begin(), hqkv.end(), guarded.begin() + long(G));
        auto dqkv = c.upload(guarded), dpos = c.upload(pos), dcache = c.upload(hcache);
        const uint16_t* q = static_cast<uint16_t*>(dqkv.data()) + G;
        k.launch(nullptr,
                 {spindle::tensor(dpos.data(), ScalarType::I64, {NT}), spindle::tensor(q, t, {NT, NH, HS}, {W, HS, 1}),
                  spindle::tensor(q + NH * HS, t, {NT, NKV, HS}, {W, HS, 1}), tHalf(t, dcache.data(), {MAXPOS, ROT})});
        auto out = c.download<uint16_t>(dqkv, n + 2 * G);
        Vec want = qkv;
        bench::refRotaryEmbedding(want, pos, cache, NT, NH, NKV, HS, ROT, lay.neox,
                                  bf ? bench::roundBf16 : bench::roundF16);
        // The rotated elements against the reference; all others against their input.
        Vec gotRot, wantRot, gotKept, wantKept;
        for (size_t i = 0; i < n; ++i) {
          const int64_t col = int64_t(i) % W, head = col / HS;
          const double got = bf ? fromBf16(out[G + i]) : fromHalf(out[G + i]);
          if (head < NH + NKV && col % HS < ROT) {
            gotRot.push_back(got);
            wantRot.push_back(want[i]);
          } else {
            gotKept.push_back(got);
            wantKept.push_back(qkv[i]);
          }
        }
        const std::string label = std::string(lay.name) + " " + tn;
        const std::string shape = shapeText({NT, NH, NKV, HS}) + " rot" + std::to_string(ROT);
        c.check("rotary_embedding", label + " q,k", shape, gotRot, wantRot, bf ? kBF16Atol : kF16Atol,
                bf ? kBF16Rtol : kF16Rtol);
        // Bit for bit: the inputs are finite and none is -0, so equal values are equal bits.
        c.check("rotary_embedding", label + " untouched", shape, gotKept, wantKept, 0, 0);
        bool intact = std::all_of(out.begin(), out.begin() + long(G), [](uint16_t v) { return v == 0xFFFF; }) &&
                      std::all_of(out.end() - long(G), out.end(), [](uint16_t v) { return v == 0xFFFF; });
        if (!intact)
          c.fail("rotary_embedding " + label + " " + shape, "qkv: a write outside the buffer (guard overwritten)");
        if (cs.dump) {
          // q and k as contiguous tensors (PyTorch needs only their values);
          // NEOX travels as a scalar (1 or 0) and in the case name.
          auto slice = [&](const uint16_t* from, int64_t offset, int64_t heads) {
            std::vector<uint16_t> v(size_t(NT * heads * HS));
            for (int64_t tok = 0; tok < NT; ++tok)
              std::copy(from + tok * W + offset, from + tok * W + offset + heads * HS,
                        v.begin() + long(tok * heads * HS));
            return v;
          };
          auto qIn = slice(hqkv.data(), 0, NH), kIn = slice(hqkv.data(), NH * HS, NKV);
          auto qOut = slice(out.data() + G, 0, NH), kOut = slice(out.data() + G, NH * HS, NKV);
          c.dump("rotary_embedding",
                 std::string(lay.name) + "_" + tn + "_" + shapeText({NT, NH, NKV, HS}) + "_rot" + std::to_string(ROT),
                 {{"positions", false, ScalarType::I64, {NT}, pos.data()},
                  {"q", false, t, {NT, NH, HS}, qIn.data()},
                  {"k", false, t, {NT, NKV, HS}, kIn.data()},
                  {"cos_sin_cache", false, t, {MAXPOS, ROT}, hcache.data()},
                  {"q", true, t, {NT, NH, HS}, qOut.data()},
                  {"k", true, t, {NT, NKV, HS}, kOut.data()}},
                 {{"NEOX", lay.neox ? 1.0 : 0.0}});
        }
      }
    }
  }
  if (!pool) return;
  // bf16, as served: a prefill of 4096 tokens of Llama-3 8B (NH 32, NKV 8,
  // HS = ROT = 128), q and k slices of the qkv projection's output
  // [4096, 6144]. One sequence: positions 0 .. 4095, so each cache row is
  // read by one token only. The cache holds true cos/sin (8192 positions,
  // Llama-3's base 500000), so the repeated in-place launches keep the values
  // bounded (a rotation); the time does not depend on them.
  // Bytes, per token: the rotated part of each head of q and k read and
  // written (2 * (NH + NKV) * ROT elements of 2 bytes), its position
  // (8 bytes) and its cache row (ROT elements of 2 bytes, read once: the
  // positions are distinct); the v slice and dims past ROT are not touched.
  const int64_t NT = 4096, NH = 32, NKV = 8, HS = 128, ROT = 128, MAXPOS = 8192;
  const int64_t W = (NH + 2 * NKV) * HS;
  const ScalarType t = ScalarType::BF16;
  std::vector<uint16_t> hqkv(size_t(NT * W)), hcache(size_t(MAXPOS * ROT));
  Rng r{c.seed ^ 0x20be};
  for (auto& v : hqkv) v = toBf16(float(r.uniform(-2, 2)));
  for (int64_t p = 0; p < MAXPOS; ++p)
    for (int64_t j = 0; j < ROT / 2; ++j) {
      const double angle = double(p) * std::pow(500000.0, -2.0 * double(j) / double(ROT));
      hcache[size_t(p * ROT + j)] = toBf16(float(std::cos(angle)));
      hcache[size_t(p * ROT + ROT / 2 + j)] = toBf16(float(std::sin(angle)));
    }
  std::vector<int64_t> pos(static_cast<size_t>(NT));
  for (int64_t i = 0; i < NT; ++i) pos[size_t(i)] = i;
  auto dqkv = c.upload(hqkv), dpos = c.upload(pos), dcache = c.upload(hcache);
  const uint16_t* q = static_cast<uint16_t*>(dqkv.data());
  const double bytes = double(NT) * (2.0 * double((NH + NKV) * ROT) * 2.0 + 8.0 + 2.0 * double(ROT));
  for (const Layout& lay : layouts) {
    Kernel k =
        c.kernel("rotary_embedding", "rotary_embedding", {{"NEOX", spindle::ConstOverride::ofInt(lay.neox ? 1 : 0)}});
    double ms = c.timeMedian([&] {
      k.launch(nullptr,
               {spindle::tensor(dpos.data(), ScalarType::I64, {NT}), spindle::tensor(q, t, {NT, NH, HS}, {W, HS, 1}),
                spindle::tensor(q + NH * HS, t, {NT, NKV, HS}, {W, HS, 1}), tHalf(t, dcache.data(), {MAXPOS, ROT})});
    });
    c.perfRecord("rotary_embedding", shapeText({NT, NH, NKV, HS}) + " bf16 " + lay.name, ms, bytes);
  }
}

// vLLM's dynamic per-token quantization, f16 and bf16 into fp8 e4m3 and
// int8. Rows of real hidden sizes and odd ones (8: one thread; 1000: a
// partial last warp; 4099: a partial last run), a row of zeros (the
// MIN_SCALE floor), a row with one outlier (everything else rounds to small
// codes) and values past fp8's range after scaling never happen (the scale
// is the row's absmax), so saturation is exercised by the outlier's own
// rounding only. The reference computes in f32 as the kernel: every code and
// every scale must match bit for bit; 16-byte guards around y must survive.
void runQuantPerToken(Ctx& c, Pool* pool) {
  struct Case {
    int64_t M, N;
    bool dump;
  };
  const Case cases[] = {{1, 4096, false}, {5, 8, false}, {67, 1000, true}, {33, 4099, false}, {16, 8192, true}};
  const float minScale = float(1.0 / (448.0 * 512.0));
  const size_t G = 16;  // guard bytes on each side of y
  Kernel k = c.kernel("quant_per_token", "quant_per_token");
  for (ScalarType t : {ScalarType::F16, ScalarType::BF16}) {
    const std::string tn(spindle::scalarName(t));
    for (ScalarType q : {ScalarType::F8E4M3, ScalarType::I8}) {
      const bool int8 = q == ScalarType::I8;
      const std::string qn(spindle::scalarName(q));
      for (const Case& cs : cases) {
        const int64_t M = cs.M, N = cs.N;
        const size_t n = size_t(M * N);
        Vec x;
        auto hx = c.randHalf(t, n, x, -3, 3);
        if (M > 2) {  // row 1: zeros; row 2: one outlier among small values
          for (int64_t j = 0; j < N; ++j) hx[size_t(N + j)] = 0, x[size_t(N + j)] = 0;
          for (int64_t j = 0; j < N; ++j) {
            const double v = j == N / 2 ? 1000.0 : 0.01 * x[size_t(2 * N + j)];
            const float f = float(t == ScalarType::BF16 ? bench::roundBf16(v) : bench::roundF16(v));
            hx[size_t(2 * N + j)] = t == ScalarType::BF16 ? toBf16(f) : toHalf(f);
            x[size_t(2 * N + j)] = double(f);
          }
        }
        std::vector<float> xf(x.begin(), x.end());  // exact: the values are f16/bf16
        Vec wantY, wantScales;
        bench::refQuantPerToken(xf, M, N, int8, minScale, wantY, wantScales);
        std::vector<uint8_t> guarded(n + 2 * G, 0xA5);
        auto dx = c.upload(hx), dy = c.upload(guarded);
        auto ds = c.upload(std::vector<float>(size_t(M), -1.0f));
        const void* y = static_cast<uint8_t*>(dy.data()) + G;
        k.launch(nullptr, {tHalf(t, dx.data(), {M, N}), spindle::tensor(y, q, {M, N}), t32(ds, {M})});
        auto out = c.download<uint8_t>(dy, n + 2 * G);
        Vec gotY(n);
        for (size_t i = 0; i < n; ++i) gotY[i] = int8 ? double(int8_t(out[G + i])) : bench::fromF8e4m3(out[G + i]);
        Vec gotScales = c.downloadF32(ds, size_t(M));
        const std::string label = tn + "->" + qn, shape = shapeText({M, N});
        c.check("quant_per_token", label + " y", shape, gotY, wantY, 0, 0);
        c.check("quant_per_token", label + " scales", shape, gotScales, wantScales, 0, 0);
        bool intact = std::all_of(out.begin(), out.begin() + long(G), [](uint8_t v) { return v == 0xA5; }) &&
                      std::all_of(out.end() - long(G), out.end(), [](uint8_t v) { return v == 0xA5; });
        if (!intact)
          c.fail("quant_per_token " + label + " " + shape, "y: a write outside the buffer (guard overwritten)");
        if (cs.dump) {
          std::vector<uint8_t> yOut(out.begin() + long(G), out.end() - long(G));
          std::vector<float> sOut(gotScales.begin(), gotScales.end());
          c.dump("quant_per_token", tn + "_" + qn + "_" + shape,
                 {{"x", false, t, {M, N}, hx.data()},
                  {"y", true, q, {M, N}, yOut.data()},
                  {"scales", true, ScalarType::F32, {M}, sOut.data()}});
        }
      }
    }
  }
  if (!pool) return;
  // bf16 -> fp8 at a prefill of 4096 tokens of a 8192-wide hidden state.
  // Bytes: x read once (the second pass hits L2), y written, one scale per row.
  const int64_t M = 4096, N = 8192;
  Vec unused;
  auto hx = c.randHalf(ScalarType::BF16, size_t(M * N), unused, -3, 3);
  auto dx = c.upload(hx);
  DeviceBuffer dy = c.rt->allocate(size_t(M * N)), ds = c.rt->allocate(size_t(M) * 4);
  const double bytes = double(M * N) * 3.0 + double(M) * 4.0;
  for (ScalarType q : {ScalarType::F8E4M3, ScalarType::I8}) {
    double ms = c.timeMedian([&] {
      k.launch(nullptr,
               {tHalf(ScalarType::BF16, dx.data(), {M, N}), spindle::tensor(dy.data(), q, {M, N}), t32(ds, {M})});
    });
    c.perfRecord("quant_per_token", shapeText({M, N}) + " bf16->" + std::string(spindle::scalarName(q)), ms, bytes);
  }
}

// llm.c's AdamW step (adamw_kernel3) with stochastic rounding to bf16:
// bf16 parameters and gradients with and without the f32 master copy, and
// all-f32 without it. The moments must match the f32 reference to the last
// bit or so (lerp is two explicit fmas), the f32 parameters and master copy
// within an ulp (the device compiler may contract p's multiply-adds); each
// bf16 parameter must be one of the two bf16 neighbours of p, and llm.c's
// rule (the hash of the thread's position against p's low 16 bits) must
// pick the same one wherever the reference's p is the device's (allowed to
// differ for 0.1% of the elements: where contraction moved p's low bits
// across the threshold).
void runAdamw(Ctx& c, Pool* pool) {
  Kernel k = c.kernel("adamw", "adamw");
  const bench::AdamwScalars s{3e-4f, 0.9f, 0.95f,      1.0f - 0.9f * 0.9f * 0.9f, 1.0f - 0.95f * 0.95f * 0.95f, 1e-8f,
                              0.1f,  0.5f, 0x5eed1234u};
  auto scalars = [&]() -> std::vector<Arg> {
    return {spindle::scalar(s.lr),
            spindle::scalar(s.beta1),
            spindle::scalar(s.beta2),
            spindle::scalar(s.beta1Correction),
            spindle::scalar(s.beta2Correction),
            spindle::scalar(s.eps),
            spindle::scalar(s.weightDecay),
            spindle::scalar(s.gradScale),
            spindle::scalar(s.seed)};
  };
  struct Variant {
    const char* name;
    ScalarType t;
    bool master;
  };
  const Variant variants[] = {
      {"bf16 master", ScalarType::BF16, true}, {"bf16", ScalarType::BF16, false}, {"f32", ScalarType::F32, false}};
  for (const Variant& var : variants) {
    const bool bf = var.t == ScalarType::BF16;
    for (int64_t N : {int64_t(1000003), int64_t(4099), int64_t(512)}) {
      const size_t n = size_t(N);
      Vec pd, gd, md, vd;
      std::vector<float> old(n), grads(n), m(n), v(n);
      std::vector<uint16_t> hp, hg;
      if (bf) {
        hp = c.randHalf(ScalarType::BF16, n, pd, -1, 1);
        hg = c.randHalf(ScalarType::BF16, n, gd, -1, 1);
      } else {
        c.randF32(n, pd, -1, 1);
        c.randF32(n, gd, -1, 1);
      }
      auto hm = c.randF32(n, md, -0.1, 0.1), hv = c.randF32(n, vd, 0, 0.01);
      std::vector<float> hmaster(n);
      for (size_t i = 0; i < n; ++i) {
        // The master copy carries the bits bf16 dropped: p's low bits vary.
        hmaster[i] = float(pd[i]) + (var.master ? float(c.rng.uniform(-1, 1)) * 0.001f : 0.0f);
        old[i] = var.master ? hmaster[i] : float(pd[i]);
        grads[i] = float(gd[i]);
        m[i] = hm[i], v[i] = hv[i];
      }
      DeviceBuffer dp = bf ? c.upload(hp) : c.upload(std::vector<float>(old.begin(), old.end()));
      DeviceBuffer dg = bf ? c.upload(hg) : c.upload(grads);
      DeviceBuffer dm = c.upload(hm), dv = c.upload(hv), dmaster = c.upload(hmaster);
      std::vector<Arg> args = {spindle::tensor(dp.data(), var.t, {N}),
                               var.master ? spindle::tensor(dmaster.data(), ScalarType::F32, {N}) : spindle::none(),
                               spindle::tensor(dg.data(), var.t, {N}), t32(dm, {N}), t32(dv, {N})};
      for (const Arg& a : scalars()) args.push_back(a);
      k.launch(nullptr, args.data(), args.size());
      std::vector<float> p;
      std::vector<uint16_t> rounded;
      bench::refAdamw(old, grads, m, v, s, 512, p, rounded);
      const std::string shape = shapeText({N});
      c.check("adamw", std::string(var.name) + " m", shape, c.downloadF32(dm, n), Vec(m.begin(), m.end()), 0, 3e-7);
      c.check("adamw", std::string(var.name) + " v", shape, c.downloadF32(dv, n), Vec(v.begin(), v.end()), 0, 3e-7);
      const Vec want(p.begin(), p.end());
      if (var.master)
        c.check("adamw", std::string(var.name) + " master", shape, c.downloadF32(dmaster, n), want, 1e-9, 1e-6);
      if (!bf) {
        c.check("adamw", std::string(var.name) + " params", shape, c.downloadF32(dp, n), want, 1e-9, 1e-6);
        continue;
      }
      auto got = c.download<uint16_t>(dp, n);
      Vec gotV(n);
      int64_t otherChoice = 0;
      for (size_t i = 0; i < n; ++i) {
        gotV[i] = fromBf16(got[i]);
        otherChoice += got[i] != rounded[i];
      }
      // A bf16 neighbour of p: within one bf16 step (2^-7 relative at most).
      c.check("adamw", std::string(var.name) + " params", shape, gotV, want, 1e-9, 1.0 / 128);
      if (double(otherChoice) > 0.001 * double(n) + 1)
        c.fail("adamw " + std::string(var.name) + " " + shape,
               std::to_string(otherChoice) + " of " + std::to_string(n) +
                   " parameters rounded the other way than llm.c's rule gives for the reference's p");
    }
  }
  if (!pool) return;
  // GPT-2 124M's parameter count, bf16 with the f32 master copy (llm.c's
  // default). Bytes per parameter: params 2 + 2, master 4 + 4, grads 2,
  // m 4 + 4, v 4 + 4 = 30.
  const int64_t N = 124439808;
  DeviceBuffer dp = c.rt->allocate(size_t(N) * 2), dg = c.rt->allocate(size_t(N) * 2);
  Vec unused;
  auto hp = c.randHalf(ScalarType::BF16, size_t(N), unused, -1, 1);
  c.rt->copyToDevice(dp, hp.data(), hp.size() * 2);
  c.rt->copyToDevice(dg, hp.data(), hp.size() * 2);
  std::vector<float> zeros(size_t(N), 0.0f), masters(unused.begin(), unused.end());
  DeviceBuffer dm = c.upload(zeros), dv = c.upload(zeros), dmaster = c.upload(masters);
  std::vector<Arg> args = {spindle::tensor(dp.data(), ScalarType::BF16, {N}),
                           spindle::tensor(dmaster.data(), ScalarType::F32, {N}),
                           spindle::tensor(dg.data(), ScalarType::BF16, {N}), t32(dm, {N}), t32(dv, {N})};
  for (const Arg& a : scalars()) args.push_back(a);
  double ms = c.timeMedian([&] { k.launch(nullptr, args.data(), args.size()); });
  c.perfRecord("adamw", "124439808 bf16 master", ms, 30.0 * double(N));
}

void runTranspose(Ctx& c, Pool* pool) {
  Kernel k = c.kernel("transpose", "transpose");
  for (auto [M, N] : std::vector<std::pair<int64_t, int64_t>>{{1000, 777}, {33, 4097}}) {
    Vec x;
    auto dx = c.upload(c.randF32(size_t(M * N), x));
    auto dy = c.poisoned(size_t(M * N) * 4);
    k.launch(nullptr, {t32(dx, {M, N}), t32(dy, {N, M})});
    c.check("transpose", "", shapeText({M, N}), c.downloadF32(dy, size_t(M * N)), bench::refTranspose(x, M, N), 0, 0);
  }
  if (!pool) return;
  int64_t M = 8192, N = 8192;
  double ms = c.timeMedian([&] { k.launch(nullptr, {t32(pool->a, {M, N}), t32(pool->out1, {N, M})}); });
  c.perfRecord("transpose", "8192x8192", ms, 8.0 * double(M * N));
}

void runHistogram(Ctx& c, Pool* pool) {
  Kernel k = c.kernel("histogram", "histogram");
  struct Case {
    int64_t n, bins;
    float lo, hi;
  };
  // The 16M case has more tiles than the GPU holds blocks, so blocks count
  // several tiles each (the label shows the grid: resident_blocks()).
  for (Case cs : {Case{1000003, 256, -1.0f, 1.0f}, Case{4099, 1000, -0.5f, 0.75f},
                  Case{(int64_t(1) << 24) + 5, 256, -1.0f, 1.0f}}) {
    // Values sit near bin centres (no float-vs-double disagreement about a
    // boundary), one in ten outside [lo, hi).
    std::vector<float> hx(size_t(cs.n));
    Vec x(size_t(cs.n));
    double width = double(cs.hi - cs.lo) / double(cs.bins);
    for (auto& v : hx) {
      double r = c.rng.uniform(0, 1);
      if (r < 0.05) v = cs.lo - 0.01f - float(c.rng.uniform(0, 1));
      else if (r < 0.1) v = cs.hi + float(c.rng.uniform(0, 1));
      else v = float(cs.lo + width * (double(c.rng.next() % uint64_t(cs.bins)) + 0.5 + c.rng.uniform(-0.3, 0.3)));
    }
    for (size_t i = 0; i < hx.size(); ++i) x[i] = hx[i];
    std::vector<int32_t> h0(size_t(cs.bins));
    std::vector<int64_t> h0l(size_t(cs.bins));
    for (size_t i = 0; i < h0.size(); ++i) h0l[i] = h0[i] = int32_t(c.rng.next() % 1000);  // accumulated into
    auto dx = c.upload(hx);
    auto dh = c.upload(h0);
    const spindle::Arg args[] = {t32(dx, {cs.n}), spindle::tensor(dh.data(), ScalarType::I32, {cs.bins}),
                                 spindle::scalar(cs.lo), spindle::scalar(cs.hi)};
    int64_t grid = k.bind(args, 4).geometry.grid[0];
    k.launch(nullptr, args, 4);
    auto got = c.download<int32_t>(dh, size_t(cs.bins));
    auto want = bench::refHistogram(x, cs.bins, cs.lo, cs.hi, h0l);
    c.check("histogram", "", shapeText({cs.n}) + " B=" + std::to_string(cs.bins) + " grid=" + std::to_string(grid),
            Vec(got.begin(), got.end()), Vec(want.begin(), want.end()), 0, 0);
  }
  if (!pool) return;
  int64_t n = Pool::kFloats, bins = 256;
  double ms = c.timeMedian([&] {
    k.launch(nullptr, {t32(pool->a, {n}), spindle::tensor(pool->small.data(), ScalarType::I32, {bins}),
                       spindle::scalar(-1.0f), spindle::scalar(1.0f)});
  });
  c.perfRecord("histogram", "64M B=256", ms, 4.0 * double(n));
}

void runMatmul(Ctx& c, Pool* pool) {
  Kernel k = c.kernel("matmul", "matmul");
  struct Case {
    int64_t M, N, K;
  };
  for (Case cs : {Case{131, 67, 4096}, Case{100, 200, 37}}) {
    Vec A, B;
    auto dA = c.upload(c.randF32(size_t(cs.M * cs.K), A)), dB = c.upload(c.randF32(size_t(cs.K * cs.N), B));
    auto dC = c.poisoned(size_t(cs.M * cs.N) * 4);
    k.launch(nullptr, {t32(dA, {cs.M, cs.K}), t32(dB, {cs.K, cs.N}), t32(dC, {cs.M, cs.N})});
    c.check("matmul", "", shapeText({cs.M, cs.N, cs.K}), c.downloadF32(dC, size_t(cs.M * cs.N)),
            bench::refMatmul(A, B, cs.M, cs.N, cs.K), 1e-6 * double(cs.K), 1e-5);
  }
  if (!pool) return;
  int64_t M = 4096, N = 4096, K = 4096;
  double ms = c.timeMedian([&] {
    k.launch(nullptr, {t32(pool->a, {M, K}), t32(pool->b, {K, N}), t32(pool->out1, {M, N})});
  });
  c.perfRecord("matmul", "4096^3", ms, 4.0 * double(M * K + K * N + M * N), 2.0 * double(M) * double(N) * double(K));
}

void runScan(Ctx& c, Pool* pool) {
  Kernel k = c.kernel("scan", "scan");
  for (auto [M, N] : kRowShapes) {
    Vec x;
    auto dx = c.upload(c.randF32(size_t(M * N), x));
    auto dy = c.poisoned(size_t(M * N) * 4);
    k.launch(nullptr, {t32(dx, {M, N}), t32(dy, {M, N})});
    c.check("scan", "", shapeText({M, N}), c.downloadF32(dy, size_t(M * N)), bench::refScan(x, M, N), sumAtol(N), 1e-5);
  }
  if (!pool) return;
  int64_t M = 8192, N = 8192;
  double ms = c.timeMedian([&] { k.launch(nullptr, {t32(pool->a, {M, N}), t32(pool->out1, {M, N})}); });
  c.perfRecord("scan", "8192x8192", ms, 8.0 * double(M * N));
}

void runBiasGelu(Ctx& c, Pool* pool) {
  Kernel k = c.kernel("bias_gelu", "bias_gelu");
  for (auto [M, N] : kRowShapes) {
    Vec x, bias, y, rowsum;
    auto dx = c.upload(c.randF32(size_t(M * N), x, -3, 3));
    auto db = c.upload(c.randF32(size_t(N), bias));
    auto dy = c.poisoned(size_t(M * N) * 4), ds = c.poisoned(size_t(M) * 4);
    k.launch(nullptr, {t32(dx, {M, N}), t32(db, {N}), t32(dy, {M, N}), t32(ds, {M})});
    bench::refBiasGelu(x, bias, M, N, y, rowsum);
    c.check("bias_gelu", "y", shapeText({M, N}), c.downloadF32(dy, size_t(M * N)), y, kElemAtol, kElemRtol);
    c.check("bias_gelu", "rowsum", shapeText({M, N}), c.downloadF32(ds, size_t(M)), rowsum, sumAtol(N), 1e-5);
  }
  if (!pool) return;
  int64_t M = 8192, N = 8192;
  double ms = c.timeMedian([&] {
    k.launch(nullptr, {t32(pool->a, {M, N}), t32(pool->b, {N}), t32(pool->out1, {M, N}), t32(pool->out2, {M})});
  });
  c.perfRecord("bias_gelu", "8192x8192", ms, 8.0 * double(M * N) + 4.0 * double(N + M));
}

void runRowNorms(Ctx& c, Pool* pool) {
  Kernel k = c.kernel("row_norms", "row_norms");
  for (auto [M, N] : std::vector<std::pair<int64_t, int64_t>>{{1001, 777}, {37, 4099}}) {
    Vec x, amax, l2;
    auto dx = c.upload(c.randF32(size_t(M * N), x));
    auto da = c.poisoned(size_t(M) * 4), dl = c.poisoned(size_t(M) * 4);
    k.launch(nullptr, {t32(dx, {M, N}), t32(da, {M}), t32(dl, {M})});
    bench::refRowNorms(x, M, N, amax, l2);
    c.check("row_norms", "amax", shapeText({M, N}), c.downloadF32(da, size_t(M)), amax, 0, 0);
    c.check("row_norms", "l2", shapeText({M, N}), c.downloadF32(dl, size_t(M)), l2, redTol(N), redTol(N));
  }
  if (!pool) return;
  int64_t M = 65536, N = 1024;
  double ms = c.timeMedian([&] {
    k.launch(nullptr, {t32(pool->a, {M, N}), t32(pool->out1, {M}), t32(pool->out2, {M})});
  });
  c.perfRecord("row_norms", "65536x1024", ms, 4.0 * double(M * N) + 8.0 * double(M));
}

void runScaleStrided(Ctx& c, Pool* pool) {
  Kernel k = c.kernel("scale_strided", "scale_strided");
  // A transposed view of a [N, M] matrix, then every other column of [M, 2N + 1].
  for (auto [M, N] : std::vector<std::pair<int64_t, int64_t>>{{1000, 777}, {37, 4099}}) {
    Vec base;
    auto db = c.upload(c.randF32(size_t(M * N), base));
    auto dy = c.poisoned(size_t(M * N) * 4);
    k.launch(nullptr,
             {spindle::tensor(db.data(), ScalarType::F32, {M, N}, {1, M}), t32(dy, {M, N}), spindle::scalar(1.5f)});
    c.check("scale_strided", "transposed", shapeText({M, N}), c.downloadF32(dy, size_t(M * N)),
            bench::refScaleStrided(base, M, N, 1, M, 1.5), kElemAtol, kElemRtol);
    int64_t cols = 2 * N + 1;
    auto db2 = c.upload(c.randF32(size_t(M * cols), base));
    auto dy2 = c.poisoned(size_t(M * N) * 4);
    k.launch(nullptr, {spindle::tensor(db2.data(), ScalarType::F32, {M, N}, {cols, 2}), t32(dy2, {M, N}),
                       spindle::scalar(-0.5f)});
    c.check("scale_strided", "sliced", shapeText({M, N}), c.downloadF32(dy2, size_t(M * N)),
            bench::refScaleStrided(base, M, N, cols, 2, -0.5), kElemAtol, kElemRtol);
  }
  if (!pool) return;
  int64_t M = 8192, N = 8192;
  double ms = c.timeMedian([&] {
    k.launch(nullptr, {spindle::tensor(pool->a.data(), ScalarType::F32, {M, N}, {N, 1}), t32(pool->out1, {M, N}),
                       spindle::scalar(2.0f)});
  });
  c.perfRecord("scale_strided", "8192x8192", ms, 8.0 * double(M * N));
  ms = c.timeMedian([&] {
    k.launch(nullptr, {spindle::tensor(pool->a.data(), ScalarType::F32, {M, N}, {1, M}), t32(pool->out1, {M, N}),
                       spindle::scalar(2.0f)});
  });
  c.perfRecord("scale_strided", "8192x8192 x.T", ms, 8.0 * double(M * N), 0,
               "transposed view: gathered reads by design");
}

struct Sample {
  const char* name;
  const char* kernel;
  void (*run)(Ctx&, Pool*);
  std::map<std::string, int64_t> benchDims;  // the timing shape (static dims are taken from here)
  std::map<std::string, ScalarType> typeArgs;
  std::map<std::string, spindle::ConstOverride> consts = {};  // compile-time parameters of the timed kernel
};

const std::vector<Sample>& samples() {
  static const std::vector<Sample> list = {
      {"axpy", "axpy", runAxpy, {{"N", Pool::kFloats}}, {{"T", ScalarType::F32}}},
      {"softmax", "softmax", runSoftmax, {{"M", 8192}, {"N", 8192}}, {}},
      {"layernorm", "layernorm", runLayernorm, {{"M", 8192}, {"N", 8192}}, {}},
      {"rmsnorm_f16", "rmsnorm_f16", runRmsnorm, {{"M", 8192}, {"N", 8192}}, {}},
      {"transpose", "transpose", runTranspose, {{"M", 8192}, {"N", 8192}}, {}},
      {"histogram", "histogram", runHistogram, {{"N", Pool::kFloats}, {"B", 256}}, {}},
      {"matmul", "matmul", runMatmul, {{"M", 4096}, {"N", 4096}, {"K", 4096}}, {}},
      {"scan", "scan", runScan, {{"M", 8192}, {"N", 8192}}, {}},
      {"bias_gelu", "bias_gelu", runBiasGelu, {{"M", 8192}, {"N", 8192}}, {}},
      {"row_norms", "row_norms", runRowNorms, {{"M", 65536}, {"N", 1024}}, {}},
      {"scale_strided", "scale_strided", runScaleStrided, {{"M", 8192}, {"N", 8192}}, {}},
      {"fused_add_rmsnorm",
       "fused_add_rmsnorm",
       runFusedAddRmsnorm,
       {{"M", 8192}, {"H", 4096}},
       {{"T", ScalarType::BF16}}},
      {"act_and_mul",
       "act_and_mul",
       runActAndMul,
       {{"M", 4096}, {"D", 14336}},
       {{"T", ScalarType::BF16}},
       {{"ACT", spindle::ConstOverride::ofFunction("silu")}}},
      {"rotary_embedding",
       "rotary_embedding",
       runRotaryEmbedding,
       {{"NT", 4096}, {"NH", 32}, {"NKV", 8}, {"HS", 128}, {"MAXPOS", 8192}, {"ROT", 128}},
       {{"T", ScalarType::BF16}},
       {{"NEOX", spindle::ConstOverride::ofInt(1)}}},
      {"adamw", "adamw", runAdamw, {{"N", 124439808}}, {{"Tp", ScalarType::BF16}, {"Tg", ScalarType::BF16}}},
      {"quant_per_token",
       "quant_per_token",
       runQuantPerToken,
       {{"M", 4096}, {"N", 8192}},
       {{"T", ScalarType::BF16}, {"Q", ScalarType::F8E4M3}}},
  };
  return list;
}

// ---------------------------------------------------------------- language features by value

// The warp primitives (tests/golden/kernels/warp_primitives.spn) on the
// target's warps (32 lanes on NVIDIA, 32 or 64 on AMD and the cpu target:
// Runtime::warpSize): shfl_down's tree sum read back with shfl, shfl_up's
// inclusive scan, a shared slot of the neighbour lane after sync_warp, and
// ballot / warp_any / warp_all, against a CPU computation per warp. N is
// not a multiple of the block: the last warps hold lanes past N (v = 0).
void checkWarpPrimitives(Ctx& c) {
  const std::string path = c.samplesDir + "/../tests/golden/kernels/warp_primitives.spn";
  Kernel k = c.rt->loadModule(path).kernel("warp_ops");
  const int64_t N = 1000, W = c.rt->warpSize(), threads = 1024;  // cdiv(1000, 256) blocks of 256
  Vec x;
  auto hx = c.randF32(size_t(N), x, -1, 1);
  auto dx = c.upload(hx);
  auto dy = c.poisoned(size_t(N) * 4), dscan = c.poisoned(size_t(N) * 4), dcounts = c.poisoned(size_t(N) * 4);
  auto dvotes = c.poisoned(size_t(N) * 8);
  k.launch(nullptr, {t32(dx, {N}), t32(dy, {N}), t32(dscan, {N}), spindle::tensor(dcounts.data(), ScalarType::I32, {N}),
                     spindle::tensor(dvotes.data(), ScalarType::U64, {N})});
  Vec wantY(static_cast<size_t>(N)), wantScan(wantY), wantCounts(wantY), wantVotes(wantY);
  for (int64_t w0 = 0; w0 < threads; w0 += W) {
    double total = 0, run = 0;
    std::vector<double> scan(static_cast<size_t>(W));
    uint64_t mask = 0;
    bool any = false, all = true;
    for (int64_t l = 0; l < W; ++l) {
      const double v = w0 + l < N ? double(hx[size_t(w0 + l)]) : 0.0;
      total += v;
      scan[size_t(l)] = run += v;
      if (v > 0.5) mask |= uint64_t(1) << l, any = true;
      all = all && v >= 0.0;
    }
    for (int64_t l = 0; l < W && w0 + l < N; ++l) {
      const size_t i = size_t(w0 + l);
      wantY[i] = total + scan[size_t(l ^ 1)];
      wantScan[i] = scan[size_t(l)];
      wantCounts[i] = double(__builtin_popcountll(mask) + (any ? 100 : 0) + (all ? 1000 : 0));
      wantVotes[i] = double(mask);
    }
  }
  auto counts = c.download<int32_t>(dcounts, size_t(N));
  auto votes = c.download<uint64_t>(dvotes, size_t(N));
  Vec gotCounts(counts.begin(), counts.end()), gotVotes(votes.begin(), votes.end());
  c.check("warp_primitives", "shfl_down sum + neighbour", "1000", c.downloadF32(dy, size_t(N)), wantY, 1e-5, 1e-5);
  c.check("warp_primitives", "shfl_up scan", "1000", c.downloadF32(dscan, size_t(N)), wantScan, 1e-5, 1e-5);
  c.check("warp_primitives", "votes", "1000", gotCounts, wantCounts, 0, 0);
  c.check("warp_primitives", "ballot", "1000", gotVotes, wantVotes, 0, 0);
}

// Phase barriers (docs/language.md 8.14) through
// tests/golden/kernels/barriers.spn (kernel ring): 264 blocks each pass 50
// rows through a ring of three shared stages from a producer group to
// three consumer groups, with the producer first and last of the four;
// every row written once, exactly 2 x + t. On NVIDIA sm_80+ these are
// mbarriers, whose waits test a phase's parity: a wrong phase shows here as
// a wrong or poisoned row, or a hang (the bench's time limit). Then kernel
// roles: one warp group's dot on the tiles another copied.
void checkBarriers(Ctx& c) {
  const std::string path = c.samplesDir + "/../tests/golden/kernels/barriers.spn";
  Kernel k = c.rt->loadModule(path).kernel("ring");
  const int64_t B = 264, T = 50, W = 32;
  for (int32_t producer : {0, 3}) {
    Vec x;
    auto hx = c.randF32(size_t(B * T * W), x, -1, 1);
    auto dx = c.upload(hx);
    auto dy = c.poisoned(size_t(B * T * W) * 4);
    k.launch(nullptr, {t32(dx, {B, T, W}), t32(dy, {B, T, W}), spindle::scalar(producer)});
    Vec want(hx.size());
    // 2 x is exact and 2 x + t exact in double: one rounding to f32, as in the kernel.
    for (size_t i = 0; i < hx.size(); ++i) want[i] = float(2.0 * double(hx[i]) + double(int64_t(i) / W % T));
    c.check("barriers", producer == 0 ? "ring, producer first" : "ring, producer last", "264x50x32",
            c.downloadF32(dy, hx.size()), want, 0, 0);
  }
  // roles: warp group 1 multiplies (dot, a wgmma on sm_90a) the tiles warp
  // group 0 copied, once `ready` says they are there.
  Kernel roles = c.rt->loadModule(path).kernel("roles");
  const int64_t NB = 132;
  std::vector<uint16_t> A(size_t(NB * 64 * 64)), Bm(A.size());
  std::vector<double> a(A.size()), b(A.size());
  for (size_t i = 0; i < A.size(); ++i) {
    A[i] = toHalf(float(c.rng.uniform(-1, 1)));
    a[i] = fromHalf(A[i]);
    Bm[i] = toHalf(float(c.rng.uniform(-1, 1)));
    b[i] = fromHalf(Bm[i]);
  }
  auto dA = c.upload(A), dB = c.upload(Bm);
  auto dC = c.poisoned(A.size() * 4);
  roles.launch(nullptr, {spindle::tensor(dA.data(), ScalarType::F16, {NB, 64, 64}),
                         spindle::tensor(dB.data(), ScalarType::F16, {NB, 64, 64}), t32(dC, {NB, 64, 64})});
  Vec want(A.size());
  for (int64_t m = 0; m < NB; ++m)
    for (int64_t r = 0; r < 64; ++r)
      for (int64_t col = 0; col < 64; ++col) {
        double s = 0;
        for (int64_t k = 0; k < 64; ++k) s += a[size_t((m * 64 + r) * 64 + k)] * b[size_t((m * 64 + k) * 64 + col)];
        want[size_t((m * 64 + r) * 64 + col)] = s;
      }
  // Exact products, an f32 sum of 64 of them below 1 each.
  c.check("barriers", "roles: dot of the tiles another warp group copied", "132x64x64x64", c.downloadF32(dC, A.size()),
          want, 1e-4, 0);
  // tma_roles: the same tiles stacked (A, B: [NB * 64, 64]), copied by copy_tile.
  Kernel tmaRoles = c.rt->loadModule(path).kernel("tma_roles");
  auto dC2 = c.poisoned(A.size() * 4);
  // The element path is right, only slow, so a map the launch could not
  // make shows only in the count (a map made with no current context was
  // such a case): both of tma_roles' maps must be made here.
  uint64_t fallbacks = c.rt->stats().tensorMapFallbacks;
  tmaRoles.launch(nullptr, {spindle::tensor(dA.data(), ScalarType::F16, {NB * 64, 64}),
                            spindle::tensor(dB.data(), ScalarType::F16, {NB * 64, 64}), t32(dC2, {NB * 64, 64})});
  c.check("barriers", "tma_roles: dot of tiles copy_tile copied", "132x64x64x64", c.downloadF32(dC2, A.size()), want,
          1e-4, 0);
  c.expect("barriers", "tma_roles: its tensor maps were made (TMA, not the element path)", "132x64x64x64",
           c.rt->stats().tensorMapFallbacks == fallbacks,
           std::to_string(c.rt->stats().tensorMapFallbacks - fallbacks) + " maps not made");

  // copy_tile (tests/golden/kernels/copy_tile.spn): boxes across X's edges
  // into a swizzled buffer and a row-major one (C = 160 and 40: rows of
  // 16-byte multiples, TMA where the runtime makes the maps; C = 53:
  // element copies). A box whose first column is no 16-byte boundary takes
  // the element path (TMA would stop the kernel with an illegal
  // instruction): the row-major box at c0 + 2 is TMA only where c0 = 6, the
  // swizzled box at c0 only where c0 is not 6 or 7.
  spindle::Module tiles = c.rt->loadModule(c.samplesDir + "/../tests/golden/kernels/copy_tile.spn");
  struct Box {
    int64_t R, C, r0, c0;
  };
  for (ScalarType t : {ScalarType::F16, ScalarType::F32})
    for (const Box& bx :
         {Box{80, 160, 8, 16}, Box{70, 160, 10, 64}, Box{20, 40, 3, 0}, Box{37, 53, 3, 7}, Box{80, 160, 8, 6}}) {
      const size_t bytes = t == ScalarType::F32 ? 4 : 2;
      std::vector<uint16_t> x16(size_t(bx.R * bx.C));
      std::vector<float> x32(x16.size());
      for (size_t i = 0; i < x16.size(); ++i) {
        x32[i] = float(c.rng.uniform(-1, 1));
        x16[i] = toHalf(x32[i]);
      }
      auto dX = t == ScalarType::F32 ? c.upload(x32) : c.upload(x16);
      auto dY = c.poisoned(64 * 128 * bytes), dZ = c.poisoned(16 * 32 * bytes);
      fallbacks = c.rt->stats().tensorMapFallbacks;
      tiles.kernel("tile_out")
          .launch(nullptr, {spindle::tensor(dX.data(), t, {bx.R, bx.C}), spindle::tensor(dY.data(), t, {64, 128}),
                            spindle::tensor(dZ.data(), t, {16, 32}), spindle::scalar(bx.r0), spindle::scalar(bx.c0)});
      auto value = [&](int64_t r, int64_t col) {
        if (r >= bx.R || col >= bx.C) return 0.0;
        const size_t i = size_t(r * bx.C + col);
        return t == ScalarType::F32 ? double(x32[i]) : fromHalf(x16[i]);
      };
      Vec wantY(64 * 128), wantZ(16 * 32);
      for (int64_t r = 0; r < 64; ++r)
        for (int64_t col = 0; col < 128; ++col) wantY[size_t(r * 128 + col)] = value(bx.r0 + r, bx.c0 + col);
      for (int64_t r = 0; r < 16; ++r)
        for (int64_t col = 0; col < 32; ++col) wantZ[size_t(r * 32 + col)] = value(bx.r0 + 1 + r, bx.c0 + 2 + col);
      const std::string shape = std::string(t == ScalarType::F32 ? "f32 " : "f16 ") + std::to_string(bx.R) + "x" +
                                std::to_string(bx.C) + " at (" + std::to_string(bx.r0) + ", " + std::to_string(bx.c0) +
                                ")";
      auto got = [&](const DeviceBuffer& d, size_t n) {
        return t == ScalarType::F32 ? c.downloadF32(d, n) : c.downloadHalf(t, d, n);
      };
      c.check("barriers", "copy_tile swizzled box", shape, got(dY, 64 * 128), wantY, 0, 0);
      c.check("barriers", "copy_tile row-major box", shape, got(dZ, 16 * 32), wantZ, 0, 0);
      // The boxes' two maps: made where X's rows are 16-byte multiples (C =
      // 160, 40), not for C = 53.
      const uint64_t notMade = c.rt->stats().tensorMapFallbacks - fallbacks, wantNotMade = (bx.C * bytes) % 16 ? 2 : 0;
      c.expect("barriers", "copy_tile swizzled box: maps not made", shape, notMade == wantNotMade,
               std::to_string(notMade) + ", want " + std::to_string(wantNotMade));
    }
}

// fast_tanh (docs/language.md 8.3) on this GPU against tanh in double:
// tests/golden/kernels/math_more.spn's row 26 at fresh random values in
// [-10, 10]. On NVIDIA sm_75 and later it is tanh.approx.f32, one
// MUFU.TANH, whose relative error the PTX ISA bounds by about 2^-11 but
// which is at most 1.113e-5 in fact (every f32 in [-10, 10] on an H200;
// the same figure is published for Turing): the bound here is that, so a
// GPU whose instruction is coarser than the language documents is
// reported. Elsewhere it is tanhf, within a few ulp.
void checkFastTanh(Ctx& c) {
  const std::string path = c.samplesDir + "/../tests/golden/kernels/math_more.spn";
  Kernel k = c.rt->loadModule(path).kernel("math_more");
  const int64_t N = 100000, F = 27, row = 26;
  Vec x;
  auto hx = c.randF32(size_t(N), x, -10, 10);
  auto dx = c.upload(hx);
  auto dy = c.poisoned(size_t(F * N) * 4);
  k.launch(nullptr, {t32(dx, {N}), t32(dy, {F, N})});
  const Vec all = c.downloadF32(dy, size_t(F * N));
  const Vec got(all.begin() + row * N, all.begin() + (row + 1) * N);
  Vec want(static_cast<size_t>(N));
  double worstRel = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    want[i] = std::tanh(x[i]);
    if (want[i] != 0) worstRel = std::max(worstRel, std::fabs(got[i] - want[i]) / std::fabs(want[i]));
  }
  if (c.check("math_more", "fast_tanh", shapeText({N}), got, want, 0, 1.12e-5))
    std::printf("         (worst relative error %.4g, 2^%.2f)\n", worstRel, std::log2(std::max(worstRel, 1e-300)));
}

// The key-value reductions (tests/golden/kernels/argmax.spn) on this GPU's
// warps, against a brute-force CPU reference written here (not the
// prelude's combine): values drawn from a small set so that ties, -0.0 and
// 0.0, infinities and NaNs meet; the expected pair is the first NaN's, else
// the extreme value's with the smallest index. greedy_pick: per-thread
// strided bests, then block_argmax and every warp's warp_argmax, at N = 1000
// and N = 100 (threads with no column). moe_topk: K rounds of block_argmax
// with the winner knocked out, and each warp's warp_argmin. ragged_min: a
// block of 100 threads (a partial last warp): warp_argmin / warp_argmax with
// lane 0's pair handed to every lane, and block_argmin over u32 indices.
template <bool Max>
size_t refArg(const std::vector<double>& v, const std::vector<int64_t>& idx) {
  size_t best = v.size();
  for (size_t k = 0; k < v.size(); ++k)
    if (std::isnan(v[k]) && (best == v.size() || idx[k] < idx[best])) best = k;
  if (best != v.size()) return best;
  double extreme = v[0];
  for (double x : v) extreme = Max ? std::max(extreme, x) : std::min(extreme, x);
  for (size_t k = 0; k < v.size(); ++k)
    if (v[k] == extreme && (best == v.size() || idx[k] < idx[best])) best = k;
  return best;
}

// A value as a finite number check() compares exactly (inf - inf is NaN,
// which never passes): NaN, -0.0 and the infinities get codes of their own
// (none of the codes occurs among the drawn values).
double valueCode(double v) {
  if (std::isnan(v)) return 1e300;
  if (std::isinf(v)) return v > 0 ? 1e299 : -1e299;
  if (v == 0 && std::signbit(v)) return 7777;
  return v;
}

void checkArgReduce(Ctx& c) {
  const std::string path = c.samplesDir + "/../tests/golden/kernels/argmax.spn";
  spindle::Module m = c.rt->loadModule(path);
  const int64_t W = c.rt->warpSize();
  const double pool[] = {-2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 2.0, INFINITY, -INFINITY};
  auto draw = [&](bool withNan) {
    uint64_t r = c.rng.next();
    if (withNan && r % 97 == 0) return double(NAN);
    return pool[(r >> 8) % 9];
  };
  auto codes = [](const std::vector<double>& v) {
    Vec out;
    for (double x : v) out.push_back(valueCode(x));
    return out;
  };

  // greedy_pick
  Kernel greedy = m.kernel("greedy_pick");
  for (int64_t N : {1000, 100}) {
    const int64_t M = 64, B = 256;
    std::vector<float> logits(size_t(M * N));
    for (int64_t r = 0; r < M; ++r)
      for (int64_t j = 0; j < N; ++j) logits[size_t(r * N + j)] = r % 8 == 1 ? 1.0f : float(draw(r % 4 == 0));
    auto dl = c.upload(logits);
    auto dtok = c.poisoned(size_t(M) * 4), dscore = c.poisoned(size_t(M) * 4);
    auto dpw = c.poisoned(size_t(M * B) * 4), dwb = c.poisoned(size_t(M * B) * 4);
    greedy.launch(nullptr, {t32(dl, {M, N}), spindle::tensor(dtok.data(), ScalarType::I32, {M}), t32(dscore, {M}),
                            spindle::tensor(dpw.data(), ScalarType::I32, {M, B}), t32(dwb, {M, B})});
    std::vector<double> wantTok, wantScore, gotTok, gotScore, wantPw, wantWb, gotPw, gotWb;
    auto tok = c.download<int32_t>(dtok, size_t(M));
    auto score = c.download<float>(dscore, size_t(M));
    auto pw = c.download<int32_t>(dpw, size_t(M * B));
    auto wb = c.download<float>(dwb, size_t(M * B));
    for (int64_t r = 0; r < M; ++r) {
      std::vector<double> best(size_t(B), -INFINITY);
      std::vector<int64_t> at(size_t(B), N);
      for (int64_t t = 0; t < B; ++t)
        for (int64_t j = t; j < N; j += B) {
          const double v = logits[size_t(r * N + j)];
          if (v > best[size_t(t)] || (std::isnan(v) && !std::isnan(best[size_t(t)])))
            best[size_t(t)] = v, at[size_t(t)] = j;
        }
      const size_t k = refArg<true>(best, at);
      wantTok.push_back(double(at[k]));
      wantScore.push_back(best[k]);
      gotTok.push_back(tok[size_t(r)]);
      gotScore.push_back(score[size_t(r)]);
      for (int64_t w = 0; w < B / W; ++w) {
        std::vector<double> wv(best.begin() + w * W, best.begin() + (w + 1) * W);
        std::vector<int64_t> wi(at.begin() + w * W, at.begin() + (w + 1) * W);
        const size_t kw = refArg<true>(wv, wi);
        wantPw.push_back(double(wi[kw]));
        wantWb.push_back(wv[kw]);
        gotPw.push_back(pw[size_t(r * B + w)]);
        gotWb.push_back(wb[size_t(r * B + w)]);
      }
    }
    const std::string shape = "64x" + std::to_string(N);
    c.check("argmax", "block_argmax index", shape, gotTok, wantTok, 0, 0);
    c.check("argmax", "block_argmax value", shape, codes(gotScore), codes(wantScore), 0, 0);
    c.check("argmax", "warp_argmax index", shape, gotPw, wantPw, 0, 0);
    c.check("argmax", "warp_argmax value", shape, codes(gotWb), codes(wantWb), 0, 0);
  }

  // moe_topk
  {
    Kernel topk = m.kernel("moe_topk");
    const int64_t T = 40, E = 100, K = 6, B = 128;
    std::vector<float> scores(size_t(T * E));
    for (int64_t t = 0; t < T; ++t)
      for (int64_t e = 0; e < E; ++e) scores[size_t(t * E + e)] = float(draw(t % 3 == 0));
    auto ds = c.upload(scores);
    auto dids = c.poisoned(size_t(T * K) * 4), dw = c.poisoned(size_t(T * K) * 4);
    auto dlow = c.poisoned(size_t(T * 4) * 8), dls = c.poisoned(size_t(T * 4) * 4);
    topk.launch(nullptr, {t32(ds, {T, E}), spindle::tensor(dids.data(), ScalarType::I32, {T, K}), t32(dw, {T, K}),
                          spindle::tensor(dlow.data(), ScalarType::I64, {T, 4}), t32(dls, {T, 4})});
    auto ids = c.download<int32_t>(dids, size_t(T * K));
    auto ws = c.download<float>(dw, size_t(T * K));
    auto low = c.download<int64_t>(dlow, size_t(T * 4));
    auto ls = c.download<float>(dls, size_t(T * 4));
    std::vector<double> wantIds, wantW, gotIds, gotW, wantLow, wantLs, gotLow, gotLs;
    std::vector<int64_t> lanes(static_cast<size_t>(B));
    for (int64_t t = 0; t < B; ++t) lanes[size_t(t)] = t;
    for (int64_t tok = 0; tok < T; ++tok) {
      std::vector<double> s(size_t(B), -INFINITY);
      for (int64_t e = 0; e < E; ++e) s[size_t(e)] = scores[size_t(tok * E + e)];
      for (int64_t w = 0; w < B / W; ++w) {
        std::vector<double> wv(s.begin() + w * W, s.begin() + (w + 1) * W);
        std::vector<int64_t> wi(lanes.begin() + w * W, lanes.begin() + (w + 1) * W);
        const size_t kw = refArg<false>(wv, wi);
        wantLow.push_back(double(wi[kw]));
        wantLs.push_back(wv[kw]);
        gotLow.push_back(double(low[size_t(tok * 4 + w)]));
        gotLs.push_back(ls[size_t(tok * 4 + w)]);
      }
      for (int64_t k = 0; k < K; ++k) {
        const size_t e = refArg<true>(s, lanes);
        wantIds.push_back(double(e));
        wantW.push_back(s[e]);
        gotIds.push_back(ids[size_t(tok * K + k)]);
        gotW.push_back(ws[size_t(tok * K + k)]);
        s[e] = -INFINITY;
      }
    }
    c.check("argmax", "top-k experts", "40x100 k=6", gotIds, wantIds, 0, 0);
    c.check("argmax", "top-k weights", "40x100 k=6", codes(gotW), codes(wantW), 0, 0);
    c.check("argmax", "warp_argmin index", "40x100", gotLow, wantLow, 0, 0);
    c.check("argmax", "warp_argmin value", "40x100", codes(gotLs), codes(wantLs), 0, 0);
  }

  // ragged_min: blocks of 100 threads
  {
    Kernel ragged = m.kernel("ragged_min");
    const int64_t M = 50, B = 100;
    std::vector<double> x(size_t(M * B));
    for (int64_t r = 0; r < M; ++r)
      for (int64_t t = 0; t < B; ++t) x[size_t(r * B + t)] = draw(r % 2 == 0);
    auto dx = c.upload(x);
    auto dwhere = c.poisoned(size_t(M * B) * 8), dfirst = c.poisoned(size_t(M) * 4);
    auto dlowest = c.poisoned(size_t(M) * 8), dtop = c.poisoned(size_t(M * B) * 4);
    ragged.launch(
        nullptr,
        {spindle::tensor(dx.data(), ScalarType::F64, {M, B}), spindle::tensor(dwhere.data(), ScalarType::I64, {M, B}),
         spindle::tensor(dfirst.data(), ScalarType::U32, {M}), spindle::tensor(dlowest.data(), ScalarType::F64, {M}),
         spindle::tensor(dtop.data(), ScalarType::I32, {M, B})});
    auto gx = c.download<double>(dx, size_t(M * B));
    auto where = c.download<int64_t>(dwhere, size_t(M * B));
    auto first = c.download<uint32_t>(dfirst, size_t(M));
    auto lowest = c.download<double>(dlowest, size_t(M));
    auto top = c.download<int32_t>(dtop, size_t(M * B));
    std::vector<double> wantWhere, gotWhere, wantX, gotX, wantTop, gotTop, wantFirst, gotFirst, wantLowest, gotLowest;
    for (int64_t r = 0; r < M; ++r) {
      std::vector<double> row(x.begin() + r * B, x.begin() + (r + 1) * B);
      std::vector<int64_t> flat(static_cast<size_t>(B)), lane(static_cast<size_t>(B));
      for (int64_t t = 0; t < B; ++t) flat[size_t(t)] = r * 100 + t, lane[size_t(t)] = t;
      for (int64_t w0 = 0; w0 < B; w0 += W) {
        const int64_t w1 = std::min(B, w0 + W);
        std::vector<double> wv(row.begin() + w0, row.begin() + w1), wf;
        for (double v : wv) wf.push_back(double(float(v)));
        std::vector<int64_t> wi(flat.begin() + w0, flat.begin() + w1), wl(lane.begin() + w0, lane.begin() + w1);
        const size_t lo = refArg<false>(wv, wi), hi = refArg<true>(wf, wl);
        for (int64_t t = w0; t < w1; ++t) {
          wantWhere.push_back(double(wi[lo]));
          wantX.push_back(wv[lo]);
          wantTop.push_back(double(wl[hi] + (wf[hi] > 0 ? 1 : 0)));
          gotWhere.push_back(double(where[size_t(r * B + t)]));
          gotX.push_back(gx[size_t(r * B + t)]);
          gotTop.push_back(top[size_t(r * B + t)]);
        }
      }
      const size_t b = refArg<false>(row, lane);
      wantFirst.push_back(double(b));
      wantLowest.push_back(row[b]);
      gotFirst.push_back(first[size_t(r)]);
      gotLowest.push_back(lowest[size_t(r)]);
    }
    c.check("argmax", "partial warp_argmin index", "50x100", gotWhere, wantWhere, 0, 0);
    c.check("argmax", "partial warp_argmin value", "50x100", codes(gotX), codes(wantX), 0, 0);
    c.check("argmax", "partial warp_argmax", "50x100", gotTop, wantTop, 0, 0);
    c.check("argmax", "partial block_argmin index", "50x100", gotFirst, wantFirst, 0, 0);
    c.check("argmax", "partial block_argmin value", "50x100", codes(gotLowest), codes(wantLowest), 0, 0);
  }
}

// The atomics of language v2, part 2 (docs/language.md 8.5) through
// tests/golden/kernels/atomics_more.spn (kernel atomic_more), every output
// against a CPU reference written here. Four cases: N = 1 (one thread, so
// every compare-and-swap is decided), N = 1000 and N = 100000 (partial last
// blocks of 104 and 32 threads; contention), and N = 50001 of signed zeros
// and NaNs only (the max/min zero and NaN rules under contention).
//
// Exact, whatever the order of the atomics:
//   - and/or/xor: flags, masks, i32s[1..2], u64s[0] from random initial words;
//   - atomic_max/min: scale, dscale as bits, against a fold written on values
//     (NaN operand ignored, stored NaN replaced, of two NaNs the stored one
//     kept, -0.0 below +0.0), not the prelude's integer keys;
//   - the f16/bf16 sums sum_h[0..2] and sum_b[0]: the inputs make every
//     partial sum exact, so any order of the rounded adds gives the exact
//     sum. Every non-zero f16/bf16 addend is a small multiple of g = 2^-12,
//     drawn sparsely and capped per sign (sum_h[k] starts at 0.25 and moves by
//     at most 1000 g either way, so stays in (0, 0.5), where f16 holds every
//     multiple of g; sum_b[0] stays within 250 g of 0 and bf16 holds every
//     multiple of g up to 256 g). Each x also feeds the per-block shared
//     partials part/partb, so a value is counted against every sum it reaches.
//     The x are multiples of g plus f32 noise that f16 rounds away (distinct
//     values for max/min and cas), or below 2^-26 (f16 +-0);
//   - sum_b[1] is a bf16 counter of +1s (no other addend reaches it: hb at odd
//     i is +-0 and x at t % 3 == 1 rounds to +-0 in f16, so partb[1] is 0). It
//     counts exactly to 256, then 256 + 1 is a tie that nearest-even rounds
//     back to 256: it ends at min(N, 256) in any order, and round-half-up would
//     show;
//   - h_seen/b_seen (the old bits, a NaN's included), h (swapped for
//     f16(x / 2): expected is the element's own bits, so it always swaps, a NaN
//     too) and hb (swapped for 1.0 exactly where it held +0.0, never -0.0).
// Order-dependent, checked by invariants:
//   - i32s[0]: each thread ORs its t before its cas(0 -> t + 1), so only a
//     t == 0 thread can win and at most one does (after a win nothing returns
//     it to 0); the winner sets out to 0. N = 1 must have its one winner;
//     N = 100000 starts i32s[0] non-zero: no winner. The final word is the OR
//     of the t (and the initial word), plus 1 after a win;
//   - u64s[1], f32s[0], f64s[0]: the initial bits decide whether a swap
//     happens at all (f32s expects -0.0, so +0.0 must stay; f64s expects
//     +0.0, so -0.0 must stay); after one, the value is one of the candidates;
//   - out = (old sum_h[i % 3]) + (old sum_b[1]) for non-winners: old sum_b[1]
//     is an integer <= 256 and old sum_h in (0, 0.5), so out splits into
//     both: the counter's old values must be 0..255 once each and 256 for the
//     rest (a winner's, or one hidden by a NaN, missing), and each old sum_h
//     a multiple of g within the reach of its slot's addends.
uint32_t bitsOf(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  return u;
}
uint64_t bitsOf(double v) {
  uint64_t u;
  std::memcpy(&u, &v, 8);
  return u;
}
float f32OfBits(uint32_t u) {
  float v;
  std::memcpy(&v, &u, 4);
  return v;
}
double f64OfBits(uint64_t u) {
  double v;
  std::memcpy(&v, &u, 8);
  return v;
}
std::string hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%" PRIx64, v);
  return b;
}

// a > b in atomic_max's order: the float order with -0.0 below +0.0.
template <class F>
bool floatAbove(F a, F b) {
  return a > b || (a == 0 && b == 0 && !std::signbit(a) && std::signbit(b));
}
// What atomic_max (`max`) or atomic_min leaves in `stored` after every
// operand, in any order.
template <class F>
F refAtomicExtreme(F stored, const std::vector<F>& operands, bool max) {
  for (F v : operands) {
    if (std::isnan(v)) continue;
    if (std::isnan(stored) || (max ? floatAbove(v, stored) : floatAbove(stored, v))) stored = v;
  }
  return stored;
}

double roundF16(double v) { return std::isnan(v) ? v : fromHalf(toHalf(float(v))); }
double roundBf16(double v) { return std::isnan(v) ? v : fromBf16(toBf16(float(v))); }

void checkAtomics(Ctx& c) {
  const std::string path = c.samplesDir + "/../tests/golden/kernels/atomics_more.spn";
  Kernel k = c.rt->loadModule(path).kernel("atomic_more");
  constexpr int64_t B = 128;                          // the kernel's BLOCK
  constexpr double g = 0x1p-12;                       // the granule of every non-zero f16/bf16 addend
  constexpr int64_t kBudgetH = 1000, kBudgetB = 250;  // granules per sign: sum_h[k], sum_b[0]
  const float nanA = f32OfBits(0x7fc0beefu);
  const double nanB = f64OfBits(0x7ff80000deadbeefull);
  enum class Kind { OneNan, Values, Zeros };
  struct Case {
    Kind kind;
    int64_t n;
    float scale[2];    // initial scale: atomic_max of |x|, atomic_min of x
    double dscale[2];  // initial dscale: atomic_max of x, atomic_min of x / 2
    bool casZero;      // i32s[0] and u64s[1] start at 0 (else random non-zero: no swap)
    float casF32;      // initial f32s[0] (the cas expects -0.0)
    double casF64;     // initial f64s[0] (the cas expects +0.0)
  };
  const Case cases[] = {
      // A NaN operand leaves both finite and NaN stored values; the one
      // thread wins every cas.
      {Kind::OneNan, 1, {1.5f, nanA}, {nanB, -3.0}, true, -0.0f, 0.0},
      // Stored NaN replaced; f32s swaps (-0.0), f64s must not (-0.0 is not 0.0).
      {Kind::Values, 1000, {nanA, 0.0f}, {-INFINITY, INFINITY}, true, -0.0f, -0.0},
      // f32s must not swap (+0.0 is not -0.0), f64s swaps; no i32s[0] winner.
      {Kind::Values, 100000, {-0.0f, nanA}, {nanB, 0.0}, false, 0.0f, 0.0},
      // Only +-0 and NaN: max(-0.0, +0.0) is +0.0, min is -0.0, NaNs ignored.
      {Kind::Zeros, 50001, {-0.0f, nanA}, {nanB, 0.0}, true, -0.0f, 0.0},
  };
  for (const Case& cs : cases) {
    const int64_t N = cs.n;
    const size_t n = size_t(N);
    const std::string shape = shapeText({N});
    auto coin = [&](double p) { return c.rng.uniform(0, 1) < p; };
    auto signedZero = [&] { return (c.rng.next() & 1) ? -0.0f : 0.0f; };
    auto tiny = [&]() -> float {  // f16 rounds it to +-0; f32 keeps it distinct
      return coin(0.1) ? signedZero() : float(c.rng.uniform(-1, 1) * 0x1p-26);
    };
    auto granules = [&] {
      const int64_t q = 1 + int64_t(c.rng.next() % 3);
      return (c.rng.next() & 1) ? -q : q;
    };

    // Inputs. posH/negH: granules that may reach sum_h[k] by sign; posB/negB: sum_b[0].
    std::vector<float> x(n);
    std::vector<uint16_t> h(n), hb(n);
    int64_t posH[3] = {}, negH[3] = {}, posB = 0, negB = 0;
    // Books q granules against sum_h[s] for each s of `slots` (a slot twice:
    // twice) and against sum_b[0] if `intoB`, when all stay within budget.
    auto take = [&](int64_t q, std::initializer_list<int> slots, bool intoB) {
      int64_t* side = q > 0 ? posH : negH;
      int64_t& sideB = q > 0 ? posB : negB;
      const int64_t a = q > 0 ? q : -q;
      int64_t need[3] = {};
      for (int s : slots) need[s] += a;
      for (int s = 0; s < 3; ++s)
        if (side[s] + need[s] > kBudgetH) return false;
      if (intoB && sideB + a > kBudgetB) return false;
      for (int s = 0; s < 3; ++s) side[s] += need[s];
      if (intoB) sideB += a;
      return true;
    };
    // About 80 non-zero x, 60 hb and 360 h whatever N: some 60% of sum_b[0]'s
    // budget per sign expected, so the cap seldom has to zero a value.
    const double p = std::min(0.5, 120.0 / double(N));
    for (size_t i = 0; i < n; ++i) {
      const int t = int(int64_t(i) % B);
      switch (cs.kind) {
        case Kind::OneNan:
          x[i] = f32OfBits(0xffc00123u);
          h[i] = 0xfe00;  // a NaN: the cas expecting its own bits must swap
          hb[i] = 0x0000;
          break;
        case Kind::Zeros:
          // NaNs only where they reach neither sum_b[1] (the counter) nor
          // sum_h[0] (directly or through part): the outs of i % 3 == 0 stay
          // numbers, so the counter's old values show there.
          x[i] =
              t % 3 == 2 && i % 3 != 0 && coin(0.02) ? f32OfBits(uint32_t(c.rng.next() | 0x7fc00000u)) : signedZero();
          h[i] = coin(0.01) ? uint16_t(coin(0.5) ? 0x7e00 : 0xfe00) : toHalf(signedZero());
          hb[i] = toBf16(signedZero());
          break;
        case Kind::Values: {
          int64_t q = t % 3 != 1 && coin(p) ? granules() : 0;  // t % 3 == 1 feeds partb[1]: f16 +-0 only
          if (q && !take(q, {int(i % 3), t % 3}, true)) q = 0;
          if (q) {
            const float exact = float(double(q) * g);
            x[i] = float(double(exact) + c.rng.uniform(-1, 1) * 0x1p-25);
            if (toHalf(x[i]) != toHalf(exact)) x[i] = exact;
          } else {
            x[i] = tiny();
          }
          int64_t qh = coin(3 * p) ? granules() : 0;  // h reaches sum_h[2] only: more room
          if (qh && !take(qh, {2}, false)) qh = 0;
          h[i] = qh ? toHalf(float(double(qh) * g)) : toHalf(signedZero());
          int64_t qb = i % 2 == 0 && coin(p) ? granules() : 0;  // hb at odd i reaches sum_b[1]: +-0 only
          if (qb && !take(qb, {}, true)) qb = 0;
          hb[i] = qb ? toBf16(float(double(qb) * g / 2)) : toBf16(signedZero());
          break;
        }
      }
    }
    const std::vector<uint16_t> sumH0(3, toHalf(0.25f)), sumB0(2, toBf16(0.0f));
    const std::vector<float> scale0 = {cs.scale[0], cs.scale[1]}, f32s0 = {cs.casF32};
    const std::vector<double> dscale0 = {cs.dscale[0], cs.dscale[1]}, f64s0 = {cs.casF64};
    std::vector<uint32_t> flags0(3);
    std::vector<int64_t> masks0(3);
    for (auto& w : flags0) w = uint32_t(c.rng.next());
    for (auto& w : masks0) w = int64_t(c.rng.next());
    const std::vector<int32_t> i32s0 = {cs.casZero ? 0 : int32_t(uint32_t(c.rng.next()) | 0x100u),
                                        int32_t(c.rng.next()), int32_t(c.rng.next())};
    const std::vector<uint64_t> u64s0 = {c.rng.next(), cs.casZero ? 0 : c.rng.next() | 1u};

    auto dx = c.upload(x), dh = c.upload(h), dhb = c.upload(hb), dsumH = c.upload(sumH0), dsumB = c.upload(sumB0);
    auto dscale = c.upload(scale0), ddscale = c.upload(dscale0), dflags = c.upload(flags0), dmasks = c.upload(masks0);
    auto di32s = c.upload(i32s0), du64s = c.upload(u64s0), df32s = c.upload(f32s0), df64s = c.upload(f64s0);
    auto dhSeen = c.poisoned(n * 2), dbSeen = c.poisoned(n * 2), dout = c.poisoned(n * 4);
    using spindle::tensor;
    k.launch(nullptr,
             {t32(dx, {N}), t16(dh, {N}), tensor(dhb.data(), ScalarType::BF16, {N}), t16(dsumH, {3}),
              tensor(dsumB.data(), ScalarType::BF16, {2}), t32(dscale, {2}),
              tensor(ddscale.data(), ScalarType::F64, {2}), tensor(dflags.data(), ScalarType::U32, {3}),
              tensor(dmasks.data(), ScalarType::I64, {3}), tensor(di32s.data(), ScalarType::I32, {3}),
              tensor(du64s.data(), ScalarType::U64, {2}), t32(df32s, {1}), tensor(df64s.data(), ScalarType::F64, {1}),
              t16(dhSeen, {N}), tensor(dbSeen.data(), ScalarType::BF16, {N}), t32(dout, {N})});
    auto hAfter = c.download<uint16_t>(dh, n), hbAfter = c.download<uint16_t>(dhb, n);
    auto sumH = c.download<uint16_t>(dsumH, 3), sumB = c.download<uint16_t>(dsumB, 2);
    auto scale = c.download<float>(dscale, 2);
    auto dscaleGot = c.download<double>(ddscale, 2);
    auto flags = c.download<uint32_t>(dflags, 3);
    auto masks = c.download<int64_t>(dmasks, 3);
    auto i32s = c.download<int32_t>(di32s, 3);
    auto u64s = c.download<uint64_t>(du64s, 2);
    auto f32s = c.download<float>(df32s, 1);
    auto f64s = c.download<double>(df64s, 1);
    auto hSeen = c.download<uint16_t>(dhSeen, n), bSeen = c.download<uint16_t>(dbSeen, n);
    auto out = c.download<float>(dout, n);

    // Named words compared exactly; the first mismatch is reported in hex.
    using Word = std::tuple<const char*, uint64_t, uint64_t>;  // name, got, want
    auto words = [&](const std::string& what, const std::vector<Word>& items) {
      std::string detail;
      int bad = 0;
      for (const auto& [name, got, want] : items)
        if (got != want && bad++ == 0) detail = std::string(name) + ": got " + hex(got) + ", want " + hex(want);
      if (bad > 1) detail += " (" + std::to_string(bad) + " of " + std::to_string(items.size()) + " words wrong)";
      c.expect("atomics", what, shape, bad == 0, detail);
    };

    // and / or / xor.
    uint32_t orBits = 0, xorBits = 0;
    int64_t orMask = 0, andI = -1, xor3 = 0;
    int32_t orT = 0, xorI = 0;
    uint64_t xorU = 0;
    for (int64_t i = 0; i < N; ++i) {
      const uint32_t bit = uint32_t(1) << uint32_t(i % 32);
      orBits |= bit, xorBits ^= bit;
      orMask |= int64_t(1) << (i % 63), andI &= i, xor3 ^= i * 3;
      orT |= int32_t(i % B), xorI ^= int32_t(i), xorU ^= uint64_t(i);
    }
    words("and/or/xor",
          {Word{"flags[0] or", flags[0], flags0[0] | orBits}, Word{"flags[1] and", flags[1], flags0[1] & ~orBits},
           Word{"flags[2] xor", flags[2], flags0[2] ^ xorBits},
           Word{"masks[0] or", uint64_t(masks[0]), uint64_t(masks0[0] | orMask)},
           Word{"masks[1] and", uint64_t(masks[1]), uint64_t(masks0[1] & andI)},
           Word{"masks[2] xor", uint64_t(masks[2]), uint64_t(masks0[2] ^ xor3)},
           Word{"i32s[1] and", uint32_t(i32s[1]), uint32_t(i32s0[1] & -2)},
           Word{"i32s[2] xor", uint32_t(i32s[2]), uint32_t(i32s0[2] ^ xorI)},
           Word{"u64s[0] xor", u64s[0], u64s0[0] ^ xorU}});

    // atomic_max / atomic_min on f32 and f64, as bits.
    std::vector<float> absX, xs(x);
    std::vector<double> dX, halfX;
    for (float v : x) absX.push_back(std::fabs(v)), dX.push_back(double(v)), halfX.push_back(double(v) * 0.5);
    words("max/min f32 f64",
          {Word{"scale[0] max |x|", bitsOf(scale[0]), bitsOf(refAtomicExtreme(scale0[0], absX, true))},
           Word{"scale[1] min x", bitsOf(scale[1]), bitsOf(refAtomicExtreme(scale0[1], xs, false))},
           Word{"dscale[0] max x", bitsOf(dscaleGot[0]), bitsOf(refAtomicExtreme(dscale0[0], dX, true))},
           Word{"dscale[1] min x/2", bitsOf(dscaleGot[1]), bitsOf(refAtomicExtreme(dscale0[1], halfX, false))}});

    // The f16 / bf16 sums: exact by construction (above), so compared exactly
    // (valueCode: -0.0 and NaN by code). The direct adds and the per-block
    // partials reach the same sums; exact sums do not depend on the grouping.
    double sh[3] = {0.25, 0.25, 0.25}, sb0 = 0, intoCounter = 0;
    for (int64_t i = 0; i < N; ++i) {
      const int64_t t = i % B;
      const double v16 = roundF16(x[size_t(i)]);  // f16(v)
      sh[i % 3] += v16;                           // atomic_add(sum_h[i % 3], v)
      sh[t % 3] += v16;                           // via part[t % 3]
      sh[2] += fromHalf(h[size_t(i)]);            // atomic_add(sum_h[2], h[i])
      const double hb2 = roundBf16(fromBf16(hb[size_t(i)]) * 2), vb = roundBf16(v16);
      (i % 2 == 0 ? sb0 : intoCounter) += hb2;       // atomic_add(sum_b[i % 2], hb[i] * 2)
      ((t % 3) % 2 == 0 ? sb0 : intoCounter) += vb;  // via partb[t % 3] into sum_b[(t % 3) % 2]
    }
    double counter = 0;  // sum_b[1]: N adds of 1 in bf16, any order
    for (int64_t i = 0; i < N; ++i) counter = roundBf16(counter + 1);
    bool exact = intoCounter == 0 && (std::isnan(sb0) || roundBf16(sb0) == sb0);
    for (double s : sh) exact = exact && (std::isnan(s) || roundF16(s) == s);
    if (!exact) c.fail("atomics " + shape, "the inputs broke their own budget: a reference sum is not exact");
    c.check("atomics", "f16 atomic_add sums", shape,
            {valueCode(fromHalf(sumH[0])), valueCode(fromHalf(sumH[1])), valueCode(fromHalf(sumH[2]))},
            {valueCode(sh[0]), valueCode(sh[1]), valueCode(sh[2])}, 0, 0);
    c.check("atomics", "bf16 atomic_add sum, count", shape, {valueCode(fromBf16(sumB[0])), fromBf16(sumB[1])},
            {valueCode(sb0), counter}, 0, 0);

    // cas on f16 / bf16 elements, per element.
    Vec gotHSeen, wantHSeen, gotH, wantH, gotBSeen, wantBSeen, gotB, wantB;
    for (size_t i = 0; i < n; ++i) {
      gotHSeen.push_back(hSeen[i]), wantHSeen.push_back(h[i]);
      gotH.push_back(valueCode(fromHalf(hAfter[i]))), wantH.push_back(valueCode(roundF16(x[i] * 0.5f)));
      gotBSeen.push_back(bSeen[i]), wantBSeen.push_back(hb[i]);
      gotB.push_back(hbAfter[i]), wantB.push_back(hb[i] == 0x0000 ? 0x3f80 : hb[i]);
    }
    c.check("atomics", "f16 cas old bits", shape, gotHSeen, wantHSeen, 0, 0);
    c.check("atomics", "f16 cas swapped", shape, gotH, wantH, 0, 0);
    c.check("atomics", "bf16 cas old bits", shape, gotBSeen, wantBSeen, 0, 0);
    c.check("atomics", "bf16 cas +0.0 only", shape, gotB, wantB, 0, 0);

    // The i32s[0] race: winners are the threads whose out is 0 (a
    // non-winner's out is at least its old sum_h, > 0, or NaN).
    int64_t winners = 0, winnerAt = -1;
    for (int64_t i = 0; i < N; ++i)
      if (out[size_t(i)] == 0.0f) ++winners, winnerAt = i;
    {
      std::string why;
      const int32_t wantWord = i32s0[0] | orT | (winners ? 1 : 0);
      if (winners > (cs.casZero ? 1 : 0)) why = std::to_string(winners) + " winners";
      else if (N == 1 && cs.casZero && winners != 1) why = "the only thread did not win";
      else if (winners && winnerAt % B != 0) why = "winner i = " + std::to_string(winnerAt) + " has t != 0";
      else if (i32s[0] != wantWord) why = "i32s[0] " + hex(uint32_t(i32s[0])) + ", want " + hex(uint32_t(wantWord));
      const bool ok = why.empty();
      if (ok) why = winners ? "thread " + std::to_string(winnerAt) + " won" : "no winner";
      c.expect("atomics", "i32 cas winner", shape, ok, why);
    }
    // u64s[1], f32s[0], f64s[0]: the initial bits decide whether one swaps.
    {
      std::string why;
      const bool u64Swaps = u64s0[1] == 0, f32Swaps = bitsOf(f32s0[0]) == bitsOf(-0.0f),
                 f64Swaps = bitsOf(f64s0[0]) == bitsOf(0.0);
      if (!u64Swaps ? u64s[1] != u64s0[1] : N == 1 ? u64s[1] != 0 : u64s[1] < 1 || u64s[1] >= uint64_t(N))
        why = "u64s[1] " + hex(u64s[1]) + " (initial " + hex(u64s0[1]) + ")";
      bool f32Candidate = false, f64Candidate = false;
      for (float v : x) {
        f32Candidate = f32Candidate || bitsOf(v) == bitsOf(f32s[0]);
        f64Candidate = f64Candidate || bitsOf(double(v)) == bitsOf(f64s[0]) || (std::isnan(v) && std::isnan(f64s[0]));
      }
      if (f32Swaps ? !f32Candidate : bitsOf(f32s[0]) != bitsOf(f32s0[0]))
        why += (why.empty() ? "" : "; ") + std::string("f32s[0] ") + hex(bitsOf(f32s[0])) + " (initial " +
               hex(bitsOf(f32s0[0])) + (f32Swaps ? ", not any x" : ", must stay") + ")";
      if (f64Swaps ? !f64Candidate : bitsOf(f64s[0]) != bitsOf(f64s0[0]))
        why += (why.empty() ? "" : "; ") + std::string("f64s[0] ") + hex(bitsOf(f64s[0])) + " (initial " +
               hex(bitsOf(f64s0[0])) + (f64Swaps ? ", not any x" : ", must stay") + ")";
      c.expect("atomics", "u64 f32 f64 cas", shape, why.empty(), why);
    }
    // out = old sum_h[i % 3] + old sum_b[1]: split it and check both parts.
    {
      std::vector<int64_t> counts(257, 0);
      int64_t hidden = 0;  // outs whose old sum_h was NaN
      std::string why;
      for (int64_t i = 0; i < N && why.empty(); ++i) {
        const float o = out[size_t(i)];
        const int s = int(i % 3);
        if (o == 0.0f) continue;  // the winner
        if (std::isnan(o)) {
          if (!std::isnan(sh[s])) why = "out[" + std::to_string(i) + "] is NaN";
          ++hidden;
          continue;
        }
        const double ob = std::floor(double(o)), oh = double(o) - ob;
        const double lo = 0.25 - double(negH[s]) * g, hi = 0.25 + double(posH[s]) * g;
        if (ob < 0 || ob > 256 || oh < lo || oh > hi || std::floor(oh / g) != oh / g) {
          char b[160];
          std::snprintf(b, sizeof b,
                        "out[%" PRId64
                        "] = %.9g is no old sum_b[1] in 0..256 plus an old sum_h[%d] in [%.9g, %.9g] on g",
                        i, double(o), s, lo, hi);
          why = b;
        } else {
          ++counts[size_t(ob)];
        }
      }
      for (int64_t v = 0; v <= 256 && why.empty(); ++v) {
        const int64_t most = v < 256 ? (v < N ? 1 : 0) : std::max<int64_t>(0, N - 256);
        if (counts[size_t(v)] > most)
          why = "old sum_b[1] " + std::to_string(v) + " handed out " + std::to_string(counts[size_t(v)]) +
                " times, at most " + std::to_string(most);
      }
      const bool ok = why.empty();
      if (ok && hidden) why = std::to_string(hidden) + " hidden by a NaN old sum_h";
      c.expect("atomics", "old values in out", shape, ok, why);
    }
  }
}

// ---------------------------------------------------------------- runtime behaviour

void checkCaching(Ctx& c) {
  std::printf("runtime cache behaviour\n");
  spindle::RuntimeOptions opt;
  opt.diskCache = false;  // count compiles, not what an earlier run left on disk
  Runtime rt(opt);
  // Dynamic N: two shapes, one binary. (Uses the axpy sample as given.)
  {
    Kernel k = rt.loadModule(c.pathOf("axpy")).kernel("axpy");
    rt.resetStats();
    for (int64_t n : {int64_t(1000), int64_t(123457)}) {
      DeviceBuffer x = rt.allocate(size_t(n) * 4), y = rt.allocate(size_t(n) * 4);
      k.launch(nullptr, {spindle::tensor(x.data(), ScalarType::F32, {n}),
                         spindle::tensor(y.data(), ScalarType::F32, {n}), spindle::scalar(1.0f)});
    }
    rt.synchronize();
    auto s = rt.stats();
    bool ok = s.compiles == 1;
    std::printf("  %s  dynamic N, two shapes (N=1000, N=123457): %" PRIu64 " compile(s), %" PRIu64 " memory hit(s)\n",
                ok ? "ok  " : "FAIL", s.compiles, s.memoryHits);
    if (!ok) ++c.failures;
    c.emit(Json()
               .s("type", "cache_check")
               .s("what", "dynamic dims share a binary")
               .i("compiles", int64_t(s.compiles))
               .b("ok", ok));
  }
  // Static K: two values, two binaries.
  {
    Kernel k = rt.loadModule(c.pathOf("matmul")).kernel("matmul");
    rt.resetStats();
    for (int64_t K : {int64_t(64), int64_t(96)}) {
      int64_t M = 32, N = 32;
      DeviceBuffer a = rt.allocate(size_t(M * K) * 4), b = rt.allocate(size_t(K * N) * 4),
                   cc = rt.allocate(size_t(M * N) * 4);
      k.launch(nullptr,
               {spindle::tensor(a.data(), ScalarType::F32, {M, K}), spindle::tensor(b.data(), ScalarType::F32, {K, N}),
                spindle::tensor(cc.data(), ScalarType::F32, {M, N})});
      k.launch(nullptr,
               {spindle::tensor(a.data(), ScalarType::F32, {M, K}), spindle::tensor(b.data(), ScalarType::F32, {K, N}),
                spindle::tensor(cc.data(), ScalarType::F32, {M, N})});
    }
    rt.synchronize();
    auto s = rt.stats();
    bool ok = s.compiles == 2;
    std::printf("  %s  static K, two values (K=64, K=96), each launched twice: %" PRIu64 " compile(s), %" PRIu64
                " memory hit(s)\n",
                ok ? "ok  " : "FAIL", s.compiles, s.memoryHits);
    if (!ok) ++c.failures;
    c.emit(Json()
               .s("type", "cache_check")
               .s("what", "static dims do not share")
               .i("compiles", int64_t(s.compiles))
               .b("ok", ok));
  }
  // A view 2 bytes past an allocation is not 16-byte aligned: the runtime
  // must not reuse the aligned binary (whose runs are 16-byte vector
  // accesses) for it, and the unaligned one must still be right.
  {
    Kernel k = rt.loadModule(c.pathOf("axpy")).kernel("axpy");
    rt.resetStats();
    int64_t n = 4099;
    Vec x, y;
    auto hx = c.randF16(size_t(n + 1), x), hy = c.randF16(size_t(n + 1), y);
    DeviceBuffer dx = rt.allocate(hx.size() * 2), dy = rt.allocate(hy.size() * 2);
    rt.copyToDevice(dx, hx.data(), hx.size() * 2);
    rt.copyToDevice(dy, hy.data(), hy.size() * 2);
    auto past2 = [](const DeviceBuffer& b) { return static_cast<const void*>(static_cast<char*>(b.data()) + 2); };
    k.launch(nullptr, {spindle::tensor(past2(dx), ScalarType::F16, {n}),
                       spindle::tensor(past2(dy), ScalarType::F16, {n}), spindle::scalar(0.75f)});
    DeviceBuffer ax = rt.allocate(size_t(n) * 2), ay = rt.allocate(size_t(n) * 2);  // aligned, same shape
    k.launch(nullptr, {spindle::tensor(ax.data(), ScalarType::F16, {n}),
                       spindle::tensor(ay.data(), ScalarType::F16, {n}), spindle::scalar(0.75f)});
    rt.synchronize();
    std::vector<uint16_t> out(size_t(n + 1));
    rt.copyToHost(out.data(), dy, out.size() * 2);
    Vec got(static_cast<size_t>(n));
    for (size_t i = 0; i < got.size(); ++i) got[i] = fromHalf(out[i + 1]);
    c.check("axpy", "f16, views 2 bytes past the allocation", shapeText({n}), got,
            bench::refAxpy(Vec(x.begin() + 1, x.end()), Vec(y.begin() + 1, y.end()), 0.75), kF16Atol, kF16Rtol);
    auto s = rt.stats();
    bool ok = s.compiles == 2 && out[0] == hy[0];  // and the element before the view untouched
    std::printf("  %s  axpy f16 on unaligned then aligned views of one shape: %" PRIu64 " compile(s)%s\n",
                ok ? "ok  " : "FAIL", s.compiles, out[0] == hy[0] ? "" : ", element before the view overwritten");
    if (!ok) ++c.failures;
    c.emit(Json()
               .s("type", "cache_check")
               .s("what", "unaligned views get their own binary")
               .i("compiles", int64_t(s.compiles))
               .b("ok", ok));
  }
  // One Kernel launched with f16, then f32, then f16 arguments of the same
  // dims: its dynamic shared buffer (N elements of T) is 24000, 48000, then
  // 24000 bytes. The geometry it remembers between launches must follow the
  // dtype, or the f32 launch writes past its shared allocation.
  {
    Kernel k = rt.loadModuleFromString("staged.spn", R"(@grid(1)
@block(256)
kernel staged[T](x: T[N], y: T[N]):
    buf = shared(T, [N])
    for j in range(thread_id(), N, 256):
        buf[j] = x[j]
    sync()
    for j in range(thread_id(), N, 256):
        y[j] = buf[N - 1 - j]
)")
                   .kernel("staged");
    const int64_t n = 12000;
    bool ok = true;
    std::string what;
    for (ScalarType t : {ScalarType::F16, ScalarType::F32, ScalarType::F16}) {
      bool f32 = t == ScalarType::F32;
      size_t bytes = size_t(n) * (f32 ? 4 : 2);
      Vec x, got(static_cast<size_t>(n));
      std::vector<float> h32 = f32 ? c.randF32(size_t(n), x) : std::vector<float>();
      std::vector<uint16_t> h16 = f32 ? std::vector<uint16_t>() : c.randF16(size_t(n), x);
      DeviceBuffer dx = rt.allocate(bytes), dy = rt.allocate(bytes);
      rt.copyToDevice(dx, f32 ? static_cast<const void*>(h32.data()) : h16.data(), bytes);
      k.launch(nullptr, {spindle::tensor(dx.data(), t, {n}), spindle::tensor(dy.data(), t, {n})});
      rt.synchronize();
      std::vector<char> out(bytes);
      rt.copyToHost(out.data(), dy, bytes);
      for (size_t i = 0; i < got.size(); ++i) {
        if (f32) got[i] = reinterpret_cast<const float*>(out.data())[i];
        else got[i] = fromHalf(reinterpret_cast<const uint16_t*>(out.data())[i]);
      }
      size_t wrong = 0;
      for (size_t i = 0; i < size_t(n); ++i) wrong += got[i] != x[size_t(n) - 1 - i];
      ok &= wrong == 0;
      what += std::string(what.empty() ? "" : ", ") + (f32 ? "f32" : "f16") + ": " + std::to_string(wrong) + " wrong";
    }
    std::printf("  %s  one generic Kernel, shared(T, [N]) with f16, f32, f16 (N=%" PRId64 "): %s\n",
                ok ? "ok  " : "FAIL", n, what.c_str());
    if (!ok) ++c.failures;
    c.emit(Json()
               .s("type", "cache_check")
               .s("what", "remembered geometry follows the dtype")
               .s("detail", what)
               .b("ok", ok));
  }
  // A wrong shape is refused before anything launches.
  {
    Kernel k = rt.loadModule(c.pathOf("transpose")).kernel("transpose");
    DeviceBuffer x = rt.allocate(64 * 48 * 4), y = rt.allocate(64 * 48 * 4);
    std::string msg;
    try {
      k.launch(nullptr, {spindle::tensor(x.data(), ScalarType::F32, {64, 48}),
                         spindle::tensor(y.data(), ScalarType::F32, {64, 48})});
    } catch (const spindle::Error& e) {
      msg = e.what();
    }
    bool ok = !msg.empty();
    std::printf("  %s  transpose x f32[64, 48], y f32[64, 48] refused: %s\n", ok ? "ok  " : "FAIL",
                ok ? msg.c_str() : "(launched!)");
    if (!ok) ++c.failures;
    c.emit(Json().s("type", "cache_check").s("what", "wrong shape refused").s("message", msg).b("ok", ok));
  }
}

// ---------------------------------------------------------------- launch overhead

using CUresult = int;
struct Cuda {
  void* lib = nullptr;
  CUresult (*ctxGetCurrent)(void**) = nullptr;
  CUresult (*moduleLoadData)(void**, const void*) = nullptr;
  CUresult (*moduleGetFunction)(void**, void*, const char*) = nullptr;
  CUresult (*launchKernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                           void**) = nullptr;
  CUresult (*ctxSynchronize)() = nullptr;
  bool open() {
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return false;
    auto get = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      return fn != nullptr;
    };
    return get(ctxGetCurrent, "cuCtxGetCurrent") && get(moduleLoadData, "cuModuleLoadData") &&
           get(moduleGetFunction, "cuModuleGetFunction") && get(launchKernel, "cuLaunchKernel") &&
           get(ctxSynchronize, "cuCtxSynchronize");
  }
};

bool readCubin(const std::string& cacheDir, const std::string& key, std::vector<char>& payload) {
  std::ifstream f(cacheDir + "/v1/" + key.substr(0, 2) + "/" + key + ".bin", std::ios::binary);
  if (!f) return false;
  std::vector<char> file((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t header = 8 + 4 + 4 + 8 + 64 + 32;  // runtime/src/disk_cache.h kHeaderBytes
  if (file.size() <= header || std::memcmp(file.data(), "SPNDLBIN", 8) != 0) return false;
  payload.assign(file.begin() + long(header), file.end());
  return true;
}

void launchOverhead(Ctx& c) {
  std::printf("launch overhead (host time per launch, axpy f32 N=256, one block)\n");
  Cuda cu;
  if (!cu.open()) {
    std::printf("  skipped: no libcuda.so.1\n");
    return;
  }
  Kernel k = c.kernel("axpy", "axpy");
  int64_t n = 256;
  DeviceBuffer x = c.rt->allocate(size_t(n) * 4), y = c.rt->allocate(size_t(n) * 4);
  std::vector<float> zeros(size_t(n), 0.0f);
  c.rt->copyToDevice(x, zeros.data(), zeros.size() * 4);
  c.rt->copyToDevice(y, zeros.data(), zeros.size() * 4);
  Arg args[3] = {spindle::tensor(x.data(), ScalarType::F32, {n}), spindle::tensor(y.data(), ScalarType::F32, {n}),
                 spindle::scalar(1.0f)};
  k.launch(nullptr, args, 3);
  c.rt->synchronize();
  spindle::CompileReport rep = k.compile({}, {{"T", ScalarType::F32}});
  std::vector<char> cubin;
  void* ctx = nullptr;
  cu.ctxGetCurrent(&ctx);
  if (c.rt->cacheDir().empty() || !readCubin(c.rt->cacheDir(), rep.keyHex, cubin) || !ctx) {
    std::printf("  skipped: the binary is not in the disk cache or no current context\n");
    return;
  }
  void* mod = nullptr;
  void* fn = nullptr;
  if (cu.moduleLoadData(&mod, cubin.data()) != 0 || cu.moduleGetFunction(&fn, mod, rep.kernelSymbol.c_str()) != 0) {
    std::printf("  skipped: could not load the cached cubin\n");
    return;
  }
  // Raw: the generated signature is (const float* x, float* y, float a, int64_t N).
  void* px = x.data();
  void* py = y.data();
  float a = 1.0f;
  int64_t nn = n;
  void* params[4] = {&px, &py, &a, &nn};
  auto raw = [&] { cu.launchKernel(fn, 1, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr); };
  auto viaRuntime = [&] { k.launch(nullptr, args, 3); };
  // Batches of 100 launches (short enough that the launch queue never fills),
  // synchronizing between batches outside the timed region.
  auto measure = [&](const std::function<void()>& launch) {
    using clock = std::chrono::steady_clock;
    double total = 0;
    const int batches = 100, per = 100;
    for (int b = 0; b < batches + 5; ++b) {
      auto t0 = clock::now();
      for (int i = 0; i < per; ++i) launch();
      auto t1 = clock::now();
      cu.ctxSynchronize();
      if (b >= 5) total += std::chrono::duration<double, std::micro>(t1 - t0).count();
    }
    return total / (batches * per);
  };
  double rawUs = 1e30, rtUs = 1e30;
  for (int round = 0; round < 3; ++round) {  // interleaved, best of three
    rawUs = std::min(rawUs, measure(raw));
    rtUs = std::min(rtUs, measure(viaRuntime));
  }
  auto s = c.rt->stats();
  std::printf("  cuLaunchKernel (same cubin):  %.3f us/launch\n", rawUs);
  std::printf("  Kernel::launch (memory hit):  %.3f us/launch  (+%.3f us; %" PRIu64 " compiles so far)\n", rtUs,
              rtUs - rawUs, s.compiles);
  c.emit(Json()
             .s("type", "launch_overhead")
             .n("raw_us", rawUs)
             .n("runtime_us", rtUs)
             .n("added_us", rtUs - rawUs)
             .i("launches", 10000));
}

// ---------------------------------------------------------------- cold compile vs disk hit

// Child mode: compile every sample's timing specialization, report each time.
int probeCompile(Ctx& c, const std::string& label, const std::set<std::string>& only,
                 const std::vector<std::pair<std::string, std::string>>& variants) {
  using clock = std::chrono::steady_clock;
  double total = 0;
  std::vector<std::pair<const Sample*, std::string>> todo;  // (sample, variant file or "")
  for (const Sample& s : samples())
    if ((only.empty() && variants.empty()) || only.count(s.name)) todo.emplace_back(&s, "");
  for (const auto& [name, path] : variants)
    for (const Sample& s : samples())
      if (name == s.name) todo.emplace_back(&s, path);
  for (const auto& [sp, path] : todo) {
    const Sample& s = *sp;
    c.variantPath.clear();
    if (!path.empty()) c.variantPath[s.name] = path;
    auto t0 = clock::now();
    Kernel k = c.kernel(s.name, s.kernel, s.consts);
    std::map<std::string, int64_t> staticValues;
    for (const auto& d : k.staticDims()) staticValues[d] = s.benchDims.at(d);
    spindle::CompileReport r = k.compile(staticValues, s.typeArgs);
    double ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    total += ms;
    std::printf("  %-5s %-14s %8.1f ms  %s %s\n", label.c_str(), s.name, ms, spindle::cacheOutcomeName(r.outcome),
                path.c_str());
    c.emit(Json()
               .s("type", "compile")
               .s("phase", label)
               .s("kernel", s.name)
               .n("ms", ms)
               .s("outcome", spindle::cacheOutcomeName(r.outcome))
               .n("compile_s", r.compileSeconds));
  }
  std::printf("  %-5s %-14s %8.1f ms\n", label.c_str(), "total", total);
  c.emit(Json().s("type", "compile").s("phase", label).s("kernel", "total").n("ms", total));
  return 0;
}

std::string shellQuote(const std::string& s) {
  std::string o = "'";
  for (char ch : s) o += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return o + "'";
}

void coldVsDisk(Ctx& c, const std::string& jsonPath, const std::vector<std::string>& passThrough) {
  std::printf("cold compile vs disk-cache hit, each in a new process with a fresh SPINDLE_CACHE_DIR\n");
  char tmpl[] = "/tmp/spindle-bench-cache-XXXXXX";
  char* dir = mkdtemp(tmpl);
  char self[4096] = {};
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (!dir || len <= 0) {
    c.fail("compile probe", "no temporary directory or no /proc/self/exe");
    return;
  }
  for (const char* phase : {"cold", "disk"}) {
    std::string cmd = "SPINDLE_CACHE_DIR=" + shellQuote(dir) + " " + shellQuote(self) + " --probe-compile " + phase;
    for (const auto& a : passThrough) cmd += " " + shellQuote(a);
    if (!jsonPath.empty()) cmd += " --json " + shellQuote(jsonPath);
    std::fflush(stdout);
    if (c.json) std::fflush(c.json);
    int rc = std::system(cmd.c_str());
    if (rc != 0) c.fail(std::string("compile probe ") + phase, "child exited with " + std::to_string(rc));
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);  // best effort: a leftover directory in /tmp is harmless
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

int main(int argc, char** argv) {
  Ctx c;
  c.samplesDir = SPINDLE_BENCH_SAMPLES_DIR;
  std::string jsonPath, probePhase, target;
  std::set<std::string> only;
  bool probe = true, seeded = false;
  std::vector<std::string> passThrough;                       // what the compile-probe children need
  std::vector<std::pair<std::string, std::string>> variants;  // (sample, file), in order
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "gpu_check: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--samples") c.samplesDir = value(), passThrough.insert(passThrough.end(), {a, c.samplesDir});
    else if (a == "--json") jsonPath = value();
    else if (a == "--seed") c.seed = std::strtoull(value().c_str(), nullptr, 0), seeded = true;
    else if (a == "--only") {
      for (auto& s : split(value(), ',')) only.insert(s);
    } else if (a == "--variant") {
      std::string v = value();
      size_t eq = v.find('=');
      if (eq == std::string::npos) {
        std::fprintf(stderr, "gpu_check: --variant expects SAMPLE=PATH\n");
        return 2;
      }
      variants.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (a == "--const") {
      // SAMPLE:NAME=VALUE, read as spindle gen reads --const NAME=VALUE.
      std::string v = value();
      size_t colon = v.find(':');
      std::vector<std::string> flag = {"--const", colon == std::string::npos ? "" : v.substr(colon + 1)};
      spindle::Specialization spec;
      size_t at = 0;
      try {
        if (colon == std::string::npos) throw std::invalid_argument("--const expects SAMPLE:NAME=VALUE");
        spindle::parseSpecializationFlag(flag, at, spec);
      } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "gpu_check: %s\n", e.what());
        return 2;
      }
      for (const auto& [name, cv] : spec.consts) c.sampleConsts[v.substr(0, colon)][name] = cv;
      only.insert(v.substr(0, colon));
    } else if (a == "--no-perf") c.perf = false;
    else if (a == "--no-probe") probe = false;
    else if (a == "--reps") c.reps = std::max(1, std::atoi(value().c_str()));
    else if (a == "--dump") c.dumpDir = value();
    else if (a == "--probe-compile") probePhase = value();
    else if (a == "--target") target = value();
    else {
      std::fprintf(stderr, "gpu_check: unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  if (!c.dumpDir.empty() && probePhase.empty()) {  // a fresh manifest; the files of its cases are overwritten
    std::error_code ec;
    std::filesystem::create_directories(c.dumpDir, ec);
    if (ec || !std::ofstream(c.dumpDir + "/manifest.jsonl", std::ios::trunc)) {
      std::fprintf(stderr, "gpu_check: cannot create %s/manifest.jsonl\n", c.dumpDir.c_str());
      return 2;
    }
  }
  if (!jsonPath.empty()) {
    c.json = std::fopen(jsonPath.c_str(), "a");
    if (!c.json) {
      std::fprintf(stderr, "gpu_check: cannot open %s\n", jsonPath.c_str());
      return 2;
    }
  }
  try {
    spindle::RuntimeOptions options;
    options.target = target;  // empty: the device's own
    // Samples with @tune are tuned at their first launch (the correctness
    // check), so no timed launch includes tuning.
    options.tune.mode = spindle::TuneMode::Blocking;
    Runtime rt(options);
    c.rt = &rt;
    if (!probePhase.empty()) return probeCompile(c, probePhase, only, variants);
    if (!rt.hasDevice()) {
      std::fprintf(stderr, "gpu_check: no GPU: %s\n", rt.deviceStatus().c_str());
      return 2;
    }
    if (!seeded) c.seed = uint64_t(std::chrono::system_clock::now().time_since_epoch().count());
    c.rng.s = c.seed;
    std::printf("gpu_check: device %s (%s), compiler %s, cache %s\n", rt.deviceName().c_str(), rt.target().c_str(),
                rt.compilerIdentity().c_str(), rt.cacheDir().c_str());
    std::printf("seed %" PRIu64 " (repeat with --seed %" PRIu64 ")\n", c.seed, c.seed);
    c.emit(Json()
               .s("type", "meta")
               .s("device", rt.deviceName())
               .s("target", rt.target())
               .s("compiler", rt.compilerIdentity())
               .s("seed", std::to_string(c.seed)));

    std::unique_ptr<Pool> pool;
    if (c.perf) {
      pool = std::make_unique<Pool>();
      size_t n = size_t(Pool::kFloats);
      std::vector<float> host(n);
      Rng r{c.seed ^ 0x5eed};
      for (auto& v : host) v = float(r.uniform(-1, 1));
      pool->a = rt.allocate(n * 4);
      rt.copyToDevice(pool->a, host.data(), n * 4);
      for (auto& v : host) v = float(r.uniform(-1, 1));
      pool->b = rt.allocate(n * 4);
      rt.copyToDevice(pool->b, host.data(), n * 4);
      std::vector<uint16_t> half(n);
      for (auto& v : half) v = toHalf(float(r.uniform(-1, 1)));
      pool->h16 = rt.allocate(n * 2);
      rt.copyToDevice(pool->h16, half.data(), n * 2);
      pool->out1 = rt.allocate(n * 4);
      pool->out2 = rt.allocate(n * 4);
      std::vector<float> zeros(1 << 16, 0.0f);
      pool->small = rt.allocate(zeros.size() * 4);
      rt.copyToDevice(pool->small, zeros.data(), zeros.size() * 4);
    }

    std::printf("samples (correctness at two shapes%s)\n", c.perf ? ", then timing at a GPU-filling size" : "");
    auto runOne = [&](const Sample& s) {
      try {
        s.run(c, pool.get());
      } catch (const spindle::Error& e) {
        c.fail(s.name, std::string("spindle::Error: ") + e.what());
      }
    };
    if (variants.empty()) {
      for (const Sample& s : samples())
        if (only.empty() || only.count(s.name)) runOne(s);
      rt.synchronize();
      // The language features by value, named as --only names them.
      const std::pair<const char*, void (*)(Ctx&)> features[] = {{"warp_primitives", checkWarpPrimitives},
                                                                 {"math_more", checkFastTanh},
                                                                 {"argmax", checkArgReduce},
                                                                 {"atomics", checkAtomics},
                                                                 {"barriers", checkBarriers}};
      for (const auto& [name, check] : features) {
        if (!only.empty() && !only.count(name)) continue;
        try {
          check(c);
        } catch (const spindle::Error& e) {
          c.fail(name, std::string("spindle::Error: ") + e.what());
        }
      }
      checkCaching(c);
      launchOverhead(c);
      if (probe) coldVsDisk(c, jsonPath, passThrough);
    } else {
      // Each variant file in place of its sample, one after another.
      for (const auto& [name, path] : variants) {
        auto it = std::find_if(samples().begin(), samples().end(), [&](const Sample& s) { return name == s.name; });
        if (it == samples().end()) {
          c.fail(name, "no such sample");
          continue;
        }
        c.variantPath = {{name, path}};
        runOne(*it);
      }
    }
    auto st = rt.stats();
    std::printf("runtime stats: %" PRIu64 " compiles (%.2f s), %" PRIu64 " disk hits, %" PRIu64 " memory hits\n",
                st.compiles, st.compileSeconds, st.diskHits, st.memoryHits);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_check: %s\n", e.what());
    if (c.json) std::fclose(c.json);
    return 2;
  }
  if (c.json) std::fclose(c.json);
  std::printf("%s: %d failure(s)\n", c.failures ? "FAILED" : "all correct", c.failures);
  return c.failures ? 1 : 0;
}
