// One connection to a Redis server through hiredis, loaded with dlopen (as
// nvrtc is) so that the runtime has no hard dependency on it: without
// libhiredis the remote cache is off and says why.
//
// hiredis 0.14's blocking API: every command waits for its reply, bounded by
// the socket timeouts set at connect. A context is dead after any transport
// error (hiredis says so, and replies could be misaligned afterwards), so a
// connection that failed once is never used again: the caller drops it and
// connects anew. A context is not thread-safe; the caller serializes.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "redis_url.h"

namespace spindle::rt {

struct RedisReply {
  enum class Kind { Nil, String, Integer, Status, Error, Array };
  Kind kind = Kind::Nil;
  std::string str;  // String, Status, Error
  long long integer = 0;
  std::vector<RedisReply> elements;  // Array
};

class RedisConnection {
 public:
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Connects within `timeoutMs`, sets that timeout on every later read and
  // write, then AUTHs and SELECTs as the endpoint says. nullptr with `why`
  // on failure; `refused` tells a refused AUTH or SELECT (asking again will
  // not help) from a network error.
  static std::unique_ptr<RedisConnection> open(const RedisEndpoint& ep, int timeoutMs, std::string& why,
                                               bool* refused = nullptr);

  // The reply, or nullopt on a transport error (timeout, reset, EOF) with
  // error() saying which; the connection is dead after that. Arguments are
  // binary-safe. SIGPIPE from a server that went away is absorbed here.
  std::optional<RedisReply> command(const std::vector<std::string_view>& args);
  bool dead() const { return dead_; }
  const std::string& error() const { return error_; }

 private:
  explicit RedisConnection(void* context) : context_(context) {}
  void* context_;
  bool dead_ = false;
  std::string error_;
};

// Whether hiredis could be loaded; `why` says what was tried when not.
bool hiredisAvailable(std::string* why = nullptr);
// The shared objects dlsym'd from it, for docs and messages.
const char* hiredisLibraryName();

}  // namespace spindle::rt
