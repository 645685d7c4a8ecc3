#include "redis_client.h"

#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

#include <mutex>

#include "../dynlib.h"

#if SPINDLE_HAVE_HIREDIS_HEADERS
#include <hiredis/hiredis.h>
#define SPINDLE_STR2(x) #x
#define SPINDLE_STR(x) SPINDLE_STR2(x)
// The soname the header describes: the structs read below (redisContext's
// err and errstr, redisReply) have this library's layout, which hiredis
// changed in 1.0. Loading any other version would misread them.
#define SPINDLE_HIREDIS_SONAME "libhiredis.so." SPINDLE_STR(HIREDIS_SONAME)
#endif

namespace spindle::rt {

#if SPINDLE_HAVE_HIREDIS_HEADERS

namespace {

// The six entry points the remote cache uses.
struct HiredisApi {
  DynLib lib;
  redisContext* (*connectWithTimeout)(const char*, int, const struct timeval) = nullptr;
  redisContext* (*connectUnixWithTimeout)(const char*, const struct timeval) = nullptr;
  int (*setTimeout)(redisContext*, const struct timeval) = nullptr;
  void* (*commandArgv)(redisContext*, int, const char**, const size_t*) = nullptr;
  void (*freeReplyObject)(void*) = nullptr;
  void (*free)(redisContext*) = nullptr;
  std::string error;
};

const HiredisApi* api(std::string* why) {
  static HiredisApi* loaded = [] {
    auto* a = new HiredisApi;  // never freed: the library stays loaded (dynlib.h)
    if (!a->lib.open({SPINDLE_HIREDIS_SONAME})) {
      a->error = a->lib.error() + "\n  (Debian: apt-get install libhiredis0.14)";
      return a;
    }
    std::string missing;
    auto need = [&](auto& fp, const char* name) {
      if (!a->lib.sym(fp, name)) missing += std::string(missing.empty() ? "" : ", ") + name;
    };
    need(a->connectWithTimeout, "redisConnectWithTimeout");
    need(a->connectUnixWithTimeout, "redisConnectUnixWithTimeout");
    need(a->setTimeout, "redisSetTimeout");
    need(a->commandArgv, "redisCommandArgv");
    need(a->freeReplyObject, "freeReplyObject");
    need(a->free, "redisFree");
    if (!missing.empty()) a->error = fmt::format("{} lacks {}", a->lib.path(), missing);
    return a;
  }();
  if (!loaded->error.empty()) {
    if (why) *why = loaded->error;
    return nullptr;
  }
  return loaded;
}

RedisReply convert(const redisReply* r) {
  RedisReply out;
  switch (r->type) {
    case REDIS_REPLY_STRING: out.kind = RedisReply::Kind::String; break;
    case REDIS_REPLY_STATUS: out.kind = RedisReply::Kind::Status; break;
    case REDIS_REPLY_ERROR: out.kind = RedisReply::Kind::Error; break;
    case REDIS_REPLY_INTEGER: out.kind = RedisReply::Kind::Integer; break;
    case REDIS_REPLY_ARRAY: out.kind = RedisReply::Kind::Array; break;
    default: out.kind = RedisReply::Kind::Nil; break;
  }
  if (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS || r->type == REDIS_REPLY_ERROR)
    out.str.assign(r->str, r->len);
  out.integer = r->integer;
  if (r->type == REDIS_REPLY_ARRAY)
    for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(convert(r->element[i]));
  return out;
}

// hiredis writes with write(2): a server that went away raises SIGPIPE,
// whose default action kills the process. Block it on this thread for the
// call and discard one it raised, leaving the process's disposition alone.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    wasPending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeGuard() {
    if (!wasPending_) {
      struct timespec zero = {0, 0};
      while (sigtimedwait(&pipe_, nullptr, &zero) > 0) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t pipe_, old_;
  bool wasPending_ = false;
};

}  // namespace

bool hiredisAvailable(std::string* why) { return api(why) != nullptr; }
const char* hiredisLibraryName() { return SPINDLE_HIREDIS_SONAME; }

RedisConnection::~RedisConnection() {
  if (context_) api(nullptr)->free(static_cast<redisContext*>(context_));
}

std::unique_ptr<RedisConnection> RedisConnection::open(const RedisEndpoint& ep, int timeoutMs, std::string& why,
                                                       bool* refused) {
  if (refused) *refused = false;
  const HiredisApi* h = api(&why);
  if (!h) return nullptr;
  struct timeval tv;
  tv.tv_sec = timeoutMs / 1000;
  tv.tv_usec = (timeoutMs % 1000) * 1000;
  redisContext* c = nullptr;
  {
    SigpipeGuard guard;
    c = ep.unixPath.empty() ? h->connectWithTimeout(ep.host.c_str(), ep.port, tv)
                            : h->connectUnixWithTimeout(ep.unixPath.c_str(), tv);
  }
  if (!c) {
    why = "out of memory";
    return nullptr;
  }
  if (c->err) {
    why = c->errstr;
    h->free(c);
    return nullptr;
  }
  std::unique_ptr<RedisConnection> conn(new RedisConnection(c));
  if (h->setTimeout(c, tv) != REDIS_OK) {
    why = c->errstr[0] ? c->errstr : "cannot set the socket timeout";
    return nullptr;
  }
  auto expectOk = [&](std::vector<std::string_view> args, const char* what) {
    auto r = conn->command(args);
    if (!r) {
      why = fmt::format("{}: {}", what, conn->error());
      return false;
    }
    if (r->kind == RedisReply::Kind::Error) {
      why = fmt::format("{} refused: {}", what, r->str);
      if (refused) *refused = true;
      return false;
    }
    return true;
  };
  if (!ep.password.empty()) {
    std::vector<std::string_view> args = {"AUTH"};
    if (!ep.user.empty()) args.push_back(ep.user);
    args.push_back(ep.password);
    if (!expectOk(args, "AUTH")) return nullptr;
  }
  if (ep.db != 0) {
    std::string db = std::to_string(ep.db);
    if (!expectOk({"SELECT", db}, "SELECT")) return nullptr;
  }
  return conn;
}

std::optional<RedisReply> RedisConnection::command(const std::vector<std::string_view>& args) {
  if (dead_) return std::nullopt;
  const HiredisApi* h = api(nullptr);
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (auto a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* c = static_cast<redisContext*>(context_);
  void* raw;
  {
    SigpipeGuard guard;
    raw = h->commandArgv(c, int(argv.size()), argv.data(), lens.data());
  }
  if (!raw || c->err) {
    dead_ = true;
    error_ = c->err ? std::string(c->errstr) : "no reply";
    if (error_ == "Resource temporarily unavailable") error_ = "timed out";
    if (raw) h->freeReplyObject(raw);
    return std::nullopt;
  }
  RedisReply out = convert(static_cast<redisReply*>(raw));
  h->freeReplyObject(raw);
  return out;
}

#else  // !SPINDLE_HAVE_HIREDIS_HEADERS

namespace {
const char* kNoHeaders = "this runtime was built without hiredis's headers (Debian: libhiredis-dev)";
}

bool hiredisAvailable(std::string* why) {
  if (why) *why = kNoHeaders;
  return false;
}
const char* hiredisLibraryName() { return "libhiredis"; }
RedisConnection::~RedisConnection() = default;
std::unique_ptr<RedisConnection> RedisConnection::open(const RedisEndpoint&, int, std::string& why, bool* refused) {
  if (refused) *refused = false;
  why = kNoHeaders;
  return nullptr;
}
std::optional<RedisReply> RedisConnection::command(const std::vector<std::string_view>&) { return std::nullopt; }

#endif

}  // namespace spindle::rt
