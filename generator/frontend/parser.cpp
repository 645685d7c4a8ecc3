// Recursive descent in the style of chibicc: one function per grammar rule,
// with the rule's EBNF right above it. Binary operators are parsed by
// precedence climbing over the one table kOperators.
//
// Error recovery is panic mode. A syntax error is reported, then thrown as
// SyntaxError up to the statement (or module-level declaration) being parsed,
// which skips the rest of its line and any block that belongs to it. Three
// rules keep cascades out of the output:
//   - at most one parser error per line (a second is nearly always an echo);
//   - nothing after a bracket that is never closed (the lexer reports it);
//   - a broken header skips its whole body.
#include "frontend/parser.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <unordered_map>

#include "frontend/lexer.h"

namespace spindle {

namespace {

struct SyntaxError {};

// ---------------------------------------------------------------------------
// The operator table: Python's precedence, lowest first. prec 1 is the
// ternary `a if c else b`, handled by parseExpr above this table.

constexpr int kOrPrec = 2;
constexpr int kUnaryPrec = 12;
constexpr int kComparePrec = 5;    // < <= > >= == != and `is None`
constexpr int kAdditivePrec = 10;  // + -: a tensor dim's expression starts here

enum class Fixity { Prefix, Infix, Compare, InfixRight };

struct OpRow {
  Tok tok;
  int prec;
  Fixity fixity;
  BinaryOp binary;  // for the infix kinds
  UnaryOp unary;    // for Prefix
};

constexpr OpRow kOperators[] = {
    {Tok::KwOr, 2, Fixity::Infix, BinaryOp::Or, {}},
    {Tok::KwAnd, 3, Fixity::Infix, BinaryOp::And, {}},
    {Tok::KwNot, 4, Fixity::Prefix, {}, UnaryOp::Not},
    {Tok::Lt, 5, Fixity::Compare, BinaryOp::Lt, {}},
    {Tok::Le, 5, Fixity::Compare, BinaryOp::Le, {}},
    {Tok::Gt, 5, Fixity::Compare, BinaryOp::Gt, {}},
    {Tok::Ge, 5, Fixity::Compare, BinaryOp::Ge, {}},
    {Tok::EqEq, 5, Fixity::Compare, BinaryOp::Eq, {}},
    {Tok::NotEq, 5, Fixity::Compare, BinaryOp::Ne, {}},
    {Tok::Pipe, 6, Fixity::Infix, BinaryOp::BitOr, {}},
    {Tok::Caret, 7, Fixity::Infix, BinaryOp::BitXor, {}},
    {Tok::Amp, 8, Fixity::Infix, BinaryOp::BitAnd, {}},
    {Tok::Shl, 9, Fixity::Infix, BinaryOp::Shl, {}},
    {Tok::Shr, 9, Fixity::Infix, BinaryOp::Shr, {}},
    {Tok::Plus, 10, Fixity::Infix, BinaryOp::Add, {}},
    {Tok::Minus, 10, Fixity::Infix, BinaryOp::Sub, {}},
    {Tok::Star, 11, Fixity::Infix, BinaryOp::Mul, {}},
    {Tok::Slash, 11, Fixity::Infix, BinaryOp::Div, {}},
    {Tok::SlashSlash, 11, Fixity::Infix, BinaryOp::FloorDiv, {}},
    {Tok::Percent, 11, Fixity::Infix, BinaryOp::Mod, {}},
    {Tok::Minus, kUnaryPrec, Fixity::Prefix, {}, UnaryOp::Neg},
    {Tok::Plus, kUnaryPrec, Fixity::Prefix, {}, UnaryOp::Pos},
    {Tok::Tilde, kUnaryPrec, Fixity::Prefix, {}, UnaryOp::BitNot},
    // Its right operand is parsed at kUnaryPrec: that makes it right
    // associative and allows `2 ** -1`; its left binds tighter than unary
    // minus, so -x**2 is -(x**2).
    {Tok::StarStar, 13, Fixity::InfixRight, BinaryOp::Pow, {}},
};

const OpRow* findOp(Tok tok, bool prefix) {
  for (const auto& row : kOperators)
    if (row.tok == tok && (row.fixity == Fixity::Prefix) == prefix) return &row;
  return nullptr;
}

struct AugOp {
  Tok tok;
  BinaryOp op;
};
constexpr AugOp kAugAssignOps[] = {
    {Tok::PlusAssign, BinaryOp::Add},
    {Tok::MinusAssign, BinaryOp::Sub},
    {Tok::StarAssign, BinaryOp::Mul},
    {Tok::SlashAssign, BinaryOp::Div},
    {Tok::SlashSlashAssign, BinaryOp::FloorDiv},
    {Tok::PercentAssign, BinaryOp::Mod},
    {Tok::AmpAssign, BinaryOp::BitAnd},
    {Tok::PipeAssign, BinaryOp::BitOr},
    {Tok::CaretAssign, BinaryOp::BitXor},
    {Tok::ShlAssign, BinaryOp::Shl},
    {Tok::ShrAssign, BinaryOp::Shr},
};

const AugOp* findAugOp(Tok tok) {
  for (const auto& row : kAugAssignOps)
    if (row.tok == tok) return &row;
  return nullptr;
}

// "a function call", "a literal"...: what an expression is, for messages.
std::string describeExpr(const Expr& e) {
  switch (e.kind) {
    case ExprKind::IntLit:
    case ExprKind::FloatLit:
    case ExprKind::BoolLit: return "a literal";
    case ExprKind::Name: return "a name";
    case ExprKind::Call: return "a function call";
    case ExprKind::Index: return "an element access";
    case ExprKind::List: return "a list";
    case ExprKind::Tuple: return "a tuple";
    case ExprKind::TypeTest: return "a type test";
    case ExprKind::Binary:
      if (isComparison(e.as<BinaryExpr>()->op)) return "a comparison";
      return "an expression";
    default: return "an expression";
  }
}

bool isLayout(Tok k) { return k == Tok::Newline || k == Tok::Indent || k == Tok::Dedent || k == Tok::Eof; }

struct Decorators {
  std::vector<Decorator> kept;            // the valid ones, in order
  std::optional<SourceRange> firstRange;  // of the first one written, valid or not
};

class Parser {
 public:
  Parser(std::shared_ptr<const SourceFile> file, DiagnosticEngine& diags)
      : file_(file), diags_(diags), lexer_(file, diags) {}

  std::unique_ptr<SourceModule> parseModule();

 private:
  // Counts one level of nesting (a block, a bracket, a prefix operator...)
  // for as long as it lives.
  class DepthGuard {
   public:
    explicit DepthGuard(Parser& p) : p_(p) {}
    DepthGuard(Parser& p, SourceRange at) : p_(p) { deepen(at); }
    ~DepthGuard() { p_.depth_ -= added_; }
    void deepen(SourceRange at) {
      if (p_.depth_ + 1 > kMaxNestingDepth) p_.tooDeep(at);
      ++p_.depth_;
      ++added_;
    }

   private:
    Parser& p_;
    int added_ = 0;
  };

  // Tokens
  const Token& peek(size_t ahead = 0);
  Token advance();
  bool check(Tok k) { return peek().is(k); }
  bool accept(Tok k);
  Token expect(Tok k, std::string_view what = {});
  void expectEndOfLine();

  // Diagnostics
  template <typename... Args>
  void report(DiagId id, SourceRange range, const Args&... args);
  template <typename... Args>
  [[noreturn]] void failWith(DiagId id, SourceRange range, const Args&... args);
  [[noreturn]] void fail(const Token& at, std::string_view expected);
  [[noreturn]] void tooDeep(SourceRange at);
  void synchronize();
  void skipBlock();

  // Declarations
  void parseTopLevelItems(SourceModule& m);
  void parseDecl(SourceModule& m);
  void parseDecoratedDecl(SourceModule& m);
  Decorators parseDecorators();
  void parseDecorator(Decorators& seen);
  bool checkDecorator(const Decorator& d, SourceRange nameRange, const Decorators& seen);
  std::unique_ptr<ConstDecl> parseConst();
  std::unique_ptr<FunctionDecl> parseFunction();
  std::unique_ptr<KernelDecl> parseKernel();
  std::vector<Param> parseParams();
  TypeRef parseType(bool allowTuple = false);
  TypeRef parseTupleType(const Token& tupleName, bool allowed);
  ExprPtr parseDim();

  // Statements
  Block parseSuite(const Token& colon);
  void parseBlockItems(Block& out);
  StmtPtr parseStatement();
  StmtPtr parseStatementOrThrow();
  StmtPtr parseSimpleStatement();
  StmtPtr parseSmallStatement();
  StmtPtr parseAssignOrCall();
  void checkAssignTarget(const Expr& target, bool augmented);
  std::unique_ptr<IfStmt> parseIfClause();
  StmtPtr parseIf();
  StmtPtr parseWhile();
  StmtPtr parseFor();
  StmtPtr parseReturn();
  StmtPtr parseNonlocal();

  // Expressions
  ExprPtr parseExpr();
  ExprPtr parseExprList(bool targets);
  ExprPtr parseListElement(bool target);
  ExprPtr parseBinary(int minPrec);
  ExprPtr parseTypeMembership(ExprPtr subject);
  StmtPtr parseAssert();
  static std::string decodeString(const Token& t);
  static std::unique_ptr<TypeTestExpr> typeEquality(BinaryOp op, const ExprPtr& lhs, const ExprPtr& rhs,
                                                    SourceRange range);
  ExprPtr parseOperand(int minPrec);
  ExprPtr parsePostfix();
  ExprPtr parseCall(ExprPtr callee);
  ExprPtr parseIndex(ExprPtr base);
  ExprPtr parsePrimary();
  ExprPtr parseCCast();
  ExprPtr parseList();
  void parseArgs(std::vector<ExprPtr>& args, std::vector<KeywordArg>& kwargs);

  int height(const Expr* e) const;
  int maxHeight(const std::vector<ExprPtr>& es) const;
  ExprPtr seal(ExprPtr node, int childHeight);

  std::shared_ptr<const SourceFile> file_;
  DiagnosticEngine& diags_;
  Lexer lexer_;
  std::deque<Token> ahead_;
  SourceLoc lastEnd_;             // end of the last real token consumed: where nodes end
  int depth_ = 0;                 // blocks, brackets, prefix operators... now open
  bool afterEmptyBlock_ = false;  // since the last good module-level declaration
  // Height of each expression node of the current statement, so a left-deep
  // chain (a+a+...+a, x[0][0]...) is bounded like real nesting.
  std::unordered_map<const Expr*, int> heights_;
};

// ---------------------------------------------------------------------------
// Tokens and diagnostics

const Token& Parser::peek(size_t ahead) {
  while (ahead_.size() <= ahead) ahead_.push_back(lexer_.next());
  return ahead_[ahead];
}

Token Parser::advance() {
  Token t = peek();
  ahead_.pop_front();
  if (!isLayout(t.kind)) lastEnd_ = t.range.end;
  return t;
}

bool Parser::accept(Tok k) {
  if (!check(k)) return false;
  advance();
  return true;
}

Token Parser::expect(Tok k, std::string_view what) {
  if (!check(k)) fail(peek(), what.empty() ? tokSpelling(k) : what);
  return advance();
}

void Parser::expectEndOfLine() {
  if (!accept(Tok::Newline)) fail(peek(), "end of line");
}

template <typename... Args>
void Parser::report(DiagId id, SourceRange range, const Args&... args) {
  if (auto cut = lexer_.cutoff(); cut && range.begin.offset >= *cut) return;
  if (diags_.hasErrorOnLine(file_.get(), range.begin.line)) return;
  diags_.report(id, file_, range, args...);
  stopIfTooManyErrors(diags_, file_);
}

template <typename... Args>
void Parser::failWith(DiagId id, SourceRange range, const Args&... args) {
  report(id, range, args...);
  throw SyntaxError{};
}

void Parser::fail(const Token& at, std::string_view expected) {
  failWith(DiagId::parse_expected, at.range, expected, describeToken(at));
}

// Reported even on a line that already has an error: it ends the parse.
void Parser::tooDeep(SourceRange at) {
  auto cut = lexer_.cutoff();
  if (!cut || at.begin.offset < *cut) diags_.report(DiagId::parse_too_deep, file_, at, kMaxNestingDepth);
  throw FatalDiagnostic{};
}

// Panic-mode recovery: skip to the end of the logical line and, when an
// indented block follows (the body of a broken header), skip that too. Never
// skips a DEDENT that ends the enclosing block.
void Parser::synchronize() {
  while (!check(Tok::Newline) && !check(Tok::Eof) && !check(Tok::Dedent)) advance();
  accept(Tok::Newline);
  if (check(Tok::Indent)) skipBlock();
}

void Parser::skipBlock() {
  int level = 0;
  do {
    if (check(Tok::Eof)) return;
    if (check(Tok::Indent)) ++level;
    if (check(Tok::Dedent)) --level;
    advance();
  } while (level > 0);
}

// ---------------------------------------------------------------------------
// Declarations

// module = { NEWLINE | const_decl | def_decl | kernel_decl } EOF
std::unique_ptr<SourceModule> Parser::parseModule() {
  auto m = std::make_unique<SourceModule>();
  m->file = file_;
  try {
    while (!check(Tok::Eof)) {
      if (check(Tok::Dedent)) advance();  // cannot happen at the top; be safe
      else parseTopLevelItems(*m);
    }
  } catch (const FatalDiagnostic&) {
    // Reported already; keep what was parsed.
  }
  return m;
}

// Declarations up to the end of file, or of a stray indented block.
void Parser::parseTopLevelItems(SourceModule& m) {
  while (!check(Tok::Eof) && !check(Tok::Dedent)) {
    if (accept(Tok::Newline)) continue;
    if (check(Tok::Indent)) {
      Token indent = advance();
      report(DiagId::lex_unexpected_indent, indent.range);
      DepthGuard guard(*this, indent.range);
      parseTopLevelItems(m);
      accept(Tok::Dedent);
      continue;
    }
    heights_.clear();
    try {
      parseDecl(m);
    } catch (const SyntaxError&) {
      synchronize();
    }
  }
}

void Parser::parseDecl(SourceModule& m) {
  TopLevelDecl d;
  Tok start = peek().kind;
  if (start == Tok::KwConst || start == Tok::KwDef || start == Tok::KwKernel || start == Tok::At)
    afterEmptyBlock_ = false;
  switch (start) {
    case Tok::KwConst:
      d.kind = DeclKind::Const;
      d.constDecl = parseConst();
      break;
    case Tok::KwDef:
      d.kind = DeclKind::Function;
      d.function = parseFunction();
      break;
    case Tok::At:
    case Tok::KwKernel: parseDecoratedDecl(m); return;
    default:
      // Statements right after "expected an indented block" are that
      // block, written unindented: one error is enough.
      if (afterEmptyBlock_) throw SyntaxError{};
      fail(peek(), "'const', 'def' or 'kernel' at module level");
  }
  m.decls.push_back(std::move(d));
}

// kernel_decl = { decorator } "kernel" NAME [ type_params ] params ":" suite
void Parser::parseDecoratedDecl(SourceModule& m) {
  Decorators decorators = parseDecorators();
  TopLevelDecl d;
  if (check(Tok::KwDef) && decorators.firstRange) {
    report(DiagId::parse_decorator_on_def, *decorators.firstRange);
    d.kind = DeclKind::Function;
    d.function = parseFunction();
  } else {
    if (!check(Tok::KwKernel)) fail(peek(), "'kernel' after decorators");
    d.kind = DeclKind::Kernel;
    d.kernel = parseKernel();
    d.kernel->decorators = std::move(decorators.kept);
  }
  m.decls.push_back(std::move(d));
}

Decorators Parser::parseDecorators() {
  Decorators result;
  while (check(Tok::At)) parseDecorator(result);
  return result;
}

// decorator = "@" NAME [ "(" [ args ] ")" ] NEWLINE
// Adds it to `seen` unless it is unknown, repeated or has the wrong
// arguments (reported).
void Parser::parseDecorator(Decorators& seen) {
  Token at = advance();
  Token name = expect(Tok::Name, "a decorator name");
  Decorator d;
  d.name = std::string(name.text);
  if (check(Tok::LParen)) parseArgs(d.args, d.kwargs);
  d.range = SourceRange{at.range.begin, lastEnd_};
  expectEndOfLine();
  if (!seen.firstRange) seen.firstRange = d.range;
  if (checkDecorator(d, name.range, seen)) seen.kept.push_back(std::move(d));
}

// Decorator rules that the grammar cannot express.
bool Parser::checkDecorator(const Decorator& d, SourceRange nameRange, const Decorators& seen) {
  bool isStatic = d.name == "static";
  bool isAlias = d.name == "alias";  // one group of tensors per @alias; it may repeat
  bool isOccupancy = d.name == "occupancy";
  bool isTune = d.name == "tune";
  if (d.name != "grid" && d.name != "block" && !isStatic && !isAlias && !isOccupancy && !isTune) {
    report(DiagId::parse_bad_decorator, nameRange, d.name);
    return false;
  }
  for (const auto& prev : seen.kept) {
    if (prev.name == d.name && !isAlias) {
      report(DiagId::parse_duplicate_decorator, d.range, d.name);
      return false;
    }
  }
  // @tune is all keywords (CONST=[values], key=[dims], where=..., bucket=...);
  // sema checks the names and values.
  if (isTune) {
    if (!d.args.empty() || d.kwargs.empty()) {
      report(DiagId::parse_decorator_arity, d.range, d.name, "keyword arguments only (CONST=[values], ...)",
             d.args.empty() ? "none" : "a positional argument");
      return false;
    }
    return true;
  }
  if (!d.kwargs.empty()) {
    report(DiagId::parse_no_keyword_args, d.kwargs.front().nameRange, "@" + d.name);
    return false;
  }
  size_t n = d.args.size();
  if (isAlias ? n < 2 : isStatic ? n < 1 : isOccupancy ? n != 1 : n < 1 || n > 3) {
    report(DiagId::parse_decorator_arity, d.range, d.name,
           isAlias       ? "at least 2 arguments"
           : isStatic    ? "at least 1 argument"
           : isOccupancy ? "1 argument"
                         : "1 to 3 arguments",
           n);
    return false;
  }
  for (const auto& arg : d.args) {
    if ((isStatic || isAlias) && !arg->as<NameExpr>()) {
      report(DiagId::parse_static_arg, arg->range, d.name, describeExpr(*arg));
      return false;
    }
  }
  return true;
}

// const_decl = "const" NAME [ ":" type ] "=" expr NEWLINE
std::unique_ptr<ConstDecl> Parser::parseConst() {
  Token kw = advance();
  auto c = std::make_unique<ConstDecl>();
  Token name = expect(Tok::Name, "a constant name");
  c->name = std::string(name.text);
  c->nameRange = name.range;
  if (accept(Tok::Colon)) c->type = std::make_unique<TypeRef>(parseType());
  expect(Tok::Assign);
  c->value = parseExpr();
  c->range = SourceRange{kw.range.begin, lastEnd_};
  expectEndOfLine();
  return c;
}

// def_decl = "def" NAME params [ "->" type ] ":" suite
std::unique_ptr<FunctionDecl> Parser::parseFunction() {
  Token kw = advance();
  auto f = std::make_unique<FunctionDecl>();
  Token name = expect(Tok::Name, "a function name");
  f->name = std::string(name.text);
  f->nameRange = name.range;
  f->params = parseParams();
  if (accept(Tok::Arrow)) f->returnType = std::make_unique<TypeRef>(parseType(/*allowTuple=*/true));
  Token colon = expect(Tok::Colon);
  f->body = parseSuite(colon);
  f->range = SourceRange{kw.range.begin, lastEnd_};
  return f;
}

// kernel      = "kernel" NAME [ type_params ] params ":" suite
// type_params = "[" bracket_param { "," bracket_param } [ "," ] "]"
// bracket_param = NAME [ ":" NAME ]      (a type parameter, or a compile-time value or fn)
std::unique_ptr<KernelDecl> Parser::parseKernel() {
  Token kw = advance();
  auto k = std::make_unique<KernelDecl>();
  Token name = expect(Tok::Name, "a kernel name");
  k->name = std::string(name.text);
  k->nameRange = name.range;
  if (accept(Tok::LBracket)) {
    do {
      Token t = expect(Tok::Name, "a type parameter name");
      TypeParam p{std::string(t.text), t.range, {}, {}};
      if (accept(Tok::Colon)) {
        Token kind = expect(Tok::Name, "a type or 'fn'");
        p.kindName = std::string(kind.text);
        p.kindRange = kind.range;
        p.range = SourceRange{t.range.begin, kind.range.end};
      }
      k->typeParams.push_back(std::move(p));
    } while (accept(Tok::Comma) && !check(Tok::RBracket));
    expect(Tok::RBracket, "',' or ']'");
  }
  k->params = parseParams();
  Token colon = expect(Tok::Colon);
  k->body = parseSuite(colon);
  k->range = SourceRange{kw.range.begin, lastEnd_};
  return k;
}

// params = "(" [ param { "," param } [ "," ] ] ")"
// param  = NAME ":" type
std::vector<Param> Parser::parseParams() {
  std::vector<Param> params;
  expect(Tok::LParen);
  while (!check(Tok::RParen)) {
    Param p;
    Token name = expect(Tok::Name, "a parameter name");
    p.name = std::string(name.text);
    p.nameRange = name.range;
    expect(Tok::Colon);
    p.type = parseType();
    if (accept(Tok::Pipe)) {  // `T[N] | None`: an optional tensor
      expect(Tok::KwNone, "'None'");
      p.type.optional = true;
      p.type.range.end = lastEnd_;
    }
    p.range = SourceRange{name.range.begin, lastEnd_};
    params.push_back(std::move(p));
    if (!accept(Tok::Comma)) break;
  }
  expect(Tok::RParen, "',' or ')'");
  return params;
}

// type = NAME [ "[" dim { "," dim } [ "," ] "]" [ "strided" ] ] | tuple_type
TypeRef Parser::parseType(bool allowTuple) {
  if (!check(Tok::Name)) failWith(DiagId::parse_bad_type, peek().range, describeToken(peek()));
  Token elem = advance();
  if (elem.text == "tuple" && check(Tok::LBracket)) return parseTupleType(elem, allowTuple);
  TypeRef t;
  t.elemName = std::string(elem.text);
  t.elemRange = elem.range;
  t.range = elem.range;
  if (!check(Tok::LBracket)) return t;
  advance();
  t.isTensor = true;
  while (!check(Tok::RBracket)) {
    t.dims.push_back(parseDim());
    if (!accept(Tok::Comma)) break;
  }
  expect(Tok::RBracket, "',' or ']'");
  // `strided` is a word only here, after a tensor type; elsewhere a name.
  if (check(Tok::Name) && peek().text == "strided") {
    advance();
    t.strided = true;
  }
  t.range = SourceRange{elem.range.begin, lastEnd_};
  if (t.dims.empty() || t.dims.size() > 8) report(DiagId::parse_tensor_rank, t.range, t.dims.size());
  return t;
}

// tuple_type = "tuple" "[" type { "," type } [ "," ] "]"
// Only a def's or closure's return type (`allowed`), with 2 or more
// elements; anything else is reported here and parsed on, so the rest of
// the line is still checked.
TypeRef Parser::parseTupleType(const Token& tupleName, bool allowed) {
  TypeRef t;
  t.elemName = std::string(tupleName.text);
  t.elemRange = tupleName.range;
  t.isTuple = true;
  advance();  // "["
  while (!check(Tok::RBracket)) {
    t.tupleElements.push_back(parseType());
    if (!accept(Tok::Comma)) break;
  }
  expect(Tok::RBracket, "',' or ']'");
  t.range = SourceRange{tupleName.range.begin, lastEnd_};
  if (!allowed) report(DiagId::parse_tuple_type_position, t.range);
  else if (t.tupleElements.size() < 2) report(DiagId::parse_tuple_type_arity, t.range, t.tupleElements.size());
  return t;
}

// dim = INT | NAME | an expression of them with + - * // and parentheses
// (sema checks which operators), e.g. `3 * C`, `C // NH`.
ExprPtr Parser::parseDim() {
  if (!check(Tok::Int) && !check(Tok::Name) && !check(Tok::LParen))
    fail(peek(), "a dimension (an integer, a name or an expression of them)");
  return parseBinary(kAdditivePrec);
}

// ---------------------------------------------------------------------------
// Statements

// suite = simple_stmt | NEWLINE INDENT stmt { stmt } DEDENT
Block Parser::parseSuite(const Token& colon) {
  DepthGuard guard(*this, colon.range);
  Block body;
  if (!check(Tok::Newline)) {  // `if c: return`
    body.push_back(parseSimpleStatement());
    return body;
  }
  advance();
  if (!check(Tok::Indent)) {
    report(DiagId::parse_empty_block, colon.range);
    afterEmptyBlock_ = true;
    return body;
  }
  advance();
  parseBlockItems(body);
  accept(Tok::Dedent);
  return body;
}

// Statements up to the end of the block (or of a stray indented block).
void Parser::parseBlockItems(Block& out) {
  while (!check(Tok::Dedent) && !check(Tok::Eof)) {
    if (accept(Tok::Newline)) continue;
    if (check(Tok::Indent)) {
      // Report, then parse the stray block as part of this one so the
      // errors inside it are still found.
      Token indent = advance();
      report(DiagId::lex_unexpected_indent, indent.range);
      DepthGuard guard(*this, indent.range);
      parseBlockItems(out);
      accept(Tok::Dedent);
      continue;
    }
    if (StmtPtr s = parseStatement()) out.push_back(std::move(s));
  }
}

// Parses one statement; after a syntax error in it, recovers and returns null.
StmtPtr Parser::parseStatement() {
  heights_.clear();
  try {
    return parseStatementOrThrow();
  } catch (const SyntaxError&) {
    synchronize();
    return nullptr;
  }
}

// stmt = if_stmt | while_stmt | for_stmt | def_decl | simple_stmt
StmtPtr Parser::parseStatementOrThrow() {
  const Token& t = peek();
  switch (t.kind) {
    case Tok::KwIf: return parseIf();
    case Tok::KwWhile: return parseWhile();
    case Tok::KwFor: return parseFor();
    case Tok::KwDef: {
      SourceLoc begin = t.range.begin;
      auto f = parseFunction();
      return std::make_unique<FuncDefStmt>(SourceRange{begin, lastEnd_}, std::move(f));
    }
    case Tok::At: {
      Decorators decorators = parseDecorators();
      report(DiagId::parse_decorator_on_def, *decorators.firstRange);
      if (check(Tok::Dedent) || check(Tok::Eof)) return nullptr;
      return parseStatementOrThrow();
    }
    case Tok::KwConst: {  // a kernel-body const (sema checks where it stands)
      Token kw = advance();
      Token name = expect(Tok::Name, "a constant name");
      auto target = std::make_unique<NameExpr>(name.range, std::string(name.text));
      std::unique_ptr<TypeRef> type;
      if (accept(Tok::Colon)) type = std::make_unique<TypeRef>(parseType());
      expect(Tok::Assign);
      ExprPtr value = parseExpr();
      auto s = std::make_unique<AssignStmt>(SourceRange{kw.range.begin, lastEnd_}, std::move(target), std::move(value));
      s->annotation = std::move(type);
      s->isConst = true;
      expectEndOfLine();
      return s;
    }
    case Tok::KwKernel: failWith(DiagId::parse_misplaced_decl, t.range, t.text);
    case Tok::KwElif:
    case Tok::KwElse: failWith(DiagId::parse_unexpected_token, t.range, describeToken(t) + " without a matching 'if'");
    default: return parseSimpleStatement();
  }
}

// simple_stmt = small_stmt NEWLINE
StmtPtr Parser::parseSimpleStatement() {
  StmtPtr s = parseSmallStatement();
  expectEndOfLine();
  return s;
}

// small_stmt = "pass" | "break" | "continue" | return_stmt | nonlocal_stmt | assert_stmt
//            | assign_stmt | call
StmtPtr Parser::parseSmallStatement() {
  switch (peek().kind) {
    case Tok::KwPass: return std::make_unique<PassStmt>(advance().range);
    case Tok::KwBreak: return std::make_unique<BreakStmt>(advance().range);
    case Tok::KwContinue: return std::make_unique<ContinueStmt>(advance().range);
    case Tok::KwReturn: return parseReturn();
    case Tok::KwNonlocal: return parseNonlocal();
    case Tok::KwAssert: return parseAssert();
    default: return parseAssignOrCall();
  }
}

// assert_stmt = "assert" expr [ "," STRING ]
StmtPtr Parser::parseAssert() {
  Token kw = advance();
  ExprPtr cond = parseExpr();
  std::string message;
  if (accept(Tok::Comma)) message = decodeString(expect(Tok::String, "a string literal (the assert's message)"));
  return std::make_unique<AssertStmt>(SourceRange{kw.range.begin, lastEnd_}, std::move(cond), std::move(message));
}

// The text between a string token's quotes, with \\, \", \', \n and \t
// decoded; any other escaped character stands for itself.
std::string Parser::decodeString(const Token& t) {
  std::string out;
  std::string_view body = t.text.size() >= 2 ? t.text.substr(1, t.text.size() - 2) : std::string_view();
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c == '\\' && i + 1 < body.size()) {
      c = body[++i];
      if (c == 'n') c = '\n';
      else if (c == 't') c = '\t';
    }
    out += c;
  }
  return out;
}

// return_stmt = "return" [ expr_list ]
StmtPtr Parser::parseReturn() {
  Token kw = advance();
  ExprPtr value;
  if (!check(Tok::Newline)) value = parseExprList(/*targets=*/false);
  return std::make_unique<ReturnStmt>(SourceRange{kw.range.begin, lastEnd_}, std::move(value));
}

// nonlocal_stmt = "nonlocal" NAME { "," NAME }
StmtPtr Parser::parseNonlocal() {
  Token kw = advance();
  auto s = std::make_unique<NonlocalStmt>(kw.range);
  do {
    Token name = expect(Tok::Name, "a name");
    s->names.push_back(std::string(name.text));
    s->nameRanges.push_back(name.range);
  } while (accept(Tok::Comma));
  s->range = SourceRange{kw.range.begin, lastEnd_};
  return s;
}

// assign_stmt = targets "=" expr_list
//             | NAME ":" type "=" expr
//             | target AUGOP expr
// targets     = target { "," target }      (two or more: an unpacking)
// target      = NAME | postfix "[" ... "]"
// A bare expression is a statement only when it is a call.
StmtPtr Parser::parseAssignOrCall() {
  ExprPtr lhs = parseExprList(/*targets=*/true);
  SourceLoc begin = lhs->range.begin;
  if (check(Tok::Colon)) {
    if (!lhs->as<NameExpr>()) failWith(DiagId::parse_annotated_target, lhs->range);
    advance();
    auto type = std::make_unique<TypeRef>(parseType());
    expect(Tok::Assign);
    ExprPtr value = parseExpr();
    auto s = std::make_unique<AssignStmt>(SourceRange{begin, lastEnd_}, std::move(lhs), std::move(value));
    s->annotation = std::move(type);
    return s;
  }
  if (accept(Tok::Assign)) {
    checkAssignTarget(*lhs, /*augmented=*/false);
    ExprPtr value = parseExprList(/*targets=*/false);
    return std::make_unique<AssignStmt>(SourceRange{begin, lastEnd_}, std::move(lhs), std::move(value));
  }
  if (const AugOp* aug = findAugOp(peek().kind)) {
    checkAssignTarget(*lhs, /*augmented=*/true);
    advance();
    ExprPtr value = parseExpr();
    return std::make_unique<AugAssignStmt>(SourceRange{begin, lastEnd_}, std::move(lhs), aug->op, std::move(value));
  }
  if (!lhs->as<CallExpr>()) {
    if (!check(Tok::Newline)) fail(peek(), "'=' or end of line");
    failWith(DiagId::parse_expr_stmt_not_call, lhs->range, describeExpr(*lhs));
  }
  return std::make_unique<ExprStmt>(lhs->range, std::move(lhs));
}

void Parser::checkAssignTarget(const Expr& target, bool augmented) {
  if (target.as<NameExpr>() || target.as<IndexExpr>()) return;
  const auto* tuple = target.as<TupleExpr>();
  if (!tuple) failWith(DiagId::parse_bad_assign_target, target.range, describeExpr(target));
  if (augmented) failWith(DiagId::parse_bad_assign_target, target.range, "a tuple with an augmented assignment");
  for (const auto& e : tuple->elements)
    if (!e->as<NameExpr>() && !e->as<IndexExpr>()) failWith(DiagId::parse_unpack_target, e->range, describeExpr(*e));
}

// if_clause = ( "if" | "elif" ) expr ":" suite
std::unique_ptr<IfStmt> Parser::parseIfClause() {
  Token kw = advance();
  ExprPtr cond = parseExpr();
  Token colon = expect(Tok::Colon);
  auto s = std::make_unique<IfStmt>(kw.range, std::move(cond));
  s->isElif = kw.is(Tok::KwElif);
  s->thenBody = parseSuite(colon);
  return s;
}

// if_stmt = "if" expr ":" suite { "elif" expr ":" suite } [ "else" ":" suite ]
// Each elif is an IfStmt alone in the else block of the one before.
StmtPtr Parser::parseIf() {
  std::unique_ptr<IfStmt> top = parseIfClause();
  std::vector<IfStmt*> chain{top.get()};
  DepthGuard elifDepth(*this);  // the chain nests one level per elif
  while (check(Tok::KwElif) || check(Tok::KwElse)) {
    if (check(Tok::KwElse)) {
      advance();
      Token colon = expect(Tok::Colon);
      chain.back()->elseBody = parseSuite(colon);
      break;
    }
    elifDepth.deepen(peek().range);
    try {
      std::unique_ptr<IfStmt> clause = parseIfClause();
      IfStmt* next = clause.get();
      chain.back()->elseBody.push_back(std::move(clause));
      chain.push_back(next);
    } catch (const SyntaxError&) {
      synchronize();  // drop the broken clause; later elif/else still attach
    }
  }
  for (IfStmt* s : chain) s->range.end = lastEnd_;
  return top;
}

// while_stmt = "while" expr ":" suite
StmtPtr Parser::parseWhile() {
  Token kw = advance();
  ExprPtr cond = parseExpr();
  Token colon = expect(Tok::Colon);
  auto s = std::make_unique<WhileStmt>(kw.range, std::move(cond));
  s->body = parseSuite(colon);
  s->range.end = lastEnd_;
  return s;
}

// for_stmt = "for" NAME "in" ( "range" | "static_range" ) "(" args ")" ":" suite
StmtPtr Parser::parseFor() {
  Token kw = advance();
  Token var = expect(Tok::Name, "a loop variable name");
  auto s = std::make_unique<ForStmt>(kw.range, std::string(var.text), var.range);
  // `for r, c, v in elements(acc[i, j])`: the matrix API's epilogue loop.
  while (accept(Tok::Comma)) {
    Token more = expect(Tok::Name, "a loop variable name");
    s->elementVars.emplace_back(more.text);
    s->elementVarRanges.push_back(more.range);
  }
  expect(Tok::KwIn);
  // The iterable is parsed as any expression, then checked, so that the
  // caret can cover all of a wrong one.
  ExprPtr iter = parseExpr();
  auto* call = iter->as<CallExpr>();
  if (call && call->callee == "elements") {
    // `for r, c, v in elements(acc[i, j])`, `for r, c, v, x in
    // elements(acc[i, j], m[i])`, `for r, x in elements(m[i])`: how many
    // names each form takes is sema's (it knows the tiles' kinds).
    if (s->elementVars.empty()) report(DiagId::parse_elements_vars, iter->range);
    else if (call->args.empty() || !call->kwargs.empty()) report(DiagId::parse_elements_arity, call->range);
    else {
      s->elementsOf = std::move(call->args[0]);
      for (size_t k = 1; k < call->args.size(); ++k) s->elementRows.push_back(std::move(call->args[k]));
    }
  } else if (!s->elementVars.empty()) {
    report(DiagId::parse_elements_vars, iter->range);
  } else if (!call || (call->callee != "range" && call->callee != "static_range")) {
    report(DiagId::parse_bad_for, iter->range);
  } else if (!call->kwargs.empty()) {
    report(DiagId::parse_no_keyword_args, call->kwargs.front().nameRange, call->callee);
  } else if (call->args.empty() || call->args.size() > 3) {
    report(DiagId::parse_range_arity, call->range, call->callee, call->args.size());
  } else {
    s->isStatic = call->callee == "static_range";
    s->rangeArgs = std::move(call->args);
  }
  Token colon = expect(Tok::Colon);
  s->body = parseSuite(colon);
  s->range.end = lastEnd_;
  return s;
}

// ---------------------------------------------------------------------------
// Expressions

int Parser::height(const Expr* e) const {
  auto it = heights_.find(e);
  return it == heights_.end() ? 1 : it->second;
}

int Parser::maxHeight(const std::vector<ExprPtr>& es) const {
  int h = 0;
  for (const auto& e : es) h = std::max(h, height(e.get()));
  return h;
}

// Records a new inner node's height and enforces the nesting limit on it.
ExprPtr Parser::seal(ExprPtr node, int childHeight) {
  int h = childHeight + 1;
  if (depth_ + h > kMaxNestingDepth) tooDeep(node->range);
  heights_[node.get()] = h;
  return node;
}

// expr = or_expr [ "if" or_expr "else" expr ]
ExprPtr Parser::parseExpr() {
  ExprPtr value = parseBinary(kOrPrec);
  if (!check(Tok::KwIf)) return value;
  advance();
  ExprPtr cond = parseBinary(kOrPrec);
  Token elseTok = expect(Tok::KwElse);
  DepthGuard guard(*this, elseTok.range);  // `a if b else c if d else ...` recurses
  ExprPtr other = parseExpr();
  SourceRange range{value->range.begin, other->range.end};
  int h = std::max({height(value.get()), height(cond.get()), height(other.get())});
  return seal(std::make_unique<TernaryExpr>(range, std::move(cond), std::move(value), std::move(other)), h);
}

// expr_list = list_element { "," list_element }
// Two or more elements make a Tuple: a return's values, or either side of
// an unpacking (`targets`: the left side, where `*rest` gets its own
// error). Sema decides where a tuple may stand.
ExprPtr Parser::parseExprList(bool targets) {
  ExprPtr first = parseListElement(targets);
  if (!check(Tok::Comma)) return first;
  auto tuple = std::make_unique<TupleExpr>(first->range);
  tuple->elements.push_back(std::move(first));
  while (accept(Tok::Comma)) tuple->elements.push_back(parseListElement(targets));
  tuple->range.end = lastEnd_;
  int h = maxHeight(tuple->elements);
  return seal(std::move(tuple), h);
}

ExprPtr Parser::parseListElement(bool target) {
  if (target && check(Tok::Star)) {
    Token star = advance();
    parsePostfix();
    failWith(DiagId::parse_starred_target, SourceRange{star.range.begin, lastEnd_});
  }
  return parseExpr();
}

// binary(p) = operand(p) { OP binary(q) }   for each infix OP of precedence >= p,
//             where q = prec(OP) + 1, or kUnaryPrec for `**`
ExprPtr Parser::parseBinary(int minPrec) {
  ExprPtr lhs = parseOperand(minPrec);
  bool lastWasComparison = false;
  for (;;) {
    // `x is None` and `x is not None`, at the comparisons' precedence.
    if (check(Tok::KwIs) && minPrec <= kComparePrec) {
      Token isTok = advance();
      const bool negated = accept(Tok::KwNot);
      expect(Tok::KwNone, "'None' (only 'is None' and 'is not None' are supported)");
      if (lastWasComparison) report(DiagId::parse_chained_compare, isTok.range);
      lastWasComparison = true;
      SourceRange range{lhs->range.begin, lastEnd_};
      int h = height(lhs.get());
      lhs = seal(std::make_unique<UnaryExpr>(range, UnaryOp::IsNone, std::move(lhs)), h);
      if (negated) lhs = seal(std::make_unique<UnaryExpr>(range, UnaryOp::Not, std::move(lhs)), h + 1);
      continue;
    }
    // `T in (f16, bf16)` and `T not in (...)`: type tests, the only `in`
    // outside a for loop.
    if (minPrec <= kComparePrec && (check(Tok::KwIn) || (check(Tok::KwNot) && peek(1).is(Tok::KwIn)))) {
      Token first = peek();
      if (lastWasComparison) report(DiagId::parse_chained_compare, first.range);
      lastWasComparison = true;
      lhs = parseTypeMembership(std::move(lhs));
      continue;
    }
    const OpRow* op = findOp(peek().kind, /*prefix=*/false);
    if (!op || op->prec < minPrec) return lhs;
    Token opTok = advance();
    bool comparison = op->fixity == Fixity::Compare;
    if (comparison && lastWasComparison) report(DiagId::parse_chained_compare, opTok.range);
    lastWasComparison = comparison;
    std::optional<DepthGuard> guard;  // `a ** b ** c ...` recurses on the right
    if (op->fixity == Fixity::InfixRight) guard.emplace(*this, opTok.range);
    ExprPtr rhs = parseBinary(op->fixity == Fixity::InfixRight ? kUnaryPrec : op->prec + 1);
    guard.reset();
    SourceRange range{lhs->range.begin, rhs->range.end};
    if (auto test = typeEquality(op->binary, lhs, rhs, range)) {
      lhs = seal(std::move(test), 1);
      continue;
    }
    int h = std::max(height(lhs.get()), height(rhs.get()));
    lhs = seal(std::make_unique<BinaryExpr>(range, op->binary, opTok.range, std::move(lhs), std::move(rhs)), h);
  }
}

namespace {
const NameExpr* scalarTypeName(const Expr& e) {
  const auto* n = e.as<NameExpr>();
  return n && scalarFromName(n->name) ? n : nullptr;
}
}  // namespace

// `T == bf16`, `bf16 == T`, `T != f16`: a comparison of a name with a scalar
// type's name is a type test (sema checks that the name is a type
// parameter); anything else stays a comparison of values.
std::unique_ptr<TypeTestExpr> Parser::typeEquality(BinaryOp op, const ExprPtr& lhs, const ExprPtr& rhs,
                                                   SourceRange range) {
  if (op != BinaryOp::Eq && op != BinaryOp::Ne) return nullptr;
  const NameExpr* type = scalarTypeName(*rhs);
  const Expr* subject = lhs.get();
  if (!type) type = scalarTypeName(*lhs), subject = rhs.get();
  const auto* param = subject->as<NameExpr>();
  if (!type || !param) return nullptr;
  auto test = std::make_unique<TypeTestExpr>(range, param->name, param->range);
  test->types.push_back({type->name, type->range});
  test->negated = op == BinaryOp::Ne;
  return test;
}

// type_membership = NAME [ "not" ] "in" "(" NAME { "," NAME } [ "," ] ")"
ExprPtr Parser::parseTypeMembership(ExprPtr subject) {
  const bool negated = accept(Tok::KwNot);
  Token in = advance();
  const auto* param = subject->as<NameExpr>();
  if (!param) failWith(DiagId::parse_type_membership, SourceRange{subject->range.begin, in.range.end});
  auto test = std::make_unique<TypeTestExpr>(subject->range, param->name, param->range);
  test->negated = negated;
  test->isMembership = true;
  if (!check(Tok::LParen)) failWith(DiagId::parse_type_membership, SourceRange{subject->range.begin, in.range.end});
  advance();
  do {
    if (check(Tok::RParen)) break;
    Token name = expect(Tok::Name, "a type name");
    test->types.push_back({std::string(name.text), name.range});
  } while (accept(Tok::Comma));
  expect(Tok::RParen, "',' or ')'");
  if (test->types.empty()) failWith(DiagId::parse_type_membership, SourceRange{subject->range.begin, lastEnd_});
  test->range.end = lastEnd_;
  return seal(std::move(test), 1);
}

// operand(p) = PREFIX_OP binary(prec(PREFIX_OP))   if prec(PREFIX_OP) >= p
//            | postfix
ExprPtr Parser::parseOperand(int minPrec) {
  const OpRow* op = findOp(peek().kind, /*prefix=*/true);
  if (!op || op->prec < minPrec) return parsePostfix();
  Token opTok = advance();
  DepthGuard guard(*this, opTok.range);
  ExprPtr operand = parseBinary(op->prec);
  SourceRange range{opTok.range.begin, operand->range.end};
  int h = height(operand.get());
  return seal(std::make_unique<UnaryExpr>(range, op->unary, std::move(operand)), h);
}

// postfix = primary { "(" args ")" | "[" expr { "," expr } [ "," ] "]" }
ExprPtr Parser::parsePostfix() {
  ExprPtr e = parsePrimary();
  for (;;) {
    if (check(Tok::LParen)) e = parseCall(std::move(e));
    else if (check(Tok::LBracket)) e = parseIndex(std::move(e));
    else return e;
  }
}

ExprPtr Parser::parseCall(ExprPtr callee) {
  auto* name = callee->as<NameExpr>();
  if (!name) failWith(DiagId::parse_bad_callee, callee->range);
  auto call = std::make_unique<CallExpr>(callee->range, name->name, name->range);
  parseArgs(call->args, call->kwargs);
  call->range.end = lastEnd_;
  int h = maxHeight(call->args);
  for (const auto& kw : call->kwargs) h = std::max(h, height(kw.value.get()));
  return seal(std::move(call), h);
}

ExprPtr Parser::parseIndex(ExprPtr base) {
  Token open = advance();
  DepthGuard guard(*this, open.range);
  SourceLoc begin = base->range.begin;
  int h = height(base.get());
  auto index = std::make_unique<IndexExpr>(base->range, std::move(base));
  do index->indices.push_back(parseExpr());
  while (accept(Tok::Comma) && !check(Tok::RBracket));
  expect(Tok::RBracket, "',' or ']'");
  index->range = SourceRange{begin, lastEnd_};
  // Measured before the call: argument evaluation order is unspecified, and
  // `index` is moved from in another argument.
  int indexHeight = std::max(h, maxHeight(index->indices));
  return seal(std::move(index), indexHeight);
}

// args = "(" [ arg { "," arg } [ "," ] ] ")"
// arg  = NAME "=" expr | expr
void Parser::parseArgs(std::vector<ExprPtr>& args, std::vector<KeywordArg>& kwargs) {
  Token open = advance();
  DepthGuard guard(*this, open.range);
  while (!check(Tok::RParen)) {
    if (check(Tok::Name) && peek(1).is(Tok::Assign)) {
      Token name = advance();
      advance();
      KeywordArg kw{std::string(name.text), name.range, parseExpr()};
      for (const auto& prev : kwargs)
        if (prev.name == kw.name) report(DiagId::parse_duplicate_keyword, name.range, kw.name);
      kwargs.push_back(std::move(kw));
    } else {
      ExprPtr arg = parseExpr();
      if (check(Tok::Assign)) failWith(DiagId::parse_keyword_arg, arg->range);
      if (!kwargs.empty()) report(DiagId::parse_positional_after_keyword, arg->range);
      args.push_back(std::move(arg));
    }
    if (!accept(Tok::Comma)) break;
  }
  expect(Tok::RParen, "',' or ')'");
}

// primary = INT | FLOAT | "True" | "False" | NAME | "(" expr_list ")" | list
ExprPtr Parser::parsePrimary() {
  const Token& t = peek();
  switch (t.kind) {
    case Tok::Int: {
      Token tok = advance();
      return std::make_unique<IntLitExpr>(tok.range, tok.intValue, std::string(tok.text));
    }
    case Tok::Float: {
      Token tok = advance();
      return std::make_unique<FloatLitExpr>(tok.range, tok.floatValue, std::string(tok.text));
    }
    case Tok::KwTrue:
    case Tok::KwFalse: {
      Token tok = advance();
      return std::make_unique<BoolLitExpr>(tok.range, tok.is(Tok::KwTrue));
    }
    case Tok::Name: {
      Token tok = advance();
      return std::make_unique<NameExpr>(tok.range, std::string(tok.text));
    }
    case Tok::String: failWith(DiagId::parse_string_position, t.range);
    case Tok::LParen: {
      if (peek(1).is(Tok::Name) && peek(2).is(Tok::RParen)) {
        // `(float)x`: a C cast, never valid Spindle (`(f32)(x)` is a call).
        Tok next = peek(3).kind;
        bool operand =
            next == Tok::Name || next == Tok::Int || next == Tok::Float || next == Tok::KwTrue || next == Tok::KwFalse;
        if (operand && (scalarFromName(peek(1).text) || !spindleTypeFor(peek(1).text).empty())) return parseCCast();
      }
      Token open = advance();
      DepthGuard guard(*this, open.range);
      ExprPtr e = parseExprList(/*targets=*/false);  // `(a, b)`: a tuple
      if (e->as<TupleExpr>()) expect(Tok::RParen, "',' or ')'");
      else expect(Tok::RParen);
      // The node's range takes in the parentheses, so carets cover them.
      e->range = SourceRange{open.range.begin, lastEnd_};
      return e;
    }
    case Tok::LBracket: return parseList();
    default: fail(t, "an expression");
  }
}

// c_cast = "(" TYPE ")" postfix: reported, and parsed as the call TYPE(postfix)
// with TYPE's Spindle spelling, so the rest of the line is checked.
ExprPtr Parser::parseCCast() {
  Token open = advance();
  Token type = advance();
  advance();  // ")"
  ExprPtr operand = parsePostfix();
  std::string spindle(scalarFromName(type.text) ? type.text : spindleTypeFor(type.text));
  SourceRange range{open.range.begin, operand->range.end};
  std::string_view operandText =
      std::string_view(file_->text())
          .substr(operand->range.begin.offset, operand->range.end.offset - operand->range.begin.offset);
  report(DiagId::parse_c_cast, range, type.text, spindle, operandText);
  auto call = std::make_unique<CallExpr>(range, spindle, type.range);
  int h = height(operand.get());
  call->args.push_back(std::move(operand));
  return seal(std::move(call), h);
}

// list = "[" [ expr { "," expr } [ "," ] ] "]"
ExprPtr Parser::parseList() {
  Token open = advance();
  DepthGuard guard(*this, open.range);
  auto list = std::make_unique<ListExpr>(open.range);
  while (!check(Tok::RBracket)) {
    list->elements.push_back(parseExpr());
    if (!accept(Tok::Comma)) break;
  }
  expect(Tok::RBracket, "',' or ']'");
  list->range.end = lastEnd_;
  int h = maxHeight(list->elements);
  return seal(std::move(list), h);
}

}  // namespace

std::unique_ptr<SourceModule> parseModule(std::shared_ptr<const SourceFile> file, DiagnosticEngine& diags) {
  try {
    Parser parser(file, diags);
    return parser.parseModule();
  } catch (const FatalDiagnostic&) {
    // Only the lexer's constructor can get here (the error limit, reached by
    // earlier files sharing the engine).
    auto empty = std::make_unique<SourceModule>();
    empty->file = file;
    return empty;
  }
}

}  // namespace spindle
