// The `spindle` binary on bad input: exit status 1 with diagnostics, never a
// crash and never 2 (internal error). Runs the real executable.
#include <sys/wait.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

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

// Standard output and error of `spindle ARGS`, interleaved. `shellPrefix`
// runs first in the same shell (a `cd DIR &&`, environment settings).
std::string spindleOutput(const std::string& args, const std::string& shellPrefix = "") {
  std::string command = shellPrefix + "'" + spindleBinary() + "' " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return "popen failed";
  char buffer[512] = {};
  std::string out;
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  pclose(pipe);
  return out;
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
  EXPECT_EQ(spindleOutput("check /nonexistent/x.spn"), "spindle: error: cannot open '/nonexistent/x.spn'\n");
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

// `run` and `tune` both size a --static dim from its value, and refuse a
// --dims that gives it another (tune used to let --static win silently),
// before any runtime or device is involved.
TEST_F(CliTest, StaticDimThatDisagreesWithDimsIsAUsageError) {
  const std::string softmax = "'" SPINDLE_SOURCE_DIR "/samples/softmax.spn'";
  for (const char* command : {"run", "tune"}) {
    const std::string args = std::string(command) + " " + softmax + " --dims M=4,N=64 --static N=128";
    const std::string out = spindleOutput(args);
    EXPECT_NE(out.find(std::string(command) + ": --static N=128 disagrees with --dims N=64"), std::string::npos) << out;
    EXPECT_EQ(runSpindle(args), 1);
  }
}

}  // namespace
}  // namespace spindle::test

namespace spindle::test {
namespace {

std::string readAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `spindle gen` end to end: the file it writes is the checked-in golden, and
// its errors are exit status 1.
TEST_F(CliTest, GenWritesTheGoldenAndRejectsBadRequests) {
  fs::path out = fs::temp_directory_path() / ("spindle-cli-gen-" + std::to_string(getpid()) + ".hip");
  std::string inSource = "cd '" SPINDLE_SOURCE_DIR "' && ";
  ASSERT_EQ(std::system((inSource + "'" + spindleBinary() +
                         "' gen tests/golden/kernels/control_flow.spn --kernel collatz_stats -o '" + out.string() + "'")
                            .c_str()),
            0);
  EXPECT_EQ(readAll(out),
            readAll(fs::path(SPINDLE_SOURCE_DIR) / "tests/golden/expected/control_flow.collatz_stats.hip"));
  fs::remove(out);

  const std::string samples = SPINDLE_SOURCE_DIR "/samples/";
  EXPECT_EQ(runSpindle("gen '" + samples + "axpy.spn'"), 1);                // generic, no --dtype
  EXPECT_EQ(runSpindle("gen '" + samples + "axpy.spn' --dtype T=f99"), 1);  // unknown type
  EXPECT_EQ(runSpindle("gen '" + samples + "matmul.spn'"), 1);              // @static(K) without a value
  EXPECT_EQ(runSpindle("gen '" + samples + "softmax.spn' --static N=abc"), 1);
  EXPECT_EQ(runSpindle("gen '" + samples + "softmax.spn' --static Q=4"), 1);  // not a dim of softmax
  EXPECT_EQ(runSpindle("gen '" + samples + "softmax.spn' --kernel nope"), 1);
  EXPECT_EQ(runSpindle("gen '" + samples + "softmax.spn' --frobnicate"), 1);
  EXPECT_EQ(runSpindle("gen '" SPINDLE_SOURCE_DIR "/tests/golden/kernels/collectives.spn'"), 1);  // two kernels
  EXPECT_EQ(runSpindle("gen '" + samples + "softmax.spn' --static N=1024 --no-line-directives"), 0);
  // Layout flags name what the kernel can use: tensors indexed in runs, their row dims.
  EXPECT_EQ(runSpindle("gen '" + samples + "axpy.spn' --dtype T=f16 --aligned x --aligned y"), 0);
  EXPECT_EQ(runSpindle("gen '" + samples + "axpy.spn' --dtype T=f16 --aligned a"), 1);  // no such tensor
  EXPECT_EQ(runSpindle("gen '" + samples + "bias_gelu.spn' --aligned x"), 1);           // x has no runs
  EXPECT_EQ(runSpindle("gen '" + samples + "scale_strided.spn' --divisible N"), 0);
  EXPECT_EQ(runSpindle("gen '" + samples + "scale_strided.spn' --divisible M"), 1);                 // not a row dim
  EXPECT_EQ(runSpindle("run '" + samples + "scale_strided.spn' --dims M=64,N=64 --aligned x"), 1);  // run decides
}

// --exact-grid D: a dim its @grid axis covers in whole tiles, said in the
// source, the "Regenerate with" line and the key stage; a static dim or one
// no axis covers so is an error naming the candidates; run derives it.
TEST_F(CliTest, ExactGridNamesADimTheGridCoversInTiles) {
  const std::string matmul = "'" SPINDLE_SOURCE_DIR "/samples/matmul.spn' --static K=4096";
  std::string gen = spindleOutput("gen " + matmul + " --exact-grid M --no-line-directives");
  EXPECT_NE(gen.find("  __builtin_assume(M % 128 == 0);  // a whole number of grid tiles at launch\n"),
            std::string::npos)
      << gen;
  EXPECT_NE(gen.find(" --static K=4096 --exact-grid M --no-line-directives\n"), std::string::npos) << gen;
  EXPECT_NE(gen.find("// row0 + ar < M always:"), std::string::npos) << gen;
  std::string key = spindleOutput("inspect " + matmul + " --stage key --exact-grid M");
  EXPECT_NE(key.find("  M: dynamic, passed at launch; @grid covers it in tiles of 128: whether it is a multiple of "
                     "128 is in the key (yes here)\n"),
            std::string::npos)
      << key;
  EXPECT_NE(key.find("(no here; --exact-grid N)"), std::string::npos) << key;
  EXPECT_NE(spindleOutput("gen " + matmul + " --exact-grid K").find("dim K is static"), std::string::npos);
  EXPECT_NE(spindleOutput("gen " + matmul + " --exact-grid Q")
                .find("no @grid axis is cdiv(Q, T) with T a constant, so --exact-grid Q states nothing (such dims: N "
                      "(tiles of 128), M (tiles of 128))"),
            std::string::npos);
  EXPECT_EQ(runSpindle("gen " + matmul + " --exact-grid Q"), 1);
  EXPECT_EQ(runSpindle("gen " + matmul + " --exact-grid"), 1);
  EXPECT_NE(spindleOutput("run " + matmul + " --dims M=128,N=128 --exact-grid M")
                .find("--divisible and --exact-grid follow from the arguments"),
            std::string::npos);  // run decides
}

// --divisible N=G: a granularity of 2, 4, 8 or 16, said in the source and in
// the "Regenerate with" line (which reads back to the same file); anything
// else is a usage error that names the flag and the value.
TEST_F(CliTest, DivisibleTakesAGranularity) {
  const std::string scale = "'" SPINDLE_SOURCE_DIR "/samples/scale_strided.spn' --unit-stride x";
  std::string eight = spindleOutput("gen " + scale + " --divisible N=8 --no-line-directives");
  EXPECT_NE(eight.find("  __builtin_assume(N % 8 == 0);  // a multiple of 8 at launch\n"), std::string::npos) << eight;
  EXPECT_NE(eight.find(" --unit-stride x --divisible N=8 --no-line-directives\n"), std::string::npos) << eight;
  std::string sixteen = spindleOutput("gen " + scale + " --divisible N=16 --no-line-directives");
  EXPECT_EQ(sixteen, spindleOutput("gen " + scale + " --divisible N --no-line-directives"));  // 16 is the default
  EXPECT_NE(sixteen.find("__builtin_assume(N % 16 == 0);"), std::string::npos) << sixteen;
  EXPECT_NE(sixteen.find(" --unit-stride x --divisible N --no-line-directives\n"), std::string::npos) << sixteen;
  EXPECT_EQ(spindleOutput("gen " + scale + " --divisible N=3"),
            "spindle: error: gen: --divisible N: granularity 3 is not 2, 4, 8 or 16 (--divisible N=G: a multiple of "
            "G) (see 'spindle --help')\n");
  EXPECT_NE(
      spindleOutput("gen " + scale + " --divisible N=0").find("--divisible N: granularity 0 is not 2, 4, 8 or 16"),
      std::string::npos);
  EXPECT_NE(spindleOutput("gen " + scale + " --divisible N=x").find("--divisible N: 'x' is not an integer"),
            std::string::npos);
  EXPECT_EQ(runSpindle("gen " + scale + " --divisible N=3"), 1);
  EXPECT_EQ(runSpindle("gen " + scale + " --divisible N=0"), 1);
  EXPECT_EQ(runSpindle("gen " + scale + " --divisible N=x"), 1);
  EXPECT_EQ(runSpindle("compile " + scale + " --divisible N=32 --target sm_90"), 1);
  EXPECT_EQ(runSpindle("inspect " + scale + " --stage key --divisible N=-8"), 1);
  // The row stride of the unit-stride form, and the key stage says so.
  EXPECT_EQ(runSpindle("gen " + scale + " --divisible x.stride0=8"), 0);
  std::string key = spindleOutput("inspect " + scale + " --stage key --divisible x.stride0=8");
  EXPECT_NE(key.find("  x.stride0: the largest of 16, 8, 4, 2 it is a multiple of is in the key (8 here)\n"),
            std::string::npos)
      << key;
  EXPECT_NE(key.find("  x: strided; whether it is passed row-major, or else with inner stride 1, is in the key "
                     "(inner stride 1 here)\n"),
            std::string::npos)
      << key;
}

// --unit-stride names a strided tensor parameter; anything else is an error
// that names the strided ones, and `run` decides it from its own arguments.
TEST_F(CliTest, UnitStrideNamesAStridedTensor) {
  const std::string scale = "'" SPINDLE_SOURCE_DIR "/samples/scale_strided.spn'";
  EXPECT_EQ(runSpindle("gen " + scale + " --unit-stride x"), 0);
  std::string notStrided = spindleOutput("gen " + scale + " --unit-stride y");
  EXPECT_EQ(notStrided,
            "spindle: error: kernel 'scale_strided' has no strided tensor parameter 'y' to address with unit inner "
            "stride (its strided tensors: x)\n");
  EXPECT_EQ(runSpindle("gen " + scale + " --unit-stride y"), 1);
  EXPECT_EQ(runSpindle("gen " + scale + " --unit-stride x --contiguous x"), 1);
  EXPECT_EQ(runSpindle("gen " + scale + " --unit-stride"), 1);  // no value
  EXPECT_EQ(runSpindle("run " + scale + " --dims M=64,N=64 --unit-stride x"), 1);
}

TEST_F(CliTest, GenVerifyRunsTheClangChecker) {
  if (!fs::exists(SPINDLE_BINARY_DIR "/bin/spindle-verify")) GTEST_SKIP() << "spindle-verify was not built";
  const std::string kernels = SPINDLE_SOURCE_DIR "/tests/golden/kernels/";
  EXPECT_EQ(runSpindle("gen '" + kernels + "closures_nested.spn' --kernel row_moments --verify"), 0);
  EXPECT_EQ(runSpindle("gen '" + kernels + "generic.spn' --kernel axpby --dtype T=f16 --verify"), 0);
}

// --stage runs: every run access of a kernel in one specialization, vector
// or scalar, and what is missing for a scalar one.
TEST_F(CliTest, InspectRuns) {
  const std::string runs = "'" SPINDLE_SOURCE_DIR "/tests/golden/kernels/vector_runs.spn' --stage runs";
  std::string plain = spindleOutput("inspect " + runs + " --kernel encoder");
  EXPECT_NE(plain.find("vector_runs.spn:41:21: scalar: wte[ix, c + k]: load of a run of 8 bf16 (16 bytes): the base "
                       "of 'wte' is not known 16-byte aligned in this specialization (suggest --aligned wte)\n"),
            std::string::npos)
      << plain;
  EXPECT_NE(plain.find("3 run accesses, 0 vector\n"), std::string::npos) << plain;
  const std::string aligned = " --kernel encoder --aligned wte --aligned wpe --aligned out";
  std::string noGranularity = spindleOutput("inspect " + runs + aligned);
  EXPECT_NE(noGranularity.find("wte[ix, c + k]: load of a run of 8 bf16 (16 bytes): the offset of row `ix` of 'wte' "
                               "is a multiple of 1 element(s), not 8: C has no granularity 8 (--divisible C=8)\n"),
            std::string::npos)
      << noGranularity;
  std::string vector = spindleOutput("inspect " + runs + aligned + " --divisible C=8");
  EXPECT_NE(vector.find("vector_runs.spn:43:33: vector: wpe[t, c + k]: load_stream of a run of 8 bf16 (16 bytes) as "
                        "1 word of 16 bytes\n"),
            std::string::npos)
      << vector;
  EXPECT_NE(vector.find("3 run accesses, 3 vector\n"), std::string::npos) << vector;
  // A run that is no copy into a local array stays scalar, and says so.
  std::string histogram = spindleOutput("inspect '" SPINDLE_SOURCE_DIR "/samples/histogram.spn' --stage runs");
  EXPECT_NE(histogram.find(": scalar: x[start + k]: load of a run of 4 f32 (16 bytes): the loop body is not a plain "
                           "copy between the run and a local array `L[k]` or `L[b + k]`\n"),
            std::string::npos)
      << histogram;
  EXPECT_EQ(runSpindle("inspect " + runs), 1);  // two kernels, none named
  EXPECT_EQ(runSpindle("inspect " + runs + " --kernel encoder --bogus"), 1);
}

TEST_F(CliTest, InspectScopesAndKey) {
  EXPECT_EQ(runSpindle("inspect '" SPINDLE_SOURCE_DIR "/tests/golden/kernels/closures_nested.spn' --stage scopes"), 0);
  EXPECT_EQ(runSpindle("inspect '" SPINDLE_SOURCE_DIR "/samples/axpy.spn' --stage key --dtype T=f32"), 0);
  EXPECT_EQ(runSpindle("inspect '" SPINDLE_SOURCE_DIR "/samples/axpy.spn' --stage key --bogus"), 1);
  // The key stage says what is not in the key too: a grid from the device.
  std::string histogram = spindleOutput("inspect '" SPINDLE_SOURCE_DIR "/samples/histogram.spn' --stage key");
  EXPECT_NE(histogram.find("  @grid uses resident_blocks(): the device's occupancy for the loaded binary, asked at "
                           "launch, not in the key\n"),
            std::string::npos)
      << histogram;
  EXPECT_EQ(spindleOutput("inspect '" SPINDLE_SOURCE_DIR "/samples/axpy.spn' --stage key").find("resident_blocks"),
            std::string::npos);
  // Optional tensors, compile-time parameters with no value, launch scalars.
  std::string optional = spindleOutput("inspect '" SPINDLE_SOURCE_DIR
                                       "/tests/golden/kernels/optional_tensors.spn' --stage key --absent bias");
  EXPECT_NE(optional.find("  bias: optional; whether it is passed is in the key (absent here)\n"), std::string::npos)
      << optional;
  EXPECT_NE(optional.find("key: spindle=" SPINDLE_VERSION), std::string::npos) << optional;
  EXPECT_NE(optional.find(" --absent bias\n"), std::string::npos) << optional;
  std::string params = spindleOutput("inspect '" SPINDLE_SOURCE_DIR
                                     "/tests/golden/kernels/compile_time_params.spn' --stage key --kernel act_and_mul");
  EXPECT_NE(params.find("  ACT: fn: a compile-time parameter with no value (pass --const ACT=DEF)\n"),
            std::string::npos)
      << params;
  std::string tiles = spindleOutput("inspect '" SPINDLE_SOURCE_DIR
                                    "/tests/golden/kernels/launch_shapes.spn' --stage key --kernel tiles");
  EXPECT_NE(tiles.find("  n: a scalar @grid or @block uses, read at launch, not in the key\n"), std::string::npos)
      << tiles;
}

// One source, one key: the same module copied into two directories and named
// by a relative path, an absolute path, a path through `..`, a symlink and a
// directory whose name needs escaping compiles once; every later `compile`
// is a cache hit with the same key. #line still names the path as given.
TEST_F(CliTest, CompileKeyIgnoresWhereTheModuleLives) {
  fs::path root = fs::temp_directory_path() / ("spindle-paths-" + std::to_string(getpid()));
  fs::remove_all(root);
  const fs::path sample = fs::path(SPINDLE_SOURCE_DIR) / "samples" / "axpy.spn";
  for (const char* dir : {"a", "b", "we\"ird\\dir"}) {
    fs::create_directories(root / dir);
    fs::copy_file(sample, root / dir / "axpy.spn");
  }
  fs::create_symlink(root / "b" / "axpy.spn", root / "link.spn");
  const std::string inRoot = "cd '" + root.string() + "' && SPINDLE_CACHE_DIR='" + (root / "cache").string() + "' ";
  auto compileIn = [&](const std::string& path) {
    return spindleOutput("compile " + path + " --target sm_90 --dtype T=f32", inRoot);
  };
  auto field = [](const std::string& out, const std::string& name) {
    size_t at = out.find(name + ": ");
    if (at == std::string::npos) return std::string("<no " + name + ">");
    at += name.size() + 2;
    return out.substr(at, out.find('\n', at) - at);
  };
  std::string first = compileIn("a/axpy.spn");
  if (first.find("nvrtc") != std::string::npos && first.find("key: ") == std::string::npos) {
    fs::remove_all(root);
    GTEST_SKIP() << "nvrtc is not available: " << first;
  }
  ASSERT_EQ(field(first, "cache"), "miss") << first;
  const std::string key = field(first, "key");
  for (const std::string& path : {(root / "b" / "axpy.spn").string(), std::string("./a/../b/axpy.spn"),
                                  std::string("link.spn"), (root / "we\"ird\\dir" / "axpy.spn").string()}) {
    std::string out = compileIn("'" + path + "'");
    EXPECT_EQ(field(out, "key"), key) << path << "\n" << out;
    EXPECT_EQ(field(out, "cache"), "hit") << path << "\n" << out;
  }
  // The generated file still points compilers at the path the user named,
  // escaped inside the directive's string literal.
  std::string gen = spindleOutput("gen '" + (root / "we\"ird\\dir" / "axpy.spn").string() + "' --dtype T=f32");
  EXPECT_NE(gen.find("\"" + root.string() + "/we\\\"ird\\\\dir/axpy.spn\"\n"), std::string::npos)
      << gen.substr(0, 2000);
  fs::remove_all(root);
}

// `run` and `tune` read --scalar NAME=VALUE through one parser: a value
// without its name is a usage error that says what it expects.
TEST_F(CliTest, ScalarWithoutANameIsAUsageError) {
  const std::string axpy = "'" SPINDLE_SOURCE_DIR "/samples/axpy.spn'";
  for (const char* command : {"run", "tune"}) {
    const std::string out = spindleOutput(std::string(command) + " " + axpy + " --dims N=64 --scalar 2.5");
    EXPECT_NE(out.find(std::string(command) + ": --scalar expects NAME=VALUE"), std::string::npos) << out;
    EXPECT_NE(runSpindle(std::string(command) + " " + axpy + " --dims N=64 --scalar 2.5"), 0);
  }
}

}  // namespace
}  // namespace spindle::test
