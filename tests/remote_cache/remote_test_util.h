// Shared by the remote cache tests: a layer pointed at a test server, the
// warnings it gave, keys.
#pragma once

#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "redis_server.h"
#include "remote_cache/remote_cache.h"
#include "sha256.h"

namespace spindle::test {

inline const std::string kSecret = "test-secret-0123456789abcdef";

inline std::string keyOf(const std::string& s) { return rt::toHex(rt::sha256(s.data(), s.size())); }

inline std::vector<char> bytes(size_t n, char seed = 1) {
  std::vector<char> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = char(seed + i * 31);
  return p;
}

// Thread-safe: the layer warns from whichever thread met the fault.
struct Warnings {
  mutable std::mutex mu;
  std::vector<std::string> list;
  std::function<void(const std::string&)> sink() {
    return [this](const std::string& m) {
      std::lock_guard<std::mutex> lock(mu);
      list.push_back(m);
    };
  }
  // Messages containing `part`.
  size_t count(const std::string& part = "warning:") const {
    std::lock_guard<std::mutex> lock(mu);
    size_t n = 0;
    for (const auto& m : list) n += m.find(part) != std::string::npos;
    return n;
  }
  std::string all() const {
    std::lock_guard<std::mutex> lock(mu);
    std::string s;
    for (const auto& m : list) s += m + "\n";
    return s;
  }
};

inline rt::RemoteCacheConfig configFor(const std::string& url, std::vector<std::string> secrets = {kSecret}) {
  std::string why;
  rt::RemoteCacheConfig c;
  auto ep = rt::parseRedisUrl(url, why);
  EXPECT_TRUE(ep.has_value()) << why;
  if (ep) c.endpoint = *ep;
  c.secrets = std::move(secrets);
  c.timeoutMs = 200;
  c.retryMs = 50;
  return c;
}

}  // namespace spindle::test
