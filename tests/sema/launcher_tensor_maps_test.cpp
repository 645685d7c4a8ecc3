// The host launcher's tensor maps (an nvcc or hipcc build, no runtime):
// one __spn_make_tensor_map a copy_tile box, from what the launcher has,
// as the runtime makes them (docs/language.md 8.14): its parameters, a
// static dim's constexpr (declared before it), a strided tensor's stride
// parameters. A checked build's copies read no map, so its launcher
// passes zeros.
#include "sema_test_util.h"

namespace spindle::test {
namespace {

const char* kTiles = R"(
@grid(1)
@block(128)
kernel tiles(X: f16[M, K], Y: f16[K, N] strided, Z: f16[M, N]):
    S = shared(f16, [64, 64], swizzle=128)
    T = shared(f16, [16, 64])
    full = barriers(1, 2)
    if thread_id() == 0:
        copy_tile(S, 0, 0, X, 0, 0, 64, 64, full, 0)
        copy_tile(T, 0, 0, Y, 0, 0, 16, 64, full, 0)
    wait(full, 0, 0)
    Z[0, 0] = S[0, 0] + T[0, 0]
)";

// The launcher: the text from the host helpers to the end of its #if.
std::string launcher(const std::string& source) {
  const size_t from = source.find("struct __spn_launch_tensor_map");
  const size_t to = source.find("#endif", source.find("inline hipError_t launch_"));
  return from == std::string::npos || to == std::string::npos ? "" : source.substr(from, to - from);
}

TEST(LauncherTensorMaps, EachBoxIsMadeFromTheLaunchersParameters) {
  Specialization spec;
  spec.staticDims = {{"K", 256}};
  spec.lineDirectives = false;
  const std::string source = generate(kTiles, "tiles", spec);
  const std::string text = launcher(source);
  EXPECT_NE(text.find("const __spn_launch_tensor_map X_tma0 = __spn_make_tensor_map(X, M, K, K, 1, sizeof(__half), "
                      "64, 64, 128);"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("const __spn_launch_tensor_map Y_tma1 = __spn_make_tensor_map(Y, K, N, Y_stride0, Y_stride1, "
                      "sizeof(__half), 16, 64, 0);"),
            std::string::npos)
      << text;
  const size_t k = source.find("constexpr int64_t K = 256;");
  EXPECT_NE(k, std::string::npos) << source;
  EXPECT_LT(k, source.find("__spn_make_tensor_map(X")) << source;
  EXPECT_NE(text.find("X_tma0.map, X_tma0.ready, Y_tma1.map, Y_tma1.ready);"), std::string::npos) << text;
}

TEST(LauncherTensorMaps, ACheckedBuildPassesZeros) {
  Specialization spec;
  spec.checked = true;
  spec.lineDirectives = false;
  const std::string source = generate(kTiles, "tiles", spec);
  EXPECT_EQ(source.find("__spn_make_tensor_map"), std::string::npos);
  EXPECT_NE(source.find("__spn_tensor_map{}, 0, __spn_tensor_map{}, 0);"), std::string::npos) << source;
}

}  // namespace
}  // namespace spindle::test
