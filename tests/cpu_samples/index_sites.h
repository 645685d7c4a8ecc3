// The index expressions of a .spn file, found with the generator's own
// parser, and mutants of the file with one of them changed: what the
// out-of-bounds mutator (oob_mutants_test.cpp) is made of.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace spindle::cpu_samples {

// One index of one element access: in `x[row, j + k]`, `row` (axis 0) and
// `j + k` (axis 1) are two sites.
struct IndexSite {
  uint32_t begin = 0, end = 0;  // the index expression's bytes in the text
  uint32_t line = 0, col = 0;   // where the access starts: what a checked build reports
  std::string access;           // the access as written: "x[row, j + k]"
  std::string index;            // the index as written: "j + k"
  std::string base;             // the tensor or buffer: "x"
  size_t axis = 0;
  std::string extent;         // the axis's extent as written where `base` is declared ("N", "2 * D", "VEC")
  bool store = false;         // the access is written: an assignment's target, an atomic's first argument
  bool tensorParam = false;   // `base` is a tensor parameter (global memory), not a shared/local buffer
  bool sharedBuffer = false;  // `base` is a `shared` buffer
};

// Every index of every element access in `text`, in source order (`path`
// names it in parse errors, which throw std::runtime_error).
std::vector<IndexSite> indexSites(const std::string& path, const std::string& text);

// `text` with site `s`'s index `e` replaced by `(e)` followed by `suffix`
// (" + 1", " - 1", " + (N)").
std::string mutate(const std::string& text, const IndexSite& s, const std::string& suffix);

}  // namespace spindle::cpu_samples
