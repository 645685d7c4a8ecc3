// The disk cache under faults: truncated, corrupted and foreign entries are
// misses and get replaced; a writer killed mid-write leaves nothing that
// loads; a read-only or full directory degrades to memory-only caching with a
// warning; concurrent writers leave one valid entry; the size bound evicts
// least recently used entries.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../../runtime/src/disk_cache.h"
#include "../../runtime/src/sha256.h"
#include "test_util.h"

namespace spindle {
namespace {

namespace fs = std::filesystem;
using rt::DiskCache;

std::string keyOf(const std::string& s) { return rt::toHex(rt::sha256(s.data(), s.size())); }

std::vector<char> payload(size_t n, char seed = 1) {
  std::vector<char> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = char(seed + i * 31);
  return p;
}

struct Warnings {
  std::vector<std::string> list;
  DiskCache::Warn sink() {
    return [this](const std::string& m) { list.push_back(m); };
  }
};

std::vector<fs::path> filesUnder(const std::string& dir) {
  std::vector<fs::path> out;
  if (!fs::exists(dir)) return out;
  for (auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.push_back(e.path());
  return out;
}

void writeBytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), std::streamsize(bytes.size()));
}

std::vector<char> readBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(f), {});
}

TEST(DiskCache, StoreThenLoad) {
  test::TempDir dir;
  Warnings w;
  DiskCache cache(dir.path(), 1 << 20, w.sink());
  std::string key = keyOf("a");
  EXPECT_FALSE(cache.load(key).has_value());
  ASSERT_TRUE(cache.store(key, payload(1000)));
  auto got = cache.load(key);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, payload(1000));
  EXPECT_TRUE(fs::exists(cache.entryPath(key)));
  EXPECT_EQ(cache.entryPath(key), dir.path() + "/v1/" + key.substr(0, 2) + "/" + key + ".bin");
  EXPECT_EQ(filesUnder(dir.path()).size(), 1u);  // no temporary left behind
  EXPECT_TRUE(w.list.empty());
}

// Each damaged form of a valid entry is a miss, is counted, and is removed.
TEST(DiskCache, DamagedEntriesAreMisses) {
  struct Case {
    const char* name;
    std::function<std::vector<char>(std::vector<char>)> damage;
    const char* why;
  };
  std::string otherKey = keyOf("other");
  std::vector<Case> cases = {
      {"truncated payload",
       [](std::vector<char> b) {
         b.resize(b.size() - 10);
         return b;
       },
       "size does not match"},
      {"truncated header",
       [](std::vector<char> b) {
         b.resize(20);
         return b;
       },
       "truncated header"},
      {"empty file", [](std::vector<char>) { return std::vector<char>(); }, "truncated header"},
      {"flipped payload byte",
       [](std::vector<char> b) {
         b[b.size() - 5] ^= 0x40;
         return b;
       },
       "checksum mismatch"},
      {"foreign file", [](std::vector<char> b) { return std::vector<char>(b.size(), 'x'); },
       "not a Spindle cache entry"},
      {"other format version",
       [](std::vector<char> b) {
         b[8] = 9;
         return b;
       },
       "another format version"},
      {"entry of another key", [otherKey](std::vector<char>) { return DiskCache::encode(otherKey, payload(500)); },
       "entry of another key"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    test::TempDir dir;
    Warnings w;
    DiskCache cache(dir.path(), 1 << 20, w.sink());
    std::string key = keyOf("k");
    ASSERT_TRUE(cache.store(key, payload(500)));
    std::string path = cache.entryPath(key);
    writeBytes(path, c.damage(readBytes(path)));
    EXPECT_FALSE(cache.load(key).has_value());
    EXPECT_EQ(cache.corruptEntries(), 1u);
    ASSERT_EQ(w.list.size(), 1u);
    EXPECT_CONTAINS(w.list[0], c.why);
    EXPECT_FALSE(fs::exists(path)) << "a rejected entry is removed";
    // The rebuilt binary replaces it and loads.
    ASSERT_TRUE(cache.store(key, payload(500, 7)));
    ASSERT_TRUE(cache.load(key).has_value());
    EXPECT_EQ(*cache.load(key), payload(500, 7));
    EXPECT_TRUE(cache.enabled());
  }
}

TEST(DiskCache, WriterKilledMidWriteLeavesNoLoadableEntry) {
  test::TempDir dir;
  std::string key = keyOf("killed");
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    DiskCache cache(dir.path(), 1 << 20, nullptr);
    DiskCache::Faults f;
    f.midWrite = [] { ::kill(::getpid(), SIGKILL); };
    cache.setFaultsForTesting(f);
    cache.store(key, payload(100000));
    ::_exit(0);  // not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the writer was meant to die mid-write";

  Warnings w;
  DiskCache cache(dir.path(), 1 << 20, w.sink());
  EXPECT_FALSE(cache.load(key).has_value());
  EXPECT_FALSE(fs::exists(cache.entryPath(key)));
  auto files = filesUnder(dir.path());
  ASSERT_EQ(files.size(), 1u) << "the half-written temporary";
  EXPECT_NE(files[0].string().find(".tmp."), std::string::npos);
  EXPECT_LT(fs::file_size(files[0]), DiskCache::encode(key, payload(100000)).size());

  // A recompile publishes a good entry next to it.
  ASSERT_TRUE(cache.store(key, payload(100000)));
  EXPECT_EQ(*cache.load(key), payload(100000));

  // Stale temporaries (over an hour old) are swept by eviction.
  struct timespec old[2] = {{::time(nullptr) - 7200, 0}, {::time(nullptr) - 7200, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, files[0].c_str(), old, 0), 0);
  cache.evict();
  EXPECT_FALSE(fs::exists(files[0]));
  EXPECT_TRUE(fs::exists(cache.entryPath(key)));
}

TEST(DiskCache, FullDiskDegradesToMemoryWithAWarning) {
  test::TempDir dir;
  Warnings w;
  DiskCache cache(dir.path(), 1 << 20, w.sink());
  DiskCache::Faults f;
  f.errnoValue = ENOSPC;
  f.afterBytes = 100;
  cache.setFaultsForTesting(f);
  std::string key = keyOf("full");
  EXPECT_FALSE(cache.store(key, payload(5000)));
  EXPECT_FALSE(cache.enabled());
  EXPECT_EQ(cache.writeFailures(), 1u);
  ASSERT_EQ(w.list.size(), 1u);
  EXPECT_CONTAINS(w.list[0], "No space left on device");
  EXPECT_CONTAINS(w.list[0], "disk cache disabled for this process");
  EXPECT_TRUE(filesUnder(dir.path()).empty()) << "the partial temporary is removed";
  // Disabled: further stores and loads are quiet no-ops.
  EXPECT_FALSE(cache.store(key, payload(10)));
  EXPECT_FALSE(cache.load(key).has_value());
  EXPECT_EQ(w.list.size(), 1u);
}

TEST(DiskCache, UnwritableDirectoryDegradesToMemoryWithAWarning) {
  test::TempDir dir;
  // A cache "directory" below a regular file cannot be created, even by root.
  std::string blocker = dir.path() + "/file";
  writeBytes(blocker, {'x'});
  Warnings w;
  DiskCache cache(blocker + "/cache", 1 << 20, w.sink());
  EXPECT_FALSE(cache.store(keyOf("ro"), payload(10)));
  EXPECT_FALSE(cache.enabled());
  ASSERT_EQ(w.list.size(), 1u);
  EXPECT_CONTAINS(w.list[0], "cannot create");
  EXPECT_CONTAINS(w.list[0], "memory only");
}

TEST(DiskCache, ReadOnlyDirectoryDegradesToMemoryWithAWarning) {
  if (::geteuid() == 0)
    GTEST_SKIP() << "running as root: permission bits do not stop root (the EROFS path is "
                    "covered by ReadOnlyFileSystemFault)";
  test::TempDir dir;
  std::string ro = dir.path() + "/ro";
  ASSERT_EQ(::mkdir(ro.c_str(), 0555), 0);
  Warnings w;
  DiskCache cache(ro, 1 << 20, w.sink());
  EXPECT_FALSE(cache.store(keyOf("ro"), payload(10)));
  EXPECT_FALSE(cache.enabled());
  ASSERT_EQ(w.list.size(), 1u);
  ::chmod(ro.c_str(), 0755);
}

TEST(DiskCache, ReadOnlyFileSystemFault) {
  test::TempDir dir;
  Warnings w;
  DiskCache cache(dir.path(), 1 << 20, w.sink());
  DiskCache::Faults f;
  f.errnoValue = EROFS;
  f.afterBytes = 0;
  cache.setFaultsForTesting(f);
  EXPECT_FALSE(cache.store(keyOf("rofs"), payload(10)));
  ASSERT_EQ(w.list.size(), 1u);
  EXPECT_CONTAINS(w.list[0], "Read-only file system");
}

TEST(DiskCache, ConcurrentWritersLeaveOneValidEntry) {
  test::TempDir dir;
  std::string key = keyOf("race");
  constexpr int kWriters = 8;
  std::vector<pid_t> pids;
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  for (int i = 0; i < kWriters; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(go[1]);
      char c;
      (void)!::read(go[0], &c, 1);  // start together
      DiskCache cache(dir.path(), 1 << 30, nullptr);
      bool ok = true;
      for (int round = 0; round < 20; ++round) ok = cache.store(key, payload(200000)) && ok;
      ::_exit(ok ? 0 : 1);
    }
    pids.push_back(pid);
  }
  ::close(go[0]);
  ::close(go[1]);  // releases every writer at once
  for (pid_t p : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(p, &status, 0), p);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  auto files = filesUnder(dir.path());
  ASSERT_EQ(files.size(), 1u);
  DiskCache cache(dir.path(), 1 << 30, nullptr);
  ASSERT_TRUE(cache.load(key).has_value());
  EXPECT_EQ(*cache.load(key), payload(200000));
  EXPECT_EQ(cache.corruptEntries(), 0u);
}

TEST(DiskCache, EvictsLeastRecentlyUsed) {
  test::TempDir dir;
  size_t entryBytes = DiskCache::encode(keyOf("0"), payload(1000)).size();
  DiskCache cache(dir.path(), 3 * entryBytes + 10, nullptr);
  std::vector<std::string> keys;
  time_t base = ::time(nullptr) - 1000;
  for (int i = 0; i < 3; ++i) {
    keys.push_back(keyOf(std::to_string(i)));
    ASSERT_TRUE(cache.store(keys.back(), payload(1000)));
    struct timespec t[2] = {{base + i * 10, 0}, {base + i * 10, 0}};
    ::utimensat(AT_FDCWD, cache.entryPath(keys.back()).c_str(), t, 0);
  }
  ASSERT_TRUE(cache.load(keys[0]).has_value());  // a hit makes entry 0 the most recent
  keys.push_back(keyOf("3"));
  ASSERT_TRUE(cache.store(keys.back(), payload(1000)));  // over the bound: evicts
  EXPECT_TRUE(fs::exists(cache.entryPath(keys[0])));
  EXPECT_FALSE(fs::exists(cache.entryPath(keys[1]))) << "least recently used";
  EXPECT_TRUE(fs::exists(cache.entryPath(keys[3])));
  uint64_t total = 0;
  for (auto& f : filesUnder(dir.path())) total += fs::file_size(f);
  EXPECT_LE(total, 3 * entryBytes + 10);
}

TEST(DiskCache, DefaultDirectoryFollowsTheEnvironment) {
  std::string saved[3];
  const char* vars[3] = {"SPINDLE_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  for (int i = 0; i < 3; ++i) saved[i] = std::getenv(vars[i]) ? std::getenv(vars[i]) : "";
  ::setenv("SPINDLE_CACHE_DIR", "/x/spindle-cache", 1);
  EXPECT_EQ(rt::defaultCacheDir(), "/x/spindle-cache");
  ::unsetenv("SPINDLE_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", "/x/xdg", 1);
  EXPECT_EQ(rt::defaultCacheDir(), "/x/xdg/spindle");
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", "/x/home", 1);
  EXPECT_EQ(rt::defaultCacheDir(), "/x/home/.cache/spindle");
  for (int i = 0; i < 3; ++i) {
    if (saved[i].empty()) ::unsetenv(vars[i]);
    else ::setenv(vars[i], saved[i].c_str(), 1);
  }
}

}  // namespace
}  // namespace spindle
