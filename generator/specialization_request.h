// One specialization of one kernel, as the driver takes it: every input
// the generated source depends on besides the module's text.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "spindle/types.h"

namespace spindle {

struct PrintRequest {
  std::string kernel;
  std::map<std::string, int64_t> staticDims;   // @static dims and any the caller adds
  std::map<std::string, ScalarType> typeArgs;  // every type parameter
  std::set<std::string> contiguousTensors;     // strided params passed contiguous
  std::set<std::string> alignedTensors;        // tensor params 16-byte aligned at launch
  std::set<std::string> divisibleDims;         // dynamic dims that are multiples of 16
  bool lineDirectives = true;
};

}  // namespace spindle
