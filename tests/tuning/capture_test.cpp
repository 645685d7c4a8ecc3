// Under graph capture nothing is tuned: the stored choice or the default
// (TunedKernel::choose, with the capture state given as the backend would).
#include <gtest/gtest.h>

#include <numeric>

#include "backend.h"
#include "test_util.h"
#include "tuning/tuned_kernel.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::rt {
namespace {

const char* kScale = R"(
const BLOCK = 64

@grid(cdiv(N, BLOCK))
@block(BLOCK)
@tune(BLOCK=[64, 128], key=[N])
kernel scale(x: f32[N], y: f32[N]):
    i = i64(block_id()) * BLOCK + thread_id()
    if i < N:
        y[i] = 2.0 * x[i]
)";

TEST(TuneCapture, NoTuningWhileCapturing) {
  test::TempDir dir;
  Runtime rt(test::cpuOptions("cpu"));
  Module m = rt.loadModuleFromString("scale.spn", kScale);
  TuneContext ctx;
  auto backend = makeCpuBackend();
  ctx.backend = backend.get();
  ctx.hasDevice = true;
  ctx.mode = TuneMode::Blocking;
  ctx.store = std::make_unique<TuningStore>(dir.path());
  const KernelInfo& info = *m.compiled().findKernel("scale");
  TunedKernel tuned(ctx, info, [&](size_t i) {
    KernelOptions o;
    o.consts["BLOCK"] = ConstOverride::ofInt(info.tune->configs[i][0]);
    return m.kernel("scale", o);
  });
  std::vector<float> x(500, 1.0f), y(500);
  Arg args[] = {tensor(x.data(), ScalarType::F32, {500}), tensor(y.data(), ScalarType::F32, {500})};
  TuneKey key;
  key.count = 2;
  key.words[0] = 1;
  key.words[1] = 512;  // the bucket of N
  EXPECT_EQ(tuned.bucketText(key), "N=512");
  std::string how;
  auto spec = [] { return std::string("N dynamic"); };
  EXPECT_EQ(tuned.choose(
                nullptr, args, 2, key, spec, [] { return true; }, true, &how),
            0u);
  EXPECT_EQ(how, "default");
  EXPECT_EQ(ctx.tuningLaunches, 0u);
  // Not capturing: tuned, and the choice is kept for the capture after.
  tuned.choose(
      nullptr, args, 2, key, spec, [] { return false; }, true, &how);
  EXPECT_EQ(how, "tuned");
  EXPECT_GT(ctx.tuningLaunches, 0u);
  uint64_t launches = ctx.tuningLaunches;
  tuned.choose(
      nullptr, args, 2, key, spec, [] { return true; }, true, &how);
  EXPECT_EQ(how, "tuned");
  EXPECT_EQ(ctx.tuningLaunches, launches);
  EXPECT_EQ(y[0], 0.0f);  // tuning wrote scratch copies only
}

}  // namespace
}  // namespace spindle::rt
#endif
