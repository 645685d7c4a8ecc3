// The front half of the pipeline in one call: lex, parse, semantic analysis.
// `spindle check`, CompiledModule and the bad-input tests all go through here,
// so they agree on what is an error.
#pragma once

#include <memory>

#include "frontend/ast.h"
#include "frontend/diagnostics.h"

namespace spindle {

class SemaModule;

struct LoadedModule {
  std::unique_ptr<SourceModule> module;  // null only if the file could not be read
  std::unique_ptr<SemaModule> sema;      // null when parsing or analysis failed
  LoadedModule();
  LoadedModule(LoadedModule&&) noexcept;
  LoadedModule& operator=(LoadedModule&&) noexcept;
  ~LoadedModule();
};

LoadedModule loadModule(std::shared_ptr<const SourceFile> file, DiagnosticEngine& diags);

}  // namespace spindle
