// What the prelude's atomics' helpers need to compile for the host: HIP's
// and CUDA's function qualifiers, and a one-thread atomicCAS. A test may set
// beforeCompareAndSwap to play another thread writing just before a swap.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>

#define __host__
#define __device__
#define __forceinline__ inline

namespace prelude_host {
inline std::function<void()> beforeCompareAndSwap;
inline int compareAndSwaps = 0;  // swaps attempted since the test reset it
}  // namespace prelude_host

template <typename U>
inline U atomicCAS(U* p, U compare, U value) {
  ++prelude_host::compareAndSwaps;
  if (prelude_host::beforeCompareAndSwap) {
    auto hook = std::move(prelude_host::beforeCompareAndSwap);
    prelude_host::beforeCompareAndSwap = nullptr;
    hook();
  }
  U old;  // through memcpy: the cells are f16/bf16 objects, read as words
  std::memcpy(&old, p, sizeof old);
  if (old == compare) std::memcpy(p, &value, sizeof value);
  return old;
}
