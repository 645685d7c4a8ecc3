// Source to binary for one backend and target, through the disk cache: the
// cache key, the lookup, the compiler call, publishing, and the counters.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "backend.h"
#include "disk_cache.h"

namespace spindle::rt {

struct Counters {
  std::atomic<uint64_t> memoryHits{0};
  std::atomic<uint64_t> diskHits{0};
  std::atomic<uint64_t> misses{0};
  std::atomic<uint64_t> compiles{0};
  std::atomic<uint64_t> compileFailures{0};
  std::atomic<uint64_t> compileNanos{0};
};

struct CompiledBinary {
  std::string keyHex;
  std::vector<char> binary;
  CacheOutcome outcome = CacheOutcome::Miss;  // DiskHit or Miss
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
  BinaryCompiler(Backend& backend, std::string target, DiskCache* disk, Counters& counters,
                 std::vector<std::string> extraOptions = {})
      : backend_(backend),
        target_(std::move(target)),
        disk_(disk),
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
  Counters& counters_;
  std::vector<std::string> extraOptions_;
};

}  // namespace spindle::rt
