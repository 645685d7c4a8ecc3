// Comment placement: the author's `#` comments that stand on a line of
// their own inside a kernel, def or closure body, and where the printer
// writes them as `//` comments.
//
// Reads: the module's text and one function's AST (its body, not the bodies
// of closures defined in it, which are placed when the closure is printed).
// Produces: the comments to print before each statement, and those to print
// at the end of a block (after its last statement, indented as its
// statements). A comment belongs to the next statement at its indentation;
// one followed by a dedent ends the block whose statements it is aligned
// with. Comments after code on the same line, inside a multi-line
// statement, in a pruned branch or outside any body are not kept.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "frontend/ast.h"
#include "frontend/source.h"
#include "passes/prune_branches.h"

namespace spindle {

struct CommentPlacement {
  // C++ comment lines; an empty one stands for a blank line (the source had
  // one before the comment).
  std::map<const Stmt*, std::vector<std::string>> before;
  std::map<const Block*, std::vector<std::string>> atEnd;
};

// `headerLine` is the line of the `kernel`/`def` keyword and `headerColumn`
// its column: the body is what follows it, indented deeper. Comments in code
// that `pruned` removed are dropped with it; one before a removed `if` whose
// branch stays goes before that branch's first statement.
CommentPlacement placeComments(const SourceFile& file, const Block& body, uint32_t headerLine, uint32_t headerColumn,
                               const PrunedCode& pruned);

// A .spn comment's text (after the `#`) as one C++ comment line: `//` and
// the text, or a /* */ comment when the text ends with a backslash (a `//`
// comment would splice the next line into itself).
std::string cppComment(const std::string& text);

}  // namespace spindle
