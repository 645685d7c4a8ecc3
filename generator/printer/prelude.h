// The prelude of a generated file, cut to what the file uses: the part of
// templates/prelude.in before its first `//@section` goes into every file;
// each `//@section NAME` part goes in only when the rest of the file, or a
// part that goes in, names NAME.
#pragma once

#include <string>
#include <vector>

namespace spindle {

struct PreludePart {
  std::string name;  // the helper or macro it defines
  std::string text;
  std::vector<std::string> names;  // the names its text uses (preludeNamesIn)
};

// The prelude template, parsed once: the text every file gets, and the
// parts in template order.
struct PreludeTemplate {
  std::string always;
  std::vector<PreludePart> parts;
};
const PreludeTemplate& preludeTemplate();

// The prelude for a file whose other text is `rest`: the always-present
// text, then the parts `rest` needs (directly or through other parts), in
// template order, then the end marker.
std::string preludeFor(const std::string& rest);

// Every identifier in `text` that starts with "__" (the names parts are
// called by: __spn_*, __SPN_*, __half), in order of first appearance.
std::vector<std::string> preludeNamesIn(const std::string& text);

}  // namespace spindle
