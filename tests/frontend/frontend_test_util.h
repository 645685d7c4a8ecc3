// Helpers shared by the frontend tests: parse a snippet, list its
// diagnostics, and print expressions as compact s-expressions so that
// precedence tests read like `(+ a (* b c))`.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "frontend/ast.h"
#include "frontend/diagnostics.h"
#include "frontend/lexer.h"
#include "frontend/parser.h"

namespace spindle::test {

inline std::shared_ptr<const SourceFile> source(const std::string& text, const std::string& path = "test.spn") {
  return std::make_shared<SourceFile>(path, text);
}

// "line:col id" for each diagnostic, in order.
inline std::vector<std::string> diagList(const DiagnosticEngine& diags) {
  std::vector<std::string> out;
  for (const auto& d : diags.diagnostics())
    out.push_back(fmt::format("{}:{} {}", d.range.begin.line, d.range.begin.col, diagName(d.id)));
  return out;
}

struct Parsed {
  std::shared_ptr<const SourceFile> file;
  DiagnosticEngine diags;
  std::unique_ptr<SourceModule> module;
};

inline std::unique_ptr<Parsed> parse(const std::string& text) {
  auto p = std::make_unique<Parsed>();
  p->file = source(text);
  p->module = parseModule(p->file, p->diags);
  return p;
}

// Parses text that must have no diagnostics at all.
inline std::unique_ptr<Parsed> parseOk(const std::string& text) {
  auto p = parse(text);
  EXPECT_FALSE(p->diags.hasErrors()) << p->diags.renderAll() << "in:\n" << text;
  EXPECT_TRUE(p->module != nullptr);
  return p;
}

inline std::string sexpr(const Expr& e) {
  switch (e.kind) {
    case ExprKind::IntLit: return e.as<IntLitExpr>()->text;
    case ExprKind::FloatLit: return e.as<FloatLitExpr>()->text;
    case ExprKind::BoolLit: return e.as<BoolLitExpr>()->value ? "True" : "False";
    case ExprKind::Name: return e.as<NameExpr>()->name;
    case ExprKind::Unary: {
      auto& u = *e.as<UnaryExpr>();
      return fmt::format("({} {})", unaryOpSpelling(u.op), sexpr(*u.operand));
    }
    case ExprKind::Binary: {
      auto& b = *e.as<BinaryExpr>();
      return fmt::format("({} {} {})", binaryOpSpelling(b.op), sexpr(*b.lhs), sexpr(*b.rhs));
    }
    case ExprKind::Ternary: {
      auto& t = *e.as<TernaryExpr>();
      return fmt::format("(? {} {} {})", sexpr(*t.thenValue), sexpr(*t.cond), sexpr(*t.elseValue));
    }
    case ExprKind::Call: {
      auto& c = *e.as<CallExpr>();
      std::string s = "(call " + c.callee;
      for (const auto& a : c.args) s += " " + sexpr(*a);
      for (const auto& kw : c.kwargs) s += " " + kw.name + "=" + sexpr(*kw.value);
      return s + ")";
    }
    case ExprKind::Index: {
      auto& i = *e.as<IndexExpr>();
      std::string s = "(index " + sexpr(*i.base);
      for (const auto& a : i.indices) s += " " + sexpr(*a);
      return s + ")";
    }
    case ExprKind::List: {
      std::string s = "[";
      for (const auto& a : e.as<ListExpr>()->elements) s += (s.size() > 1 ? " " : "") + sexpr(*a);
      return s + "]";
    }
    case ExprKind::Tuple: {
      std::string s = "(tuple";
      for (const auto& a : e.as<TupleExpr>()->elements) s += " " + sexpr(*a);
      return s + ")";
    }
    case ExprKind::TypeTest: {
      auto& t = *e.as<TypeTestExpr>();
      std::string s =
          t.isMembership ? (t.negated ? "(type-not-in " : "(type-in ") : (t.negated ? "(type!= " : "(type== ");
      s += t.param;
      for (const auto& type : t.types) s += " " + type.name;
      return s + ")";
    }
  }
  return "?";
}

// The s-expression of `text` parsed as the value of a const.
inline std::string exprOf(const std::string& text) {
  auto p = parseOk("const X = " + text + "\n");
  if (p->module->decls.size() != 1 || !p->module->decls[0].constDecl) return "<no const>";
  return sexpr(*p->module->decls[0].constDecl->value);
}

// The body of the only kernel in `text`.
inline const Block& kernelBody(const Parsed& p) {
  static const Block empty;
  for (const auto& d : p.module->decls)
    if (d.kernel) return d.kernel->body;
  ADD_FAILURE() << "no kernel";
  return empty;
}

// Wraps statements (each line indented by 4) in `kernel k():`.
inline std::string inKernel(const std::string& body) {
  std::string out = "kernel k():\n";
  size_t start = 0;
  while (start < body.size()) {
    size_t end = body.find('\n', start);
    if (end == std::string::npos) end = body.size();
    out += "    " + body.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

}  // namespace spindle::test
