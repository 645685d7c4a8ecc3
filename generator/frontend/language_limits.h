// Limits of the language that more than one stage enforces.
#pragma once

namespace spindle {

// Nesting of blocks, brackets and expressions: deeper input is reported as
// parse-too-deep (by the lexer for brackets, the parser for the rest),
// never a stack overflow.
constexpr int kMaxNestingDepth = 200;

}  // namespace spindle
