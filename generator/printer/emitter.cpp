#include "emitter.h"

#include <algorithm>

#include "frontend/diagnostics.h"

namespace spindle {

void Emitter::newline() {
  out_ += '\n';
  ++lines_;
  if (mappedLine_) ++mappedLine_;
}

void Emitter::line(std::string_view text) {
  out_.append(static_cast<size_t>(indent_ * indentWidth_), ' ');
  out_ += text;
  // A line may carry several (a signature with one parameter per line):
  // each advances the line compilers will report.
  auto breaks = static_cast<uint32_t>(std::count(text.begin(), text.end(), '\n'));
  lines_ += breaks;
  if (mappedLine_) mappedLine_ += breaks;
  newline();
}

void Emitter::blank() { newline(); }

void Emitter::raw(std::string_view text) {
  out_ += text;
  lines_ += static_cast<uint32_t>(std::count(text.begin(), text.end(), '\n'));
  mappedLine_ = 0;  // template text is not mapped to the .spn
}

void Emitter::openScope(std::string_view header) {
  line(header.empty() ? std::string("{") : std::string(header) + " {");
  ++indent_;
}

void Emitter::closeScope(std::string_view trailer) {
  SPINDLE_INTERNAL_CHECK(indent_ > 0, "closeScope without openScope");
  --indent_;
  line(std::string("}") + std::string(trailer));
}

void Emitter::continueScope(std::string_view header) {
  SPINDLE_INTERNAL_CHECK(indent_ > 0, "continueScope without openScope");
  --indent_;
  line("} " + std::string(header) + " {");
  ++indent_;
}

void Emitter::mapToSource(uint32_t spnLine, std::string_view path) {
  if (!lineDirectives_ || spnLine == 0) return;
  if (spnLine != mappedLine_) {
    // Directives start in column 0 so they stand out from the code.
    out_ += fmt::format("#line {} \"{}\"\n", spnLine, path);
    ++lines_;
    mappedLine_ = spnLine;
  }
  mappings_.push_back({lines_ + 1, spnLine});
}

}  // namespace spindle
