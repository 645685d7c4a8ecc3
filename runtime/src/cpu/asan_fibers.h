// AddressSanitizer must be told of every switch between stacks, or it
// takes a fiber's frames for a corrupted stack (and its fake stacks for
// use-after-return go wrong). Boost.Context annotates only its ucontext
// fibers, which Debian's library is not built for, so the BlockRunner does
// it here: a no-op in builds without ASan. (Unwinding a failed block's
// suspended fibers starts with a throw before the switch is finished, so
// ASan prints one "ignoring requested __asan_handle_no_return" warning
// then; it reports nothing.)
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define SPINDLE_ASAN_FIBERS 1
#endif

namespace spindle::rt::cpu {

struct StackBounds {
  const void* bottom = nullptr;
  size_t size = 0;
};

// Before switching to the stack `to`; `fakeStack` keeps the leaving stack's
// fake frames (null: the leaving fiber has ended and its frames go).
inline void asanStartSwitch(void** fakeStack, const StackBounds& to) {
#if SPINDLE_ASAN_FIBERS
  __sanitizer_start_switch_fiber(fakeStack, to.bottom, to.size);
#else
  (void)fakeStack, (void)to;
#endif
}

// Right after arriving on a stack; `from` (if not null) learns the bounds
// of the stack that was left.
inline void asanFinishSwitch(void* fakeStack, StackBounds* from) {
#if SPINDLE_ASAN_FIBERS
  __sanitizer_finish_switch_fiber(fakeStack, from ? &from->bottom : nullptr, from ? &from->size : nullptr);
#else
  (void)fakeStack, (void)from;
#endif
}

// Before a fiber stack is unmapped: the redzones its frames left stay in
// ASan's shadow otherwise, and memory mapped there later (by anyone) would
// read as a stack overflow.
inline void asanForgetStack(const void* bottom, size_t size) {
#if SPINDLE_ASAN_FIBERS
  ASAN_UNPOISON_MEMORY_REGION(bottom, size);
#else
  (void)bottom, (void)size;
#endif
}

}  // namespace spindle::rt::cpu
