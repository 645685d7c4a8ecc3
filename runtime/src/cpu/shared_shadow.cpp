#include "cpu/shared_shadow.h"

#include <algorithm>

namespace spindle::rt::cpu {

void SharedShadow::beginBlock() {
  if (++block_ != 0) return;
  // 2^32 blocks on one worker: start the numbering again, forgetting all.
  for (Buffer& b : buffers_) std::fill(b.writtenBy.begin(), b.writtenBy.end(), 0);
  block_ = 1;
}

void SharedShadow::declare(const void* base, size_t bytes) {
  const auto begin = reinterpret_cast<uintptr_t>(base), end = begin + bytes;
  for (const Buffer& b : buffers_)
    if (b.begin == begin && b.end == end) return;
  // Memory that was another buffer before (another kernel's, at the same
  // thread-local address) is this one now.
  buffers_.erase(std::remove_if(buffers_.begin(), buffers_.end(),
                                [&](const Buffer& b) { return b.begin < end && begin < b.end; }),
                 buffers_.end());
  buffers_.push_back({begin, end, std::vector<uint32_t>(bytes, 0)});
  lastFound_ = buffers_.size() - 1;
}

SharedShadow::Buffer* SharedShadow::find(uintptr_t at, uintptr_t end) {
  auto holds = [&](const Buffer& b) { return b.begin <= at && end <= b.end; };
  if (lastFound_ < buffers_.size() && holds(buffers_[lastFound_])) return &buffers_[lastFound_];
  for (size_t i = 0; i < buffers_.size(); ++i)
    if (holds(buffers_[i])) {
      lastFound_ = i;
      return &buffers_[i];
    }
  return nullptr;
}

bool SharedShadow::access(int access, const void* p, size_t bytes) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  Buffer* b = find(at, at + bytes);
  if (!b) return true;
  uint32_t* by = b->writtenBy.data() + (at - b->begin);
  if (access != Write)
    for (size_t i = 0; i < bytes; ++i)
      if (by[i] != block_) return false;
  if (access != Read) std::fill(by, by + bytes, block_);
  return true;
}

}  // namespace spindle::rt::cpu
