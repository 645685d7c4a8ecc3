#include "frontend.h"

#include "parser.h"
#include "sema.h"

namespace spindle {

FrontendResult::FrontendResult() = default;
FrontendResult::FrontendResult(FrontendResult&&) noexcept = default;
FrontendResult& FrontendResult::operator=(FrontendResult&&) noexcept = default;
FrontendResult::~FrontendResult() = default;

FrontendResult runFrontend(std::shared_ptr<const SourceFile> file, DiagnosticEngine& diags) {
  FrontendResult result;
  result.module = parseModule(file, diags);
  if (diags.hasErrors() || !result.module) return result;
  result.sema = analyzeModule(*result.module, diags);
  if (diags.hasErrors()) result.sema.reset();
  return result;
}

}  // namespace spindle
