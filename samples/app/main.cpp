// A small app on the Spindle runtime: load axpy.spn, launch it on device
// buffers the app owns, and check the result against the CPU. With no GPU it
// compiles the kernel for a default target and says that it did not launch.
#include <spindle/runtime.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

#ifndef SPINDLE_APP_KERNEL_FILE
#define SPINDLE_APP_KERNEL_FILE "axpy.spn"
#endif

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : SPINDLE_APP_KERNEL_FILE;
  try {
    spindle::Runtime rt;
    if (!rt.hasDevice()) {
      std::printf("no GPU (%s)\n", rt.deviceStatus().c_str());
      spindle::RuntimeOptions options;
      options.target = rt.backend() == spindle::BackendKind::Hip ? "gfx90a" : "sm_90";
      spindle::Runtime compileOnly(options);
      auto report = compileOnly.loadModule(path).kernel("axpy").compile({}, {{"T", spindle::ScalarType::F32}});
      std::printf("compiled axpy for %s (%zu bytes, cache %s); did not launch\n", report.target.c_str(),
                  report.binaryBytes, spindle::cacheOutcomeName(report.outcome));
      return 0;
    }
    spindle::Kernel axpy = rt.loadModule(path).kernel("axpy");

    const int64_t n = 1 << 20;
    const float a = 2.5f;
    std::vector<float> x(n), y(n);
    for (int64_t i = 0; i < n; ++i) {
      x[i] = float(i % 1000) * 0.001f;
      y[i] = 1.0f - float(i % 7);
    }
    spindle::DeviceBuffer dx = rt.allocate(n * sizeof(float)), dy = rt.allocate(n * sizeof(float));
    rt.copyToDevice(dx, x.data(), n * sizeof(float));
    rt.copyToDevice(dy, y.data(), n * sizeof(float));

    axpy.launch(nullptr, {spindle::tensor(dx.data(), spindle::ScalarType::F32, {n}),
                          spindle::tensor(dy.data(), spindle::ScalarType::F32, {n}), spindle::scalar(a)});
    std::vector<float> out(n);
    rt.copyToHost(out.data(), dy, n * sizeof(float));

    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      float want = a * x[i] + y[i];
      if (std::fabs(out[i] - want) > 1e-5f * std::fmax(1.0f, std::fabs(want)) && bad++ < 5)
        std::printf("mismatch at %lld: got %g, want %g\n", (long long)i, out[i], want);
    }
    spindle::CacheStats s = rt.stats();
    std::printf("axpy on %s (%s): %lld elements, %s (compiles %llu, disk hits %llu)\n", rt.deviceName().c_str(),
                rt.target().c_str(), (long long)n, bad ? "WRONG" : "correct", (unsigned long long)s.compiles,
                (unsigned long long)s.diskHits);
    return bad ? 1 : 0;
  } catch (const spindle::Error& e) {
    std::fprintf(stderr, "spindle_app: %s\n", e.what());
    return 1;
  }
}
