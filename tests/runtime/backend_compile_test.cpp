// Real run-time compiles, no GPU needed: nvrtc for sm_90 and hiprtc for
// gfx90a through the runtime's backends and disk cache, with a hand-written
// kernel (the generator's own output is compiled in runtime_test.cpp). A test
// skips only when its compiler library is really absent.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "../../runtime/src/backend.h"
#include "../../runtime/src/compilation.h"
#include "../../runtime/src/disk_cache.h"
#include "test_util.h"

extern char** environ;

namespace spindle {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<rt::Backend> backendFor(BackendKind k) {
  return k == BackendKind::Cuda ? rt::makeCudaBackend() : rt::makeHipBackend();
}

const char* targetFor(BackendKind k) { return k == BackendKind::Cuda ? "sm_90" : "gfx90a"; }

#define SKIP_WITHOUT_COMPILER(backend)                                                             \
  do {                                                                                             \
    std::string why_;                                                                              \
    if (!(backend).hasCompiler(&why_)) GTEST_SKIP() << "compiler library not installed: " << why_; \
  } while (0)

class Compile : public ::testing::TestWithParam<BackendKind> {};

bool looksLikeCodeObject(const std::vector<char>& bin) {
  static const char kElf[] =
      "\x7f"
      "ELF";
  static const char kBundle[] = "__CLANG_OFFLOAD_BUNDLE__";
  return (bin.size() > 4 && std::memcmp(bin.data(), kElf, 4) == 0) ||
         (bin.size() > 24 && std::memcmp(bin.data(), kBundle, 24) == 0);
}

TEST_P(Compile, ColdCompileThenDiskHit) {
  auto backend = backendFor(GetParam());
  SKIP_WITHOUT_COMPILER(*backend);
  test::TempDir dir;
  const std::string target = targetFor(GetParam());
  rt::Counters counters;
  rt::DiskCache disk(dir.path(), 1 << 30, nullptr);
  rt::BinaryCompiler compiler(*backend, target, &disk, counters);

  auto t0 = std::chrono::steady_clock::now();
  rt::CompiledBinary cold =
      compiler.get(test::handWrittenSource(), test::handWrittenSource(), "spn_axpy", "axpy.hip", "axpy");
  auto t1 = std::chrono::steady_clock::now();
  EXPECT_EQ(cold.outcome, CacheOutcome::Miss);
  EXPECT_TRUE(looksLikeCodeObject(cold.binary)) << "size " << cold.binary.size();
  EXPECT_EQ(cold.keyHex.size(), 64u);
  EXPECT_EQ(counters.compiles.load(), 1u);
  EXPECT_GT(cold.compileSeconds, 0.0);

  // A new process would start with empty memory: a fresh compiler on the same directory.
  rt::Counters counters2;
  rt::DiskCache disk2(dir.path(), 1 << 30, nullptr);
  rt::BinaryCompiler again(*backend, target, &disk2, counters2);
  auto t2 = std::chrono::steady_clock::now();
  rt::CompiledBinary warm =
      again.get(test::handWrittenSource(), test::handWrittenSource(), "spn_axpy", "axpy.hip", "axpy");
  auto t3 = std::chrono::steady_clock::now();
  EXPECT_EQ(warm.outcome, CacheOutcome::DiskHit);
  EXPECT_EQ(warm.keyHex, cold.keyHex);
  EXPECT_EQ(warm.binary, cold.binary);
  EXPECT_EQ(counters2.compiles.load(), 0u);
  EXPECT_EQ(counters2.diskHits.load(), 1u);
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  std::printf("[ timing ] %s %s: cold compile %.1f ms, disk hit %.2f ms, binary %zu bytes\n",
              backend->compilerIdentity().c_str(), target.c_str(), ms(t0, t1), ms(t2, t3), cold.binary.size());
}

TEST_P(Compile, KeyCoversSourceTargetAndSymbol) {
  auto backend = backendFor(GetParam());
  SKIP_WITHOUT_COMPILER(*backend);
  rt::Counters c;
  const bool cuda = GetParam() == BackendKind::Cuda;
  rt::BinaryCompiler a(*backend, cuda ? "sm_90" : "gfx90a", nullptr, c);
  rt::BinaryCompiler a2(*backend, cuda ? "sm_90" : "gfx90a", nullptr, c);
  rt::BinaryCompiler b(*backend, cuda ? "sm_80" : "gfx942", nullptr, c);
  std::string src = test::handWrittenSource();
  EXPECT_EQ(a.keyHex(src, "spn_axpy"), a2.keyHex(src, "spn_axpy")) << "deterministic";
  EXPECT_NE(a.keyHex(src, "spn_axpy"), b.keyHex(src, "spn_axpy")) << "exact target";
  EXPECT_NE(a.keyHex(src, "spn_axpy"), a.keyHex(src + " ", "spn_axpy")) << "source";
  EXPECT_NE(a.keyHex(src, "spn_axpy"), a.keyHex(src, "spn_axpy2")) << "symbol";
  if (!cuda) {
    rt::BinaryCompiler features(*backend, "gfx90a:xnack+", nullptr, c);
    EXPECT_NE(a.keyHex(src, "spn_axpy"), features.keyHex(src, "spn_axpy")) << "target features";
  }
}

TEST(CacheKeyText, NamesEveryInput) {
  std::string text = rt::cacheKeyText(BackendKind::Cuda, "nvrtc 13.0 (libnvrtc.so.13.0.88)", "sm_90",
                                      {"--std=c++17", "-arch=sm_90"}, "softmax", "SOURCE");
  EXPECT_CONTAINS(text, "backend cuda\n");
  EXPECT_CONTAINS(text, "compiler nvrtc 13.0 (libnvrtc.so.13.0.88)\n");
  EXPECT_CONTAINS(text, "target sm_90\n");
  EXPECT_CONTAINS(text, "option -arch=sm_90\n");
  EXPECT_CONTAINS(text, "symbol softmax\n");
  EXPECT_CONTAINS(text, "spindle " SPINDLE_VERSION "\n");
  EXPECT_CONTAINS(text, "source 6\nSOURCE");
}

TEST_P(Compile, ErrorsCarryTheLogWithSpnLines) {
  auto backend = backendFor(GetParam());
  SKIP_WITHOUT_COMPILER(*backend);
  rt::Counters c;
  rt::BinaryCompiler compiler(*backend, targetFor(GetParam()), nullptr, c);
  std::string src =
      "#line 7 \"kernels/bad.spn\"\nextern \"C\" __global__ void k(float* y) { y[0] = undefined_name; }\n";
  try {
    compiler.get(src, src, "k", "k.hip", "bad");
    FAIL() << "compiled";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_CONTAINS(m, std::string("bad: compiling for ") + targetFor(GetParam()));
    EXPECT_CONTAINS(m, "kernels/bad.spn");
    EXPECT_CONTAINS(m, "undefined_name");
    EXPECT_TRUE(m.find("bad.spn(7)") != std::string::npos || m.find("bad.spn:7") != std::string::npos) << m;
  }
  EXPECT_EQ(c.compileFailures.load(), 1u);
}

TEST_P(Compile, CorruptedEntryIsRecompiledAndReplaced) {
  auto backend = backendFor(GetParam());
  SKIP_WITHOUT_COMPILER(*backend);
  test::TempDir dir;
  rt::Counters c;
  rt::DiskCache disk(dir.path(), 1 << 30, [](const std::string&) {});
  rt::BinaryCompiler compiler(*backend, targetFor(GetParam()), &disk, c);
  auto first = compiler.get(test::handWrittenSource(), test::handWrittenSource(), "spn_axpy", "a.hip", "axpy");
  std::string path = disk.entryPath(first.keyHex);
  fs::resize_file(path, fs::file_size(path) / 2);  // truncated
  auto second = compiler.get(test::handWrittenSource(), test::handWrittenSource(), "spn_axpy", "a.hip", "axpy");
  EXPECT_EQ(second.outcome, CacheOutcome::Miss);
  EXPECT_EQ(second.binary, first.binary);
  EXPECT_EQ(disk.corruptEntries(), 1u);
  auto third = compiler.get(test::handWrittenSource(), test::handWrittenSource(), "spn_axpy", "a.hip", "axpy");
  EXPECT_EQ(third.outcome, CacheOutcome::DiskHit);
  EXPECT_EQ(c.compiles.load(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Backends, Compile, ::testing::Values(BackendKind::Cuda, BackendKind::Hip),
                         [](const auto& info) { return std::string(backendName(info.param)); });

// Run as a child process by ConcurrentProcesses below; skips otherwise.
TEST(CompileChild, CompileOnce) {
  const char* dir = std::getenv("SPINDLE_TEST_CHILD_CACHE");
  if (!dir) GTEST_SKIP() << "helper for Compile.ConcurrentProcesses (runs in child processes only)";
  auto backend = rt::makeCudaBackend();
  rt::Counters c;
  rt::DiskCache disk(dir, 1 << 30, nullptr);
  rt::BinaryCompiler compiler(*backend, "sm_90", &disk, c);
  auto bin = compiler.get(test::handWrittenSource(), test::handWrittenSource(), "spn_axpy", "a.hip", "axpy");
  ASSERT_FALSE(bin.binary.empty());
  EXPECT_EQ(disk.writeFailures(), 0u);
}

TEST(CompileConcurrency, ProcessesCompilingTheSameKernelLeaveOneValidEntry) {
  auto backend = rt::makeCudaBackend();
  SKIP_WITHOUT_COMPILER(*backend);
  test::TempDir dir;
  std::string self = fs::read_symlink("/proc/self/exe").string();
  std::vector<std::string> env;
  // Not the parent's GoogleTest shard (scripts/sanitize.sh shards this
  // executable): a child with it would run no test.
  for (char** e = environ; *e; ++e)
    if (std::string_view(*e).rfind("GTEST_TOTAL_SHARDS=", 0) != 0 &&
        std::string_view(*e).rfind("GTEST_SHARD_INDEX=", 0) != 0)
      env.push_back(*e);
  env.push_back("SPINDLE_TEST_CHILD_CACHE=" + dir.path());
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string filter = "--gtest_filter=CompileChild.CompileOnce";
  char* argv[] = {self.data(), filter.data(), nullptr};
  constexpr int kProcesses = 4;
  std::vector<pid_t> pids;
  for (int i = 0; i < kProcesses; ++i) {
    pid_t pid;
    ASSERT_EQ(::posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv, envp.data()), 0);
    pids.push_back(pid);
  }
  for (pid_t p : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(p, &status, 0), p);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child failed";
  }
  int entries = 0;
  for (auto& e : fs::recursive_directory_iterator(dir.path())) {
    if (!e.is_regular_file()) continue;
    ++entries;
    EXPECT_EQ(e.path().extension(), ".bin") << "left over: " << e.path();
  }
  EXPECT_EQ(entries, 1);
  rt::Counters c;
  rt::DiskCache disk(dir.path(), 1 << 30, nullptr);
  rt::BinaryCompiler compiler(*backend, "sm_90", &disk, c);
  EXPECT_EQ(compiler.get(test::handWrittenSource(), test::handWrittenSource(), "spn_axpy", "a.hip", "axpy").outcome,
            CacheOutcome::DiskHit);
  EXPECT_EQ(disk.corruptEntries(), 0u);
}

}  // namespace
}  // namespace spindle

namespace spindle {
namespace {

// ROCm 5.2's hiprtc aborts the process on a target its comgr does not know;
// the backend asks comgr first and reports an error instead.
TEST(HipTargets, UnknownToTheCompilerIsAnErrorNotACrash) {
  auto backend = rt::makeHipBackend();
  SKIP_WITHOUT_COMPILER(*backend);
  rt::Counters c;
  rt::BinaryCompiler compiler(*backend, "gfx9999", nullptr, c);
  try {
    compiler.get(test::handWrittenSource(), test::handWrittenSource(), "spn_axpy", "a.hip", "axpy");
    FAIL() << "compiled for gfx9999";
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "cannot compile for gfx9999");
    EXPECT_CONTAINS(e.what(), "gfx90a");
  }
}

}  // namespace
// Keys hash the path-free source unless the options write file names into
// the binary; then the path is part of what the binary depends on.
TEST(CacheKey, OptionsThatEmbedPathsAreRecognized) {
  EXPECT_FALSE(rt::optionsEmbedSourcePaths({"--std=c++17", "-arch=sm_90", "-I/usr/local/cuda/include"}));
  EXPECT_FALSE(rt::optionsEmbedSourcePaths({"-std=c++17", "-O3", "--offload-arch=gfx90a"}));
  for (const char* o :
       {"-lineinfo", "--generate-line-info", "-G", "--device-debug", "-g", "-ggdb", "-gline-tables-only"})
    EXPECT_TRUE(rt::optionsEmbedSourcePaths({"-O3", o})) << o;
}

}  // namespace spindle
