// What the random kernel generator knows while it writes a program: the
// names in scope with their types, value intervals and uniformity, the
// buffers and tensors and which elements this thread may touch, the
// functions it may call, and the control context of the current block
// (how uniform it is, loops, what may be stored where). The expression
// and statement generators (expr_gen.h, stmt_gen.h) read and extend it.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "fuzz_program.h"
#include "int_model.h"

namespace spindle::cpu_fuzz {

// Deterministic per seed on every standard library (no <random>
// distributions, whose algorithms are the library's own).
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed ^ 0x9e3779b97f4a7c15ull) {}
  uint64_t next() {  // splitmix64
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int below(int n) { return n <= 1 ? 0 : int(next() % uint64_t(n)); }
  bool percent(int p) { return below(100) < p; }
  // Uniform in [lo, hi].
  Int between(Int lo, Int hi) {
    const unsigned __int128 span = static_cast<unsigned __int128>(hi - lo) + 1;
    const unsigned __int128 r = (static_cast<unsigned __int128>(next()) << 64) | next();
    return span == 0 ? lo + Int(r) : lo + Int(r % span);
  }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[size_t(below(int(v.size())))];
  }

 private:
  uint64_t s_;
};

// An extent of a tensor, buffer or loop: how to write it, and its values.
struct Extent {
  std::string text;  // "N", "dim(x, 1)", "16"
  Interval range;    // at least 1
  bool constant = false;
};

struct Var {
  std::string name;
  bool isBool = false;
  IntType type;
  Interval cap;  // every value it ever holds
  // How uniform its value is. Only immutable variables are trusted for it:
  // a variable assigned again (or by a closure) counts as per-thread.
  Uni uni = Uni::Thread;
  bool isMutable = false;
  bool loopVar = false;
  bool isConst = false;     // a module const
  bool nonlocalOk = false;  // a scalar a closure may rebind with `nonlocal`
  std::string below;        // an extent's text when the value is known to lie in [0, extent)
  int frame = 0;            // the function that declared it
  Uni trusted() const { return isMutable ? Uni::Thread : uni; }
};

// Which thread may store what: tensors and scratch are only written where
// the writer owns the element, so that every run computes the same bytes.
enum class Phase { Init, Read, Write, Atomic };
enum class AtomicOp { Add, Max, Min, And, Or, Xor };
const char* atomicName(AtomicOp op);

struct TensorVar {
  std::string name;
  ParamSpec::Kind kind;
  IntType elem;
  std::vector<Extent> dims;
  Interval values;              // inputs: what the driver fills in
  AtomicOp op = AtomicOp::Add;  // atomic outputs: the one operation they take
};

struct SharedBuf {
  std::string name;
  IntType elem;
  std::vector<Extent> dims;
  Phase phase = Phase::Init;
  AtomicOp op = AtomicOp::Add;  // in the atomic phase
  Interval values;              // what it holds in the read phase
};

struct LocalBuf {
  std::string name;
  IntType elem;
  std::vector<Extent> dims;
  Interval cap;
  int frame = 0;
};

// An element this thread owns (it alone stores there, in this block of
// code): a tensor's or a shared buffer's, as index expressions.
struct Owned {
  std::string target;  // tensor or buffer name
  std::vector<std::string> index;
};

// A block header that makes this thread the owner of output elements: a
// loop over the columns of its row (`for {v} in range(t, N, 256):`), or a
// guard (`if g < N:`). "{v}" is replaced by a fresh loop variable.
struct Opener {
  std::string header;
  std::string alias;      // guards: the body starts with `{v} = alias` (an index known to be in range)
  std::string loopBelow;  // loops: the variable lies in [0, this extent)
  Interval loopRange;     // loops: the variable's values
  int trips = 1;          // iterations at most
  std::vector<Owned> owned;
};

// A def or closure the generator has written and may call.
struct FnInfo {
  std::string name;
  bool moduleDef = false;
  struct Param {
    std::string name;
    IntType type;
    Interval cap;
  };
  std::vector<Param> params;
  std::vector<IntType> results;  // none: returns nothing; two or more: a tuple
  std::vector<Interval> resultCaps;
  bool annotated = true;  // closures may leave their return type out
  // Effects a caller must respect.
  Uni needsUniform = Uni::Thread;             // Block: reaches sync() or a block collective; Warp: a warp one
  bool hasEffects = false;                    // stores, atomics or nonlocal writes: a call is a statement of its own
  std::set<std::string> writes;               // names it rebinds (nonlocal), through its calls too
  std::map<std::string, Phase> sharedPhases;  // phases of the shared buffers it touches
  int frame = 0;                              // the frame it was defined in (module defs: -1)
};

// The control context of the block being written.
struct Ctx {
  Uni uni = Uni::Block;      // how uniform reaching this point is
  bool inLoop = false;       // break and continue are allowed
  int work = 1;              // iterations of the enclosing loops, at most
  int depth = 0;             // nesting of blocks, for size
  std::vector<Owned> owned;  // elements this thread may store
};

// One function being written (the kernel, a def or a closure), and what its
// body turned out to need and do, for its callers.
struct Frame {
  FnInfo* fn = nullptr;                       // null: the kernel
  bool moduleDef = false;                     // a def sees no kernel names: dims, tensors, shared buffers
  bool diverged = false;                      // a return some threads took: the rest runs per-thread
  Uni needs = Uni::Thread;                    // Block: it reaches a barrier; Warp: a warp collective
  bool effects = false;                       // it stores, or rebinds an enclosing name
  std::set<std::string> writes;               // enclosing names it rebinds
  std::map<std::string, Phase> sharedPhases;  // the phases of the shared buffers it touches
  std::set<std::string> nonlocals;            // enclosing names it may assign (declared nonlocal)
};

// A snapshot of what is in scope: restored when a block ends.
struct ScopeMark {
  size_t vars, locals, fns;
};

struct GenState {
  explicit GenState(uint64_t seed) : rng(seed) {}
  Rng rng;
  FuzzProgram program;

  // What is in scope, innermost last. Pointers stay valid (deques).
  std::deque<Var> varStore;
  std::vector<Var*> vars;
  std::deque<LocalBuf> localStore;
  std::vector<LocalBuf*> locals;
  std::deque<FnInfo> fnStore;
  std::vector<FnInfo*> fns;
  std::vector<TensorVar> tensors;
  std::vector<SharedBuf> shared;
  std::vector<Frame> frames;

  // The kernel's geometry (random_kernel.cpp decides it).
  Extent blockDim;            // block_dim(): a const or min(N, B)
  Interval blockId, gridDim;  // block_id(), grid_dim()
  int blockMax = 1;           // the largest block
  bool wholeWarps = false;    // every block a multiple of 64 threads: shuffles are defined
  bool allowWidthDependent = false;
  std::string threadVar;               // the immutable thread_id()
  std::string hashVar;                 // the u64 every thread folds values into (nonlocal-able)
  std::string hashOutput;              // the output that receives it at the end
  std::vector<struct Opener> openers;  // the plan's blocks that own output elements
  int maxWork = 4000;                  // iterations per thread, all loops nested

  // Per-program switches of constructs (swarm testing: each program uses a
  // random subset, so rare combinations are not drowned by common ones).
  std::map<std::string, int> weights;
  int weight(const std::string& what) const {
    auto it = weights.find(what);
    return it == weights.end() ? 0 : it->second;
  }

  int counter = 0;
  std::string fresh(const std::string& prefix) { return prefix + std::to_string(++counter); }
  void feature(const std::string& f) { program.features.insert(f); }

  ScopeMark mark() const { return {vars.size(), locals.size(), fns.size()}; }
  void restore(const ScopeMark& m) {
    vars.resize(m.vars);
    locals.resize(m.locals);
    fns.resize(m.fns);
  }
  Var& addVar(Var v) {
    v.frame = int(frames.size()) - 1;
    varStore.push_back(std::move(v));
    vars.push_back(&varStore.back());
    return varStore.back();
  }
  Var* findVar(const std::string& name) {
    for (auto it = vars.rbegin(); it != vars.rend(); ++it)
      if ((*it)->name == name) return *it;
    return nullptr;
  }
  SharedBuf* findShared(const std::string& name) {
    for (auto& s : shared)
      if (s.name == name) return &s;
    return nullptr;
  }
  Frame& frame() { return frames.back(); }
  // `v` was assigned here: if it is an enclosing function's, the callers of
  // this one see it change.
  void rebind(const Var& v) {
    if (v.frame == int(frames.size()) - 1) return;
    frame().effects = true;
    frame().writes.insert(v.name);
  }
  // Dims, tensors and shared buffers are visible (not in a module def).
  bool kernelNames() const {
    for (const Frame& f : frames)
      if (f.moduleDef) return false;
    return true;
  }
};

}  // namespace spindle::cpu_fuzz
