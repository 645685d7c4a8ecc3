// What the golden kernels compute (tests/golden/kernels/*.spn), on the cpu
// target: the helpers every test file of this folder shares.
//
// Each test runs one kernel (in one of the specializations its `# gen:`
// lines name) at warp widths 32 and 64 (at once, one thread each: see
// GoldenTest), on small shapes that are not multiples of the block, with
// fresh random inputs. Outputs are poisoned (all bits set: NaN for floats)
// before the launch, so an element the kernel should write and does not
// shows, and one it should leave is checked to be still poisoned. Every
// output is compared with a reference the test computes itself, from what
// the kernel's source says it computes:
//   - integers, copies and stores of storage types: exactly;
//   - f32/f64 code made only of + - * / sqrt: exactly, by doing each
//     operation in double (exact for one operation) and rounding it to the
//     kernel's type, in the order the source writes them (the cpu target
//     compiles with -ffp-contract=off: no fused multiply-add);
//   - sums of atomics: exactly, on values chosen so that every partial sum
//     is exact whatever the order (else the properties that hold in any
//     order: maxima, bit operations, permutations);
//   - libm functions and reductions whose order is the kernel's business:
//     a tolerance of a few ulps per operation;
//   - f16/bf16/fp8 results: rounded here with an implementation of the
//     formats of its own (number_formats.h), not the prelude's.
// One Runtime per width (and per checked/unchecked) serves the whole
// executable, so each specialization compiles once per width.
#pragma once

#include <gtest/gtest.h>
#include <spindle/runtime.hpp>

#include "../runtime/test_util.h"
#include "number_formats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::cpu_golden {

// ---------------------------------------------------------------- runtimes

inline const char* targetFor(int warp) { return warp == 64 ? "cpu:warp64" : "cpu"; }

// One Runtime per (width, checked) for the executable: each specialization
// compiles once per width, whatever the test.
inline Runtime& runtime(int warp, bool checked = true) {
  static std::mutex mu;
  static std::map<std::pair<int, bool>, std::unique_ptr<Runtime>> runtimes;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = runtimes[{warp, checked}];
  if (!slot) {
    RuntimeOptions o;
    o.backend = BackendKind::Cpu;
    o.target = targetFor(warp);
    o.diskCache = false;
    o.checked = checked;
    slot = std::make_unique<Runtime>(o);
  }
  return *slot;
}

inline std::string goldenPath(const std::string& file) {
  return std::string(SPINDLE_SOURCE_DIR) + "/tests/golden/kernels/" + file;
}

// The module of a golden kernel file, loaded once per runtime.
inline Module& goldenModule(Runtime& rt, const std::string& file) {
  static std::mutex mu;
  static std::map<std::pair<Runtime*, std::string>, std::unique_ptr<Module>> modules;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = modules[{&rt, file}];
  if (!slot) slot = std::make_unique<Module>(rt.loadModule(goldenPath(file)));
  return *slot;
}

// The "// specialization:" line of a generated source (what the binary
// was specialized on: static dims, dtypes, layouts).
// A launch's line without its 32-bit index note: the goldens show the
// 64-bit form, and every launch of these tests fits 32-bit indices
// (tests/runtime/index32_test.cpp tests that note).
inline std::string specializationLine(const std::string& source) {
  const std::string tag = "// specialization:";
  const size_t at = source.find(tag);
  if (at == std::string::npos) return "(no specialization line)";
  const size_t end = source.find('\n', at);
  std::string line = source.substr(at, end == std::string::npos ? std::string::npos : end - at);
  const std::string index32 = ", 32-bit indices (dims, strides, extents < 2^31)";
  if (const size_t i = line.find(index32); i != std::string::npos) line.erase(i, index32.size());
  return line;
}

// The specialization line of a checked-in golden (tests/golden/expected/NAME).
inline std::string goldenSpecialization(const std::string& expectedName) {
  std::ifstream in(std::string(SPINDLE_SOURCE_DIR) + "/tests/golden/expected/" + expectedName);
  std::stringstream text;
  text << in.rdbuf();
  return specializationLine(text.str());
}

// ---------------------------------------------------------------- buffers

// A device buffer of `count` elements of T.
template <class T>
class Buffer {
 public:
  Buffer(Runtime& rt, size_t count)
      : rt_(&rt), count_(count), buf_(rt.allocate(std::max<size_t>(count, 1) * sizeof(T))) {}
  // Every bit set: NaN for floats, -1 or the largest value for integers.
  static Buffer poisoned(Runtime& rt, size_t count) {
    Buffer b(rt, count);
    std::vector<unsigned char> bytes(count * sizeof(T), 0xFF);
    rt.copyToDevice(b.buf_, bytes.data(), bytes.size());
    return b;
  }
  static Buffer of(Runtime& rt, const std::vector<T>& host) {
    Buffer b(rt, host.size());
    b.write(host);
    return b;
  }
  void write(const std::vector<T>& host) {
    EXPECT_EQ(host.size(), count_);
    rt_->copyToDevice(buf_, host.data(), std::min(host.size(), count_) * sizeof(T));
  }
  std::vector<T> read() const {
    std::vector<T> host(count_);
    rt_->copyToHost(host.data(), buf_, count_ * sizeof(T));
    return host;
  }
  // The whole buffer as a row-major tensor of this shape.
  Arg arg(std::initializer_list<int64_t> shape) const { return tensor(buf_.data(), Elem<T>::dtype, shape); }
  // A view starting `offset` elements in, with strides in elements.
  Arg view(std::initializer_list<int64_t> shape, std::initializer_list<int64_t> strides, size_t offset = 0) const {
    return tensor(static_cast<const T*>(buf_.data()) + offset, Elem<T>::dtype, shape, strides);
  }
  size_t size() const { return count_; }

 private:
  Runtime* rt_;
  size_t count_;
  DeviceBuffer buf_;
};

// The bits of a poisoned element of T.
template <class T>
T poison() {
  T v;
  std::memset(&v, 0xFF, sizeof v);
  return v;
}
template <class T>
bool isPoison(T v) {
  const T p = poison<T>();
  return std::memcmp(&v, &p, sizeof v) == 0;
}

// A scalar argument of T.
template <class T>
Arg scalarOf(double v) {
  return scalar(Elem<T>::dtype, v);
}

// ---------------------------------------------------------------- comparisons

// Collects the mismatches of one output and reports them as one failure:
// how many, and the first few with their index, got and want.
class Check {
 public:
  explicit Check(std::string what) : what_(std::move(what)) {}
  Check(const Check&) = delete;
  Check& operator=(const Check&) = delete;
  ~Check() {
    if (bad_ == 0) return;
    ADD_FAILURE() << what_ << ": " << bad_ << " of " << count_ << " values differ\n" << first_.str();
  }
  // got == want: the same number, the same sign of zero, or both NaN.
  void exact(const std::string& where, double got, double want) { note(where, got, want, 0, same(got, want)); }
  // |got - want| <= tol (infinities and NaN must match exactly).
  void near(const std::string& where, double got, double want, double tol) {
    const bool ok = std::isfinite(want) ? std::fabs(got - want) <= tol : same(got, want);
    note(where, got, want, tol, ok);
  }
  // A condition with its own message.
  void that(const std::string& where, bool ok, const std::string& message) {
    ++count_;
    if (ok) return;
    if (++bad_ <= kShown) first_ << "  [" << where << "] " << message << "\n";
  }
  int failures() const { return bad_; }

  static bool same(double got, double want) {
    if (std::isnan(want)) return std::isnan(got);
    return got == want && std::signbit(got) == std::signbit(want);
  }

 private:
  void note(const std::string& where, double got, double want, double tol, bool ok) {
    ++count_;
    if (ok) return;
    if (++bad_ > kShown) return;
    first_.precision(17);
    first_ << "  [" << where << "] got " << got << ", want " << want;
    if (tol > 0) first_ << " (tolerance " << tol << ", off by " << std::fabs(got - want) << ")";
    first_ << "\n";
  }
  static constexpr int kShown = 8;
  std::string what_;
  int count_ = 0, bad_ = 0;
  std::ostringstream first_;
};

inline std::string at(int64_t i) { return std::to_string(i); }
inline std::string at(int64_t i, int64_t j) { return std::to_string(i) + ", " + std::to_string(j); }
inline std::string at(int64_t i, int64_t j, int64_t k) {
  return std::to_string(i) + ", " + std::to_string(j) + ", " + std::to_string(k);
}

// The message of the spindle::Error an action throws (tests/runtime's).
using spindle::test::errorFrom;

// ---------------------------------------------------------------- the fixture

// What the calling thread tests with: its warp width and its random numbers.
struct WidthState {
  int warp;
  uint64_t seed;
  std::mt19937_64 rng;
};

// A test of golden kernels. Its body runs at warp widths 32 and 64 at once
// (atBothWidths), each in a thread of its own with its own seed, so the two
// widths compile and run on two cores; a failure names the width and the
// seed. SPINDLE_TEST_WARP=32 (or 64) runs one width only, and
// SPINDLE_TEST_SEED=S repeats the inputs of a failure.
class GoldenTest : public ::testing::Test {
 protected:
  void atBothWidths(const std::function<void()>& body) {
    std::vector<int> widths = {32, 64};
    if (const char* w = std::getenv("SPINDLE_TEST_WARP")) widths = {std::atoi(w)};
    std::vector<std::thread> threads;
    for (int w : widths) threads.emplace_back([w, &body] { runAt(w, body); });
    for (auto& t : threads) t.join();
  }

  int warp() const { return state().warp; }
  Runtime& rt(bool checked = true) const { return runtime(warp(), checked); }
  Kernel kernel(const std::string& file, const std::string& name, const KernelOptions& options = {},
                bool checked = true) const {
    return goldenModule(rt(checked), file).kernel(name, options);
  }

  template <class T>
  Buffer<T> upload(const std::vector<T>& host, bool checked = true) const {
    return Buffer<T>::of(rt(checked), host);
  }
  template <class T>
  Buffer<T> poisoned(size_t count, bool checked = true) const {
    return Buffer<T>::poisoned(rt(checked), count);
  }

  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(state().rng); }
  int64_t integer(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(state().rng); }
  uint64_t bits64() { return state().rng(); }
  // n values of T drawn uniformly from [lo, hi] (rounded to T).
  template <class T>
  std::vector<T> random(size_t n, double lo, double hi) {
    std::vector<T> v(n);
    for (auto& x : v) {
      if constexpr (std::is_integral_v<T>) x = T(integer(int64_t(lo), int64_t(hi)));
      else x = from<T>(uniform(lo, hi));
    }
    return v;
  }
  // n values drawn from `pool`.
  template <class T>
  std::vector<T> pick(size_t n, const std::vector<double>& pool) {
    std::vector<T> v(n);
    for (auto& x : v) x = from<T>(pool[size_t(integer(0, int64_t(pool.size()) - 1))]);
    return v;
  }

 private:
  static WidthState*& current() {
    thread_local WidthState* s = nullptr;
    return s;
  }
  static WidthState& state() {
    if (!current()) throw std::logic_error("a golden test's body runs inside atBothWidths");
    return *current();
  }
  static void runAt(int warp, const std::function<void()>& body) {
    uint64_t seed = (uint64_t(std::random_device{}()) << 32) | std::random_device{}();
    if (const char* s = std::getenv("SPINDLE_TEST_SEED")) seed = std::strtoull(s, nullptr, 0);
    WidthState st{warp, seed, std::mt19937_64(seed)};
    current() = &st;
    SCOPED_TRACE("at warp width " + std::to_string(warp) + ": SPINDLE_TEST_WARP=" + std::to_string(warp) +
                 " SPINDLE_TEST_SEED=" + std::to_string(seed) + " repeats it");
    try {
      Runtime& r = runtime(warp);
      if (r.hasDevice()) body();
      else ADD_FAILURE() << r.deviceStatus();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "threw: " << e.what();
    }
    current() = nullptr;
  }
};

}  // namespace spindle::cpu_golden
#endif  // SPINDLE_HAVE_CPU_TARGET
