#include "disk_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>

#include "checked_entry.h"

namespace spindle::rt {
namespace {

constexpr const char* kLayout = "v1";

}  // namespace

std::string defaultCacheDir() {
  if (const char* d = std::getenv("SPINDLE_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/spindle";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/spindle";
  return {};
}

DiskCache::DiskCache(std::string dir, uint64_t maxBytes, Warn warn)
    : dir_(std::move(dir)), maxBytes_(maxBytes), warn_(std::move(warn)) {
  if (dir_.empty()) enabled_ = false;
}

std::string DiskCache::entryPath(const std::string& keyHex) const {
  return fmt::format("{}/{}/{}/{}.bin", dir_, kLayout, keyHex.substr(0, 2), keyHex);
}

std::vector<char> DiskCache::encode(const std::string& keyHex, const std::vector<char>& payload) {
  return encodeCheckedEntry(kMagic, kFormatVersion, keyHex, payload);
}

std::optional<std::vector<char>> DiskCache::load(const std::string& keyHex) {
  if (!enabled()) return std::nullopt;
  std::string path = entryPath(keyHex);
  std::vector<char> file;
  struct stat read {};
  if (!readWholeFile(path, file, read)) return std::nullopt;
  auto reject = [&](const char* why) -> std::optional<std::vector<char>> {
    ++corrupt_;
    if (warn_) warn_(fmt::format("spindle: warning: cache entry {} is invalid ({}); recompiling", path, why));
    // Remove it unless another process has already replaced it with a good one.
    struct stat now {};
    if (::stat(path.c_str(), &now) == 0 && now.st_ino == read.st_ino && now.st_dev == read.st_dev)
      ::unlink(path.c_str());
    return std::nullopt;
  };
  DecodedEntry entry = decodeCheckedEntry(kMagic, kFormatVersion, keyHex, file, "not a Spindle cache entry");
  if (entry.invalid) return reject(entry.invalid);
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // LRU: a hit refreshes the entry
  return std::move(entry.payload);
}

bool DiskCache::writeAll(int fd, const char* p, size_t n, int& err) {
  size_t stop = n;  // where an injected fault interrupts the write
  if (faults_.errnoValue) stop = std::min(stop, faults_.afterBytes);
  if (faults_.midWrite) stop = std::min(stop, n / 2);
  if (!writeFully(fd, p, stop, err)) return false;
  if (stop < n) {
    if (faults_.midWrite) faults_.midWrite();
    if (faults_.errnoValue) {
      err = faults_.errnoValue;
      return false;
    }
  }
  return writeFully(fd, p + stop, n - stop, err);
}

bool DiskCache::store(const std::string& keyHex, const std::vector<char>& payload, bool sync) {
  if (!enabled()) return false;
  std::string path = entryPath(keyHex);
  std::string dir = path.substr(0, path.find_last_of('/'));
  if (!makeDirs(dir)) {
    disable(fmt::format("cannot create {}: {}", dir, std::strerror(errno)));
    return false;
  }
  std::string tmp = fmt::format("{}.tmp.{}", path, uniqueSuffix());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    disable(fmt::format("cannot write {}: {}", tmp, std::strerror(errno)));
    return false;
  }
  std::vector<char> bytes = encode(keyHex, payload);
  int err = 0;
  bool ok = writeAll(fd, bytes.data(), bytes.size(), err);
  if (ok && sync && ::fsync(fd) != 0) {
    ok = false;
    err = errno;
  }
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    disable(fmt::format("cannot write {}: {}", path, std::strerror(err)));
    return false;
  }
  evict();
  return true;
}

void DiskCache::disable(const std::string& why) {
  ++writeFailures_;
  if (enabled_.exchange(false) && warn_)
    warn_(
        fmt::format("spindle: warning: disk cache disabled for this process ({}); "
                    "compiled kernels are cached in memory only",
                    why));
}

void DiskCache::evict() {
  std::lock_guard<std::mutex> lock(mu_);
  struct File {
    std::string path;
    uint64_t size;
    int64_t mtimeNs;
  };
  std::vector<File> files;
  uint64_t total = 0;
  auto now = std::chrono::system_clock::now().time_since_epoch();
  int64_t nowNs = std::chrono::duration_cast<std::chrono::nanoseconds>(now).count();
  std::string root = fmt::format("{}/{}", dir_, kLayout);
  DIR* top = ::opendir(root.c_str());
  if (!top) return;
  while (dirent* d = ::readdir(top)) {
    if (d->d_name[0] == '.') continue;
    std::string sub = root + "/" + d->d_name;
    DIR* inner = ::opendir(sub.c_str());
    if (!inner) continue;
    while (dirent* e = ::readdir(inner)) {
      if (e->d_name[0] == '.') continue;
      std::string p = sub + "/" + e->d_name;
      struct stat st;
      if (::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      int64_t mtimeNs = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
      // A temporary left by a crashed writer an hour ago is garbage.
      if (std::strstr(e->d_name, ".tmp.")) {
        if (nowNs - mtimeNs > int64_t(3600) * 1000000000) ::unlink(p.c_str());
        continue;
      }
      files.push_back({p, uint64_t(st.st_size), mtimeNs});
      total += uint64_t(st.st_size);
    }
    ::closedir(inner);
  }
  ::closedir(top);
  if (total <= maxBytes_) return;
  std::sort(files.begin(), files.end(), [](const File& a, const File& b) { return a.mtimeNs < b.mtimeNs; });
  uint64_t target = maxBytes_ - maxBytes_ / 10;  // leave headroom so the next store does not evict again
  for (const auto& f : files) {
    if (total <= target) break;
    if (::unlink(f.path.c_str()) == 0) total -= f.size;
  }
}

}  // namespace spindle::rt
