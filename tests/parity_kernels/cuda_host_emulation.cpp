#include "cuda_host_emulation.h"

#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "host_data.hpp"   // bench/parity: f16 and bf16 rounding
#include "references.hpp"  // bench: the nearest e4m3 code

namespace parity_emu {

dim3 blockDim_, gridDim_;

namespace {

thread_local uint3 threadIdx_, blockIdx_;

class Barrier {  // reusable: the generation tells one round from the next
 public:
  explicit Barrier(int count) : count_(count) {}
  void wait() {
    std::unique_lock<std::mutex> lock(m_);
    const uint64_t generation = generation_;
    if (++waiting_ == count_) {
      waiting_ = 0;
      ++generation_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return generation_ != generation; });
    }
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int count_, waiting_ = 0;
  uint64_t generation_ = 0;
};

struct Warp {
  explicit Warp(int lanes) : meet(lanes) {}
  Barrier meet;
  uint64_t slots[32] = {};
};

struct Block {
  explicit Block(int threads) : sync(threads) {
    for (int first = 0; first < threads; first += 32)
      warps.push_back(std::make_unique<Warp>(std::min(32, threads - first)));
  }
  Barrier sync;
  std::vector<std::unique_ptr<Warp>> warps;
  std::vector<unsigned char> shared;
};

Block* block = nullptr;  // the block that runs now (one at a time)
thread_local int linear = 0;

}  // namespace

const uint3& threadIndex() { return threadIdx_; }
const uint3& blockIndex() { return blockIdx_; }

void syncThreads() { block->sync.wait(); }

int lane() { return linear % 32; }

uint64_t exchange(uint64_t bits, int src) {
  Warp& w = *block->warps[size_t(linear / 32)];
  w.slots[lane()] = bits;
  w.meet.wait();
  const uint64_t got = w.slots[src];
  w.meet.wait();  // nobody writes the next round's slot before everyone has read this one
  return got;
}

void* dynamicShared() { return block->shared.data(); }

void launch(dim3 grid, dim3 threads, size_t dynamicSharedBytes, const std::function<void()>& kernel) {
  const int n = int(threads.x * threads.y * threads.z);
  if (n < 1 || n > 1024) throw std::invalid_argument("a block of 1 to 1024 threads");
  gridDim_ = grid;
  blockDim_ = threads;
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        Block b(n);
        b.shared.assign(dynamicSharedBytes + 16, 0xA5);  // garbage, as on a GPU
        block = &b;
        std::vector<std::thread> pool;
        pool.reserve(size_t(n));
        for (int t = 0; t < n; ++t)
          pool.emplace_back([&, t] {
            threadIdx_ = {unsigned(t) % threads.x, unsigned(t) / threads.x % threads.y,
                          unsigned(t) / (threads.x * threads.y)};
            blockIdx_ = {bx, by, bz};
            linear = t;
            kernel();
          });
        for (auto& th : pool) th.join();
        block = nullptr;
      }
}

}  // namespace parity_emu

__nv_bfloat16 __float2bfloat16_rn(float f) { return {std::isnan(f) ? uint16_t(0x7fff) : parity::toBf16(f)}; }
float __bfloat162float(__nv_bfloat16 h) { return parity::fromBf16(h.x); }
__half __float2half_rn(float f) { return {parity::toHalf(f)}; }
float __half2float(__half h) { return parity::fromHalf(h.x); }

__nv_fp8_storage_t __nv_cvt_float_to_fp8(float x, __nv_saturation_t, __nv_fp8_interpretation_t) {
  return bench::nearestF8e4m3(std::fmax(-448.0, std::fmin(448.0, double(x))));
}
