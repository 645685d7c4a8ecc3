#include "comment_placement.h"

#include <functional>

#include "frontend/ast_walk.h"

namespace spindle {

namespace {

struct LineComment {
  uint32_t line;
  uint32_t column;   // 1-based, of the '#'
  std::string text;  // after the '#'
};

// The indentation (1-based column of the first non-blank byte) of `line`,
// and whether the line has code (not blank, not only a comment).
struct LineShape {
  uint32_t column = 0;
  bool code = false;
  bool comment = false;
};

LineShape shapeOf(std::string_view line) {
  size_t at = line.find_first_not_of(" \t\r");
  if (at == std::string_view::npos) return {};
  return {static_cast<uint32_t>(at + 1), line[at] != '#', line[at] == '#'};
}

// Every statement of `body` and of the blocks nested in it (not into the
// bodies of nested defs), with the block that holds it.
void collectStatements(const Block& body, std::vector<std::pair<const Stmt*, const Block*>>& out) {
  for (const auto& s : body) {
    out.push_back({s.get(), &body});
    forEachChild(
        *s, [](const Expr&) {}, [&](const Block& b) { collectStatements(b, out); });
  }
}

// Statements whose blocks belong to this function (a nested def's body is
// another function, placed when it is printed).
bool holdsBlocks(const Stmt& s) {
  return s.kind == StmtKind::If || s.kind == StmtKind::While || s.kind == StmtKind::For;
}

}  // namespace

std::string cppComment(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t' || t.back() == '\r')) t.pop_back();
  if (t.empty() || t.back() != '\\') return "//" + t;
  for (size_t at = t.find("*/"); at != std::string::npos; at = t.find("*/", at)) t.insert(at + 1, " ");
  return "/*" + t + " */";
}

CommentPlacement placeComments(const SourceFile& file, const Block& body, uint32_t headerLine, uint32_t headerColumn,
                               const PrunedCode& pruned) {
  CommentPlacement placement;
  std::vector<std::pair<const Stmt*, const Block*>> stmts;
  collectStatements(body, stmts);
  if (stmts.empty()) return placement;

  // Lines the function owns: after its header, up to the first code line
  // indented no deeper than the header (the next top-level declaration).
  uint32_t end = headerLine + 1;
  for (; end <= file.lineCount(); ++end) {
    LineShape shape = shapeOf(file.lineText(end));
    if (shape.code && shape.column <= headerColumn) break;
  }
  // Lines that belong to something else: multi-line simple statements and
  // nested defs (whose comments their own printing places).
  std::vector<std::pair<uint32_t, uint32_t>> excluded;
  std::map<uint32_t, const Stmt*> startingAt;
  for (const auto& [s, block] : stmts) {
    startingAt.emplace(s->range.begin.line, s);
    if (!holdsBlocks(*s)) excluded.push_back({s->range.begin.line, s->range.end.line});
  }
  for (const auto& [line, first] : pruned.headerTakenBy) startingAt.emplace(line, first);

  for (uint32_t line = headerLine + 1; line < end; ++line) {
    std::string_view text = file.lineText(line);
    LineShape shape = shapeOf(text);
    if (!shape.comment || pruned.removesLine(line)) continue;
    bool inside = false;
    for (const auto& [from, to] : excluded) inside |= line > from && line <= to;
    if (inside) continue;
    std::string comment = cppComment(std::string(text.substr(shape.column)));
    // A blank line before a comment in the source (a new paragraph of code)
    // stays in the output: an empty entry.
    bool paragraph =
        line > headerLine + 1 && !shapeOf(file.lineText(line - 1)).code && !shapeOf(file.lineText(line - 1)).comment;

    // The next code line: a statement there at this comment's indentation
    // (or deeper) takes the comment before it.
    uint32_t next = line + 1;
    while (next < end && !shapeOf(file.lineText(next)).code) ++next;
    LineShape nextShape = next < end ? shapeOf(file.lineText(next)) : LineShape{};
    auto at = startingAt.find(next);
    if (at == startingAt.end() && pruned.removesLine(next)) continue;  // it went with the code it describes
    if (next < end && nextShape.column >= shape.column && at != startingAt.end()) {
      auto& lines = placement.before[at->second];
      if (paragraph && at->second != body.front().get()) lines.push_back("");
      lines.push_back(comment);
      continue;
    }
    // Followed by a dedent (or an else:): it ends the block of the nearest
    // statement before it at its indentation.
    const Block* owner = nullptr;
    for (const auto& [s, block] : stmts)
      if (s->range.begin.line < line && s->range.begin.col == shape.column) owner = block;
    if (owner) {
      if (paragraph) placement.atEnd[owner].push_back("");
      placement.atEnd[owner].push_back(comment);
    }
  }
  return placement;
}

}  // namespace spindle
