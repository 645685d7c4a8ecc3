// Capture analysis for scope outlining: what each closure's outlined
// __device__ function must take as parameters.
//
// A closure's parameters are exactly what it captures, threaded through
// every intermediate closure (Wren's findUpvalue): if closure B reads the
// kernel's `acc` and is called from closure A, A captures `acc` too so it can
// pass it on. Modes: read-only scalars by value, nonlocal names by reference
// (and anything a callee needs by reference), tensors and scratch by pointer,
// plus every dynamic dim and stride that addressing a captured tensor needs,
// even where the closure's own code never names that dim.
#pragma once

#include <set>
#include <string>

#include "sema/sema.h"

namespace spindle {

// Fills FunctionScope::captures and capturesBlockScratch for every closure
// nested in `root` (a kernel or a module def). Dim symbols named in
// `staticDims` are compile-time constants and are never captured.
void analyzeCaptures(SemaModule& sema, FunctionScope& root, const std::set<std::string>& staticDims);

// Analyzes every module-level def (and its closures), callees before
// callers, so that a kernel analyzed afterwards sees which defs need the
// block-collective scratch.
void analyzeModuleDefs(SemaModule& sema);

// Dim symbols that the shape of a tensor or scratch buffer refers to.
std::vector<Symbol*> shapeDimSymbols(const Symbol& tensorOrBuffer);
// The dims needed to compute an element's address: every axis but the first
// of a contiguous (row-major) tensor or buffer; none for a strided tensor,
// whose strides carry the layout. These are what a capture implies.
std::vector<Symbol*> addressingDimSymbols(const Symbol& tensorOrBuffer);

// Dim symbols that place the rows of the kernel's tensors accessed in runs
// (every axis but the first, strided or not, in first-appearance order):
// when they are multiples of 16, an aligned tensor's rows start aligned too.
// The candidates for Specialization::divisibleDims.
std::vector<Symbol*> runRowDimSymbols(const FunctionScope& kernel);

}  // namespace spindle
