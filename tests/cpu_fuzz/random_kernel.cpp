// The plan of a random kernel (random_kernel.h): its geometry, parameters,
// which thread owns which output element, shared buffers, and the order of
// its parts. Its statements come from StmtGen.
//
// Two plans, the common shapes of real kernels:
//   rows: one block per row (`@grid(M)`); thread t owns out[row, t] and,
//         in `for j in range(t, N, block_dim())`, out[row, j]; thread 0
//         owns out[row]. The block may follow the launch (`min(N, B)`).
//   flat: one thread per element (`@grid(cdiv(N, B))`); under
//         `if g < N` thread g owns out[g] and out[g, c].
#include "random_kernel.h"

#include <cstdio>

#include "stmt_gen.h"

namespace spindle::cpu_fuzz {
namespace {

Int pow2(int k) { return Int(1) << k; }

// Each construct is on in most programs and off in some (swarm testing).
void chooseSwitches(GenState& s) {
  static const char* kSwitches[] = {"tensor_read",
                                    "ternary",
                                    "block_collective",
                                    "warp_collective",
                                    "shuffle",
                                    "closure",
                                    "nonlocal",
                                    "aug_assign",
                                    "if",
                                    "for",
                                    "while",
                                    "exit",
                                    "assert",
                                    "hash",
                                    "owned",
                                    "store",
                                    "local",
                                    "atomic",
                                    "barrier",
                                    "call",
                                    "unpack",
                                    "static_range",
                                    "shared",
                                    "def"};
  for (const char* k : kSwitches) s.weights[k] = s.rng.percent(80) ? 1 : 0;
  // The basics stay on: without them most programs would be trivial.
  s.weights["if"] = s.weights["store"] = s.weights["owned"] = s.weights["tensor_read"] = 1;
}

IntType elementType(Rng& rng) {
  static const IntType kTypes[] = {{8, true},  {16, true},  {32, true},  {32, true},  {64, true},
                                   {8, false}, {16, false}, {32, false}, {32, false}, {64, false}};
  return kTypes[rng.below(10)];
}

// What the driver fills an input with.
Interval inputValues(Rng& rng, IntType t) {
  const int roll = rng.below(100);
  if (roll < 40) return Interval::full(t);
  const int k = 1 + rng.below(t.bits - 1);
  if (t.isSigned && roll < 70) return {-pow2(k - 1), pow2(k - 1) - 1};
  return {0, pow2(k - 1)};
}

class Planner {
 public:
  explicit Planner(uint64_t seed) : s_(seed), x_(s_), g_(s_, x_), rng_(s_.rng), seed_(seed) {}

  FuzzProgram build() {
    FuzzProgram& p = s_.program;
    p.seed = seed_;
    char name[64];
    std::snprintf(name, sizeof name, "fuzz_%llu.spn", static_cast<unsigned long long>(seed_));
    p.fileName = name;
    p.kernel = "fuzz";
    chooseSwitches(s_);
    geometry();
    parameters();
    Out module;
    consts(module);
    if (s_.weight("def"))
      for (int i = rng_.below(3); i > 0; --i) g_.moduleDef(module);
    Out kernel;
    kernelBody(kernel);
    p.text = header() + module.text() + decorators() + signature() + kernel.text();
    return p;
  }

 private:
  void geometry() {
    rows_ = rng_.percent(50);
    static const int kBlocks[] = {32, 64, 96, 128, 192, 256};
    B_ = kBlocks[rng_.below(6)];
    dynamicBlock_ = rows_ && rng_.percent(25);
    s_.blockMax = B_;
    s_.wholeWarps = !dynamicBlock_ && B_ % 64 == 0;
    s_.allowWidthDependent = rng_.percent(35);
    blockText_ = rng_.percent(40) ? "BLOCK" : std::to_string(B_);
    Mmax_ = 1 + rng_.below(4);
    Nmax_ = rows_ ? 1 + rng_.below(3 * B_) : 1 + rng_.below(4 * B_);
    hasK_ = rng_.percent(50);
    Kmax_ = 1 + rng_.below(6);
    const int blocks = rows_ ? Mmax_ : (Nmax_ + B_ - 1) / B_;
    s_.blockId = {0, blocks - 1};
    s_.gridDim = {1, blocks};
    // The loops that stride over a row: block_dim() or the constant.
    s_.blockDim.text = (dynamicBlock_ || rng_.percent(40)) ? "block_dim()" : blockText_;
    s_.blockDim.range = dynamicBlock_ ? Interval{1, B_} : Interval::point(B_);
    s_.blockDim.constant = !dynamicBlock_;
  }

  Extent extentOf(const std::string& tensor, size_t axis, const AxisSpec& a) {
    Extent e;
    if (a.dim.empty()) {
      e.text = std::to_string(a.offset);
      e.range = Interval::point(a.offset);
      e.constant = true;
      return e;
    }
    const Interval d = dimRange(a.dim);
    e.range = {a.scale * d.lo + a.offset, a.scale * d.hi + a.offset};
    if (a.scale == 1 && a.offset == 0) e.text = a.dim;
    else e.text = rng_.percent(50) ? "dim(" + tensor + ", " + std::to_string(axis) + ")" : "(" + shapeText(a) + ")";
    return e;
  }

  Interval dimRange(const std::string& dim) const {
    if (dim == "M") return {1, Mmax_};
    if (dim == "K") return {1, Kmax_};
    return {1, Nmax_};
  }

  static std::string shapeText(const AxisSpec& a) {
    if (a.dim.empty()) return std::to_string(a.offset);
    std::string t = a.scale == 1 ? a.dim : std::to_string(a.scale) + " * " + a.dim;
    if (a.offset > 0) t += " + " + std::to_string(a.offset);
    return t;
  }

  void addTensor(const std::string& name, ParamSpec::Kind kind, IntType elem, std::vector<AxisSpec> shape) {
    ParamSpec ps;
    ps.name = name;
    ps.kind = kind;
    ps.type = elem;
    ps.shape = shape;
    ps.values = kind == ParamSpec::Kind::Input ? inputValues(rng_, elem) : Interval::full(elem);
    TensorVar tv;
    tv.name = name;
    tv.kind = kind;
    tv.elem = elem;
    tv.values = ps.values;
    for (size_t i = 0; i < shape.size(); ++i) {
      tv.dims.push_back(extentOf(name, i, shape[i]));
      if (!shape[i].dim.empty()) usedDims_.insert(shape[i].dim);
    }
    if (kind == ParamSpec::Kind::Atomic) {
      static const AtomicOp kOps[] = {AtomicOp::Add, AtomicOp::Max, AtomicOp::Min,
                                      AtomicOp::And, AtomicOp::Or,  AtomicOp::Xor};
      tv.op = kOps[rng_.below(6)];
    }
    s_.tensors.push_back(tv);
    params_.push_back(ps);
  }

  void parameters() {
    const AxisSpec M{"M"}, N{"N"}, K{"K"};
    auto constant = [](int v) { return AxisSpec{"", 1, v}; };
    // Inputs. The first binds the dims the grid needs.
    addTensor("x0", ParamSpec::Kind::Input, elementType(rng_), rows_ ? std::vector<AxisSpec>{M, N} : std::vector{N});
    for (int i = 1, n = rng_.below(3); i <= n; ++i) {
      std::vector<std::vector<AxisSpec>> shapes = {
          {M, N}, {N}, {M}, {N, constant(2 + rng_.below(3))}, {{"N", 2, 0}}, {{"N", 1, 1}}, {M, constant(3), N}};
      if (hasK_) {
        shapes.push_back({K});
        shapes.push_back({K, M});
      }
      addTensor("x" + std::to_string(i), ParamSpec::Kind::Input, elementType(rng_), rng_.pick(shapes));
    }
    // Outputs: the hash of every thread, and a few more.
    s_.hashOutput = "hout";
    if (rows_) {
      addTensor("hout", ParamSpec::Kind::Output, IntType::u64(), {M, constant(B_)});
      for (int i = 0, n = rng_.below(3); i < n; ++i) {
        std::vector<std::vector<AxisSpec>> shapes = {{M, N}, {M}, {M, constant(B_)}};
        addTensor("y" + std::to_string(i), ParamSpec::Kind::Output, elementType(rng_), rng_.pick(shapes));
      }
    } else {
      addTensor("hout", ParamSpec::Kind::Output, IntType::u64(), {N});
      for (int i = 0, n = rng_.below(3); i < n; ++i) {
        std::vector<std::vector<AxisSpec>> shapes = {{N}, {N, constant(2 + rng_.below(3))}};
        addTensor("y" + std::to_string(i), ParamSpec::Kind::Output, elementType(rng_), rng_.pick(shapes));
      }
    }
    if (s_.weight("atomic") && rng_.percent(60)) {
      static const IntType kAtomicTypes[] = {IntType::i32(), IntType::u32(), IntType::i64(), IntType::u64()};
      static const int kSizes[] = {1, 3, 16};
      addTensor("acc", ParamSpec::Kind::Atomic, kAtomicTypes[rng_.below(4)], {constant(kSizes[rng_.below(3)])});
    }
    // Scalars: uniform values every thread shares.
    for (int i = 0, n = rng_.below(3); i < n; ++i) {
      ParamSpec ps;
      ps.name = "s" + std::to_string(i);
      ps.kind = ParamSpec::Kind::Scalar;
      ps.type = x_.computeType();
      ps.values = rng_.percent(50) ? Interval::full(ps.type) : Interval{ps.type.isSigned ? -1000 : 0, 1000};
      params_.push_back(ps);
    }
    // Any order: the ABI follows the source's.
    for (size_t i = params_.size(); i > 1; --i) std::swap(params_[i - 1], params_[size_t(rng_.below(int(i)))]);
    for (const char* d : {"M", "N", "K"}) {
      if (!usedDims_.count(d)) continue;
      DimSpec spec;
      spec.name = d;
      spec.hi = int64_t(dimRange(d).hi);
      spec.alwaysStatic = std::string(d) == "K";
      s_.program.dims.push_back(spec);
    }
    s_.program.params = params_;
  }

  void consts(Out& out) {
    if (blockText_ == "BLOCK") out.line("const BLOCK = " + std::to_string(B_));
    for (int i = rng_.below(3); i > 0; --i) {
      Var v;
      v.name = s_.fresh("C");
      const bool weak = rng_.percent(50);
      v.type = weak ? IntType::i32() : x_.computeType();
      const Int value = rng_.between(v.type.isSigned ? -1000 : 0, weak ? 1000 : 100000);
      v.cap = Interval::point(value);
      v.uni = Uni::Block;
      v.isConst = true;
      out.line("const " + v.name + (weak ? "" : ": " + v.type.name()) + " = " +
               (value < 0 ? "-" + intText(-value) : intText(value)));
      s_.addVar(v);
    }
    out.line("");
  }

  std::string header() const {
    std::string h = "# A random kernel of tests/cpu_fuzz (seed " + std::to_string(s_.program.seed) + "): ";
    h += rows_ ? "one block per row" : "one thread per element";
    h += ", " + std::string(dynamicBlock_ ? "a block of min(N, " + std::to_string(B_) + ")"
                                          : "a block of " + std::to_string(B_));
    h += s_.program.widthDependent ? ", depends on the warp width.\n" : ", the same at every warp width.\n";
    return h;
  }

  std::string decorators() const {
    std::string d = rows_ ? "@grid(M)\n" : "@grid(cdiv(N, " + blockText_ + "))\n";
    d += dynamicBlock_ ? "@block(min(N, " + blockText_ + "))\n" : "@block(" + blockText_ + ")\n";
    if (usedDims_.count("K")) d += "@static(K)\n";
    return d;
  }

  std::string signature() const {
    std::string sig = "kernel fuzz(";
    for (size_t i = 0; i < params_.size(); ++i) {
      const ParamSpec& p = params_[i];
      sig += (i ? ", " : "") + p.name + ": " + p.type.name();
      if (p.isTensor()) {
        sig += "[";
        for (size_t a = 0; a < p.shape.size(); ++a) sig += (a ? ", " : "") + shapeText(p.shape[a]);
        sig += "]";
      }
    }
    return sig + "):\n";
  }

  // The kernel's body: the thread's coordinates, its hash, shared buffers
  // filled and met at a barrier, random statements, and every output
  // stored at the end.
  void kernelBody(Out& out) {
    out.indent = 1;
    Frame kernel;
    s_.frames.push_back(kernel);
    Block top;
    top.ctx.uni = Uni::Block;
    for (const ParamSpec& p : params_) {
      if (p.isTensor()) continue;
      Var v;
      v.name = p.name;
      v.type = p.type;
      v.cap = p.values;
      v.uni = Uni::Block;
      s_.addVar(v);
    }
    Var t;
    t.name = s_.threadVar = "t";
    t.type = IntType::i32();
    t.cap = {0, B_ - 1};
    t.uni = Uni::Thread;
    if (rows_) {
      Var row;
      row.name = "row";
      row.type = IntType::i32();
      row.cap = s_.blockId;
      row.uni = Uni::Block;
      row.below = "M";
      out.line("row = block_id()");
      s_.addVar(row);
    }
    out.line("t = thread_id()");
    s_.addVar(t);
    if (!rows_) {
      Var g;
      g.name = "g";
      g.type = IntType::i64();
      g.cap = {0, s_.gridDim.hi * B_ - 1};
      out.line("g = i64(block_id()) * " + blockText_ + " + t");
      s_.addVar(g);
    }
    if (s_.allowWidthDependent && rng_.percent(50)) {
      // The warp's index: the same on every lane of a warp (8.9), so warp
      // collectives may sit under conditions on it.
      Var w;
      w.name = "wid";
      w.type = IntType::i32();
      w.cap = {0, (B_ - 1) / 32};
      w.uni = Uni::Warp;
      out.line("wid = t // warp_size()");
      s_.addVar(w);
      s_.program.widthDependent = true;
      s_.feature("warp_index");
    }
    Var h;
    h.name = s_.hashVar = "hsh";
    h.type = IntType::u64();
    h.cap = Interval::full(h.type);
    h.isMutable = h.nonlocalOk = true;
    out.line("hsh: u64 = " + x_.literal(IntType::u64(), {0, 1000}, true).text);
    s_.addVar(h);
    openers(top);
    sharedBuffers(out, top);
    g_.block(out, top, 6 + rng_.below(10));
    if (!top.ended) g_.epilogue(out, top);
  }

  void openers(Block& top) {
    const std::string bd = s_.blockDim.text;
    Opener stride;  // a thread's columns of its row, or its slots of a buffer sized N
    stride.header = "for {v} in range(t, N, " + bd + "):";
    stride.loopBelow = "N";
    stride.loopRange = {0, Nmax_ - 1};
    stride.trips = (Nmax_ + B_ - 1) / B_;
    if (rows_) {
      Opener first;
      first.header = "if t == 0:";
      for (const TensorVar& tv : s_.tensors) {
        if (tv.kind != ParamSpec::Kind::Output) continue;
        if (tv.dims.size() == 2 && tv.dims[1].constant) top.ctx.owned.push_back({tv.name, {"row", "t"}});
        else if (tv.dims.size() == 2) stride.owned.push_back({tv.name, {"row", "{v}"}});
        else first.owned.push_back({tv.name, {"row"}});
      }
      if (!first.owned.empty()) s_.openers.push_back(first);
    } else {
      Opener guard;
      guard.header = "if g < N:";
      guard.alias = "g";
      guard.loopBelow = "N";
      guard.loopRange = {0, Nmax_ - 1};
      for (const TensorVar& tv : s_.tensors) {
        if (tv.kind != ParamSpec::Kind::Output) continue;
        guard.owned.push_back(
            {tv.name, tv.dims.size() == 2 ? std::vector<std::string>{"{v}", "*"} : std::vector<std::string>{"{v}"}});
      }
      s_.openers.push_back(guard);
    }
    stride_ = stride;
  }

  void sharedBuffers(Out& out, Block& top) {
    Opener stride = stride_;
    if (s_.weight("shared") && usedDims_.count("N"))
      for (int i = rng_.below(3); i > 0; --i) {
        SharedBuf sb;
        sb.name = s_.fresh("sh");
        sb.elem = x_.computeType();
        const int kind = rng_.below(3);
        Extent b{blockText_, Interval::point(B_), true};
        Extent n{"N", {1, Nmax_}, false};
        const int c = 2 + rng_.below(3);
        if (kind == 0) sb.dims = {b};
        else if (kind == 1) sb.dims = {n};
        else sb.dims = {b, Extent{std::to_string(c), Interval::point(c), true}};
        const int k = 1 + rng_.below(sb.elem.bits - 2);
        sb.values = sb.elem.isSigned && rng_.percent(50) ? Interval{-pow2(k), pow2(k)} : Interval{0, pow2(k)};
        std::string dims = sb.dims[0].text + (sb.dims.size() > 1 ? ", " + sb.dims[1].text : "");
        out.line(sb.name + " = shared(" + sb.elem.name() + ", [" + dims + "])");
        // Every slot is written before anything reads it: threads stride
        // over the first axis.
        const std::string v = s_.fresh("j");
        out.line("for " + v + " in range(t, " + sb.dims[0].text + ", " + s_.blockDim.text + "):");
        ++out.indent;
        std::string target = sb.name + "[" + v;
        if (sb.dims.size() > 1) {
          const std::string w = s_.fresh("k");
          out.line("for " + w + " in range(" + sb.dims[1].text + "):");
          ++out.indent;
          target += ", " + w;
        }
        ExprCtx c0;
        c0.collectives = Uni::Thread;
        out.line(target + "] = " + x_.valueFor(sb.elem, sb.values, c0, 2).text);
        out.indent = 1;
        // Afterwards each thread owns slots of its own for the write phases.
        if (kind == 0) top.ctx.owned.push_back({sb.name, {"t"}});
        if (kind == 1) stride.owned.push_back({sb.name, {"{v}"}});
        if (kind == 2) top.ctx.owned.push_back({sb.name, {"t", "*"}});
        s_.shared.push_back(sb);  // phase Init: nothing reads it before the barrier
        s_.feature("shared");
        if (kind == 1) s_.feature("shared_dynamic");
      }
    if (!s_.shared.empty()) out.line("sync()");
    for (SharedBuf& sb : s_.shared) sb.phase = Phase::Read;
    if (!stride.owned.empty()) s_.openers.push_back(stride);
  }

  GenState s_;
  ExprGen x_;
  StmtGen g_;
  Rng& rng_;
  uint64_t seed_ = 0;
  bool rows_ = true, dynamicBlock_ = false, hasK_ = false;
  int B_ = 128, Mmax_ = 1, Nmax_ = 1, Kmax_ = 1;
  std::string blockText_;
  std::vector<ParamSpec> params_;
  std::set<std::string> usedDims_;
  Opener stride_;
};

}  // namespace

FuzzProgram randomKernel(uint64_t seed) { return Planner(seed).build(); }

}  // namespace spindle::cpu_fuzz
