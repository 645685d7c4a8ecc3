#include "compilation.h"

#include <fmt/format.h>

#include <chrono>

#include "sha256.h"

#ifndef SPINDLE_VERSION
#define SPINDLE_VERSION "unknown"
#endif

namespace spindle::rt {

std::string cacheKeyText(BackendKind backend, const std::string& compilerIdentity, const std::string& target,
                         const std::vector<std::string>& options, const std::string& symbol,
                         const std::string& source) {
  std::string text =
      fmt::format("spindle-binary-cache {}\nspindle {}\nbackend {}\ncompiler {}\ntarget {}\nsymbol {}\n",
                  DiskCache::kFormatVersion, SPINDLE_VERSION, backendName(backend), compilerIdentity, target, symbol);
  for (const auto& o : options) text += fmt::format("option {}\n", o);
  text += fmt::format("source {}\n", source.size());
  text += source;
  return text;
}

std::vector<std::string> BinaryCompiler::options() const {
  std::vector<std::string> all = backend_.compileOptions(target_);
  all.insert(all.end(), extraOptions_.begin(), extraOptions_.end());
  return all;
}

std::string BinaryCompiler::keyHex(const std::string& source, const std::string& symbol) {
  return keyHex(source, symbol, options());
}

std::string BinaryCompiler::keyHex(const std::string& source, const std::string& symbol,
                                   const std::vector<std::string>& options) {
  std::string text = cacheKeyText(backend_.kind(), backend_.compilerIdentity(), target_, options, symbol, source);
  return toHex(sha256(text.data(), text.size()));
}

bool optionsEmbedSourcePaths(const std::vector<std::string>& options) {
  for (const auto& o : options)
    if (o == "-G" || o == "--device-debug" || o == "-lineinfo" || o == "--generate-line-info" || o.rfind("-g", 0) == 0)
      return true;
  return false;
}

CompiledBinary BinaryCompiler::get(const std::string& source, const std::string& pathFreeSource,
                                   const std::string& symbol, const std::string& fileName, const std::string& what) {
  CompiledBinary out;
  const std::vector<std::string> options = this->options();
  out.keyHex = keyHex(optionsEmbedSourcePaths(options) ? source : pathFreeSource, symbol, options);
  if (disk_) {
    if (auto bin = disk_->load(out.keyHex)) {
      ++counters_.diskHits;
      out.binary = std::move(*bin);
      out.outcome = CacheOutcome::DiskHit;
      return out;
    }
  }
  // The remote entry is authenticated and checksummed before it is handed
  // out (remote_cache/entry_mac.h); the key is the same SHA-256 of
  // everything the binary depends on.
  if (remote_) {
    if (auto bin = remote_->get(RemoteNamespace::Binary, out.keyHex)) {
      out.binary = std::move(*bin);
      out.outcome = CacheOutcome::RemoteHit;
      if (disk_) disk_->store(out.keyHex, out.binary, /*sync=*/false);
      return out;
    }
  }
  ++counters_.misses;
  ++counters_.compiles;
  auto start = std::chrono::steady_clock::now();
  CompileOutput result = backend_.compile(source, fileName, symbol, options);
  auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  counters_.compileNanos += uint64_t(nanos);
  if (!result.ok) {
    ++counters_.compileFailures;
    throw Error(fmt::format("{}: compiling for {} with {} failed:\n{}", what, target_, backend_.compilerIdentity(),
                            result.log));
  }
  out.binary = std::move(result.binary);
  out.compileSeconds = double(nanos) * 1e-9;
  if (disk_) disk_->store(out.keyHex, out.binary);
  // Synchronous, bounded by the remote cache's timeout (100 ms by default),
  // and nothing at all while the server is down and waiting to be retried.
  if (remote_) remote_->put(RemoteNamespace::Binary, out.keyHex, out.binary);
  return out;
}

}  // namespace spindle::rt
