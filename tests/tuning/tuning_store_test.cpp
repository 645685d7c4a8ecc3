// The tuning store (runtime/src/tuning/tuning_store.h): atomic, checked
// entries outside the binary cache's eviction, leases, export and import.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "disk_cache.h"
#include "test_util.h"
#include "tuning/tune_export.h"
#include "tuning/tuning_store.h"

namespace spindle::rt {
namespace {

using test::TempDir;

const std::string kKey(64, 'a');
const std::string kOtherKey = std::string(63, 'b') + "c";
const std::string kRecord =
    "spindle-tune-record 1\nkernel k\nbucket N=1024\nconfigs BLOCK=64; BLOCK=128\nchosen BLOCK=128\n"
    "median_ms 2 1\n";

std::vector<char> bytes(const std::string& s) { return std::vector<char>(s.begin(), s.end()); }

TEST(TuningStore, PutThenGetRoundTripsTheBlob) {
  TempDir dir;
  TuningStore store(dir.path() + "/tune");
  EXPECT_FALSE(store.get(kKey));
  ASSERT_TRUE(store.put(kKey, bytes(kRecord)));
  auto got = store.get(kKey);
  ASSERT_TRUE(got);
  EXPECT_EQ(std::string(got->begin(), got->end()), kRecord);
  EXPECT_EQ(store.keys(), std::vector<std::string>{kKey});
  // No temporary is left beside the entry.
  size_t files = 0;
  for (auto& e : std::filesystem::recursive_directory_iterator(dir.path())) files += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 1u);
}

TEST(TuningStore, AnEntryThatFailsItsChecksIsAMissAndIsRemoved) {
  TempDir dir;
  std::vector<std::string> warnings;
  TuningStore store(dir.path() + "/tune", [&](const std::string& w) { warnings.push_back(w); });
  ASSERT_TRUE(store.put(kKey, bytes(kRecord)));
  std::string path = store.entryPath(kKey);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-3, std::ios::end);
    f.put('X');  // a payload byte: the checksum no longer matches
  }
  EXPECT_FALSE(store.get(kKey));
  EXPECT_EQ(store.corruptEntries(), 1u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_CONTAINS(warnings[0], "checksum mismatch");
  EXPECT_FALSE(std::filesystem::exists(path));
  // An entry copied under another key is refused too.
  ASSERT_TRUE(store.put(kKey, bytes(kRecord)));
  std::filesystem::create_directories(std::filesystem::path(store.entryPath(kOtherKey)).parent_path());
  std::filesystem::copy_file(path, store.entryPath(kOtherKey));
  EXPECT_FALSE(store.get(kOtherKey));
  EXPECT_TRUE(store.get(kKey));
}

// The binary cache evicts down to its bound; tuning entries live beside it
// (<dir>/tune) and are never counted or removed.
TEST(TuningStore, TheBinaryCachesEvictionLeavesTuningEntries) {
  TempDir dir;
  DiskCache binaries(dir.path(), /*maxBytes=*/1, nullptr);
  TuningStore store(dir.path() + "/tune");
  ASSERT_TRUE(store.put(kKey, bytes(kRecord)));
  ASSERT_TRUE(binaries.store(kOtherKey, std::vector<char>(4096, 'x')));  // over the bound: evicts
  EXPECT_FALSE(std::filesystem::exists(binaries.entryPath(kOtherKey)));
  EXPECT_TRUE(store.get(kKey));
}

// One process holds a key's lease; others are refused until it is released,
// or until it is older than the stale limit (its holder died).
TEST(TuningStore, LeasesAreExclusiveAndStaleOnesAreBroken) {
  TempDir dir;
  TuningStore a(dir.path() + "/tune"), b(dir.path() + "/tune");
  EXPECT_TRUE(a.tryLease(kKey));
  EXPECT_FALSE(b.tryLease(kKey));
  EXPECT_TRUE(b.tryLease(kOtherKey));  // per key
  a.releaseLease(kKey);
  EXPECT_TRUE(b.tryLease(kKey));
  TuningStore impatient(dir.path() + "/tune", nullptr, /*staleSeconds=*/-1);
  EXPECT_TRUE(impatient.tryLease(kKey));  // b's lease counts as stale here
  TuningStore none("");
  EXPECT_TRUE(none.tryLease(kKey));  // no store: nothing to coordinate
  EXPECT_FALSE(none.put(kKey, bytes(kRecord)));
}

// A second process (a fresh store on the same directory) reads the choice
// back. The time it takes is printed, not asserted (speed is the
// benchmarks' business: bench/tune_goal.sh measures a second process's
// pick); a timing would fail on a loaded machine without anything wrong.
TEST(TuningStore, AFreshStoreReadsTheChoiceBack) {
  TempDir dir;
  TuningStore store(dir.path() + "/tune");
  ASSERT_TRUE(store.put(kKey, bytes(kRecord)));
  TuningStore fresh(dir.path() + "/tune");
  auto start = std::chrono::steady_clock::now();
  auto got = fresh.get(kKey);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, bytes(kRecord));
  std::printf("read back in %.3f ms\n", ms);
}

TEST(TuningStore, ExportThenImportRoundTrips) {
  TempDir a, b;
  TuningStore from(a.path() + "/tune"), to(b.path() + "/tune");
  ASSERT_TRUE(from.put(kKey, bytes(kRecord)));
  ASSERT_TRUE(from.put(kOtherKey, bytes(kRecord + "note \"quoted\" \\ back\n")));
  size_t n = 0;
  std::string json = exportTuningJson(from, &n);
  EXPECT_EQ(n, 2u);
  EXPECT_EQ(importTuningJson(to, json), 2u);
  EXPECT_EQ(to.keys(), from.keys());
  for (const auto& k : from.keys()) EXPECT_EQ(*to.get(k), *from.get(k));
}

TEST(TuningStore, ImportRefusesWhatIsNotAnExport) {
  TempDir dir;
  TuningStore store(dir.path() + "/tune");
  EXPECT_CONTAINS(test::errorFrom([&] { importTuningJson(store, "[]"); }), "not a Spindle tuning file");
  EXPECT_CONTAINS(test::errorFrom([&] {
                    importTuningJson(store, R"({"spindle_tuning": 1, "entries": [{"key": "xyz", "record": "r"}]})");
                  }),
                  "key is not 64 hex digits");
  EXPECT_CONTAINS(test::errorFrom([&] {
                    importTuningJson(store, "{\"spindle_tuning\": 1, \"entries\": [{\"key\": \"" + kKey +
                                                "\", \"record\": \"hello\"}]}");
                  }),
                  "not a tuning record");
  EXPECT_TRUE(store.keys().empty());  // nothing written from a refused file
}

}  // namespace
}  // namespace spindle::rt
