// docs/language.md 8.10, cache hints: what load_stream, load_readonly,
// load_keep and store_stream take (an element of a kernel's tensor
// parameter, global memory), their types, the C++ they print as and what
// the analyses make of them (a store_stream writes its tensor).
#include "sema_test_util.h"

namespace spindle::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string kernelWith(const std::string& params, const std::string& body) {
  return "@grid(1)\n@block(32)\nkernel k(" + params + "):\n" + body;
}

TEST(CacheHints, TakeAnElementOfAKernelsTensor) {
  struct Case {
    const char* body;
    const char* diag;  // nullptr: accepted
    const char* message;
  };
  const Case cases[] = {
      {"    y[0] = load_stream(x[0]) + load_readonly(x[1]) + load_keep(x[2])\n", nullptr, nullptr},
      {"    store_stream(y[0], x[0])\n", nullptr, nullptr},
      {"    def f():\n        store_stream(y[1], load_keep(x[3]))\n    f()\n", nullptr,
       nullptr},  // a closure's capture
      {"    v = x[0]\n    y[0] = load_stream(v)\n", "sema-cache-hint-target",
       "the first argument of 'load_stream' must be an element of a kernel's tensor parameter (global memory), "
       "like x[i]"},
      {"    s = shared(f32, [32])\n    s[0] = 1.0\n    sync()\n    y[0] = load_keep(s[0])\n", "sema-cache-hint-target",
       "the first argument of 'load_keep' must be an element of a kernel's tensor parameter (global memory), like "
       "x[i]; 's' is a shared buffer"},
      {"    a = local(f32, [2], 0.0)\n    store_stream(a[0], 1.0)\n    y[0] = a[0]\n", "sema-cache-hint-target",
       "the first argument of 'store_stream' must be an element of a kernel's tensor parameter (global memory), "
       "like x[i]; 'a' is a local buffer"},
      {"    y[0] = store_stream(y[1], 1.0)\n", "sema-void-value", "'store_stream' returns no value"},
      {"    store_stream(y[0], True)\n", "sema-convert", nullptr},
  };
  for (const auto& c : cases) {
    auto a = analyze(kernelWith("x: f32[4], y: f32[4]", c.body));
    if (!c.diag) {
      EXPECT_THAT(diagIds(*a), ElementsAre()) << c.body << a->diags.renderAll();
      continue;
    }
    ASSERT_THAT(diagIds(*a), ElementsAre(c.diag)) << c.body << a->diags.renderAll();
    if (c.message) {
      EXPECT_EQ(a->diags.diagnostics()[0].message, c.message) << c.body;
    }
  }
}

// A def's tensor parameter may be given a shared buffer: no hints there.
TEST(CacheHints, ADefsTensorParameterIsRefused) {
  auto a = analyze("def first(t: f32[K]) -> f32:\n    return load_stream(t[0])\n\n" +
                   kernelWith("x: f32[4]", "    x[1] = first(x)\n"));
  ASSERT_THAT(diagIds(*a), ElementsAre("sema-cache-hint-target")) << a->diags.renderAll();
  EXPECT_THAT(a->diags.diagnostics()[0].message,
              HasSubstr("; 't' is a def's parameter, which may be given shared memory"));
}

// A store_stream writes its tensor: the tensor is not const; the loads
// leave theirs const. f16 values are the element type, widened where used.
TEST(CacheHints, PrintAsThePreludesHelpers) {
  std::string hip = generate(kernelWith("x: f16[4], y: f16[4], z: f32[4]",
                                        "    store_stream(y[0], load_stream(x[0]) * 2.0)\n"
                                        "    z[0] = load_keep(x[1]) + load_readonly(z[1])\n"),
                             "k");
  EXPECT_THAT(hip, HasSubstr("const __half* __restrict__ x, __half* __restrict__ y"));
  EXPECT_THAT(hip, HasSubstr("__spn_store_stream(&y[0], __half(float(__spn_load_stream(&x[0])) * 2.0f));"));
  EXPECT_THAT(hip, HasSubstr("z[0] = float(__spn_load_keep(&x[1])) + __spn_load_readonly(&z[1]);"));
  EXPECT_THAT(hip, HasSubstr("__device__ __forceinline__ void __spn_store_stream(T* p, V value)"));
}

}  // namespace
}  // namespace spindle::test
