// The remote layer against a real redis-server: blobs by namespace, what a
// planted or damaged entry gets, leases, AUTH, and the server's refusals
// (OOM, READONLY, cluster). Each test starts its own server.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "remote_cache/entry_mac.h"
#include "remote_test_util.h"

namespace spindle::test {
namespace {

using rt::RedisReply;
using rt::RemoteCache;
using rt::RemoteNamespace;

#define START_SERVER(server)      \
  SPINDLE_REQUIRE_REDIS_SERVER(); \
  ASSERT_TRUE((server).start()) << (server).error()

TEST(RemoteCache, PutGetByNamespaceWithTtl) {
  RedisServer server;
  START_SERVER(server);
  Warnings w;
  auto config = configFor(server.unixUrl());
  config.ttlSeconds = 3600;
  RemoteCache cache(config, w.sink());
  std::string key = keyOf("a");
  EXPECT_FALSE(cache.get(RemoteNamespace::Binary, key).has_value());
  EXPECT_EQ(cache.counters(RemoteNamespace::Binary).misses, 1u);
  ASSERT_TRUE(cache.put(RemoteNamespace::Binary, key, bytes(5000)));
  EXPECT_EQ(cache.get(RemoteNamespace::Binary, key), bytes(5000));
  EXPECT_FALSE(cache.get(RemoteNamespace::Tuning, key).has_value()) << "namespaces are separate";
  ASSERT_TRUE(cache.put(RemoteNamespace::Tuning, key, bytes(10, 7)));
  EXPECT_EQ(cache.get(RemoteNamespace::Tuning, key), bytes(10, 7));
  EXPECT_EQ(cache.get(RemoteNamespace::Binary, key), bytes(5000));
  EXPECT_EQ(cache.counters(RemoteNamespace::Binary).hits, 2u);
  EXPECT_EQ(cache.counters(RemoteNamespace::Binary).stores, 1u);

  // The key names, versioned, and the TTL on the server.
  auto ttl = server.command({"PTTL", "spindle:v1:bin:" + key});
  ASSERT_TRUE(ttl.has_value());
  EXPECT_GT(ttl->integer, 3500 * 1000);
  EXPECT_LE(ttl->integer, 3600 * 1000);
  auto tune = server.command({"EXISTS", "spindle:v1:tune:" + key});
  ASSERT_TRUE(tune.has_value());
  EXPECT_EQ(tune->integer, 1);
  EXPECT_FALSE(cache.get(RemoteNamespace::Binary, "not-a-key").has_value());
  EXPECT_FALSE(cache.put(RemoteNamespace::Binary, "../etc", bytes(1)));
  EXPECT_EQ(w.count(), 0u) << w.all();
}

TEST(RemoteCache, TcpLoopback) {
  RedisServer server({}, /*tcp=*/true);
  START_SERVER(server);
  Warnings w;
  RemoteCache cache(configFor(server.tcpUrl()), w.sink());
  std::string key = keyOf("tcp");
  ASSERT_TRUE(cache.put(RemoteNamespace::Binary, key, bytes(100)));
  EXPECT_EQ(cache.get(RemoteNamespace::Binary, key), bytes(100));
  EXPECT_EQ(w.count(), 0u) << w.all();
}

// A planted entry (its checksum valid, its MAC under another secret) is
// refused: nothing is handed out, one warning for any number of them.
TEST(RemoteCache, PlantedEntriesAreRefusedAndReportedOnce) {
  RedisServer server;
  START_SERVER(server);
  Warnings w;
  RemoteCache cache(configFor(server.unixUrl()), w.sink());
  for (const char* what : {"x", "y", "z"}) {
    std::string key = keyOf(what), name = cache.keyName(RemoteNamespace::Binary, key);
    std::vector<char> forged = rt::encodeRemoteEntry(name, bytes(300), "an attacker's secret, not ours");
    ASSERT_TRUE(server.command({"SET", name, std::string_view(forged.data(), forged.size())}));
    EXPECT_FALSE(cache.get(RemoteNamespace::Binary, key).has_value());
  }
  EXPECT_EQ(cache.counters(RemoteNamespace::Binary).rejects, 3u);
  EXPECT_EQ(cache.counters(RemoteNamespace::Binary).hits, 0u);
  EXPECT_EQ(w.count(), 1u) << w.all();
  EXPECT_EQ(w.count("authentication failed"), 1u) << w.all();
}

TEST(RemoteCache, DamagedAndOversizedEntriesAreRefused) {
  RedisServer server;
  START_SERVER(server);
  Warnings w;
  auto config = configFor(server.unixUrl());
  config.maxEntryBytes = 4096;
  RemoteCache cache(config, w.sink());
  std::string a = keyOf("a"), b = keyOf("b"), c = keyOf("c"), d = keyOf("d");
  ASSERT_TRUE(cache.put(RemoteNamespace::Binary, a, bytes(1000)));
  ASSERT_TRUE(cache.put(RemoteNamespace::Binary, b, bytes(1000)));
  std::string nameA = cache.keyName(RemoteNamespace::Binary, a), nameB = cache.keyName(RemoteNamespace::Binary, b);
  ASSERT_TRUE(server.command({"SETRANGE", nameA, "900", "garbage"}));  // a payload byte: checksum
  auto whole = server.command({"GET", nameB});
  ASSERT_TRUE(whole.has_value());
  ASSERT_TRUE(server.command({"SET", nameB, whole->str.substr(0, 500)}));  // truncated
  ASSERT_TRUE(server.command({"SET", cache.keyName(RemoteNamespace::Binary, c), std::string(5000, 'q')}));
  ASSERT_TRUE(server.command({"LPUSH", cache.keyName(RemoteNamespace::Binary, d), "a list"}));
  for (const auto& k : {a, b, c, d}) EXPECT_FALSE(cache.get(RemoteNamespace::Binary, k).has_value());
  EXPECT_EQ(cache.counters(RemoteNamespace::Binary).rejects, 4u);
  EXPECT_EQ(w.count(), 1u) << w.all();
  // A put replaces the damaged entry.
  ASSERT_TRUE(cache.put(RemoteNamespace::Binary, a, bytes(1000)));
  EXPECT_EQ(cache.get(RemoteNamespace::Binary, a), bytes(1000));
  // One too large to share is not sent, with one warning.
  EXPECT_FALSE(cache.put(RemoteNamespace::Binary, keyOf("big"), bytes(8000)));
  EXPECT_EQ(w.count("larger than"), 1u) << w.all();
}

TEST(RemoteCache, SecretRotation) {
  RedisServer server;
  START_SERVER(server);
  Warnings w;
  const std::string oldSecret = "the-old-secret-0123456789", newSecret = "the-new-secret-0123456789";
  RemoteCache writerOld(configFor(server.unixUrl(), {oldSecret}), w.sink());
  RemoteCache rotating(configFor(server.unixUrl(), {newSecret, oldSecret}), w.sink());
  RemoteCache rotated(configFor(server.unixUrl(), {newSecret}), w.sink());
  std::string key = keyOf("r");
  ASSERT_TRUE(writerOld.put(RemoteNamespace::Binary, key, bytes(64)));
  EXPECT_EQ(rotating.get(RemoteNamespace::Binary, key), bytes(64));
  EXPECT_FALSE(rotated.get(RemoteNamespace::Binary, key).has_value());
  // What a rotating machine writes, a rotated one reads.
  ASSERT_TRUE(rotating.put(RemoteNamespace::Binary, key, bytes(64)));
  EXPECT_EQ(rotated.get(RemoteNamespace::Binary, key), bytes(64));
}

TEST(RemoteCache, LeaseIsExclusiveReleasedByItsHolderAndExpires) {
  RedisServer server;
  START_SERVER(server);
  Warnings w;
  RemoteCache machineA(configFor(server.unixUrl()), w.sink()), machineB(configFor(server.unixUrl()), w.sink());
  std::string key = keyOf("tune me");
  auto lease = machineA.tryAcquireLease(key, 10000);
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->token.size(), 32u);
  EXPECT_FALSE(machineB.tryAcquireLease(key, 10000).has_value()) << "held by A";
  // Only the holder can release it: a stale or guessed token does nothing.
  rt::RemoteLease impostor{key, std::string(32, '0')};
  EXPECT_FALSE(machineB.release(impostor));
  EXPECT_FALSE(machineB.tryAcquireLease(key, 10000).has_value());
  EXPECT_TRUE(machineA.release(*lease));
  EXPECT_FALSE(machineA.release(*lease)) << "already released";
  auto leaseB = machineB.tryAcquireLease(key, 10000);
  ASSERT_TRUE(leaseB.has_value());
  EXPECT_NE(leaseB->token, lease->token);
  EXPECT_FALSE(machineA.release(*lease)) << "A's old lease cannot release B's";
  EXPECT_TRUE(machineB.release(*leaseB));

  // A tuner that crashes never releases: its lease expires by itself.
  std::string other = keyOf("crashed tuner");
  ASSERT_TRUE(machineA.tryAcquireLease(other, 100).has_value());
  EXPECT_FALSE(machineB.tryAcquireLease(other, 100).has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  EXPECT_TRUE(machineB.tryAcquireLease(other, 100).has_value());
  EXPECT_EQ(w.count(), 0u) << w.all();
}

TEST(RemoteCache, AuthWithPasswordAndAclUser) {
  RedisServer server(
      {"--requirepass", "server-password", "--user", "builder", "on", ">builder-password", "~spindle:*", "+@all"});
  START_SERVER(server);
  std::string key = keyOf("auth");
  {
    Warnings w;
    RemoteCache cache(configFor("unix://:server-password@" + server.socketPath()), w.sink());
    ASSERT_TRUE(cache.put(RemoteNamespace::Binary, key, bytes(10)));
    EXPECT_EQ(w.count(), 0u) << w.all();
  }
  {
    Warnings w;
    RemoteCache cache(configFor("unix://builder:builder-password@" + server.socketPath()), w.sink());
    EXPECT_EQ(cache.get(RemoteNamespace::Binary, key), bytes(10));
    EXPECT_EQ(w.count(), 0u) << w.all();
  }
  for (const char* url : {"unix://builder:wrong-password@", "unix://:wrong-password@"}) {
    Warnings w;
    RemoteCache cache(configFor(url + server.socketPath()), w.sink());
    EXPECT_FALSE(cache.get(RemoteNamespace::Binary, key).has_value());
    EXPECT_FALSE(cache.put(RemoteNamespace::Binary, key, bytes(10)));
    EXPECT_TRUE(cache.off());
    EXPECT_EQ(w.count(), 1u) << w.all();
    EXPECT_EQ(w.count("authentication failed"), 1u) << w.all();
  }
  {
    Warnings w;  // no password at all: the server says NOAUTH
    RemoteCache cache(configFor(server.unixUrl()), w.sink());
    EXPECT_FALSE(cache.get(RemoteNamespace::Binary, key).has_value());
    EXPECT_TRUE(cache.off());
    EXPECT_EQ(w.count("asks for authentication"), 1u) << w.all();
  }
}

TEST(RemoteCache, SelectsTheDatabaseAndRefusesABadOne) {
  RedisServer server;
  START_SERVER(server);
  Warnings w;
  RemoteCache db3(configFor(server.unixUrl() + "?db=3"), w.sink()), db0(configFor(server.unixUrl()), w.sink());
  std::string key = keyOf("db");
  ASSERT_TRUE(db3.put(RemoteNamespace::Binary, key, bytes(10)));
  EXPECT_EQ(db3.get(RemoteNamespace::Binary, key), bytes(10));
  EXPECT_FALSE(db0.get(RemoteNamespace::Binary, key).has_value());
  EXPECT_EQ(w.count(), 0u) << w.all();
  RemoteCache bad(configFor(server.unixUrl() + "?db=99"), w.sink());
  EXPECT_FALSE(bad.get(RemoteNamespace::Binary, key).has_value());
  EXPECT_TRUE(bad.off()) << "asking again would not help";
  EXPECT_EQ(w.count("SELECT refused"), 1u) << w.all();
}

// A process that forks (Python's multiprocessing) must not share its
// connection with the child: both would read each other's replies.
TEST(RemoteCache, AForkedChildConnectsAnew) {
  RedisServer server;
  START_SERVER(server);
  Warnings w;
  RemoteCache cache(configFor(server.unixUrl()), w.sink());
  std::vector<std::string> keys;
  for (int i = 0; i < 4; ++i) {
    keys.push_back(keyOf(std::to_string(i)));
    ASSERT_TRUE(cache.put(RemoteNamespace::Binary, keys.back(), bytes(2000 + i, char(i))));
  }
  auto hammer = [&] {
    int wrong = 0;
    for (int round = 0; round < 100; ++round)
      for (int i = 0; i < 4; ++i) wrong += cache.get(RemoteNamespace::Binary, keys[i]) != bytes(2000 + i, char(i));
    return wrong;
  };
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(hammer() == 0 && cache.counters(RemoteNamespace::Binary).rejects == 0 ? 0 : 1);
  EXPECT_EQ(hammer(), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child read wrong entries";
  EXPECT_EQ(cache.counters(RemoteNamespace::Binary).rejects, 0u);
  EXPECT_EQ(w.count(), 0u) << w.all();
}

TEST(RemoteCache, OutOfMemoryRefusesWritesOnly) {
  RedisServer server({"--maxmemory", "2mb", "--maxmemory-policy", "noeviction"});
  START_SERVER(server);
  Warnings w;
  RemoteCache cache(configFor(server.unixUrl()), w.sink());
  std::string small = keyOf("small");
  ASSERT_TRUE(cache.put(RemoteNamespace::Binary, small, bytes(100)));
  // Fill it past maxmemory, then every write is refused with OOM.
  int refused = 0;
  for (int i = 0; i < 8 && refused < 2; ++i)
    refused += !cache.put(RemoteNamespace::Binary, keyOf(std::to_string(i)), bytes(1 << 20));
  EXPECT_EQ(refused, 2);
  EXPECT_EQ(w.count("out of memory"), 1u) << w.all();
  EXPECT_EQ(cache.get(RemoteNamespace::Binary, small), bytes(100)) << "reads go on";
  EXPECT_FALSE(cache.off());
}

TEST(RemoteCache, ReadOnlyReplicaServesReadsOnly) {
  SPINDLE_REQUIRE_REDIS_SERVER();
  // No 5 s wait before the full sync a diskless primary does by default.
  RedisServer primary({"--repl-diskless-sync-delay", "0"}, /*tcp=*/true);
  ASSERT_TRUE(primary.start()) << primary.error();
  RedisServer replica({"--replicaof", "127.0.0.1", std::to_string(primary.port())});
  ASSERT_TRUE(replica.start()) << replica.error();
  Warnings w;
  RemoteCache writer(configFor(primary.unixUrl()), w.sink());
  std::string key = keyOf("replicated");
  ASSERT_TRUE(writer.put(RemoteNamespace::Binary, key, bytes(100)));
  RemoteCache cache(configFor(replica.unixUrl()), w.sink());
  std::optional<std::vector<char>> got;
  for (int i = 0; i < 200 && !got; ++i) {  // until the replica has synced
    got = cache.get(RemoteNamespace::Binary, key);
    if (!got) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(got, bytes(100));
  EXPECT_FALSE(cache.put(RemoteNamespace::Binary, keyOf("other"), bytes(10)));
  EXPECT_FALSE(cache.put(RemoteNamespace::Binary, keyOf("other2"), bytes(10)));
  EXPECT_EQ(w.count("read-only replica"), 1u) << w.all();
  EXPECT_EQ(w.count(), 1u) << w.all();
}

TEST(RemoteCache, ClusterModeIsRefusedClearly) {
  RedisServer server({"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"});
  START_SERVER(server);
  Warnings w;
  RemoteCache cache(configFor(server.unixUrl()), w.sink());
  EXPECT_FALSE(cache.get(RemoteNamespace::Binary, keyOf("k")).has_value());
  EXPECT_FALSE(cache.put(RemoteNamespace::Binary, keyOf("k"), bytes(10)));
  EXPECT_TRUE(cache.off());
  EXPECT_EQ(w.count(), 1u) << w.all();
  EXPECT_EQ(w.count("cluster mode is not supported"), 1u) << w.all();
}

// A key that lives on another node of a real two-node cluster: MOVED.
TEST(RemoteCache, MovedFromAClusterNodeIsRefusedClearly) {
  SPINDLE_REQUIRE_REDIS_SERVER();
  std::vector<std::string> cluster = {"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"};
  RedisServer a(cluster, /*tcp=*/true), b(cluster, /*tcp=*/true);
  ASSERT_TRUE(a.start()) << a.error();
  ASSERT_TRUE(b.start()) << b.error();
  ASSERT_TRUE(a.command({"CLUSTER", "ADDSLOTSRANGE", "0", "8191"}));
  ASSERT_TRUE(b.command({"CLUSTER", "ADDSLOTSRANGE", "8192", "16383"}));
  ASSERT_TRUE(a.command({"CLUSTER", "MEET", "127.0.0.1", std::to_string(b.port())}));
  Warnings w;
  RemoteCache cache(configFor(a.tcpUrl()), w.sink());
  // A key of b's slots; then wait until a knows b owns them.
  std::string key;
  for (int i = 0; key.empty(); ++i) {
    auto slot = a.command({"CLUSTER", "KEYSLOT", cache.keyName(RemoteNamespace::Binary, keyOf(std::to_string(i)))});
    ASSERT_TRUE(slot.has_value());
    if (slot->integer >= 8192) key = keyOf(std::to_string(i));
  }
  std::string name = cache.keyName(RemoteNamespace::Binary, key);
  // A node serves nothing until 2 s after it starts (Redis's writable delay).
  for (int i = 0; i < 1000; ++i) {
    auto r = a.command({"GET", name});
    ASSERT_TRUE(r.has_value());
    if (r->str.rfind("MOVED", 0) == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(cache.get(RemoteNamespace::Binary, key).has_value());
  EXPECT_TRUE(cache.off());
  EXPECT_EQ(w.count(), 1u) << w.all();
  EXPECT_EQ(w.count("(MOVED"), 1u) << w.all();
  EXPECT_EQ(w.count("cluster mode is not supported"), 1u) << w.all();
}

// Two machines publishing one key at once: every read sees one whole,
// authenticated entry, never a mix.
TEST(RemoteCache, RacingWritersLeaveAWholeEntry) {
  RedisServer server;
  START_SERVER(server);
  Warnings w;
  RemoteCache a(configFor(server.unixUrl()), w.sink()), b(configFor(server.unixUrl()), w.sink()),
      reader(configFor(server.unixUrl()), w.sink());
  std::string key = keyOf("race");
  std::vector<char> pa = bytes(20000, 1), pb = bytes(30000, 2);
  std::thread ta([&] {
    for (int i = 0; i < 100; ++i) a.put(RemoteNamespace::Binary, key, pa);
  });
  std::thread tb([&] {
    for (int i = 0; i < 100; ++i) b.put(RemoteNamespace::Binary, key, pb);
  });
  int seen = 0;
  for (int i = 0; i < 100; ++i) {
    auto got = reader.get(RemoteNamespace::Binary, key);
    if (got) {
      ++seen;
      EXPECT_TRUE(*got == pa || *got == pb);
    }
  }
  ta.join();
  tb.join();
  auto last = reader.get(RemoteNamespace::Binary, key);
  ASSERT_TRUE(last.has_value());
  EXPECT_TRUE(*last == pa || *last == pb);
  EXPECT_EQ(reader.counters(RemoteNamespace::Binary).rejects, 0u);
  EXPECT_EQ(a.counters(RemoteNamespace::Binary).stores + b.counters(RemoteNamespace::Binary).stores, 200u);
  EXPECT_EQ(w.count(), 0u) << w.all();
}

}  // namespace
}  // namespace spindle::test
