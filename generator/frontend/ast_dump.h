// A readable, indented dump of the AST with locations, for
// `spindle inspect FILE --stage ast` and for parser tests.
#pragma once

#include <string>

#include "frontend/ast.h"

namespace spindle {
std::string dumpAst(const SourceModule& module);
}  // namespace spindle
