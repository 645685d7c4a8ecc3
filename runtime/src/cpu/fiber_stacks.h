// Stacks for the fibers that run GPU threads on the CPU target: each with
// a guard page below it (a stack overflow faults instead of corrupting the
// neighbouring stack), allocated once per worker and reused for every
// block it runs, since mapping and protecting 1024 stacks per block would
// cost more than most blocks take to run.
#pragma once

#include <boost/context/stack_context.hpp>

#include <cstddef>
#include <vector>

namespace spindle::rt::cpu {

class FiberStacks {
 public:
  explicit FiberStacks(size_t bytesPerStack);
  ~FiberStacks();
  FiberStacks(const FiberStacks&) = delete;
  FiberStacks& operator=(const FiberStacks&) = delete;

  // The stack allocator Boost.Context's fiber takes (StackAllocator
  // concept): hands out pooled stacks, takes them back.
  class Allocator {
   public:
    explicit Allocator(FiberStacks& pool) : pool_(&pool) {}
    boost::context::stack_context allocate() { return pool_->take(); }
    void deallocate(boost::context::stack_context& sc) noexcept { pool_->give(sc); }

   private:
    FiberStacks* pool_;
  };
  Allocator allocator() { return Allocator(*this); }

  size_t bytesPerStack() const { return bytes_; }
  // The stack handed out last (AddressSanitizer is told its bounds).
  const boost::context::stack_context& lastTaken() const { return lastTaken_; }

 private:
  boost::context::stack_context take();
  void give(const boost::context::stack_context& sc) noexcept;

  size_t bytes_;
  std::vector<boost::context::stack_context> free_;
  std::vector<boost::context::stack_context> all_;
  boost::context::stack_context lastTaken_{};
};

}  // namespace spindle::rt::cpu
