// One specialized, self-contained HIP source per (kernel, specialization):
// the file header, the prelude, consts and static dims, outlined functions,
// the kernel and its host launcher.
//
// specializationKey() lives here, next to printKernelSource(), because it
// must cover every input the printer reads: PrintRequest is that input, and
// nothing else is read but the module's own text.
#pragma once

#include <map>
#include <set>
#include <string>

#include "../sema.h"
#include "spindle/generator.h"

namespace spindle {

struct PrintRequest {
  std::string kernel;
  std::map<std::string, int64_t> staticDims;   // @static dims and any the caller adds
  std::map<std::string, ScalarType> typeArgs;  // every type parameter
  std::set<std::string> contiguousTensors;     // strided params passed contiguous
  std::set<std::string> alignedTensors;        // tensor params 16-byte aligned at launch
  std::set<std::string> divisibleDims;         // dynamic dims that are multiples of 16
  bool lineDirectives = true;
};

// Canonical text of everything the generated source depends on: Spindle's
// version, the module's path and a hash of its text, and every field of the
// request. Two requests with equal keys print identical sources.
std::string specializationKey(const SemaModule& sema, const PrintRequest& request);

// Checks the request against the kernel (every @static dim has a value, the
// names are the kernel's dims and type parameters, values are positive) and
// prints. Throws GeneratorError with the offending names and values.
GeneratedKernel printKernelSource(SemaModule& sema, const PrintRequest& request);

// Launch geometry for bound dims (`dims` covers every dim symbol). The block
// and dynamic shared memory come first: resident_blocks() in @grid is asked
// for them (see CompiledModule::launchGeometry).
LaunchGeometry computeLaunchGeometry(SemaModule& sema, const PrintRequest& request,
                                     const std::map<std::string, int64_t>& dims,
                                     const ResidentBlocksQuery& residentBlocks);

}  // namespace spindle
