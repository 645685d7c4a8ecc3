#include "frontend/lexer.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "frontend/language_limits.h"

namespace spindle {

namespace {

struct Spelling {
  std::string_view text;
  Tok kind;
};

constexpr Spelling kKeywords[] = {
#define X(K, S) {S, Tok::Kw##K},
    SPINDLE_KEYWORDS(X)
#undef X
};

constexpr Spelling kPunctuators[] = {
#define X(K, S) {S, Tok::K},
    SPINDLE_PUNCTUATORS(X)
#undef X
};

bool isIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }
bool isHexDigit(char c) { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
// Whitespace between tokens. A tab is fine here; only indentation must be spaces.
bool isBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f'; }

int hexValue(char c) {
  if (isDigit(c)) return c - '0';
  return (c | 0x20) - 'a' + 10;
}

// Byte length of the UTF-8 sequence that starts with `lead` (the text was
// validated up front, so the lead byte is a real one).
uint32_t utf8Length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  return 4;
}

uint32_t decodeUtf8(std::string_view s) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  uint32_t len = utf8Length(byte(0));
  if (len == 1) return byte(0);
  uint32_t cp = byte(0) & (0x7F >> len);
  for (uint32_t i = 1; i < len && i < s.size(); ++i) cp = (cp << 6) | (byte(i) & 0x3F);
  return cp;
}

// The longest operator spelling at the start of `rest`, if any.
const Spelling* matchPunctuator(std::string_view rest) {
  const Spelling* best = nullptr;
  for (const auto& p : kPunctuators) {
    if (rest.substr(0, p.text.size()) == p.text && (!best || p.text.size() > best->text.size())) best = &p;
  }
  return best;
}

Tok keywordOrName(std::string_view word) {
  for (const auto& k : kKeywords)
    if (k.text == word) return k.kind;
  return Tok::Name;
}

bool closes(char open, char close) { return (open == '(' && close == ')') || (open == '[' && close == ']'); }

// Brackets are matched before lexing so that the lexer knows, when it meets
// the first bracket that is never closed, that everything after it is
// swallowed. Mirrors the lexer: comments hold no brackets, and a closer that
// matches nothing is dropped. (Spindle has no strings, so this is exact.)
std::optional<uint32_t> findNeverClosedBracket(std::string_view text, uint32_t from) {
  std::vector<std::pair<char, uint32_t>> open;
  for (uint32_t i = from; i < text.size(); ++i) {
    char c = text[i];
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '(' || c == '[') {
      open.push_back({c, i});
    } else if ((c == ')' || c == ']') && !open.empty() && closes(open.back().first, c)) {
      open.pop_back();
    }
  }
  if (open.empty()) return std::nullopt;
  return open.front().second;
}

// "'$'", "U+0007", or "'é' (U+00E9); ..." for a non-ASCII character.
std::string describeChar(std::string_view at) {
  uint32_t cp = decodeUtf8(at);
  if (cp >= 0x21 && cp < 0x7F) return fmt::format("'{}'", static_cast<char>(cp));
  if (cp < 0x80) return fmt::format("U+{:04X}", cp);
  return fmt::format("'{}' (U+{:04X}); non-ASCII text is allowed only in comments",
                     at.substr(0, utf8Length(static_cast<unsigned char>(at[0]))), cp);
}

}  // namespace

std::string_view tokSpelling(Tok kind) {
  switch (kind) {
    case Tok::Eof: return "end of file";
    case Tok::Newline: return "end of line";
    case Tok::Indent: return "indent";
    case Tok::Dedent: return "unindent";
    case Tok::Name: return "name";
    case Tok::Int: return "integer literal";
    case Tok::Float: return "float literal";
    case Tok::String: return "string literal";
#define X(K, S) \
  case Tok::Kw##K: return "'" S "'";
      SPINDLE_KEYWORDS(X)
#undef X
#define X(K, S) \
  case Tok::K: return "'" S "'";
      SPINDLE_PUNCTUATORS(X)
#undef X
  }
  return "token";
}

std::string describeToken(const Token& token) {
  switch (token.kind) {
    case Tok::Name:
    case Tok::Int:
    case Tok::Float: return fmt::format("{} '{}'", tokSpelling(token.kind), token.text);
    default: return std::string(tokSpelling(token.kind));
  }
}

std::optional<uint32_t> findInvalidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    uint32_t len, min;
    if ((c & 0xE0) == 0xC0) len = 2, min = 0x80;
    else if ((c & 0xF0) == 0xE0) len = 3, min = 0x800;
    else if ((c & 0xF8) == 0xF0) len = 4, min = 0x10000;
    else return static_cast<uint32_t>(i);
    if (i + len > s.size()) return static_cast<uint32_t>(i);
    for (uint32_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return static_cast<uint32_t>(i);
    uint32_t cp = decodeUtf8(s.substr(i, len));
    // Overlong forms, UTF-16 surrogates and values past Unicode are invalid.
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return static_cast<uint32_t>(i);
    i += len;
  }
  return std::nullopt;
}

void stopIfTooManyErrors(DiagnosticEngine& diags, const std::shared_ptr<const SourceFile>& file) {
  if (!diags.tooManyErrors()) return;
  diags.report(DiagId::parse_too_many_errors, file, SourceRange{}, DiagnosticEngine::kMaxErrors);
  throw FatalDiagnostic{};
}

// ---------------------------------------------------------------------------

template <typename... Args>
void Lexer::report(DiagId id, SourceRange range, const Args&... args) {
  diags_.report(id, file_, range, args...);
  stopIfTooManyErrors(diags_, file_);
}

template <typename... Args>
void Lexer::note(SourceRange range, const char* format, const Args&... args) {
  diags_.note(file_, range, format, args...);
}

Lexer::Lexer(std::shared_ptr<const SourceFile> file, DiagnosticEngine& diags)
    : file_(std::move(file)), diags_(diags), text_(file_->text()) {
  if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;  // a UTF-8 byte order mark
  lastEnd_ = loc(pos_);
  // Every byte that is not part of a valid UTF-8 sequence. The lexer reports
  // them where it meets them and goes on, so a stray byte hides nothing else.
  for (uint32_t from = 0; from < text_.size();) {
    auto bad = findInvalidUtf8(text_.substr(from));
    if (!bad) break;
    invalidUtf8_.push_back(from + *bad);
    from += *bad + 1;
  }
  neverClosed_ = findNeverClosedBracket(text_, pos_);
}

bool Lexer::invalidUtf8At(uint32_t offset) const {
  return std::binary_search(invalidUtf8_.begin(), invalidUtf8_.end(), offset);
}

void Lexer::reportInvalidUtf8(uint32_t offset) {
  reportedInvalidUtf8_ = true;
  report(DiagId::lex_invalid_utf8, SourceRange{loc(offset), loc(offset + 1)},
         fmt::format("0x{:02X}", static_cast<unsigned>(static_cast<unsigned char>(text_[offset]))));
}

// A comment runs to the end of the line. Bad bytes in comments are reported
// once per file: a file saved in Latin-1 has them on every commented line.
void Lexer::skipComment() {
  uint32_t begin = pos_;
  while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
  if (reportedInvalidUtf8_) return;
  auto bad = std::lower_bound(invalidUtf8_.begin(), invalidUtf8_.end(), begin);
  if (bad != invalidUtf8_.end() && *bad < pos_) reportInvalidUtf8(*bad);
}

SourceLoc Lexer::loc(uint32_t offset) const {
  if (offset < lineStart_) return file_->locFor(offset);
  return SourceLoc{offset, line_, offset - lineStart_ + 1};
}

char Lexer::peekChar(size_t ahead) const {
  size_t at = pos_ + ahead;
  return at < text_.size() ? text_[at] : '\0';
}

Token Lexer::next() {
  while (pending_.empty()) lexMore();
  Token t = pending_.front();
  pending_.pop_front();
  return t;
}

void Lexer::emit(Tok kind, uint32_t begin, uint32_t end) {
  Token t;
  t.kind = kind;
  t.range = SourceRange{loc(begin), loc(end)};
  t.text = text_.substr(begin, end - begin);
  lastEnd_ = t.range.end;
  lineHasTokens_ = true;
  pending_.push_back(t);
}

void Lexer::emitLayout(Tok kind, SourceLoc at) {
  Token t;
  t.kind = kind;
  t.range = SourceRange::at(at);
  pending_.push_back(t);
}

// Produces at least one token into pending_, or consumes text that makes none
// (a newline inside brackets, a run of bad characters).
void Lexer::lexMore() {
  if (done_) {
    emitLayout(Tok::Eof, lastEnd_);
    return;
  }
  if (atLineStart_) {
    atLineStart_ = false;
    startLine();
    if (!pending_.empty()) return;
  }
  while (pos_ < text_.size() && isBlank(text_[pos_])) ++pos_;
  if (peekChar() == '#') skipComment();
  if (pos_ >= text_.size()) {
    finish();
    return;
  }
  char c = text_[pos_];
  if (c == '\n') {
    ++pos_;
    ++line_;
    lineStart_ = pos_;
    if (brackets_.empty()) {  // inside brackets a newline is just space
      if (lineHasTokens_) emitLayout(Tok::Newline, lastEnd_);
      lineHasTokens_ = false;
      atLineStart_ = true;
    }
    return;
  }
  if (invalidUtf8At(pos_)) {
    // One report for a run of bad bytes, then on with the line.
    uint32_t begin = pos_;
    while (pos_ < text_.size() && invalidUtf8At(pos_)) ++pos_;
    reportInvalidUtf8(begin);
  } else if (isIdentStart(c)) {
    lexName();
  } else if (isDigit(c) || (c == '.' && isDigit(peekChar(1)))) {
    lexNumber();
  } else if (c == '"' || c == '\'') {
    lexString();
  } else if (!lexForeignOperator()) {
    if (matchPunctuator(text_.substr(pos_))) lexPunctuator();
    else lexBadChars();
  }
}

// At the start of a line outside brackets: skips blank and comment-only lines,
// then compares the indentation of the next real line with the stack.
void Lexer::startLine() {
  for (;;) {
    uint32_t width = 0;
    std::optional<uint32_t> tabAt;
    while (pos_ < text_.size() && isBlank(text_[pos_])) {
      char c = text_[pos_];
      if (c == ' ') ++width;
      if (c == '\t') {
        if (!tabAt) tabAt = pos_;
        width = (width / 8 + 1) * 8;  // only to guess the intended structure
      }
      ++pos_;
    }
    if (peekChar() == '#') skipComment();
    if (pos_ >= text_.size()) return;  // finish() closes the open blocks
    if (text_[pos_] == '\n') {
      ++pos_;
      ++line_;
      lineStart_ = pos_;
      continue;
    }
    // One report per file: a file indented with tabs has them on every line.
    if (tabAt && !reportedTab_) {
      reportedTab_ = true;
      report(DiagId::lex_tab_indent, SourceRange{loc(*tabAt), loc(*tabAt + 1)});
    }
    applyIndent(width, loc(pos_));
    return;
  }
}

void Lexer::applyIndent(uint32_t width, SourceLoc at) {
  if (width > indents_.back()) {
    indents_.push_back(width);
    emitLayout(Tok::Indent, at);
    return;
  }
  while (width < indents_.back()) {
    indents_.pop_back();
    emitLayout(Tok::Dedent, at);
  }
  // A dedent between two known levels: treat the line as belonging to the
  // enclosing level, which is what a one-line slip usually meant.
  if (width != indents_.back()) report(DiagId::lex_inconsistent_dedent, SourceRange::at(at));
}

void Lexer::finish() {
  brackets_.clear();  // a bracket left open was reported when it was lexed
  if (lineHasTokens_) emitLayout(Tok::Newline, lastEnd_);
  lineHasTokens_ = false;
  while (indents_.size() > 1) {
    indents_.pop_back();
    emitLayout(Tok::Dedent, lastEnd_);
  }
  emitLayout(Tok::Eof, lastEnd_);
  done_ = true;
}

void Lexer::lexName() {
  uint32_t begin = pos_;
  while (pos_ < text_.size() && isIdentChar(text_[pos_])) ++pos_;
  std::string_view word = text_.substr(begin, pos_ - begin);
  if (word == "inf" || word == "nan") {
    emit(Tok::Float, begin, pos_);
    pending_.back().floatValue = word == "inf" ? HUGE_VAL : std::nan("");
    return;
  }
  if (lexCudaGeometry(begin, word)) return;
  emit(keywordOrName(word), begin, pos_);
  if (word.substr(0, 2) == "__") {
    SourceRange range = pending_.back().range;
    report(DiagId::lex_reserved_name, range, word);
    if (std::string_view instead = spindleCallFor(word); !instead.empty())
      note(range, "'{}' is CUDA; in Spindle, write {}", word, instead);
  }
}

// CUDA's `threadIdx.x` (blockIdx, blockDim, gridDim; .x, .y, .z): one
// error that names the builtin, and one name token so the line still parses.
bool Lexer::lexCudaGeometry(uint32_t begin, std::string_view word) {
  std::string_view builtin = spindleGeometryFor(word);
  char axis = peekChar(1);
  if (builtin.empty() || peekChar() != '.' || axis < 'x' || axis > 'z' || isIdentChar(peekChar(2))) return false;
  pos_ += 2;
  emit(Tok::Name, begin, pos_);
  pending_.back().text = word;
  std::string instead = axis == 'x' ? fmt::format("{}()", builtin) : fmt::format("{}({})", builtin, axis - 'x');
  report(DiagId::lex_cuda_geometry, pending_.back().range, text_.substr(begin, pos_ - begin), instead);
  return true;
}

// int   = digit { digit } | "0" ("x"|"X") hexdigit { hexdigit }
// float = digits "." [ digits ] [ exp ] | "." digits [ exp ] | digits exp
// exp   = ("e"|"E") [ "+"|"-" ] digits
void Lexer::lexNumber() {
  uint32_t begin = pos_;
  bool isFloatLit = false, bad = false, overflow = false;
  uint64_t value = 0;
  auto accumulate = [&](uint64_t base, int digit) {
    if (value > (UINT64_MAX - static_cast<uint64_t>(digit)) / base) overflow = true;
    value = value * base + static_cast<uint64_t>(digit);
  };
  if (peekChar() == '0' && (peekChar(1) == 'x' || peekChar(1) == 'X')) {
    pos_ += 2;
    uint32_t digits = pos_;
    for (; pos_ < text_.size() && isHexDigit(text_[pos_]); ++pos_) accumulate(16, hexValue(text_[pos_]));
    bad = pos_ == digits;
  } else {
    for (; pos_ < text_.size() && isDigit(text_[pos_]); ++pos_) accumulate(10, text_[pos_] - '0');
    if (peekChar() == '.') {
      isFloatLit = true;
      for (++pos_; pos_ < text_.size() && isDigit(text_[pos_]);) ++pos_;
    }
    if (peekChar() == 'e' || peekChar() == 'E') {
      isFloatLit = true;
      ++pos_;
      if (peekChar() == '+' || peekChar() == '-') ++pos_;
      uint32_t digits = pos_;
      while (pos_ < text_.size() && isDigit(text_[pos_])) ++pos_;
      bad = pos_ == digits;
    }
    // `007` is octal in C and an error in Python: reject it rather than guess.
    if (!isFloatLit && text_[begin] == '0' && pos_ - begin > 1) bad = true;
  }
  // A letter or digit glued to a number makes one malformed word: `2x`, `0x1g`.
  bool badBody = bad;
  uint32_t bodyEnd = pos_;
  if (pos_ < text_.size() && isIdentChar(text_[pos_])) {
    bad = true;
    while (pos_ < text_.size() && isIdentChar(text_[pos_])) ++pos_;
  }
  emit(isFloatLit ? Tok::Float : Tok::Int, begin, pos_);
  Token& tok = pending_.back();
  if (bad) {
    report(DiagId::lex_bad_number, tok.range, tok.text);
    if (!badBody) {
      if (!overflow) tok.intValue = value;
      noteNumberSuffix(tok, text_.substr(begin, bodyEnd - begin), text_.substr(bodyEnd, pos_ - bodyEnd), isFloatLit);
    }
  } else if (isFloatLit) {
    tok.floatValue = std::strtod(std::string(tok.text).c_str(), nullptr);
    if (!std::isfinite(tok.floatValue)) report(DiagId::lex_float_out_of_range, tok.range, tok.text);
  } else if (overflow) {
    report(DiagId::lex_int_overflow, tok.range, tok.text);
  } else {
    tok.intValue = value;
  }
}

// C's literal suffixes (`1.0f`, `10u`, `1ll`): the note says what to write,
// and the token keeps the literal's value so the rest of the line parses.
void Lexer::noteNumberSuffix(Token& tok, std::string_view body, std::string_view suffix, bool isFloatLit) {
  std::string lower(suffix);
  for (char& c : lower) c = static_cast<char>(c | 0x20);
  if (lower == "f" && (isFloatLit || body.substr(0, 2) != "0x")) {
    std::string instead = isFloatLit ? std::string(body) : std::string(body) + ".0";
    tok.kind = Tok::Float;
    tok.floatValue = std::strtod(instead.c_str(), nullptr);
    note(tok.range, "a literal takes no C suffix: write '{}' (a float literal is f32 unless its context makes it f64)",
         instead);
    return;
  }
  if (isFloatLit || lower.find_first_not_of("ul") != std::string::npos ||
      std::count(lower.begin(), lower.end(), 'u') > 1)
    return;
  bool isUnsigned = lower.find('u') != std::string::npos;
  bool isLong = lower.find('l') != std::string::npos;
  const char* type = isUnsigned ? (isLong ? "u64" : "u32") : "i64";
  note(tok.range, "a literal takes no C suffix: write '{}({})', or just '{}' where the context gives the type", type,
       body, body);
}

// C's `&&`, `||` and `!` (not `!=`), and `++`/`--` ending a statement: an
// error that names the Spindle operator, and that operator's token, so the
// line parses as what was meant.
bool Lexer::lexForeignOperator() {
  std::string_view rest = text_.substr(pos_);
  std::string_view two = rest.substr(0, 2);
  uint32_t begin = pos_;
  if (two == "&&" || two == "||" || (rest[0] == '!' && two != "!=")) {
    Tok kind = two == "&&" ? Tok::KwAnd : two == "||" ? Tok::KwOr : Tok::KwNot;
    pos_ += kind == Tok::KwNot ? 1 : 2;
    emit(kind, begin, pos_);
    report(DiagId::lex_c_operator, pending_.back().range, pending_.back().text,
           kind == Tok::KwAnd  ? "and"
           : kind == Tok::KwOr ? "or"
                               : "not");
    return true;
  }
  if (two != "++" && two != "--") return false;
  uint32_t after = pos_ + 2;
  while (after < text_.size() && isBlank(text_[after])) ++after;
  if (after < text_.size() && text_[after] != '\n' && text_[after] != '#') return false;
  pos_ += 2;
  emit(two == "++" ? Tok::PlusAssign : Tok::MinusAssign, begin, pos_);
  Token one = pending_.back();
  one.kind = Tok::Int;
  one.text = "1";
  one.intValue = 1;
  pending_.push_back(one);
  report(DiagId::lex_c_operator, one.range, two, two == "++" ? "+= 1" : "-= 1");
  return true;
}

void Lexer::lexPunctuator() {
  const Spelling* p = matchPunctuator(text_.substr(pos_));
  uint32_t begin = pos_;
  pos_ += static_cast<uint32_t>(p->text.size());
  Token t;
  t.kind = p->kind;
  t.range = SourceRange{loc(begin), loc(pos_)};
  t.text = p->text;
  if ((t.is(Tok::RParen) || t.is(Tok::RBracket)) && !closeBracket(t)) return;  // dropped
  emit(p->kind, begin, pos_);
  if (t.is(Tok::LParen) || t.is(Tok::LBracket)) openBracket(t);
}

void Lexer::openBracket(const Token& token) {
  if (neverClosed_ && token.range.begin.offset == *neverClosed_) {
    report(DiagId::lex_unclosed_bracket, token.range, token.text);
    cutoff_ = token.range.begin.offset;
  }
  brackets_.push_back({token.text[0], token.range});
  // Bail out here, before the parser recurses into 100000 parentheses.
  if (brackets_.size() > static_cast<size_t>(kMaxNestingDepth)) {
    if (!cutoff_) report(DiagId::parse_too_deep, token.range, kMaxNestingDepth);
    throw FatalDiagnostic{};
  }
}

// Returns false, after reporting, for a closer that matches no open bracket;
// the lexer then drops it, as the bracket pre-scan does.
bool Lexer::closeBracket(const Token& token) {
  if (!brackets_.empty() && closes(brackets_.back().ch, token.text[0])) {
    brackets_.pop_back();
    return true;
  }
  report(DiagId::lex_unmatched_bracket, token.range, token.text);
  return false;
}

// A string literal on one line, quotes included in the token's text; a
// backslash escapes the next character (the parser decodes it).
void Lexer::lexString() {
  uint32_t begin = pos_;
  const char quote = text_[pos_++];
  while (pos_ < text_.size() && text_[pos_] != quote && text_[pos_] != '\n') {
    if (text_[pos_] == '\\' && pos_ + 1 < text_.size() && text_[pos_ + 1] != '\n') ++pos_;
    ++pos_;
  }
  if (pos_ >= text_.size() || text_[pos_] != quote) {
    report(DiagId::lex_unterminated_string, SourceRange{loc(begin), loc(pos_)});
    return;
  }
  ++pos_;
  emit(Tok::String, begin, pos_);
}

// Characters that start no token, taken as one run so `$$$` is one error.
void Lexer::lexBadChars() {
  uint32_t begin = pos_;
  auto startsToken = [&](uint32_t at) {
    char c = text_[at];
    return isBlank(c) || c == '\n' || c == '#' || isIdentChar(c) || c == '!' || c == '"' || c == '\'' ||
           invalidUtf8At(at) || (c == '.' && at + 1 < text_.size() && isDigit(text_[at + 1])) ||
           matchPunctuator(text_.substr(at)) != nullptr;
  };
  while (pos_ < text_.size() && (pos_ == begin || !startsToken(pos_)))
    pos_ += utf8Length(static_cast<unsigned char>(text_[pos_]));
  if (pos_ > text_.size()) pos_ = static_cast<uint32_t>(text_.size());
  SourceRange range{loc(begin), loc(pos_)};
  report(DiagId::lex_unexpected_char, range, describeChar(text_.substr(begin)));
  // C and CUDA punctuation with a Spindle form.
  std::string_view run = text_.substr(begin, pos_ - begin);
  if (run == ";") note(range, "a statement ends at the end of its line: remove the ';'");
  else if (run == "{" || run == "}") note(range, "a block is the indented lines after a ':', not braces");
  else if (run == "?") note(range, "a conditional expression is written 'a if cond else b'");
  else if (run == ".") note(range, "Spindle has no '.' operator; the size of a tensor x along axis k is dim(x, k)");
}

std::vector<Token> tokenize(std::shared_ptr<const SourceFile> file, DiagnosticEngine& diags) {
  std::vector<Token> tokens;
  try {
    Lexer lexer(file, diags);
    do tokens.push_back(lexer.next());
    while (!tokens.back().is(Tok::Eof));
  } catch (const FatalDiagnostic&) {
    Token eof;
    tokens.push_back(eof);
  }
  return tokens;
}

}  // namespace spindle
