// The front half of the pipeline in one call: lex, parse, semantic analysis.
// `spindle check`, CompiledModule and the bad-input tests all go through here,
// so they agree on what is an error.
#pragma once

#include <memory>

#include "frontend/ast.h"
#include "frontend/diagnostics.h"
#include "sema/sema.h"

namespace spindle {

struct LoadedModule {
  std::unique_ptr<SourceModule> module;  // null only if the file could not be read
  std::unique_ptr<SemaModule> sema;      // null when parsing or analysis failed
  LoadedModule();
  LoadedModule(LoadedModule&&) noexcept;
  LoadedModule& operator=(LoadedModule&&) noexcept;
  ~LoadedModule();
};

// `constOverrides`: module consts given other values (a specialization's
// --const), already checked against their types (generate.h, checkConsts).
LoadedModule loadModule(std::shared_ptr<const SourceFile> file, DiagnosticEngine& diags,
                        const ConstValues& constOverrides = {});

}  // namespace spindle
