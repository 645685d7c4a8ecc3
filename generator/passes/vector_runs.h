// Runs that become vector accesses (docs/language.md 9.4). A run copy is a
// static_range loop whose whole body moves a run of a tensor's row to or
// from a local array:
//
//   for k in static_range(V): xs[k] = x[row, j + k]      (or load_stream(...))
//   for k in static_range(V): y[row, j + k] = xs[k]      (or store_stream(...))
//
// When the tensor's base is 16-byte aligned in the specialization and the
// divisibility analysis proves the run's first element sits on a word
// boundary, the printer emits the whole loop as one prelude call that moves
// 16-, 8- or 4-byte words (__spn_load_run / __spn_store_run). Everything
// else stays an element loop, and `spindle inspect --stage runs` says why.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "divisibility.h"
#include "sema/builtins.h"

namespace spindle {

struct RunAccess {
  const ForStmt* loop = nullptr;
  const IndexExpr* element = nullptr;  // x[..., e + k]
  const Symbol* tensor = nullptr;
  bool store = false;
  int64_t length = 0;  // elements (0: not known)
  int64_t bytes = 0;
  // Set for a run copy (the loop is the whole access):
  bool copy = false;
  const Symbol* local = nullptr;     // the local array
  const Expr* localStart = nullptr;  // b of L[b + k]; null for L[k]
  const Expr* runStart = nullptr;    // e
  const CallExpr* hint = nullptr;    // load_stream(...) / store_stream(...) around the element
  int wordBytes = 0;                 // 16, 8 or 4 when it becomes a vector access; 0 stays scalar
  std::string whyNot;                // when wordBytes == 0
};

// What `loop` is as a run copy of a kernel tensor, with its verdict;
// nullopt when it is not one (then it prints as written). `kernel` is the
// kernel whose body holds it; `source` the module text (for the reasons).
std::optional<RunAccess> analyzeRunCopy(const ForStmt& loop, const FunctionScope& kernel, const Divisibility& div,
                                        const Specialization& spec, const std::string& source);

// Every run access of the kernel's own body, in source order: the run
// copies with their verdicts, and every other element indexed in a run
// (`acc += x[row, j + k]`), which stays scalar.
std::vector<RunAccess> findRunAccesses(const FunctionScope& kernel, const Specialization& spec,
                                       const std::string& source);

// One line of the report: "LINE:COL: vector: x[row, j + k]: load of a run
// of 8 bf16 (16 bytes) as 1 word of 16 bytes" or "LINE:COL: scalar: ...:
// WHY".
std::string describeRunAccess(const RunAccess& r, const std::string& source);

}  // namespace spindle
