// The one diagnostics engine. Every diagnostic is declared once, with a stable
// id, in one of the diag_*.def tables (Carbon's habit); the code that reports
// it names the id, so the message text lives in exactly one place.
//
// User errors (bad .spn input) are Diagnostics. Bugs in Spindle itself are
// InternalErrors (Halide's user_assert vs internal_assert): they are thrown,
// caught by the CLI, and reported as "internal error" with exit status 2.
#pragma once

#include <fmt/format.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "frontend/source.h"

namespace spindle {

enum class Severity { Error, Warning, Note };

enum class DiagId {
#define DIAG(ID, SEVERITY, FORMAT) ID,
#include "diag_frontend.def"
#include "diag_sema.def"
#undef DIAG
  Count
};

// The stable, user-visible name of a diagnostic ("lex-tab-indent").
const char* diagName(DiagId id);
Severity diagSeverity(DiagId id);
const char* diagFormat(DiagId id);

struct Diagnostic {
  DiagId id;
  Severity severity;
  SourceRange range;
  std::string message;
  std::shared_ptr<const SourceFile> file;
  std::vector<Diagnostic> notes;
};

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Compiler-bug check: throws InternalError, never user-facing by design.
#define SPINDLE_INTERNAL_CHECK(cond, ...)                                                                             \
  do {                                                                                                                \
    if (!(cond))                                                                                                      \
      throw ::spindle::InternalError(                                                                                 \
          fmt::format("{}:{}: internal check '{}' failed: {}", __FILE__, __LINE__, #cond, fmt::format(__VA_ARGS__))); \
  } while (0)

class DiagnosticEngine {
 public:
  // Stop collecting after this many errors: the rest are usually cascades.
  static constexpr size_t kMaxErrors = 50;

  template <typename... Args>
  Diagnostic& report(DiagId id, std::shared_ptr<const SourceFile> file, SourceRange range, const Args&... args) {
    Diagnostic d{id, diagSeverity(id), range, formatMessage(diagFormat(id), args...), std::move(file), {}};
    return add(std::move(d));
  }
  // Attach a note ("previous definition is here") to the last diagnostic.
  template <typename... Args>
  void note(std::shared_ptr<const SourceFile> file, SourceRange range, const char* format, const Args&... args) {
    if (diags_.empty()) return;
    diags_.back().notes.push_back(
        Diagnostic{DiagId::Count, Severity::Note, range, formatMessage(format, args...), std::move(file), {}});
  }

  // A text whose placeholders do not match its values is a Spindle bug
  // (tests/frontend/diag_arity_test.cpp guards the tables): it surfaces as
  // an InternalError (exit status 2, "please report"), never as a crash.
  template <typename... Args>
  static std::string formatMessage(const char* format, const Args&... args) {
    try {
      return fmt::format(fmt::runtime(format), args...);
    } catch (const fmt::format_error& e) {
      throw InternalError(fmt::format("diagnostic text \"{}\": {}", format, e.what()));
    }
  }

  bool hasErrors() const { return errorCount_ > 0; }
  size_t errorCount() const { return errorCount_; }
  bool tooManyErrors() const { return errorCount_ >= kMaxErrors; }
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }
  void clear();

  // clang-style text: "file:line:col: error: message [id]", the source line,
  // and a caret with ~ under the rest of the range.
  std::string render(const Diagnostic& d) const;
  std::string renderAll() const;

 private:
  Diagnostic& add(Diagnostic d);
  std::vector<Diagnostic> diags_;
  size_t errorCount_ = 0;
};

// Thrown by a stage that cannot go on (e.g. the parser's nesting limit). The
// diagnostic is already in the engine; the catcher just stops the stage.
struct FatalDiagnostic {};

}  // namespace spindle
