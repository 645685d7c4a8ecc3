#include "redis_server.h"

#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

namespace spindle::test {
namespace {

// Whether `port` (0: any) can be bound on 127.0.0.1 now; the port bound.
int bindLoopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(uint16_t(port));
  socklen_t len = sizeof a;
  int bound = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    bound = ntohs(a.sin_port);
  ::close(fd);
  return bound;
}

// A port nothing listens on now (the kernel's pick), with port + 10000
// free too: a cluster node listens there for its bus.
int freeLoopbackPort() {
  for (int tries = 0; tries < 100; ++tries) {
    int port = bindLoopback(0);
    if (port > 0 && port + 10000 <= 65535 && bindLoopback(port + 10000) == port + 10000) return port;
  }
  return 0;
}

}  // namespace

std::string RedisServer::binary(std::string* why) {
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "";
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find(':', start);
    std::string dir = p.substr(start, end == std::string::npos ? std::string::npos : end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/redis-server";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (why) *why = "redis-server is not in PATH (Debian: apt-get install redis-server; scripts/setup.sh does)";
  return "";
}

RedisServer::RedisServer(std::vector<std::string> extraArgs, bool tcp) : extraArgs_(std::move(extraArgs)), tcp_(tcp) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "spindle-redis-XXXXXX").string();
  if (::mkdtemp(tmpl.data())) dir_ = tmpl;
  socket_ = dir_ + "/redis.sock";
}

RedisServer::~RedisServer() {
  kill();
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

bool RedisServer::start() {
  std::string exe = binary(&error_);
  if (exe.empty() || dir_.empty()) return false;
  if (tcp_ && port_ == 0) port_ = freeLoopbackPort();
  std::vector<std::string> args = {exe,
                                   "--port",
                                   std::to_string(tcp_ ? port_ : 0),
                                   "--bind",
                                   "127.0.0.1",
                                   "--unixsocket",
                                   socket_,
                                   "--unixsocketperm",
                                   "700",
                                   "--save",
                                   "",
                                   "--appendonly",
                                   "no",
                                   "--dir",
                                   dir_,
                                   "--logfile",
                                   dir_ + "/redis.log",
                                   "--daemonize",
                                   "no"};
  args.insert(args.end(), extraArgs_.begin(), extraArgs_.end());
  pid_t pid = ::fork();
  if (pid < 0) {
    error_ = "fork failed";
    return false;
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
  pid_ = pid;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      error_ = "redis-server exited at start; see its log in " + dir_ + "/redis.log";
      return false;
    }
    auto pong = command({"PING"});
    // A server that asks for a password answers NOAUTH: it is up all the same.
    if (pong) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  error_ = "redis-server did not answer within 5 s";
  kill();
  return false;
}

void RedisServer::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
  ::unlink(socket_.c_str());
}

std::optional<rt::RedisReply> RedisServer::command(const std::vector<std::string_view>& args,
                                                   const std::string& password) const {
  rt::RedisEndpoint ep;
  ep.unixPath = socket_;
  ep.password = password;
  std::string why;
  auto conn = rt::RedisConnection::open(ep, 2000, why);
  if (!conn) return std::nullopt;
  return conn->command(args);
}

}  // namespace spindle::test
