// The children of an AST node, for passes that walk the tree: one place
// knows which node holds which expressions and blocks, so a pass names only
// the nodes it cares about (Clang's RecursiveASTVisitor and Halide's
// IRVisitor play this part there).
//
//   forEachChild(expr, [&](const Expr& child) { ... });
//   forEachChild(stmt, [&](const Expr& e) { ... }, [&](const Block& b) { ... });
//
// Children come in evaluation order (an assignment's value before its
// target). A nested def's body is not a child of its FuncDef statement: it is
// another function, which passes reach through its FunctionScope.
#pragma once

#include <type_traits>

#include "frontend/ast.h"

namespace spindle {

// Calls `onExpr` on every direct child expression of `e` (Expr or const
// Expr: as<T>() keeps the constness).
template <typename E, typename OnExpr>
void forEachChild(E& e, OnExpr&& onExpr) {
  static_assert(std::is_same_v<std::remove_const_t<E>, Expr>);
  switch (e.kind) {
    case ExprKind::IntLit:
    case ExprKind::FloatLit:
    case ExprKind::BoolLit:
    case ExprKind::Name: return;
    case ExprKind::Unary: onExpr(*e.template as<UnaryExpr>()->operand); return;
    case ExprKind::Binary:
      onExpr(*e.template as<BinaryExpr>()->lhs);
      onExpr(*e.template as<BinaryExpr>()->rhs);
      return;
    case ExprKind::Ternary:
      onExpr(*e.template as<TernaryExpr>()->cond);
      onExpr(*e.template as<TernaryExpr>()->thenValue);
      onExpr(*e.template as<TernaryExpr>()->elseValue);
      return;
    case ExprKind::Call:
      for (auto& a : e.template as<CallExpr>()->args) onExpr(*a);
      for (auto& k : e.template as<CallExpr>()->kwargs) onExpr(*k.value);
      return;
    case ExprKind::Index:
      onExpr(*e.template as<IndexExpr>()->base);
      for (auto& i : e.template as<IndexExpr>()->indices) onExpr(*i);
      return;
    case ExprKind::List:
      for (auto& x : e.template as<ListExpr>()->elements) onExpr(*x);
      return;
    case ExprKind::Tuple:
      for (auto& x : e.template as<TupleExpr>()->elements) onExpr(*x);
      return;
    case ExprKind::TypeTest: return;  // names a type parameter and types, no values
  }
}

// Calls `onExpr` on every expression `s` holds directly and `onBlock` on
// every block it holds (Stmt or const Stmt).
template <typename S, typename OnExpr, typename OnBlock>
void forEachChild(S& s, OnExpr&& onExpr, OnBlock&& onBlock) {
  static_assert(std::is_same_v<std::remove_const_t<S>, Stmt>);
  switch (s.kind) {
    case StmtKind::Assign:
      onExpr(*s.template as<AssignStmt>()->value);
      onExpr(*s.template as<AssignStmt>()->target);
      return;
    case StmtKind::AugAssign:
      onExpr(*s.template as<AugAssignStmt>()->value);
      onExpr(*s.template as<AugAssignStmt>()->target);
      return;
    case StmtKind::ExprStmt: onExpr(*s.template as<ExprStmt>()->expr); return;
    case StmtKind::If:
      onExpr(*s.template as<IfStmt>()->cond);
      onBlock(s.template as<IfStmt>()->thenBody);
      onBlock(s.template as<IfStmt>()->elseBody);
      return;
    case StmtKind::While:
      onExpr(*s.template as<WhileStmt>()->cond);
      onBlock(s.template as<WhileStmt>()->body);
      return;
    case StmtKind::For:
      for (auto& a : s.template as<ForStmt>()->rangeArgs) onExpr(*a);
      if (s.template as<ForStmt>()->elementsOf) onExpr(*s.template as<ForStmt>()->elementsOf);
      for (auto& r : s.template as<ForStmt>()->elementRows) onExpr(*r);
      onBlock(s.template as<ForStmt>()->body);
      return;
    case StmtKind::Return:
      if (s.template as<ReturnStmt>()->value) onExpr(*s.template as<ReturnStmt>()->value);
      return;
    case StmtKind::Assert: onExpr(*s.template as<AssertStmt>()->cond); return;
    case StmtKind::Break:
    case StmtKind::Continue:
    case StmtKind::Pass:
    case StmtKind::Nonlocal:
    case StmtKind::FuncDef: return;
  }
}

}  // namespace spindle
