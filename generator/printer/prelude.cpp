#include "prelude.h"

#include <cctype>
#include <set>
#include <string_view>

#include "frontend/diagnostics.h"
#include "templates.h"

namespace spindle {

namespace {
bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Lines starting with this are for the template's reader only.
constexpr std::string_view kTemplateComment = "//@";
constexpr std::string_view kSectionMarker = "//@section ";
}  // namespace

std::vector<std::string> preludeNamesIn(const std::string& text) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (size_t i = 0; i + 2 < text.size(); ++i) {
    if (text[i] != '_' || text[i + 1] != '_' || (i > 0 && isIdentChar(text[i - 1]))) continue;
    size_t end = i + 2;
    while (end < text.size() && isIdentChar(text[end])) ++end;
    std::string name = text.substr(i, end - i);
    if (name.size() > 2 && seen.insert(name).second) names.push_back(name);
    i = end;
  }
  return names;
}

const PreludeTemplate& preludeTemplate() {
  static const PreludeTemplate parsed = [] {
    PreludeTemplate t;
    std::string_view text = templateText("prelude");
    std::string* into = &t.always;
    for (size_t at = 0; at < text.size();) {
      size_t eol = text.find('\n', at);
      std::string_view line = text.substr(at, eol == std::string_view::npos ? std::string_view::npos : eol - at);
      at = eol == std::string_view::npos ? text.size() : eol + 1;
      if (line.substr(0, kSectionMarker.size()) == kSectionMarker) {
        t.parts.push_back({std::string(line.substr(kSectionMarker.size())), "", {}});
        into = &t.parts.back().text;
      } else if (line.substr(0, kTemplateComment.size()) != kTemplateComment) {
        *into += std::string(line) + "\n";
      }
    }
    for (auto& part : t.parts) part.names = preludeNamesIn(part.text);
    return t;
  }();
  return parsed;
}

std::string preludeFor(const std::string& rest) {
  const PreludeTemplate& t = preludeTemplate();
  std::vector<std::string> restNames = preludeNamesIn(rest);
  std::set<std::string> needed(restNames.begin(), restNames.end());
  // A part names only parts before it: walking back, every part that is
  // needed is known before its own dependencies are reached.
  std::vector<bool> take(t.parts.size(), false);
  for (size_t i = t.parts.size(); i-- > 0;) {
    if (!needed.count(t.parts[i].name)) continue;
    take[i] = true;
    needed.insert(t.parts[i].names.begin(), t.parts[i].names.end());
  }
  std::string out = t.always;
  for (size_t i = 0; i < t.parts.size(); ++i)
    if (take[i]) out += t.parts[i].text;
  // A blank line between the last part and the end marker, exactly one.
  while (out.size() >= 2 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n') out.pop_back();
  return out + "// ==== Spindle prelude end ====\n";
}

}  // namespace spindle
