// What every parity case uses: the Spindle runtime and its kernels, the
// hand-written kernels, device buffers, comparisons that print the worst
// element, and the interleaved timing with an L2 flush before each timed
// launch. Results go to stdout and, as JSON lines, to --json.
#pragma once

#include <spindle/runtime.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compare.hpp"
#include "cuda_api.hpp"
#include "handwritten.hpp"
#include "host_data.hpp"

namespace parity {

// A JSON object built field by field.
struct Json {
  std::string body;
  Json& s(const char* k, const std::string& v);
  Json& n(const char* k, double v);
  Json& i(const char* k, int64_t v);
  Json& b(const char* k, bool v);
  std::string str() const { return body + "}"; }

 private:
  Json& raw(const char* k, const std::string& v);
};

// A hand-written kernel: call it with the grid, the block, the dynamic
// shared bytes and its arguments, each of the exact type of its parameter
// (int, not int64_t, where the kernel takes int). In a dry run (no driver)
// a call does nothing.
struct HandKernel {
  const Driver* cu = nullptr;
  CUfunction fn = nullptr;
  template <class... A>
  void operator()(Dim3 grid, Dim3 block, unsigned sharedBytes, A... args) const {
    void* params[] = {static_cast<void*>(&args)..., nullptr};
    if (cu) cu->launch(fn, grid, block, sharedBytes, params);
  }
};

struct Row {  // one line of the final table
  std::string kernel, shape;
  double spindleMs, handMs;
};

// On a GPU, `rt` runs the Spindle kernels and holds the buffers (`mem` is
// `rt`) and `cu` launches the hand-written ones. A dry run (no GPU: `cu`
// null) goes through every case with `rt` a compile-only CUDA runtime, which
// binds and compiles each Spindle launch for `arch` (Kernel::compileFor)
// without running it, and `mem` the cpu target's runtime, which holds the
// buffers in host memory; the hand-written kernels are compiled, not
// launched, and nothing is compared or timed.
class Ctx {
 public:
  Ctx(spindle::Runtime& rt, spindle::Runtime& mem, const Driver* cu, const Nvrtc& nvrtc, std::string arch,
      std::string root, uint64_t seed);

  spindle::Runtime& rt;
  spindle::Runtime& mem;
  const Driver* cu;
  bool dry() const { return cu == nullptr; }
  std::string root;  // the Spindle tree: samples/ and bench/parity/kernels/ are found there
  Rng rng;
  uint64_t seed;
  int reps = 30;
  int failures = 0;
  std::FILE* json = nullptr;
  std::vector<Row> rows;

  // A kernel of a .spn under `root` ("samples/softmax.spn"), its module loaded once.
  spindle::Kernel spindle(const std::string& path, const std::string& kernel,
                          const std::map<std::string, spindle::ConstOverride>& consts = {});
  // A kernel of bench/parity/handwritten/FILE, compiled for the device with `defines`.
  HandKernel hand(const std::string& file, const std::string& kernel, const std::vector<std::string>& defines = {});
  // Launches a Spindle kernel on the default stream (a dry run: binds and
  // compiles it for the target instead).
  void launch(const spindle::Kernel& k, std::initializer_list<spindle::Arg> args) const;
  // How many blocks of `h` the device holds at once (the driver's occupancy
  // times the multiprocessors); 1 in a dry run.
  int64_t residentBlocks(const HandKernel& h, int blockSize, size_t sharedBytes) const;

  template <class T>
  spindle::DeviceBuffer upload(const std::vector<T>& host) {
    spindle::DeviceBuffer d = mem.allocate(std::max<size_t>(host.size(), 1) * sizeof(T));
    mem.copyToDevice(d, host.data(), host.size() * sizeof(T));
    return d;
  }
  // `bytes` bytes of `byte`: 0xFF is NaN for every float type (the outputs' poison).
  spindle::DeviceBuffer filled(size_t bytes, unsigned char byte = 0xFF);
  template <class T>
  std::vector<T> download(const spindle::DeviceBuffer& d, size_t count) {
    std::vector<T> host(count);
    mem.copyToHost(host.data(), d, count * sizeof(T));
    return host;
  }

  // Compares n values, got(i) against want(i) (doubles), prints one line
  // (the worst element when any is out of tolerance) and records a check.
  template <class Got, class Want>
  bool check(const std::string& kernel, const std::string& what, const std::string& shape, size_t n, Got got, Want want,
             const Tolerance& tol) {
    if (dry()) return dryNote("check", kernel + " " + what, shape);
    return record(kernel, what, shape, compare(n, got, want, tol), tol);
  }

  // Times the two launches `reps` times each, interleaved (the order
  // alternates from pair to pair), each timed launch alone between device
  // events right after an L2 flush; prints and records the medians and
  // their ratio (Spindle / hand-written).
  void time(const std::string& kernel, const std::string& shape, double bytes, const std::function<void()>& spindle,
            const std::function<void()>& hand, double flops = 0);

  void fail(const std::string& what, const std::string& why);
  void emit(const Json& j);
  void flushL2();

 private:
  bool dryNote(const char* what, const std::string& label, const std::string& shape) const;
  bool record(const std::string& kernel, const std::string& what, const std::string& shape, const Comparison& r,
              const Tolerance& tol);

  std::string arch_;
  const Nvrtc& nvrtc_;
  HandwrittenModules modules_;
  std::map<std::string, spindle::Module> spindleModules_;
  spindle::DeviceBuffer flushBuffer_, flushSink_;
  HandKernel flushKernel_;
  int flushWords_ = 0;  // float4s in flushBuffer_
  unsigned flushBlocks_ = 0;
};

// Shapes as "8192x8192".
std::string shapeText(std::initializer_list<int64_t> dims);

}  // namespace parity
