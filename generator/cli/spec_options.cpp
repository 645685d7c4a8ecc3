#include "spec_options.h"

#include <fmt/format.h>

#include <stdexcept>

namespace spindle::cli {

namespace {

const std::string& valueOf(const Args& args, size_t& i) {
  if (i + 1 >= args.size()) throw std::invalid_argument(fmt::format("'{}' needs a value", args[i]));
  return args[++i];
}

}  // namespace

bool parseSpecOption(const Args& args, size_t& i, KernelSelection& out) {
  if (args[i] == "--kernel") {
    out.kernel = valueOf(args, i);
    return true;
  }
  return parseSpecializationFlag(args, i, out.spec);
}

std::string chooseKernel(const CompiledModule& module, const std::string& requested) {
  if (!requested.empty()) return requested;
  if (module.kernels().size() == 1) return module.kernels()[0].name;
  std::string names;
  for (const auto& k : module.kernels()) names += (names.empty() ? "" : ", ") + k.name;
  throw std::invalid_argument(module.kernels().empty()
                                  ? std::string("the module has no kernel")
                                  : fmt::format("the module has several kernels ({}); pick one with --kernel", names));
}

}  // namespace spindle::cli
