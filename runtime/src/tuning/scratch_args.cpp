#include "tuning/scratch_args.h"

#include <algorithm>
#include <utility>

namespace spindle::rt {

void tensorByteRange(const Arg& a, uintptr_t& lo, uintptr_t& hi) {
  lo = hi = reinterpret_cast<uintptr_t>(a.data);
  int64_t low = 0, high = 0, stride = 1;
  for (int k = a.rank - 1; k >= 0; --k) {
    if (a.shape[k] <= 0) return;  // empty
    int64_t st = a.hasStrides ? a.strides[k] : stride;
    int64_t reach = (a.shape[k] - 1) * st;
    (reach < 0 ? low : high) += reach;
    stride *= a.shape[k];
  }
  int64_t elem = int64_t(scalarBytes(a.dtype));
  lo = uintptr_t(int64_t(lo) + low * elem);
  hi = uintptr_t(int64_t(hi) + (high + 1) * elem);
}

ScratchArgs::ScratchArgs(Backend& backend, const Arg* args, size_t count, const std::vector<bool>& writes,
                         uint64_t maxBytes)
    : backend_(backend), args_(args, args + count) {
  struct Span {
    uintptr_t lo, hi;
    size_t arg;
    bool written;
  };
  std::vector<Span> spans;
  for (size_t i = 0; i < count; ++i) {
    if (args[i].kind != Arg::Kind::Tensor || !args[i].data) continue;
    Span s{0, 0, i, i < writes.size() && writes[i]};
    tensorByteRange(args[i], s.lo, s.hi);
    if (s.hi > s.lo) spans.push_back(s);
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.lo < b.lo; });
  // Merge overlapping spans into regions; keep those holding a written tensor.
  std::vector<std::pair<Region, std::vector<size_t>>> merged;
  std::vector<bool> regionWritten;
  for (const Span& s : spans) {
    if (merged.empty() || s.lo >= merged.back().first.hi) {
      Region r;
      r.lo = s.lo;
      r.hi = s.hi;
      merged.push_back({std::move(r), {}});
      regionWritten.push_back(false);
    }
    merged.back().first.hi = std::max(merged.back().first.hi, s.hi);
    merged.back().second.push_back(s.arg);
    if (s.written) regionWritten.back() = true;
  }
  std::vector<std::vector<size_t>> members;
  for (size_t m = 0; m < merged.size(); ++m) {
    if (!regionWritten[m]) continue;
    bytes_ += merged[m].first.hi - merged[m].first.lo;
    regions_.push_back(std::move(merged[m].first));
    members.push_back(std::move(merged[m].second));
  }
  if (regions_.empty()) return;
  inPlace_ = bytes_ > maxBytes;
  if (!inPlace_) {
    try {
      for (Region& r : regions_) {
        size_t size = r.hi - r.lo;
        r.allocation = backend_.allocate(size + 256);
        r.copy = reinterpret_cast<uintptr_t>(r.allocation) + r.lo % 256;  // same alignment as the caller's
        backend_.copyOnDevice(reinterpret_cast<void*>(r.copy), reinterpret_cast<void*>(r.lo), size);
      }
    } catch (const Error&) {  // out of device memory: save and restore instead
      for (Region& r : regions_)
        if (r.allocation) backend_.release(std::exchange(r.allocation, nullptr));
      inPlace_ = true;
    }
  }
  if (inPlace_) {
    for (Region& r : regions_) {
      r.saved.resize(r.hi - r.lo);
      backend_.copyToHost(r.saved.data(), reinterpret_cast<void*>(r.lo), r.saved.size());
    }
    return;
  }
  for (size_t m = 0; m < regions_.size(); ++m)
    for (size_t i : members[m])
      args_[i].data =
          reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(args_[i].data) - regions_[m].lo + regions_[m].copy);
}

void ScratchArgs::restore() {
  if (restored_) return;
  restored_ = true;
  for (Region& r : regions_) {
    if (r.allocation) backend_.release(std::exchange(r.allocation, nullptr));
    if (!r.saved.empty()) backend_.copyToDevice(reinterpret_cast<void*>(r.lo), r.saved.data(), r.saved.size());
  }
}

ScratchArgs::~ScratchArgs() {
  try {
    restore();
  } catch (...) {  // a failed restore is reported by restore() when called directly
  }
}

}  // namespace spindle::rt
