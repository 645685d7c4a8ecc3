#include "name_supply.h"

#include "../diagnostics.h"

namespace spindle {

namespace {
// C++ keywords and the HIP/CUDA names generated code relies on. A kernel
// author may use any of these as a variable name; the emitted name is then
// suffixed.
const std::set<std::string>& reservedNames() {
  static const std::set<std::string> names = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case",
      "catch", "char", "char16_t", "char32_t", "class", "compl", "const", "constexpr", "const_cast",
      "continue", "decltype", "default", "delete", "do", "double", "dynamic_cast", "else", "enum",
      "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int",
      "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
      "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "return", "short",
      "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template",
      "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "union",
      "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
      // HIP / CUDA
      "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "dim3", "__half", "__nv_bfloat16",
      "hip_bfloat16", "atomicAdd", "atomicMax", "atomicMin", "atomicExch", "min", "max", "abs",
      "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
      "size_t", "main", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "tanh", "erf",
      "floor", "ceil", "pow", "fma", "fabs", "fmin", "fmax", "expf", "exp2f", "logf", "log2f", "sqrtf",
      "rsqrtf", "sinf", "cosf", "tanhf", "erff", "floorf", "ceilf", "powf", "fmaf", "fabsf", "fminf",
      "fmaxf", "std", "hipStream_t", "cudaStream_t", "printf", "assert", "INFINITY", "NAN",
      // The host launcher's locals (templates/launcher.in): its parameters,
      // dims among them, share their scope.
      "stream", "grid", "block", "dynamic_shared_bytes", "resident_blocks"};
  return names;
}
}  // namespace

NameSupply::NameSupply(const NameSupply* parent) : parent_(parent) {}

bool NameSupply::taken(const std::string& name) const {
  if (used_.count(name) || reservedNames().count(name)) return true;
  return parent_ && parent_->taken(name);
}

std::string NameSupply::fresh(const std::string& wanted) {
  std::string name = wanted;
  for (int suffix = 1; taken(name); ++suffix) name = wanted + "_" + std::to_string(suffix);
  used_.insert(name);
  return name;
}

const std::string& NameSupply::declare(const Symbol* sym, const std::string& wanted) {
  SPINDLE_INTERNAL_CHECK(!names_.count(sym), "symbol '{}' declared twice", sym->name);
  return names_[sym] = fresh(wanted);
}

bool NameSupply::has(const Symbol* sym) const {
  return names_.count(sym) || (parent_ && parent_->has(sym));
}

const std::string& NameSupply::nameOf(const Symbol* sym) const {
  auto it = names_.find(sym);
  if (it != names_.end()) return it->second;
  SPINDLE_INTERNAL_CHECK(parent_, "no emitted name for {} '{}'", symbolKindName(sym->kind), sym->name);
  return parent_->nameOf(sym);
}

}  // namespace spindle
