// Tuning launches without visible side effects: the arguments a tuning
// launch gets, with every tensor the kernel writes (and every tensor that
// shares memory with one) moved onto a scratch copy. Tensors whose byte
// ranges overlap form one region and get one copy, so aliasing between
// parameters (an @alias pair, a read view of a written buffer) is the same
// on the copy; each pointer keeps its address modulo 256, so alignment
// specializations are the same too. Copies start with the caller's data
// (an accumulating kernel reads what it adds to).
//
// When the copies would pass `maxBytes`, or allocating them fails, the
// regions are saved to host memory instead and the tuning launches write
// the caller's tensors; restore() (and the destructor) put the saved bytes
// back. Either way, after restore() the caller's memory is as it was.
#pragma once

#include <spindle/runtime.hpp>

#include <cstdint>
#include <vector>

#include "backend.h"

namespace spindle::rt {

class ScratchArgs {
 public:
  // `writes[i]`: argument i is a tensor the kernel stores into.
  ScratchArgs(Backend& backend, const Arg* args, size_t count, const std::vector<bool>& writes, uint64_t maxBytes);
  ~ScratchArgs();
  ScratchArgs(const ScratchArgs&) = delete;
  ScratchArgs& operator=(const ScratchArgs&) = delete;

  const Arg* args() const { return args_.data(); }
  // True when the tuning launches write the caller's tensors (save and restore).
  bool inPlace() const { return inPlace_; }
  size_t regions() const { return regions_.size(); }
  uint64_t bytes() const { return bytes_; }
  // Puts saved bytes back (in place) and releases the copies; idempotent.
  void restore();

 private:
  struct Region {
    uintptr_t lo = 0, hi = 0;    // the caller's bytes
    void* allocation = nullptr;  // the copy (scratch mode)
    uintptr_t copy = 0;          // where `lo` lands in it
    std::vector<char> saved;     // in-place mode
  };
  Backend& backend_;
  std::vector<Arg> args_;
  std::vector<Region> regions_;
  bool inPlace_ = false;
  bool restored_ = false;
  uint64_t bytes_ = 0;
};

// The bytes a tensor argument spans: [lo, hi); lo == hi when it is empty.
void tensorByteRange(const Arg& a, uintptr_t& lo, uintptr_t& hi);

}  // namespace spindle::rt
