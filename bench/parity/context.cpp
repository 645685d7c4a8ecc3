#include "context.hpp"

#include <algorithm>
#include <cinttypes>

namespace parity {
namespace {

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

double quantile(std::vector<double> v, double q) {  // nearest rank, v not empty
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(q * double(v.size() - 1) + 0.5))];
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

Json& Json::raw(const char* k, const std::string& v) {
  body += (body.empty() ? "{" : ", ") + std::string("\"") + k + "\": " + v;
  return *this;
}
Json& Json::s(const char* k, const std::string& v) { return raw(k, "\"" + jsonEscape(v) + "\""); }
Json& Json::n(const char* k, double v) {
  char b[64];
  if (std::isfinite(v)) std::snprintf(b, sizeof b, "%.6g", v);
  else std::snprintf(b, sizeof b, "null");
  return raw(k, b);
}
Json& Json::i(const char* k, int64_t v) { return raw(k, std::to_string(v)); }
Json& Json::b(const char* k, bool v) { return raw(k, v ? "true" : "false"); }

std::string shapeText(std::initializer_list<int64_t> dims) {
  std::string s;
  for (int64_t d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

Ctx::Ctx(spindle::Runtime& runtime, spindle::Runtime& memory, const Driver* driver, const Nvrtc& nvrtc,
         std::string arch, std::string rootDir, uint64_t seedValue)
    : rt(runtime),
      mem(memory),
      cu(driver),
      root(std::move(rootDir)),
      rng{seedValue},
      seed(seedValue),
      arch_(std::move(arch)),
      nvrtc_(nvrtc),
      modules_(driver, nvrtc, arch_) {
  flushKernel_ = hand("l2_flush.cu", "l2_flush");
  if (dry()) return;
  // The flush buffer: four times L2, at least 256 MB, all zeros.
  const size_t bytes = std::max<size_t>(size_t(4) * size_t(cu->l2Bytes()), size_t(256) << 20);
  flushBuffer_ = filled(bytes, 0);
  flushSink_ = filled(16, 0);
  flushWords_ = int(bytes / 16);
  flushBlocks_ = unsigned(cu->multiprocessors() * 8);
}

spindle::Kernel Ctx::spindle(const std::string& path, const std::string& kernel,
                             const std::map<std::string, spindle::ConstOverride>& consts) {
  auto it = spindleModules_.find(path);
  if (it == spindleModules_.end()) it = spindleModules_.emplace(path, rt.loadModule(root + "/" + path)).first;
  spindle::KernelOptions options;
  options.consts = consts;
  return it->second.kernel(kernel, options);
}

HandKernel Ctx::hand(const std::string& file, const std::string& kernel, const std::vector<std::string>& defines) {
  if (dry()) {
    compileHandwritten(nvrtc_, file, arch_, defines);  // throws with nvrtc's log
    return HandKernel{};
  }
  return HandKernel{cu, modules_.function(file, kernel, defines)};
}

void Ctx::launch(const spindle::Kernel& k, std::initializer_list<spindle::Arg> args) const {
  if (dry()) k.compileFor(args);
  else k.launch(nullptr, args);
}

int64_t Ctx::residentBlocks(const HandKernel& h, int blockSize, size_t sharedBytes) const {
  if (dry()) return 1;
  return int64_t(cu->blocksPerMultiprocessor(h.fn, blockSize, sharedBytes)) * cu->multiprocessors();
}

bool Ctx::dryNote(const char* what, const std::string& label, const std::string& shape) const {
  std::printf("  dry    %-6s %-44s %s\n", what, label.c_str(), shape.c_str());
  return true;
}

spindle::DeviceBuffer Ctx::filled(size_t bytes, unsigned char byte) {
  return upload(std::vector<unsigned char>(bytes, byte));
}

void Ctx::emit(const Json& j) {
  if (!json) return;
  std::fprintf(json, "%s\n", j.str().c_str());
  std::fflush(json);
}

void Ctx::fail(const std::string& what, const std::string& why) {
  ++failures;
  std::printf("  FAIL   %s: %s\n", what.c_str(), why.c_str());
  std::fflush(stdout);
  emit(Json().s("type", "check").s("impl", "parity").s("kernel", what).s("shape", "").b("ok", false).s("error", why));
}

bool Ctx::record(const std::string& kernel, const std::string& what, const std::string& shape, const Comparison& r,
                 const Tolerance& tol) {
  const std::string label = kernel + " " + what;
  if (r.ok()) {
    std::printf("  ok     %-44s %-22s max err %.3g (%s)\n", label.c_str(), shape.c_str(), r.maxErr, tol.text().c_str());
  } else {
    ++failures;
    std::printf("  WRONG  %-44s %-22s %zu of %zu out of tolerance (%s); worst at [%zu]: got %.9g, want %.9g\n",
                label.c_str(), shape.c_str(), r.bad, r.count, tol.text().c_str(), r.worst, r.gotWorst, r.wantWorst);
  }
  std::fflush(stdout);
  Json j;
  j.s("type", "check")
      .s("impl", "parity")
      .s("kernel", kernel)
      .s("output", what)
      .s("shape", shape)
      .b("ok", r.ok())
      .n("max_abs_err", r.maxErr)
      .i("bad", int64_t(r.bad))
      .i("count", int64_t(r.count))
      .s("tolerance", tol.text());
  if (!r.ok()) j.i("worst_index", int64_t(r.worst)).n("worst_got", r.gotWorst).n("worst_want", r.wantWorst);
  emit(j);
  return r.ok();
}

void Ctx::flushL2() {
  flushKernel_(Dim3{flushBlocks_}, Dim3{256}, 0, flushBuffer_.data(), flushWords_, flushSink_.data());
}

void Ctx::time(const std::string& kernel, const std::string& shape, double bytes, const std::function<void()>& spindle,
               const std::function<void()>& hand, double flops) {
  if (dry()) {
    dryNote("time", kernel, shape);
    return;
  }
  for (int i = 0; i < 3; ++i) spindle(), hand();
  cu->synchronize();  // a fault of either shows here, before any timing
  std::vector<double> ts, th, pairRatio;
  for (int r = 0; r < reps; ++r) {
    double pair[2] = {0, 0};  // spindle, hand
    for (int k = 0; k < 2; ++k) {
      const bool isSpindle = (k == 0) == (r % 2 == 0);
      // The flush kernel is queued first and runs for tens of microseconds,
      // so the launch below is queued before the device reaches the start
      // event: host launch overhead stays out of the time.
      flushL2();
      pair[isSpindle ? 0 : 1] = rt.timeMs(nullptr, isSpindle ? spindle : hand);
    }
    ts.push_back(pair[0]);
    th.push_back(pair[1]);
    pairRatio.push_back(pair[0] / pair[1]);
  }
  cu->synchronize();
  const double ms = median(ts), hms = median(th), ratio = ms / hms;
  std::printf(
      "  time   %-44s %-22s spindle %8.4f ms  hand-written %8.4f ms  ratio %.3f  (%.0f GB/s; p10-p90 %.4f-%.4f / "
      "%.4f-%.4f)\n",
      kernel.c_str(), shape.c_str(), ms, hms, ratio, bytes / (hms * 1e-3) / 1e9, quantile(ts, 0.1), quantile(ts, 0.9),
      quantile(th, 0.1), quantile(th, 0.9));
  std::fflush(stdout);
  rows.push_back({kernel, shape, ms, hms});
  Json j;
  j.s("type", "parity")
      .s("kernel", kernel)
      .s("shape", shape)
      .n("spindle_ms", ms)
      .n("hand_ms", hms)
      .n("ratio", ratio)
      .n("pair_ratio_median", median(pairRatio))
      .n("spindle_p10", quantile(ts, 0.1))
      .n("spindle_p90", quantile(ts, 0.9))
      .n("hand_p10", quantile(th, 0.1))
      .n("hand_p90", quantile(th, 0.9))
      .n("bytes", bytes)
      .n("spindle_gbps", bytes / (ms * 1e-3) / 1e9)
      .n("hand_gbps", bytes / (hms * 1e-3) / 1e9)
      .i("reps", reps);
  if (flops > 0) j.n("flops", flops).n("spindle_tflops", flops / (ms * 1e-3) / 1e12);
  emit(j);
}

}  // namespace parity
