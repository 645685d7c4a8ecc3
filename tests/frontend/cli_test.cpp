// The `spindle` binary on bad input: exit status 1 with diagnostics, never a
// crash and never 2 (internal error). Runs the real executable.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

#include "frontend_test_util.h"

namespace spindle::test {
namespace {

namespace fs = std::filesystem;

std::string spindleBinary() {
  if (const char* env = std::getenv("SPINDLE_CLI")) return env;
  return SPINDLE_BINARY_DIR "/bin/spindle";
}

// Exit status of `spindle ARGS`, or -1 if it died of a signal.
int runSpindle(const std::string& args) {
  std::string command = "'" + spindleBinary() + "' " + args + " >/dev/null 2>&1";
  int status = std::system(command.c_str());
  if (status == -1 || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(spindleBinary())) GTEST_FAIL() << "build the 'spindle' target first: " << spindleBinary();
  }
};

TEST_F(CliTest, EveryCorpusFileExitsWithOne) {
  int files = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(SPINDLE_SOURCE_DIR) / "tests" / "bad")) {
    if (entry.path().extension() != ".spn") continue;
    ++files;
    EXPECT_EQ(runSpindle("check '" + entry.path().string() + "'"), 1) << entry.path();
  }
  EXPECT_GT(files, 0);
}

TEST_F(CliTest, MissingFileIsAOneLineError) {
  EXPECT_EQ(runSpindle("check /nonexistent/x.spn"), 1);
  std::string command = "'" + spindleBinary() + "' check /nonexistent/x.spn 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buffer[512] = {};
  std::string out;
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  pclose(pipe);
  EXPECT_EQ(out, "spindle: error: cannot open '/nonexistent/x.spn'\n");
  EXPECT_EQ(runSpindle("check '" + fs::temp_directory_path().string() + "'"), 1);  // a directory
}

TEST_F(CliTest, UsageErrors) {
  EXPECT_EQ(runSpindle("check"), 1);
  EXPECT_EQ(runSpindle("inspect"), 1);
  fs::path good = fs::temp_directory_path() / "spindle_cli_test_good.spn";
  {
    std::FILE* f = std::fopen(good.c_str(), "w");
    std::fputs("kernel k(x: f32[N]):\n    x[0] = 1.0\n", f);
    std::fclose(f);
  }
  EXPECT_EQ(runSpindle("inspect '" + good.string() + "' --stage nope"), 1);
  EXPECT_EQ(runSpindle("inspect '" + good.string() + "' --stage ast --bogus"), 1);
  EXPECT_EQ(runSpindle("inspect '" + good.string() + "'"), 1);
  EXPECT_EQ(runSpindle("inspect '" + good.string() + "' --stage ast"), 0);
  EXPECT_EQ(runSpindle("inspect '" + good.string() + "' --stage=ast"), 0);
  fs::remove(good);
}

}  // namespace
}  // namespace spindle::test
