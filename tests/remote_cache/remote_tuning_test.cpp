// Tuning results and leases shared through the remote cache
// (runtime/src/tuning/tuning_store.h): a second machine (a fresh runtime
// with an empty disk cache) picks the first machine's choice from Redis and
// makes no tuning launch; while one machine holds a key's lease the others
// do not tune it; with Redis down each machine tunes for itself. On the cpu
// target, against a redis-server the test starts.
#include "../runtime/test_util.h"
#include "remote_test_util.h"
#include "tuning/tuning_store.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::test {
namespace {

const char* kScaled = R"(const BLOCK = 64

@grid(cdiv(N, BLOCK))
@block(BLOCK)
@tune(BLOCK=[64, 128, 256], key=[N])
kernel scaled(x: f32[N], y: f32[N]):
    i = i64(block_id()) * BLOCK + thread_id()
    if i < N:
        y[i] = 2.0 * x[i]
)";

// One machine: its own disk cache, the shared server, tuning before the
// first launch (the cpu target does not tune unless asked).
struct TuningMachine {
  TempDir disk;
  Runtime rt;
  Kernel kernel;
  TuningMachine(const std::string& url, Warnings& w)
      : rt(options(url, disk.path(), w)), kernel(rt.loadModuleFromString("scaled.spn", kScaled).kernel("scaled")) {}
  static RuntimeOptions options(const std::string& url, const std::string& dir, Warnings& w) {
    RuntimeOptions o = cpuOptions("cpu");
    o.diskCache = true;
    o.cacheDir = dir;
    o.remoteCache = url;
    o.remoteCacheSecrets = {kSecret};
    o.tune.mode = TuneMode::Blocking;
    o.tune.budgetMs = 200;
    o.warn = w.sink();
    return o;
  }
  // y = 2 x on n elements, checked.
  void launch(int64_t n) {
    std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n), -1.0f);
    for (int64_t i = 0; i < n; ++i) x[size_t(i)] = float(i % 97) - 40.0f;
    DeviceBuffer dx = rt.allocate(x.size() * 4), dy = rt.allocate(y.size() * 4);
    rt.copyToDevice(dx, x.data(), x.size() * 4);
    rt.copyToDevice(dy, y.data(), y.size() * 4);
    kernel.launch(nullptr, {tensor(dx.data(), ScalarType::F32, {n}), tensor(dy.data(), ScalarType::F32, {n})});
    rt.copyToHost(y.data(), dy, y.size() * 4);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[size_t(i)], 2.0f * x[size_t(i)]) << "element " << i;
  }
};

class RemoteTuning : public ::testing::Test {
 protected:
  void SetUp() override { SPINDLE_REQUIRE_REDIS_SERVER(); }
  ScopedEnv tune_{"SPINDLE_TUNE", ""};
  ScopedEnv url_{"SPINDLE_CACHE_REDIS", ""};
  ScopedEnv secret_{"SPINDLE_CACHE_SECRET", ""};
  ScopedEnv timeout_{"SPINDLE_CACHE_REDIS_TIMEOUT_MS", "200"};
  ScopedEnv retry_{"SPINDLE_CACHE_REDIS_RETRY_MS", "50"};
};

TEST_F(RemoteTuning, SecondMachinePicksTheFirstMachinesChoiceWithoutTimingAnything) {
  RedisServer server;
  ASSERT_TRUE(server.start()) << server.error();
  Warnings w;
  TuningMachine first(server.unixUrl(), w);
  first.launch(5000);
  ASSERT_EQ(first.rt.stats().tunings, 1u);
  ASSERT_GT(first.rt.stats().tuningLaunches, 0u);

  TuningMachine second(server.unixUrl(), w);
  second.launch(5000);
  CacheStats s = second.rt.stats();
  EXPECT_EQ(s.tunings, 0u);
  EXPECT_EQ(s.tuningLaunches, 0u);
  EXPECT_EQ(s.tuneStoreHits, 1u);
  // Kept on its disk: a third runtime on that disk, with no server, hits it.
  server.kill();
  Warnings w3;
  RuntimeOptions o = TuningMachine::options("", second.disk.path(), w3);
  Runtime local(o);
  Kernel k = local.loadModuleFromString("scaled.spn", kScaled).kernel("scaled");
  std::vector<float> x(5000, 1.0f), y(5000);
  DeviceBuffer dx = local.allocate(x.size() * 4), dy = local.allocate(y.size() * 4);
  local.copyToDevice(dx, x.data(), x.size() * 4);
  k.launch(nullptr, {tensor(dx.data(), ScalarType::F32, {5000}), tensor(dy.data(), ScalarType::F32, {5000})});
  EXPECT_EQ(local.stats().tuningLaunches, 0u);
  EXPECT_EQ(local.stats().tuneStoreHits, 1u);
  EXPECT_EQ(w.count(), 0u) << w.all();
}

TEST_F(RemoteTuning, OneMachineTunesAKeyAndADownServerLetsEachTuneForItself) {
  RedisServer server;
  ASSERT_TRUE(server.start()) << server.error();
  Warnings w;
  TempDir a, b;
  rt::RemoteCache remoteA(configFor(server.unixUrl()), w.sink()), remoteB(configFor(server.unixUrl()), w.sink());
  rt::TuningStore storeA(a.path()), storeB(b.path());
  storeA.setRemote(&remoteA);
  storeB.setRemote(&remoteB);
  const std::string key = keyOf("a tuning key");
  ASSERT_TRUE(storeA.tryLease(key));
  EXPECT_FALSE(storeB.tryLease(key)) << "machine A tunes it";
  storeA.releaseLease(key);
  ASSERT_TRUE(storeB.tryLease(key)) << "released by its holder";
  storeB.releaseLease(key);

  // The server gone: no one to coordinate with, so each machine tunes.
  ASSERT_TRUE(storeA.tryLease(key));
  server.kill();
  EXPECT_TRUE(storeB.tryLease(key));
  EXPECT_GE(w.count("unavailable"), 1u) << w.all();
}

}  // namespace
}  // namespace spindle::test
#endif  // SPINDLE_HAVE_CPU_TARGET
