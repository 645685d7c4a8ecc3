#include "remote_cache.h"

#include <fmt/format.h>
#include <unistd.h>

#include <random>

namespace spindle::rt {
namespace {

// Deletes KEYS[1] only while it still holds ARGV[1], atomically on the server.
constexpr const char* kReleaseScript =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

bool startsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

std::string randomToken() {
  std::random_device rd;  // the kernel's generator: a token another machine cannot guess
  std::string out;
  for (int i = 0; i < 4; ++i) out += fmt::format("{:08x}", uint32_t(rd()));
  return out;
}

}  // namespace

const char* remoteNamespaceTag(RemoteNamespace ns) { return ns == RemoteNamespace::Binary ? "bin" : "tune"; }

bool isKeyHex(const std::string& keyHex) {
  if (keyHex.size() != 64) return false;
  for (char c : keyHex)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

RemoteCache::RemoteCache(RemoteCacheConfig config, Warn warn) : config_(std::move(config)), warn_(std::move(warn)) {}
RemoteCache::~RemoteCache() = default;

void RemoteCache::resetCounters() {
  for (RemoteCounters& c : counters_) c.hits = c.misses = c.rejects = c.stores = c.errors = 0;
}

std::string RemoteCache::keyName(RemoteNamespace ns, const std::string& keyHex) const {
  return fmt::format("{}:v{}:{}:{}", config_.prefix, kRemoteFormatVersion, remoteNamespaceTag(ns), keyHex);
}

std::string RemoteCache::leaseKeyName(const std::string& keyHex) const {
  return fmt::format("{}:v{}:lease:{}", config_.prefix, kRemoteFormatVersion, keyHex);
}

void RemoteCache::warnOnce(bool& flag, const std::string& message) {
  if (flag) return;
  flag = true;
  if (warn_) warn_(message);
}

void RemoteCache::markDown(std::string why) {  // by value: it may be conn_'s own error()
  conn_.reset();
  retryAt_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(config_.retryMs);
  if (!warnedDown_ && warn_)
    warn_(fmt::format(
        "spindle: warning: remote cache {} unavailable ({}); using the local cache only, retrying every {} ms",
        describe(), why, config_.retryMs));
  warnedDown_ = true;
}

void RemoteCache::turnOff(const std::string& why) {
  conn_.reset();
  if (!off_.exchange(true) && warn_)
    warn_(fmt::format("spindle: warning: remote cache {} turned off for this process: {}", describe(), why));
}

bool RemoteCache::connect() {
  // A forked child must not share its parent's socket: replies would go to
  // whichever process reads first. It connects anew (closing only its copy).
  if (conn_ && connPid_ != ::getpid()) conn_.reset();
  if (conn_) return true;
  if (std::chrono::steady_clock::now() < retryAt_) return false;
  std::string why;
  bool refused = false;
  conn_ = RedisConnection::open(config_.endpoint, config_.timeoutMs, why, &refused);
  connPid_ = ::getpid();
  if (!conn_) {
    if (refused && why.rfind("AUTH", 0) == 0)
      turnOff(fmt::format("authentication failed ({}); check the user and password in the URL", why));
    else if (refused) turnOff(why);
    else if (!hiredisAvailable()) turnOff(why);
    else markDown(why);
    return false;
  }
  return true;
}

std::optional<RedisReply> RemoteCache::run(const std::vector<std::string_view>& args) {
  if (off_ || !connect()) return std::nullopt;
  std::optional<RedisReply> reply = conn_->command(args);
  if (!reply) {
    markDown(conn_->error());
    return reply;
  }
  // Back only once it answers: a paused server still accepts connections.
  if (warnedDown_ && warn_) warn_(fmt::format("spindle: note: remote cache {} is reachable again", describe()));
  warnedDown_ = false;
  return reply;
}

void RemoteCache::onErrorReply(const std::string& error, const char* command) {
  if (startsWith(error, "MOVED") || startsWith(error, "ASK ") || startsWith(error, "CLUSTERDOWN") ||
      startsWith(error, "CROSSSLOT"))
    turnOff(
        fmt::format("the server is a Redis Cluster node ({}), and cluster mode is not supported: point "
                    "SPINDLE_CACHE_REDIS at a standalone server (or a proxy that routes keys)",
                    error));
  else if (startsWith(error, "NOAUTH") || startsWith(error, "WRONGPASS"))
    turnOff(fmt::format("the server asks for authentication ({}): give redis://user:password@host", error));
  else if (startsWith(error, "OOM"))
    warnOnce(warnedOom_, fmt::format("spindle: warning: remote cache {} is out of memory and refuses writes ({}); "
                                     "entries are not shared until it has room (maxmemory-policy allkeys-lru "
                                     "evicts old entries instead)",
                                     describe(), error));
  else if (startsWith(error, "READONLY"))
    warnOnce(warnedReadOnly_,
             fmt::format("spindle: warning: remote cache {} is a read-only replica ({}); entries are read from it "
                         "but not shared: point SPINDLE_CACHE_REDIS at the primary",
                         describe(), error));
  else
    warnOnce(warnedOtherError_,
             fmt::format("spindle: warning: remote cache {} refused {}: {}", describe(), command, error));
}

void RemoteCache::reject(RemoteNamespace ns, const std::string& name, const std::string& why, bool authentication) {
  ++counters_[int(ns)].rejects;
  // What the caller does instead: BinaryCompiler compiles, a tuner tunes.
  const char* instead = ns == RemoteNamespace::Binary ? "the kernel is compiled here" : "it is computed here";
  std::lock_guard<std::mutex> lock(mu_);
  if (authentication)
    warnOnce(warnedForged_,
             fmt::format("spindle: warning: remote cache entry {} on {} refused: {}; it is not used and {} (an "
                         "entry written under another secret, or planted; later refusals are counted in "
                         "CacheStats::remoteRejects)",
                         name, describe(), why, instead));
  else
    warnOnce(warnedDamaged_, fmt::format("spindle: warning: remote cache entry {} on {} is invalid ({}); {} and "
                                         "replaces it (later ones are counted in CacheStats::remoteRejects)",
                                         name, describe(), why, instead));
}

std::optional<std::vector<char>> RemoteCache::get(RemoteNamespace ns, const std::string& keyHex) {
  RemoteCounters& c = counters_[int(ns)];
  if (!isKeyHex(keyHex)) return std::nullopt;
  const std::string name = keyName(ns, keyHex);
  // GETRANGE (inclusive end) returns at most maxEntryBytes + 1 bytes: one
  // more than allowed tells an oversized value without reading all of it.
  // A missing key reads as "".
  const std::string end = std::to_string(config_.maxEntryBytes);
  std::optional<RedisReply> reply;
  {
    std::lock_guard<std::mutex> lock(mu_);
    reply = run({"GETRANGE", name, "0", end});
    if (reply && reply->kind == RedisReply::Kind::Error && !startsWith(reply->str, "WRONGTYPE"))
      onErrorReply(reply->str, "GETRANGE");
  }
  if (!reply || (reply->kind == RedisReply::Kind::Error && !startsWith(reply->str, "WRONGTYPE"))) {
    ++c.errors;
    return std::nullopt;
  }
  if (reply->kind != RedisReply::Kind::String) {
    reject(ns, name, "not a string value", false);
    return std::nullopt;
  }
  if (reply->str.empty()) {
    ++c.misses;
    return std::nullopt;
  }
  if (reply->str.size() > config_.maxEntryBytes) {
    reject(ns, name, fmt::format("larger than the {}-byte limit", config_.maxEntryBytes), false);
    return std::nullopt;
  }
  std::vector<char> payload;
  EntryCheck check = decodeRemoteEntry(name, reply->str, config_.secrets, payload);
  if (check != EntryCheck::Ok) {
    reject(ns, name, entryCheckName(check), check == EntryCheck::BadMac);
    return std::nullopt;
  }
  ++c.hits;
  return payload;
}

bool RemoteCache::put(RemoteNamespace ns, const std::string& keyHex, const std::vector<char>& payload) {
  RemoteCounters& c = counters_[int(ns)];
  if (!isKeyHex(keyHex) || off_) return false;
  const std::string name = keyName(ns, keyHex);
  std::vector<char> entry = encodeRemoteEntry(name, payload, config_.secrets.at(0));
  std::lock_guard<std::mutex> lock(mu_);
  if (entry.size() > config_.maxEntryBytes) {
    warnOnce(warnedTooLarge_, fmt::format("spindle: warning: not sharing {} ({} bytes) on remote cache {}: larger "
                                          "than the {}-byte limit (SPINDLE_CACHE_REDIS_MAX_BYTES)",
                                          name, entry.size(), describe(), config_.maxEntryBytes));
    return false;
  }
  const std::string ttl = std::to_string(config_.ttlSeconds * 1000);
  // A plain SET: two machines racing on one key write equal binaries, each
  // whole and authenticated, and the last one stays.
  std::optional<RedisReply> reply = run({"SET", name, std::string_view(entry.data(), entry.size()), "PX", ttl});
  if (reply && reply->kind == RedisReply::Kind::Status) {
    ++c.stores;
    return true;
  }
  if (reply && reply->kind == RedisReply::Kind::Error) onErrorReply(reply->str, "SET");
  ++c.errors;
  return false;
}

std::optional<RemoteLease> RemoteCache::tryAcquireLease(const std::string& keyHex, uint64_t ttlMs, bool* unreachable) {
  if (unreachable) *unreachable = true;
  if (!isKeyHex(keyHex) || ttlMs == 0) return std::nullopt;
  RemoteLease lease{keyHex, randomToken()};
  const std::string name = leaseKeyName(keyHex), ttl = std::to_string(ttlMs);
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<RedisReply> reply = run({"SET", name, lease.token, "NX", "PX", ttl});
  if (reply && reply->kind == RedisReply::Kind::Status) {
    if (unreachable) *unreachable = false;
    return lease;
  }
  if (reply && reply->kind == RedisReply::Kind::Error) onErrorReply(reply->str, "SET NX");
  if (!reply || reply->kind == RedisReply::Kind::Error) {
    ++counters_[int(RemoteNamespace::Tuning)].errors;
    return std::nullopt;
  }
  if (unreachable) *unreachable = false;
  return std::nullopt;  // Nil: another machine holds it
}

bool RemoteCache::release(const RemoteLease& lease) {
  if (!isKeyHex(lease.keyHex)) return false;
  const std::string name = leaseKeyName(lease.keyHex);
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<RedisReply> reply = run({"EVAL", kReleaseScript, "1", name, lease.token});
  if (reply && reply->kind == RedisReply::Kind::Integer) return reply->integer == 1;
  if (reply && reply->kind == RedisReply::Kind::Error) onErrorReply(reply->str, "EVAL");
  ++counters_[int(RemoteNamespace::Tuning)].errors;
  return false;
}

}  // namespace spindle::rt
