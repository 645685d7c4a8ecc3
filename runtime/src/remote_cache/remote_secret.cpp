#include "remote_secret.h"

#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace spindle::rt {
namespace {

bool checkLengths(const std::vector<std::string>& secrets, const std::string& where, std::string& why) {
  if (secrets.empty() || secrets.size() > 2) {
    why = fmt::format("{}: expected one secret, or two during a rotation (current, then previous); found {}", where,
                      secrets.size());
    return false;
  }
  for (const auto& s : secrets)
    if (s.size() < kMinSecretBytes) {
      why = fmt::format("{}: a secret is {} bytes; at least {} are needed", where, s.size(), kMinSecretBytes);
      return false;
    }
  return true;
}

}  // namespace

std::vector<std::string> readSecretFile(const std::string& path, std::string& why) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    why = fmt::format("cannot open the secret file {}: {}", path, std::strerror(errno));
    return {};
  }
  struct stat st;
  // Checked on the open file, not the path: no window between check and read.
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    why = fmt::format("the secret file {} is not a regular file", path);
    return {};
  }
  if ((st.st_mode & 077) != 0 || st.st_uid != ::geteuid()) {
    ::close(fd);
    why =
        fmt::format("the secret file {} is {} (mode {:04o}); it must be this user's and private: chmod 600 {}", path,
                    st.st_uid != ::geteuid() ? "another user's" : "open to others", unsigned(st.st_mode & 07777), path);
    return {};
  }
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0 && text.size() < 65536) text.append(buf, size_t(n));
  ::close(fd);
  std::vector<std::string> secrets;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    if (!line.empty()) secrets.push_back(line);
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  if (!checkLengths(secrets, "the secret file " + path, why)) return {};
  return secrets;
}

std::vector<std::string> loadRemoteSecrets(const std::vector<std::string>& given, const std::string& file,
                                           std::string& why, std::string* source) {
  auto from = [&](const char* s) {
    if (source) *source = s;
  };
  if (!given.empty()) {
    from("RuntimeOptions::remoteCacheSecrets");
    return checkLengths(given, "RuntimeOptions::remoteCacheSecrets", why) ? given : std::vector<std::string>{};
  }
  if (!file.empty()) {
    from("RuntimeOptions::remoteCacheSecretFile");
    return readSecretFile(file, why);
  }
  if (const char* s = std::getenv("SPINDLE_CACHE_SECRET"); s && *s) {
    from("SPINDLE_CACHE_SECRET");
    std::vector<std::string> secrets = {s};
    if (const char* prev = std::getenv("SPINDLE_CACHE_SECRET_PREVIOUS"); prev && *prev) secrets.push_back(prev);
    return checkLengths(secrets, "SPINDLE_CACHE_SECRET", why) ? secrets : std::vector<std::string>{};
  }
  if (const char* f = std::getenv("SPINDLE_CACHE_SECRET_FILE"); f && *f) {
    from("SPINDLE_CACHE_SECRET_FILE");
    return readSecretFile(f, why);
  }
  why =
      "no secret is configured (SPINDLE_CACHE_SECRET or SPINDLE_CACHE_SECRET_FILE): binaries from Redis are code "
      "this machine would run, and without a shared secret they cannot be authenticated";
  return {};
}

}  // namespace spindle::rt
