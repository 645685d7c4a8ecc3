// Whether two strided views share a byte of memory: the launch-time check
// behind "a tensor the kernel writes must not overlap another tensor
// argument" (tensors are __restrict__ in generated code). Exact: views that
// interleave without sharing an element (q and k slices of one qkv buffer,
// kv_cache[:, 0] and kv_cache[:, 1], even and odd columns) are disjoint, and
// a shared byte comes with a witness. The general problem is a bounded
// integer feasibility problem (NP-hard), so the search has a work budget and
// may answer Unknown; see tensor_overlap.cpp for the algorithm.
#pragma once

#include <spindle/runtime.hpp>

#include <cstdint>

namespace spindle::rt {

// One view of memory: element i (an index vector) occupies the bytes
// [base + elemBytes * sum(i[k] * strides[k]), ... + elemBytes). Strides are
// in elements and may be negative, zero or repeated (a view need not be
// injective). A shape below 1 makes the view empty.
struct StridedView {
  uintptr_t base = 0;
  int64_t elemBytes = 1;  // at least 1
  int rank = 0;           // 0 to kMaxRank
  int64_t shape[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
};

enum class OverlapKind { Disjoint, Overlap, Unknown };

struct OverlapResult {
  OverlapKind kind = OverlapKind::Disjoint;
  // Overlap: element indexA of the first view and element indexB of the
  // second both contain the byte at `address`. Addresses are exact integers
  // (a view is not wrapped around the address space); for absurd views
  // that meet beyond 2^64, `address` is that byte's address modulo 2^64.
  int64_t indexA[kMaxRank] = {};
  int64_t indexB[kMaxRank] = {};
  uintptr_t address = 0;
  // Search nodes visited (0 when the byte extents alone decided).
  int64_t work = 0;
};

// Nodes the search may visit before it answers Unknown. At this budget the
// check stays in the microseconds even when it gives up.
inline constexpr int64_t kOverlapWorkBudget = int64_t(1) << 16;

// Disjoint, Overlap (with a witness), or Unknown when `budget` search nodes
// did not decide, or when the views span more than 2^100 bytes (no address
// space comes near; the arithmetic stays in 128 bits). Never allocates.
OverlapResult findOverlap(const StridedView& a, const StridedView& b, int64_t budget = kOverlapWorkBudget);

}  // namespace spindle::rt
