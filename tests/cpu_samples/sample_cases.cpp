#include "sample_cases.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "attention_args.hpp"
#include "references.hpp"

namespace spindle::cpu_samples {

uint64_t testSeed() {
  static const uint64_t seed = [] {
    if (const char* env = std::getenv("SPINDLE_TEST_SEED")) return uint64_t(std::strtoull(env, nullptr, 0));
    std::random_device rd;
    return (uint64_t(rd()) << 32) ^ rd();
  }();
  return seed;
}

Rng rngFor(const std::string& what) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : what) h = (h ^ c) * 0x100000001b3ull;
  return Rng(testSeed() ^ h);
}

std::vector<std::string> sampleFiles() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(SPINDLE_SOURCE_DIR) + "/samples"))
    if (entry.path().extension() == ".spn") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

void parallelFor(size_t n, const std::function<void(size_t)>& fn) {
  size_t threads = std::max(1u, std::thread::hardware_concurrency());
  if (const char* env = std::getenv("SPINDLE_TEST_THREADS")) threads = std::max(1, std::atoi(env));
  threads = std::min(threads, n);
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::exception_ptr error;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

Runtime& sharedRuntime(const std::string& target) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Runtime>> runtimes;
  std::lock_guard<std::mutex> lock(mu);
  auto& rt = runtimes[target];
  if (!rt) {
    RuntimeOptions o;
    o.backend = BackendKind::Cpu;
    o.target = target;
    o.diskCache = false;
    o.checked = true;
    rt = std::make_unique<Runtime>(o);
  }
  return *rt;
}

Device& originalDevice(const std::string& sample, const std::string& target) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Device>> devices;
  std::lock_guard<std::mutex> lock(mu);
  auto& d = devices[target + "/" + sample];
  if (!d) {
    Runtime& rt = sharedRuntime(target);
    d = std::make_unique<Device>(rt, rt.loadModule(samplePath(sample)));
  }
  return *d;
}

Kernel Device::kernel(const std::string& name, const KernelOptions& given) {
  KernelOptions options = given;
  for (const auto& [c, v] : consts_) options.consts.emplace(c, v);
  std::string key = name;
  for (const auto& [c, v] : options.consts) key += "|" + c + "=" + constOverrideText(v);
  for (const auto& d : options.staticDims) key += "|static " + d;
  auto it = kernels_.find(key);
  if (it == kernels_.end()) it = kernels_.emplace(key, module_.kernel(name, options)).first;
  return it->second;
}

DeviceBuffer Device::upload(const void* data, size_t bytes) {
  DeviceBuffer d = rt_.allocate(std::max<size_t>(bytes, 1));
  rt_.copyToDevice(d, data, bytes);
  return d;
}

DeviceBuffer Device::filled(size_t bytes, unsigned char fill) { return upload(Bytes(bytes, fill)); }

Bytes Device::download(const DeviceBuffer& d) {
  Bytes host(d.size());
  rt_.copyToHost(host.data(), d, host.size());
  return host;
}

void Checker::near(const std::string& what, const Vec& got, const Vec& want, double atol, double rtol) {
  double maxErr = 0;
  int64_t bad = 0, firstBad = -1;
  for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
    const double err = std::fabs(got[i] - want[i]);
    if (!(err <= atol + rtol * std::fabs(want[i])) && bad++ == 0) firstBad = int64_t(i);
    maxErr = std::isfinite(err) ? std::max(maxErr, err) : INFINITY;
  }
  if (got.size() != want.size()) {
    failures_.push_back(fmt::format("{}: {} values, want {}", what, got.size(), want.size()));
    return;
  }
  notes_.push_back(fmt::format("{}: max abs err {:.3g} (atol {:.3g}, rtol {:.3g})", what, maxErr, atol, rtol));
  if (bad)
    failures_.push_back(
        fmt::format("{}: {} of {} values out of tolerance; first at {}: got {:.9g}, want {:.9g} "
                    "(atol {:.3g}, rtol {:.3g})",
                    what, bad, want.size(), firstBad, got[size_t(firstBad)], want[size_t(firstBad)], atol, rtol));
}

void Checker::require(bool ok, const std::string& what) {
  if (!ok) failures_.push_back(what);
}

std::string samplePath(const std::string& name) {
  return std::string(SPINDLE_SOURCE_DIR) + "/samples/" + name + ".spn";
}

uint16_t toHalf(ScalarType t, double v) { return uint16_t(scalar(t, v).bits); }

double fromHalf(ScalarType t, uint16_t h) { return bench::halfValue(t == ScalarType::BF16, h); }

namespace {

using ST = ScalarType;

// gpu_check's tolerances. Elementwise f32: a few ulp. Reductions: growing
// with sqrt(N) (a tree or strided sum of N terms). Sums reported as values:
// with N. f16 / bf16: a few units of their roundoff.
constexpr double kElemAtol = 1e-6, kElemRtol = 1e-5;
double redTol(int64_t n) { return 1e-5 * (1.0 + std::sqrt(double(n)) / 16.0); }
double sumAtol(int64_t n) { return 1e-6 * double(n); }
constexpr double kF16Atol = 2e-3, kF16Rtol = 1e-2;
constexpr double kBF16Atol = 2e-3, kBF16Rtol = 1.6e-2;

struct Tol {
  double atol, rtol;
};
Tol storageTol(ST t) {
  if (t == ST::F16) return {kF16Atol, kF16Rtol};
  if (t == ST::BF16) return {kBF16Atol, kBF16Rtol};
  return {kElemAtol, kElemRtol};
}

size_t elemBytes(ST t) { return size_t(scalarBits(t)) / 8; }
std::string tname(ST t) { return std::string(scalarName(t)); }
double (*rounder(ST t))(double) { return t == ST::BF16 ? bench::roundBf16 : bench::roundF16; }

// Host data of one tensor: the bytes the kernel gets and their exact values.
struct Host {
  ST t = ST::F32;
  Bytes bytes;
  Vec values;
  size_t size() const { return values.size(); }
  void set(size_t i, double v) {  // v rounded to t
    if (t == ST::F32) {
      float f = float(v);
      std::memcpy(&bytes[i * 4], &f, 4);
      values[i] = f;
    } else {
      uint16_t b = toHalf(t, v);
      std::memcpy(&bytes[i * 2], &b, 2);
      values[i] = fromHalf(t, b);
    }
  }
};

Host randomHost(ST t, size_t n, Rng& rng, double lo = -1, double hi = 1) {
  Host h{t, Bytes(n * elemBytes(t)), Vec(n)};
  for (size_t i = 0; i < n; ++i) h.set(i, rng.uniform(lo, hi));
  return h;
}

// n elements of type t from `b`, starting at element `first`.
Vec decode(ST t, const Bytes& b, size_t first, size_t n) {
  Vec out(n);
  const unsigned char* p = b.data() + first * elemBytes(t);
  if ((first + n) * elemBytes(t) > b.size()) throw std::logic_error("decode past the buffer");
  for (size_t i = 0; i < n; ++i) {
    switch (t) {
      case ST::F32: {
        float f;
        std::memcpy(&f, p + 4 * i, 4);
        out[i] = f;
        break;
      }
      case ST::F16:
      case ST::BF16: {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        out[i] = fromHalf(t, h);
        break;
      }
      case ST::I32: {
        int32_t v;
        std::memcpy(&v, p + 4 * i, 4);
        out[i] = v;
        break;
      }
      case ST::I8: out[i] = double(int8_t(p[i])); break;
      case ST::F8E4M3: out[i] = bench::fromF8e4m3(p[i]); break;
      default: throw std::logic_error("decode: unhandled dtype");
    }
  }
  return out;
}

const void* at(const DeviceBuffer& d, size_t byteOffset) { return static_cast<const char*>(d.data()) + byteOffset; }

// Guard bytes on both sides of an in-place buffer: `bytes` of `fill` around `body`.
Bytes guarded(const Bytes& body, size_t guard, unsigned char fill) {
  Bytes g(body.size() + 2 * guard, fill);
  std::copy(body.begin(), body.end(), g.begin() + long(guard));
  return g;
}
bool guardsIntact(const Bytes& b, size_t guard, unsigned char fill) {
  return std::all_of(b.begin(), b.begin() + long(guard), [&](unsigned char v) { return v == fill; }) &&
         std::all_of(b.end() - long(guard), b.end(), [&](unsigned char v) { return v == fill; });
}

std::string shape(std::initializer_list<int64_t> dims) {
  std::string s;
  for (int64_t d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

KernelOptions staticDims(std::vector<std::string> dims) {
  KernelOptions o;
  o.staticDims = std::move(dims);
  return o;
}

// ---------------------------------------------------------------- axpy

// T = f32, f16, bf16 at a length with a partial last run (4099), one of
// whole runs only (1000: also a multiple of 8, so the binary with that
// divisibility fact), and one shorter than a run (3); f32 with N static;
// f16 views 2 bytes past their allocations (not 16-byte aligned: the binary
// without vector runs), the element before them untouched.
std::vector<Case> axpyCases(Rng& rng) {
  struct V {
    ST t;
    int64_t n;
    bool staticN;
    size_t offset;  // elements between the allocation and the views
  };
  std::vector<V> vs;
  for (ST t : {ST::F32, ST::F16, ST::BF16})
    for (int64_t n : {4099, 1000, 3}) vs.push_back({t, n, false, 0});
  vs.push_back({ST::F32, 4099, true, 0});
  vs.push_back({ST::F16, 1001, false, 1});
  std::vector<Case> out;
  for (V v : vs) {
    auto x = std::make_shared<Host>(randomHost(v.t, size_t(v.n) + v.offset, rng));
    auto y = std::make_shared<Host>(randomHost(v.t, size_t(v.n) + v.offset, rng));
    Case c;
    c.label = tname(v.t) + " " + std::to_string(v.n) + (v.staticN ? " static N" : "") +
              (v.offset ? " views 2 bytes past the allocation" : "");
    c.mutate = v.t == ST::F32 && !v.staticN;
    c.run = [v, x, y](Device& d) {
      Kernel k = d.kernel("axpy", v.staticN ? staticDims({"N"}) : KernelOptions{});
      DeviceBuffer dx = d.upload(x->bytes), dy = d.upload(y->bytes);
      const size_t off = v.offset * elemBytes(v.t);
      k.launch(nullptr, {tensor(at(dx, off), v.t, {v.n}), tensor(at(dy, off), v.t, {v.n}), scalar(0.75f)});
      return std::vector<Bytes>{d.download(dy)};
    };
    c.check = [v, x, y](const std::vector<Bytes>& out, Checker& ch) {
      Vec xs(x->values.begin() + long(v.offset), x->values.end()),
          ys(y->values.begin() + long(v.offset), y->values.end());
      Tol tol = storageTol(v.t);
      ch.near("y", decode(v.t, out[0], v.offset, size_t(v.n)), bench::refAxpy(xs, ys, 0.75), tol.atol, tol.rtol);
      if (v.offset)
        ch.require(decode(v.t, out[0], 0, v.offset) == Vec(y->values.begin(), y->values.begin() + long(v.offset)),
                   "y: the element before the view was written");
    };
    out.push_back(std::move(c));
  }
  return out;
}

// ---------------------------------------------------------------- row-wise f32 samples

// Rows of 1000 columns (not a multiple of the block; a multiple of 4 and 8,
// so every run of a row is whole) and of 8229 (a partial last run); the
// samples indexed in runs also get rows shorter than one run (a partial run
// at column 0).
const std::pair<int64_t, int64_t> kRowShapes[] = {{7, 1000}, {3, 8229}};

std::vector<Case> softmaxCases(Rng& rng) {
  std::vector<Case> out;
  for (auto [M, N] : kRowShapes) {
    auto x = std::make_shared<Host>(randomHost(ST::F32, size_t(M * N), rng, -4, 4));
    Case c;
    c.label = shape({M, N});
    c.mutate = true;
    c.run = [M, N, x](Device& d) {
      DeviceBuffer dx = d.upload(x->bytes), dy = d.filled(size_t(M * N) * 4);
      d.kernel("softmax").launch(nullptr, {tensor(dx.data(), ST::F32, {M, N}), tensor(dy.data(), ST::F32, {M, N})});
      return std::vector<Bytes>{d.download(dy)};
    };
    c.check = [M, N, x](const std::vector<Bytes>& out, Checker& ch) {
      ch.near("y", decode(ST::F32, out[0], 0, size_t(M * N)), bench::refSoftmax(x->values, M, N), 1e-9, redTol(N));
    };
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<Case> layernormCases(Rng& rng) {
  std::vector<Case> out;
  for (auto [M, N] : kRowShapes) {
    auto x = std::make_shared<Host>(randomHost(ST::F32, size_t(M * N), rng, -2, 3));
    auto w = std::make_shared<Host>(randomHost(ST::F32, size_t(N), rng));
    auto b = std::make_shared<Host>(randomHost(ST::F32, size_t(N), rng));
    Case c;
    c.label = shape({M, N});
    c.mutate = true;
    c.run = [M, N, x, w, b](Device& d) {
      DeviceBuffer dx = d.upload(x->bytes), dw = d.upload(w->bytes), db = d.upload(b->bytes);
      DeviceBuffer dy = d.filled(size_t(M * N) * 4);
      d.kernel("layernorm")
          .launch(nullptr, {tensor(dx.data(), ST::F32, {M, N}), tensor(dw.data(), ST::F32, {N}),
                            tensor(db.data(), ST::F32, {N}), tensor(dy.data(), ST::F32, {M, N})});
      return std::vector<Bytes>{d.download(dy)};
    };
    c.check = [M, N, x, w, b](const std::vector<Bytes>& out, Checker& ch) {
      ch.near("y", decode(ST::F32, out[0], 0, size_t(M * N)),
              bench::refLayernorm(x->values, w->values, b->values, M, N, 1e-5), redTol(N), redTol(N));
    };
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<Case> rmsnormCases(Rng& rng) {
  std::vector<Case> out;
  for (auto [M, N] : std::vector<std::pair<int64_t, int64_t>>{kRowShapes[0], kRowShapes[1], {3, 5}}) {
    auto x = std::make_shared<Host>(randomHost(ST::F16, size_t(M * N), rng, -3, 3));
    auto w = std::make_shared<Host>(randomHost(ST::F16, size_t(N), rng, 0.5, 1.5));
    Case c;
    c.label = shape({M, N});
    c.mutate = true;
    c.run = [M, N, x, w](Device& d) {
      DeviceBuffer dx = d.upload(x->bytes), dw = d.upload(w->bytes), dy = d.filled(size_t(M * N) * 2);
      d.kernel("rmsnorm_f16")
          .launch(nullptr, {tensor(dx.data(), ST::F16, {M, N}), tensor(dw.data(), ST::F16, {N}),
                            tensor(dy.data(), ST::F16, {M, N})});
      return std::vector<Bytes>{d.download(dy)};
    };
    c.check = [M, N, x, w](const std::vector<Bytes>& out, Checker& ch) {
      ch.near("y", decode(ST::F16, out[0], 0, size_t(M * N)), bench::refRmsnorm(x->values, w->values, M, N, 1e-6),
              kF16Atol, kF16Rtol);
    };
    out.push_back(std::move(c));
  }
  return out;
}

// Dynamic N (and N static, one shape).
std::vector<Case> biasGeluCases(Rng& rng) {
  std::vector<Case> out;
  struct V {
    int64_t M, N;
    bool staticN;
  };
  for (V v : {V{7, 1000, false}, V{3, 8229, false}, V{5, 777, true}}) {
    auto x = std::make_shared<Host>(randomHost(ST::F32, size_t(v.M * v.N), rng, -3, 3));
    auto bias = std::make_shared<Host>(randomHost(ST::F32, size_t(v.N), rng));
    Case c;
    c.label = shape({v.M, v.N}) + (v.staticN ? " static N" : "");
    c.mutate = !v.staticN;
    c.run = [v, x, bias](Device& d) {
      DeviceBuffer dx = d.upload(x->bytes), db = d.upload(bias->bytes);
      DeviceBuffer dy = d.filled(size_t(v.M * v.N) * 4), ds = d.filled(size_t(v.M) * 4);
      d.kernel("bias_gelu", v.staticN ? staticDims({"N"}) : KernelOptions{})
          .launch(nullptr, {tensor(dx.data(), ST::F32, {v.M, v.N}), tensor(db.data(), ST::F32, {v.N}),
                            tensor(dy.data(), ST::F32, {v.M, v.N}), tensor(ds.data(), ST::F32, {v.M})});
      return std::vector<Bytes>{d.download(dy), d.download(ds)};
    };
    c.check = [v, x, bias](const std::vector<Bytes>& out, Checker& ch) {
      Vec y, rowsum;
      bench::refBiasGelu(x->values, bias->values, v.M, v.N, y, rowsum);
      ch.near("y", decode(ST::F32, out[0], 0, size_t(v.M * v.N)), y, kElemAtol, kElemRtol);
      ch.near("rowsum", decode(ST::F32, out[1], 0, size_t(v.M)), rowsum, sumAtol(v.N), 1e-5);
    };
    out.push_back(std::move(c));
  }
  return out;
}

// Rows of 777 (the unrolled loop stops short and a tail loop finishes the
// row), of 4096 (the unrolled loop reaches the last column: no tail) and of
// 50 (the tail loop only); the last block has warps past M. And N static.
std::vector<Case> rowNormsCases(Rng& rng) {
  std::vector<Case> out;
  struct V {
    int64_t M, N;
    bool staticN;
  };
  for (V v : {V{41, 777, false}, V{9, 4096, false}, V{6, 50, false}, V{10, 300, true}}) {
    auto x = std::make_shared<Host>(randomHost(ST::F32, size_t(v.M * v.N), rng));
    Case c;
    c.label = shape({v.M, v.N}) + (v.staticN ? " static N" : "");
    c.mutate = !v.staticN;
    c.run = [v, x](Device& d) {
      DeviceBuffer dx = d.upload(x->bytes), da = d.filled(size_t(v.M) * 4), dl = d.filled(size_t(v.M) * 4);
      d.kernel("row_norms", v.staticN ? staticDims({"N"}) : KernelOptions{})
          .launch(nullptr, {tensor(dx.data(), ST::F32, {v.M, v.N}), tensor(da.data(), ST::F32, {v.M}),
                            tensor(dl.data(), ST::F32, {v.M})});
      return std::vector<Bytes>{d.download(da), d.download(dl)};
    };
    c.check = [v, x](const std::vector<Bytes>& out, Checker& ch) {
      Vec amax, l2;
      bench::refRowNorms(x->values, v.M, v.N, amax, l2);
      ch.near("amax", decode(ST::F32, out[0], 0, size_t(v.M)), amax, 0, 0);
      ch.near("l2", decode(ST::F32, out[1], 0, size_t(v.M)), l2, redTol(v.N), redTol(v.N));
    };
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<Case> scanCases(Rng& rng) {
  std::vector<Case> out;
  for (auto [M, N] : std::vector<std::pair<int64_t, int64_t>>{kRowShapes[0], kRowShapes[1], {2, 3}}) {
    auto x = std::make_shared<Host>(randomHost(ST::F32, size_t(M * N), rng));
    Case c;
    c.label = shape({M, N});
    c.mutate = true;
    c.run = [M, N, x](Device& d) {
      DeviceBuffer dx = d.upload(x->bytes), dy = d.filled(size_t(M * N) * 4);
      d.kernel("scan").launch(nullptr, {tensor(dx.data(), ST::F32, {M, N}), tensor(dy.data(), ST::F32, {M, N})});
      return std::vector<Bytes>{d.download(dy)};
    };
    c.check = [M, N, x](const std::vector<Bytes>& out, Checker& ch) {
      ch.near("y", decode(ST::F32, out[0], 0, size_t(M * N)), bench::refScan(x->values, M, N), sumAtol(N), 1e-5);
    };
    out.push_back(std::move(c));
  }
  return out;
}

// ---------------------------------------------------------------- 2-D samples

// Tiles of 64 cut at both edges; and M, N static.
std::vector<Case> transposeCases(Rng& rng) {
  std::vector<Case> out;
  struct V {
    int64_t M, N;
    bool staticDims;
  };
  for (V v : {V{100, 77, false}, V{33, 130, false}, V{65, 63, true}}) {
    auto x = std::make_shared<Host>(randomHost(ST::F32, size_t(v.M * v.N), rng));
    Case c;
    c.label = shape({v.M, v.N}) + (v.staticDims ? " static M, N" : "");
    c.mutate = !v.staticDims;
    c.run = [v, x](Device& d) {
      DeviceBuffer dx = d.upload(x->bytes), dy = d.filled(size_t(v.M * v.N) * 4);
      d.kernel("transpose", v.staticDims ? staticDims({"M", "N"}) : KernelOptions{})
          .launch(nullptr, {tensor(dx.data(), ST::F32, {v.M, v.N}), tensor(dy.data(), ST::F32, {v.N, v.M})});
      return std::vector<Bytes>{d.download(dy)};
    };
    c.check = [v, x](const std::vector<Bytes>& out, Checker& ch) {
      ch.near("y", decode(ST::F32, out[0], 0, size_t(v.M * v.N)), bench::refTranspose(x->values, v.M, v.N), 0, 0);
    };
    out.push_back(std::move(c));
  }
  return out;
}

// x a transposed view of a [N, M] matrix (strides 1, M), every other column
// of a [M, 2N + 1] matrix (strides 2N + 1, 2), and a contiguous one (the
// runtime's contiguous specialization; with N = 128 also aligned and
// divisible, so its runs are vector accesses); and 3 columns, fewer than a
// run.
std::vector<Case> scaleStridedCases(Rng& rng) {
  std::vector<Case> out;
  struct V {
    const char* what;
    int64_t M, N;
    float alpha;
  };
  for (V v : {V{"transposed", 100, 77, 1.5f}, V{"sliced", 37, 1001, -0.5f}, V{"contiguous", 33, 128, 2.0f},
              V{"sliced", 9, 3, 0.25f}}) {
    const std::string what = v.what;
    int64_t s0 = 0, s1 = 0, baseElems = 0;
    if (what == "transposed") s0 = 1, s1 = v.M, baseElems = v.M * v.N;
    else if (what == "sliced") s0 = 2 * v.N + 1, s1 = 2, baseElems = v.M * s0;
    else s0 = v.N, s1 = 1, baseElems = v.M * v.N;
    auto base = std::make_shared<Host>(randomHost(ST::F32, size_t(baseElems), rng));
    Case c;
    c.label = what + " " + shape({v.M, v.N});
    c.mutate = true;
    c.run = [v, s0, s1, base](Device& d) {
      DeviceBuffer db = d.upload(base->bytes), dy = d.filled(size_t(v.M * v.N) * 4);
      d.kernel("scale_strided")
          .launch(nullptr, {tensor(db.data(), ST::F32, {v.M, v.N}, {s0, s1}), tensor(dy.data(), ST::F32, {v.M, v.N}),
                            scalar(v.alpha)});
      return std::vector<Bytes>{d.download(dy)};
    };
    c.check = [v, s0, s1, base](const std::vector<Bytes>& out, Checker& ch) {
      ch.near("y", decode(ST::F32, out[0], 0, size_t(v.M * v.N)),
              bench::refScaleStrided(base->values, v.M, v.N, s0, s1, double(v.alpha)), kElemAtol, kElemRtol);
    };
    out.push_back(std::move(c));
  }
  return out;
}

// K static: a multiple of the slab (40) and not (37); M and N cut the
// 128 x 128 tiles, or are whole tiles (256 x 128: the exact-grid binary,
// which tests no bounds at all).
std::vector<Case> matmulCases(Rng& rng) {
  std::vector<Case> out;
  struct V {
    int64_t M, N, K;
  };
  for (V v : {V{131, 67, 40}, V{100, 200, 37}, V{256, 128, 40}}) {
    auto A = std::make_shared<Host>(randomHost(ST::F32, size_t(v.M * v.K), rng));
    auto B = std::make_shared<Host>(randomHost(ST::F32, size_t(v.K * v.N), rng));
    Case c;
    c.label = shape({v.M, v.N, v.K});
    c.mutate = true;
    c.run = [v, A, B](Device& d) {
      DeviceBuffer dA = d.upload(A->bytes), dB = d.upload(B->bytes), dC = d.filled(size_t(v.M * v.N) * 4);
      d.kernel("matmul").launch(nullptr,
                                {tensor(dA.data(), ST::F32, {v.M, v.K}), tensor(dB.data(), ST::F32, {v.K, v.N}),
                                 tensor(dC.data(), ST::F32, {v.M, v.N})});
      return std::vector<Bytes>{d.download(dC)};
    };
    c.check = [v, A, B](const std::vector<Bytes>& out, Checker& ch) {
      ch.near("C", decode(ST::F32, out[0], 0, size_t(v.M * v.N)), bench::refMatmul(A->values, B->values, v.M, v.N, v.K),
              1e-6 * double(v.K), 1e-5);
    };
    out.push_back(std::move(c));
  }
  return out;
}

// ---------------------------------------------------------------- gemm

// The matrix API's sample: T = f16 and bf16 inputs, C in f32 (and one case
// each in f16 and bf16), at shapes that cut the 128 x 128 tile, the 32-deep
// slab and the 16 x 16 tiles everywhere (37x53x29: every dim odd), one of
// whole tiles (128x256x64: the exact grid, no bounds test in the epilogue;
// the cpu target does not tune, so the default 128 x 256 config runs) and one of several blocks and slabs
// (150x260x100), and one of many slabs through the pipeline's stages with
// rows that are not 16-byte aligned (130x136x333). The products of f16/bf16 values are exact in f32, so the
// only error is the f32 sum's: |got - want| <= 1e-6 K + 1e-5 |want| with
// inputs in [-1, 1] (the fp32 matmul's bound); an f16/bf16 C adds its
// rounding (storageTol).
std::vector<Case> gemmCases(Rng& rng) {
  struct V {
    ST t, out;
    int64_t M, N, K;
  };
  std::vector<V> vs;
  for (ST t : {ST::F16, ST::BF16}) {
    vs.push_back({t, ST::F32, 37, 53, 29});
    vs.push_back({t, ST::F32, 128, 256, 64});
    vs.push_back({t, ST::F32, 150, 260, 100});
    vs.push_back({t, ST::F32, 130, 136, 333});  // 11 slabs through the stages, an odd K
    vs.push_back({t, t, 37, 53, 29});
  }
  std::vector<Case> out;
  for (V v : vs) {
    auto A = std::make_shared<Host>(randomHost(v.t, size_t(v.M * v.K), rng));
    auto B = std::make_shared<Host>(randomHost(v.t, size_t(v.K * v.N), rng));
    Case c;
    c.label = tname(v.t) + " -> " + tname(v.out) + " " + shape({v.M, v.N, v.K});
    c.mutate = v.t == ST::F16 && v.out == ST::F32 && v.M == 37;
    c.run = [v, A, B](Device& d) {
      DeviceBuffer dA = d.upload(A->bytes), dB = d.upload(B->bytes);
      DeviceBuffer dC = d.filled(size_t(v.M * v.N) * elemBytes(v.out));
      d.kernel("gemm").launch(nullptr, {tensor(dA.data(), v.t, {v.M, v.K}), tensor(dB.data(), v.t, {v.K, v.N}),
                                        tensor(dC.data(), v.out, {v.M, v.N})});
      return std::vector<Bytes>{d.download(dC)};
    };
    c.check = [v, A, B](const std::vector<Bytes>& out, Checker& ch) {
      const Vec want = bench::refMatmul(A->values, B->values, v.M, v.N, v.K);
      const Vec got = decode(v.out, out[0], 0, size_t(v.M * v.N));
      if (v.out == ST::F32) ch.near("C", got, want, 1e-6 * double(v.K), 1e-5);
      else ch.near("C", got, want, storageTol(v.out).atol + 1e-6 * double(v.K), storageTol(v.out).rtol);
    };
    out.push_back(std::move(c));
  }
  return out;
}

// ---------------------------------------------------------------- gemm_dot, gemm_ws

// The tile-level dot's samples (the cpu target runs its warp-level path,
// with the swizzled buffers and the pipeline as written; gemm_ws's tile
// copies are element copies, its phase barriers fibers that wait): f16 and
// bf16, shapes that cut the tile, the slab and the 16 x 16 tiles everywhere
// (37x53x29), one of whole tiles (256x128x128), one of several blocks and
// slabs through the stages with rows that are not 16-byte aligned
// (300x140x333: gemm_ws's persistent blocks take several tiles each, its
// two consumer groups both), f16 output, and the epilogue's bias + tanh
// GELU, once over 12 tiles (one block under SampleSchedules: each group
// passes its two bias buffers three times). The bound is gemm's, gemm_ex's
// with GELU (its slope is below 1.2).
std::vector<Case> dotGemmCases(Rng& rng, const char* kernel) {
  struct V {
    ST t, out;
    int64_t M, N, K;
    bool biasGelu;
  };
  const std::vector<V> vs = {{ST::F16, ST::F32, 37, 53, 29, false},    {ST::BF16, ST::F32, 256, 128, 128, false},
                             {ST::F16, ST::F32, 300, 140, 333, false}, {ST::BF16, ST::F32, 37, 53, 29, true},
                             {ST::F16, ST::F16, 100, 130, 70, true},   {ST::BF16, ST::BF16, 260, 390, 40, true}};
  std::vector<Case> out;
  for (V v : vs) {
    auto A = std::make_shared<Host>(randomHost(v.t, size_t(v.M * v.K), rng));
    auto B = std::make_shared<Host>(randomHost(v.t, size_t(v.K * v.N), rng));
    auto bias = std::make_shared<Host>(randomHost(v.t, size_t(v.N), rng));
    Case c;
    c.label =
        tname(v.t) + " -> " + tname(v.out) + " " + shape({v.M, v.N, v.K}) + (v.biasGelu ? " +bias gelu_tanh" : "");
    c.mutate = v.biasGelu && v.out == ST::F32;  // the one index it writes itself: bias[col]
    c.run = [v, A, B, bias, kernel](Device& d) {
      KernelOptions o;
      o.consts = {{"ACT", ConstOverride::ofFunction(v.biasGelu ? "gelu_tanh" : "identity")}};
      DeviceBuffer dA = d.upload(A->bytes), dB = d.upload(B->bytes), dBias = d.upload(bias->bytes);
      DeviceBuffer dC = d.filled(size_t(v.M * v.N) * elemBytes(v.out));
      d.kernel(kernel, o).launch(
          nullptr, {tensor(dA.data(), v.t, {v.M, v.K}), tensor(dB.data(), v.t, {v.K, v.N}),
                    v.biasGelu ? tensor(dBias.data(), v.t, {v.N}) : none(), tensor(dC.data(), v.out, {v.M, v.N})});
      return std::vector<Bytes>{d.download(dC)};
    };
    c.check = [v, A, B, bias](const std::vector<Bytes>& out, Checker& ch) {
      Vec want = bench::refMatmul(A->values, B->values, v.M, v.N, v.K);
      if (v.biasGelu)
        for (size_t i = 0; i < want.size(); ++i) want[i] = bench::actGeluTanh(want[i] + bias->values[i % size_t(v.N)]);
      const Vec got = decode(v.out, out[0], 0, size_t(v.M * v.N));
      const double atol = (v.biasGelu ? 1.2e-6 : 1e-6) * double(v.K) + (v.biasGelu ? 1e-6 : 0.0);
      const double rtol = v.biasGelu ? 2e-5 : 1e-5;
      if (v.out == ST::F32) ch.near("C", got, want, atol, rtol);
      else ch.near("C", got, want, storageTol(v.out).atol + atol, storageTol(v.out).rtol);
    };
    out.push_back(std::move(c));
  }
  return out;
}
std::vector<Case> gemmDotCases(Rng& rng) { return dotGemmCases(rng, "gemm_dot"); }
std::vector<Case> gemmWsCases(Rng& rng) { return dotGemmCases(rng, "gemm_ws"); }

// ---------------------------------------------------------------- attention

// Flash attention: f16 and bf16, head dims 64 and 128, causal and not,
// grouped-query (HKV < HQ) and not, sequence lengths that cut the 64-query
// block, the K/V tile (64 keys at warp 32, 32 at warp 64) and the 16 x 16
// tiles (33, 77, 130: odd), one of whole tiles (128), and two batches.
// Inputs in [-1, 1], scale 2 / sqrt(D) (sharper rows than 1 / sqrt(D)),
// and in two cases -1 / sqrt(D) and 0 (attention_dot takes the row maxima
// of unscaled scores and negates Q for a negative scale; 0 is a uniform
// average).
// The bound: the kernel rounds P in [0, 1] to T before P V (as
// FlashAttention does) and O to T; with |V| <= 1 that is at most u |O| +
// u (u = 2^-11 for f16, 2^-8 for bf16, the unit roundoff), and the f32
// sums and exp2 add ~1e-6: |got - want| <= 1.5 u + 1e-5 + 1.5 u |want|.
// L (f32) only carries the f32 errors: 1e-4 + 1e-5 |want|.
std::vector<Case> attentionCasesOf(const char* kernel, Rng& rng) {
  struct V {
    ST t;
    int64_t B, HQ, HKV, S, D;
    bool causal;
    double scaleTimesRootD = 2;
  };
  const std::vector<V> vs = {
      {ST::F16, 1, 2, 2, 77, 64, false},       {ST::F16, 1, 4, 2, 77, 64, true},
      {ST::BF16, 1, 2, 1, 130, 128, true},     {ST::BF16, 1, 2, 2, 33, 128, false},
      {ST::F16, 1, 2, 1, 128, 128, true},      {ST::BF16, 2, 2, 1, 100, 64, false},
      {ST::F16, 1, 4, 2, 100, 64, true, -1.0}, {ST::BF16, 1, 2, 2, 70, 128, false, 0.0},
  };
  // Q, K, V, O per head ([B * H, S, D], S a dim) in attention_dot, as 2-D
  // rows ([B * H * S, D], S a scalar) in attention.
  const bool perHead = std::string(kernel) == "attention_dot";
  std::vector<Case> out;
  for (V v : vs) {
    const size_t nq = size_t(v.B * v.HQ * v.S), nk = size_t(v.B * v.HKV * v.S);
    auto Q = std::make_shared<Host>(randomHost(v.t, nq * size_t(v.D), rng));
    auto K = std::make_shared<Host>(randomHost(v.t, nk * size_t(v.D), rng));
    auto Vv = std::make_shared<Host>(randomHost(v.t, nk * size_t(v.D), rng));
    const double scale = v.scaleTimesRootD / std::sqrt(double(v.D));
    Case c;
    c.label = tname(v.t) + " B" + std::to_string(v.B) + " HQ" + std::to_string(v.HQ) + " HKV" + std::to_string(v.HKV) +
              " S" + std::to_string(v.S) + " D" + std::to_string(v.D) + (v.causal ? " causal" : "") +
              (v.scaleTimesRootD != 2 ? " scale " + std::to_string(v.scaleTimesRootD) + "/sqrt(D)" : "");
    c.mutate = v.t == ST::F16 && v.D == 64 && v.causal && v.scaleTimesRootD == 2;
    c.run = [kernel, perHead, v, Q, K, Vv, nq, scale](Device& d) {
      DeviceBuffer dQ = d.upload(Q->bytes), dK = d.upload(K->bytes), dV = d.upload(Vv->bytes);
      DeviceBuffer dO = d.filled(nq * size_t(v.D) * elemBytes(v.t));
      DeviceBuffer dL = d.filled(nq * 4);
      const std::vector<spindle::Arg> args =
          bench::attentionArgs(perHead, {v.B, v.HQ, v.HKV, v.S, v.D, v.causal, scale}, v.t, dQ.data(), dK.data(),
                               dV.data(), dO.data(), dL.data());
      d.kernel(kernel).launch(nullptr, args.data(), args.size());
      return std::vector<Bytes>{d.download(dO), d.download(dL)};
    };
    c.check = [v, Q, K, Vv, nq, scale](const std::vector<Bytes>& out, Checker& ch) {
      Vec O, L;
      bench::refAttention(Q->values, K->values, Vv->values, v.B, v.HQ, v.HKV, v.S, v.D, v.causal, scale, O, L);
      const double u = v.t == ST::F16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);
      ch.near("O", decode(v.t, out[0], 0, nq * size_t(v.D)), O, 1.5 * u + 1e-5, 1.5 * u);
      ch.near("L", decode(ST::F32, out[1], 0, nq), L, 1e-4, 1e-5);
    };
    out.push_back(std::move(c));
  }
  return out;
}
std::vector<Case> attentionCases(Rng& rng) { return attentionCasesOf("attention", rng); }

// The same cases through the tile-level dot's form (samples/attention_dot.spn:
// the warp-level path on the cpu target, with its swizzled K and V).
std::vector<Case> attentionDotCases(Rng& rng) { return attentionCasesOf("attention_dot", rng); }

// ---------------------------------------------------------------- gemm_ex

// gemm_ex's options on gemm's pipeline: each layout of A and B (row-major,
// or stored transposed: At is K x M, Bt N x K), batches (NB > 1: the grid's
// third axis, copy_async's batch index), bias + tanh GELU (ACT bound per
// kernel handle), and C in f32, f16 and bf16. The logical A (M x K) and B
// (K x N) of each batch are drawn, then stored in the layout under test;
// the reference multiplies the logical matrices in double (bench::
// refMatmul), adds the bias and applies the activation. Shapes: 37x53x29
// (every dim odd, so no stored row of any layout is 16-byte aligned, and
// every tile and slab is cut), 130x136x333 (11 slabs, K odd: a linear
// layer's odd K), 150x260x64 (several blocks, whole slabs). The bound is
// gemm's (the f32 sum's, inputs in [-1, 1]), plus the f32 activation's
// rounding (tanh-GELU's slope is below 1.2) and an f16/bf16 C's.
std::vector<Case> gemmExCases(Rng& rng) {
  struct V {
    ST t, out;
    bool ta, tb, bias, gelu;
    int64_t NB, M, N, K;
  };
  const V vs[] = {
      {ST::F16, ST::F32, false, false, true, true, 1, 37, 53, 29},      // bias + GELU, plain layouts
      {ST::F16, ST::F16, false, true, true, true, 1, 130, 136, 333},    // a linear layer: B stored N x K
      {ST::BF16, ST::F32, true, false, false, false, 2, 150, 260, 64},  // A stored K x M, batched
      {ST::BF16, ST::BF16, true, true, true, false, 3, 37, 53, 29},     // both transposed, batched, bias
      {ST::F16, ST::F32, false, false, false, false, 3, 37, 53, 29},    // batched plain GEMM
      {ST::BF16, ST::F32, false, true, false, false, 2, 37, 53, 29},    // B stored N x K, batched
  };
  std::vector<Case> out;
  for (const V& v : vs) {
    const int64_t NB = v.NB, M = v.M, N = v.N, K = v.K;
    // Logical values, then the bytes in the layout under test.
    auto A = std::make_shared<Host>(randomHost(v.t, size_t(NB * M * K), rng));
    auto B = std::make_shared<Host>(randomHost(v.t, size_t(NB * K * N), rng));
    auto bias = std::make_shared<Host>(randomHost(v.t, size_t(N), rng));
    auto stored = [&](const Host& h, int64_t R, int64_t Cn, bool transposed) {
      if (!transposed) return h.bytes;
      Bytes b(h.bytes.size());
      const size_t e = elemBytes(h.t);
      for (int64_t m = 0; m < NB; ++m)
        for (int64_t r = 0; r < R; ++r)
          for (int64_t c = 0; c < Cn; ++c)
            std::memcpy(&b[size_t((m * Cn + c) * R + r) * e], &h.bytes[size_t((m * R + r) * Cn + c) * e], e);
      return b;
    };
    auto bytesA = std::make_shared<Bytes>(stored(*A, M, K, v.ta));
    auto bytesB = std::make_shared<Bytes>(stored(*B, K, N, v.tb));
    Case c;
    c.label = fmt::format("{}{} {} -> {}{}{} {}x{}", v.ta ? "At" : "A", v.tb ? "Bt" : "B", tname(v.t), tname(v.out),
                          v.bias ? " +bias" : "", v.gelu ? " gelu_tanh" : "", NB, shape({M, N, K}));
    c.mutate = v.bias && !v.ta && !v.tb;
    c.run = [v, bytesA, bytesB, bias](Device& d) {
      const int64_t NB = v.NB, M = v.M, N = v.N, K = v.K;
      KernelOptions o;
      o.consts = {{"ACT", ConstOverride::ofFunction(v.gelu ? "gelu_tanh" : "identity")}};
      DeviceBuffer dA = d.upload(*bytesA), dB = d.upload(*bytesB), dBias = d.upload(bias->bytes);
      DeviceBuffer dC = d.filled(size_t(NB * M * N) * elemBytes(v.out));
      const Arg a = v.ta ? tensor(dA.data(), v.t, {NB, K, M}) : tensor(dA.data(), v.t, {NB, M, K});
      const Arg b = v.tb ? tensor(dB.data(), v.t, {NB, N, K}) : tensor(dB.data(), v.t, {NB, K, N});
      d.kernel("gemm_ex", o)
          .launch(nullptr, {v.ta ? none() : a, v.ta ? a : none(), v.tb ? none() : b, v.tb ? b : none(),
                            v.bias ? tensor(dBias.data(), v.t, {N}) : none(), tensor(dC.data(), v.out, {NB, M, N})});
      return std::vector<Bytes>{d.download(dC)};
    };
    c.check = [v, A, B, bias](const std::vector<Bytes>& out, Checker& ch) {
      const int64_t M = v.M, N = v.N, K = v.K;
      Vec want;
      for (int64_t m = 0; m < v.NB; ++m) {
        const Vec a(A->values.begin() + m * M * K, A->values.begin() + (m + 1) * M * K);
        const Vec b(B->values.begin() + m * K * N, B->values.begin() + (m + 1) * K * N);
        Vec prod = bench::refMatmul(a, b, M, N, K);
        for (int64_t i = 0; i < M * N; ++i) {
          double x = prod[size_t(i)] + (v.bias ? bias->values[size_t(i % N)] : 0.0);
          want.push_back(v.gelu ? bench::actGeluTanh(x) : x);
        }
      }
      const Vec got = decode(v.out, out[0], 0, want.size());
      const double atol = 1.2e-6 * double(K) + 1e-6;
      if (v.out == ST::F32) ch.near("C", got, want, atol, 2e-5);
      else ch.near("C", got, want, storageTol(v.out).atol + atol, storageTol(v.out).rtol);
    };
    out.push_back(std::move(c));
  }
  return out;
}

// ---------------------------------------------------------------- histogram

// Values near bin centres (no float-vs-double disagreement about a
// boundary), one in ten outside [lo, hi), and at least one in every bin (the
// first B values, then shuffled in). Lengths: whole tiles only (16384), whole
// tiles and a tail (17387: 3 tiles, more than the cpu target's resident
// blocks on a small machine, so blocks take several), a tail only (4099,
// with more bins than threads). h starts with counts to add to.
std::vector<Case> histogramCases(Rng& rng) {
  std::vector<Case> out;
  struct V {
    int64_t n, bins;
    float lo, hi;
  };
  for (V v : {V{16384, 100, -1.0f, 1.0f}, V{17387, 256, -1.0f, 1.0f}, V{4099, 1000, -0.5f, 0.75f}}) {
    auto x = std::make_shared<Host>(Host{ST::F32, Bytes(size_t(v.n) * 4), Vec(size_t(v.n))});
    const double width = double(v.hi - v.lo) / double(v.bins);
    std::vector<double> vals(static_cast<size_t>(v.n));
    for (int64_t i = 0; i < v.n; ++i) {
      const double r = rng.uniform(0, 1);
      const double bin = i < v.bins ? double(i) : double(rng.below(uint64_t(v.bins)));
      if (i >= v.bins && r < 0.05) vals[size_t(i)] = v.lo - 0.01 - rng.uniform(0, 1);
      else if (i >= v.bins && r < 0.1) vals[size_t(i)] = v.hi + rng.uniform(0, 1);
      else vals[size_t(i)] = v.lo + width * (bin + 0.5 + rng.uniform(-0.3, 0.3));
    }
    std::shuffle(vals.begin(), vals.end(), rng.gen);
    for (size_t i = 0; i < vals.size(); ++i) x->set(i, vals[i]);
    auto h0 = std::make_shared<std::vector<int32_t>>(size_t(v.bins));
    for (auto& h : *h0) h = int32_t(rng.below(1000));
    Case c;
    c.label = shape({v.n}) + " B=" + std::to_string(v.bins);
    c.mutate = true;
    c.run = [v, x, h0](Device& d) {
      DeviceBuffer dx = d.upload(x->bytes), dh = d.upload(*h0);
      d.kernel("histogram")
          .launch(nullptr, {tensor(dx.data(), ST::F32, {v.n}), tensor(dh.data(), ST::I32, {v.bins}), scalar(v.lo),
                            scalar(v.hi)});
      return std::vector<Bytes>{d.download(dh)};
    };
    c.check = [v, x, h0](const std::vector<Bytes>& out, Checker& ch) {
      auto want = bench::refHistogram(x->values, v.bins, v.lo, v.hi, std::vector<int64_t>(h0->begin(), h0->end()));
      ch.near("h", decode(ST::I32, out[0], 0, size_t(v.bins)), Vec(want.begin(), want.end()), 0, 0);
    };
    out.push_back(std::move(c));
  }
  return out;
}

// ---------------------------------------------------------------- vLLM's kernels

// In place on x and residual, each between 16-byte guards of 0xFF bytes
// that must survive. H = 5 (less than a run), 31 (fewer threads than a warp, a partial run), 1000
// (whole runs; 125 threads: a partial last warp), 12007 (block 1024: some
// threads take two runs, then a partial run); f16 and bf16; H static once.
std::vector<Case> fusedAddRmsnormCases(Rng& rng) {
  std::vector<Case> out;
  struct V {
    ST t;
    int64_t M, H;
    bool staticH;
  };
  std::vector<V> vs;
  for (ST t : {ST::F16, ST::BF16})
    for (auto [M, H] : {std::pair<int64_t, int64_t>{5, 31}, {7, 1000}, {3, 5}, {2, 12007}})
      vs.push_back({t, M, H, false});
  vs.push_back({ST::BF16, 3, 1000, true});
  const size_t G = 16;  // guard bytes
  const float eps = 1e-6f;
  for (V v : vs) {
    const size_t n = size_t(v.M * v.H);
    auto x = std::make_shared<Host>(randomHost(v.t, n, rng, -2, 2));
    auto r = std::make_shared<Host>(randomHost(v.t, n, rng, -3, 3));
    auto w = std::make_shared<Host>(randomHost(v.t, size_t(v.H), rng, 0.5, 1.5));
    Case c;
    c.label = tname(v.t) + " " + shape({v.M, v.H}) + (v.staticH ? " static H" : "");
    c.mutate = v.t == ST::F16 && v.H != 12007;
    c.run = [v, x, r, w, G, eps](Device& d) {
      DeviceBuffer dx = d.upload(guarded(x->bytes, G, 0xFF)), dr = d.upload(guarded(r->bytes, G, 0xFF));
      DeviceBuffer dw = d.upload(w->bytes);
      d.kernel("fused_add_rmsnorm", v.staticH ? staticDims({"H"}) : KernelOptions{})
          .launch(nullptr, {tensor(at(dx, G), v.t, {v.M, v.H}), tensor(at(dr, G), v.t, {v.M, v.H}),
                            tensor(dw.data(), v.t, {v.H}), scalar(eps)});
      return std::vector<Bytes>{d.download(dx), d.download(dr)};
    };
    c.check = [v, x, r, w, G, eps](const std::vector<Bytes>& out, Checker& ch) {
      Vec wantX, wantR;
      bench::refFusedAddRmsnorm(x->values, r->values, w->values, v.M, v.H, double(eps), rounder(v.t), wantX, wantR);
      const size_t n = size_t(v.M * v.H);
      Tol tol = storageTol(v.t);
      ch.near("x", decode(v.t, out[0], G / 2, n), wantX, tol.atol, tol.rtol);
      ch.near("residual", decode(v.t, out[1], G / 2, n), wantR, tol.atol, tol.rtol);
      ch.require(guardsIntact(out[0], G, 0xFF), "x: a write outside the tensor (guard overwritten)");
      ch.require(guardsIntact(out[1], G, 0xFF), "residual: a write outside the tensor (guard overwritten)");
    };
    out.push_back(std::move(c));
  }
  return out;
}

struct Activation {
  const char* name;  // the module def bound to ACT
  double (*ref)(double);
};
const Activation kActivations[] = {
    {"silu", bench::actSilu}, {"gelu", bench::actGelu}, {"gelu_tanh", bench::actGeluTanh}};

// Each activation (ACT bound per kernel handle) in f16 and bf16. D = 1
// (one thread, a partial run only), 31 (fewer threads than a warp), 1000
// (whole runs; D % 16 = 8: the binary with that divisibility fact), 12007
// (block 1024, two runs for some threads, the last partial; bf16 silu only).
// out starts as NaN between 16-byte guards that must survive.
std::vector<Case> actAndMulCases(Rng& rng) {
  std::vector<Case> out;
  const size_t G = 16;
  for (const Activation& act : kActivations)
    for (ST t : {ST::F16, ST::BF16}) {
      std::vector<std::pair<int64_t, int64_t>> shapes = {{3, 1}, {5, 31}, {4, 1000}};
      if (t == ST::BF16 && std::string(act.name) == "silu") shapes.push_back({2, 12007});
      for (auto [M, D] : shapes) {
        auto x = std::make_shared<Host>(randomHost(t, size_t(2 * M * D), rng, -5, 5));
        Case c;
        c.label = std::string(act.name) + " " + tname(t) + " " + shape({M, D});
        c.mutate = std::string(act.name) == "silu" && t == ST::F16;
        c.run = [t, M, D, x, name = std::string(act.name), G](Device& d) {
          KernelOptions o;
          o.consts = {{"ACT", ConstOverride::ofFunction(name)}};
          DeviceBuffer dx = d.upload(x->bytes), dout = d.filled(size_t(M * D) * 2 + 2 * G);
          d.kernel("act_and_mul", o)
              .launch(nullptr, {tensor(dx.data(), t, {M, 2 * D}), tensor(at(dout, G), t, {M, D})});
          return std::vector<Bytes>{d.download(dout)};
        };
        c.check = [t, M, D, x, ref = act.ref, G](const std::vector<Bytes>& out, Checker& ch) {
          Tol tol = storageTol(t);
          ch.near("out", decode(t, out[0], G / 2, size_t(M * D)), bench::refActAndMul(x->values, M, D, ref, rounder(t)),
                  tol.atol, tol.rtol);
          ch.require(guardsIntact(out[0], G, 0xFF), "out: a write outside the tensor (guard overwritten)");
        };
        out.push_back(std::move(c));
      }
    }
  return out;
}

// Both layouts (NEOX bound per kernel handle), f16 and bf16, q and k strided
// slices of one fused qkv buffer [NT, (NH + 2 NKV) HS] between guards.
// Shapes (NT, NH, NKV, HS, ROT): a block of 8 threads (fewer than a warp)
// with partial rotary; GQA with ROT = HS; equal head counts with HS 80 and
// ROT 32 (Phi-2's). The cache has MAXPOS = 64 rows; the first two tokens
// sit at positions 63 and 0, the others anywhere. The rotated dims are
// compared with the reference, every other element must keep its bits.
std::vector<Case> rotaryCases(Rng& rng) {
  std::vector<Case> out;
  struct Shape {
    int64_t NT, NH, NKV, HS, ROT;
  };
  const size_t G = 16;
  const int64_t MAXPOS = 64;
  for (bool neox : {true, false})
    for (ST t : {ST::F16, ST::BF16})
      for (Shape s : {Shape{5, 2, 1, 16, 8}, Shape{3, 4, 2, 32, 32}, Shape{4, 3, 3, 80, 32}}) {
        const int64_t W = (s.NH + 2 * s.NKV) * s.HS;
        auto qkv = std::make_shared<Host>(randomHost(t, size_t(s.NT * W), rng, -2, 2));
        auto cache = std::make_shared<Host>(randomHost(t, size_t(MAXPOS * s.ROT), rng, -1, 1));
        auto pos = std::make_shared<std::vector<int64_t>>(size_t(s.NT));
        for (size_t i = 0; i < pos->size(); ++i) (*pos)[i] = i == 0 ? MAXPOS - 1 : i == 1 ? 0 : int64_t(rng.below(64));
        Case c;
        c.label = std::string(neox ? "neox " : "gptj ") + tname(t) + " " + shape({s.NT, s.NH, s.NKV, s.HS}) + " rot" +
                  std::to_string(s.ROT);
        c.mutate = neox && t == ST::F16;
        c.run = [neox, t, s, W, qkv, cache, pos, G, MAXPOS](Device& d) {
          KernelOptions o;
          o.consts = {{"NEOX", ConstOverride::ofInt(neox ? 1 : 0)}};
          DeviceBuffer dqkv = d.upload(guarded(qkv->bytes, G, 0xFF)), dpos = d.upload(*pos);
          DeviceBuffer dcache = d.upload(cache->bytes);
          const auto* q = static_cast<const uint16_t*>(at(dqkv, G));
          d.kernel("rotary_embedding", o)
              .launch(nullptr, {tensor(dpos.data(), ST::I64, {s.NT}), tensor(q, t, {s.NT, s.NH, s.HS}, {W, s.HS, 1}),
                                tensor(q + s.NH * s.HS, t, {s.NT, s.NKV, s.HS}, {W, s.HS, 1}),
                                tensor(dcache.data(), t, {MAXPOS, s.ROT})});
          return std::vector<Bytes>{d.download(dqkv)};
        };
        c.check = [neox, t, s, W, qkv, cache, pos, G](const std::vector<Bytes>& out, Checker& ch) {
          Vec want = qkv->values;
          bench::refRotaryEmbedding(want, *pos, cache->values, s.NT, s.NH, s.NKV, s.HS, s.ROT, neox, rounder(t));
          const Vec got = decode(t, out[0], G / 2, size_t(s.NT * W));
          Vec gotRot, wantRot, gotKept, wantKept;
          for (size_t i = 0; i < got.size(); ++i) {
            const int64_t col = int64_t(i) % W, head = col / s.HS;
            if (head < s.NH + s.NKV && col % s.HS < s.ROT) gotRot.push_back(got[i]), wantRot.push_back(want[i]);
            else gotKept.push_back(got[i]), wantKept.push_back(qkv->values[i]);
          }
          Tol tol = storageTol(t);
          ch.near("q,k", gotRot, wantRot, tol.atol, tol.rtol);
          ch.near("untouched", gotKept, wantKept, 0, 0);
          ch.require(guardsIntact(out[0], G, 0xFF), "qkv: a write outside the buffer (guard overwritten)");
        };
        out.push_back(std::move(c));
      }
  return out;
}

// f16 and bf16 into fp8 e4m3 and int8; N = 8 (one thread), 1000 (a
// partial last warp, whole runs), 4099 (a partial last run), 5 (less than a
// run). With M > 2, row
// 1 is zeros (the MIN_SCALE floor) and row 2 one outlier among small values.
// Codes and scales must match the f32 reference bit for bit; 16-byte guards
// around y survive.
std::vector<Case> quantPerTokenCases(Rng& rng) {
  std::vector<Case> out;
  const float minScale = float(1.0 / (448.0 * 512.0));
  const size_t G = 16;
  for (ST t : {ST::F16, ST::BF16})
    for (ST q : {ST::F8E4M3, ST::I8})
      for (auto [M, N] : {std::pair<int64_t, int64_t>{5, 8}, {4, 1000}, {3, 4099}, {3, 5}}) {
        auto x = std::make_shared<Host>(randomHost(t, size_t(M * N), rng, -3, 3));
        for (int64_t j = 0; j < N; ++j) {
          x->set(size_t(N + j), 0.0);
          x->set(size_t(2 * N + j), j == N / 2 ? 1000.0 : 0.01 * x->values[size_t(2 * N + j)]);
        }
        Case c;
        c.label = tname(t) + "->" + tname(q) + " " + shape({M, N});
        c.mutate = t == ST::F16 && q == ST::F8E4M3;
        c.run = [t, q, M, N, x, G](Device& d) {
          DeviceBuffer dx = d.upload(x->bytes), dy = d.filled(size_t(M * N) + 2 * G, 0xA5);
          DeviceBuffer ds = d.filled(size_t(M) * 4);
          d.kernel("quant_per_token")
              .launch(nullptr,
                      {tensor(dx.data(), t, {M, N}), tensor(at(dy, G), q, {M, N}), tensor(ds.data(), ST::F32, {M})});
          return std::vector<Bytes>{d.download(dy), d.download(ds)};
        };
        c.check = [q, M, N, x, G, minScale](const std::vector<Bytes>& out, Checker& ch) {
          std::vector<float> xf(x->values.begin(), x->values.end());  // exact: f16/bf16 values
          Vec wantY, wantScales;
          bench::refQuantPerToken(xf, M, N, q == ST::I8, minScale, wantY, wantScales);
          ch.near("y", decode(q, out[0], G, size_t(M * N)), wantY, 0, 0);
          ch.near("scales", decode(ST::F32, out[1], 0, size_t(M)), wantScales, 0, 0);
          ch.require(guardsIntact(out[0], G, 0xA5), "y: a write outside the buffer (guard overwritten)");
        };
        out.push_back(std::move(c));
      }
  return out;
}

// ---------------------------------------------------------------- adamw

// bf16 parameters and gradients with and without the f32 master copy, and
// all f32; N = 4099 (a partial last block), 512 (one whole block), 10007.
// The moments within 3e-7 relative of the f32 reference, f32 parameters and
// master copy within 1e-6; a bf16 parameter one of the two bf16 neighbours
// of p, the one llm.c's rule picks for all but 0.1% (gpu_check's bounds:
// there the device compiler may contract p's multiply-adds).
std::vector<Case> adamwCases(Rng& rng) {
  std::vector<Case> out;
  const bench::AdamwScalars s{3e-4f, 0.9f, 0.95f,      1.0f - 0.9f * 0.9f * 0.9f, 1.0f - 0.95f * 0.95f * 0.95f, 1e-8f,
                              0.1f,  0.5f, 0x5eed1234u};
  struct V {
    const char* name;
    ST t;
    bool master;
  };
  for (V var : {V{"bf16 master", ST::BF16, true}, V{"bf16", ST::BF16, false}, V{"f32", ST::F32, false}})
    for (int64_t N : {4099, 512, 10007}) {
      const size_t n = size_t(N);
      auto p = std::make_shared<Host>(randomHost(var.t, n, rng));
      auto g = std::make_shared<Host>(randomHost(var.t, n, rng));
      auto m = std::make_shared<Host>(randomHost(ST::F32, n, rng, -0.1, 0.1));
      auto vst = std::make_shared<Host>(randomHost(ST::F32, n, rng, 0, 0.01));
      auto master = std::make_shared<Host>(Host{ST::F32, Bytes(n * 4), Vec(n)});
      for (size_t i = 0; i < n; ++i)  // the master copy carries the bits bf16 dropped
        master->set(i, p->values[i] + (var.master ? rng.uniform(-1, 1) * 0.001 : 0.0));
      Case c;
      c.label = std::string(var.name) + " " + std::to_string(N);
      c.mutate = N == 4099 && (var.master || var.t == ST::F32);
      c.run = [var, N, p, g, m, vst, master, s](Device& d) {
        DeviceBuffer dp = d.upload(p->bytes), dg = d.upload(g->bytes), dm = d.upload(m->bytes);
        DeviceBuffer dv = d.upload(vst->bytes), dmaster = d.upload(master->bytes);
        d.kernel("adamw").launch(
            nullptr,
            {tensor(dp.data(), var.t, {N}), var.master ? tensor(dmaster.data(), ST::F32, {N}) : none(),
             tensor(dg.data(), var.t, {N}), tensor(dm.data(), ST::F32, {N}), tensor(dv.data(), ST::F32, {N}),
             scalar(s.lr), scalar(s.beta1), scalar(s.beta2), scalar(s.beta1Correction), scalar(s.beta2Correction),
             scalar(s.eps), scalar(s.weightDecay), scalar(s.gradScale), scalar(s.seed)});
        return std::vector<Bytes>{d.download(dp), d.download(dmaster), d.download(dm), d.download(dv)};
      };
      c.check = [var, N, p, g, m, vst, master, s](const std::vector<Bytes>& out, Checker& ch) {
        const size_t n = size_t(N);
        std::vector<float> old(n), grads(n), mm(n), vv(n), want;
        for (size_t i = 0; i < n; ++i) {
          old[i] = float(var.master ? master->values[i] : p->values[i]);
          grads[i] = float(g->values[i]), mm[i] = float(m->values[i]), vv[i] = float(vst->values[i]);
        }
        std::vector<uint16_t> rounded;
        bench::refAdamw(old, grads, mm, vv, s, 512, want, rounded);
        const Vec wantP(want.begin(), want.end());
        ch.near("m", decode(ST::F32, out[2], 0, n), Vec(mm.begin(), mm.end()), 0, 3e-7);
        ch.near("v", decode(ST::F32, out[3], 0, n), Vec(vv.begin(), vv.end()), 0, 3e-7);
        if (var.master) ch.near("master", decode(ST::F32, out[1], 0, n), wantP, 1e-9, 1e-6);
        if (var.t == ST::F32) {
          ch.near("params", decode(ST::F32, out[0], 0, n), wantP, 1e-9, 1e-6);
          return;
        }
        ch.near("params", decode(ST::BF16, out[0], 0, n), wantP, 1e-9, 1.0 / 128);
        int64_t otherChoice = 0;
        for (size_t i = 0; i < n; ++i) {
          uint16_t got;
          std::memcpy(&got, &out[0][2 * i], 2);
          otherChoice += got != rounded[i];
        }
        ch.require(double(otherChoice) <= 0.001 * double(n) + 1,
                   fmt::format("params: {} of {} rounded the other way than llm.c's rule gives for the reference's p",
                               otherChoice, n));
      };
      out.push_back(std::move(c));
    }
  return out;
}

}  // namespace

const std::vector<Sample>& samples() {
  static const std::vector<Sample> list = {
      {"act_and_mul", actAndMulCases},
      {"adamw", adamwCases},
      {"attention", attentionCases},
      {"attention_dot", attentionDotCases},
      {"axpy", axpyCases},
      {"bias_gelu", biasGeluCases},
      {"fused_add_rmsnorm", fusedAddRmsnormCases},
      {"gemm", gemmCases},
      {"gemm_dot", gemmDotCases},
      {"gemm_ex", gemmExCases},
      {"gemm_ws", gemmWsCases},
      {"histogram", histogramCases},
      {"layernorm", layernormCases},
      {"matmul", matmulCases},
      {"quant_per_token", quantPerTokenCases},
      {"rmsnorm_f16", rmsnormCases},
      {"rotary_embedding", rotaryCases},
      {"row_norms", rowNormsCases},
      {"scale_strided", scaleStridedCases},
      {"scan", scanCases},
      {"softmax", softmaxCases},
      {"transpose", transposeCases},
  };
  return list;
}

}  // namespace spindle::cpu_samples
