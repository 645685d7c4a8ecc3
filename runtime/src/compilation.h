// Source to binary for one backend and target, through the disk cache and
// the remote cache behind it: the cache key, the lookups, the compiler call,
// publishing, and the counters.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "backend.h"
#include "disk_cache.h"
#include "remote_cache/remote_cache.h"

namespace spindle::rt {

struct Counters {
  std::atomic<uint64_t> memoryHits{0};
  std::atomic<uint64_t> diskHits{0};
  std::atomic<uint64_t> misses{0};
  std::atomic<uint64_t> compiles{0};
  std::atomic<uint64_t> compileFailures{0};
  std::atomic<uint64_t> compileNanos{0};
  std::atomic<uint64_t> tensorMapFallbacks{0};  // CacheStats::tensorMapFallbacks
};

struct CompiledBinary {
  std::string keyHex;
  std::vector<char> binary;
  CacheOutcome outcome = CacheOutcome::Miss;  // DiskHit, RemoteHit or Miss
  double compileSeconds = 0;
};

// The canonical text that is hashed into the disk key: everything the
// compiler's output depends on, and nothing that varies between runs.
std::string cacheKeyText(BackendKind backend, const std::string& compilerIdentity, const std::string& target,
                         const std::vector<std::string>& options, const std::string& symbol, const std::string& source);

// Whether compiling with `options` writes the source's file names into the
// binary (line tables, debug info).
bool optionsEmbedSourcePaths(const std::vector<std::string>& options);

class BinaryCompiler {
 public:
  // `extraOptions` follow the backend's own (RuntimeOptions::unsafeFpAtomics).
  // `remote` (may be null) is consulted after a disk miss; a hit there is
  // copied to the disk cache, and a binary compiled here is published to it.
  BinaryCompiler(Backend& backend, std::string target, DiskCache* disk, Counters& counters,
                 std::vector<std::string> extraOptions = {}, RemoteCache* remote = nullptr)
      : backend_(backend),
        target_(std::move(target)),
        disk_(disk),
        remote_(remote),
        counters_(counters),
        extraOptions_(std::move(extraOptions)) {}

  std::string keyHex(const std::string& source, const std::string& symbol);
  std::string keyHex(const std::string& source, const std::string& symbol, const std::vector<std::string>& options);
  // Compiles `source` (or finds it on disk). The key hashes `pathFreeSource`,
  // the same text with the module's path replaced by a placeholder
  // (GeneratedKernel::pathFreeSource), so one module gives one key wherever
  // its file lives; options that write the path into the binary (line
  // tables, debug info) make the key hash `source` instead.
  // Throws spindle::Error with the compiler's log when compilation fails;
  // `what` names the kernel in that message.
  CompiledBinary get(const std::string& source, const std::string& pathFreeSource, const std::string& symbol,
                     const std::string& fileName, const std::string& what);

 private:
  std::vector<std::string> options() const;

  Backend& backend_;
  std::string target_;
  DiskCache* disk_;
  RemoteCache* remote_;
  Counters& counters_;
  std::vector<std::string> extraOptions_;
};

}  // namespace spindle::rt
