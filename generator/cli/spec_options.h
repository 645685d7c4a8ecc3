// The options that pick and specialize a kernel, shared by `gen`,
// `inspect --stage key`, `compile` and `run`: --kernel NAME and the
// specialization flags (spindle/specialization.h):
//   --static N=VAL (repeatable)  --dtype T=TYPE (repeatable)  --const C=VAL (repeatable)
//   --contiguous X (repeatable: strided parameter X is passed row-major contiguous)
//   --unit-stride X (repeatable: strided parameter X's innermost stride is 1)
//   --aligned X    (repeatable: tensor parameter X's address is a multiple of 16 bytes)
//   --divisible N[=G] (repeatable: N, a row stride x.strideK or a dim expression's
//                  value x.dimK, is a multiple of G: 2, 4, 8 or 16, the default)
//   --exact-grid D (repeatable: dim D is a multiple of T, its @grid axis being cdiv(D, T))
//   --absent X     (repeatable: optional tensor parameter X is not passed)
//   --no-line-directives
#pragma once

#include <map>
#include <optional>
#include <string>

#include "commands.h"
#include "spindle/generator.h"

namespace spindle::cli {

struct KernelSelection {
  std::string kernel;  // empty: the module's only kernel
  Specialization spec;
};

// Consumes args[i] (and its value) if it is one of the options above and
// returns true; throws std::invalid_argument with a one-line message for a
// malformed value.
bool parseSpecOption(const Args& args, size_t& i, KernelSelection& out);

// Resolves an empty kernel name to the module's only kernel; throws
// std::invalid_argument naming the kernels when that is ambiguous.
std::string chooseKernel(const CompiledModule& module, const std::string& requested);

}  // namespace spindle::cli
