// Where the secret comes from, and the key file's checks.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "remote_cache/remote_secret.h"

namespace spindle::rt {
namespace {

struct TempFile {
  std::string path;
  TempFile(const std::string& text, mode_t mode) {
    path = (std::filesystem::temp_directory_path() /
            ("spindle-secret-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++)))
               .string();
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
  }
  ~TempFile() { std::filesystem::remove(path); }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

// The secret variables cleared for a test, and again after it.
struct Unset {
  Unset() { clear(); }
  ~Unset() { clear(); }
  static void clear() {
    for (const char* v : {"SPINDLE_CACHE_SECRET", "SPINDLE_CACHE_SECRET_PREVIOUS", "SPINDLE_CACHE_SECRET_FILE"})
      ::unsetenv(v);
  }
};

TEST(RemoteSecret, KeyFileWithRotation) {
  TempFile f("current-secret-0123456789\nprevious-secret-0123456789\n", 0600);
  std::string why;
  auto s = readSecretFile(f.path, why);
  ASSERT_EQ(s.size(), 2u) << why;
  EXPECT_EQ(s[0], "current-secret-0123456789");
  EXPECT_EQ(s[1], "previous-secret-0123456789");
}

TEST(RemoteSecret, KeyFileOpenToOthersIsRefused) {
  for (mode_t mode : {0644, 0640, 0604, 0660}) {
    TempFile f("current-secret-0123456789\n", mode);
    std::string why;
    EXPECT_TRUE(readSecretFile(f.path, why).empty()) << "mode " << std::oct << mode;
    EXPECT_NE(why.find("chmod 600"), std::string::npos) << why;
  }
}

TEST(RemoteSecret, BadKeyFiles) {
  std::string why;
  EXPECT_TRUE(readSecretFile("/nonexistent/secret", why).empty());
  EXPECT_NE(why.find("cannot open"), std::string::npos) << why;
  TempFile shortOne("short\n", 0600);
  EXPECT_TRUE(readSecretFile(shortOne.path, why).empty());
  EXPECT_NE(why.find("at least 16"), std::string::npos) << why;
  TempFile three("aaaaaaaaaaaaaaaaaa\nbbbbbbbbbbbbbbbbbb\ncccccccccccccccccc\n", 0600);
  EXPECT_TRUE(readSecretFile(three.path, why).empty());
  EXPECT_NE(why.find("found 3"), std::string::npos) << why;
  TempFile empty("\n\n", 0600);
  EXPECT_TRUE(readSecretFile(empty.path, why).empty());
}

TEST(RemoteSecret, Sources) {
  Unset clean;
  std::string why, source;
  EXPECT_TRUE(loadRemoteSecrets({}, "", why).empty());
  EXPECT_NE(why.find("SPINDLE_CACHE_SECRET"), std::string::npos) << why;

  ::setenv("SPINDLE_CACHE_SECRET", "env-secret-0123456789", 1);
  ::setenv("SPINDLE_CACHE_SECRET_PREVIOUS", "env-previous-0123456789", 1);
  auto s = loadRemoteSecrets({}, "", why, &source);
  ASSERT_EQ(s.size(), 2u) << why;
  EXPECT_EQ(s[0], "env-secret-0123456789");
  EXPECT_EQ(source, "SPINDLE_CACHE_SECRET");

  // The options win over the environment.
  s = loadRemoteSecrets({"option-secret-0123456789"}, "", why, &source);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], "option-secret-0123456789");
  EXPECT_TRUE(loadRemoteSecrets({"too short"}, "", why).empty());

  ::unsetenv("SPINDLE_CACHE_SECRET");
  TempFile f("file-secret-0123456789\n", 0600);
  ::setenv("SPINDLE_CACHE_SECRET_FILE", f.path.c_str(), 1);
  s = loadRemoteSecrets({}, "", why, &source);
  ASSERT_EQ(s.size(), 1u) << why;
  EXPECT_EQ(s[0], "file-secret-0123456789");
  EXPECT_EQ(source, "SPINDLE_CACHE_SECRET_FILE");
}

}  // namespace
}  // namespace spindle::rt
