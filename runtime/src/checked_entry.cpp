#include "checked_entry.h"

#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <random>

#include "sha256.h"

namespace spindle::rt {
namespace {

uint64_t getLE(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(uint8_t(p[i])) << (8 * i);
  return v;
}

}  // namespace

std::vector<char> encodeCheckedEntry(const char (&magic)[8], uint32_t version, const std::string& keyHex,
                                     const std::vector<char>& payload) {
  std::vector<char> out(kCheckedEntryHeaderBytes - 64 + keyHex.size() + payload.size());
  char* p = out.data();
  auto put = [&p](const void* src, size_t n) {
    std::memcpy(p, src, n);
    p += n;
  };
  auto putLE = [&put](uint64_t v, int bytes) {
    char b[8];
    for (int i = 0; i < bytes; ++i) b[i] = char(v >> (8 * i));
    put(b, size_t(bytes));
  };
  put(magic, 8);
  putLE(version, 4);
  putLE(keyHex.size(), 4);
  putLE(payload.size(), 8);
  put(keyHex.data(), keyHex.size());
  Digest sum = sha256(payload.data(), payload.size());
  put(sum.data(), sum.size());
  if (!payload.empty()) put(payload.data(), payload.size());
  return out;
}

DecodedEntry decodeCheckedEntry(const char (&magic)[8], uint32_t version, const std::string& keyHex,
                                const std::vector<char>& file, const char* foreign) {
  DecodedEntry d;
  if (file.size() < kCheckedEntryHeaderBytes) d.invalid = "truncated header";
  else if (std::memcmp(file.data(), magic, 8) != 0) d.invalid = foreign;
  else if (getLE(file.data() + 8, 4) != version) d.invalid = "another format version";
  else if (getLE(file.data() + 12, 4) != keyHex.size()) d.invalid = "bad key length";
  else if (getLE(file.data() + 16, 8) != file.size() - kCheckedEntryHeaderBytes)
    d.invalid = "size does not match the header";
  else if (std::memcmp(file.data() + 24, keyHex.data(), keyHex.size()) != 0) d.invalid = "entry of another key";
  if (d.invalid) return d;
  const char* payload = file.data() + kCheckedEntryHeaderBytes;
  const size_t size = file.size() - kCheckedEntryHeaderBytes;
  Digest sum = sha256(payload, size);
  if (std::memcmp(file.data() + 24 + 64, sum.data(), sum.size()) != 0) {
    d.invalid = "checksum mismatch";
    return d;
  }
  d.payload.assign(payload, payload + size);
  return d;
}

bool makeDirs(const std::string& path) {
  if (path.empty()) return false;
  size_t pos = 0;
  while (true) {
    pos = path.find('/', pos + 1);
    std::string part = path.substr(0, pos);
    if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) return false;
    if (pos == std::string::npos) break;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return false;
  if (!S_ISDIR(st.st_mode)) {
    errno = ENOTDIR;
    return false;
  }
  return true;
}

bool readWholeFile(const std::string& path, std::vector<char>& out, struct stat& st) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (ok) {
    out.resize(size_t(st.st_size));
    size_t got = 0;
    while (got < out.size()) {
      ssize_t n = ::read(fd, out.data() + got, out.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += size_t(n);
    }
    out.resize(got);
  }
  ::close(fd);
  return ok;
}

bool writeFully(int fd, const char* p, size_t n, int& err) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      err = w < 0 ? errno : EIO;
      return false;
    }
    p += w;
    n -= size_t(w);
  }
  return true;
}

std::string uniqueSuffix() {
  static thread_local std::mt19937_64 rng{std::random_device{}() ^
                                          uint64_t(std::chrono::steady_clock::now().time_since_epoch().count())};
  return fmt::format("{}.{:016x}", ::getpid(), rng());
}

}  // namespace spindle::rt
