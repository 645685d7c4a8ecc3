// Lexer: token kinds, values, ranges, layout tokens and lexical errors.
#include <cmath>

#include "frontend_test_util.h"

namespace spindle::test {
namespace {

struct Lexed {
  std::shared_ptr<const SourceFile> file;
  DiagnosticEngine diags;
  std::vector<Token> tokens;
};

std::unique_ptr<Lexed> lex(const std::string& text) {
  auto l = std::make_unique<Lexed>();
  l->file = source(text);
  l->tokens = tokenize(l->file, l->diags);
  return l;
}

std::vector<Tok> kinds(const std::string& text) {
  auto l = lex(text);
  EXPECT_FALSE(l->diags.hasErrors()) << l->diags.renderAll();
  std::vector<Tok> out;
  for (const auto& t : l->tokens) out.push_back(t.kind);
  return out;
}

// The kinds as readable words, so a failure message says what came out.
std::string kindText(const std::string& text) {
  auto l = lex(text);
  std::string out;
  for (const auto& t : l->tokens) {
    if (!out.empty()) out += ' ';
    switch (t.kind) {
      case Tok::Newline: out += "NL"; break;
      case Tok::Indent: out += "IN"; break;
      case Tok::Dedent: out += "DE"; break;
      case Tok::Eof: out += "EOF"; break;
      default: out += std::string(t.text);
    }
  }
  return out;
}

const Token& only(const Lexed& l) {
  EXPECT_GE(l.tokens.size(), 2u);
  return l.tokens[0];
}

TEST(Lexer, SimpleStatement) {
  EXPECT_EQ(kinds("x = a ** 2 // 3\n"), (std::vector<Tok>{Tok::Name, Tok::Assign, Tok::Name, Tok::StarStar, Tok::Int,
                                                          Tok::SlashSlash, Tok::Int, Tok::Newline, Tok::Eof}));
}

TEST(Lexer, EmptyAndBlankFiles) {
  EXPECT_EQ(kindText(""), "EOF");
  EXPECT_EQ(kindText("\n\n   \n# only a comment\n"), "EOF");
}

TEST(Lexer, EveryKeyword) {
  const std::pair<const char*, Tok> cases[] = {
      {"const", Tok::KwConst}, {"def", Tok::KwDef},           {"kernel", Tok::KwKernel}, {"return", Tok::KwReturn},
      {"if", Tok::KwIf},       {"elif", Tok::KwElif},         {"else", Tok::KwElse},     {"for", Tok::KwFor},
      {"in", Tok::KwIn},       {"while", Tok::KwWhile},       {"break", Tok::KwBreak},   {"continue", Tok::KwContinue},
      {"pass", Tok::KwPass},   {"nonlocal", Tok::KwNonlocal}, {"and", Tok::KwAnd},       {"or", Tok::KwOr},
      {"not", Tok::KwNot},     {"True", Tok::KwTrue},         {"False", Tok::KwFalse},
  };
  for (const auto& [word, kind] : cases) {
    auto l = lex(std::string(word) + "\n");
    EXPECT_EQ(only(*l).kind, kind) << word;
  }
  // Near misses are names: keywords are case-sensitive and whole words.
  for (const char* word : {"true", "Const", "kernels", "strided", "range", "static_range", "f32", "_x", "x__y"})
    EXPECT_EQ(only(*lex(std::string(word) + "\n")).kind, Tok::Name) << word;
}

TEST(Lexer, EveryOperatorIsOneToken) {
  const char* ops[] = {"(",  ")",  "[",  "]",  ",",  ":",  "@",   "->", "=",  "+",  "-",  "*",   "/",
                       "//", "%",  "**", "&",  "|",  "^",  "~",   "<<", ">>", "<",  "<=", ">",   ">=",
                       "==", "!=", "+=", "-=", "*=", "/=", "//=", "%=", "&=", "|=", "^=", "<<=", ">>="};
  for (const char* op : ops) {
    // Brackets alone would be unbalanced; pair them so the lexer is happy.
    std::string text = op;
    if (text == "(") text = "()";
    if (text == "[") text = "[]";
    if (text == ")" || text == "]") continue;
    auto l = lex(text + "\n");
    EXPECT_FALSE(l->diags.hasErrors()) << op;
    EXPECT_EQ(l->tokens[0].text, std::string_view(op)) << op;
    EXPECT_EQ(tokSpelling(l->tokens[0].kind), "'" + std::string(op) + "'");
  }
}

TEST(Lexer, LongestMatchWins) {
  EXPECT_EQ(kindText("a<<=b>>c**d//=e->f\n"), "a <<= b >> c ** d //= e -> f NL EOF");
  EXPECT_EQ(kindText("a<=b<c==d!=e>=f\n"), "a <= b < c == d != e >= f NL EOF");
  EXPECT_EQ(kindText("x=-1\n"), "x = - 1 NL EOF");
}

TEST(Lexer, IntegerLiterals) {
  auto value = [](const std::string& text) {
    auto l = lex(text + "\n");
    EXPECT_FALSE(l->diags.hasErrors()) << text << ": " << l->diags.renderAll();
    EXPECT_EQ(l->tokens[0].kind, Tok::Int) << text;
    return l->tokens[0].intValue;
  };
  EXPECT_EQ(value("0"), 0u);
  EXPECT_EQ(value("256"), 256u);
  EXPECT_EQ(value("0x1F"), 31u);
  EXPECT_EQ(value("0XfF"), 255u);
  EXPECT_EQ(value("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(value("0xFFFFFFFFFFFFFFFF"), UINT64_MAX);
}

TEST(Lexer, IntegerOverflow) {
  for (const char* text : {"18446744073709551616", "0x10000000000000000", "99999999999999999999999"}) {
    auto l = lex(std::string(text) + "\n");
    EXPECT_EQ(diagList(l->diags), std::vector<std::string>{"1:1 lex-int-overflow"}) << text;
  }
}

TEST(Lexer, FloatLiterals) {
  auto value = [](const std::string& text) {
    auto l = lex(text + "\n");
    EXPECT_FALSE(l->diags.hasErrors()) << text << ": " << l->diags.renderAll();
    EXPECT_EQ(l->tokens[0].kind, Tok::Float) << text;
    EXPECT_EQ(l->tokens[0].text, text);
    return l->tokens[0].floatValue;
  };
  EXPECT_DOUBLE_EQ(value("1.0"), 1.0);
  EXPECT_DOUBLE_EQ(value("1e-5"), 1e-5);
  EXPECT_DOUBLE_EQ(value(".5"), 0.5);
  EXPECT_DOUBLE_EQ(value("1."), 1.0);
  EXPECT_DOUBLE_EQ(value("2E+3"), 2000.0);
  EXPECT_DOUBLE_EQ(value("0.044715"), 0.044715);
  EXPECT_DOUBLE_EQ(value("1.5e2"), 150.0);
  EXPECT_TRUE(std::isinf(value("inf")));
  EXPECT_TRUE(std::isnan(value("nan")));
  auto l = lex("1e999\n");
  EXPECT_EQ(diagList(l->diags), std::vector<std::string>{"1:1 lex-float-out-of-range"});
}

TEST(Lexer, MalformedNumbers) {
  for (const char* text : {"1e", "1e+", "0x", "0xg", "2abc", "1.5f", "007", "0x1_0", "1_000"}) {
    auto l = lex(std::string("y = ") + text + "\n");
    EXPECT_EQ(diagList(l->diags), std::vector<std::string>{"1:5 lex-bad-number"}) << text;
    // The whole malformed word is one token, so the parser sees one operand.
    EXPECT_EQ(l->tokens[2].text, text);
    EXPECT_EQ(l->tokens[3].kind, Tok::Newline);
  }
}

TEST(Lexer, TokenRanges) {
  auto l = lex("kernel k(x: f32[N]):\n    y = x[0]  # c\n");
  const Token& kw = l->tokens[0];
  EXPECT_EQ(kw.range.begin.line, 1u);
  EXPECT_EQ(kw.range.begin.col, 1u);
  EXPECT_EQ(kw.range.end.col, 7u);
  const Token& x = l->tokens[3];
  EXPECT_EQ(x.text, "x");
  EXPECT_EQ(x.range.begin.col, 10u);
  EXPECT_EQ(x.range.begin.offset, 9u);
  // NEWLINE sits right after the last token, not after the comment.
  auto nl = std::find_if(l->tokens.begin() + 12, l->tokens.end(), [](const Token& t) { return t.is(Tok::Newline); });
  ASSERT_NE(nl, l->tokens.end());
  EXPECT_EQ(nl->range.begin.line, 2u);
  EXPECT_EQ(nl->range.begin.col, 13u);
}

TEST(Lexer, IndentAndDedent) {
  EXPECT_EQ(kindText("a\n  b\n    c\nd\n"), "a NL IN b NL IN c NL DE DE d NL EOF");
  // Blocks still open at the end of the file are closed before EOF.
  EXPECT_EQ(kindText("a\n  b\n    c"), "a NL IN b NL IN c NL DE DE EOF");
  // Blank lines, comment-only lines and their own indentation are ignored.
  EXPECT_EQ(kindText("a\n\n      # x\n  b\n\n  \n  c\n"), "a NL IN b NL c NL DE EOF");
}

TEST(Lexer, NewlinesInsideBrackets) {
  EXPECT_EQ(kindText("f(a,\n      b,\n  [c,\n d])\ne\n"), "f ( a , b , [ c , d ] ) NL e NL EOF");
}

TEST(Lexer, CrLfLineEndings) { EXPECT_EQ(kindText("a\r\n  b\r\n"), "a NL IN b NL DE EOF"); }

TEST(Lexer, TabInIndentationIsReportedOnce) {
  auto l = lex("kernel k():\n\tx = 1\n\ty = 2\n");
  EXPECT_EQ(diagList(l->diags), std::vector<std::string>{"2:1 lex-tab-indent"});
  // A tab between tokens is plain whitespace.
  EXPECT_FALSE(lex("x =\t1\n")->diags.hasErrors());
}

TEST(Lexer, InconsistentDedent) {
  auto l = lex("a\n    b\n  c\n");
  EXPECT_EQ(diagList(l->diags), std::vector<std::string>{"3:3 lex-inconsistent-dedent"});
}

TEST(Lexer, ReservedNames) {
  auto l = lex("__x = __\n");
  EXPECT_EQ(diagList(l->diags), (std::vector<std::string>{"1:1 lex-reserved-name", "1:7 lex-reserved-name"}));
  EXPECT_FALSE(lex("_x = x__\n")->diags.hasErrors());
}

TEST(Lexer, UnexpectedCharacters) {
  auto l = lex("x = $$$ + 1\ny = a.b\nz = `q`\n");
  EXPECT_EQ(diagList(l->diags), (std::vector<std::string>{"1:5 lex-unexpected-char", "2:6 lex-unexpected-char",
                                                          "3:5 lex-unexpected-char", "3:7 lex-unexpected-char"}));
  EXPECT_EQ(l->diags.diagnostics()[0].range.end.col, 8u);  // one diagnostic for the run `$$$`
}

TEST(Lexer, StringLiterals) {
  EXPECT_EQ(kinds("assert x, \"a \\\"b\\\" c\"\n"),
            (std::vector<Tok>{Tok::KwAssert, Tok::Name, Tok::Comma, Tok::String, Tok::Newline, Tok::Eof}));
  EXPECT_EQ(kinds("assert x, 'it''s'\n"),
            (std::vector<Tok>{Tok::KwAssert, Tok::Name, Tok::Comma, Tok::String, Tok::String, Tok::Newline, Tok::Eof}));
  auto l = lex("assert x, \"open\ny = 1\n");
  EXPECT_EQ(diagList(l->diags), std::vector<std::string>{"1:11 lex-unterminated-string"});
  EXPECT_EQ(diagList(lex("assert x, 'a\\'\n")->diags), std::vector<std::string>{"1:11 lex-unterminated-string"});
}

TEST(Lexer, NonAsciiOnlyInComments) {
  EXPECT_FALSE(lex("x = 1  # größer, 東京, ✓\n")->diags.hasErrors());
  auto l = lex("größe = 1\n");
  EXPECT_EQ(diagList(l->diags), std::vector<std::string>{"1:3 lex-unexpected-char"});
  EXPECT_NE(l->diags.diagnostics()[0].message.find("U+00F6"), std::string::npos);
}

TEST(Lexer, InvalidUtf8) {
  EXPECT_EQ(findInvalidUtf8("plain ascii"), std::nullopt);
  EXPECT_EQ(findInvalidUtf8("caf\xC3\xA9 \xE6\x9D\xB1 \xF0\x9F\x98\x80"), std::nullopt);
  EXPECT_EQ(findInvalidUtf8("ab\xFF"), 2u);
  EXPECT_EQ(findInvalidUtf8("a\xC3"), 1u);             // truncated
  EXPECT_EQ(findInvalidUtf8("a\xC3x"), 1u);            // bad continuation
  EXPECT_EQ(findInvalidUtf8("\xC0\x80"), 0u);          // overlong NUL
  EXPECT_EQ(findInvalidUtf8("\xED\xA0\x80"), 0u);      // surrogate
  EXPECT_EQ(findInvalidUtf8("\xF4\x90\x80\x80"), 0u);  // past U+10FFFF
  // A bad byte hides nothing after it: one in code is reported where it is,
  // and the rest of the file is lexed; in comments, only the first is.
  const char* text = "x = 1\n# comment \xFE here\ny = \xFF 2\n# again \xFE\n";
  auto l = lex(text);
  EXPECT_EQ(diagList(l->diags), (std::vector<std::string>{"2:11 lex-invalid-utf8", "3:5 lex-invalid-utf8"}));
  EXPECT_NE(l->diags.diagnostics()[0].message.find("0xFE"), std::string::npos);
  EXPECT_EQ(kindText(text), "x = 1 NL y = 2 NL EOF");
}

TEST(Lexer, ByteOrderMarkIsSkipped) { EXPECT_EQ(kindText("\xEF\xBB\xBFx = 1\n"), "x = 1 NL EOF"); }

TEST(Lexer, Brackets) {
  auto unmatched = lex("x = 1)\ny = a[1]]\n");
  EXPECT_EQ(diagList(unmatched->diags),
            (std::vector<std::string>{"1:6 lex-unmatched-bracket", "2:9 lex-unmatched-bracket"}));
  auto unclosed = lex("x = 1\ny = f(a, [b]\nz = 2\n");
  EXPECT_EQ(diagList(unclosed->diags), std::vector<std::string>{"2:6 lex-unclosed-bracket"});
  // Only the outermost of several unclosed brackets is reported.
  auto nested = lex("y = f(a[\n");
  EXPECT_EQ(diagList(nested->diags), std::vector<std::string>{"1:6 lex-unclosed-bracket"});
  // Brackets in comments do not count.
  EXPECT_FALSE(lex("x = (1  # )\n)\n")->diags.hasErrors());
}

TEST(Lexer, DeepBracketsBailOutEarly) {
  auto l = lex("x = " + std::string(100000, '(') + "1" + std::string(100000, ')') + "\n");
  EXPECT_EQ(diagList(l->diags), std::vector<std::string>{fmt::format("1:{} parse-too-deep", 5 + kMaxNestingDepth)});
  EXPECT_LT(l->tokens.size(), 300u);
}

TEST(Lexer, DescribeToken) {
  auto l = lex("x 12 1.5 def + \n");
  EXPECT_EQ(describeToken(l->tokens[0]), "name 'x'");
  EXPECT_EQ(describeToken(l->tokens[1]), "integer literal '12'");
  EXPECT_EQ(describeToken(l->tokens[2]), "float literal '1.5'");
  EXPECT_EQ(describeToken(l->tokens[3]), "'def'");
  EXPECT_EQ(describeToken(l->tokens[4]), "'+'");
  EXPECT_EQ(describeToken(l->tokens[5]), "end of line");
  EXPECT_EQ(describeToken(l->tokens[6]), "end of file");
}

}  // namespace
}  // namespace spindle::test
