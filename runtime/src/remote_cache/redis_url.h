// SPINDLE_CACHE_REDIS: where the remote cache lives. hiredis 0.14 has no URL
// parser, so this is ours:
//   redis://[[user]:password@]host[:port][/db]     TCP (port 6379, db 0 by default)
//   redis://[...@][::1]:6379/0                       an IPv6 literal in brackets
//   unix://[[user]:password@]/path/to/redis.sock[?db=N]   a unix socket
// User and password may be percent-encoded. rediss:// (TLS) is refused:
// Debian's hiredis 0.14 cannot speak TLS, and sending a secret-bearing AUTH in
// the clear to a server the user meant to reach over TLS would be worse than
// not connecting.
#pragma once

#include <optional>
#include <string>

namespace spindle::rt {

struct RedisEndpoint {
  std::string host;  // TCP; empty for a unix socket
  int port = 6379;
  std::string unixPath;  // unix socket; empty for TCP
  std::string user;      // ACL user (Redis 6+); empty: the default user
  std::string password;  // empty: no AUTH
  int db = 0;
  // For messages: the address without the password ("redis://alice@host:6379/0").
  std::string display() const;
};

// The endpoint, or nullopt with `why` saying what is wrong with `url`.
std::optional<RedisEndpoint> parseRedisUrl(const std::string& url, std::string& why);

}  // namespace spindle::rt
