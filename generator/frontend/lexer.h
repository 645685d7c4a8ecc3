// The lexer: .spn text to tokens, including Python's NEWLINE / INDENT /
// DEDENT structure. It is pulled one token at a time by the parser, so lexical
// and syntax diagnostics come out in source order.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/diagnostics.h"
#include "frontend/source.h"

namespace spindle {

// Keywords (docs/language.md 2.4). `inf` and `nan` are not keywords: they lex as
// float literals.
#define SPINDLE_KEYWORDS(X) \
  X(Const, "const")         \
  X(Def, "def")             \
  X(Kernel, "kernel")       \
  X(Return, "return")       \
  X(If, "if")               \
  X(Elif, "elif")           \
  X(Else, "else")           \
  X(For, "for")             \
  X(In, "in")               \
  X(While, "while")         \
  X(Break, "break")         \
  X(Continue, "continue")   \
  X(Pass, "pass")           \
  X(Nonlocal, "nonlocal")   \
  X(And, "and")             \
  X(Or, "or")               \
  X(Not, "not")             \
  X(True, "True")           \
  X(False, "False")         \
  X(Is, "is")               \
  X(None, "None")           \
  X(Assert, "assert")

// Operators and delimiters. The lexer takes the longest spelling that
// matches, so the order here does not matter.
#define SPINDLE_PUNCTUATORS(X) \
  X(LParen, "(")               \
  X(RParen, ")")               \
  X(LBracket, "[")             \
  X(RBracket, "]")             \
  X(Comma, ",")                \
  X(Colon, ":")                \
  X(At, "@")                   \
  X(Arrow, "->")               \
  X(Assign, "=")               \
  X(Plus, "+")                 \
  X(Minus, "-")                \
  X(Star, "*")                 \
  X(Slash, "/")                \
  X(SlashSlash, "//")          \
  X(Percent, "%")              \
  X(StarStar, "**")            \
  X(Amp, "&")                  \
  X(Pipe, "|")                 \
  X(Caret, "^")                \
  X(Tilde, "~")                \
  X(Shl, "<<")                 \
  X(Shr, ">>")                 \
  X(Lt, "<")                   \
  X(Le, "<=")                  \
  X(Gt, ">")                   \
  X(Ge, ">=")                  \
  X(EqEq, "==")                \
  X(NotEq, "!=")               \
  X(PlusAssign, "+=")          \
  X(MinusAssign, "-=")         \
  X(StarAssign, "*=")          \
  X(SlashAssign, "/=")         \
  X(SlashSlashAssign, "//=")   \
  X(PercentAssign, "%=")       \
  X(AmpAssign, "&=")           \
  X(PipeAssign, "|=")          \
  X(CaretAssign, "^=")         \
  X(ShlAssign, "<<=")          \
  X(ShrAssign, ">>=")

enum class Tok : uint8_t {
  Eof,
  Newline,
  Indent,
  Dedent,
  Name,
  Int,
  Float,
  String,  // "..." or '...': only an assert's message (docs/language.md 5.12)
#define X(K, S) Kw##K,
  SPINDLE_KEYWORDS(X)
#undef X
#define X(K, S) K,
      SPINDLE_PUNCTUATORS(X)
#undef X
};

struct Token {
  Tok kind = Tok::Eof;
  SourceRange range;      // NEWLINE/INDENT/DEDENT/EOF are empty ranges
  std::string_view text;  // spelling in the source; empty for the layout tokens
  uint64_t intValue = 0;  // Int
  double floatValue = 0;  // Float (also `inf` and `nan`)

  bool is(Tok k) const { return kind == k; }
};

// How a token kind reads in a message: "'def'", "'+'", "end of line".
std::string_view tokSpelling(Tok kind);
// How a particular token reads in "found X": "name 'x'", "'+'", "end of file".
std::string describeToken(const Token& token);

class Lexer {
 public:
  Lexer(std::shared_ptr<const SourceFile> file, DiagnosticEngine& diags);

  // The next token. After the end it keeps returning EOF. May throw
  // FatalDiagnostic (brackets nested too deep, or too many errors).
  Token next();

  // Offset of the first bracket that is never closed, once the lexer has
  // reached it and reported it. Everything after it is swallowed by that
  // bracket, so syntax errors there are only echoes of the one real error.
  std::optional<uint32_t> cutoff() const { return cutoff_; }

 private:
  struct OpenBracket {
    char ch;
    SourceRange range;
  };

  void lexMore();
  void startLine();
  void applyIndent(uint32_t width, SourceLoc at);
  void finish();
  void lexName();
  bool lexCudaGeometry(uint32_t begin, std::string_view word);
  void lexNumber();
  void noteNumberSuffix(Token& tok, std::string_view body, std::string_view suffix, bool isFloatLit);
  bool lexForeignOperator();
  void lexPunctuator();
  void lexBadChars();
  void lexString();
  void skipComment();
  bool invalidUtf8At(uint32_t offset) const;
  void reportInvalidUtf8(uint32_t offset);
  void openBracket(const Token& token);
  bool closeBracket(const Token& token);
  void emit(Tok kind, uint32_t begin, uint32_t end);
  void emitLayout(Tok kind, SourceLoc at);

  SourceLoc loc(uint32_t offset) const;
  char peekChar(size_t ahead = 0) const;
  template <typename... Args>
  void report(DiagId id, SourceRange range, const Args&... args);
  template <typename... Args>
  void note(SourceRange range, const char* format, const Args&... args);

  std::shared_ptr<const SourceFile> file_;
  DiagnosticEngine& diags_;
  std::string_view text_;
  uint32_t pos_ = 0;
  uint32_t line_ = 1;
  uint32_t lineStart_ = 0;
  bool atLineStart_ = true;
  bool lineHasTokens_ = false;
  bool reportedTab_ = false;
  bool reportedInvalidUtf8_ = false;
  bool done_ = false;
  SourceLoc lastEnd_;  // end of the last real token: where NEWLINE and EOF sit
  std::vector<uint32_t> indents_{0};
  std::vector<OpenBracket> brackets_;
  std::optional<uint32_t> neverClosed_;  // found by a pre-scan
  std::vector<uint32_t> invalidUtf8_;    // where each invalid UTF-8 sequence starts, in order
  std::optional<uint32_t> cutoff_;
  std::deque<Token> pending_;
};

// Lexes a whole file (for tests and tools): every token up to and including
// EOF. Stops early, with EOF, after a FatalDiagnostic.
std::vector<Token> tokenize(std::shared_ptr<const SourceFile> file, DiagnosticEngine& diags);

// After a report: once the engine holds too many errors, adds a note saying
// so and throws FatalDiagnostic (the rest would mostly be cascades).
void stopIfTooManyErrors(DiagnosticEngine& diags, const std::shared_ptr<const SourceFile>& file);

// Offset of the first byte that is not valid UTF-8, if any.
std::optional<uint32_t> findInvalidUtf8(std::string_view text);

}  // namespace spindle
