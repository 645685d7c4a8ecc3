#include "redis_url.h"

#include <fmt/format.h>

#include <cctype>

namespace spindle::rt {
namespace {

bool parseInt(const std::string& s, int min, int max, int& out) {
  if (s.empty() || s.size() > 9) return false;
  int v = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    v = v * 10 + (c - '0');
  }
  if (v < min || v > max) return false;
  out = v;
  return true;
}

// %XX escapes; false on a malformed one.
bool percentDecode(const std::string& s, std::string& out) {
  out.clear();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return false;
    auto hex = [](char c) {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
    if (hi < 0 || lo < 0) return false;
    out += char(hi * 16 + lo);
    i += 2;
  }
  return true;
}

// "user:password" (either may be empty) into the endpoint.
bool parseUserInfo(const std::string& info, RedisEndpoint& ep, std::string& why) {
  size_t colon = info.find(':');
  std::string user = colon == std::string::npos ? std::string() : info.substr(0, colon);
  // "redis://password@host" (no colon) is the password alone, as redis-cli reads it.
  std::string password = colon == std::string::npos ? info : info.substr(colon + 1);
  if (!percentDecode(user, ep.user) || !percentDecode(password, ep.password)) {
    why = "a malformed %-escape in the user or password";
    return false;
  }
  if (!ep.user.empty() && ep.password.empty()) {
    why = "a user without a password (write redis://user:password@host)";
    return false;
  }
  return true;
}

}  // namespace

std::string RedisEndpoint::display() const {
  std::string who = user.empty() ? (password.empty() ? "" : ":***@") : user + ":***@";
  if (!unixPath.empty()) return fmt::format("unix://{}{}?db={}", who, unixPath, db);
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return fmt::format("redis://{}{}:{}/{}", who, h, port, db);
}

std::optional<RedisEndpoint> parseRedisUrl(const std::string& url, std::string& why) {
  RedisEndpoint ep;
  auto fail = [&](const std::string& w) -> std::optional<RedisEndpoint> {
    why = w;
    return std::nullopt;
  };
  size_t schemeEnd = url.find("://");
  if (schemeEnd == std::string::npos)
    return fail("expected redis://[user:password@]host:port/db or unix:///path/to/redis.sock");
  std::string scheme = url.substr(0, schemeEnd);
  std::string rest = url.substr(schemeEnd + 3);
  if (scheme == "rediss")
    return fail(
        "rediss:// (TLS) is not supported: the hiredis this runtime uses (0.14) has no TLS; reach the server "
        "through a TLS tunnel (stunnel, spiped) and give its local end as redis://");
  if (scheme != "redis" && scheme != "unix")
    return fail(fmt::format("unknown scheme '{}://' (expected redis:// or unix://)", scheme));

  // User info: up to the last '@' (a password may contain '@' percent-encoded only,
  // but be lenient with a raw one).
  size_t at = rest.rfind('@');
  if (at != std::string::npos) {
    if (!parseUserInfo(rest.substr(0, at), ep, why)) return std::nullopt;
    rest = rest.substr(at + 1);
  }

  if (scheme == "unix") {
    size_t q = rest.find('?');
    std::string path = rest.substr(0, q);
    if (path.empty() || path[0] != '/')
      return fail("a unix:// URL needs an absolute socket path: unix:///run/redis.sock");
    ep.unixPath = path;
    if (q != std::string::npos) {
      std::string query = rest.substr(q + 1);
      if (query.rfind("db=", 0) != 0 || !parseInt(query.substr(3), 0, 1 << 20, ep.db))
        return fail(fmt::format("unknown query '{}' (expected ?db=N)", query));
    }
    return ep;
  }

  size_t slash = rest.find('/');
  std::string hostPort = rest.substr(0, slash);
  if (slash != std::string::npos) {
    std::string db = rest.substr(slash + 1);
    if (!db.empty() && !parseInt(db, 0, 1 << 20, ep.db)) return fail(fmt::format("database '{}' is not a number", db));
  }
  std::string port;
  if (!hostPort.empty() && hostPort[0] == '[') {
    size_t close = hostPort.find(']');
    if (close == std::string::npos) return fail("an IPv6 address without its closing ']'");
    ep.host = hostPort.substr(1, close - 1);
    std::string after = hostPort.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return fail(fmt::format("unexpected '{}' after the address", after));
      port = after.substr(1);
    }
  } else {
    size_t colon = hostPort.find(':');
    ep.host = hostPort.substr(0, colon);
    if (colon != std::string::npos) port = hostPort.substr(colon + 1);
  }
  if (ep.host.empty()) return fail("no host");
  if (!port.empty() && !parseInt(port, 1, 65535, ep.port))
    return fail(fmt::format("port '{}' is not a number from 1 to 65535", port));
  return ep;
}

}  // namespace spindle::rt
