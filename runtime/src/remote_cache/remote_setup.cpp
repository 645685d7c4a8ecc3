#include "remote_setup.h"

#include <fmt/format.h>

#include <cstdlib>

#include "../env_number.h"
#include "remote_secret.h"

namespace spindle::rt {

std::unique_ptr<RemoteCache> makeRemoteCache(const std::string& urlOption, const std::vector<std::string>& secrets,
                                             const std::string& secretFile, RemoteCache::Warn warn) {
  std::string url = urlOption;
  const char* where = "RuntimeOptions::remoteCache";
  if (url.empty())
    if (const char* env = std::getenv("SPINDLE_CACHE_REDIS")) url = env, where = "SPINDLE_CACHE_REDIS";
  if (url.empty()) return nullptr;
  auto off = [&](const std::string& why) -> std::unique_ptr<RemoteCache> {
    if (warn) warn(fmt::format("spindle: warning: remote cache off: {}", why));
    return nullptr;
  };
  RemoteCacheConfig config;
  std::string why;
  auto endpoint = parseRedisUrl(url, why);
  // Not the URL itself: it may hold a password.
  if (!endpoint) return off(fmt::format("{}: {}", where, why));
  config.endpoint = *endpoint;
  config.secrets = loadRemoteSecrets(secrets, secretFile, why);
  if (config.secrets.empty()) return off(why);
  if (auto v = envNumber("SPINDLE_CACHE_REDIS_TIMEOUT_MS", 1, 60000, "milliseconds from 1 to 60000"))
    config.timeoutMs = int(*v);
  if (auto v = envNumber("SPINDLE_CACHE_REDIS_RETRY_MS", 0, 3600000, "milliseconds from 0 to 3600000"))
    config.retryMs = int(*v);
  if (auto v = envNumber("SPINDLE_CACHE_REDIS_TTL_S", 1, uint64_t(10) * 365 * 24 * 3600, "seconds"))
    config.ttlSeconds = *v;
  if (auto v = envNumber("SPINDLE_CACHE_REDIS_MAX_BYTES", 1024, uint64_t(512) << 20, "a byte count up to 512 MiB"))
    config.maxEntryBytes = *v;
  if (!hiredisAvailable(&why)) return off(fmt::format("cannot load hiredis: {}", why));
  return std::make_unique<RemoteCache>(std::move(config), std::move(warn));
}

}  // namespace spindle::rt
