// Specialization checks: what a specialization must know at compile time
// and the language can only check once static dims are bound.
//
// Reads: the kernel and the functions it reaches, typed, and the static dim
// values. Produces: nothing, or a located diagnostic (GeneratorError):
// spec-static-range-dynamic for a static_range whose bounds are not
// compile-time values, spec-local-dynamic-size for a local buffer sized by a
// dim that is dynamic here.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "launch_geometry.h"
#include "sema/sema.h"
#include "spindle/generator.h"

namespace spindle {

void checkSpecializedBodies(const SemaModule& sema, const FunctionScope& kernel,
                            const std::vector<FunctionScope*>& functions,
                            const std::map<std::string, int64_t>& staticValues);

// After pruning: no code left uses an optional tensor this specialization
// leaves absent, except to ask `is None` (spec-absent-use, at the use).
// `functions` are the defs and closures the kernel calls.
void checkNoAbsentUses(const SemaModule& sema, const FunctionScope& kernel,
                       const std::vector<FunctionScope*>& functions);

// After pruning: no code left uses a module const computed from dims that
// this specialization could not compute (spec-const-needs-dim, at the use,
// with the reason: a dynamic dim, or a name that is not the kernel's dim).
void checkNoUnavailableConsts(const SemaModule& sema, const FunctionScope& kernel,
                              const std::vector<FunctionScope*>& functions);

// A kernel that reaches a matrix builtin (mma_load_*, mma) has a block of
// whole warps (spec-mma-partial-warp, at the first such call).
// A dot's accumulator is named only in the kernel body that declares it
// (sema-dot-closure): its `fresh` flag and its settling are that body's
// (printer/dot_printer.cpp).
void checkDotAccumulators(const SemaModule& sema, const std::vector<FunctionScope*>& functions);

void checkMatrixBlock(const SemaModule& sema, const FunctionScope& kernel, const std::vector<FunctionScope*>& functions,
                      const BlockPlan& block);

// Every swizzled shared buffer of the kernel (shared(T, [R, C], swizzle=S))
// has, at both warp widths, S in {32, 64, 128}, C * sizeof(T) a multiple of
// S and R a multiple of 8 (sema-swizzle-*), and R and C known here
// (spec-swizzle-shape): sema checks what it can without a specialization.
void checkSwizzledBuffers(const SemaModule& sema, const FunctionScope& kernel,
                          const std::map<std::string, int64_t>& staticValues,
                          const std::map<std::string, ScalarType>& typeArgs);

// A specialization the source cannot be generated for: a located,
// clang-style diagnostic carried by a GeneratorError.
template <typename... Args>
[[noreturn]] void throwSpecializationError(const SemaModule& sema, DiagId id, SourceRange range, const Args&... args) {
  DiagnosticEngine diags;
  diags.report(id, sema.file, range, args...);
  throw GeneratorError(diags.renderAll());
}

}  // namespace spindle
