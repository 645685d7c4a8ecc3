// A redis-server of the test's own: started on a unix socket in a fresh
// directory (or a free loopback port), with no persistence, and killed when
// the object goes (a failed ASSERT included); PR_SET_PDEATHSIG kills it too
// if the test process dies first. Tests that need one skip, saying why,
// when redis-server is not in PATH.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "remote_cache/redis_client.h"

namespace spindle::test {

class RedisServer {
 public:
  // The redis-server in PATH, or "" with `why`.
  static std::string binary(std::string* why = nullptr);

  // `tcp`: listen on 127.0.0.1 at a free port as well as on the socket.
  explicit RedisServer(std::vector<std::string> extraArgs = {}, bool tcp = false);
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  // Starts it and waits (at most 5 s) until it answers PING; false with error().
  bool start();
  // SIGKILL, as a crash: no shutdown, nothing saved.
  void kill();
  bool running() const { return pid_ > 0; }

  std::string unixUrl() const { return "unix://" + socket_; }
  std::string tcpUrl() const { return "redis://127.0.0.1:" + std::to_string(port_) + "/0"; }
  const std::string& socketPath() const { return socket_; }
  int port() const { return port_; }  // 0 without tcp
  const std::string& dir() const { return dir_; }
  const std::string& error() const { return error_; }

  // One command on a connection of its own (planting entries, CLIENT
  // PAUSE, ...); nullopt when the server does not answer.
  std::optional<rt::RedisReply> command(const std::vector<std::string_view>& args,
                                        const std::string& password = "") const;

 private:
  std::vector<std::string> extraArgs_;
  bool tcp_;
  std::string dir_, socket_;
  int port_ = 0;
  pid_t pid_ = -1;
  std::string error_;
};

}  // namespace spindle::test

// Skips the test when there is no redis-server to start.
#define SPINDLE_REQUIRE_REDIS_SERVER()                                                   \
  do {                                                                                   \
    std::string whyNot_;                                                                 \
    if (::spindle::test::RedisServer::binary(&whyNot_).empty()) GTEST_SKIP() << whyNot_; \
  } while (0)
