// Which bytes of a block's shared memory the block has written, for a
// checked build's reads of shared memory (docs/runtime.md, "Checked
// builds"): shared memory starts undefined in every block, on a GPU as
// here, so a read of a byte that no thread of the block wrote since the
// block began is an error, even where an earlier block on the same worker
// left a value there.
//
// The kernel declares its static shared buffers as it reaches them
// (__spn_track_shared); the runner declares the block's dynamic shared
// memory. Each byte remembers the block that last wrote it (a number per
// block this shadow has seen), so a new block needs no clearing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace spindle::rt::cpu {

class SharedShadow {
 public:
  // What an access does to the bytes it touches (the prelude's
  // __spn_checked_read, _write, _update).
  enum Access : int { Read = 0, Write = 1, Update = 2 };

  // A new block: nothing of its shared memory is written yet.
  void beginBlock();
  // Shared memory at [base, base + bytes); again for the same buffer (every
  // thread declares it) changes nothing.
  void declare(const void* base, size_t bytes);
  // False for a Read or Update of a byte this block has not written. True
  // otherwise, and always for memory that is not declared shared (a def's
  // tensor parameter may be global memory).
  bool access(int access, const void* p, size_t bytes);

 private:
  struct Buffer {
    uintptr_t begin = 0, end = 0;
    std::vector<uint32_t> writtenBy;  // per byte: the block that wrote it last, 0 for none
  };
  Buffer* find(uintptr_t at, uintptr_t end);

  std::vector<Buffer> buffers_;
  size_t lastFound_ = 0;  // accesses come in runs on one buffer
  uint32_t block_ = 0;
};

}  // namespace spindle::rt::cpu
