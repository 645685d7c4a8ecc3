#include "cpu/shared_shadow.h"

#include <algorithm>

namespace spindle::rt::cpu {

void SharedShadow::nextInterval() {
  if (++interval_ != 0) return;
  // 2^32 intervals on one worker: start counting again, forgetting all
  // (only within a block could that hide a missing write).
  for (Buffer& b : buffers_) std::fill(b.bytes.begin(), b.bytes.end(), Byte{});
  interval_ = 1;
}

void SharedShadow::beginBlock() {
  nextInterval();
  blockBegan_ = interval_;
}

void SharedShadow::barrier() { nextInterval(); }

void SharedShadow::declare(const void* base, size_t bytes) {
  const auto begin = reinterpret_cast<uintptr_t>(base), end = begin + bytes;
  for (const Buffer& b : buffers_)
    if (b.begin == begin && b.end == end) return;
  // Memory that was another buffer before (another kernel's, at the same
  // thread-local address) is this one now.
  buffers_.erase(
      std::remove_if(buffers_.begin(), buffers_.end(), [&](const Buffer& b) { return b.begin < end && begin < b.end; }),
      buffers_.end());
  buffers_.push_back({begin, end, std::vector<Byte>(bytes)});
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

SharedShadow::Verdict SharedShadow::access(int access, const void* p, size_t bytes, uint32_t thread, uint32_t meetings,
                                           uint32_t* other) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  Buffer* b = find(at, at + bytes);
  if (!b) return Fine;
  Byte* first = b->bytes.data() + (at - b->begin);
  const bool reads = access != Write, writes = access != Read;
  const uint32_t warp = thread / warpSize_;
  // Everything is checked before anything is recorded, so a report leaves
  // no half-marked element behind.
  for (Byte* x = first; x != first + bytes; ++x) {
    if (reads && x->written < blockBegan_) return Unwritten;
    if (x->written == interval_ && x->writer != thread) {
      const bool orderedByWarp = x->writer != kSeveral && x->writer / warpSize_ == warp && meetings > x->writerMeetings;
      // Atomics among themselves are fine, and so are plain writes.
      const bool fine = orderedByWarp || (x->atomic ? access == Atomic : access == Write);
      if (!fine) {
        *other = x->writer;
        return x->atomic ? AfterWriteAtomically : AfterWrite;
      }
    }
    if (writes && x->read == interval_ && x->reader != thread &&
        !(x->readerWarp == warp && meetings > x->readerMeetings)) {
      *other = x->reader;
      return AfterRead;
    }
  }
  for (Byte* x = first; x != first + bytes; ++x) {
    if (access == Atomic) {
      const bool others = x->written == interval_ && x->atomic && x->writer != thread;
      x->writer = others ? kSeveral : thread;
      x->written = interval_, x->writerMeetings = meetings, x->atomic = true;
    } else if (writes) {
      x->written = interval_, x->writer = thread, x->writerMeetings = meetings, x->atomic = false;
    }
    if (access == Read || access == Update) {
      const bool earlier = x->read == interval_;
      x->reader = earlier && x->reader != thread ? kSeveral : thread;
      x->readerWarp = earlier && x->readerWarp != warp ? kSeveral : warp;
      x->read = interval_, x->readerMeetings = meetings;
    }
  }
  return Fine;
}

}  // namespace spindle::rt::cpu
