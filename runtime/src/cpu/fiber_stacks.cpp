#include "cpu/fiber_stacks.h"

#include <boost/context/protected_fixedsize_stack.hpp>

#include "cpu/asan_fibers.h"

namespace spindle::rt::cpu {

FiberStacks::FiberStacks(size_t bytesPerStack) : bytes_(bytesPerStack) {}

FiberStacks::~FiberStacks() {
  boost::context::protected_fixedsize_stack maker(bytes_);
  for (auto& sc : all_) {
    asanForgetStack(static_cast<char*>(sc.sp) - sc.size, sc.size);
    maker.deallocate(sc);
  }
}

boost::context::stack_context FiberStacks::take() {
  if (free_.empty()) {
    // mmap with a guard page; throws std::bad_alloc when the address space
    // is exhausted.
    boost::context::protected_fixedsize_stack maker(bytes_);
    all_.push_back(maker.allocate());
    free_.reserve(all_.size());  // so that give() never allocates
    return lastTaken_ = all_.back();
  }
  lastTaken_ = free_.back();
  free_.pop_back();
  return lastTaken_;
}

void FiberStacks::give(const boost::context::stack_context& sc) noexcept { free_.push_back(sc); }

}  // namespace spindle::rt::cpu
