// The options that pick and specialize a kernel, shared by `gen`,
// `inspect --stage key`, `compile` and `run`: --kernel NAME and the
// specialization flags (spindle/specialization.h):
//   --static N=VAL (repeatable)  --dtype T=TYPE (repeatable)  --const C=VAL (repeatable)
//   --contiguous X (repeatable: strided parameter X is passed row-major contiguous)
//   --aligned X    (repeatable: tensor parameter X's address is a multiple of 16 bytes)
//   --divisible N  (repeatable: dynamic dim N is a multiple of 16)
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
