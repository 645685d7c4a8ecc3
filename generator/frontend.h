// The front half of the pipeline in one call: lex, parse, semantic analysis.
// `spindle check`, CompiledModule and the bad-input tests all go through here,
// so they agree on what is an error.
#pragma once

#include <memory>

#include "ast.h"
#include "diagnostics.h"

namespace spindle {

class SemaModule;

struct FrontendResult {
  std::unique_ptr<SourceModule> module;  // null only if the file could not be read
  std::unique_ptr<SemaModule> sema;      // null when parsing or analysis failed
  FrontendResult();
  FrontendResult(FrontendResult&&) noexcept;
  FrontendResult& operator=(FrontendResult&&) noexcept;
  ~FrontendResult();
};

FrontendResult runFrontend(std::shared_ptr<const SourceFile> file, DiagnosticEngine& diags);

}  // namespace spindle
