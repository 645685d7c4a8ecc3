// The Spindle AST. Plain structs owned by unique_ptr; a `kind` tag plus
// as<T>() for dispatch (switch over the kind, like Clang's StmtClass). Node
// kinds are listed once in the X-macros below, which also produce their names
// for the AST dump.
//
// Every node keeps the SourceRange it came from. Fields under "filled by sema"
// start empty and are set by semantic analysis; the parser never reads them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "frontend/source.h"
#include "spindle/types.h"

namespace spindle {

struct Symbol;  // sema.h

#define SPINDLE_EXPR_KINDS(X) \
  X(IntLit)                   \
  X(FloatLit)                 \
  X(BoolLit)                  \
  X(Name)                     \
  X(Unary)                    \
  X(Binary)                   \
  X(Ternary)                  \
  X(Call)                     \
  X(Index)                    \
  X(List)                     \
  X(Tuple)                    \
  X(TypeTest)

#define SPINDLE_STMT_KINDS(X) \
  X(Assign)                   \
  X(AugAssign)                \
  X(ExprStmt)                 \
  X(If)                       \
  X(While)                    \
  X(For)                      \
  X(Break)                    \
  X(Continue)                 \
  X(Pass)                     \
  X(Return)                   \
  X(Nonlocal)                 \
  X(FuncDef)                  \
  X(Assert)

enum class ExprKind {
#define X(K) K,
  SPINDLE_EXPR_KINDS(X)
#undef X
};
enum class StmtKind {
#define X(K) K,
  SPINDLE_STMT_KINDS(X)
#undef X
};
const char* exprKindName(ExprKind k);
const char* stmtKindName(StmtKind k);

// Operators, with their source spelling. Precedence lives in the parser's
// one table, not here.
#define SPINDLE_BINARY_OPS(X) \
  X(Add, "+")                 \
  X(Sub, "-")                 \
  X(Mul, "*")                 \
  X(Div, "/")                 \
  X(FloorDiv, "//")           \
  X(Mod, "%")                 \
  X(Pow, "**")                \
  X(BitAnd, "&")              \
  X(BitOr, "|")               \
  X(BitXor, "^")              \
  X(Shl, "<<")                \
  X(Shr, ">>")                \
  X(Lt, "<")                  \
  X(Le, "<=")                 \
  X(Gt, ">")                  \
  X(Ge, ">=")                 \
  X(Eq, "==")                 \
  X(Ne, "!=")                 \
  X(And, "and")               \
  X(Or, "or")

enum class BinaryOp {
#define X(E, S) E,
  SPINDLE_BINARY_OPS(X)
#undef X
};
// IsNone: `x is None`, x an optional tensor parameter (`x is not None` is
// Not(IsNone(x))); constant once a specialization says whether x is present.
enum class UnaryOp { Neg, Pos, Not, BitNot, IsNone };
const char* binaryOpSpelling(BinaryOp op);
const char* unaryOpSpelling(UnaryOp op);
bool isComparison(BinaryOp op);
bool isLogical(BinaryOp op);

// ---------------------------------------------------------------------------
// Expressions

struct Expr {
  ExprKind kind;
  SourceRange range;
  // Filled by sema: the scalar type of the value (Invalid for a tensor,
  // scratch buffer or type name used as a value).
  ScalarType type = ScalarType::Invalid;

  explicit Expr(ExprKind k, SourceRange r) : kind(k), range(r) {}
  virtual ~Expr() = default;
  template <typename T>
  T* as() {
    return kind == T::kKind ? static_cast<T*>(this) : nullptr;
  }
  template <typename T>
  const T* as() const {
    return kind == T::kKind ? static_cast<const T*>(this) : nullptr;
  }
};
using ExprPtr = std::unique_ptr<Expr>;

struct IntLitExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::IntLit;
  uint64_t value;    // decimal or 0x; the sign is a Unary Neg around it
  std::string text;  // as written, for printing
  IntLitExpr(SourceRange r, uint64_t v, std::string t) : Expr(kKind, r), value(v), text(std::move(t)) {}
};

struct FloatLitExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::FloatLit;
  double value;
  std::string text;  // as written ("1e-5", ".5", "inf", "nan")
  FloatLitExpr(SourceRange r, double v, std::string t) : Expr(kKind, r), value(v), text(std::move(t)) {}
};

struct BoolLitExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::BoolLit;
  bool value;
  BoolLitExpr(SourceRange r, bool v) : Expr(kKind, r), value(v) {}
};

struct NameExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Name;
  std::string name;
  Symbol* symbol = nullptr;  // filled by sema
  NameExpr(SourceRange r, std::string n) : Expr(kKind, r), name(std::move(n)) {}
};

struct UnaryExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Unary;
  UnaryOp op;
  ExprPtr operand;
  UnaryExpr(SourceRange r, UnaryOp o, ExprPtr e) : Expr(kKind, r), op(o), operand(std::move(e)) {}
};

// Arithmetic, bitwise, comparison and the logical `and`/`or`.
struct BinaryExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Binary;
  BinaryOp op;
  SourceRange opRange;
  ExprPtr lhs, rhs;
  int64_t exponent = 0;  // `**` only: the exponent's value, filled by sema (a compile-time integer)
  BinaryExpr(SourceRange r, BinaryOp o, SourceRange opr, ExprPtr l, ExprPtr rr)
      : Expr(kKind, r), op(o), opRange(opr), lhs(std::move(l)), rhs(std::move(rr)) {}
};

// `thenValue if cond else elseValue`
struct TernaryExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Ternary;
  ExprPtr cond, thenValue, elseValue;
  TernaryExpr(SourceRange r, ExprPtr c, ExprPtr t, ExprPtr e)
      : Expr(kKind, r), cond(std::move(c)), thenValue(std::move(t)), elseValue(std::move(e)) {}
};

struct KeywordArg {
  std::string name;
  SourceRange nameRange;
  ExprPtr value;
};

// Every call names its callee: builtins, casts (`f32(v)`, `T(v)`), module
// defs and closures. Spindle has no first-class functions.
struct CallExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Call;
  std::string callee;
  SourceRange calleeRange;
  std::vector<ExprPtr> args;
  std::vector<KeywordArg> kwargs;  // only `a=` of geometry builtins
  Symbol* symbol = nullptr;        // filled by sema: def/closure, or null for builtins/casts
  CallExpr(SourceRange r, std::string c, SourceRange cr) : Expr(kKind, r), callee(std::move(c)), calleeRange(cr) {}
};

// `x[i, j]`: one index per dimension of a tensor or scratch buffer.
struct IndexExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Index;
  ExprPtr base;
  std::vector<ExprPtr> indices;
  IndexExpr(SourceRange r, ExprPtr b) : Expr(kKind, r), base(std::move(b)) {}
};

// `[a, b]`: only as the shape argument of shared()/local().
struct ListExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::List;
  std::vector<ExprPtr> elements;
  explicit ListExpr(SourceRange r) : Expr(kKind, r) {}
};

// `a, b` or `(a, b)`: two or more values. Sema allows one only as a
// return value and on either side of an unpacking assignment (docs/language.md
// 5.11); it has no scalar type of its own.
struct TupleExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Tuple;
  std::vector<ExprPtr> elements;
  explicit TupleExpr(SourceRange r) : Expr(kKind, r) {}
};

// `T == bf16`, `T != f16`, `T in (f16, bf16)`, `T not in (f16, bf16)`: a
// kernel's type parameter tested against scalar types (docs/language.md
// 3.5). Its value is known once the kernel's types are bound: a branch on it
// is pruned at specialization, and it prints as that value.
struct TypeTestExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::TypeTest;
  struct TypeName {
    std::string name;
    SourceRange range;
  };
  std::string param;
  SourceRange paramRange;
  std::vector<TypeName> types;       // one for `==`/`!=`, the list for `in`
  bool negated = false;              // `!=` or `not in`
  bool isMembership = false;         // written with `in` (for messages and dumps)
  Symbol* paramSymbol = nullptr;     // filled by sema: the type parameter
  std::vector<ScalarType> resolved;  // filled by sema: `types`, in order
  bool value = false;                // filled by typing: its value under the binding typed last
  TypeTestExpr(SourceRange r, std::string p, SourceRange pr) : Expr(kKind, r), param(std::move(p)), paramRange(pr) {}
};

// ---------------------------------------------------------------------------
// Types as written

// `f32`, `T`, `f32[M, N]`, `T[N] strided`. Dims are IntLit or Name exprs
// (a const or a dim symbol; sema decides which).
struct TypeRef {
  SourceRange range;
  std::string elemName;
  SourceRange elemRange;
  bool isTensor = false;
  std::vector<ExprPtr> dims;
  bool strided = false;
  bool optional = false;  // `T[N] | None`: the caller may pass no tensor
  // `tuple[T1, T2, ...]`, only as a function's return type (the parser
  // refuses it elsewhere): elemName is "tuple" and each element a scalar
  // type or a type parameter as written.
  bool isTuple = false;
  std::vector<TypeRef> tupleElements;
};

// ---------------------------------------------------------------------------
// Statements

struct Stmt {
  StmtKind kind;
  SourceRange range;
  explicit Stmt(StmtKind k, SourceRange r) : kind(k), range(r) {}
  virtual ~Stmt() = default;
  template <typename T>
  T* as() {
    return kind == T::kKind ? static_cast<T*>(this) : nullptr;
  }
  template <typename T>
  const T* as() const {
    return kind == T::kKind ? static_cast<const T*>(this) : nullptr;
  }
};
using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

// `target = value` or `name: TYPE = value`. target is a Name or an Index,
// or for an unpacking (`a, x[i] = b, c`, `m, s = stats(v)`) a Tuple of them.
struct AssignStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Assign;
  ExprPtr target;
  std::unique_ptr<TypeRef> annotation;  // optional
  ExprPtr value;
  bool declares = false;  // filled by sema: this assignment introduces the local (one of them, unpacking)
  bool isConst = false;   // `const NAME [: TYPE] = value` in a kernel body
  // Filled by sema, unpacking only: the locals this assignment introduces.
  std::vector<const Symbol*> declaredLocals;
  AssignStmt(SourceRange r, ExprPtr t, ExprPtr v) : Stmt(kKind, r), target(std::move(t)), value(std::move(v)) {}
};

// `target OP= value`
struct AugAssignStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::AugAssign;
  ExprPtr target;
  BinaryOp op;
  ExprPtr value;
  AugAssignStmt(SourceRange r, ExprPtr t, BinaryOp o, ExprPtr v)
      : Stmt(kKind, r), target(std::move(t)), op(o), value(std::move(v)) {}
};

struct ExprStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::ExprStmt;
  ExprPtr expr;
  ExprStmt(SourceRange r, ExprPtr e) : Stmt(kKind, r), expr(std::move(e)) {}
};

// `elif` is an If alone in the else block, with isElif set on it.
struct IfStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::If;
  ExprPtr cond;
  Block thenBody;
  Block elseBody;
  bool isElif = false;
  IfStmt(SourceRange r, ExprPtr c) : Stmt(kKind, r), cond(std::move(c)) {}
};

struct WhileStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::While;
  ExprPtr cond;
  Block body;
  WhileStmt(SourceRange r, ExprPtr c) : Stmt(kKind, r), cond(std::move(c)) {}
};

// `for var in range(args...)` / `static_range(args...)`; 1 to 3 args.
struct ForStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::For;
  std::string var;
  SourceRange varRange;
  bool isStatic = false;
  std::vector<ExprPtr> rangeArgs;
  Block body;
  Symbol* symbol = nullptr;  // filled by sema
  // Filled by typing (docs/language.md 5.8): the step's value when it is a
  // compile-time integer, else 0 (a run-time step, evaluated once); its
  // sign, when known (+1 or -1; 2: not negative, an unsigned run-time step;
  // 0: only known at run time); and whether
  // `i += step` provably stays within the variable's type (else the printer
  // advances through __spn_range_next, which stops at `stop`).
  int64_t step = 1;
  int stepSign = 1;
  bool plainIncrement = true;
  // `for r, c, v in elements(acc[i, j])` (docs/language.md 8.11): the
  // accumulator tile whose elements this lane holds, unrolled per element;
  // `var` is r and `elementVars` are c and v (symbols filled by sema).
  // rangeArgs is empty then.
  ExprPtr elementsOf;
  // `elements(acc[i, j], m[i], ...)`: row fragments whose values at row r
  // the loop reads (one name each after v).
  std::vector<ExprPtr> elementRows;
  std::vector<std::string> elementVars;
  std::vector<SourceRange> elementVarRanges;
  std::vector<Symbol*> elementSymbols;
  ForStmt(SourceRange r, std::string v, SourceRange vr) : Stmt(kKind, r), var(std::move(v)), varRange(vr) {}
};

struct BreakStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Break;
  explicit BreakStmt(SourceRange r) : Stmt(kKind, r) {}
};
struct ContinueStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Continue;
  explicit ContinueStmt(SourceRange r) : Stmt(kKind, r) {}
};
struct PassStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Pass;
  explicit PassStmt(SourceRange r) : Stmt(kKind, r) {}
};
struct ReturnStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Return;
  ExprPtr value;  // optional
  ReturnStmt(SourceRange r, ExprPtr v) : Stmt(kKind, r), value(std::move(v)) {}
};

// `assert cond` or `assert cond, "message"`: checked only in checked builds
// (Specialization::checked); compiled out otherwise (docs/language.md 5.12).
struct AssertStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Assert;
  ExprPtr cond;
  std::string message;  // decoded; empty when none is given
  AssertStmt(SourceRange r, ExprPtr c, std::string m) : Stmt(kKind, r), cond(std::move(c)), message(std::move(m)) {}
};

struct NonlocalStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Nonlocal;
  std::vector<std::string> names;
  std::vector<SourceRange> nameRanges;
  explicit NonlocalStmt(SourceRange r) : Stmt(kKind, r) {}
};

struct Param {
  std::string name;
  SourceRange range;  // the whole `name: TYPE`
  SourceRange nameRange;
  TypeRef type;
  Symbol* symbol = nullptr;  // filled by sema
};

// A `def`: at module level a device function (on scalars and tensors);
// nested inside a kernel or def, a closure.
struct FunctionDecl {
  std::string name;
  SourceRange range;  // the whole definition
  SourceRange nameRange;
  std::vector<Param> params;
  std::unique_ptr<TypeRef> returnType;  // optional
  Block body;
  Symbol* symbol = nullptr;  // filled by sema
};

struct FuncDefStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::FuncDef;
  std::unique_ptr<FunctionDecl> func;
  FuncDefStmt(SourceRange r, std::unique_ptr<FunctionDecl> f) : Stmt(kKind, r), func(std::move(f)) {}
};

// ---------------------------------------------------------------------------
// Module-level declarations

// `const NAME = value` / `const NAME: TYPE = value`
struct ConstDecl {
  std::string name;
  SourceRange range;
  SourceRange nameRange;
  std::unique_ptr<TypeRef> type;  // optional
  ExprPtr value;
  Symbol* symbol = nullptr;  // filled by sema
};

struct Decorator {
  std::string name;  // "grid", "block", "static"
  SourceRange range;
  std::vector<ExprPtr> args;  // for @static: NameExprs
  // Only @tune takes keyword arguments (`BLOCK=[128, 256]`, `key=[N]`,
  // `where=...`, `bucket=...`); the parser rejects them elsewhere.
  std::vector<KeywordArg> kwargs;
};

// An entry of a kernel's brackets: a type parameter `T`, or a compile-time
// parameter `FLAG: bool`, `W: i32`, `ACT: fn` (kindName "bool", "i32", "fn").
struct TypeParam {
  std::string name;
  SourceRange range;
  std::string kindName;  // empty for a type parameter
  SourceRange kindRange;
  bool isTypeParam() const { return kindName.empty(); }
};

// `@grid(...) @block(...) @static(...) kernel name[T](params): body`
struct KernelDecl {
  std::string name;
  SourceRange range;
  SourceRange nameRange;
  std::vector<Decorator> decorators;  // in source order
  std::vector<TypeParam> typeParams;
  std::vector<Param> params;
  Block body;
  const Decorator* findDecorator(const std::string& n) const {
    for (const auto& d : decorators)
      if (d.name == n) return &d;
    return nullptr;
  }
};

enum class DeclKind { Const, Function, Kernel };

struct TopLevelDecl {
  DeclKind kind;
  std::unique_ptr<ConstDecl> constDecl;
  std::unique_ptr<FunctionDecl> function;
  std::unique_ptr<KernelDecl> kernel;
};

// The AST of one .spn file. (Named SourceModule, not Module: spindle::Module
// is the runtime's loaded module.)
struct SourceModule {
  std::shared_ptr<const SourceFile> file;
  std::vector<TopLevelDecl> decls;  // in source order
};

}  // namespace spindle
