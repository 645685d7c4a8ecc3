#include "emitter.h"

#include "../diagnostics.h"

namespace spindle {

void Emitter::newline() {
  out_ += '\n';
  if (mappedLine_) ++mappedLine_;
}

void Emitter::line(std::string_view text) {
  out_.append(static_cast<size_t>(indent_ * indentWidth_), ' ');
  out_ += text;
  newline();
}

void Emitter::blank() {
  out_ += '\n';
  if (mappedLine_) ++mappedLine_;
}

void Emitter::raw(std::string_view text) {
  out_ += text;
  mappedLine_ = 0;  // template text is not mapped to the .spn
}

void Emitter::openScope(std::string_view header) {
  line(std::string(header) + " {");
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
  if (!lineDirectives_ || spnLine == 0 || spnLine == mappedLine_) return;
  // Directives start in column 0 so they stand out from the code.
  out_ += fmt::format("#line {} \"{}\"\n", spnLine, path);
  mappedLine_ = spnLine;
}

}  // namespace spindle
