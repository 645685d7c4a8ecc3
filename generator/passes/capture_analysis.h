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
#include "spindle/specialization.h"

namespace spindle {

// Fills FunctionScope::captures and capturesBlockScratch for every closure
// nested in `root` (a kernel or a module def). Dim symbols named in
// `staticDims` are compile-time constants and are never captured. A
// `checked` build bounds-checks every access against every extent, so a
// tensor or buffer implies all the dims of its shape (shapeDimSymbols).
void analyzeCaptures(SemaModule& sema, FunctionScope& root, const std::set<std::string>& staticDims,
                     bool checked = false);

// Analyzes every module-level def (and its closures), callees before
// callers, so that a kernel analyzed afterwards sees which defs need the
// block-collective scratch.
void analyzeModuleDefs(SemaModule& sema, bool checked = false);

// Dim symbols that the shape of a tensor or scratch buffer refers to.
std::vector<Symbol*> shapeDimSymbols(const Symbol& tensorOrBuffer);
// The dims needed to compute an element's address: every axis but the first
// of a contiguous (row-major) tensor or buffer; none for a strided tensor,
// whose strides carry the layout. These are what a capture implies.
std::vector<Symbol*> addressingDimSymbols(const Symbol& tensorOrBuffer);

// The axes whose stride a strided tensor's code takes as a parameter (or
// capture): every axis, but the last when its stride is 1 in this
// specialization (Symbol::unitInnerStride); none for a contiguous tensor.
std::vector<int> strideAxes(const Symbol& tensor);

// Dim symbols that place the rows of the kernel's tensors accessed in runs
// (every axis but the first, strided or not, in first-appearance order):
// when they are multiples of 16, an aligned tensor's rows start aligned too.
// The dims among the candidates for Specialization::divisible.
std::vector<Symbol*> runRowDimSymbols(const FunctionScope& kernel);

// Whether axis `axis` of a tensor's shape is a dim expression of at least
// one dynamic dim symbol (`2 * D`, D not in `staticDims`): its value places
// rows where the tensor is addressed by its dims.
bool isDynamicDimExpression(const Symbol& tensor, size_t axis, const std::set<std::string>& staticDims);

// Every value whose granularity can matter in `spec`, as
// Specialization::divisible names it, in a fixed order: the dynamic row dims
// (runRowDimSymbols), then per tensor accessed in runs (and not absent) its
// row strides when it is in spec.unitStrideTensors (`x.stride0`: every axis
// but the last) and, when it is addressed by its dims (not strided, or in
// spec.contiguousTensors), its dynamic dim expressions past axis 0
// (`x.dim1`). The runtime finds the same set at launch
// (runtime/src/launch_binding.cpp, KernelPlan::make).
std::vector<std::string> divisibilityCandidates(const FunctionScope& kernel, const Specialization& spec);

}  // namespace spindle
