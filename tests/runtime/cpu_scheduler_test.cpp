// The cpu target's scheduler on its own: hand-written "kernels" that call
// the runtime's API table directly (as a compiled kernel library does
// through spindle_cpu.h), so barriers, warp meetings and failures are
// checked without a host compiler.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "../../runtime/src/cpu/grid_runner.h"
#include "spindle/runtime.hpp"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::rt::cpu {
namespace {

using ::testing::HasSubstr;

const __spn_cpu_api& api() { return runtimeApi(); }

unsigned linearThread(const __spn_cpu_thread* t) {
  return t->thread_idx.x + t->block_dim.x * (t->thread_idx.y + t->block_dim.y * t->thread_idx.z);
}

// An exchange as spindle_cpu.h does it: write this lane's slot, meet, read `src`'s.
int64_t exchange(int64_t v, unsigned src) {
  __spn_cpu_thread* t = api().self();
  unsigned char* half = t->warp_exchange + (t->exchanges & 1) * t->warp_size * __SPN_CPU_EXCHANGE_BYTES;
  std::memcpy(half + t->lane * __SPN_CPU_EXCHANGE_BYTES, &v, sizeof v);
  api().sync_warp();
  int64_t r;
  std::memcpy(&r, half + src * __SPN_CPU_EXCHANGE_BYTES, sizeof r);
  return r;
}

BlockShape shape(unsigned grid, unsigned block, unsigned warp) {
  BlockShape s;
  s.grid = {grid, 1, 1};
  s.block = {block, 1, 1};
  s.warpSize = warp;
  return s;
}

constexpr size_t kStack = 64 << 10;

// Block reversal through shared memory needs the barrier to be real: every
// thread writes, meets the others, then reads another thread's slot.
struct Reverse {
  static thread_local int shared[1024];
  static void entry(void** args) {
    int* out = *static_cast<int**>(args[0]);
    __spn_cpu_thread* t = api().self();
    unsigned i = linearThread(t), n = t->block_dim.x;
    shared[i] = int(t->block_idx.x * 10000 + i);
    api().sync_block();
    int v = shared[n - 1 - i];
    api().sync_block();  // nobody overwrites before all have read
    shared[i] = v * 2;
    api().sync_block();
    out[t->block_idx.x * n + i] = shared[i];
  }
};
thread_local int Reverse::shared[1024];

TEST(CpuScheduler, BarriersOrderSharedMemoryAcrossTheBlock) {
  for (unsigned block : {1u, 33u, 256u, 1024u}) {
    const unsigned grid = 7;
    std::vector<int> out(grid * block, -1);
    int* p = out.data();
    void* args[] = {&p};
    runGrid(shape(grid, block, 32), &Reverse::entry, args, kStack);
    for (unsigned b = 0; b < grid; ++b)
      for (unsigned i = 0; i < block; ++i)
        ASSERT_EQ(out[b * block + i], 2 * int(b * 10000 + (block - 1 - i))) << "block " << b << " thread " << i;
  }
}

// A tree reduction over the warp with shuffles (xor), at both widths and in
// a partial last warp, where the missing lanes must not take part.
struct WarpSum {
  static void entry(void** args) {
    int64_t* out = *static_cast<int64_t**>(args[0]);
    __spn_cpu_thread* t = api().self();
    unsigned i = linearThread(t);
    int64_t v = int64_t(i) * int64_t(i) + 1;
    for (unsigned m = 1; m < t->warp_size; m *= 2) {
      unsigned src = t->lane ^ m;
      int64_t other = exchange(v, src);
      // A lane beyond the block is not there: keep one's own value.
      bool exists = (*t->warp_live >> src) & 1;
      v += exists ? other : 0;
    }
    out[t->block_idx.x * t->block_dim.x + i] = v;
  }
};

TEST(CpuScheduler, WarpExchangesAtBothWidthsAndInPartialWarps) {
  for (unsigned warp : {32u, 64u})
    for (unsigned block : {32u, 64u, 100u, 256u}) {
      std::vector<int64_t> out(2 * block, -1);
      int64_t* p = out.data();
      void* args[] = {&p};
      runGrid(shape(2, block, warp), &WarpSum::entry, args, kStack);
      for (unsigned first = 0; first < block; first += warp) {
        // The butterfly step by step on the lanes that exist; in a full
        // warp that is every lane's sum.
        const unsigned lanes = std::min(warp, block - first);
        std::vector<int64_t> v(lanes);
        for (unsigned l = 0; l < lanes; ++l) v[l] = int64_t(first + l) * (first + l) + 1;
        int64_t total = 0;
        for (int64_t x : v) total += x;
        for (unsigned m = 1; m < warp; m *= 2) {
          std::vector<int64_t> next(v);
          for (unsigned l = 0; l < lanes; ++l)
            if ((l ^ m) < lanes) next[l] += v[l ^ m];
          v = next;
        }
        for (unsigned b = 0; b < 2; ++b)
          for (unsigned l = 0; l < lanes; ++l) {
            ASSERT_EQ(out[b * block + first + l], v[l]) << "warp " << warp << " block " << block << " lane " << l;
            if (lanes == warp) {
              ASSERT_EQ(v[l], total);
            }
          }
      }
    }
}

// A thread that returns before a barrier the others wait at: an error that
// says which threads wait and which returned, never a hang.
struct EarlyReturn {
  static void entry(void**) {
    __spn_cpu_thread* t = api().self();
    if (linearThread(t) >= 100) return;
    api().sync_block();
  }
};

TEST(CpuScheduler, ABarrierSomeThreadsLeaveIsAnError) {
  void* args[] = {nullptr};
  try {
    runGrid(shape(3, 128, 32), &EarlyReturn::entry, args, kStack);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("a barrier (sync(), a block collective) that some threads"));
    EXPECT_THAT(e.what(), HasSubstr("threads 0-99 wait at the barrier"));
    EXPECT_THAT(e.what(), HasSubstr("threads 100-127 have returned"));
  }
}

// A kernel's failure (an assert) ends the launch with its message; the
// other blocks stop, and the fibers left mid-kernel are unwound.
struct Failing {
  static void entry(void**) {
    __spn_cpu_thread* t = api().self();
    if (t->block_idx.x == 5 && linearThread(t) == 17) api().fail("boom at 17");
    api().sync_block();
  }
};

TEST(CpuScheduler, AFailureEndsTheLaunchWithItsMessage) {
  void* args[] = {nullptr};
  try {
    runGrid(shape(64, 64, 32), &Failing::entry, args, kStack);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("on the cpu target: boom at 17"));
  }
  // The runner is reusable after a failure.
  std::vector<int> out(64, 0);
  int* p = out.data();
  void* args2[] = {&p};
  runGrid(shape(1, 64, 32), &Reverse::entry, args2, kStack);
  EXPECT_EQ(out[0], 2 * 63);
}

// Lanes that diverge around a vote: the lanes that reach it meet without
// the others (warp_live says which), as a GPU runs a divergent branch.
struct DivergentVote {
  static void entry(void** args) {
    uint64_t* out = *static_cast<uint64_t**>(args[0]);
    __spn_cpu_thread* t = api().self();
    unsigned i = linearThread(t);
    if (i % 3 == 0) {
      exchange(1, t->lane);
      out[i] = *t->warp_live;
    }
    api().sync_block();
  }
};

TEST(CpuScheduler, DivergentVotesCountTheLanesThatReachThem) {
  std::vector<uint64_t> out(64, 0);
  uint64_t* p = out.data();
  void* args[] = {&p};
  runGrid(shape(1, 64, 32), &DivergentVote::entry, args, kStack);
  uint64_t want = 0;
  for (unsigned lane = 0; lane < 32; lane += 3) want |= uint64_t(1) << lane;
  EXPECT_EQ(out[0], want);
  uint64_t want1 = 0;  // lanes 32..63: thread 33, 36, ... are lanes 1, 4, ...
  for (unsigned lane = 1; lane < 32; lane += 3) want1 |= uint64_t(1) << lane;
  EXPECT_EQ(out[33], want1);
}

// Blocks run in parallel on several workers, each exactly once.
struct CountBlocks {
  static void entry(void** args) {
    auto* counts = *static_cast<std::atomic<int>**>(args[0]);
    __spn_cpu_thread* t = api().self();
    if (linearThread(t) == 0) counts[t->block_idx.x + t->grid_dim.x * t->block_idx.y].fetch_add(1);
  }
};

TEST(CpuScheduler, EveryBlockOfA2DGridRunsOnce) {
  std::vector<std::atomic<int>> counts(40 * 3);
  std::atomic<int>* p = counts.data();
  void* args[] = {&p};
  BlockShape s = shape(40, 32, 32);
  s.grid.y = 3;
  runGrid(s, &CountBlocks::entry, args, kStack);
  for (size_t b = 0; b < counts.size(); ++b) EXPECT_EQ(counts[b].load(), 1) << b;
}

}  // namespace
}  // namespace spindle::rt::cpu
#endif  // SPINDLE_HAVE_CPU_TARGET
