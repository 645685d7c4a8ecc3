// Semantic analysis: the symbols of a module, the function scopes they live
// in, and the checks of docs/language.md that need names, types or constants.
//
// Analysis runs in two layers:
//  1. Resolution (sema_resolve.cpp), once per module: Python's scoping rules,
//     every NameExpr bound to a Symbol, nonlocal rules, what each closure
//     references directly, consts evaluated.
//  2. Typing (sema_types.cpp), once per type binding: every Expr gets its
//     scalar type, promotion and builtin rules are checked. A generic kernel
//     is typed with each type parameter bound to f32 at check time, and again
//     with the caller's dtypes when it is specialized.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "frontend/ast.h"
#include "frontend/diagnostics.h"
#include "spindle/generator.h"

namespace spindle {

struct BuiltinInfo;

struct FunctionScope;

// A compile-time value: consts, @block, static_range bounds, static sizes.
struct ConstValue {
  bool isFloat = false;
  int64_t i = 0;
  double f = 0.0;
  std::string function;  // a `fn` parameter's binding (a module def); never in arithmetic
  static ConstValue ofInt(int64_t v) { return {false, v, 0.0, {}}; }
  static ConstValue ofFloat(double v) { return {true, 0, v, {}}; }
  double asDouble() const { return isFloat ? f : static_cast<double>(i); }
};

enum class SymbolKind {
  Const,     // module-level `const`
  Function,  // module-level `def`
  Kernel,
  TensorParam,
  ScalarParam,  // kernel scalar params and def/closure params
  DimSymbol,    // a dim symbol of a kernel's tensor types
  TypeParam,    // `T` of `kernel k[T]`
  Local,        // a variable declared by assignment
  LoopVar,
  SharedBuffer,  // shared(T, [dims])
  LocalBuffer,   // local(T, [dims], init)
  Fragment,      // mma_zero(f32, [TI, TJ]), mma_a(T, [TI]), mma_b(T, [TJ]): tiles in registers (8.11)
  Closure,       // a nested def
};
const char* symbolKindName(SymbolKind k);

struct Symbol {
  int id = 0;  // creation order: a stable tie-breaker for deterministic output
  SymbolKind kind;
  std::string name;
  SourceRange declRange;
  FunctionScope* owner = nullptr;  // the function it belongs to; null at module level

  // Value type (scalars, locals, consts, loop vars: i64 for dims) or element
  // type (tensors, buffers). When `typeParam` is set the type comes from the
  // binding and `type` holds the type currently being checked.
  ScalarType type = ScalarType::Invalid;
  std::string typeParam;
  bool weakType = false;  // unannotated const: adopts the other operand's type

  // Tensors and buffers: one entry per axis.
  std::vector<const Expr*> shape;  // as written (dims of the type / the list)
  bool strided = false;
  // A strided tensor whose innermost stride is 1 in this specialization
  // (Specialization::unitStrideTensors; set on a specialization's private
  // copy): its last axis is addressed without a stride (strideAxes).
  bool unitInnerStride = false;
  bool written = false;  // a tensor the kernel (or a callee) stores into
  // A tensor indexed in runs of consecutive elements somewhere: its last
  // index is `e + k` with k a static_range variable (x[row, j + k]). Only
  // such a tensor's alignment can matter to the compiler (vector access), so
  // only its alignment is specialized on (Specialization::alignedTensors).
  bool accessedInRuns = false;
  bool unrolledLoopVar = false;  // LoopVar of a static_range loop
  bool writableElement = false;  // LoopVar v of `for r, c, v in elements(..)`: assigning it writes the tile's element
  bool matrixSource = false;     // a tensor or shared buffer some mma_load_* reads (all its dims bound the tile)
  // Fragment updated by some dot(acc, ...): printed with a `fresh` flag
  // (no value until its first dot) and settled before any other use
  // (FunctionPrinter::settleDotAccumulators).
  bool dotAccumulator = false;
  // SharedBuffer declared `shared(T, [R, C], swizzle=S)`: S's expression (a
  // compile-time value, 32, 64 or 128 bytes); null for a row-major buffer.
  // Every access of the buffer goes through the swizzled layout
  // (docs/language.md 5.4, templates/prelude.in __spn_swizzle_offset).
  const Expr* swizzle = nullptr;
  // SharedBuffer declared `barriers(N, count)`: count's expression (a
  // compile-time value). Its elements are the barriers' 64-bit words,
  // touched only by arrive() and wait().
  const Expr* barrierCount = nullptr;
  // TensorParam declared `T[...] | None`, and whether this specialization
  // has it (set on a specialization's private copy before pruning).
  bool optional = false;
  bool aliased = false;  // TensorParam named in @alias: may share memory, so no __restrict__
  enum class Presence { Unknown, Present, Absent } presence = Presence::Unknown;
  int paramIndex = -1;  // position among the kernel's / function's params

  ConstValue value;  // Const
  // A Const whose value only a specialization knows: a module const whose
  // expression names dims (`const VPT = H // 256`), or a kernel-body const
  // that needs static dims or sizeof(T). `value` is a stand-in until the
  // specialization evaluates it (generate.cpp); lookups that know dims (at
  // launch) evaluate `init` instead.
  bool perSpecialization = false;
  // A body const that uses warp_size() and differs by warp width: `value`
  // is its value with 32-wide warps, this with 64-wide ones. Lookups that
  // know the width pick one; others find no value, and the file chooses
  // through __SPN_WARP_SIZE.
  std::optional<ConstValue> wave64Value;
  std::string unavailable;  // why this specialization could not evaluate it

  // Fragment: which tiles it holds (accumulators, A or B operands).
  enum class FragmentRole : uint8_t { None, Acc, A, B, Rows } fragmentRole = FragmentRole::None;

  // DimSymbol: named in @static
  bool staticDeclared = false;

  // Function / Closure / Kernel
  FunctionScope* scope = nullptr;

  // LocalBuffer: the initial value expr; Local: its declaring assignment;
  // Const: its value's expression.
  const Expr* init = nullptr;
  ScalarType declaredType = ScalarType::Invalid;  // from an annotation
};

// How a closure receives one captured symbol.
enum class CaptureMode {
  Value,      // read-only scalar
  Reference,  // `nonlocal` names (and anything a callee needs by reference)
  Pointer,    // tensors and scratch buffers
  Dim,        // a dynamic dim symbol (int64_t), named or implied by a tensor's shape
  Stride,     // one stride of a captured strided tensor
};
const char* captureModeName(CaptureMode m);

struct Capture {
  Symbol* symbol;
  CaptureMode mode;
  int axis = -1;                // Stride: which axis
  Symbol* impliedBy = nullptr;  // Dim/Stride: the tensor whose shape needs it (null if named)
};

struct FunctionScope {
  enum class Kind { Kernel, Function, Closure };
  Kind kind;
  std::string name;
  KernelDecl* kernel = nullptr;         // Kind::Kernel
  FunctionDecl* function = nullptr;     // Function / Closure
  FunctionScope* parent = nullptr;      // enclosing function (closures)
  FunctionScope* kernelRoot = nullptr;  // the kernel or module def at the top of the nest
  Symbol* symbol = nullptr;
  std::vector<FunctionScope*> closures;  // nested defs, in source order

  std::vector<Symbol*> params;               // in order
  std::map<std::string, Symbol*> names;      // everything declared here (not loop vars)
  std::vector<Symbol*> declared;             // the same, in declaration order
  std::map<std::string, Symbol*> nonlocals;  // `nonlocal x` -> the outer symbol
  std::vector<Symbol*> loopVars;

  // Outer symbols this function's own body names (not through callees), in
  // first-use order, and which of them it assigns (nonlocal).
  std::vector<Symbol*> outerRefs;
  // Functions (defs/closures) this body calls directly.
  std::vector<FunctionScope*> callees;
  bool usesBlockCollective = false;  // calls block_sum/max/min directly
  bool usesDot = false;              // calls dot: its sync() also orders shared writes for wgmma (__spn_dot_sync)
  bool usesBlockArgReduce = false;   // calls block_argmax/argmin directly (a value and an index slot per warp)

  // Filled by the capture-analysis pass (closures only): the outlined
  // function's extra parameters, in a deterministic order.
  std::vector<Capture> captures;
  bool capturesBlockScratch = false;
  // The scratch must hold a value and an index per warp: a block_argmax or
  // block_argmin is reached from here (only the kernel's declaration reads it).
  bool blockScratchKeyValue = false;

  // Kernel only: @grid calls resident_blocks(), so the grid depends on the
  // device and the compiled binary, not only on the dims.
  bool gridUsesResidentBlocks = false;
  // @occupancy(B): registers budgeted for B resident blocks per
  // multiprocessor (__launch_bounds__'s second argument); 0 without it.
  int minBlocksPerMultiprocessor = 0;
  // Kernel only: @tune's configs (sema_tune.h); empty without one.
  std::optional<TuneInfo> tune;
  // Kernel only: integer scalar parameters @grid or @block names, in order of
  // first use: the launcher evaluates those expressions with their values.
  std::vector<Symbol*> launchScalars;
  // Kernel only: each @alias's tensors, which may be the same memory.
  std::vector<std::vector<Symbol*>> aliasGroups;
  // Kernel only: `const NAME = value` statements of its body, in order: Const
  // symbols evaluated per specialization (they may use static dims and
  // sizeof(T)).
  std::vector<Symbol*> bodyConsts;
  // Kernel only: compile-time parameters from its brackets. Values are
  // Const symbols (bound ones are listed by name too); a bound fn parameter
  // is a name for the module def in `names`.
  std::vector<Symbol*> valueParams;
  std::set<std::string> boundValueParams;
  std::vector<std::string> fnParams;
  std::set<std::string> unboundFnParams;
  bool typingDeferred = false;  // calls an unbound fn parameter: typed only when specialized
  // Dim symbols of the tensor parameters' types, in first-appearance order.
  // A def's (or closure's) are bound from the arguments at each call.
  std::vector<Symbol*> dimSymbols;
  // Defs and closures: their own dim symbols the body names (or reads
  // through dim(x, k)); and, from the capture analysis, the ones the
  // function takes as parameters: those, the ones that address its tensor
  // parameters' rows, and the ones its closures capture.
  std::set<Symbol*> dimsRead;
  std::vector<Symbol*> dimParams;
  std::map<std::string, Symbol*> typeParams;
  ScalarType returnType = ScalarType::Invalid;  // Invalid: no value returned (or a tuple)
  bool returnsTypeParam = false;
  // A function that returns a tuple (docs/language.md 5.11): the type of
  // each element under the binding being checked, from `-> tuple[...]` or
  // inferred from a closure's first return. Empty when it returns one value
  // or none.
  std::vector<ScalarType> returnTuple;
  bool returnsValue() const { return returnType != ScalarType::Invalid || returnsTypeParam || !returnTuple.empty(); }
};

class SemaModule {
 public:
  SourceModule* module = nullptr;
  std::shared_ptr<const SourceFile> file;
  std::vector<std::unique_ptr<Symbol>> symbols;
  std::vector<std::unique_ptr<FunctionScope>> scopes;
  std::map<std::string, Symbol*> globals;  // consts, defs, kernels
  std::vector<Symbol*> consts;             // in order
  std::vector<FunctionScope*> functions;   // module defs, in order
  std::vector<FunctionScope*> kernels;     // in order

  Symbol* newSymbol(SymbolKind kind, std::string name, SourceRange range, FunctionScope* owner);
  FunctionScope* newScope(FunctionScope::Kind kind, std::string name, FunctionScope* parent);
  FunctionScope* findKernel(const std::string& name) const;
};

// A dim symbol of a kernel's parameters: the ones a specialization may make
// static and a launch binds (a def's dims are bound by each call).
inline bool isKernelDim(const Symbol& s) {
  return s.kind == SymbolKind::DimSymbol && s.owner && s.owner->kind == FunctionScope::Kind::Kernel;
}

// Module consts given other values, by name (a specialization's --const).
using ConstValues = std::map<std::string, ConstValue>;

std::unique_ptr<SemaModule> analyzeModule(SourceModule& module, DiagnosticEngine& diags,
                                          const ConstValues& constOverrides = {});

// Layer 2: types every expression of `kernel` (and the defs and closures it
// reaches) with the type parameters bound as given. Returns false on errors.
bool typeCheckKernel(SemaModule& sema, FunctionScope& kernel, const std::map<std::string, ScalarType>& typeArgs,
                     DiagnosticEngine& diags);
// A literal, or an expression of literals and unannotated consts, is "weak":
// it takes the type of the other operand (docs/language.md 4.4).
bool isWeak(const Expr& e);

// Types a module-level def (no type parameters).
bool typeCheckFunction(SemaModule& sema, FunctionScope& function, DiagnosticEngine& diags);

// warp_argmax(v, i), block_argmin(v, i), ... (BuiltinCategory::WarpArgReduce
// and BlockArgReduce) return a tuple (value, index): the builtin such a call
// names (null for any other call, a def that shadows the name included), and
// the tuple's element types once the call is typed (the value's computed
// type, an f16 value is f32; the index's own type), empty when its
// arguments were refused.
const BuiltinInfo* argReduceBuiltin(const CallExpr& c);
std::vector<ScalarType> argReduceTypes(const CallExpr& c);

}  // namespace spindle
