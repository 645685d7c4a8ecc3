// The cpu target (docs/runtime.md, "The cpu target"): kernels compiled for
// the host by a C++ compiler into shared libraries, run with GPU semantics
// by the fiber scheduler in cpu/; host memory stands in for device memory.
// Used only when asked (SPINDLE_BACKEND=cpu, --target cpu, RuntimeOptions).
#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>

#include "backend.h"
#include "cpu/grid_runner.h"
#include "cpu/host_compiler.h"
#include "cpu/kernel_preamble.h"
#include "env_number.h"
#include "sha256.h"

namespace spindle::rt {
namespace {

// Bytes of stack per GPU thread: generous for call frames, plus the
// kernel's `local` arrays where they need more (a GPU allows 512 KiB and
// more per thread); only the pages a thread touches are ever backed by
// memory.
// A kernel whose `local` arrays, over every thread of the blocks that run
// at once, need more than the host's memory is refused with the numbers,
// instead of the process being killed when it runs out.
void requireMemoryForLocals(const LaunchGeometry& g) {
  if (g.localBytesPerThread == 0) return;  // most kernels: nothing to ask the system
  const uint64_t threads = uint64_t(g.block[0] * g.block[1] * g.block[2]);
  const uint64_t blocks = uint64_t(g.grid[0] * g.grid[1] * g.grid[2]);
  const uint64_t atOnce = threads * std::min<uint64_t>(blocks, cpu::workerThreads());
  static const uint64_t memory = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
  if (atOnce <= memory / g.localBytesPerThread) return;
  throw Error(fmt::format(
      "cpu target: the kernel's `local` arrays take {} bytes per thread, {:.1f} GiB for the {} threads that run at "
      "once ({} per block, {} {} at a time: SPINDLE_CPU_THREADS), more than this host's {:.1f} GiB of memory",
      g.localBytesPerThread, double(g.localBytesPerThread) * double(atOnce) / double(1 << 30), atOnce, threads,
      atOnce / threads, atOnce == threads ? "block" : "blocks", double(memory) / double(1 << 30)));
}

size_t stackBytes(uint64_t localBytes) {
  const uint64_t base =
      envNumber("SPINDLE_CPU_STACK_BYTES", 16384, uint64_t(1) << 32, "a byte count from 16384 to 4294967296")
          .value_or(256 << 10);
  const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
  return size_t((std::max(base, localBytes + (128 << 10)) + page - 1) / page * page);
}

// One loaded kernel library.
struct CpuFunction {
  void* handle = nullptr;
  __spn_cpu_entry_fn entry = nullptr;
  unsigned warpSize = 32;  // what it was compiled for (__spn_cpu_warp_size)
};

class CpuBackend final : public Backend {
 public:
  ~CpuBackend() override {
    for (auto& f : functions_)
      if (f->handle) dlclose(f->handle);
  }

  BackendKind kind() const override { return BackendKind::Cpu; }

  bool hasCompiler(std::string* why) override {
    std::call_once(found_, [&] { compiler_ = cpu::findHostCompiler(&missing_); });
    if (!compiler_ && why) *why = missing_;
    return bool(compiler_);
  }

  // The compiler and the kernel preamble (ABI, host device API): a change
  // to either makes new keys.
  std::string compilerIdentity() override {
    if (!hasCompiler(nullptr)) return "none";
    const std::string_view pre = cpu::kernelPreamble();
    return fmt::format("{}; cpu preamble {}", compiler_->identity, toHex(sha256(pre.data(), pre.size())).substr(0, 16));
  }

  // -ffp-contract=off: no fused multiply-add unless the kernel asks for one
  // (fma), so results do not depend on the host's instruction set.
  std::vector<std::string> compileOptions(const std::string& target) override {
    return {"-std=c++17",
            "-O2",
            "-fPIC",
            "-shared",
            "-ffp-contract=off",
            "-fvisibility=hidden",
            "-w",
            "-D__SPN_CPU=1",
            fmt::format("-D__SPN_CPU_WARP_SIZE={}", cpuWarpSize(target))};
  }

  std::vector<std::string> unsafeFpAtomicsOptions() const override { return {}; }

  bool acceptsTarget(const std::string& target) const override { return cpuWarpSize(target) != 0; }

  CompileOutput compile(const std::string& source, const std::string& fileName, const std::string& symbol,
                        const std::vector<std::string>& options) override {
    CompileOutput out;
    std::string why;
    if (!hasCompiler(&why)) {
      out.log = why;
      return out;
    }
    std::string text(cpu::kernelPreamble());
    text += source;
    text += fmt::format(
        "\n// The entry the cpu target's runtime calls on every GPU thread.\n"
        "extern \"C\" __attribute__((visibility(\"default\"))) void __spn_cpu_entry(void** args) {{\n"
        "  __spn_cpu_invoke(&{}, args);\n}}\n"
        "extern \"C\" __attribute__((visibility(\"default\"))) int __spn_cpu_warp_size(void) {{\n"
        "  return __SPN_CPU_WARP_SIZE;\n}}\n",
        symbol);
    cpu::HostCompileResult r = cpu::compileSharedLibrary(*compiler_, text, fileName, options);
    out.ok = r.ok;
    out.binary = std::move(r.library);
    out.log = std::move(r.log);
    return out;
  }

  // --- the host as the device -------------------------------------------------
  int deviceCount(std::string* why) override { return hasCompiler(why) ? 1 : 0; }
  void useDevice(int) override {}
  std::string deviceTarget(int) override { return "cpu"; }
  std::string deviceName(int) override { return fmt::format("host CPU ({} worker threads)", cpu::workerThreads()); }

  void* loadFunction(const std::vector<char>& binary, const std::string& symbol, int /*device*/) override {
    // dlopen needs a file: a private one, removed as soon as it is mapped.
    namespace fs = std::filesystem;
    std::string path = (fs::temp_directory_path() / "spindle-kernel-XXXXXX.so").string();
    int fd = mkstemps(path.data(), 3);
    if (fd < 0) throw Error(fmt::format("cpu target: cannot create {}: {}", path, std::strerror(errno)));
    bool written = ::write(fd, binary.data(), binary.size()) == ssize_t(binary.size());
    ::close(fd);
    void* handle = written ? dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL) : nullptr;
    std::string dlError = handle || !written ? "" : dlerror();
    ::unlink(path.c_str());
    if (!handle)
      throw Error(fmt::format("cpu target: cannot load the library of {}: {}", symbol,
                              written ? dlError : "short write to " + path));
    auto f = std::make_unique<CpuFunction>();
    f->handle = handle;
    auto version = reinterpret_cast<__spn_cpu_abi_version_fn>(dlsym(handle, "__spn_cpu_abi_version"));
    auto bind = reinterpret_cast<__spn_cpu_bind_fn>(dlsym(handle, "__spn_cpu_bind"));
    f->entry = reinterpret_cast<__spn_cpu_entry_fn>(dlsym(handle, "__spn_cpu_entry"));
    auto warpSize = reinterpret_cast<int (*)()>(dlsym(handle, "__spn_cpu_warp_size"));
    if (!version || !bind || !f->entry || !warpSize || version() != __SPN_CPU_ABI_VERSION ||
        (warpSize() != 32 && warpSize() != 64)) {
      dlclose(handle);
      throw Error(fmt::format("cpu target: the library of {} is not a kernel of this runtime (ABI {})", symbol,
                              __SPN_CPU_ABI_VERSION));
    }
    f->warpSize = unsigned(warpSize());
    bind(&cpu::runtimeApi());
    std::lock_guard<std::mutex> lock(mu_);
    functions_.push_back(std::move(f));
    return functions_.back().get();
  }

  void launch(void* function, const LaunchGeometry& g, void* /*stream*/, void** args, int /*device*/) override {
    auto* f = static_cast<CpuFunction*>(function);
    cpu::BlockShape shape;
    shape.grid = {unsigned(g.grid[0]), unsigned(g.grid[1]), unsigned(g.grid[2])};
    shape.block = {unsigned(g.block[0]), unsigned(g.block[1]), unsigned(g.block[2])};
    shape.warpSize = f->warpSize;
    shape.dynamicSharedBytes = g.dynamicSharedBytes;
    requireMemoryForLocals(g);
    cpu::runGrid(shape, f->entry, args, stackBytes(g.localBytesPerThread));
  }

  // The blocks that run at once: one per worker thread.
  int64_t residentBlocks(void*, int64_t, uint64_t, int) override { return int64_t(cpu::workerThreads()); }

  void* allocate(size_t bytes) override {
    // 256-aligned like a device allocation (the runtime's alignment checks
    // and vector access assume it).
    void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (!p) throw Error(fmt::format("cpu target: out of memory allocating {} bytes", bytes));
    return p;
  }
  void release(void* ptr) noexcept override { std::free(ptr); }
  void copyToDevice(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void copyToHost(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void copyOnDevice(void* dst, const void* src, size_t bytes) override { std::memmove(dst, src, bytes); }
  std::string deviceIdentity(int) override { return fmt::format("worker threads {}", cpu::workerThreads()); }
  // Launches run to completion before they return: every stream is always idle.
  void synchronize(void*) override {}
  float timeMs(void*, const std::function<void()>& body) override {
    auto start = std::chrono::steady_clock::now();
    body();
    return std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - start).count();
  }

 private:
  std::once_flag found_;
  std::optional<cpu::HostCompiler> compiler_;
  std::string missing_;
  std::mutex mu_;
  std::vector<std::unique_ptr<CpuFunction>> functions_;
};

}  // namespace

std::unique_ptr<Backend> makeCpuBackend() { return std::make_unique<CpuBackend>(); }

}  // namespace spindle::rt
