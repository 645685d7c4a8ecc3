// The samples' launches on the cpu target, shared by the numerical tests and
// the out-of-bounds mutants. Per sample: cases (a dtype or layout variant and
// a shape, with fresh random inputs), each able to launch itself on a module
// (the sample as checked in, or a mutant of it) and to check what came back
// against bench/references.cpp in double precision, with the tolerances
// bench/gpu_check.cpp uses for the same sample.
#pragma once

#include <spindle/runtime.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace spindle::cpu_samples {

using Bytes = std::vector<unsigned char>;
using Vec = std::vector<double>;

struct Rng {
  std::mt19937_64 gen;
  explicit Rng(uint64_t seed) : gen(seed) {}
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(gen); }
  uint64_t below(uint64_t n) { return gen() % n; }
};

// The seed of this process's random inputs: SPINDLE_TEST_SEED if set (to
// repeat a failed run), else one from std::random_device, chosen once.
uint64_t testSeed();

// Where cases run: one Runtime (one warp width) and the module under test.
// Kernel handles are kept, so each specialization compiles once per module.
class Device {
 public:
  Device(Runtime& rt, Module module) : rt_(rt), module_(std::move(module)) {}
  // Every kernel made here gets `consts` (a config of the sample's @tune,
  // say) on top of the options its case gives.
  Device(Runtime& rt, Module module, std::map<std::string, ConstOverride> consts)
      : rt_(rt), module_(std::move(module)), consts_(std::move(consts)) {}
  Runtime& runtime() const { return rt_; }
  Kernel kernel(const std::string& name, const KernelOptions& options = {});
  DeviceBuffer upload(const void* data, size_t bytes);
  template <class T>
  DeviceBuffer upload(const std::vector<T>& host) {
    return upload(host.data(), host.size() * sizeof(T));
  }
  // `bytes` bytes of `fill`: outputs start poisoned (0xFF is NaN as a float).
  DeviceBuffer filled(size_t bytes, unsigned char fill = 0xFF);
  Bytes download(const DeviceBuffer& d);

 private:
  Runtime& rt_;
  Module module_;
  std::map<std::string, ConstOverride> consts_;
  std::map<std::string, Kernel> kernels_;
};

// The comparisons of one case's outputs.
class Checker {
 public:
  // Elementwise |got - want| <= atol + rtol * |want| (false for NaN), as
  // gpu_check's check().
  void near(const std::string& what, const Vec& got, const Vec& want, double atol, double rtol);
  void require(bool ok, const std::string& what);
  const std::vector<std::string>& failures() const { return failures_; }
  // One line per comparison: its worst error against its tolerance.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  std::vector<std::string> failures_, notes_;
};

struct Case {
  std::string label;    // the variant and the shape: "f16 67x1000"
  bool mutate = false;  // the out-of-bounds mutants run this case too
  // Launches the kernel on fresh device copies of the inputs and returns the
  // bytes of every buffer the kernel writes (guards included), in order.
  std::function<std::vector<Bytes>(Device&)> run;
  std::function<void(const std::vector<Bytes>&, Checker&)> check;
};

struct Sample {
  std::string name;  // samples/<name>.spn
  std::function<std::vector<Case>(Rng&)> cases;
};

const std::vector<Sample>& samples();
// The names of samples/*.spn, sorted.
std::vector<std::string> sampleFiles();

// Calls fn(0) ... fn(n - 1) on up to SPINDLE_TEST_THREADS threads (default:
// one per core), each index once; rethrows the first exception fn threw.
void parallelFor(size_t n, const std::function<void(size_t)>& fn);

// The process's Runtime for a cpu target ("cpu" or "cpu:warp64"): checked
// builds, memory cache only. Made on first use, kept to the end.
Runtime& sharedRuntime(const std::string& target);
// The sample as checked in, on sharedRuntime(target): one Device per
// sample and width for the process, so its binaries compile once. One
// thread at a time may use a Device.
Device& originalDevice(const std::string& sample, const std::string& target);

// A stream of inputs of its own per `what` (a sample's name), so that one
// test run alone gets the inputs it gets in a run of all of them.
Rng rngFor(const std::string& what);
std::string samplePath(const std::string& name);

// f16 / bf16 bits and values.
uint16_t toHalf(ScalarType t, double v);
double fromHalf(ScalarType t, uint16_t bits);

}  // namespace spindle::cpu_samples
