// The driver: everything between a resolved module and the text of one
// specialization (see generate.cpp for the stages, in order). The CLI's
// inspect stages, CompiledModule (and so the runtime) and the tests go
// through it.
#pragma once

#include <map>
#include <string>

#include "sema/sema.h"
#include "spindle/generator.h"

namespace spindle {

// Canonical text of everything the generated source depends on: Spindle's
// version, a hash of the module's text (not its path), the kernel and the
// specialization's canonical flags. Equal keys print identical sources.
std::string specializationKey(const SemaModule& sema, const std::string& kernel, const Specialization& spec);

// Checks each const override of `spec` against the module (a module const;
// an integer const takes an integer within its type, a float const any
// number) and returns `spec` with the overrides in canonical form (a float
// const's value as a float). Throws GeneratorError naming the const and
// the value.
Specialization checkConsts(const SemaModule& sema, Specialization spec);
// The overrides as the resolver takes them (loadModule).
ConstValues constValues(const Specialization& spec);

// Checks the specialization against the kernel (every @static dim has a
// value, the names are the kernel's dims and type parameters, values are
// positive), then specializes, types, analyzes and prints. Throws
// GeneratorError with the offending names and values, or the rendered
// diagnostics of the specialization.
//
// It works in place: `sema` is this specialization's own copy of the module
// (a fresh loadModule), never one that is shared; CompiledModule::generate
// makes that copy, so the module it holds is never changed.
GeneratedKernel generateKernel(SemaModule& sema, const std::string& kernel, const Specialization& spec);

// The kernel named `name`; GeneratorError listing the module's kernels
// when there is none.
FunctionScope& findKernelOrThrow(const SemaModule& sema, const std::string& name);

}  // namespace spindle
