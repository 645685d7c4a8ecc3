#include "spec_options.h"

#include <fmt/format.h>

#include <stdexcept>

namespace spindle::cli {

namespace {

std::pair<std::string, std::string> splitAssignment(const std::string& option, const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw std::invalid_argument(fmt::format("{} expects NAME=VALUE, got '{}'", option, text));
  return {text.substr(0, eq), text.substr(eq + 1)};
}

const std::string& valueOf(const Args& args, size_t& i) {
  if (i + 1 >= args.size()) throw std::invalid_argument(fmt::format("'{}' needs a value", args[i]));
  return args[++i];
}

}  // namespace

int64_t parseInteger(const std::string& option, const std::string& name, const std::string& text) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty())
    throw std::invalid_argument(fmt::format("{} {}: '{}' is not an integer", option, name, text));
  return v;
}

bool parseSpecOption(const Args& args, size_t& i, KernelSelection& out) {
  const std::string& a = args[i];
  if (a == "--kernel") {
    out.kernel = valueOf(args, i);
    return true;
  }
  if (a == "--static") {
    auto [name, text] = splitAssignment(a, valueOf(args, i));
    out.spec.staticDims[name] = parseInteger(a, name, text);
    return true;
  }
  if (a == "--contiguous") {
    out.spec.contiguousTensors.insert(valueOf(args, i));
    return true;
  }
  if (a == "--aligned") {
    out.spec.alignedTensors.insert(valueOf(args, i));
    return true;
  }
  if (a == "--divisible") {
    out.spec.divisibleDims.insert(valueOf(args, i));
    return true;
  }
  if (a == "--dtype") {
    auto [name, text] = splitAssignment(a, valueOf(args, i));
    auto t = scalarFromName(text);
    if (!t) throw std::invalid_argument(fmt::format("--dtype {}: unknown type '{}'", name, text));
    out.spec.typeArgs[name] = *t;
    return true;
  }
  return false;
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
