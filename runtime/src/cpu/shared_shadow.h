// What a checked build knows about each byte of a block's shared memory
// (docs/runtime.md, "Checked builds"), to report two kinds of bug that a
// GPU hides or shows only now and then:
//   - a read of a byte that no thread of the block wrote since the block
//     began: shared memory starts undefined in every block (here a
//     worker's earlier block may have left plausible values);
//   - a race: two threads of the block touch a byte with nothing ordering
//     them, one of them writing (a read after another thread's write, a
//     write after another thread's read; atomics race with plain
//     accesses, not with each other). On a GPU the read may see either
//     value. Two plain writes are not reported (threads that store the
//     same flag are common and harmless). A barrier orders the whole
//     block; a warp meeting (sync_warp(), a shuffle, a vote) orders the
//     lanes of its warp.
//
// The kernel declares its static shared buffers as it reaches them
// (__spn_track_shared); the runner declares the block's dynamic shared
// memory. Time is counted in intervals, one per stretch between barriers,
// numbered across blocks, so a new block or barrier clears nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace spindle::rt::cpu {

class SharedShadow {
 public:
  // What an access does (the prelude's __spn_checked_read, _write,
  // _update, _atomic).
  enum Access : int { Read = 0, Write = 1, Update = 2, Atomic = 3 };
  // What access() found: the ABI's codes (spindle_cpu_abi.h). AfterWrite:
  // another thread wrote the byte, unordered with this access; AfterRead:
  // another thread read it, and this access writes.
  enum Verdict : int { Fine = 0, Unwritten = 1, AfterWrite = 2, AfterWriteAtomically = 3, AfterRead = 4 };
  // access()'s `other` when several threads did.
  static constexpr uint32_t kSeveral = 0xffffffffu;

  explicit SharedShadow(unsigned warpSize) : warpSize_(warpSize) {}

  // A new block: nothing of its shared memory is written yet.
  void beginBlock();
  // Every thread of the block passed a barrier.
  void barrier();
  // Shared memory at [base, base + bytes); again for the same buffer (every
  // thread declares it) changes nothing.
  void declare(const void* base, size_t bytes);
  // The thread with linear index `thread` in the block accesses
  // [p, p + bytes); `meetings` counts its warp's meetings so far. Memory not
  // declared shared is Fine (a def's tensor parameter may be global
  // memory). For a race, `*other` is the other thread's index (or kSeveral).
  Verdict access(int access, const void* p, size_t bytes, uint32_t thread, uint32_t meetings, uint32_t* other);

 private:
  struct Byte {
    uint32_t written = 0;         // the interval of its last write (0: never)
    uint32_t writer = 0;          // by which thread, or kSeveral (atomics)
    uint32_t writerMeetings = 0;  // its warp's meetings by then
    uint32_t read = 0;            // the interval of its last read
    uint32_t reader = 0;          // by which thread, or kSeveral
    uint32_t readerWarp = 0;      // the readers' warp, or kSeveral for several warps
    uint32_t readerMeetings = 0;  // that warp's meetings at the last read
    bool atomic = false;          // the last write was an atomic
  };
  struct Buffer {
    uintptr_t begin = 0, end = 0;
    std::vector<Byte> bytes;
  };
  Buffer* find(uintptr_t at, uintptr_t end);
  void nextInterval();

  unsigned warpSize_;
  std::vector<Buffer> buffers_;
  size_t lastFound_ = 0;  // accesses come in runs on one buffer
  uint32_t interval_ = 0, blockBegan_ = 0;
};

}  // namespace spindle::rt::cpu
