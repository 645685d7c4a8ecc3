// The in-memory cache: SpecKey (static dim values + bound dtypes) to a
// loaded kernel, one table per kernel. The device is not part of the key:
// an entry holds a function handle per device (runtime.cpp, Loaded). Open addressing over a
// flat array: a lookup hashes a few words, compares, and allocates nothing.
#pragma once

#include <memory>
#include <vector>

#include "launch_binding.h"

namespace spindle::rt {

template <typename Value>
class MemoryCache {
 public:
  // nullptr on a miss.
  Value* find(const SpecKey& key) const {
    if (slots_.empty()) return nullptr;
    size_t mask = slots_.size() - 1;
    for (size_t i = size_t(key.hash()) & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (!s.value) return nullptr;
      if (s.key == key) return s.value.get();
    }
  }

  // Inserts (or replaces) and returns the stored value.
  Value* insert(const SpecKey& key, std::unique_ptr<Value> value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    Value* v = value.get();
    place(key, std::move(value));
    return v;
  }

  size_t size() const { return size_; }

 private:
  struct Slot {
    SpecKey key;
    std::unique_ptr<Value> value;
  };

  void place(const SpecKey& key, std::unique_ptr<Value> value) {
    size_t mask = slots_.size() - 1;
    for (size_t i = size_t(key.hash()) & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (!s.value) {
        s.key = key;
        s.value = std::move(value);
        ++size_;
        return;
      }
      if (s.key == key) {
        s.value = std::move(value);
        return;
      }
    }
  }

  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_ = std::vector<Slot>(old.empty() ? 8 : old.size() * 2);
    size_ = 0;
    for (auto& s : old)
      if (s.value) place(s.key, std::move(s.value));
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace spindle::rt
