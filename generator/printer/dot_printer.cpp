// The tile-level product dot(acc, As, r, k, Bs, k2, c, D) (docs/language.md
// 8.13): its call, its accumulators' declaration and the settling of those
// accumulators before any other use.
//
// On sm_90a a dot is wgmma, asynchronous until dot_wait, and its first step
// on a fresh accumulator ignores the registers (scale-d 0) instead of
// adding to zeros: a zeroing store before a pipelined loop makes ptxas
// serialize every wgmma (C7515), which cost 10% on an H200. So an
// accumulator that a dot updates is printed without an initializer, with a
// `fresh` flag, and every other use of it is preceded by
// __spn_dot_settle(acc, fresh): its dots have landed, and a fresh
// accumulator becomes zeros. The warp-level path (every other target)
// keeps the same flag and zeroes at its first dot.

#include <functional>

#include "frontend/ast_walk.h"
#include "function_printer.h"
#include "sema/builtins.h"
#include "sema/const_eval.h"
#include "spindle/specialization.h"

namespace spindle {

using namespace cpp_prec;

namespace {

const Symbol* dotAccumulatorOf(const CallExpr& c) {
  const auto* n = c.args.empty() ? nullptr : c.args[0]->as<NameExpr>();
  return n ? n->symbol : nullptr;
}

bool isDot(const CallExpr& c) {
  if (c.symbol) return false;
  const BuiltinInfo* b = findBuiltin(c.callee);
  return b && (b->id == BuiltinId::Dot || b->id == BuiltinId::DotBt);
}

// What a statement does with a dot accumulator: updates it by dot, or uses
// it any other way (a tile read or written, an elements loop).
struct DotUses {
  bool dot = false;
  bool other = false;
};

DotUses usesIn(const Stmt& s, const Symbol* acc) {
  DotUses u;
  std::function<void(const Expr&)> onExpr = [&](const Expr& e) {
    if (const auto* c = e.as<CallExpr>(); c && isDot(*c) && dotAccumulatorOf(*c) == acc) {
      u.dot = true;
      for (size_t i = 1; i < c->args.size(); ++i) onExpr(*c->args[i]);
      return;
    }
    if (const auto* n = e.as<NameExpr>(); n && n->symbol == acc) u.other = true;
    forEachChild(e, onExpr);
  };
  std::function<void(const Block&)> onBlock = [&](const Block& b) {
    for (const auto& st : b) forEachChild(*st, onExpr, onBlock);
  };
  forEachChild(s, onExpr, onBlock);
  return u;
}

}  // namespace

std::string FunctionPrinter::dotFreshName(const Symbol& acc) const {
  auto it = dotFresh_.find(&acc);
  SPINDLE_INTERNAL_CHECK(it != dotFresh_.end(), "dot accumulator '{}' used before its declaration", acc.name);
  return it->second;
}

// `acc = mma_zero(f32, [TI, TJ])` of an accumulator some dot updates: no
// initializer, and its flag.
void FunctionPrinter::printDotAccumulatorDecl(const Symbol& acc, const std::string& dims) {
  const std::string flag = names_.fresh(name(&acc) + "_fresh");
  if (dotFresh_.emplace(&acc, flag).second) dotOrder_.push_back(&acc);
  else dotFresh_[&acc] = flag;
  out_.linef("{} {}{};  // zeros: its first dot ignores the registers, any other use zeroes them ({})",
             fragmentType(acc), name(&acc), dims, flag);
  out_.linef("bool {} = true;", flag);
}

// Before a statement that uses a dot accumulator other than by dot and
// holds no dot of it: settle it (once, around the whole statement, whose
// inner statements then need none; the caller unsettles what this returns
// when the statement is printed). A statement that holds both (a loop
// that multiplies, then reads the tiles) is settled inside, statement by
// statement. An accumulator an earlier statement of the same block
// settled, with no dot of it since, is settled still (straight-line code).
std::vector<const Symbol*> FunctionPrinter::settleDotAccumulators(const Stmt& s) {
  std::vector<const Symbol*> settled;
  if (s.kind == StmtKind::FuncDef || s.kind == StmtKind::Nonlocal) return settled;
  std::set<const Symbol*>* block = dotSettledInBlock_.empty() ? nullptr : &dotSettledInBlock_.back();
  // In declaration order: the printed code does not depend on addresses.
  for (const Symbol* acc : dotOrder_) {
    if (dotSettled_.count(acc)) continue;
    const DotUses u = usesIn(s, acc);
    if (u.dot) {
      if (block) block->erase(acc);
      continue;
    }
    if (!u.other) continue;
    if (!block || block->insert(acc).second) out_.linef("__spn_dot_settle({}, {});", name(acc), dotFresh_.at(acc));
    dotSettled_.insert(acc);
    settled.push_back(acc);
  }
  return settled;
}

// dot(acc, As, r, k, Bs, k2, c, D) -> __spn_dot<TI, TJ, D, SA, SB, BT,
// W>(acc, fresh, As, rows, cols, Bs, rows, cols, r, k, k2, c); with A in
// registers, dot(acc, a, Bs, k2, c, D) -> __spn_dot_ra<TJ, D, SB, BT,
// W>(acc, fresh, a, Bs, rows, cols, k2, c). dot_bt (B stored N x K) takes c
// before k2 and prints BT = 1. SA and SB: the buffers' swizzles (0
// row-major); W the wgmma of N = 16 TJ columns where there is one
// (__spn_wgmma_n32 .. _n256), else __spn_wgmma_none.
CppExpr FunctionPrinter::dotCall(const CallExpr& c) const {
  const bool registers = c.args.size() == 6;
  const bool bt = c.callee == "dot_bt";
  const Symbol& acc = *dotAccumulatorOf(c);
  const Symbol& a = *c.args[1]->as<NameExpr>()->symbol;
  const Symbol& bs = *c.args[registers ? 2 : 4]->as<NameExpr>()->symbol;
  // B's coordinates as written: (k2, c) for dot, (c, k2) for dot_bt.
  const Expr& first = *c.args[registers ? 3 : 5];
  const Expr& second = *c.args[registers ? 4 : 6];
  const std::string k2 = value(bt ? second : first), col = value(bt ? first : second);
  std::string wgmma = "__spn_wgmma_none";
  if (ctx_.spec) {
    const PerWarpWidth tj = evaluateForWarpWidths(*acc.shape[1], ctx_.spec->staticDims, &ctx_.spec->typeArgs);
    if (tj.wave32 && !tj.wave32->isFloat) {
      const int64_t n = 16 * tj.wave32->i;
      if (n == 32 || n == 64 || n == 128 || n == 256) wgmma = "__spn_wgmma_n" + std::to_string(n);
    }
  }
  // A checked build reads the shared operands element by element through
  // the checked accessors (the warp-level path), naming the dot and the
  // buffer.
  auto at = [&](const Symbol& buf) {
    return fmt::format("__spn_mma_where{{\"{}\", {}, {}, \"{}\"}}", ctx_.sourcePath, c.range.begin.line,
                       c.range.begin.col, buf.name);
  };
  auto swizzle = [&](const Symbol& buf) { return buf.swizzle ? value(*buf.swizzle) : std::string("0"); };
  const std::string b = fmt::format("{}, {}, {}", name(&bs), dimExpr(bs, 0).text, dimExpr(bs, 1).text);
  if (registers) {
    const std::string where = ctx_.checked ? fmt::format(", __spn_dot_where{{{}, {}}}", at(bs), at(bs)) : "";
    return {fmt::format("__spn_dot_ra<{}, {}, {}, {}, {}>({}, {}, {}, {}, {}, {}{})", expr(*acc.shape[1]).text,
                        value(*c.args[5]), swizzle(bs), bt ? 1 : 0, wgmma, name(&acc), dotFreshName(acc), name(&a), b,
                        k2, col, where),
            kPostfix};
  }
  const std::string where = ctx_.checked ? fmt::format(", __spn_dot_where{{{}, {}}}", at(a), at(bs)) : "";
  return {fmt::format("__spn_dot<{}, {}, {}, {}, {}, {}, {}>({}, {}, {}, {}, {}, {}, {}, {}, {}, {}{})",
                      expr(*acc.shape[0]).text, expr(*acc.shape[1]).text, value(*c.args[7]), swizzle(a), swizzle(bs),
                      bt ? 1 : 0, wgmma, name(&acc), dotFreshName(acc), name(&a), dimExpr(a, 0).text,
                      dimExpr(a, 1).text, b, value(*c.args[2]), value(*c.args[3]), k2, col, where),
          kPostfix};
}

}  // namespace spindle
