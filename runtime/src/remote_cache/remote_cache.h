// The second-level cache behind the local disk cache: binaries (and tuning
// results) shared by every machine pointed at one Redis server. A generic
// blob store by namespace and 64-hex key, authenticated (entry_mac.h), with
// leases so that one machine works on a key while the others wait.
//
// Keys: <prefix>:v<format>:<namespace>:<64 hex>, e.g. spindle:v1:bin:3fa9...,
// spindle:v1:tune:..., and spindle:v1:lease:... for leases. Each entry is
// written with a TTL and read with GETRANGE bounded by the size limit, so a
// rogue huge value costs at most that much.
//
// Faults never fail a compile: a command that times out or finds the server
// gone drops the connection (a hiredis context is dead after an error), warns
// once, and the layer stays quiet until `retryMs` has passed; then the next
// use reconnects, and says so. Every call is bounded by `timeoutMs` per
// reply. A cluster node's MOVED/ASK/CLUSTERDOWN or a refused AUTH turns the
// layer off for the process, with one warning; OOM and READONLY refuse writes
// only, with one warning each. Thread-safe: one connection, one mutex.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "entry_mac.h"
#include "redis_client.h"
#include "redis_url.h"

namespace spindle::rt {

enum class RemoteNamespace { Binary, Tuning };
const char* remoteNamespaceTag(RemoteNamespace ns);  // "bin", "tune"

struct RemoteCacheConfig {
  RedisEndpoint endpoint;
  std::vector<std::string> secrets;  // current first; the previous one during a rotation
  int timeoutMs = 100;               // connecting, and waiting for each reply
  int retryMs = 2000;                // after a failure, no new attempt before this has passed
  uint64_t maxEntryBytes = uint64_t(64) << 20;
  uint64_t ttlSeconds = uint64_t(30) * 24 * 3600;
  std::string prefix = "spindle";
};

struct RemoteLease {
  std::string keyHex;
  std::string token;  // 128 random bits: only the holder can release it
};

struct RemoteCounters {
  std::atomic<uint64_t> hits{0};
  std::atomic<uint64_t> misses{0};   // the server answered: no entry
  std::atomic<uint64_t> rejects{0};  // entries refused: MAC, checksum, malformed, too large
  std::atomic<uint64_t> stores{0};
  std::atomic<uint64_t> errors{0};  // calls that found the server unreachable, slow or refusing
};

class RemoteCache {
 public:
  using Warn = std::function<void(const std::string&)>;
  RemoteCache(RemoteCacheConfig config, Warn warn);
  ~RemoteCache();

  // The verified payload, or nullopt (absent, refused, or unreachable).
  std::optional<std::vector<char>> get(RemoteNamespace ns, const std::string& keyHex);
  // Publishes with the TTL; false when it could not.
  bool put(RemoteNamespace ns, const std::string& keyHex, const std::vector<char>& payload);

  // SET NX PX: the lease when no one holds `keyHex`'s, else (or unreachable)
  // nullopt; `*unreachable` (when given) tells the two apart, so that a
  // caller can do the work itself when no one can be asked. A lease expires
  // by itself after `ttlMs`, so a crashed holder's goes.
  std::optional<RemoteLease> tryAcquireLease(const std::string& keyHex, uint64_t ttlMs, bool* unreachable = nullptr);
  // Deletes the lease only if it is still this holder's (compare-and-delete
  // in one script): an expired lease that another machine has since taken is
  // left alone. True when it was deleted.
  bool release(const RemoteLease& lease);

  std::string keyName(RemoteNamespace ns, const std::string& keyHex) const;
  std::string leaseKeyName(const std::string& keyHex) const;
  const RemoteCacheConfig& config() const { return config_; }
  std::string describe() const { return config_.endpoint.display(); }
  bool off() const { return off_.load(); }  // for the rest of the process (cluster, AUTH)
  const RemoteCounters& counters(RemoteNamespace ns) const { return counters_[int(ns)]; }
  void resetCounters();

 private:
  // Runs one command under mu_; nullopt when the layer is off, the server is
  // unreachable, or it is waiting out `retryMs` after a failure.
  std::optional<RedisReply> run(const std::vector<std::string_view>& args);
  bool connect();  // caller holds mu_
  void markDown(std::string why);
  void turnOff(const std::string& why);
  void warnOnce(bool& flag, const std::string& message);
  // A refusal from the server (MOVED, OOM, READONLY, ...): warns as it says.
  void onErrorReply(const std::string& error, const char* command);
  void reject(RemoteNamespace ns, const std::string& name, const std::string& why, bool authentication);

  RemoteCacheConfig config_;
  Warn warn_;
  std::mutex mu_;
  std::unique_ptr<RedisConnection> conn_;
  int connPid_ = 0;  // the process that opened conn_
  std::chrono::steady_clock::time_point retryAt_{};
  bool warnedDown_ = false;
  bool warnedOom_ = false, warnedReadOnly_ = false, warnedOtherError_ = false, warnedTooLarge_ = false;
  bool warnedForged_ = false, warnedDamaged_ = false;
  std::atomic<bool> off_{false};
  RemoteCounters counters_[2];
};

// True for 64 lowercase hex digits, the only keys the layer accepts.
bool isKeyHex(const std::string& keyHex);

}  // namespace spindle::rt
