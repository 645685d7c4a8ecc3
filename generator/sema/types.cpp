#include "spindle/types.h"

namespace spindle {

namespace {
struct ScalarInfo {
  ScalarType type;
  std::string_view name;
  std::string_view cppName;
  int bits;
  bool isFloat;
  bool isSigned;
};
constexpr ScalarInfo kScalars[] = {{ScalarType::Invalid, "<invalid>", "<invalid>", 0, false, false},
#define X(E, N, C, B, F, S) {ScalarType::E, N, C, B, F, S},
                                   SPINDLE_SCALAR_TYPES(X)
#undef X
};
const ScalarInfo& info(ScalarType t) { return kScalars[static_cast<size_t>(t)]; }
}  // namespace

std::string_view scalarName(ScalarType t) { return info(t).name; }
std::string_view scalarCppName(ScalarType t) { return info(t).cppName; }
int scalarBits(ScalarType t) { return info(t).bits; }
bool isFloat(ScalarType t) { return info(t).isFloat; }
bool isInteger(ScalarType t) { return t != ScalarType::Invalid && t != ScalarType::Bool && !info(t).isFloat; }
bool isSigned(ScalarType t) { return info(t).isSigned; }
size_t scalarBytes(ScalarType t) { return static_cast<size_t>(info(t).bits / 8); }

std::optional<ScalarType> scalarFromName(std::string_view name) {
  for (const auto& s : kScalars)
    if (s.type != ScalarType::Invalid && s.name == name) return s.type;
  return std::nullopt;
}

}  // namespace spindle
