// libFuzzer target: the lexer and parser on arbitrary bytes.
//
// Contract under test (docs/language.md section 2.7, parser.h): any input gives
// diagnostics, never a crash, a hang, a sanitizer report or an
// InternalError; deep nesting is a parse-too-deep diagnostic, not a stack
// overflow. Rendering every diagnostic is part of the target, since
// carets and columns over odd bytes (tabs, invalid UTF-8, CR) are where
// off-by-one reads hide.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "frontend/diagnostics.h"
#include "frontend/parser.h"
#include "frontend/source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = std::make_shared<spindle::SourceFile>("fuzz.spn", std::string(reinterpret_cast<const char*>(data), size));
  spindle::DiagnosticEngine diags;
  try {
    std::unique_ptr<spindle::SourceModule> module = spindle::parseModule(file, diags);
    if (!module) {
      std::fprintf(stderr, "parseModule returned null\n");
      std::abort();
    }
  } catch (const spindle::FatalDiagnostic&) {
    // A stage that stops must already have said why.
    if (!diags.hasErrors()) {
      std::fprintf(stderr, "FatalDiagnostic escaped parseModule without an error diagnostic\n");
      std::abort();
    }
  } catch (const spindle::InternalError& e) {
    std::fprintf(stderr, "InternalError: %s\n", e.what());
    std::abort();
  }
  std::string text = diags.renderAll();
  (void)text;
  return 0;
}
