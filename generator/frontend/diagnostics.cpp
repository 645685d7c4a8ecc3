#include "frontend/diagnostics.h"

namespace spindle {

namespace {
struct DiagInfo {
  const char* name;
  Severity severity;
  const char* format;
};

// Ids are written in the tables as lex_tab_indent; users see lex-tab-indent.
constexpr DiagInfo kDiagTable[] = {
#define DIAG(ID, SEVERITY, FORMAT) {#ID, Severity::SEVERITY, FORMAT},
#include "diag_frontend.def"
#include "diag_sema.def"
#undef DIAG
};

std::string displayName(const char* id) {
  std::string name(id);
  for (char& c : name)
    if (c == '_') c = '-';
  return name;
}

const char* severityText(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "error";
}

// Column in display cells: tabs advance to the next multiple of 8 and UTF-8
// continuation bytes take no cell, so the caret lands under the right glyph.
size_t displayColumn(std::string_view line, size_t byteCol) {
  size_t col = 0;
  for (size_t i = 0; i < byteCol && i < line.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    if (c == '\t') col = (col / 8 + 1) * 8;
    else if ((c & 0xC0) != 0x80) ++col;
  }
  return col;
}
}  // namespace

const char* diagName(DiagId id) {
  static std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& info : kDiagTable) v.push_back(displayName(info.name));
    return v;
  }();
  return names[static_cast<size_t>(id)].c_str();
}
Severity diagSeverity(DiagId id) { return kDiagTable[static_cast<size_t>(id)].severity; }
const char* diagFormat(DiagId id) { return kDiagTable[static_cast<size_t>(id)].format; }

Diagnostic& DiagnosticEngine::add(Diagnostic d) {
  if (d.severity == Severity::Error) ++errorCount_;
  diags_.push_back(std::move(d));
  return diags_.back();
}

void DiagnosticEngine::clear() {
  diags_.clear();
  errorCount_ = 0;
}

std::string DiagnosticEngine::render(const Diagnostic& d) const {
  std::string out;
  const std::string path = d.file ? d.file->path() : std::string("<input>");
  std::string idSuffix = d.id == DiagId::Count ? "" : fmt::format(" [{}]", diagName(d.id));
  if (d.range.begin.valid()) {
    out += fmt::format("{}:{}:{}: {}: {}{}\n", path, d.range.begin.line, d.range.begin.col, severityText(d.severity),
                       d.message, idSuffix);
    if (d.file) {
      std::string_view line = d.file->lineText(d.range.begin.line);
      out += fmt::format("{}\n", line);
      size_t start = displayColumn(line, d.range.begin.col - 1);
      size_t stop = start + 1;
      if (d.range.end.line == d.range.begin.line && d.range.end.col > d.range.begin.col)
        stop = std::max(stop, displayColumn(line, d.range.end.col - 1));
      out += std::string(start, ' ') + "^" + std::string(stop - start - 1, '~') + "\n";
    }
  } else {
    out += fmt::format("{}: {}: {}{}\n", path, severityText(d.severity), d.message, idSuffix);
  }
  for (const auto& n : d.notes) out += render(n);
  return out;
}

std::string DiagnosticEngine::renderAll() const {
  std::string out;
  for (const auto& d : diags_) out += render(d);
  return out;
}

}  // namespace spindle
