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

#include "ast.h"

namespace spindle {

// Calls `onExpr` on every direct child expression of `e` (Expr or const Expr).
template <typename E, typename OnExpr>
void forEachChild(E& e, OnExpr&& onExpr) {
  static_assert(std::is_same_v<std::remove_const_t<E>, Expr>);
  using U = std::conditional_t<std::is_const_v<E>, const UnaryExpr, UnaryExpr>;
  using B = std::conditional_t<std::is_const_v<E>, const BinaryExpr, BinaryExpr>;
  using T = std::conditional_t<std::is_const_v<E>, const TernaryExpr, TernaryExpr>;
  using C = std::conditional_t<std::is_const_v<E>, const CallExpr, CallExpr>;
  using I = std::conditional_t<std::is_const_v<E>, const IndexExpr, IndexExpr>;
  using L = std::conditional_t<std::is_const_v<E>, const ListExpr, ListExpr>;
  switch (e.kind) {
    case ExprKind::IntLit:
    case ExprKind::FloatLit:
    case ExprKind::BoolLit:
    case ExprKind::Name: return;
    case ExprKind::Unary: onExpr(*static_cast<U&>(e).operand); return;
    case ExprKind::Binary:
      onExpr(*static_cast<B&>(e).lhs);
      onExpr(*static_cast<B&>(e).rhs);
      return;
    case ExprKind::Ternary:
      onExpr(*static_cast<T&>(e).cond);
      onExpr(*static_cast<T&>(e).thenValue);
      onExpr(*static_cast<T&>(e).elseValue);
      return;
    case ExprKind::Call:
      for (auto& a : static_cast<C&>(e).args) onExpr(*a);
      for (auto& k : static_cast<C&>(e).kwargs) onExpr(*k.value);
      return;
    case ExprKind::Index:
      onExpr(*static_cast<I&>(e).base);
      for (auto& i : static_cast<I&>(e).indices) onExpr(*i);
      return;
    case ExprKind::List:
      for (auto& x : static_cast<L&>(e).elements) onExpr(*x);
      return;
  }
}

// Calls `onExpr` on every expression `s` holds directly and `onBlock` on
// every block it holds (Stmt or const Stmt).
template <typename S, typename OnExpr, typename OnBlock>
void forEachChild(S& s, OnExpr&& onExpr, OnBlock&& onBlock) {
  static_assert(std::is_same_v<std::remove_const_t<S>, Stmt>);
  constexpr bool kConst = std::is_const_v<S>;
  using A = std::conditional_t<kConst, const AssignStmt, AssignStmt>;
  using G = std::conditional_t<kConst, const AugAssignStmt, AugAssignStmt>;
  using X = std::conditional_t<kConst, const ExprStmt, ExprStmt>;
  using F = std::conditional_t<kConst, const IfStmt, IfStmt>;
  using W = std::conditional_t<kConst, const WhileStmt, WhileStmt>;
  using R = std::conditional_t<kConst, const ForStmt, ForStmt>;
  using T = std::conditional_t<kConst, const ReturnStmt, ReturnStmt>;
  switch (s.kind) {
    case StmtKind::Assign:
      onExpr(*static_cast<A&>(s).value);
      onExpr(*static_cast<A&>(s).target);
      return;
    case StmtKind::AugAssign:
      onExpr(*static_cast<G&>(s).value);
      onExpr(*static_cast<G&>(s).target);
      return;
    case StmtKind::ExprStmt: onExpr(*static_cast<X&>(s).expr); return;
    case StmtKind::If:
      onExpr(*static_cast<F&>(s).cond);
      onBlock(static_cast<F&>(s).thenBody);
      onBlock(static_cast<F&>(s).elseBody);
      return;
    case StmtKind::While:
      onExpr(*static_cast<W&>(s).cond);
      onBlock(static_cast<W&>(s).body);
      return;
    case StmtKind::For:
      for (auto& a : static_cast<R&>(s).rangeArgs) onExpr(*a);
      onBlock(static_cast<R&>(s).body);
      return;
    case StmtKind::Return:
      if (static_cast<T&>(s).value) onExpr(*static_cast<T&>(s).value);
      return;
    case StmtKind::Break:
    case StmtKind::Continue:
    case StmtKind::Pass:
    case StmtKind::Nonlocal:
    case StmtKind::FuncDef: return;
  }
}

}  // namespace spindle
