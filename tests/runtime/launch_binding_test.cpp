// Hostile launches: every way a caller can get launch arguments wrong is a
// spindle::Error whose message names the kernel, parameter, dim and values.
// These test the binding layer directly, with hand-built kernel infos, so
// they need no generator output, compiler or GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <regex>

#include "../../runtime/src/backend.h"
#include "../../runtime/src/launch_binding.h"
#include "spindle/generator.h"
#include "test_util.h"

namespace spindle {
namespace {

using rt::Binding;
using rt::KernelPlan;
using test::errorFrom;
using test::scalarParam;
using test::tensorParam;

constexpr ScalarType F32 = ScalarType::F32;
constexpr ScalarType F16 = ScalarType::F16;
constexpr ScalarType F64 = ScalarType::F64;

int dummy[4];
const void* dev = dummy;  // any non-null pointer: nothing is dereferenced

// softmax(x: f32[M, N], y: f32[M, N], scale: f32)
KernelInfo softmaxInfo() {
  KernelInfo k;
  k.name = "softmax";
  k.params = {tensorParam("x", F32, {"M", "N"}), tensorParam("y", F32, {"M", "N"}), scalarParam("scale", F32)};
  k.dimSymbols = {"M", "N"};
  return k;
}

// axpy[T](x: T[N], y: T[N], a: T)
KernelInfo axpyInfo() {
  KernelInfo k;
  k.name = "axpy";
  k.typeParams = {"T"};
  k.params = {tensorParam("x", F32, {"N"}, false, "T"), tensorParam("y", F32, {"N"}, false, "T"),
              scalarParam("a", F32, "T")};
  k.dimSymbols = {"N"};
  return k;
}

// transpose(x: f32[M, N] strided, y: f32[N, M], tile: f32[4, 4]) @static(N)
KernelInfo transposeInfo() {
  KernelInfo k;
  k.name = "transpose";
  k.params = {tensorParam("x", F32, {"M", "N"}, true), tensorParam("y", F32, {"N", "M"}),
              tensorParam("tile", F32, {"4", "4"})};
  k.dimSymbols = {"M", "N"};
  k.staticDims = {"N"};
  return k;
}

std::string bindError(const KernelInfo& info, std::initializer_list<Arg> args,
                      const std::vector<std::string>& extraStatic = {}) {
  KernelPlan plan = KernelPlan::make(info, extraStatic);
  Binding b;
  return errorFrom([&] { rt::bindArguments(plan, args.begin(), args.size(), b); });
}

Binding bindOk(const KernelInfo& info, std::initializer_list<Arg> args, const std::vector<std::string>& extra = {}) {
  KernelPlan plan = KernelPlan::make(info, extra);
  Binding b;
  rt::bindArguments(plan, args.begin(), args.size(), b);
  return b;
}

TEST(LaunchBinding, BindsDimsAndTypes) {
  Binding b = bindOk(softmaxInfo(), {tensor(dev, F32, {8, 128}), tensor(dev, F32, {8, 128}), scalar(0.5f)});
  EXPECT_EQ(b.dims[0], 8);
  EXPECT_EQ(b.dims[1], 128);
  // Nothing static, no type parameters: one binary for every shape, of the
  // two index widths (the key's one word: these fit 32 bits).
  ASSERT_EQ(b.key.count, 1);
  EXPECT_EQ(b.key.words[0], 1);

  Binding a = bindOk(axpyInfo(), {tensor(dev, F16, {100}), tensor(dev, F16, {100}), scalar(F16, 2.0)});
  EXPECT_EQ(a.types[0], F16);
  ASSERT_EQ(a.key.count, 2);
  EXPECT_EQ(a.key.words[0], int64_t(F16));
}

TEST(LaunchBinding, StaticDimsEnterTheKeyAndDynamicDoNot) {
  auto args = [](int64_t m, int64_t n) {
    return std::vector<Arg>{tensor(dev, F32, {m, n}), tensor(dev, F32, {m, n}), scalar(1.0f)};
  };
  KernelPlan dynamicPlan = KernelPlan::make(softmaxInfo(), {});
  KernelPlan staticN = KernelPlan::make(softmaxInfo(), {"N"});
  Binding a, b, c, d;
  auto v1 = args(8, 128), v2 = args(16, 128), v3 = args(8, 64);
  rt::bindArguments(dynamicPlan, v1.data(), v1.size(), a);
  rt::bindArguments(dynamicPlan, v3.data(), v3.size(), b);
  EXPECT_TRUE(a.key == b.key);  // dynamic N: same binary
  rt::bindArguments(staticN, v1.data(), v1.size(), a);
  rt::bindArguments(staticN, v2.data(), v2.size(), b);
  rt::bindArguments(staticN, v3.data(), v3.size(), c);
  EXPECT_TRUE(a.key == b.key);   // M is still dynamic
  EXPECT_FALSE(a.key == c.key);  // N = 128 vs 64
  EXPECT_NE(a.key.hash(), c.key.hash());
  (void)d;
}

TEST(LaunchBinding, TooFewAndTooManyArguments) {
  std::string e = bindError(softmaxInfo(), {tensor(dev, F32, {8, 128}), tensor(dev, F32, {8, 128})});
  EXPECT_CONTAINS(e, "softmax: expected 3 arguments (x: f32[M, N], y: f32[M, N], scale: f32), got 2");
  e = bindError(softmaxInfo(), {tensor(dev, F32, {8, 128}), tensor(dev, F32, {8, 128}), scalar(1.0f), scalar(2.0f)});
  EXPECT_CONTAINS(e, "expected 3 arguments");
  EXPECT_CONTAINS(e, "got 4");
}

TEST(LaunchBinding, TensorForScalarAndScalarForTensor) {
  std::string e = bindError(softmaxInfo(), {scalar(1.0f), tensor(dev, F32, {8, 128}), scalar(1.0f)});
  EXPECT_CONTAINS(e, "softmax: parameter 'x' (f32[M, N]): expected a tensor, got a scalar f32");
  e = bindError(softmaxInfo(), {tensor(dev, F32, {8, 128}), tensor(dev, F32, {8, 128}), tensor(dev, F32, {1})});
  EXPECT_CONTAINS(e, "parameter 'scale' (f32): expected a scalar, got a tensor f32[1]");
}

TEST(LaunchBinding, DtypeMismatch) {
  std::string e = bindError(softmaxInfo(), {tensor(dev, F32, {8, 128}), tensor(dev, F16, {8, 128}), scalar(1.0f)});
  EXPECT_CONTAINS(e, "softmax: parameter 'y' (f32[M, N]): dtype mismatch: expected f32, got f16");
  e = bindError(softmaxInfo(), {tensor(dev, F32, {8, 128}), tensor(dev, F32, {8, 128}), scalar(1.0)});
  EXPECT_CONTAINS(e, "parameter 'scale' (f32): dtype mismatch: expected f32, got f64");
}

TEST(LaunchBinding, TypeParameterDisagreement) {
  std::string e = bindError(axpyInfo(), {tensor(dev, F32, {4}), tensor(dev, F16, {4}), scalar(1.0f)});
  EXPECT_CONTAINS(e, "axpy: parameter 'y' (T[N]): type parameter T bound to f32 by 'x' but f16 by 'y'");
  e = bindError(axpyInfo(), {tensor(dev, F64, {4}), tensor(dev, F64, {4}), scalar(1.0f)});
  EXPECT_CONTAINS(e, "parameter 'a' (T): type parameter T bound to f64 by 'x' but f32 by 'a'");
}

TEST(LaunchBinding, RankMismatch) {
  std::string e = bindError(softmaxInfo(), {tensor(dev, F32, {2, 3, 4}), tensor(dev, F32, {8, 128}), scalar(1.0f)});
  EXPECT_CONTAINS(e,
                  "softmax: parameter 'x' (f32[M, N]): rank mismatch: expected rank 2, got rank 3 "
                  "(f32[2, 3, 4])");
  int64_t shape[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  e = bindError(softmaxInfo(), {tensor(dev, F32, shape, 9), tensor(dev, F32, {8, 128}), scalar(1.0f)});
  EXPECT_CONTAINS(e, "got rank 9");
}

TEST(LaunchBinding, DisagreeingDims) {
  std::string e = bindError(softmaxInfo(), {tensor(dev, F32, {8, 128}), tensor(dev, F32, {8, 64}), scalar(1.0f)});
  EXPECT_CONTAINS(e, "softmax: parameter 'y' dim 1 (N): bound to 128 by 'x' dim 1 but 64 by 'y'");
  // transpose: y is [N, M], so its dim 0 must equal x's dim 1.
  e = bindError(transposeInfo(), {tensor(dev, F32, {8, 16}), tensor(dev, F32, {8, 16}), tensor(dev, F32, {4, 4})});
  EXPECT_CONTAINS(e, "transpose: parameter 'y' dim 0 (N): bound to 16 by 'x' dim 1 but 8 by 'y'");
}

TEST(LaunchBinding, LiteralDims) {
  std::string e =
      bindError(transposeInfo(), {tensor(dev, F32, {8, 16}), tensor(dev, F32, {16, 8}), tensor(dev, F32, {4, 5})});
  EXPECT_CONTAINS(e, "transpose: parameter 'tile' dim 1: expected 4, got 5");
}

TEST(LaunchBinding, ZeroAndNegativeSizes) {
  std::string e = bindError(softmaxInfo(), {tensor(dev, F32, {0, 128}), tensor(dev, F32, {0, 128}), scalar(1.0f)});
  EXPECT_CONTAINS(e, "softmax: parameter 'x' dim 0 (M): size 0 in f32[0, 128]");
  e = bindError(softmaxInfo(), {tensor(dev, F32, {8, -1}), tensor(dev, F32, {8, -1}), scalar(1.0f)});
  EXPECT_CONTAINS(e, "parameter 'x' dim 1 (N): size -1");
}

TEST(LaunchBinding, HugeSizes) {
  int64_t big = int64_t(1) << 40;
  std::string e = bindError(softmaxInfo(), {tensor(dev, F32, {big, big}), tensor(dev, F32, {big, big}), scalar(1.0f)});
  EXPECT_CONTAINS(e,
                  "softmax: parameter 'x' (f32[M, N]): f32[1099511627776, 1099511627776] has more elements "
                  "than an int64_t can count");
  int64_t n = std::numeric_limits<int64_t>::max() / 2;  // elements fit, bytes do not
  e = bindError(softmaxInfo(), {tensor(dev, F32, {1, n}), tensor(dev, F32, {1, n}), scalar(1.0f)});
  EXPECT_CONTAINS(e, "is more bytes than an int64_t can count");
  // Generated loops running to a dim rely on dims being at most 2^62.
  int64_t over = (int64_t(1) << 62) + 1;
  e = bindError(softmaxInfo(), {tensor(dev, F32, {1, over}), tensor(dev, F32, {1, over}), scalar(1.0f)});
  EXPECT_CONTAINS(e, "parameter 'x' dim 1 (N): size 4611686018427387905 in");
  EXPECT_CONTAINS(e, "is over 2^62, the largest a dim may be");
}

TEST(LaunchBinding, NonContiguousViewForContiguousParameter) {
  // A transposed view of a 128x8 buffer passed where f32[M, N] (contiguous) is declared.
  std::string e =
      bindError(softmaxInfo(), {tensor(dev, F32, {8, 128}, {1, 8}), tensor(dev, F32, {8, 128}), scalar(1.0f)});
  EXPECT_CONTAINS(e,
                  "softmax: parameter 'x' (f32[M, N]): non-contiguous view: strides [1, 8] for shape "
                  "[8, 128]");
  EXPECT_CONTAINS(e, "declare the parameter 'strided'");
  // Explicit strides that are contiguous are fine, and size-1 dims may have any stride.
  bindOk(softmaxInfo(), {tensor(dev, F32, {8, 128}, {128, 1}), tensor(dev, F32, {8, 128}), scalar(1.0f)});
  bindOk(softmaxInfo(), {tensor(dev, F32, {1, 128}, {7, 1}), tensor(dev, F32, {1, 128}), scalar(1.0f)});
  // A strided parameter takes the view as it is.
  bindOk(transposeInfo(), {tensor(dev, F32, {8, 16}, {1, 8}), tensor(dev, F32, {16, 8}), tensor(dev, F32, {4, 4})});
}

TEST(LaunchBinding, NullPointers) {
  std::string e = bindError(softmaxInfo(), {tensor(dev, F32, {8, 128}), tensor(nullptr, F32, {8, 128}), scalar(1.0f)});
  EXPECT_CONTAINS(e, "softmax: parameter 'y' (f32[M, N]): null device pointer");
}

TEST(LaunchBinding, InvalidDtype) {
  std::string e =
      bindError(softmaxInfo(), {tensor(dev, ScalarType::Invalid, {8, 128}), tensor(dev, F32, {8, 128}), scalar(1.0f)});
  EXPECT_CONTAINS(e, "parameter 'x' (f32[M, N]): the argument has no valid dtype");
}

TEST(LaunchBinding, UnknownCallerStaticDim) {
  try {
    KernelPlan::make(softmaxInfo(), {"K"});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(),
                    "softmax: the caller names 'K' static, but the kernel has no such dim symbol "
                    "(it has: M, N)");
  }
}

// The in-memory key has room for 29 static dims and type parameters besides
// its three layout words; a kernel beyond that is refused when planned.
TEST(LaunchBinding, TooManyKeyWordsAreRefused) {
  KernelInfo k;
  k.name = "wide";
  std::vector<std::string> dims;
  for (int i = 0; i < 30; ++i) dims.push_back("D" + std::to_string(i));
  for (size_t first = 0; first < dims.size(); first += 8) {  // tensors have rank 8 at most
    std::vector<std::string> shape(dims.begin() + long(first), dims.begin() + long(std::min(first + 8, dims.size())));
    k.params.push_back(tensorParam("x" + std::to_string(first / 8), F32, shape));
  }
  k.dimSymbols = dims;
  std::vector<std::string> allButOne(dims.begin(), dims.end() - 1);
  EXPECT_NO_THROW(KernelPlan::make(k, allButOne));  // 29 static dims fit
  try {
    KernelPlan::make(k, dims);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "wide: more than 29 static dims and type parameters");
  }
}

TEST(LaunchBinding, UnboundTypeParameter) {
  KernelInfo k;
  k.name = "fill";
  k.typeParams = {"T", "U"};
  k.params = {tensorParam("y", F32, {"N"}, false, "T")};
  k.dimSymbols = {"N"};
  std::string e = bindError(k, {tensor(dev, F32, {4})});
  EXPECT_CONTAINS(e, "fill: type parameter U is not bound by any argument");
}

TEST(LaunchBinding, GeometryLimits) {
  KernelPlan plan = KernelPlan::make(softmaxInfo(), {});
  Binding b;
  std::vector<Arg> args = {tensor(dev, F32, {8, 128}), tensor(dev, F32, {8, 128}), scalar(1.0f)};
  rt::bindArguments(plan, args.data(), args.size(), b);
  LaunchGeometry g;
  g.grid[0] = 8;
  g.block[0] = 256;
  rt::checkGeometry(plan, b, g);  // fine
  auto geometryError = [&](LaunchGeometry bad) { return errorFrom([&] { rt::checkGeometry(plan, b, bad); }); };
  LaunchGeometry zero = g;
  zero.grid[0] = 0;
  EXPECT_CONTAINS(geometryError(zero),
                  "softmax: launch grid x is 0; it must be in [1, 2147483647] "
                  "(grid [0, 1, 1], block [256, 1, 1], with M=8, N=128)");
  LaunchGeometry huge = g;
  huge.grid[1] = 70000;
  EXPECT_CONTAINS(geometryError(huge), "launch grid y is 70000; it must be in [1, 65535]");
  LaunchGeometry threads = g;
  threads.block[0] = 64;
  threads.block[1] = 32;
  EXPECT_CONTAINS(geometryError(threads), "2048 threads per block; at most 1024");
}

TEST(LaunchBinding, PacksArgumentsInAbiOrder) {
  KernelPlan plan = KernelPlan::make(transposeInfo(), {});
  std::vector<AbiArg> abi;
  auto add = [&](AbiArgKind k, int param, int axis, const std::string& dim, ScalarType t = ScalarType::I64) {
    AbiArg a;
    a.kind = k;
    a.paramIndex = param;
    a.axis = axis;
    a.dimSymbol = dim;
    a.type = t;
    abi.push_back(a);
  };
  add(AbiArgKind::TensorPointer, 0, -1, "");
  add(AbiArgKind::Stride, 0, 0, "");
  add(AbiArgKind::Stride, 0, 1, "");
  add(AbiArgKind::TensorPointer, 1, -1, "");
  add(AbiArgKind::TensorPointer, 2, -1, "");
  add(AbiArgKind::Dim, -1, -1, "M");  // N is static: not an argument
  auto ops = rt::makePackOps(plan, abi);
  int bufX[1], bufY[1], bufT[1];
  std::vector<Arg> args = {tensor(bufX, F32, {8, 16}, {1, 8}), tensor(bufY, F32, {16, 8}), tensor(bufT, F32, {4, 4})};
  Binding b;
  rt::bindArguments(plan, args.data(), args.size(), b);
  rt::PackedArgs packed;
  rt::packArguments(ops, args.data(), b, packed);
  ASSERT_EQ(packed.count, 6);
  auto ptrAt = [&](int i) { return *static_cast<void**>(packed.pointers[i]); };
  auto i64At = [&](int i) { return *static_cast<int64_t*>(packed.pointers[i]); };
  EXPECT_EQ(ptrAt(0), bufX);
  EXPECT_EQ(i64At(1), 1);
  EXPECT_EQ(i64At(2), 8);
  EXPECT_EQ(ptrAt(3), bufY);
  EXPECT_EQ(ptrAt(4), bufT);
  EXPECT_EQ(i64At(5), 8);  // M

  // Contiguous strides are computed when the caller gives none.
  std::vector<Arg> contiguous = {tensor(bufX, F32, {8, 16}), tensor(bufY, F32, {16, 8}), tensor(bufT, F32, {4, 4})};
  rt::bindArguments(plan, contiguous.data(), contiguous.size(), b);
  rt::packArguments(ops, contiguous.data(), b, packed);
  EXPECT_EQ(i64At(1), 16);
  EXPECT_EQ(i64At(2), 1);
}

// A backend that only makes tensor maps: it records each request and
// fills the map with a marker byte (the rest of the interface is unused).
class TensorMapBackend final : public rt::Backend {
 public:
  std::vector<TensorMapRequest> requests;
  bool encodeTensorMap(const TensorMapRequest& r, void* out) override {
    requests.push_back(r);
    std::memset(out, 0x5a, 128);
    return true;
  }
  BackendKind kind() const override { return BackendKind::Cuda; }
  bool hasCompiler(std::string*) override { return false; }
  std::string compilerIdentity() override { return ""; }
  std::vector<std::string> compileOptions(const std::string&) override { return {}; }
  std::vector<std::string> unsafeFpAtomicsOptions() const override { return {}; }
  bool acceptsTarget(const std::string&) const override { return false; }
  rt::CompileOutput compile(const std::string&, const std::string&, const std::string&,
                            const std::vector<std::string>&) override {
    return {};
  }
  int deviceCount(std::string*) override { return 0; }
  void useDevice(int) override {}
  std::string deviceTarget(int) override { return ""; }
  std::string deviceName(int) override { return ""; }
  void* loadFunction(const std::vector<char>&, const std::string&, int) override { return nullptr; }
  void launch(void*, const LaunchGeometry&, void*, void**, int) override {}
  int64_t residentBlocks(void*, int64_t, uint64_t, int) override { return 0; }
  void* allocate(size_t) override { return nullptr; }
  void release(void*) noexcept override {}
  void copyToDevice(void*, const void*, size_t) override {}
  void copyToHost(void*, const void*, size_t) override {}
  void synchronize(void*) override {}
  float timeMs(void*, const std::function<void()>&) override { return 0; }
};

// copy_tile's tensor maps (docs/language.md 8.14): the backend is asked for
// a map of a 2-D row-major view with 16-byte-aligned base and row pitch,
// with the ABI's box and swizzle; its ready flag says whether it made one.
// Anything else (an unaligned base or pitch, no backend) passes zeros, not
// ready, and the kernel copies elements.
TEST(LaunchBinding, TensorMapsAreMadeWhereTmaCanReadTheTensor) {
  KernelInfo info;  // tile(x: f32[M, N] strided, y: f32[M, N] strided, scale: f32)
  info.name = "tile";
  info.params = {tensorParam("x", F32, {"M", "N"}, true), tensorParam("y", F32, {"M", "N"}, true),
                 scalarParam("scale", F32)};
  info.dimSymbols = {"M", "N"};
  KernelPlan plan = KernelPlan::make(info, {});
  std::vector<AbiArg> abi(4);
  abi[0].kind = AbiArgKind::TensorPointer;
  abi[0].paramIndex = 0;
  abi[1].kind = AbiArgKind::TensorMap;
  abi[1].paramIndex = 0;
  abi[1].axis = 0;
  abi[1].type = F32;
  abi[1].boxRows = 128;
  abi[1].boxCols = 32;
  abi[1].swizzle = 128;
  abi[2].kind = AbiArgKind::TensorMapReady;
  abi[2].axis = 0;
  abi[2].type = ScalarType::I32;
  abi[3].kind = AbiArgKind::Dim;
  abi[3].dimSymbol = "M";
  auto ops = rt::makePackOps(plan, abi);
  alignas(16) static unsigned char buffer[4096];
  TensorMapBackend backend;
  rt::PackedArgs packed;
  auto pack = [&](const void* x, std::initializer_list<int64_t> shape, std::initializer_list<int64_t> strides,
                  rt::Backend* be) {
    std::vector<Arg> args = {tensor(x, F32, shape, strides), tensor(buffer, F32, shape, strides), scalar(F32, 1.0)};
    Binding b;
    rt::bindArguments(plan, args.data(), args.size(), b);
    rt::packArguments(ops, args.data(), b, packed, be, /*device=*/2);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(packed.pointers[1]) % 64, 0u);  // CUtensorMap's alignment
    return *static_cast<int32_t*>(packed.pointers[2]);
  };
  // Rows of 12 f32 (48 bytes) in a pitch of 16 elements (64 bytes).
  EXPECT_EQ(pack(buffer, {10, 12}, {16, 1}, &backend), 1);
  ASSERT_EQ(backend.requests.size(), 1u);
  const rt::Backend::TensorMapRequest& r = backend.requests[0];
  EXPECT_EQ(r.base, static_cast<const void*>(buffer));
  EXPECT_EQ(r.elementBytes, 4);
  EXPECT_EQ(r.rows, 10);
  EXPECT_EQ(r.cols, 12);
  EXPECT_EQ(r.rowStrideBytes, 64);
  EXPECT_EQ(r.boxRows, 128);
  EXPECT_EQ(r.boxCols, 32);
  EXPECT_EQ(r.swizzle, 128);
  EXPECT_EQ(r.device, 2);  // encoded in the launch device's context
  EXPECT_EQ(static_cast<unsigned char*>(packed.pointers[1])[0], 0x5a);
  EXPECT_EQ(packed.mapsNotMade, 0);
  // A base 4 bytes past alignment, a pitch of 13 elements (52 bytes), an
  // inner stride of 2: not asked, zeros, not ready.
  for (int i = 0; i < 3; ++i) {
    const int ready = i == 0   ? pack(buffer + 4, {10, 12}, {16, 1}, &backend)
                      : i == 1 ? pack(buffer, {10, 12}, {13, 1}, &backend)
                               : pack(buffer, {10, 12}, {32, 2}, &backend);
    EXPECT_EQ(ready, 0) << i;
    EXPECT_EQ(static_cast<unsigned char*>(packed.pointers[1])[0], 0) << i;
    EXPECT_EQ(packed.mapsNotMade, 1) << i;  // CacheStats::tensorMapFallbacks counts it
  }
  EXPECT_EQ(backend.requests.size(), 1u);
  EXPECT_EQ(pack(buffer, {10, 12}, {16, 1}, nullptr), 0);  // no backend: the cpu target's case

  // A map past the runtime's eight is refused when the launch is planned.
  abi[1].axis = rt::kMaxTensorMaps;
  EXPECT_EQ(errorFrom([&] { rt::makePackOps(plan, abi); }),
            "tile: tensor map 8 of the generated kernel; the runtime supports 8");
}

TEST(LaunchBinding, PacksScalarsByTheirSize) {
  KernelPlan plan = KernelPlan::make(axpyInfo(), {});
  AbiArg a;
  a.kind = AbiArgKind::Scalar;
  a.paramIndex = 2;
  a.type = F16;
  auto ops = rt::makePackOps(plan, {a});
  EXPECT_EQ(ops[0].bytes, 2);
  std::vector<Arg> args = {tensor(dev, F16, {4}), tensor(dev, F16, {4}), scalar(F16, 1.5)};
  Binding b;
  rt::bindArguments(plan, args.data(), args.size(), b);
  rt::PackedArgs packed;
  rt::packArguments(ops, args.data(), b, packed);
  uint16_t half;
  std::memcpy(&half, packed.pointers[0], 2);
  EXPECT_EQ(half, 0x3e00);  // 1.5 in IEEE binary16
}

TEST(LaunchBinding, RejectsAnAbiThatDoesNotMatchTheKernel) {
  KernelPlan plan = KernelPlan::make(softmaxInfo(), {});
  AbiArg a;
  a.kind = AbiArgKind::Dim;
  a.dimSymbol = "K";
  EXPECT_THROW(rt::makePackOps(plan, {a}), Error);
  a.kind = AbiArgKind::Stride;
  a.paramIndex = 0;
  a.axis = 2;
  EXPECT_THROW(rt::makePackOps(plan, {a}), Error);
}

TEST(Args, ScalarConversions) {
  EXPECT_EQ(scalar(ScalarType::BF16, 1.0).bits, 0x3f80u);
  EXPECT_EQ(scalar(ScalarType::F16, 65504.0).bits, 0x7bffu);
  EXPECT_EQ(scalar(ScalarType::F16, 1e6).bits, 0x7c00u);  // overflow to inf
  EXPECT_EQ(scalar(ScalarType::I32, -3).bits & 0xffffffffu, 0xfffffffdu);
  EXPECT_THROW(scalar(ScalarType::I8, 300), Error);
  EXPECT_THROW(scalar(ScalarType::I32, 1.5), Error);
  EXPECT_THROW(scalar(ScalarType::I64, 9223372036854775808.0), Error);
  EXPECT_THROW(tensor(dev, F32, {4, 4}, {1}), Error);
}

}  // namespace
}  // namespace spindle

namespace spindle::rt {
namespace {

// Tensors are __restrict__ in generated code: a written tensor that shares
// memory with another argument is refused before any launch.
TEST(LaunchBinding, WrittenTensorsMustNotOverlapOtherTensors) {
  KernelInfo info;
  info.name = "scale";
  info.params = {tensorParam("x", ScalarType::F32, {"N"}), tensorParam("y", ScalarType::F32, {"N"})};
  info.params[1].writes = true;
  info.dimSymbols = {"N"};
  KernelPlan plan = KernelPlan::make(info, {});
  static float buffer[64];
  auto bindPair = [&](const float* x, const float* y, int64_t n) {
    Arg args[] = {tensor(x, ScalarType::F32, {n}), tensor(y, ScalarType::F32, {n})};
    Binding b;
    bindArguments(plan, args, 2, b);
  };
  // Disjoint halves of one allocation: fine, even when adjacent.
  EXPECT_NO_THROW(bindPair(buffer, buffer + 32, 32));
  // In place (the same memory) and partial overlaps are refused, with names.
  try {
    bindPair(buffer, buffer, 32);
    ADD_FAILURE() << "in-place call was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("scale: parameters 'y' and 'x' overlap in memory"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(bindPair(buffer, buffer + 31, 32), Error);
  // A view with a negative stride reaches below its pointer.
  Arg reversed[] = {tensor(buffer + 40, ScalarType::F32, {8}, {-1}), tensor(buffer + 32, ScalarType::F32, {8})};
  info.params[0].strided = true;
  KernelPlan stridedPlan = KernelPlan::make(info, {});
  Binding b;
  EXPECT_THROW(bindArguments(stridedPlan, reversed, 2, b), Error);  // x covers [33, 41), y [32, 40)
}

// The check is exact, not by byte extents: q and k slices of one qkv buffer
// interleave without sharing an element, so a rotary embedding may write both
// in place; slices that do share an element are refused, naming the elements.
TEST(LaunchBinding, InterleavedSlicesBindAndRealOverlapsNameTheElements) {
  KernelInfo info;
  info.name = "rope";
  info.params = {tensorParam("q", ScalarType::F32, {"B", "T", "C"}, true),
                 tensorParam("k", ScalarType::F32, {"B", "T", "C"}, true)};
  info.params[0].writes = info.params[1].writes = true;
  info.dimSymbols = {"B", "T", "C"};
  KernelPlan plan = KernelPlan::make(info, {});
  constexpr int64_t B = 2, T = 3, C = 4;
  static float qkv[B * T * 3 * C];
  auto bind = [&](const float* q, const float* k) {
    Arg args[] = {tensor(q, ScalarType::F32, {B, T, C}, {T * 3 * C, 3 * C, 1}),
                  tensor(k, ScalarType::F32, {B, T, C}, {T * 3 * C, 3 * C, 1})};
    Binding b;
    bindArguments(plan, args, 2, b);
  };
  EXPECT_NO_THROW(bind(qkv, qkv + C));          // q and k
  EXPECT_NO_THROW(bind(qkv + 2 * C, qkv + C));  // v and k
  // k one element early: its last column is q's.
  const std::string error = test::errorFrom([&] { bind(qkv, qkv + C - 1); });
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(error, m,
                        std::regex("^rope: parameters 'q' and 'k' overlap in memory: q\\[(\\d+), (\\d+), (\\d+)\\] "
                                   "and k\\[(\\d+), (\\d+), (\\d+)\\] share bytes at 0x([0-9a-f]+); 'q' is "
                                   "written and tensors are __restrict__: pass separate buffers$")))
      << error;
  // The witness is real: both elements are the float at that address.
  auto element = [&](const float* base, int first) {
    return base + std::stoll(m[first]) * T * 3 * C + std::stoll(m[first + 1]) * 3 * C + std::stoll(m[first + 2]);
  };
  EXPECT_EQ(element(qkv, 1), element(qkv + C - 1, 4));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(element(qkv, 1)), std::stoull(m[7], nullptr, 16));
}

// Views the search cannot decide within its budget (a subset-sum instance:
// 16 axes of size 3 with unrelated strides) are refused, saying so.
TEST(LaunchBinding, UndecidedOverlapIsRefusedAsUnproven) {
  KernelInfo info;
  info.name = "mix";
  std::vector<std::string> dims(8, "3");
  info.params = {tensorParam("x", ScalarType::U8, dims, true), tensorParam("y", ScalarType::U8, dims, true)};
  info.params[0].writes = true;
  KernelPlan plan = KernelPlan::make(info, {});
  const int64_t shape[8] = {3, 3, 3, 3, 3, 3, 3, 3};
  const int64_t xStrides[8] = {1828342, 1516200, 1113844, 1720131, 1393720, 1072986, 1513789, 1161993};
  const int64_t yStrides[8] = {1309728, 1044898, 1523857, 1499689, 1982444, 1533743, 1886502, 1962153};
  const auto* base = reinterpret_cast<const uint8_t*>(uintptr_t(1) << 20);  // never dereferenced
  Arg args[] = {tensor(base, ScalarType::U8, shape, 8, xStrides), tensor(base + 1, ScalarType::U8, shape, 8, yStrides)};
  Binding b;
  const std::string error = test::errorFrom([&] { bindArguments(plan, args, 2, b); });
  EXPECT_CONTAINS(error,
                  "mix: parameters 'x' and 'y' may overlap in memory: the launch check could not prove the views "
                  "disjoint within its work budget (x: u8[3, 3, 3, 3, 3, 3, 3, 3] strides [1828342, 1516200, 1113844, "
                  "1720131, 1393720, 1072986, 1513789, 1161993] at 0x100000; y: u8[3, 3, 3, 3, 3, 3, 3, 3] strides "
                  "[1309728, 1044898, 1523857, 1499689, 1982444, 1533743, 1886502, 1962153] at 0x100001); 'x' is "
                  "written and tensors are __restrict__: pass separate buffers");
}

}  // namespace
}  // namespace spindle::rt

namespace spindle::rt {
namespace {

// A strided parameter passed as a row-major view gets its own (contiguous)
// specialization; any other view keeps the general one.
TEST(LaunchBinding, ContiguousViewsOfStridedParametersGetTheirOwnKey) {
  KernelInfo info;
  info.name = "copy_view";
  info.params = {test::tensorParam("x", ScalarType::F32, {"M", "N"}, true),
                 test::tensorParam("y", ScalarType::F32, {"M", "N"})};
  info.params[1].writes = true;
  info.dimSymbols = {"M", "N"};
  KernelPlan plan = KernelPlan::make(info, {});
  static float x[64], y[64];
  auto keyFor = [&](Arg xArg) {
    Arg args[] = {xArg, tensor(y, ScalarType::F32, {4, 8})};
    Binding b;
    bindArguments(plan, args, 2, b);
    return b;
  };
  Binding plain = keyFor(tensor(x, ScalarType::F32, {4, 8}));
  Binding rowMajor = keyFor(tensor(x, ScalarType::F32, {4, 8}, {8, 1}));
  Binding transposed = keyFor(tensor(x, ScalarType::F32, {4, 8}, {1, 4}));
  EXPECT_EQ(plain.contiguousStrided, 1u);
  EXPECT_EQ(rowMajor.contiguousStrided, 1u);
  EXPECT_EQ(transposed.contiguousStrided, 0u);
  EXPECT_TRUE(plain.key == rowMajor.key);
  EXPECT_FALSE(plain.key == transposed.key);
}

// A tensor accessed in runs whose address is a multiple of 16 bytes gets the
// aligned specialization (vector access allowed); a view at any other offset
// must not share its binary. Other tensors' alignment is not looked at.
TEST(LaunchBinding, AlignmentOfTensorsAccessedInRunsIsPartOfTheKey) {
  KernelInfo info;
  info.name = "scale";
  info.params = {test::tensorParam("x", ScalarType::F32, {"N"}), test::tensorParam("y", ScalarType::F32, {"N"}),
                 test::tensorParam("z", ScalarType::F32, {"N"}), test::scalarParam("a", ScalarType::F32)};
  info.params[0].accessedInRuns = info.params[1].accessedInRuns = true;
  info.params[1].writes = true;
  info.dimSymbols = {"N"};
  KernelPlan plan = KernelPlan::make(info, {});
  alignas(16) static float x[64], y[64], z[64];
  auto bind = [&](float* xp, float* yp, float* zp = nullptr) {
    if (!zp) zp = z;
    Arg args[] = {tensor(xp, ScalarType::F32, {8}), tensor(yp, ScalarType::F32, {8}), tensor(zp, ScalarType::F32, {8}),
                  scalar(2.0f)};
    Binding b;
    bindArguments(plan, args, 4, b);
    return b;
  };
  Binding both = bind(x, y);
  Binding xOffset = bind(x + 1, y);  // 4 bytes past a 16-byte boundary
  Binding yOffset = bind(x + 4, y + 2);
  EXPECT_EQ(both.alignedTensors, 3u);
  EXPECT_EQ(xOffset.alignedTensors, 2u);
  EXPECT_EQ(yOffset.alignedTensors, 1u);
  EXPECT_FALSE(both.key == xOffset.key);
  EXPECT_FALSE(both.key == yOffset.key);
  EXPECT_FALSE(xOffset.key == yOffset.key);
  EXPECT_TRUE(both.key == bind(x + 8, y + 4).key);  // other aligned addresses: the same binary
  EXPECT_TRUE(both.key == bind(x, y, z + 1).key);   // z is not accessed in runs
  EXPECT_EQ(bind(x, y, z + 1).alignedTensors, 3u);
}

// The granularity of a dim that places rows of run-indexed tensors (the
// largest of 16, 8, 4, 2 dividing it) is part of the key: such rows of an
// aligned tensor start aligned to it. Other dims, and the value beyond the
// granularity, are not.
TEST(LaunchBinding, GranularityOfRowDimsIsPartOfTheKey) {
  KernelInfo info;
  info.name = "rows";
  info.params = {test::tensorParam("x", ScalarType::F32, {"M", "N"}),
                 test::tensorParam("y", ScalarType::F32, {"M", "N"})};
  info.params[0].accessedInRuns = info.params[1].accessedInRuns = true;
  info.params[1].writes = true;
  info.dimSymbols = {"M", "N"};
  info.runRowDims = {"N"};
  KernelPlan plan = KernelPlan::make(info, {});
  alignas(16) static float x[4096], y[4096];
  auto bind = [&](int64_t m, int64_t n) {
    Arg args[] = {tensor(x, ScalarType::F32, {m, n}), tensor(y, ScalarType::F32, {m, n})};
    Binding b;
    bindArguments(plan, args, 2, b);
    return b;
  };
  EXPECT_EQ(granularityOf(plan, bind(4, 48), "N"), 16);
  EXPECT_EQ(granularityOf(plan, bind(4, 24), "N"), 8);
  EXPECT_EQ(granularityOf(plan, bind(4, 72), "N"), 8);  // 72 = 16 * 4.5
  EXPECT_EQ(granularityOf(plan, bind(4, 20), "N"), 4);
  EXPECT_EQ(granularityOf(plan, bind(4, 6), "N"), 2);
  EXPECT_EQ(granularityOf(plan, bind(4, 7), "N"), 0);
  EXPECT_EQ(granularityOf(plan, bind(4, 48), "M"), 0);  // M places no rows
  EXPECT_TRUE(bind(4, 64).key == bind(3, 128).key);     // M is not a row dim; both N multiples of 16
  EXPECT_TRUE(bind(4, 24).key == bind(4, 40).key);      // both multiples of 8, not of 16
  EXPECT_FALSE(bind(4, 24).key == bind(4, 48).key);
  EXPECT_FALSE(bind(4, 24).key == bind(4, 20).key);
  EXPECT_FALSE(bind(4, 7).key == bind(4, 6).key);
  EXPECT_TRUE(bind(4, 7).key == bind(4, 9).key);
  // A static row dim is a constant in the source: nothing to specialize.
  EXPECT_TRUE(KernelPlan::make(info, {"N"}).divisibilitySlots.empty());
}

// A dim a @grid axis covers as cdiv(D, T) is specialized on whether it is a
// whole number of tiles: one key bit each, computed with the kernel's T.
TEST(LaunchBinding, ExactGridIsPartOfTheKey) {
  auto module = CompiledModule::loadString("t.spn", R"(
const T = 128
@grid(cdiv(N, T), cdiv(M, 64))
@block(128)
kernel tiles(x: f32[M, N], y: f32[M, N]):
    r = i64(block_id(1)) * 64
    c = i64(block_id(0)) * T + thread_id()
    if r < M and c < N:
        y[r, c] = x[r, c]
)");
  const KernelInfo& info = *module->findKernel("tiles");
  KernelPlan plan = KernelPlan::make(info, {});
  ASSERT_EQ(plan.exactGridSlots.size(), 2u);
  static float x[512 * 512], y[512 * 512];
  auto bind = [&](int64_t m, int64_t n) {
    Arg args[] = {tensor(x, ScalarType::F32, {m, n}), tensor(y, ScalarType::F32, {m, n})};
    Binding b;
    bindArguments(plan, args, 2, b);
    return b;
  };
  EXPECT_EQ(bind(64, 256).exactGrid, 3u);   // N (slot 0) = 2 tiles of 128, M (slot 1) = 1 tile of 64
  EXPECT_EQ(bind(64, 200).exactGrid, 2u);   // N = 200: not whole tiles
  EXPECT_EQ(bind(100, 256).exactGrid, 1u);  // M = 100
  EXPECT_EQ(bind(100, 200).exactGrid, 0u);
  EXPECT_TRUE(bind(64, 256).key == bind(128, 512).key);  // whole tiles both: the same binary
  EXPECT_TRUE(bind(64, 200).key == bind(64, 300).key);
  EXPECT_FALSE(bind(64, 256).key == bind(64, 200).key);
  EXPECT_FALSE(bind(64, 256).key == bind(100, 256).key);
  EXPECT_FALSE(bind(64, 200).key == bind(100, 256).key);
  // A static dim is a constant in the source: no bit.
  KernelPlan nStatic = KernelPlan::make(info, {"N"});
  ASSERT_EQ(nStatic.exactGridSlots.size(), 1u);
  EXPECT_EQ(nStatic.dimSymbols[size_t(nStatic.exactGridSlots[0].dim)], "M");
}

// A strided tensor whose innermost stride is 1 (a padded row pitch, a slice
// of columns) gets the unit-stride specialization, and its row stride's
// granularity enters the key: a hidden state with a row pitch of 1032 bf16
// gets granularity 8. One with inner stride 2 gets neither; a contiguous one
// gets the contiguous form instead.
TEST(LaunchBinding, UnitInnerStrideAndRowStrideGranularityArePartOfTheKey) {
  auto module = CompiledModule::loadString("t.spn", R"(
@grid(M)
@block(128)
kernel rows(x: bf16[M, D] strided, y: bf16[M, D]):
    j = thread_id() * 8
    for k in static_range(8):
        if j + k < D:
            y[block_id(), j + k] = x[block_id(), j + k]
)");
  KernelPlan plan = KernelPlan::make(*module->findKernel("rows"), {});
  ASSERT_TRUE(plan.params[0].accessedInRuns);
  alignas(16) static uint16_t x[4 * 2080], y[4 * 1024];
  auto bind = [&](std::initializer_list<int64_t> xStrides) {
    Arg args[] = {tensor(x, ScalarType::BF16, {4, 1024}, xStrides), tensor(y, ScalarType::BF16, {4, 1024})};
    Binding b;
    bindArguments(plan, args, 2, b);
    return b;
  };
  Binding padded = bind({1032, 1});
  EXPECT_EQ(padded.unitStride, 1u);
  EXPECT_EQ(padded.contiguousStrided, 0u);
  EXPECT_EQ(granularityOf(plan, padded, "x.stride0"), 8);
  EXPECT_EQ(granularityOf(plan, padded, "D"), 16);
  Binding pitch16 = bind({1040, 1});
  EXPECT_EQ(granularityOf(plan, pitch16, "x.stride0"), 16);
  Binding everyOther = bind({2064, 2});
  EXPECT_EQ(everyOther.unitStride, 0u);
  EXPECT_EQ(everyOther.contiguousStrided, 0u);
  EXPECT_EQ(granularityOf(plan, everyOther, "x.stride0"), 0);  // no unit-stride form: nothing to assume
  Binding rowMajor = bind({1024, 1});
  EXPECT_EQ(rowMajor.contiguousStrided, 1u);
  EXPECT_EQ(rowMajor.unitStride, 0u);  // the contiguous form serves it
  EXPECT_EQ(granularityOf(plan, rowMajor, "x.stride0"), 0);
  EXPECT_TRUE(padded.key == bind({1048, 1}).key);  // 1048 is also a multiple of 8, not of 16
  EXPECT_FALSE(padded.key == pitch16.key);
  EXPECT_FALSE(padded.key == everyOther.key);
  EXPECT_FALSE(padded.key == rowMajor.key);
  EXPECT_FALSE(everyOther.key == rowMajor.key);
  EXPECT_FALSE(bind({1033, 1}).key == padded.key);  // an odd pitch: no granularity
  EXPECT_EQ(granularityOf(plan, bind({1033, 1}), "x.stride0"), 0);
  EXPECT_EQ(bind({1033, 1}).unitStride, 1u);

  // The launch marshals what the unit-stride kernel takes: x, its row
  // stride, y, then the dims; the inner stride is not passed.
  Specialization spec;
  spec.unitStrideTensors = {"x"};
  std::vector<rt::PackOp> ops = rt::makePackOps(plan, module->generate("rows", spec).abi);
  Arg args[] = {tensor(x, ScalarType::BF16, {4, 1024}, {1032, 1}), tensor(y, ScalarType::BF16, {4, 1024})};
  rt::PackedArgs packed;
  rt::packArguments(ops, args, padded, packed);
  ASSERT_EQ(packed.count, 5);
  EXPECT_EQ(packed.slots[0], uint64_t(reinterpret_cast<uintptr_t>(x)));
  EXPECT_EQ(packed.slots[1], 1032u);
  EXPECT_EQ(packed.slots[2], uint64_t(reinterpret_cast<uintptr_t>(y)));
  EXPECT_EQ(packed.slots[3], 4u);     // M
  EXPECT_EQ(packed.slots[4], 1024u);  // D
}

// A rank-1 strided tensor with stride 1 is the unit-stride form too (it is
// then indexed as x[i]); a size-1 last axis has stride 1 in effect.
TEST(LaunchBinding, UnitInnerStrideOfRankOneAndSizeOneAxes) {
  KernelInfo info;
  info.name = "v";
  info.params = {test::tensorParam("v", ScalarType::F32, {"N"}, true),
                 test::tensorParam("w", ScalarType::F32, {"M", "1"}, true)};
  info.dimSymbols = {"N", "M"};
  KernelPlan plan = KernelPlan::make(info, {});
  static float v[64], w[64];
  Binding b;
  Arg unit[] = {tensor(v, ScalarType::F32, {8}, {1}), tensor(w, ScalarType::F32, {4, 1}, {3, 5})};
  bindArguments(plan, unit, 2, b);
  EXPECT_EQ(b.contiguousStrided, 1u);  // v: stride 1 is row-major
  EXPECT_EQ(b.unitStride, 2u);         // w: rows of 3 elements, a last axis of one
  Arg gathered[] = {tensor(v, ScalarType::F32, {8}, {2}), tensor(w, ScalarType::F32, {4, 1}, {2, 1})};
  bindArguments(plan, gathered, 2, b);
  EXPECT_EQ(b.contiguousStrided, 0u);
  EXPECT_EQ(b.unitStride, 2u);
}

// Integer scalars that @grid or @block use are bound with the dims, widened
// to int64 by their own signedness, and reach the launch values by name.
TEST(LaunchScalars, BindWithTheirSignAndReachTheLaunchValues) {
  KernelInfo k;
  k.name = "tiles";
  k.params = {tensorParam("x", F32, {"N"}), scalarParam("first", ScalarType::I32),
              scalarParam("count", ScalarType::U32), scalarParam("scale", F32)};
  k.dimSymbols = {"N"};
  k.launchScalars = {"count", "first"};
  KernelPlan plan = KernelPlan::make(k, {});
  ASSERT_EQ(plan.launchScalars, (std::vector<int>{2, 1}));
  Arg args[] = {tensor(dev, F32, {10}), scalar(int32_t(-3)), scalar(uint32_t(4000000000u)), scalar(1.5f)};
  Binding b;
  rt::bindArguments(plan, args, 4, b);
  EXPECT_EQ(b.launchScalars[0], 4000000000);
  EXPECT_EQ(b.launchScalars[1], -3);
  auto values = rt::launchValueMap(plan, b);
  EXPECT_EQ(values, (std::map<std::string, int64_t>{{"N", 10}, {"count", 4000000000}, {"first", -3}}));
  // More launch scalars than the runtime's fixed-size binding holds: refused.
  KernelInfo many = k;
  many.launchScalars.clear();
  for (int i = 0; i < rt::kMaxLaunchScalars + 1; ++i) {
    many.params.push_back(scalarParam("s" + std::to_string(i), ScalarType::I32));
    many.launchScalars.push_back("s" + std::to_string(i));
  }
  EXPECT_NE(errorFrom([&] {
              KernelPlan::make(many, {});
            }).find("tiles: @grid and @block use 9 scalar parameters; the runtime supports at most 8"),
            std::string::npos);
  // A launch scalar the parameters lack is a plan error, not a silent zero.
  k.launchScalars = {"scale_missing"};
  EXPECT_NE(errorFrom([&] { KernelPlan::make(k, {}); }).find("uses 'scale_missing', which is not a scalar parameter"),
            std::string::npos);
}

// Optional tensors (`T[N] | None`): spindle::none() leaves one absent. The
// key tells absent from present, a non-optional parameter refuses none(), an
// absent tensor binds no dim and takes part in no overlap check, and its
// pointer slot is packed as null.
TEST(OptionalTensors, NoneBindsAbsentAndEntersTheKey) {
  KernelInfo k;
  k.name = "bias_act";
  k.params = {tensorParam("x", F32, {"M", "N"}), tensorParam("bias", F32, {"N"}), tensorParam("y", F32, {"M", "N"}),
              tensorParam("extra", F32, {"K"})};
  k.params[1].optional = true;
  k.params[2].writes = true;
  k.params[3].optional = true;
  k.dimSymbols = {"M", "N", "K"};
  KernelPlan plan = KernelPlan::make(k, {});
  float x[6], bias[3], y[6], extra[2];
  Arg present[] = {tensor(x, F32, {2, 3}), tensor(bias, F32, {3}), tensor(y, F32, {2, 3}), tensor(extra, F32, {2})};
  Binding withBias;
  rt::bindArguments(plan, present, 4, withBias);
  EXPECT_EQ(withBias.absentTensors, 0u);

  // `extra` alone binds K: absent, K is unbound, and the message says why.
  Arg noExtra[] = {tensor(x, F32, {2, 3}), tensor(bias, F32, {3}), tensor(y, F32, {2, 3}), none()};
  Binding b;
  EXPECT_NE(errorFrom([&] {
              rt::bindArguments(plan, noExtra, 4, b);
            }).find("dim symbol K is not bound by any argument's shape (absent tensors bind nothing)"),
            std::string::npos);

  // Absent bias, with `y` the very memory of `bias` would-be: no overlap.
  k.params.pop_back();
  k.dimSymbols = {"M", "N"};
  plan = KernelPlan::make(k, {});
  Arg noBias[] = {tensor(x, F32, {2, 3}), none(), tensor(y, F32, {2, 3})};
  Binding absent;
  rt::bindArguments(plan, noBias, 3, absent);
  EXPECT_EQ(absent.absentTensors, uint64_t(1) << 1);
  Binding present2;
  rt::bindArguments(plan, present, 3, present2);
  EXPECT_FALSE(absent.key == present2.key) << "absent and present must be different binaries";
  auto ops = rt::makePackOps(plan, {AbiArg{AbiArgKind::TensorPointer, 0, -1, "", F32, "x"},
                                    AbiArg{AbiArgKind::TensorPointer, 1, -1, "", F32, "bias"},
                                    AbiArg{AbiArgKind::TensorPointer, 2, -1, "", F32, "y"}});
  rt::PackedArgs packed;
  rt::packArguments(ops, noBias, absent, packed);
  EXPECT_EQ(packed.slots[1], 0u) << "an absent tensor's pointer is null";

  // none() for a parameter that is not optional names it.
  Arg noX[] = {none(), tensor(bias, F32, {3}), tensor(y, F32, {2, 3})};
  EXPECT_NE(errorFrom([&] { rt::bindArguments(plan, noX, 3, b); })
                .find("parameter 'x' (f32[M, N]): spindle::none() is only for optional tensors (declared "
                      "'T[...] | None'); pass a value"),
            std::string::npos);
}

// @alias(x, y): the very same view binds (an in-place update through two
// parameters); a view of the same buffer shifted by one element overlaps
// without being the same, and is refused with both views and a shared byte.
TEST(Alias, SameViewBindsPartialOverlapIsRefused) {
  KernelInfo k;
  k.name = "scale_into";
  k.params = {tensorParam("x", F32, {"N"}), tensorParam("y", F32, {"N"}), scalarParam("a", F32)};
  k.params[1].writes = true;
  k.dimSymbols = {"N"};
  k.aliasGroups = {{"x", "y"}};
  KernelPlan plan = KernelPlan::make(k, {});
  float buffer[9];
  Binding b;
  Arg same[] = {tensor(buffer, F32, {8}), tensor(buffer, F32, {8}), scalar(2.0f)};
  EXPECT_NO_THROW(rt::bindArguments(plan, same, 3, b));
  Arg shifted[] = {tensor(buffer, F32, {8}), tensor(buffer + 1, F32, {8}), scalar(2.0f)};
  std::string e = errorFrom([&] { rt::bindArguments(plan, shifted, 3, b); });
  EXPECT_NE(e.find("parameters 'y' and 'x' are @alias, so they may be the same view, but these overlap without being "
                   "the same"),
            std::string::npos)
      << e;
  // Without @alias, the same view is an overlap like any other.
  k.aliasGroups.clear();
  plan = KernelPlan::make(k, {});
  EXPECT_NE(errorFrom([&] { rt::bindArguments(plan, same, 3, b); }).find("overlap in memory"), std::string::npos);
}

// Dim expressions (`qkv: f32[B, T, 3 * C]`): the symbols bind from whole
// dims, then each expression is checked against its axis, with the values.
TEST(DimExpressions, CheckedAgainstTheSizesWithTheirValues) {
  auto module = CompiledModule::loadString("t.spn", R"(
@grid(B)
@block(64)
kernel split(qkv: f32[B, 3 * C], q: f32[B, C], w: f32[C // NH, NH]):
    q[block_id(), 0] = qkv[block_id(), 0] + w[0, 0]
)");
  const KernelInfo& info = *module->findKernel("split");
  ASSERT_EQ(info.params[0].dims[1].expressionText, "3 * C");
  EXPECT_EQ(evaluateDim(info.params[2].dims[0], {{"C", 12}, {"NH", 4}}), 3);
  KernelPlan plan = KernelPlan::make(info, {});
  float qkv[2 * 36], q[2 * 12], w[12];
  Binding b;
  Arg good[] = {tensor(qkv, F32, {2, 36}), tensor(q, F32, {2, 12}), tensor(w, F32, {3, 4})};
  EXPECT_NO_THROW(rt::bindArguments(plan, good, 3, b));
  Arg bad[] = {tensor(qkv, F32, {2, 35}), tensor(q, F32, {2, 12}), tensor(w, F32, {3, 4})};
  EXPECT_EQ(errorFrom([&] { rt::bindArguments(plan, bad, 3, b); }),
            "split: parameter 'qkv' dim 1 (3 * C): expected 3 * C = 36 with C = 12, got 35 in f32[2, 35]");
  // C // NH must be a size: 12 // 16 is 0.
  Arg zero[] = {tensor(qkv, F32, {2, 36}), tensor(q, F32, {2, 12}), tensor(w, F32, {1, 16})};
  EXPECT_EQ(errorFrom([&] { rt::bindArguments(plan, zero, 3, b); }),
            "split: parameter 'w' dim 0 (C // NH): C // NH with C = 12, NH = 16 is 0; a size must be from 1 to 2^62");
}

// A dim expression that places the rows of a tensor indexed in runs
// (`x: f32[M, 2 * D]`): its value's granularity enters the key, per tensor
// axis, apart from the granularity of the dims it is made of.
TEST(DimExpressions, GranularityOfTheirValueIsPartOfTheKey) {
  auto module = CompiledModule::loadString("t.spn", R"(
@grid(M)
@block(64)
kernel gate(x: f32[M, 2 * D], y: f32[M, D]):
    j = thread_id() * 4
    for k in static_range(4):
        if j + k < D:
            y[block_id(), j + k] = x[block_id(), j + k] * x[block_id(), D + j + k]
)");
  KernelPlan plan = KernelPlan::make(*module->findKernel("gate"), {});
  alignas(16) static float x[2 * 2 * 64], y[2 * 64];
  auto bind = [&](int64_t d) {
    Arg args[] = {tensor(x, F32, {2, 2 * d}), tensor(y, F32, {2, d})};
    Binding b;
    rt::bindArguments(plan, args, 2, b);
    return b;
  };
  EXPECT_EQ(rt::granularityOf(plan, bind(12), "x.dim1"), 8);  // 2 * 12 = 24
  EXPECT_EQ(rt::granularityOf(plan, bind(12), "D"), 4);
  EXPECT_EQ(rt::granularityOf(plan, bind(24), "x.dim1"), 16);
  EXPECT_EQ(rt::granularityOf(plan, bind(7), "x.dim1"), 2);
  EXPECT_EQ(rt::granularityOf(plan, bind(7), "D"), 0);
  EXPECT_FALSE(bind(12).key == bind(24).key);
  EXPECT_TRUE(bind(4).key == bind(12).key);  // D: 4 and 12, both 4; 2 * D: 8 and 24, both 8
  // Static D makes 2 * D a number: no slot for it.
  EXPECT_TRUE(KernelPlan::make(*module->findKernel("gate"), {"D"}).divisibilitySlots.empty());
}

}  // namespace
}  // namespace spindle::rt
