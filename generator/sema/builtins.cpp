#include "sema/builtins.h"

#include <iterator>

namespace spindle {

namespace {
constexpr BuiltinInfo kBuiltins[] = {
#define BUILTIN(ID, NAME, CAT, MINA, MAXA, F32, OTHER) \
  {BuiltinId::ID, NAME, BuiltinCategory::CAT, MINA, MAXA, F32, OTHER},
#include "builtins.def"
#undef BUILTIN
};
}  // namespace

const BuiltinInfo* BuiltinTable::begin() const { return std::begin(kBuiltins); }
const BuiltinInfo* BuiltinTable::end() const { return std::end(kBuiltins); }

const BuiltinInfo* findBuiltin(std::string_view name) {
  for (const auto& b : kBuiltins)
    if (b.name == name) return &b;
  return nullptr;
}

const BuiltinInfo& builtinInfo(BuiltinId id) { return kBuiltins[static_cast<size_t>(id)]; }

}  // namespace spindle
