#include "frontend/ast.h"

namespace spindle {

const char* exprKindName(ExprKind k) {
  switch (k) {
#define X(K) \
  case ExprKind::K: return #K;
    SPINDLE_EXPR_KINDS(X)
#undef X
  }
  return "?";
}

const char* stmtKindName(StmtKind k) {
  switch (k) {
#define X(K) \
  case StmtKind::K: return #K;
    SPINDLE_STMT_KINDS(X)
#undef X
  }
  return "?";
}

const char* binaryOpSpelling(BinaryOp op) {
  switch (op) {
#define X(E, S) \
  case BinaryOp::E: return S;
    SPINDLE_BINARY_OPS(X)
#undef X
  }
  return "?";
}

const char* unaryOpSpelling(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: return "-";
    case UnaryOp::Pos: return "+";
    case UnaryOp::Not: return "not";
    case UnaryOp::BitNot: return "~";
    case UnaryOp::IsNone: return "is None";
  }
  return "?";
}

bool isComparison(BinaryOp op) {
  switch (op) {
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
    case BinaryOp::Eq:
    case BinaryOp::Ne: return true;
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::FloorDiv:
    case BinaryOp::Mod:
    case BinaryOp::Pow:
    case BinaryOp::BitAnd:
    case BinaryOp::BitOr:
    case BinaryOp::BitXor:
    case BinaryOp::Shl:
    case BinaryOp::Shr:
    case BinaryOp::And:
    case BinaryOp::Or: return false;
  }
  return false;
}

bool isLogical(BinaryOp op) { return op == BinaryOp::And || op == BinaryOp::Or; }

}  // namespace spindle
