// Recursive-descent parser: tokens to a SourceModule (the AST of one .spn file).
#pragma once

#include <memory>

#include "frontend/ast.h"
#include "frontend/diagnostics.h"
#include "frontend/language_limits.h"

namespace spindle {

// Parses a whole module. Errors go to `diags`; parsing recovers at the next
// statement where it sensibly can, so one run reports several errors. The
// returned module holds everything that parsed; when diags.hasErrors() it
// must not be handed to semantic analysis.
std::unique_ptr<SourceModule> parseModule(std::shared_ptr<const SourceFile> file, DiagnosticEngine& diags);

}  // namespace spindle
