#include "tuning/tuning_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>

#include "checked_entry.h"

namespace spindle::rt {
namespace {

constexpr const char* kLayout = "v1";

}  // namespace

bool isTuningKey(const std::string& s) { return isKeyHex(s); }

TuningStore::TuningStore(std::string dir, Warn warn, double staleSeconds)
    : dir_(std::move(dir)), warn_(std::move(warn)), staleSeconds_(staleSeconds) {}

std::string TuningStore::entryPath(const std::string& keyHex) const {
  return fmt::format("{}/{}/{}/{}.tune", dir_, kLayout, keyHex.substr(0, 2), keyHex);
}

std::string TuningStore::leasePath(const std::string& keyHex) const {
  return fmt::format("{}/{}/{}/{}.lease", dir_, kLayout, keyHex.substr(0, 2), keyHex);
}

std::vector<char> TuningStore::encode(const std::string& keyHex, const std::vector<char>& blob) {
  return encodeCheckedEntry(kMagic, kFormatVersion, keyHex, blob);
}

std::optional<std::vector<char>> TuningStore::get(const std::string& keyHex) {
  if (auto local = getLocal(keyHex)) return local;
  if (!remote_ || !isTuningKey(keyHex)) return std::nullopt;
  auto shared = remote_->get(RemoteNamespace::Tuning, keyHex);  // verified (MAC, checksum)
  if (shared && enabled()) putLocal(keyHex, *shared);           // the next process reads it from disk
  return shared;
}

std::optional<std::vector<char>> TuningStore::getLocal(const std::string& keyHex) {
  if (!enabled() || !isTuningKey(keyHex)) return std::nullopt;
  std::string path = entryPath(keyHex);
  struct stat st {};
  std::vector<char> file;
  if (!readWholeFile(path, file, st)) return std::nullopt;
  DecodedEntry entry = decodeCheckedEntry(kMagic, kFormatVersion, keyHex, file, "not a Spindle tuning entry");
  if (!entry.invalid) return std::move(entry.payload);
  ++corrupt_;
  if (warn_) warn_(fmt::format("spindle: warning: tuning entry {} is invalid ({}); tuning again", path, entry.invalid));
  // Remove it unless another process has already replaced it with a good one.
  struct stat now {};
  if (::stat(path.c_str(), &now) == 0 && now.st_ino == st.st_ino && now.st_dev == st.st_dev) ::unlink(path.c_str());
  return std::nullopt;
}

bool TuningStore::put(const std::string& keyHex, const std::vector<char>& blob) {
  bool local = putLocal(keyHex, blob);
  bool shared = remote_ && isTuningKey(keyHex) && remote_->put(RemoteNamespace::Tuning, keyHex, blob);
  return local || shared;
}

bool TuningStore::putLocal(const std::string& keyHex, const std::vector<char>& blob) {
  if (!enabled() || !isTuningKey(keyHex)) return false;
  std::string path = entryPath(keyHex);
  std::string dir = path.substr(0, path.find_last_of('/'));
  std::string tmp = fmt::format("{}.tmp.{}", path, uniqueSuffix());
  int fd = makeDirs(dir) ? ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644) : -1;
  const std::vector<char> entry = encode(keyHex, blob);
  int writeErr = 0;
  bool ok = fd >= 0 && writeFully(fd, entry.data(), entry.size(), writeErr) && ::fsync(fd) == 0;
  if (fd >= 0) ok = ::close(fd) == 0 && ok;
  ok = ok && ::rename(tmp.c_str(), path.c_str()) == 0;
  if (!ok) {
    int err = writeErr ? writeErr : errno;
    ::unlink(tmp.c_str());
    if (warn_)
      warn_(fmt::format("spindle: warning: cannot store the tuning result {}: {}; it lasts for this process only", path,
                        std::strerror(err)));
  }
  return ok;
}

bool TuningStore::tryLease(const std::string& keyHex) {
  if (!tryLocalLease(keyHex)) return false;  // another process of this machine tunes it
  if (!remote_ || !isTuningKey(keyHex)) return true;
  bool unreachable = false;
  auto ttlMs = uint64_t(staleSeconds_ * 1000);  // a crashed tuner's lease goes as a stale local one does
  if (auto lease = remote_->tryAcquireLease(keyHex, ttlMs, &unreachable)) {
    std::lock_guard<std::mutex> lock(leasesMu_);
    remoteLeases_[keyHex] = *lease;
    return true;
  }
  if (unreachable) return true;  // no one to ask: tune here, as without a remote cache
  if (enabled()) ::unlink(leasePath(keyHex).c_str());
  return false;  // another machine tunes it
}

bool TuningStore::tryLocalLease(const std::string& keyHex) {
  if (!enabled()) return true;
  std::string path = leasePath(keyHex);
  if (!makeDirs(path.substr(0, path.find_last_of('/')))) return true;  // no store to coordinate through
  for (int attempt = 0; attempt < 2; ++attempt) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      std::string owner = fmt::format("{}\n", ::getpid());
      (void)!::write(fd, owner.data(), owner.size());
      ::close(fd);
      return true;
    }
    if (errno != EEXIST) return true;  // cannot coordinate: tune rather than wait forever
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) continue;  // released meanwhile: try again
    double age = double(std::chrono::system_clock::now().time_since_epoch().count()) *
                     std::chrono::system_clock::period::num / std::chrono::system_clock::period::den -
                 double(st.st_mtim.tv_sec);
    if (age <= staleSeconds_) return false;
    ::unlink(path.c_str());  // its holder died: break it
  }
  return false;
}

void TuningStore::releaseLease(const std::string& keyHex) {
  if (enabled()) ::unlink(leasePath(keyHex).c_str());
  std::optional<RemoteLease> held;
  {
    std::lock_guard<std::mutex> lock(leasesMu_);
    if (auto it = remoteLeases_.find(keyHex); it != remoteLeases_.end()) {
      held = it->second;
      remoteLeases_.erase(it);
    }
  }
  if (held) remote_->release(*held);
}

std::vector<std::string> TuningStore::keys() const {
  std::vector<std::string> out;
  if (!enabled()) return out;
  std::string root = fmt::format("{}/{}", dir_, kLayout);
  DIR* top = ::opendir(root.c_str());
  if (!top) return out;
  while (dirent* d = ::readdir(top)) {
    if (d->d_name[0] == '.') continue;
    DIR* inner = ::opendir((root + "/" + d->d_name).c_str());
    if (!inner) continue;
    while (dirent* e = ::readdir(inner)) {
      std::string name = e->d_name;
      if (name.size() == 64 + 5 && name.compare(64, 5, ".tune") == 0 && isTuningKey(name.substr(0, 64)))
        out.push_back(name.substr(0, 64));
    }
    ::closedir(inner);
  }
  ::closedir(top);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace spindle::rt
