// One line per node: its kind, what it says, and `@line:col` of where it
// begins; children indented two spaces under it. Blocks of an If/While/For/
// Def are introduced by a label line (Then, Else, Body) without a location.
#include "frontend/ast_dump.h"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join

namespace spindle {

namespace {

std::string typeText(const TypeRef& t) {
  std::string out = t.elemName;
  if (t.isTuple) {
    out += '[';
    for (size_t i = 0; i < t.tupleElements.size(); ++i) out += (i ? ", " : "") + typeText(t.tupleElements[i]);
    return out + ']';
  }
  if (!t.isTensor) return out;
  out += '[';
  for (size_t i = 0; i < t.dims.size(); ++i) {
    if (i) out += ", ";
    if (auto* lit = t.dims[i]->as<IntLitExpr>()) out += lit->text;
    else if (auto* name = t.dims[i]->as<NameExpr>()) out += name->name;
  }
  out += ']';
  if (t.strided) out += " strided";
  return out;
}

class Dumper {
 public:
  std::string take() { return std::move(out_); }

  void module(const SourceModule& m) {
    line(fmt::format("Module {}", m.file ? m.file->path() : std::string("<input>")));
    Indent in(*this);
    for (const auto& d : m.decls) {
      switch (d.kind) {
        case DeclKind::Const: constDecl(*d.constDecl); break;
        case DeclKind::Function: function(*d.function, "Def"); break;
        case DeclKind::Kernel: kernel(*d.kernel); break;
      }
    }
  }

 private:
  struct Indent {
    explicit Indent(Dumper& d) : d_(d) { d_.indent_ += 2; }
    ~Indent() { d_.indent_ -= 2; }
    Dumper& d_;
  };

  void line(const std::string& text) {
    out_.append(static_cast<size_t>(indent_), ' ');
    out_ += text;
    out_ += '\n';
  }
  void line(const std::string& text, const SourceRange& r) {
    line(fmt::format("{} @{}:{}", text, r.begin.line, r.begin.col));
  }

  void constDecl(const ConstDecl& c) {
    line(c.type ? fmt::format("Const {}: {}", c.name, typeText(*c.type)) : "Const " + c.name, c.range);
    Indent in(*this);
    expr(*c.value);
  }

  void params(const std::vector<Param>& ps) {
    for (const auto& p : ps) line(fmt::format("Param {}: {}", p.name, typeText(p.type)), p.range);
  }

  void function(const FunctionDecl& f, const char* label) {
    std::string ret = f.returnType ? " -> " + typeText(*f.returnType) : "";
    line(fmt::format("{} {}{}", label, f.name, ret), f.range);
    Indent in(*this);
    params(f.params);
    block("Body", f.body);
  }

  void kernel(const KernelDecl& k) {
    line("Kernel " + k.name, k.range);
    Indent in(*this);
    for (const auto& d : k.decorators) {
      line("Decorator @" + d.name, d.range);
      Indent in2(*this);
      for (const auto& a : d.args) expr(*a);
      for (const auto& kw : d.kwargs) {
        line("Kwarg " + kw.name, kw.nameRange);
        Indent in3(*this);
        expr(*kw.value);
      }
    }
    for (const auto& t : k.typeParams) line("TypeParam " + t.name, t.range);
    params(k.params);
    block("Body", k.body);
  }

  void block(const char* label, const Block& b) {
    line(label);
    Indent in(*this);
    for (const auto& s : b) stmt(*s);
  }

  void stmt(const Stmt& s) {
    const char* kind = stmtKindName(s.kind);
    switch (s.kind) {
      case StmtKind::Assign: {
        auto& a = *s.as<AssignStmt>();
        line(a.annotation ? fmt::format("Assign: {}", typeText(*a.annotation)) : kind, s.range);
        Indent in(*this);
        expr(*a.target);
        expr(*a.value);
        break;
      }
      case StmtKind::AugAssign: {
        auto& a = *s.as<AugAssignStmt>();
        line(fmt::format("AugAssign {}=", binaryOpSpelling(a.op)), s.range);
        Indent in(*this);
        expr(*a.target);
        expr(*a.value);
        break;
      }
      case StmtKind::ExprStmt: {
        line(kind, s.range);
        Indent in(*this);
        expr(*s.as<ExprStmt>()->expr);
        break;
      }
      case StmtKind::If: {
        auto& i = *s.as<IfStmt>();
        line(i.isElif ? "Elif" : "If", s.range);
        Indent in(*this);
        expr(*i.cond);
        block("Then", i.thenBody);
        if (!i.elseBody.empty()) block("Else", i.elseBody);
        break;
      }
      case StmtKind::While: {
        auto& w = *s.as<WhileStmt>();
        line(kind, s.range);
        Indent in(*this);
        expr(*w.cond);
        block("Body", w.body);
        break;
      }
      case StmtKind::For: {
        auto& f = *s.as<ForStmt>();
        if (f.elementsOf) {
          std::string vars = f.var;
          for (const auto& v : f.elementVars) vars += ", " + v;
          line(fmt::format("For {} in elements", vars), s.range);
        } else {
          line(fmt::format("For {} in {}", f.var, f.isStatic ? "static_range" : "range"), s.range);
        }
        Indent in(*this);
        for (const auto& a : f.rangeArgs) expr(*a);
        if (f.elementsOf) expr(*f.elementsOf);
        for (const auto& r : f.elementRows) expr(*r);
        block("Body", f.body);
        break;
      }
      case StmtKind::Return: {
        line(kind, s.range);
        Indent in(*this);
        if (auto& v = s.as<ReturnStmt>()->value) expr(*v);
        break;
      }
      case StmtKind::Nonlocal: {
        line(fmt::format("Nonlocal {}", fmt::join(s.as<NonlocalStmt>()->names, ", ")), s.range);
        break;
      }
      case StmtKind::FuncDef: function(*s.as<FuncDefStmt>()->func, kind); break;
      case StmtKind::Assert: {
        auto& a = *s.as<AssertStmt>();
        line(a.message.empty() ? std::string(kind) : fmt::format("{} \"{}\"", kind, a.message), s.range);
        Indent in(*this);
        expr(*a.cond);
        break;
      }
      case StmtKind::Break:
      case StmtKind::Continue:
      case StmtKind::Pass: line(kind, s.range); break;
    }
  }

  void expr(const Expr& e) {
    const char* kind = exprKindName(e.kind);
    switch (e.kind) {
      case ExprKind::IntLit: line(fmt::format("{} {}", kind, e.as<IntLitExpr>()->text), e.range); break;
      case ExprKind::FloatLit: line(fmt::format("{} {}", kind, e.as<FloatLitExpr>()->text), e.range); break;
      case ExprKind::BoolLit:
        line(fmt::format("{} {}", kind, e.as<BoolLitExpr>()->value ? "True" : "False"), e.range);
        break;
      case ExprKind::Name: line(fmt::format("{} {}", kind, e.as<NameExpr>()->name), e.range); break;
      case ExprKind::Unary: {
        auto& u = *e.as<UnaryExpr>();
        line(fmt::format("{} {}", kind, unaryOpSpelling(u.op)), e.range);
        Indent in(*this);
        expr(*u.operand);
        break;
      }
      case ExprKind::Binary: {
        auto& b = *e.as<BinaryExpr>();
        line(fmt::format("{} {}", kind, binaryOpSpelling(b.op)), e.range);
        Indent in(*this);
        expr(*b.lhs);
        expr(*b.rhs);
        break;
      }
      case ExprKind::Ternary: {  // children in source order: then, cond, else
        auto& t = *e.as<TernaryExpr>();
        line(kind, e.range);
        Indent in(*this);
        expr(*t.thenValue);
        expr(*t.cond);
        expr(*t.elseValue);
        break;
      }
      case ExprKind::Call: {
        auto& c = *e.as<CallExpr>();
        line(fmt::format("{} {}", kind, c.callee), e.range);
        Indent in(*this);
        for (const auto& a : c.args) expr(*a);
        for (const auto& kw : c.kwargs) {
          line("Kwarg " + kw.name, kw.nameRange);
          Indent in2(*this);
          expr(*kw.value);
        }
        break;
      }
      case ExprKind::Index: {
        auto& i = *e.as<IndexExpr>();
        line(kind, e.range);
        Indent in(*this);
        expr(*i.base);
        for (const auto& a : i.indices) expr(*a);
        break;
      }
      case ExprKind::List: {
        line(kind, e.range);
        Indent in(*this);
        for (const auto& a : e.as<ListExpr>()->elements) expr(*a);
        break;
      }
      case ExprKind::Tuple: {
        line(kind, e.range);
        Indent in(*this);
        for (const auto& a : e.as<TupleExpr>()->elements) expr(*a);
        break;
      }
      case ExprKind::TypeTest: {
        auto& t = *e.as<TypeTestExpr>();
        std::string types;
        for (const auto& type : t.types) types += (types.empty() ? "" : ", ") + type.name;
        const char* op = t.isMembership ? (t.negated ? "not in" : "in") : (t.negated ? "!=" : "==");
        line(fmt::format("{} {} {} {}", kind, t.param, op, t.isMembership ? "(" + types + ")" : types), e.range);
        break;
      }
    }
  }

  std::string out_;
  int indent_ = 0;
};

}  // namespace

std::string dumpAst(const SourceModule& module) {
  Dumper d;
  d.module(module);
  return d.take();
}

}  // namespace spindle
