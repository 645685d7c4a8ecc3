// Specialization's one text form: the flags (spindle/specialization.h).
#include "spindle/specialization.h"

#include <fmt/format.h>

#include <cctype>
#include <stdexcept>

namespace spindle {

namespace {

std::pair<std::string, std::string> splitAssignment(const std::string& flag, const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw std::invalid_argument(fmt::format("{} expects NAME=VALUE, got '{}'", flag, text));
  return {text.substr(0, eq), text.substr(eq + 1)};
}

bool isIdentifier(const std::string& text) {
  if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_')) return false;
  for (char c : text)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

// An integer (decimal, or True/False as 1/0), a float literal (inf and nan
// included), or a name: a module def for a `fn` parameter.
ConstOverride parseConstValue(const std::string& name, const std::string& text) {
  if (text == "True" || text == "False") return ConstOverride::ofInt(text == "True" ? 1 : 0);
  if (isIdentifier(text) && text != "inf" && text != "nan") return ConstOverride::ofFunction(text);
  size_t used = 0;
  try {
    long long i = std::stoll(text, &used);
    if (used == text.size()) return ConstOverride::ofInt(i);
  } catch (const std::exception&) {
  }
  try {
    double f = std::stod(text, &used);
    if (used == text.size()) return ConstOverride::ofFloat(f);
  } catch (const std::exception&) {
  }
  throw std::invalid_argument(fmt::format("--const {}: '{}' is not a number", name, text));
}

// `--divisible N` (a multiple of 16, as the flag has always meant) or
// `--divisible N=G`.
void parseDivisible(const std::string& value, Specialization& spec) {
  if (value.find('=') == std::string::npos) {
    spec.divisible[value] = 16;
    return;
  }
  auto [name, text] = splitAssignment("--divisible", value);
  int64_t g = parseIntegerFlag("--divisible", name, text);
  if (!isDivisibilityGranularity(g))
    throw std::invalid_argument(fmt::format(
        "--divisible {}: granularity {} is not 2, 4, 8 or 16 (--divisible {}=G: a multiple of G)", name, g, name));
  spec.divisible[name] = int(g);
}

}  // namespace

std::string constOverrideText(const ConstOverride& v) {
  if (!v.function.empty()) return v.function;
  if (!v.isFloat) return std::to_string(v.i);
  std::string text = fmt::format("{}", v.f);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";  // `n`: inf and nan spell themselves
  return text;
}

bool Specialization::operator==(const Specialization& other) const {
  return staticDims == other.staticDims && typeArgs == other.typeArgs && contiguousTensors == other.contiguousTensors &&
         unitStrideTensors == other.unitStrideTensors && alignedTensors == other.alignedTensors &&
         divisible == other.divisible && exactGridDims == other.exactGridDims && absentTensors == other.absentTensors &&
         consts == other.consts && lineDirectives == other.lineDirectives && checked == other.checked &&
         index32 == other.index32;
}

int divisibilityGranularity(int64_t value) {
  for (int g : {16, 8, 4, 2})
    if (value % g == 0) return g;
  return 0;
}

bool isDivisibilityGranularity(int64_t g) { return g == 2 || g == 4 || g == 8 || g == 16; }

std::string strideDivisibleName(const std::string& tensor, int axis) {
  return fmt::format("{}.stride{}", tensor, axis);
}

std::string dimDivisibleName(const std::string& tensor, int axis) { return fmt::format("{}.dim{}", tensor, axis); }

std::vector<std::string> specializationFlags(const Specialization& spec) {
  // std::map and std::set iterate sorted: the order is canonical.
  std::vector<std::string> flags;
  auto add = [&](const char* flag, std::string value) {
    flags.push_back(flag);
    flags.push_back(std::move(value));
  };
  for (const auto& [name, value] : spec.staticDims) add("--static", fmt::format("{}={}", name, value));
  for (const auto& [name, type] : spec.typeArgs) add("--dtype", fmt::format("{}={}", name, scalarName(type)));
  for (const auto& [name, value] : spec.consts) add("--const", fmt::format("{}={}", name, constOverrideText(value)));
  for (const auto& name : spec.contiguousTensors) add("--contiguous", name);
  for (const auto& name : spec.unitStrideTensors) add("--unit-stride", name);
  for (const auto& name : spec.alignedTensors) add("--aligned", name);
  // 16, the granularity the flag has always meant, goes without a value.
  for (const auto& [name, g] : spec.divisible) add("--divisible", g == 16 ? name : fmt::format("{}={}", name, g));
  for (const auto& name : spec.exactGridDims) add("--exact-grid", name);
  for (const auto& name : spec.absentTensors) add("--absent", name);
  if (!spec.lineDirectives) flags.push_back("--no-line-directives");
  if (spec.checked) flags.push_back("--checked");
  if (spec.index32) flags.push_back("--index32");
  return flags;
}

int64_t parseIntegerFlag(const std::string& flag, const std::string& name, const std::string& text) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty())
    throw std::invalid_argument(fmt::format("{} {}: '{}' is not an integer", flag, name, text));
  return v;
}

bool parseSpecializationFlag(const std::vector<std::string>& args, size_t& i, Specialization& spec) {
  const std::string& flag = args[i];
  if (flag == "--no-line-directives") {
    spec.lineDirectives = false;
    return true;
  }
  if (flag == "--index32") {
    spec.index32 = true;
    return true;
  }
  if (flag == "--checked") {
    spec.checked = true;
    return true;
  }
  const bool takesValue = flag == "--static" || flag == "--dtype" || flag == "--const" || flag == "--contiguous" ||
                          flag == "--unit-stride" || flag == "--aligned" || flag == "--divisible" ||
                          flag == "--exact-grid" || flag == "--absent";
  if (!takesValue) return false;
  if (i + 1 >= args.size()) throw std::invalid_argument(fmt::format("'{}' needs a value", flag));
  const std::string& value = args[++i];
  if (flag == "--static") {
    auto [name, text] = splitAssignment(flag, value);
    spec.staticDims[name] = parseIntegerFlag(flag, name, text);
  } else if (flag == "--dtype") {
    auto [name, text] = splitAssignment(flag, value);
    auto type = scalarFromName(text);
    if (!type) throw std::invalid_argument(fmt::format("--dtype {}: unknown type '{}'", name, text));
    spec.typeArgs[name] = *type;
  } else if (flag == "--const") {
    auto [name, text] = splitAssignment(flag, value);
    spec.consts[name] = parseConstValue(name, text);
  } else if (flag == "--contiguous") {
    spec.contiguousTensors.insert(value);
  } else if (flag == "--unit-stride") {
    spec.unitStrideTensors.insert(value);
  } else if (flag == "--aligned") {
    spec.alignedTensors.insert(value);
  } else if (flag == "--exact-grid") {
    spec.exactGridDims.insert(value);
  } else if (flag == "--absent") {
    spec.absentTensors.insert(value);
  } else {
    parseDivisible(value, spec);
  }
  return true;
}

}  // namespace spindle
