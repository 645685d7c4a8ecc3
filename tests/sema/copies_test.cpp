// The buffers of copy_async and copy_tile (docs/language.md 8.12, 8.14),
// checked by one rule (sema_types.cpp, copyBuffersProblem): the first
// argument a 2-D shared buffer that is not a barriers(...) declaration, the
// fourth a kernel's tensor of the copy's rank and the buffer's type. Each
// case's message says which part is wrong.
#include "sema_test_util.h"

namespace spindle::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(Copies, BothCopiesSayWhichBufferIsWrong) {
  auto a = analyze(R"(
@grid(1)
@block(64)
kernel k(X: f32[M, N], H: f16[M, N], V: f32[N]):
    S = shared(f32, [64, 32], swizzle=128)
    full = barriers(1, 1)
    copy_async(full, 0, 0, X, 0, 0, 2)
    copy_tile(full, 0, 0, X, 0, 0, 8, 32, full, 0)
    copy_async(S, 0, 0, V, 0, 0, 4)
    copy_tile(S, 0, 0, H, 0, 0, 8, 32, full, 0)
    copy_commit()
    copy_wait(0)
)");
  EXPECT_THAT(diagIds(*a), ElementsAre("sema-copy-async-buffers", "sema-copy-tile-args", "sema-copy-async-buffers",
                                       "sema-copy-tile-args"));
  const std::string all = a->diags.renderAll();
  EXPECT_THAT(all, HasSubstr("; 'full' (the first argument) is a barriers(...) declaration [sema-copy-async-buffers]"));
  EXPECT_THAT(all, HasSubstr("; 'full' (the first argument) is a barriers(...) declaration [sema-copy-tile-args]"));
  EXPECT_THAT(all, HasSubstr("; 'V' has 1 dims; 7 arguments copy from a 2-D tensor [sema-copy-async-buffers]"));
  EXPECT_THAT(all, HasSubstr("; 'S' holds f32, 'H' f16 [sema-copy-tile-args]"));
}

}  // namespace
}  // namespace spindle::test
