// The remote cache as RuntimeOptions and the environment ask for it:
//   SPINDLE_CACHE_REDIS / RuntimeOptions::remoteCache     the server (redis_url.h)
//   the secret (remote_secret.h)
//   SPINDLE_CACHE_REDIS_TIMEOUT_MS   connect and reply timeout (default 100)
//   SPINDLE_CACHE_REDIS_RETRY_MS     quiet time after a failure (default 2000)
//   SPINDLE_CACHE_REDIS_TTL_S        entry lifetime (default 30 days)
//   SPINDLE_CACHE_REDIS_MAX_BYTES    entry size limit (default 64 MiB)
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "remote_cache.h"

namespace spindle::rt {

// nullptr when no server is named. When one is named but cannot be used (a
// bad or rediss:// URL, no secret, a bad key file), nullptr after one warning
// saying why: the runtime goes on with its local caches.
std::unique_ptr<RemoteCache> makeRemoteCache(const std::string& url, const std::vector<std::string>& secrets,
                                             const std::string& secretFile, RemoteCache::Warn warn);

}  // namespace spindle::rt
