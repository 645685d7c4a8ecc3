// Scratch copies for tuning launches (runtime/src/tuning/scratch_args.h),
// on the cpu target's backend, whose device memory is host memory.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "backend.h"
#include "test_util.h"
#include "tuning/scratch_args.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::rt {
namespace {

struct Buffers {
  std::unique_ptr<Backend> be = makeCpuBackend();
  std::vector<void*> owned;
  float* make(size_t n, float value) {
    auto* p = static_cast<float*>(be->allocate(n * 4));
    for (size_t i = 0; i < n; ++i) p[i] = value + float(i);
    owned.push_back(p);
    return p;
  }
  ~Buffers() {
    for (void* p : owned) be->release(p);
  }
};

// y (written) moves to a copy holding its data; x (read only) stays.
TEST(ScratchArgs, WrittenTensorsMoveToCopiesOfTheirData) {
  Buffers b;
  float* x = b.make(64, 0);
  float* y = b.make(64, 100);
  Arg args[] = {tensor(x, ScalarType::F32, {64}), tensor(y, ScalarType::F32, {64}), scalar(2.0f)};
  ScratchArgs s(*b.be, args, 3, {false, true, false}, UINT64_MAX);
  EXPECT_FALSE(s.inPlace());
  EXPECT_EQ(s.regions(), 1u);
  EXPECT_EQ(s.args()[0].data, x);
  ASSERT_NE(s.args()[1].data, y);
  const auto* copy = static_cast<const float*>(s.args()[1].data);
  EXPECT_EQ(copy[0], 100.0f);
  EXPECT_EQ(copy[63], 163.0f);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(copy) % 256, reinterpret_cast<uintptr_t>(y) % 256);
  const_cast<float*>(copy)[5] = -1;  // a tuning launch writes the copy...
  s.restore();
  EXPECT_EQ(y[5], 105.0f);  // ...never the caller's tensor
}

// Views of one buffer (an alias pair, a read view inside a written one)
// land on one copy at the same offsets, so they alias there as they did.
TEST(ScratchArgs, AliasingBetweenParametersIsPreserved) {
  Buffers b;
  float* buf = b.make(256, 0);
  float* other = b.make(16, 0);
  Arg args[] = {tensor(buf, ScalarType::F32, {128}),                 // written
                tensor(buf, ScalarType::F32, {128}),                 // the same view, read
                tensor(buf + 100, ScalarType::F32, {4, 8}, {2, 1}),  // strided, overlapping the first
                tensor(other, ScalarType::F32, {16})};
  ScratchArgs s(*b.be, args, 4, {true, false, false, false}, UINT64_MAX);
  ASSERT_EQ(s.regions(), 1u);
  auto at = [&](int i) { return reinterpret_cast<uintptr_t>(s.args()[i].data); };
  EXPECT_NE(at(0), reinterpret_cast<uintptr_t>(buf));
  EXPECT_EQ(at(0), at(1));
  EXPECT_EQ(at(2) - at(0), 100u * 4);
  EXPECT_EQ(s.args()[3].data, other);  // disjoint and read only: untouched
  // Extents of strided views: the last element of [4, 8] strides (2, 1) is 3*2 + 7.
  uintptr_t lo = 0, hi = 0;
  tensorByteRange(args[2], lo, hi);
  EXPECT_EQ(hi - lo, (3u * 2 + 7 + 1) * 4);
}

// Over the bound: nothing is copied; the caller's bytes are saved and put
// back, whatever the tuning launches wrote.
TEST(ScratchArgs, OverTheBoundTheTensorsAreSavedAndRestored) {
  Buffers b;
  float* y = b.make(32, 7);
  Arg args[] = {tensor(y, ScalarType::F32, {32})};
  {
    ScratchArgs s(*b.be, args, 1, {true}, /*maxBytes=*/64);
    EXPECT_TRUE(s.inPlace());
    EXPECT_EQ(s.args()[0].data, y);
    for (int i = 0; i < 32; ++i) y[i] = -5;  // tuning launches write in place
  }                                          // the destructor restores
  EXPECT_EQ(y[0], 7.0f);
  EXPECT_EQ(y[31], 38.0f);
}

}  // namespace
}  // namespace spindle::rt
#endif
