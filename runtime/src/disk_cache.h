// The on-disk binary cache: one file per key under <dir>/v1/<k0k1>/<key>.bin.
//
// Entry format (little-endian):
//   magic "SPNDLBIN" | u32 format version | u32 key length (64) |
//   u64 payload size | key (64 hex chars) | SHA-256 of payload (32 bytes) | payload
// An entry is written to a unique temporary file in the same directory and
// renamed into place, so readers see either nothing or a whole entry. On read
// every field is checked; anything wrong (truncated, foreign, bad checksum,
// another key) is a miss, counted, and the file is removed so the recompiled
// binary replaces it. A failure to write (read-only or full directory) turns
// the disk cache off for this process with one warning; it never fails a compile.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "checked_entry.h"

namespace spindle::rt {

class DiskCache {
 public:
  using Warn = std::function<void(const std::string&)>;
  DiskCache(std::string dir, uint64_t maxBytes, Warn warn);

  bool enabled() const { return enabled_.load(); }
  const std::string& dir() const { return dir_; }
  std::string entryPath(const std::string& keyHex) const;

  // The payload, or nullopt on a miss (absent, unreadable or invalid).
  std::optional<std::vector<char>> load(const std::string& keyHex);
  // Publishes atomically; false when the entry could not be written.
  // `sync`: fsync before the rename, so that a crash does not lose a compile.
  // A copy of an entry fetched from the remote cache skips it (that costs
  // milliseconds, more than the fetch): a crash can then leave a damaged
  // file, which load() rejects like any other, and the fetch is repeated.
  bool store(const std::string& keyHex, const std::vector<char>& payload, bool sync = true);

  uint64_t corruptEntries() const { return corrupt_.load(); }
  uint64_t writeFailures() const { return writeFailures_.load(); }

  // Removes least recently used entries until the directory is under the bound.
  void evict();

  // Test hooks: fail a write with `errnoValue` after `afterBytes` bytes, or
  // run `midWrite` after half of the entry is written (a test kills the
  // process there to simulate a crash).
  struct Faults {
    int errnoValue = 0;
    size_t afterBytes = 0;
    std::function<void()> midWrite;
  };
  void setFaultsForTesting(Faults f) { faults_ = std::move(f); }

  static constexpr char kMagic[8] = {'S', 'P', 'N', 'D', 'L', 'B', 'I', 'N'};
  static constexpr uint32_t kFormatVersion = 1;
  static constexpr size_t kHeaderBytes = kCheckedEntryHeaderBytes;

  // Encodes an entry (exposed for tests that forge files).
  static std::vector<char> encode(const std::string& keyHex, const std::vector<char>& payload);

 private:
  void disable(const std::string& why);
  bool writeAll(int fd, const char* p, size_t n, int& err);

  std::string dir_;
  uint64_t maxBytes_;
  Warn warn_;
  std::atomic<bool> enabled_{true};
  std::atomic<uint64_t> corrupt_{0};
  std::atomic<uint64_t> writeFailures_{0};
  Faults faults_;
  std::mutex mu_;
};

// SPINDLE_CACHE_DIR, else $XDG_CACHE_HOME/spindle, else $HOME/.cache/spindle.
std::string defaultCacheDir();

}  // namespace spindle::rt
