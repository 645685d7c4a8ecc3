// Random statements: declarations and assignments (each value narrowed to
// the variable's interval), control flow (if, for, while, break, continue,
// return), closures with nonlocal writes and their calls, stores to
// elements this thread owns, scratch (shared and local), atomics,
// collectives and barriers placed only where control flow is uniform, and
// asserts that hold by construction.
//
// The implementation is split by subject: stmt_gen.cpp (the dispatcher,
// variables, control flow), stmt_memory.cpp (stores, scratch, atomics,
// barriers), stmt_functions.cpp (closures, defs, calls).
#pragma once

#include <string>
#include <vector>

#include "expr_gen.h"
#include "gen_state.h"

namespace spindle::cpu_fuzz {

// Source lines being written, with their indentation.
struct Out {
  std::vector<std::string> lines;
  int indent = 0;
  void line(const std::string& text) { lines.push_back(std::string(size_t(indent) * 4, ' ') + text); }
  std::string text() const {
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
  }
};

// A loop being written: whether its body may reach collectives (then no
// thread may leave it alone: break, continue and return only where control
// is uniform).
struct LoopState {
  Uni uni = Uni::Thread;       // control uniformity at the start of its body
  bool collectivesOk = false;  // its body may reach collectives
  bool guarded = false;        // it or a loop around it (same function) may: no divergent return
};

// The statement context: Ctx (gen_state.h) plus what the block needs.
struct Block {
  Ctx ctx;
  LoopState* loop = nullptr;  // the innermost loop of this function, if any
  bool ended = false;         // a break, continue or return was written: nothing follows
};

class StmtGen {
 public:
  StmtGen(GenState& s, ExprGen& x) : s_(s), x_(x), rng_(s.rng) {}

  // `count` random statements into `out` at its indentation.
  void block(Out& out, Block& b, int count);
  // One random statement.
  void statement(Out& out, Block& b);

  // Module-level defs, written before the kernel.
  void moduleDef(Out& out);
  // Stores of every output at the kernel's end (random_kernel.cpp calls it).
  void epilogue(Out& out, Block& b);

  // The uniformity of control at this point (a divergent return earlier in
  // the function makes the rest of it per-thread).
  Uni controlUni(const Block& b) const;
  ExprCtx exprCtx(const Block& b) const;
  // Records what an expression evaluated here needs (collectives used in a
  // closure make its calls need uniform control too).
  void note(const Expr& e);

 private:
  // stmt_gen.cpp
  void declare(Out& out, Block& b);
  void assign(Out& out, Block& b);
  void augAssign(Out& out, Block& b);
  void ifStmt(Out& out, Block& b);
  void forStmt(Out& out, Block& b);
  void whileStmt(Out& out, Block& b);
  void exitStmt(Out& out, Block& b);
  void assertStmt(Out& out, Block& b);
  void hashStmt(Out& out, Block& b);
  void nested(Out& out, Block& parent, Block& child, int count);
  Interval chooseCap(IntType t);
  std::vector<Var*> assignable(bool wantBool);
  Block child(const Block& b, Uni condition) const;
  // stmt_memory.cpp
  void ownedBlock(Out& out, Block& b);
  void store(Out& out, Block& b);
  void localDecl(Out& out, Block& b);
  void localStore(Out& out, Block& b);
  void atomic(Out& out, Block& b);
  void barrier(Out& out, Block& b);
  std::string ownedIndex(const Owned& o, const std::vector<Extent>& dims, const Block& b);
  void storeInto(Out& out, const Block& b, const std::string& target, IntType elem, const Interval& cap, bool readBack);
  // stmt_functions.cpp
  void closureDef(Out& out, Block& b);
  void callStmt(Out& out, Block& b);
  void unpack(Out& out, Block& b);
  void returnStmt(Out& out, Block& b);
  std::string returnValues(const FnInfo& fn, const Block& b);
  bool callable(const FnInfo& fn, const Block& b) const;

  GenState& s_;
  ExprGen& x_;
  Rng& rng_;
};

}  // namespace spindle::cpu_fuzz
