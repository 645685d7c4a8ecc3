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
#include <string_view>
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
    return add(make(id, std::move(file), range, args...));
  }
  // The diagnostic `report` would add, for a caller that adds notes or
  // tests for a duplicate first.
  template <typename... Args>
  static Diagnostic make(DiagId id, std::shared_ptr<const SourceFile> file, SourceRange range, const Args&... args) {
    return Diagnostic{id, diagSeverity(id), range, formatMessage(diagFormat(id), args...), std::move(file), {}};
  }
  // Attach a note ("previous definition is here") to the diagnostic reported
  // last (not necessarily the last in source order).
  template <typename... Args>
  void note(std::shared_ptr<const SourceFile> file, SourceRange range, const char* format, const Args&... args) {
    if (lastAdded_ >= diags_.size()) return;
    diags_[lastAdded_].notes.push_back(
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

  // A diagnostic made elsewhere (another engine's, with a note added).
  Diagnostic& add(Diagnostic d);
  // Whether a diagnostic with `d`'s id, location and message is already here.
  bool hasSame(const Diagnostic& d) const;

  bool hasErrors() const { return errorCount_ > 0; }
  size_t errorCount() const { return errorCount_; }
  bool tooManyErrors() const { return errorCount_ >= kMaxErrors; }
  // In source order: by file (in the order each was first reported), then
  // line, then column, whatever order the stages reported them in. A
  // diagnostic with no location stays after the ones reported before it.
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }
  // Whether an error of `file` is already reported on `line`.
  bool hasErrorOnLine(const SourceFile* file, uint32_t line) const;
  void clear();

  // clang-style text: "file:line:col: error: message [id]", the source line,
  // and a caret with ~ under the rest of the range.
  std::string render(const Diagnostic& d) const;
  std::string renderAll() const;

 private:
  std::vector<Diagnostic> diags_;
  size_t errorCount_ = 0;
  size_t lastAdded_ = SIZE_MAX;  // index of the diagnostic reported last
};

// Hints for spellings people bring from CUDA and C (docs/language.md 11.7).
// Each returns the Spindle form, or an empty view when `name` is none of them.
//   spindleTypeFor("float") == "f32", ("unsigned") == "u32", ("int64_t") == "i64"
std::string_view spindleTypeFor(std::string_view name);
//   spindleGeometryFor("threadIdx") == "thread_id" (also blockIdx, blockDim, gridDim)
std::string_view spindleGeometryFor(std::string_view name);
// What to write instead of a CUDA function or keyword, quoted, to follow
// "in Spindle, write ": spindleCallFor("__syncthreads") == "'sync()'",
// ("expf") == "'exp(x)'", ("atomicAdd") == "'atomic_add(x[i], v)'".
std::string_view spindleCallFor(std::string_view name);
// The candidate closest to `name` by edit distance (ignoring case), if it is
// close enough to be a likely misspelling; else empty.
std::string_view closestSpelling(std::string_view name, const std::vector<std::string_view>& candidates);

// Thrown by a stage that cannot go on (e.g. the parser's nesting limit). The
// diagnostic is already in the engine; the catcher just stops the stage.
struct FatalDiagnostic {};

}  // namespace spindle
