// Specializing never changes the loaded module (spindle/generator.h): threads
// generate different specializations of one CompiledModule at once, with no
// lock, and each gets exactly the source a lone call gets. scripts/sanitize.sh
// runs these tests under ThreadSanitizer too (build-tsan), which reports any
// write to shared state.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "spindle/generator.h"

namespace spindle {
namespace {

const char* kModule = R"(
const BLOCK = 128

@grid(M)
@block(BLOCK)
kernel row_scale[T](x: T[M, N] strided, y: T[M, N], a: f32):
    row = block_id()
    total = 0.0

    def accumulate(j: i64):
        nonlocal total
        total += f32(x[row, j])

    for j in range(thread_id(), N, BLOCK):
        accumulate(j)
    s = block_sum(total)
    for j in range(thread_id(), N, BLOCK):
        y[row, j] = T(a * f32(x[row, j]) / s)
)";

struct Case {
  Specialization spec;
  std::string source;  // what a lone call generates
};

TEST(Concurrency, ThreadsSpecializeOneModuleAtOnce) {
  auto module = CompiledModule::loadString("concurrency.spn", kModule);
  std::vector<Case> cases;
  for (ScalarType t : {ScalarType::F32, ScalarType::F16, ScalarType::BF16, ScalarType::F64})
    for (bool contiguous : {false, true})
      for (int64_t n : {0, 1024}) {
        Specialization s;
        s.typeArgs["T"] = t;
        if (contiguous) s.contiguousTensors.insert("x");
        if (n) s.staticDims["N"] = n;
        cases.push_back({s, module->generate("row_scale", s).source});
      }

  constexpr int kThreads = 4;
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Each thread walks the cases from its own starting point, so
      // different specializations run at the same moment.
      for (size_t i = 0; i < cases.size() * 2; ++i) {
        const Case& c = cases[(i + size_t(t) * 3) % cases.size()];
        if (module->generate("row_scale", c.spec).source != c.source) ++mismatches;
        std::map<std::string, int64_t> dims = {{"M", 64}, {"N", 1024}};
        if (module->launchGeometry("row_scale", c.spec, dims).grid[0] != 64) ++mismatches;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
  // And the module is as it was: a lone call still generates the same.
  for (const Case& c : cases) EXPECT_EQ(module->generate("row_scale", c.spec).source, c.source);
}

}  // namespace
}  // namespace spindle
