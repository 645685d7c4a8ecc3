// multi_gpu_check: one Spindle runtime launching on two GPUs from C++
// (docs/runtime.md, "Several GPUs"). The tensors are plain device pointers
// (Arg::device unset), so the runtime asks the driver where they live.
// Checks: a launch on device 1 memory runs there and is right; one binary,
// compiled once, serves both devices; tensors on two devices and a stream of
// the other device are refused before anything runs; the calling thread's
// current context is the same after every call.
//
//   multi_gpu_check [--samples DIR]
//
// Exit status: 0 every check passed, 1 a check failed, 2 fewer than two
// devices or the setup failed.
#include <spindle/runtime.hpp>

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#ifndef SPINDLE_BENCH_SAMPLES_DIR
#define SPINDLE_BENCH_SAMPLES_DIR "samples"
#endif

namespace {

// The few driver calls the check makes itself (the runtime opens libcuda on its own).
struct Cu {
  int (*init)(unsigned) = nullptr;
  int (*deviceGetCount)(int*) = nullptr;
  int (*primaryCtxRetain)(void**, int) = nullptr;
  int (*ctxGetCurrent)(void**) = nullptr;
  int (*ctxSetCurrent)(void*) = nullptr;
  int (*streamCreate)(void**, unsigned) = nullptr;
  int (*streamDestroy)(void*) = nullptr;

  bool load() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return false;
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      return fn != nullptr;
    };
    return sym(init, "cuInit") && sym(deviceGetCount, "cuDeviceGetCount") &&
           sym(primaryCtxRetain, "cuDevicePrimaryCtxRetain") && sym(ctxGetCurrent, "cuCtxGetCurrent") &&
           sym(ctxSetCurrent, "cuCtxSetCurrent") && sym(streamCreate, "cuStreamCreate") &&
           sym(streamDestroy, "cuStreamDestroy_v2");
  }
  void* current() const {
    void* c = nullptr;
    ctxGetCurrent(&c);
    return c;
  }
};

int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s  %s\n", ok ? "ok  " : "FAIL", what.c_str());
  if (!ok) ++failures;
}

// The message of the spindle::Error `f` throws, or "".
template <typename F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const spindle::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  std::string samples = SPINDLE_BENCH_SAMPLES_DIR;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--samples") == 0) samples = argv[++i];
  Cu cu;
  int count = 0;
  if (!cu.load() || cu.init(0) != 0 || cu.deviceGetCount(&count) != 0 || count < 2) {
    std::printf("multi_gpu_check: needs two CUDA devices (found %d)\n", count);
    return 2;
  }
  try {
    // The caller's context, as torch would have it: device 0's primary.
    void* ctx0 = nullptr;
    void* ctx1 = nullptr;
    cu.primaryCtxRetain(&ctx0, 0);
    cu.primaryCtxRetain(&ctx1, 1);
    cu.ctxSetCurrent(ctx0);

    spindle::RuntimeOptions o;
    o.diskCache = false;  // compiled here, counted here
    spindle::Runtime rt0(o);
    spindle::RuntimeOptions o1 = o;
    o1.device = 1;
    spindle::Runtime rt1(o1);  // for memory on device 1 (its allocate)
    check(cu.current() == ctx0, "the caller's context is unchanged by making the runtimes");
    spindle::Kernel axpy = rt0.loadModule(samples + "/axpy.spn").kernel("axpy");

    const int64_t n = (1 << 20) + 3;
    const size_t bytes = size_t(n) * sizeof(float);
    std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n), 1.0f), got(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[size_t(i)] = float(i % 7);
    spindle::DeviceBuffer x0 = rt0.allocate(bytes), y0 = rt0.allocate(bytes);
    spindle::DeviceBuffer x1 = rt1.allocate(bytes), y1 = rt1.allocate(bytes);
    rt0.copyToDevice(x0, x.data(), bytes);
    rt0.copyToDevice(y0, y.data(), bytes);
    rt1.copyToDevice(x1, x.data(), bytes);
    rt1.copyToDevice(y1, y.data(), bytes);
    check(cu.current() == ctx0, "the caller's context is unchanged by device 1's allocations and copies");
    auto args = [&](const void* px, const void* py, float a) {
      return std::vector<spindle::Arg>{spindle::tensor(px, spindle::ScalarType::F32, {n}),
                                       spindle::tensor(py, spindle::ScalarType::F32, {n}), spindle::scalar(a)};
    };
    auto correct = [&](spindle::Runtime& rt, const spindle::DeviceBuffer& buf, float a) {
      rt.synchronize(nullptr);
      rt.copyToHost(got.data(), buf, bytes);
      for (int64_t i = 0; i < n; ++i)
        if (got[size_t(i)] != a * x[size_t(i)] + 1.0f) return false;
      return true;
    };

    // 1. Device 0, then device 1: one compile, a load on each device.
    auto a0 = args(x0.data(), y0.data(), 2.0f);
    axpy.launch(nullptr, a0.data(), a0.size());
    check(correct(rt0, y0, 2.0f), "axpy on device 0 is right");
    spindle::CacheStats before = rt0.stats();
    auto a1 = args(x1.data(), y1.data(), 3.0f);
    axpy.launch(nullptr, a1.data(), a1.size());  // the default stream of device 1's context
    check(cu.current() == ctx0, "the caller's context is unchanged by a launch on device 1");
    check(correct(rt1, y1, 3.0f), "axpy on device 1 memory (the driver says where) is right");
    spindle::CacheStats after = rt0.stats();
    check(after.compiles == 1 && before.compiles == 1 && after.misses == before.misses,
          "one binary, compiled once, launched on both devices (compiles " + std::to_string(after.compiles) + ")");

    // 2. Tensors on two devices: refused, nothing runs.
    rt1.copyToDevice(y1, y.data(), bytes);
    auto mixed = args(x0.data(), y1.data(), 5.0f);
    std::string e = errorOf([&] { axpy.launch(nullptr, mixed.data(), mixed.size()); });
    check(e.find("tensor arguments on different devices (device 0: x; device 1: y)") != std::string::npos,
          "mixed devices refused: " + e);
    check(correct(rt1, y1, 0.0f), "and nothing ran");

    // 3. A stream of device 1 for tensors on device 0: refused; for device 1's: used.
    void* s1 = nullptr;
    cu.ctxSetCurrent(ctx1);
    cu.streamCreate(&s1, 0);
    cu.ctxSetCurrent(ctx0);
    rt0.copyToDevice(y0, y.data(), bytes);
    a0 = args(x0.data(), y0.data(), 4.0f);
    e = errorOf([&] { axpy.launch(s1, a0.data(), a0.size()); });
    check(e.find("belongs to device 1, but the tensors are on device 0") != std::string::npos,
          "a stream of another device refused: " + e);
    a1 = args(x1.data(), y1.data(), 6.0f);
    axpy.launch(s1, a1.data(), a1.size());
    rt1.synchronize(s1);
    check(correct(rt1, y1, 6.0f), "axpy on device 1 on a stream of device 1 is right");
    check(cu.current() == ctx0, "the caller's context is unchanged after a launch on a device 1 stream");
    cu.streamDestroy(s1);

    // 4. A thread with no current context keeps none after a launch on
    // device 1 (the runtime's own device 0 would stay current: docs).
    cu.ctxSetCurrent(nullptr);
    rt1.copyToDevice(y1, y.data(), bytes);
    cu.ctxSetCurrent(nullptr);
    a1 = args(x1.data(), y1.data(), 7.0f);
    axpy.launch(nullptr, a1.data(), a1.size());
    check(cu.current() == nullptr, "no current context before, none after a launch on device 1");
    check(correct(rt1, y1, 7.0f), "axpy on device 1 from a thread without a context is right");
  } catch (const spindle::Error& e) {
    std::printf("multi_gpu_check: %s\n", e.what());
    return 2;
  }
  std::printf("multi_gpu_check: %s\n", failures ? "FAILED" : "all checks passed");
  return failures ? 1 : 0;
}
