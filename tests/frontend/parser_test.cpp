// Parser: every construct of docs/language.md, operator precedence and
// associativity, source ranges, the AST dump, and error recovery.
#include "frontend/ast_dump.h"
#include "frontend_test_util.h"

namespace spindle::test {
namespace {

// ---------------------------------------------------------------------------
// Precedence and associativity (Python's order)

TEST(ParserPrecedence, Arithmetic) {
  EXPECT_EQ(exprOf("a + b * c"), "(+ a (* b c))");
  EXPECT_EQ(exprOf("a * b + c"), "(+ (* a b) c)");
  EXPECT_EQ(exprOf("a - b - c"), "(- (- a b) c)");
  EXPECT_EQ(exprOf("a / b * c"), "(* (/ a b) c)");
  EXPECT_EQ(exprOf("a // b % c"), "(% (// a b) c)");
  EXPECT_EQ(exprOf("(a + b) * c"), "(* (+ a b) c)");
}

TEST(ParserPrecedence, Power) {
  EXPECT_EQ(exprOf("a ** b ** c"), "(** a (** b c))");  // right associative
  EXPECT_EQ(exprOf("-x ** 2"), "(- (** x 2))");         // binds tighter than unary minus on its left
  EXPECT_EQ(exprOf("2 ** -1"), "(** 2 (- 1))");         // but takes a unary operand on its right
  EXPECT_EQ(exprOf("a * b ** c"), "(* a (** b c))");
  EXPECT_EQ(exprOf("a ** b * c"), "(* (** a b) c)");
  EXPECT_EQ(exprOf("f(x)[i] ** 2"), "(** (index (call f x) i) 2)");
}

TEST(ParserPrecedence, Unary) {
  EXPECT_EQ(exprOf("-a * b"), "(* (- a) b)");
  EXPECT_EQ(exprOf("a * -b"), "(* a (- b))");
  EXPECT_EQ(exprOf("~a + -b * +c"), "(+ (~ a) (* (- b) (+ c)))");
  EXPECT_EQ(exprOf("- - a"), "(- (- a))");
  EXPECT_EQ(exprOf("-1"), "(- 1)");  // negative literals are Neg around a literal
  EXPECT_EQ(exprOf("-inf"), "(- inf)");
}

TEST(ParserPrecedence, Bitwise) {
  EXPECT_EQ(exprOf("a | b ^ c & d"), "(| a (^ b (& c d)))");
  EXPECT_EQ(exprOf("a & b | c ^ d"), "(| (& a b) (^ c d))");
  EXPECT_EQ(exprOf("a << 1 + 2"), "(<< a (+ 1 2))");
  EXPECT_EQ(exprOf("a >> b << c"), "(<< (>> a b) c)");
  EXPECT_EQ(exprOf("a & b << c"), "(& a (<< b c))");
}

TEST(ParserPrecedence, ComparisonsAndLogic) {
  EXPECT_EQ(exprOf("a & b == c"), "(== (& a b) c)");  // comparisons bind looser than bit operators
  EXPECT_EQ(exprOf("a < b | c"), "(< a (| b c))");
  EXPECT_EQ(exprOf("not a == b"), "(not (== a b))");
  EXPECT_EQ(exprOf("not a and b"), "(and (not a) b)");
  EXPECT_EQ(exprOf("a or b and c"), "(or a (and b c))");
  EXPECT_EQ(exprOf("a and b or c and d"), "(or (and a b) (and c d))");
  EXPECT_EQ(exprOf("a or b or c"), "(or (or a b) c)");
  EXPECT_EQ(exprOf("not not a"), "(not (not a))");
  for (const char* op : {"<", "<=", ">", ">=", "==", "!="})
    EXPECT_EQ(exprOf(fmt::format("a + 1 {} b * 2", op)), fmt::format("({} (+ a 1) (* b 2))", op));
  EXPECT_EQ(exprOf("(a < b) < c"), "(< (< a b) c)");  // parenthesized: not a chain
}

TEST(ParserPrecedence, TypeTests) {
  EXPECT_EQ(exprOf("T == bf16"), "(type== T bf16)");
  EXPECT_EQ(exprOf("bf16 == T"), "(type== T bf16)");
  EXPECT_EQ(exprOf("T != f16"), "(type!= T f16)");
  EXPECT_EQ(exprOf("T in (f16, bf16)"), "(type-in T f16 bf16)");
  EXPECT_EQ(exprOf("T in (f16,)"), "(type-in T f16)");
  EXPECT_EQ(exprOf("T not in (f32, f64)"), "(type-not-in T f32 f64)");
  EXPECT_EQ(exprOf("not T in (f16, bf16)"), "(not (type-in T f16 bf16))");
  EXPECT_EQ(exprOf("T == f16 and N > 4"), "(and (type== T f16) (> N 4))");
  EXPECT_EQ(exprOf("a == b"), "(== a b)");                   // no type name: a comparison of values
  EXPECT_EQ(exprOf("x[0] == f32"), "(== (index x 0) f32)");  // sema: 'f32' is not a value
  auto p = parse("const X = T in (f16, bf16) in (f32,)\n");
  EXPECT_EQ(diagList(p->diags), std::vector<std::string>{"1:28 parse-chained-compare"});
}

TEST(ParserPrecedence, Ternary) {
  EXPECT_EQ(exprOf("a if c else b"), "(? a c b)");
  EXPECT_EQ(exprOf("a if b else c if d else e"), "(? a b (? c d e))");
  EXPECT_EQ(exprOf("a or b if c and d else e + 1"), "(? (or a b) (and c d) (+ e 1))");
  EXPECT_EQ(exprOf("(a if b else c) * 2"), "(* (? a b c) 2)");
  EXPECT_EQ(exprOf("not a if b else c"), "(? (not a) b c)");
}

TEST(ParserPrecedence, Postfix) {
  EXPECT_EQ(exprOf("x[i, j]"), "(index x i j)");
  EXPECT_EQ(exprOf("x[i + 1, j * 2,]"), "(index x (+ i 1) (* j 2))");
  EXPECT_EQ(exprOf("f(a, b)[0]"), "(index (call f a b) 0)");
  EXPECT_EQ(exprOf("f()"), "(call f)");
  EXPECT_EQ(exprOf("f(g(h(x)),)"), "(call f (call g (call h x)))");
  EXPECT_EQ(exprOf("-x[0]"), "(- (index x 0))");
}

TEST(ParserErrors, ChainedComparisons) {
  // Reported once per chain, at its second operator.
  const std::pair<const char*, const char*> cases[] = {
      {"a < b < c", "1:17"}, {"a == b != c", "1:18"}, {"a < b <= c < d", "1:17"}, {"(a < b < c)", "1:18"}};
  for (const auto& [text, at] : cases) {
    auto p = parse(std::string("const X = ") + text + "\n");
    EXPECT_EQ(diagList(p->diags), std::vector<std::string>{std::string(at) + " parse-chained-compare"}) << text;
  }
}

// ---------------------------------------------------------------------------
// Literals

TEST(ParserLiterals, Values) {
  auto p = parseOk(
      "const A = 0x1F\nconst B = 1e-5\nconst C = .5\nconst D = 1.\nconst E = True\n"
      "const F = False\nconst G = inf\nconst H = nan\nconst I = 18446744073709551615\n");
  const auto& d = p->module->decls;
  ASSERT_EQ(d.size(), 9u);
  EXPECT_EQ(d[0].constDecl->value->as<IntLitExpr>()->value, 31u);
  EXPECT_EQ(d[0].constDecl->value->as<IntLitExpr>()->text, "0x1F");
  EXPECT_DOUBLE_EQ(d[1].constDecl->value->as<FloatLitExpr>()->value, 1e-5);
  EXPECT_EQ(d[1].constDecl->value->as<FloatLitExpr>()->text, "1e-5");
  EXPECT_DOUBLE_EQ(d[2].constDecl->value->as<FloatLitExpr>()->value, 0.5);
  EXPECT_EQ(d[3].constDecl->value->as<FloatLitExpr>()->text, "1.");
  EXPECT_TRUE(d[4].constDecl->value->as<BoolLitExpr>()->value);
  EXPECT_FALSE(d[5].constDecl->value->as<BoolLitExpr>()->value);
  EXPECT_EQ(d[6].constDecl->value->as<FloatLitExpr>()->text, "inf");
  EXPECT_TRUE(std::isinf(d[6].constDecl->value->as<FloatLitExpr>()->value));
  EXPECT_EQ(d[7].constDecl->value->as<FloatLitExpr>()->text, "nan");
  EXPECT_EQ(d[8].constDecl->value->as<IntLitExpr>()->value, UINT64_MAX);
}

// ---------------------------------------------------------------------------
// SourceModule-level declarations

TEST(ParserDecls, Consts) {
  auto p = parseOk("const BLOCK = 256\nconst EPS: f32 = 1e-5\nconst TWO_BLOCKS = BLOCK * 2\n");
  const auto& d = p->module->decls;
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].kind, DeclKind::Const);
  EXPECT_EQ(d[0].constDecl->name, "BLOCK");
  EXPECT_EQ(d[0].constDecl->type, nullptr);
  ASSERT_NE(d[1].constDecl->type, nullptr);
  EXPECT_EQ(d[1].constDecl->type->elemName, "f32");
  EXPECT_FALSE(d[1].constDecl->type->isTensor);
  EXPECT_EQ(sexpr(*d[2].constDecl->value), "(* BLOCK 2)");
}

TEST(ParserDecls, ModuleDef) {
  auto p = parseOk(
      "def gelu(v: f32) -> f32:\n"
      "    return 0.5 * v * (1.0 + tanh(0.7978845608 * (v + 0.044715 * v * v * v)))\n"
      "def twice(a: i32, b: i64,) -> i64:\n"
      "    return gelu(a) + b\n"
      "def nothing():\n"
      "    pass\n");
  const auto& d = p->module->decls;
  ASSERT_EQ(d.size(), 3u);
  const FunctionDecl& gelu = *d[0].function;
  EXPECT_EQ(d[0].kind, DeclKind::Function);
  EXPECT_EQ(gelu.name, "gelu");
  ASSERT_EQ(gelu.params.size(), 1u);
  EXPECT_EQ(gelu.params[0].name, "v");
  EXPECT_EQ(gelu.params[0].type.elemName, "f32");
  ASSERT_NE(gelu.returnType, nullptr);
  EXPECT_EQ(gelu.returnType->elemName, "f32");
  ASSERT_EQ(gelu.body.size(), 1u);
  auto* ret = gelu.body[0]->as<ReturnStmt>();
  ASSERT_NE(ret, nullptr);
  EXPECT_EQ(sexpr(*ret->value), "(* (* 0.5 v) (+ 1.0 (call tanh (* 0.7978845608 (+ v (* (* (* 0.044715 v) v) v))))))");
  EXPECT_EQ(d[1].function->params.size(), 2u);
  EXPECT_EQ(d[1].function->params[1].type.elemName, "i64");
  EXPECT_EQ(d[2].function->returnType, nullptr);
  EXPECT_TRUE(d[2].function->params.empty());
}

TEST(ParserDecls, KernelWithDecorators) {
  auto p = parseOk(
      "@grid(M)\n"
      "@block(BLOCK)\n"
      "@static(N)\n"
      "kernel softmax(x: f32[M, N], y: f32[M, N], scale: f32):\n"
      "    pass\n");
  ASSERT_EQ(p->module->decls.size(), 1u);
  const KernelDecl& k = *p->module->decls[0].kernel;
  EXPECT_EQ(k.name, "softmax");
  ASSERT_EQ(k.decorators.size(), 3u);
  EXPECT_EQ(k.decorators[0].name, "grid");
  EXPECT_EQ(k.decorators[1].name, "block");
  EXPECT_EQ(k.decorators[2].name, "static");
  EXPECT_EQ(sexpr(*k.decorators[1].args[0]), "BLOCK");
  ASSERT_NE(k.findDecorator("static"), nullptr);
  EXPECT_EQ(k.decorators[2].args[0]->as<NameExpr>()->name, "N");
  ASSERT_EQ(k.params.size(), 3u);
  const TypeRef& x = k.params[0].type;
  EXPECT_TRUE(x.isTensor);
  EXPECT_FALSE(x.strided);
  EXPECT_EQ(x.elemName, "f32");
  ASSERT_EQ(x.dims.size(), 2u);
  EXPECT_EQ(x.dims[0]->as<NameExpr>()->name, "M");
  EXPECT_EQ(x.dims[1]->as<NameExpr>()->name, "N");
  EXPECT_FALSE(k.params[2].type.isTensor);
  // Ranges: the kernel starts at `kernel`, a param covers `name: TYPE`.
  EXPECT_EQ(k.range.begin.line, 4u);
  EXPECT_EQ(k.range.begin.col, 1u);
  EXPECT_EQ(k.nameRange.begin.col, 8u);
  EXPECT_EQ(k.params[0].range.begin.col, 16u);
  EXPECT_EQ(k.params[0].range.end.col, 28u);
  EXPECT_EQ(k.params[0].type.range.begin.col, 19u);
  EXPECT_EQ(k.decorators[0].range.begin.line, 1u);
  EXPECT_EQ(k.decorators[0].range.end.col, 9u);
}

TEST(ParserDecls, DecoratorArgumentCounts) {
  auto p =
      parseOk("@grid(cdiv(N, 256), B, 1)\n@block(16, 16)\n@static(M, N, K)\nkernel k(x: f32[M, N, K]):\n    pass\n");
  const KernelDecl& k = *p->module->decls[0].kernel;
  EXPECT_EQ(k.decorators[0].args.size(), 3u);
  EXPECT_EQ(sexpr(*k.decorators[0].args[0]), "(call cdiv N 256)");
  EXPECT_EQ(k.decorators[1].args.size(), 2u);
  EXPECT_EQ(k.decorators[2].args.size(), 3u);
}

TEST(ParserDecls, GenericStridedAndIntDims) {
  auto p = parseOk(
      "kernel axpy[T](x: T[N], y: T[N], a: f32):\n    pass\n"
      "kernel pair[T, U](x: T[4, N] strided, y: U[1, 2, 3, 4, 5, 6, 7, 8]):\n    pass\n");
  const KernelDecl& axpy = *p->module->decls[0].kernel;
  ASSERT_EQ(axpy.typeParams.size(), 1u);
  EXPECT_EQ(axpy.typeParams[0].name, "T");
  EXPECT_EQ(axpy.params[0].type.elemName, "T");
  const KernelDecl& pair = *p->module->decls[1].kernel;
  ASSERT_EQ(pair.typeParams.size(), 2u);
  EXPECT_EQ(pair.typeParams[1].name, "U");
  const TypeRef& x = pair.params[0].type;
  EXPECT_TRUE(x.strided);
  EXPECT_EQ(x.dims[0]->as<IntLitExpr>()->value, 4u);
  EXPECT_EQ(x.dims[1]->as<NameExpr>()->name, "N");
  EXPECT_EQ(x.range.end.col, 37u);  // takes in `strided`
  EXPECT_EQ(pair.params[1].type.dims.size(), 8u);
  EXPECT_FALSE(pair.params[1].type.strided);
}

TEST(ParserDecls, ManyKernelsInSourceOrder) {
  auto p = parseOk("const A = 1\nkernel a():\n    pass\n\n\ndef f() -> i32:\n    return 1\nkernel b():\n    pass\n");
  const auto& d = p->module->decls;
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[0].kind, DeclKind::Const);
  EXPECT_EQ(d[1].kind, DeclKind::Kernel);
  EXPECT_EQ(d[2].kind, DeclKind::Function);
  EXPECT_EQ(d[3].kernel->name, "b");
}

// ---------------------------------------------------------------------------
// Statements

TEST(ParserStmts, Assignments) {
  auto p = parseOk(inKernel("i = thread_id()\nacc: f32 = 0.0\nx[i, j] = v\nbuf[0] = x[i, 0] * 2"));
  const Block& b = kernelBody(*p);
  ASSERT_EQ(b.size(), 4u);
  auto* a0 = b[0]->as<AssignStmt>();
  ASSERT_NE(a0, nullptr);
  EXPECT_EQ(sexpr(*a0->target), "i");
  EXPECT_EQ(sexpr(*a0->value), "(call thread_id)");
  EXPECT_EQ(a0->annotation, nullptr);
  auto* a1 = b[1]->as<AssignStmt>();
  ASSERT_NE(a1->annotation, nullptr);
  EXPECT_EQ(a1->annotation->elemName, "f32");
  EXPECT_EQ(sexpr(*a1->value), "0.0");
  EXPECT_EQ(sexpr(*b[2]->as<AssignStmt>()->target), "(index x i j)");
  EXPECT_EQ(sexpr(*b[3]->as<AssignStmt>()->value), "(* (index x i 0) 2)");
  EXPECT_EQ(b[0]->range.begin.col, 5u);
  EXPECT_EQ(b[0]->range.end.col, 20u);
}

// docs/language.md 5.11: a comma on either side of `=` makes a tuple;
// parentheses around one are kept out of the tree.
TEST(ParserStmts, UnpackingAssignments) {
  auto p = parseOk(inKernel("a, b = b, a\nx[i], x[j] = x[j], x[i]\nm, s = stats(v)\n(c, d) = (1, 2)"));
  const Block& b = kernelBody(*p);
  ASSERT_EQ(b.size(), 4u);
  auto* swap = b[0]->as<AssignStmt>();
  ASSERT_NE(swap, nullptr);
  EXPECT_EQ(sexpr(*swap->target), "(tuple a b)");
  EXPECT_EQ(sexpr(*swap->value), "(tuple b a)");
  EXPECT_EQ(sexpr(*b[1]->as<AssignStmt>()->target), "(tuple (index x i) (index x j))");
  EXPECT_EQ(sexpr(*b[1]->as<AssignStmt>()->value), "(tuple (index x j) (index x i))");
  EXPECT_EQ(sexpr(*b[2]->as<AssignStmt>()->target), "(tuple m s)");
  EXPECT_EQ(sexpr(*b[2]->as<AssignStmt>()->value), "(call stats v)");
  EXPECT_EQ(sexpr(*b[3]->as<AssignStmt>()->target), "(tuple c d)");
  EXPECT_EQ(sexpr(*b[3]->as<AssignStmt>()->value), "(tuple 1 2)");
  // The tuple's range runs from its first element to its last.
  EXPECT_EQ(swap->target->range.begin.col, 5u);
  EXPECT_EQ(swap->target->range.end.col, 9u);
}

TEST(ParserStmts, TupleReturns) {
  auto p = parseOk(
      "def stats(v: f32, w: T) -> tuple[f32, T, i32]:\n"
      "    if v > 0.0:\n"
      "        return v, w, 1\n"
      "    return (v * 2.0, w, 0)\n");
  const FunctionDecl& f = *p->module->decls[0].function;
  ASSERT_NE(f.returnType, nullptr);
  EXPECT_TRUE(f.returnType->isTuple);
  EXPECT_EQ(f.returnType->elemName, "tuple");
  ASSERT_EQ(f.returnType->tupleElements.size(), 3u);
  EXPECT_EQ(f.returnType->tupleElements[0].elemName, "f32");
  EXPECT_EQ(f.returnType->tupleElements[1].elemName, "T");
  EXPECT_EQ(f.returnType->tupleElements[2].elemName, "i32");
  EXPECT_EQ(sexpr(*f.body[0]->as<IfStmt>()->thenBody[0]->as<ReturnStmt>()->value), "(tuple v w 1)");
  EXPECT_EQ(sexpr(*f.body[1]->as<ReturnStmt>()->value), "(tuple (* v 2.0) w 0)");
}

TEST(ParserStmts, EveryAugmentedAssignment) {
  const std::pair<const char*, BinaryOp> ops[] = {
      {"+=", BinaryOp::Add},       {"-=", BinaryOp::Sub},  {"*=", BinaryOp::Mul},    {"/=", BinaryOp::Div},
      {"//=", BinaryOp::FloorDiv}, {"%=", BinaryOp::Mod},  {"&=", BinaryOp::BitAnd}, {"|=", BinaryOp::BitOr},
      {"^=", BinaryOp::BitXor},    {"<<=", BinaryOp::Shl}, {">>=", BinaryOp::Shr},
  };
  for (const auto& [spelling, op] : ops) {
    auto p = parseOk(inKernel(fmt::format("x[i, j] {} v + 1", spelling)));
    auto* s = kernelBody(*p)[0]->as<AugAssignStmt>();
    ASSERT_NE(s, nullptr) << spelling;
    EXPECT_EQ(s->op, op) << spelling;
    EXPECT_EQ(sexpr(*s->target), "(index x i j)");
    EXPECT_EQ(sexpr(*s->value), "(+ v 1)");
  }
}

TEST(ParserStmts, Asserts) {
  auto p =
      parseOk(inKernel("assert i < N\nassert i >= 0 and j < N, \"j: \\\"out\\\" of range\\n\"\nassert ok, 'x\\\\y'"));
  const Block& b = kernelBody(*p);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(sexpr(*b[0]->as<AssertStmt>()->cond), "(< i N)");
  EXPECT_EQ(b[0]->as<AssertStmt>()->message, "");
  EXPECT_EQ(sexpr(*b[1]->as<AssertStmt>()->cond), "(and (>= i 0) (< j N))");
  EXPECT_EQ(b[1]->as<AssertStmt>()->message, "j: \"out\" of range\n");
  EXPECT_EQ(b[2]->as<AssertStmt>()->message, "x\\y");
  for (const char* bad : {"assert", "assert x,", "assert x, y", "assert x, 'a' 'b'"})
    EXPECT_TRUE(parse(inKernel(bad))->diags.hasErrors()) << bad;
}

TEST(ParserStmts, CallStatements) {
  auto p = parseOk(inKernel("sync()\nhelper(j)\natomic_add(h[b], 1)"));
  const Block& b = kernelBody(*p);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(sexpr(*b[0]->as<ExprStmt>()->expr), "(call sync)");
  EXPECT_EQ(sexpr(*b[1]->as<ExprStmt>()->expr), "(call helper j)");
  EXPECT_EQ(sexpr(*b[2]->as<ExprStmt>()->expr), "(call atomic_add (index h b) 1)");
}

TEST(ParserStmts, ScratchAndBuiltins) {
  auto p =
      parseOk(inKernel("buf = shared(f32, [BLOCK, 4])\nacc = local(f32, [4], 0.0)\nt = thread_id(a=0)\n"
                       "g = grid_dim(a = 2) * block_dim()\nw = lane_id() + warp_size()\ny = f32(v) + T(w) + i64(3)\n"
                       "m = shfl_xor(v, 16)\nd = dim(x, 1)\nz = []"));
  const Block& b = kernelBody(*p);
  auto value = [&](size_t i) { return sexpr(*b[i]->as<AssignStmt>()->value); };
  EXPECT_EQ(value(0), "(call shared f32 [BLOCK 4])");
  auto* shared = b[0]->as<AssignStmt>()->value->as<CallExpr>();
  EXPECT_NE(shared->args[0]->as<NameExpr>(), nullptr);
  EXPECT_NE(shared->args[1]->as<ListExpr>(), nullptr);
  EXPECT_EQ(value(1), "(call local f32 [4] 0.0)");
  EXPECT_EQ(value(2), "(call thread_id a=0)");
  auto* tid = b[2]->as<AssignStmt>()->value->as<CallExpr>();
  ASSERT_EQ(tid->kwargs.size(), 1u);
  EXPECT_TRUE(tid->args.empty());
  EXPECT_EQ(tid->kwargs[0].name, "a");
  EXPECT_EQ(tid->kwargs[0].nameRange.begin.col, 19u);
  EXPECT_EQ(value(3), "(* (call grid_dim a=2) (call block_dim))");
  EXPECT_EQ(value(4), "(+ (call lane_id) (call warp_size))");
  EXPECT_EQ(value(5), "(+ (+ (call f32 v) (call T w)) (call i64 3))");
  EXPECT_EQ(value(6), "(call shfl_xor v 16)");
  EXPECT_EQ(value(7), "(call dim x 1)");
  EXPECT_EQ(value(8), "[]");
}

TEST(ParserStmts, IfElifElse) {
  auto p =
      parseOk(inKernel("if a:\n    x = 1\nelif b:\n    x = 2\nelif c:\n    x = 3\nelse:\n    x = 4\nif d:\n    pass"));
  const Block& b = kernelBody(*p);
  ASSERT_EQ(b.size(), 2u);
  auto* top = b[0]->as<IfStmt>();
  ASSERT_NE(top, nullptr);
  EXPECT_FALSE(top->isElif);
  EXPECT_EQ(sexpr(*top->cond), "a");
  ASSERT_EQ(top->elseBody.size(), 1u);
  auto* elif1 = top->elseBody[0]->as<IfStmt>();
  ASSERT_NE(elif1, nullptr);
  EXPECT_TRUE(elif1->isElif);
  EXPECT_EQ(sexpr(*elif1->cond), "b");
  auto* elif2 = elif1->elseBody[0]->as<IfStmt>();
  ASSERT_NE(elif2, nullptr);
  EXPECT_TRUE(elif2->isElif);
  ASSERT_EQ(elif2->elseBody.size(), 1u);
  EXPECT_EQ(sexpr(*elif2->elseBody[0]->as<AssignStmt>()->value), "4");
  EXPECT_EQ(elif1->range.begin.line, 4u);
  EXPECT_EQ(top->range.end.line, 9u);  // an if covers its whole chain
  auto* plain = b[1]->as<IfStmt>();
  EXPECT_TRUE(plain->elseBody.empty());
}

TEST(ParserStmts, LoopsAndJumps) {
  auto p =
      parseOk(inKernel("for i in range(n):\n    continue\nfor i in range(1, n):\n    break\n"
                       "for i in range(n - 1, -1, -1):\n    pass\nfor k in static_range(4):\n    acc[k] = 0.0\n"
                       "while i < n and not done:\n    i += 1\n    if i > 3:\n        break\nreturn\n"));
  const Block& b = kernelBody(*p);
  ASSERT_EQ(b.size(), 6u);
  auto* f1 = b[0]->as<ForStmt>();
  ASSERT_NE(f1, nullptr);
  EXPECT_EQ(f1->var, "i");
  EXPECT_FALSE(f1->isStatic);
  EXPECT_EQ(f1->rangeArgs.size(), 1u);
  EXPECT_NE(f1->body[0]->as<ContinueStmt>(), nullptr);
  EXPECT_EQ(b[1]->as<ForStmt>()->rangeArgs.size(), 2u);
  auto* f3 = b[2]->as<ForStmt>();
  ASSERT_EQ(f3->rangeArgs.size(), 3u);
  EXPECT_EQ(sexpr(*f3->rangeArgs[2]), "(- 1)");
  auto* f4 = b[3]->as<ForStmt>();
  EXPECT_TRUE(f4->isStatic);
  EXPECT_EQ(f4->varRange.begin.col, 9u);
  auto* w = b[4]->as<WhileStmt>();
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(sexpr(*w->cond), "(and (< i n) (not done))");
  ASSERT_EQ(w->body.size(), 2u);
  EXPECT_NE(w->body[1]->as<IfStmt>()->thenBody[0]->as<BreakStmt>(), nullptr);
  auto* r = b[5]->as<ReturnStmt>();
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->value, nullptr);
}

TEST(ParserStmts, NestedClosuresWithNonlocal) {
  auto p =
      parseOk(inKernel("total = 0.0\ncount = 0\ndef add(v: f32):\n    nonlocal total, count\n    total += v\n"
                       "    def bump():\n        nonlocal count\n        count += 1\n    bump()\n"
                       "def get(j: i64) -> f32:\n    return x[j] * 2.0\nadd(get(i))"));
  const Block& b = kernelBody(*p);
  ASSERT_EQ(b.size(), 5u);
  auto* add = b[2]->as<FuncDefStmt>();
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->func->name, "add");
  EXPECT_EQ(add->func->returnType, nullptr);
  auto* nl = add->func->body[0]->as<NonlocalStmt>();
  ASSERT_NE(nl, nullptr);
  EXPECT_EQ(nl->names, (std::vector<std::string>{"total", "count"}));
  EXPECT_EQ(nl->nameRanges[1].begin.col, 25u);
  auto* bump = add->func->body[2]->as<FuncDefStmt>();
  ASSERT_NE(bump, nullptr);
  EXPECT_EQ(bump->func->body[0]->as<NonlocalStmt>()->names, std::vector<std::string>{"count"});
  auto* get = b[3]->as<FuncDefStmt>();
  EXPECT_EQ(get->func->returnType->elemName, "f32");
  EXPECT_EQ(sexpr(*b[4]->as<ExprStmt>()->expr), "(call add (call get i))");
}

TEST(ParserStmts, OneLineSuites) {
  auto p = parseOk(inKernel("if i >= n: return\nwhile a: a -= 1\nfor i in range(3): f(i)"));
  const Block& b = kernelBody(*p);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_NE(b[0]->as<IfStmt>()->thenBody[0]->as<ReturnStmt>(), nullptr);
  EXPECT_NE(b[1]->as<WhileStmt>()->body[0]->as<AugAssignStmt>(), nullptr);
  EXPECT_NE(b[2]->as<ForStmt>()->body[0]->as<ExprStmt>(), nullptr);
}

TEST(ParserStmts, ContinuationLinesInBrackets) {
  auto p = parseOk(inKernel("y = f(a,\n      b) + x[i,\n  j]\nz = (1 +\n2)"));
  const Block& b = kernelBody(*p);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(sexpr(*b[0]->as<AssignStmt>()->value), "(+ (call f a b) (index x i j))");
  EXPECT_EQ(b[0]->range.end.line, 4u);
}

TEST(ParserRanges, ExpressionRanges) {
  auto p = parseOk("const X = (a + b) * f(c, d=1)\n");
  auto* mul = p->module->decls[0].constDecl->value->as<BinaryExpr>();
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->range.begin.col, 11u);  // takes in the parenthesis
  EXPECT_EQ(mul->range.end.col, 30u);
  EXPECT_EQ(mul->opRange.begin.col, 19u);
  auto* call = mul->rhs->as<CallExpr>();
  EXPECT_EQ(call->calleeRange.begin.col, 21u);
  EXPECT_EQ(call->calleeRange.end.col, 22u);
  EXPECT_EQ(mul->lhs->range.begin.col, 11u);
  EXPECT_EQ(mul->lhs->as<BinaryExpr>()->lhs->range.begin.col, 12u);
}

// ---------------------------------------------------------------------------
// The AST dump

TEST(AstDump, LanguageExample) {
  auto p = parseOk(
      "const BLOCK = 256                 # compile-time integer or float constant\n"
      "const EPS: f32 = 1e-5\n"
      "\n"
      "def gelu(v: f32) -> f32:          # device function: scalar params, one result\n"
      "    return 0.5 * v * (1.0 + tanh(0.7978845608 * (v + 0.044715 * v * v * v)))\n"
      "\n"
      "@grid(M)                          # launch grid: 1 to 3 integer expressions\n"
      "@block(BLOCK)                     # block size: 1 to 3 compile-time expressions\n"
      "@static(N)                        # dim symbols that are always specialized\n"
      "kernel softmax(x: f32[M, N], y: f32[M, N], scale: f32):\n"
      "    t = thread_id(a=0)\n"
      "    if t < N:\n"
      "        y[0, t] = -x[0, t] ** 2 if t > 0 else scale\n"
      "    elif t == N:\n"
      "        pass\n");
  EXPECT_EQ(dumpAst(*p->module),
            "Module test.spn\n"
            "  Const BLOCK @1:1\n"
            "    IntLit 256 @1:15\n"
            "  Const EPS: f32 @2:1\n"
            "    FloatLit 1e-5 @2:18\n"
            "  Def gelu -> f32 @4:1\n"
            "    Param v: f32 @4:10\n"
            "    Body\n"
            "      Return @5:5\n"
            "        Binary * @5:12\n"
            "          Binary * @5:12\n"
            "            FloatLit 0.5 @5:12\n"
            "            Name v @5:18\n"
            "          Binary + @5:22\n"
            "            FloatLit 1.0 @5:23\n"
            "            Call tanh @5:29\n"
            "              Binary * @5:34\n"
            "                FloatLit 0.7978845608 @5:34\n"
            "                Binary + @5:49\n"
            "                  Name v @5:50\n"
            "                  Binary * @5:54\n"
            "                    Binary * @5:54\n"
            "                      Binary * @5:54\n"
            "                        FloatLit 0.044715 @5:54\n"
            "                        Name v @5:65\n"
            "                      Name v @5:69\n"
            "                    Name v @5:73\n"
            "  Kernel softmax @10:1\n"
            "    Decorator @grid @7:1\n"
            "      Name M @7:7\n"
            "    Decorator @block @8:1\n"
            "      Name BLOCK @8:8\n"
            "    Decorator @static @9:1\n"
            "      Name N @9:9\n"
            "    Param x: f32[M, N] @10:16\n"
            "    Param y: f32[M, N] @10:30\n"
            "    Param scale: f32 @10:44\n"
            "    Body\n"
            "      Assign @11:5\n"
            "        Name t @11:5\n"
            "        Call thread_id @11:9\n"
            "          Kwarg a @11:19\n"
            "            IntLit 0 @11:21\n"
            "      If @12:5\n"
            "        Binary < @12:8\n"
            "          Name t @12:8\n"
            "          Name N @12:12\n"
            "        Then\n"
            "          Assign @13:9\n"
            "            Index @13:9\n"
            "              Name y @13:9\n"
            "              IntLit 0 @13:11\n"
            "              Name t @13:14\n"
            "            Ternary @13:19\n"
            "              Unary - @13:19\n"
            "                Binary ** @13:20\n"
            "                  Index @13:20\n"
            "                    Name x @13:20\n"
            "                    IntLit 0 @13:22\n"
            "                    Name t @13:25\n"
            "                  IntLit 2 @13:31\n"
            "              Binary > @13:36\n"
            "                Name t @13:36\n"
            "                IntLit 0 @13:40\n"
            "              Name scale @13:47\n"
            "        Else\n"
            "          Elif @14:5\n"
            "            Binary == @14:10\n"
            "              Name t @14:10\n"
            "              Name N @14:15\n"
            "            Then\n"
            "              Pass @15:9\n");
}

TEST(AstDump, StatementsAndTypes) {
  auto p = parseOk(
      "kernel k[T](x: T[4, N] strided, n: i64):\n"
      "    acc: f32 = 0.0\n"
      "    acc //= 2\n"
      "    for i in static_range(0, 4):\n"
      "        sync()\n"
      "    while True:\n"
      "        break\n"
      "    def inner() -> f32:\n"
      "        nonlocal acc\n"
      "        return acc\n"
      "    buf = shared(f32, [4])\n"
      "    continue\n");
  EXPECT_EQ(dumpAst(*p->module),
            "Module test.spn\n"
            "  Kernel k @1:1\n"
            "    TypeParam T @1:10\n"
            "    Param x: T[4, N] strided @1:13\n"
            "    Param n: i64 @1:33\n"
            "    Body\n"
            "      Assign: f32 @2:5\n"
            "        Name acc @2:5\n"
            "        FloatLit 0.0 @2:16\n"
            "      AugAssign //= @3:5\n"
            "        Name acc @3:5\n"
            "        IntLit 2 @3:13\n"
            "      For i in static_range @4:5\n"
            "        IntLit 0 @4:27\n"
            "        IntLit 4 @4:30\n"
            "        Body\n"
            "          ExprStmt @5:9\n"
            "            Call sync @5:9\n"
            "      While @6:5\n"
            "        BoolLit True @6:11\n"
            "        Body\n"
            "          Break @7:9\n"
            "      FuncDef inner -> f32 @8:5\n"
            "        Body\n"
            "          Nonlocal acc @9:9\n"
            "          Return @10:9\n"
            "            Name acc @10:16\n"
            "      Assign @11:5\n"
            "        Name buf @11:5\n"
            "        Call shared @11:11\n"
            "          Name f32 @11:18\n"
            "          List @11:23\n"
            "            IntLit 4 @11:24\n"
            "      Continue @12:5\n");
}

TEST(AstDump, Tuples) {
  auto p = parseOk(
      "def f(v: f32) -> tuple[f32, i32]:\n"
      "    return v, 1\n"
      "kernel k():\n"
      "    a, b = f(0.5)\n");
  EXPECT_EQ(dumpAst(*p->module),
            "Module test.spn\n"
            "  Def f -> tuple[f32, i32] @1:1\n"
            "    Param v: f32 @1:7\n"
            "    Body\n"
            "      Return @2:5\n"
            "        Tuple @2:12\n"
            "          Name v @2:12\n"
            "          IntLit 1 @2:15\n"
            "  Kernel k @3:1\n"
            "    Body\n"
            "      Assign @4:5\n"
            "        Tuple @4:5\n"
            "          Name a @4:5\n"
            "          Name b @4:8\n"
            "        Call f @4:12\n"
            "          FloatLit 0.5 @4:14\n");
}

TEST(AstNames, KindsAndOperators) {
  EXPECT_STREQ(exprKindName(ExprKind::Ternary), "Ternary");
  EXPECT_STREQ(stmtKindName(StmtKind::AugAssign), "AugAssign");
  EXPECT_STREQ(binaryOpSpelling(BinaryOp::FloorDiv), "//");
  EXPECT_STREQ(binaryOpSpelling(BinaryOp::And), "and");
  EXPECT_STREQ(unaryOpSpelling(UnaryOp::BitNot), "~");
  EXPECT_STREQ(unaryOpSpelling(UnaryOp::Not), "not");
  EXPECT_TRUE(isComparison(BinaryOp::Ne));
  EXPECT_FALSE(isComparison(BinaryOp::Shl));
  EXPECT_TRUE(isLogical(BinaryOp::Or));
  EXPECT_FALSE(isLogical(BinaryOp::BitAnd));
}

// ---------------------------------------------------------------------------
// Errors and recovery

TEST(ParserErrors, SeveralErrorsInOneRun) {
  auto p = parse(inKernel("x = \ny = 1\nf(x) = 2\nz = (1 2)\nw = 3\nv = a < b < c"));
  EXPECT_EQ(diagList(p->diags), (std::vector<std::string>{"2:8 parse-expected", "4:5 parse-bad-assign-target",
                                                          "5:12 parse-expected", "7:15 parse-chained-compare"}));
  // The good statements around the bad ones are still there.
  const Block& b = kernelBody(*p);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(sexpr(*b[0]->as<AssignStmt>()->target), "y");
  EXPECT_EQ(sexpr(*b[1]->as<AssignStmt>()->target), "w");
}

TEST(ParserErrors, BrokenHeaderSkipsItsBody) {
  auto p = parse("kernel k(x: f32[N]) y:\n    y = = 1\n    z = = 2\nkernel ok():\n    pass\n");
  EXPECT_EQ(diagList(p->diags), std::vector<std::string>{"1:21 parse-expected"});
  ASSERT_EQ(p->module->decls.size(), 1u);
  EXPECT_EQ(p->module->decls[0].kernel->name, "ok");
}

TEST(ParserErrors, ErrorsInsideBodiesKeepTheDeclaration) {
  auto p = parse("def f(a: i32) -> i32:\n    if a >:\n        return 1\n    return a +\nconst C = 1\n");
  EXPECT_EQ(diagList(p->diags), (std::vector<std::string>{"2:11 parse-expected", "4:15 parse-expected"}));
  ASSERT_EQ(p->module->decls.size(), 2u);
  EXPECT_EQ(p->module->decls[0].function->name, "f");
}

TEST(ParserErrors, BadElifKeepsTheRestOfTheChain) {
  auto p = parse(inKernel("if a:\n    pass\nelif:\n    pass\nelse:\n    pass"));
  EXPECT_EQ(diagList(p->diags), std::vector<std::string>{"4:9 parse-expected"});
  auto* top = kernelBody(*p)[0]->as<IfStmt>();
  ASSERT_NE(top, nullptr);
  EXPECT_EQ(top->elseBody.size(), 1u);  // the else still attached
}

TEST(ParserErrors, OneErrorPerLine) {
  auto p = parse(inKernel("x = $ + + )"));
  EXPECT_EQ(diagList(p->diags), (std::vector<std::string>{"2:9 lex-unexpected-char", "2:15 lex-unmatched-bracket"}));
}

TEST(ParserErrors, UnclosedBracketSuppressesEchoes) {
  auto p = parse(inKernel("y = f(x[0]\nz = 1\nw = = 2") + "kernel k2():\n    pass\n");
  EXPECT_EQ(diagList(p->diags), std::vector<std::string>{"2:10 lex-unclosed-bracket"});
}

TEST(ParserErrors, ExpressionStatementMustBeACall) {
  auto p = parse(inKernel("x == 1\nx\nx y"));
  EXPECT_EQ(diagList(p->diags), (std::vector<std::string>{"2:5 parse-expr-stmt-not-call",
                                                          "3:5 parse-expr-stmt-not-call", "4:7 parse-expected"}));
}

TEST(ParserErrors, Keywords) {
  auto p = parse("const X = f(a=1, a=2)\nconst Y = f(a=1, 2)\nconst Z = f(1=2)\nconst W = x[0](1)\n");
  EXPECT_EQ(diagList(p->diags),
            (std::vector<std::string>{"1:18 parse-duplicate-keyword", "2:18 parse-positional-after-keyword",
                                      "3:13 parse-keyword-arg", "4:11 parse-bad-callee"}));
}

TEST(ParserErrors, MisplacedThings) {
  // A const in a body is a kernel-body const (sema checks where it stands).
  auto p = parse(inKernel("const C = 1\nkernel j():\n    pass\nelse:\n    pass\n@grid(1)\ndef f():\n    pass"));
  EXPECT_EQ(diagList(p->diags), (std::vector<std::string>{"3:5 parse-misplaced-decl", "5:5 parse-unexpected-token",
                                                          "7:5 parse-decorator-on-def"}));
  // The const and the decorated closure are still parsed.
  ASSERT_EQ(kernelBody(*p).size(), 2u);
  EXPECT_TRUE(kernelBody(*p)[0]->as<AssignStmt>() && kernelBody(*p)[0]->as<AssignStmt>()->isConst);
  EXPECT_NE(kernelBody(*p)[1]->as<FuncDefStmt>(), nullptr);
}

// The matrix API's epilogue loop: three names over elements(tile).
TEST(ParserStmts, ElementsLoop) {
  auto p = parseOk(inKernel("for r, c, v in elements(acc[i, j]):\n    x[r, c] = v"));
  const auto* f = kernelBody(*p)[0]->as<ForStmt>();
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->var, "r");
  EXPECT_EQ(f->elementVars, (std::vector<std::string>{"c", "v"}));
  ASSERT_NE(f->elementsOf, nullptr);
  EXPECT_NE(f->elementsOf->as<IndexExpr>(), nullptr);
  EXPECT_TRUE(f->rangeArgs.empty());
  EXPECT_FALSE(f->isStatic);
  EXPECT_EQ(f->body.size(), 1u);
}

// Several loop variables are only the matrix API's `for r, c, v in elements(acc[i, j])`.
TEST(ParserErrors, ForLoops) {
  auto p =
      parse(inKernel("for i in n:\n    pass\nfor i in range():\n    pass\nfor i in range(1, 2, 3, 4):\n    pass\n"
                     "for i in range(stop=3):\n    pass\nfor i, j in range(3):\n    pass"));
  EXPECT_EQ(diagList(p->diags),
            (std::vector<std::string>{"2:14 parse-bad-for", "4:14 parse-range-arity", "6:14 parse-range-arity",
                                      "8:20 parse-no-keyword-args", "10:17 parse-elements-vars"}));
}

TEST(ParserErrors, Types) {
  auto p = parse(
      "kernel a(x: f32[]):\n    pass\nkernel b(x: f32[N < 1]):\n    pass\nkernel c(x):\n    pass\n"
      "kernel d(x: f32 = 1):\n    pass\ndef e(a: i32) -> 3:\n    pass\n");
  EXPECT_EQ(diagList(p->diags),
            (std::vector<std::string>{"1:13 parse-tensor-rank", "3:19 parse-expected", "5:11 parse-expected",
                                      "7:17 parse-expected", "9:18 parse-bad-type"}));
}

TEST(ParserErrors, AnnotatedTargetMustBeAName) {
  auto p = parse(inKernel("x[0]: f32 = 1.0\n1 = 2\nf() += 1\nTrue = 1"));
  EXPECT_EQ(diagList(p->diags),
            (std::vector<std::string>{"2:5 parse-annotated-target", "3:5 parse-bad-assign-target",
                                      "4:5 parse-bad-assign-target", "5:5 parse-bad-assign-target"}));
}

// Each line has one mistake with a tuple: a tuple type off a return, a
// tuple type of one element, a starred target, a nested target, a tuple
// with `+=`, a trailing comma.
TEST(ParserErrors, Tuples) {
  auto p = parse(
      "def f(v: tuple[f32, f32]) -> f32:\n    pass\n"
      "def g() -> tuple[f32]:\n    pass\n"
      "def h() -> tuple[f32, tuple[f32, f32]]:\n    pass\n"
      "kernel k():\n"
      "    a, *b = c\n"
      "    (a, b), c = d\n"
      "    a, b += 1, 2\n"
      "    a, b = 1,\n"
      "    x: tuple[f32, f32] = 1\n");
  EXPECT_EQ(diagList(p->diags),
            (std::vector<std::string>{"1:10 parse-tuple-type-position", "3:12 parse-tuple-type-arity",
                                      "5:23 parse-tuple-type-position", "8:8 parse-starred-target",
                                      "9:5 parse-unpack-target", "10:5 parse-bad-assign-target", "11:14 parse-expected",
                                      "12:8 parse-tuple-type-position"}));
}

TEST(ParserErrors, ModuleLevelStatements) {
  auto p = parse("x = 1\nif x:\n    pass\n  y = 2\nconst C = 1\n");
  EXPECT_EQ(diagList(p->diags),
            (std::vector<std::string>{"1:1 parse-expected", "2:1 parse-expected", "4:3 lex-inconsistent-dedent"}));
  ASSERT_EQ(p->module->decls.size(), 1u);
}

TEST(ParserErrors, EmptyBlocks) {
  auto p = parse("def f():\n\nkernel k():\n    if x:\n    y = 1\n");
  EXPECT_EQ(diagList(p->diags), (std::vector<std::string>{"1:8 parse-empty-block", "4:9 parse-empty-block"}));
}

TEST(ParserErrors, TooManyErrorsStops) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "x = 1\n";
  auto p = parse(text);
  EXPECT_EQ(p->diags.errorCount(), DiagnosticEngine::kMaxErrors);
  EXPECT_EQ(p->diags.diagnostics().back().id, DiagId::parse_too_many_errors);
}

// ---------------------------------------------------------------------------
// Nesting limits: no input may overflow the stack.

struct DeepCase {
  const char* name;
  std::string text;
};

class ParserDepth : public ::testing::TestWithParam<DeepCase> {};

TEST_P(ParserDepth, ReportsTooDeepOnce) {
  auto p = parse(GetParam().text);
  std::vector<std::string> ids;
  for (const auto& d : p->diags.diagnostics()) ids.push_back(diagName(d.id));
  EXPECT_EQ(std::count(ids.begin(), ids.end(), "parse-too-deep"), 1) << p->diags.renderAll().substr(0, 400);
}

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

std::string deepBlocks(int n) {
  std::string text = "kernel k():\n";
  for (int i = 1; i < n; ++i) text += std::string(static_cast<size_t>(i) * 2, ' ') + "if x:\n";
  return text + std::string(static_cast<size_t>(n) * 2, ' ') + "pass\n";
}

INSTANTIATE_TEST_SUITE_P(
    Limits, ParserDepth,
    ::testing::Values(DeepCase{"parens", "const X = " + repeat("(", 100000) + "1" + repeat(")", 100000) + "\n"},
                      DeepCase{"lists", "const X = " + repeat("[", 100000) + repeat("]", 100000) + "\n"},
                      DeepCase{"calls", "const X = " + repeat("f(", 5000) + "1" + repeat(")", 5000) + "\n"},
                      DeepCase{"minus", "const X = " + repeat("-", 100000) + "1\n"},
                      DeepCase{"not", "const X = " + repeat("not ", 100000) + "1\n"},
                      DeepCase{"sum", "const X = 1" + repeat(" + 1", 100000) + "\n"},
                      DeepCase{"index", "const X = x" + repeat("[0]", 100000) + "\n"},
                      DeepCase{"power", "const X = 2" + repeat("**2", 100000) + "\n"},
                      DeepCase{"ternary", "const X = 1" + repeat(" if 1 else 1", 100000) + "\n"},
                      DeepCase{"sum_of_parens",
                               "const X = " + repeat("(1+", 150) + "1" + repeat(")", 150) + repeat("+1", 150) + "\n"},
                      DeepCase{"blocks", deepBlocks(1000)},
                      DeepCase{"elifs", inKernel("if x:\n    pass\n" + repeat("elif x:\n    pass\n", 1000))}),
    [](const ::testing::TestParamInfo<DeepCase>& info) { return std::string(info.param.name); });

TEST(ParserDepthOk, JustUnderTheLimitParses) {
  parseOk("const X = " + repeat("(", 150) + "1" + repeat(")", 150) + "\n");
  parseOk("const X = 1" + repeat(" + 1", 150) + "\n");
  parseOk(deepBlocks(100));
}

}  // namespace
}  // namespace spindle::test
