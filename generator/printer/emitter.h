// The printer's output buffer: it owns indentation (an indent stack, as in
// Halide's CodeGen_C: openScope/closeScope bracket every block) and the
// #line bookkeeping, so code that prints statements never counts spaces.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

namespace spindle {

class Emitter {
 public:
  explicit Emitter(int indentWidth = 2) : indentWidth_(indentWidth) {}

  // One line at the current indentation.
  void line(std::string_view text);
  template <typename... Args>
  void linef(fmt::format_string<Args...> format, Args&&... args) {
    line(fmt::format(format, std::forward<Args>(args)...));
  }
  void blank();
  // Text emitted as is (templates); it must end with a newline.
  void raw(std::string_view text);

  // "header {" then indent; closeScope dedents and prints "}" + trailer.
  void openScope(std::string_view header);
  void closeScope(std::string_view trailer = "");
  // "} header {" : closes one block and opens the next (else, else if).
  void continueScope(std::string_view header);

  // Makes the next line report `spnLine` of `path` to compilers and
  // debuggers; emits a #line directive only when the mapping would
  // otherwise be wrong. `path` is written as is (a placeholder the caller
  // replaces: kernel_source.cpp).
  void mapToSource(uint32_t spnLine, std::string_view path);
  void setLineDirectives(bool on) { lineDirectives_ = on; }

  const std::string& text() const { return out_; }
  // Every mapToSource() while directives are on: the 1-based line of this
  // emitter's text that was meant to report `spnLine` (for the test that
  // replays the #line directives).
  struct Mapping {
    uint32_t outputLine;
    uint32_t spnLine;
  };
  const std::vector<Mapping>& mappings() const { return mappings_; }

 private:
  void newline();
  std::string out_;
  int indent_ = 0;
  int indentWidth_;
  bool lineDirectives_ = false;
  // Source line the next emitted line maps to, or 0 when unmapped.
  uint32_t mappedLine_ = 0;
  uint32_t lines_ = 0;  // newlines in out_
  std::vector<Mapping> mappings_;
};

}  // namespace spindle
