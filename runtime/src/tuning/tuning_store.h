// Where tuning results live between processes: opaque byte blobs keyed by a
// 64-hex key, in <cache dir>/tune/v1/<k0k1>/<key>.tune, beside the binary
// cache but outside its directory, so the binary cache's size eviction
// never drops a tuning result (they are a few hundred bytes each).
//
// Entry format (little-endian), as the binary cache's:
//   magic "SPNDLTUN" | u32 format version | u32 key length (64) |
//   u64 payload size | key | SHA-256 of payload (32 bytes) | payload
// Written to a unique temporary file and renamed into place; a reader sees
// nothing or a whole entry, and rejects (and removes) anything that fails a
// check.
//
// Leases: the process that tunes a key first creates <key>.lease
// exclusively (O_EXCL); others see it held and wait for the result or use
// the default. A lease older than `staleSeconds` (its process died) is
// broken. This class is the one seam for another backing store (a shared
// service): get, put, tryLease, releaseLease and keys are all the tuner uses.
//
// With a remote cache (setRemote: Redis, docs/runtime.md) results are shared
// between machines too: a local miss asks the remote layer (and keeps what
// it finds on disk), a result is published there, and a lease is taken on
// both, so one machine of many tunes a key while the others use the default
// until its result appears. When the remote layer cannot answer, the local
// lease alone decides, as without one: a machine never waits on a server
// that is down.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "remote_cache/remote_cache.h"

namespace spindle::rt {

class TuningStore {
 public:
  using Warn = std::function<void(const std::string&)>;
  // `dir` empty: no store (get misses, put fails, every lease is granted).
  explicit TuningStore(std::string dir, Warn warn = {}, double staleSeconds = 120);

  bool enabled() const { return !dir_.empty(); }
  // Shares results and leases through `remote` (owned by the runtime; may be
  // null). Set once, before the store is used.
  void setRemote(RemoteCache* remote) { remote_ = remote; }
  const std::string& dir() const { return dir_; }
  std::string entryPath(const std::string& keyHex) const;

  std::optional<std::vector<char>> get(const std::string& keyHex);
  bool put(const std::string& keyHex, const std::vector<char>& blob);
  // True when this process may tune `keyHex` (and must release it).
  bool tryLease(const std::string& keyHex);
  void releaseLease(const std::string& keyHex);
  // Every key with an entry (export).
  std::vector<std::string> keys() const;

  uint64_t corruptEntries() const { return corrupt_.load(); }

  static constexpr char kMagic[8] = {'S', 'P', 'N', 'D', 'L', 'T', 'U', 'N'};
  static constexpr uint32_t kFormatVersion = 1;
  static constexpr size_t kHeaderBytes = 8 + 4 + 4 + 8 + 64 + 32;
  static std::vector<char> encode(const std::string& keyHex, const std::vector<char>& blob);

 private:
  std::string leasePath(const std::string& keyHex) const;
  std::optional<std::vector<char>> getLocal(const std::string& keyHex);
  bool putLocal(const std::string& keyHex, const std::vector<char>& blob);
  bool tryLocalLease(const std::string& keyHex);

  RemoteCache* remote_ = nullptr;
  std::mutex leasesMu_;
  std::map<std::string, RemoteLease> remoteLeases_;  // held here, by key
  std::string dir_;
  Warn warn_;
  double staleSeconds_;
  std::atomic<uint64_t> corrupt_{0};
};

// Whether `s` is a key: 64 lowercase hex digits.
bool isTuningKey(const std::string& s);

}  // namespace spindle::rt
