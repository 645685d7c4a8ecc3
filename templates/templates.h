// Access to the HIP text templates embedded from templates/*.in.
#pragma once
#include <string_view>
namespace spindle {
// The text of templates/<name>.in; empty when there is no such template.
std::string_view templateText(std::string_view name);
}  // namespace spindle
