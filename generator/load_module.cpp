#include "load_module.h"

#include "frontend/parser.h"
#include "sema/sema.h"

namespace spindle {

LoadedModule::LoadedModule() = default;
LoadedModule::LoadedModule(LoadedModule&&) noexcept = default;
LoadedModule& LoadedModule::operator=(LoadedModule&&) noexcept = default;
LoadedModule::~LoadedModule() = default;

LoadedModule loadModule(std::shared_ptr<const SourceFile> file, DiagnosticEngine& diags,
                        const ConstValues& constOverrides) {
  LoadedModule result;
  result.module = parseModule(file, diags);
  if (diags.hasErrors() || !result.module) return result;
  result.sema = analyzeModule(*result.module, diags, constOverrides);
  if (diags.hasErrors()) result.sema.reset();
  return result;
}

}  // namespace spindle
