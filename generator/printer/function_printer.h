// Prints one function body (a kernel, a module def or an outlined closure)
// as HIP C++. Expressions are in expr_printer.cpp, statements and
// signatures in function_printer.cpp; the file around them is assembled by
// kernel_source.cpp.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../passes/comment_placement.h"
#include "../passes/local_declarations.h"
#include "../passes/vector_runs.h"
#include "emitter.h"
#include "index_bounds.h"
#include "kernel_source.h"
#include "name_supply.h"
#include "sema/builtins.h"
#include "sema/sema.h"
#include "spindle/generator.h"
#include "tile_bounds.h"

namespace spindle {

// The struct a tuple-returning def or closure returns (docs/language.md
// 10.4): `struct stats_result { float m; float s; };`.
struct TupleResult {
  std::string typeName;
  std::vector<std::string> members;  // one per element, in order
};

// What every printer of one specialized source shares.
struct PrintContext {
  SemaModule& sema;
  FunctionScope& kernel;
  std::set<std::string> staticDims;                           // names of dims baked in as constexpr
  std::set<std::string> alignedTensors;                       // tensor params 16-byte aligned at launch
  std::map<std::string, int> divisible;                       // values that place rows -> granularity at launch
  std::string sourcePath;                                     // for #line directives: a placeholder (kernel_source.cpp)
  NameSupply globals;                                         // consts, static dims, functions
  std::map<const FunctionScope*, std::string> functionNames;  // emitted names of defs and closures
  const KernelPrintPlan& plan;                                // the driver's decisions
  std::map<const FunctionScope*, TupleResult> tupleResults;   // tuple-returning defs and closures
  bool checked = false;                                       // a checked build: every element access is bounds-checked
  bool index32 = false;          // dims and strides int32_t, element offsets in 32 bits (Specialization::index32)
  bool sharedPastLimit = false;  // every shared buffer in dynamic shared memory (sharedPastStaticLimit)

  // The C++ type of dims and strides in this specialization.
  const char* indexType() const { return index32 ? "int32_t" : "int64_t"; }
  ScalarType indexScalarType() const { return index32 ? ScalarType::I32 : ScalarType::I64; }
  const Specialization* spec = nullptr;  // the whole specialization (vector runs read it)

  bool isStaticDim(const Symbol* s) const { return isKernelDim(*s) && staticDims.count(s->name) > 0; }
};

// Emitted text of an expression and its C++ precedence (higher binds
// tighter), so a parent adds parentheses only where C++ needs them.
struct CppExpr {
  std::string text;
  int prec;
};

namespace cpp_prec {
constexpr int kTernary = 2, kLogicalOr = 3, kLogicalAnd = 4, kBitOr = 5, kBitXor = 6, kBitAnd = 7, kEquality = 8,
              kRelational = 9, kShift = 10, kAdditive = 11, kMultiplicative = 12, kUnary = 13, kPostfix = 14,
              kPrimary = 15;
}

// The C++ spelling of a Spindle scalar type.
std::string cppType(ScalarType t);
// A compile-time value written as a C++ literal for a use of type `t`:
// `65536`, `5000000000ll`, `0.1f`, `0.1` (the shortest text that reads back
// as the same double).
CppExpr compileTimeLiteral(const ConstValue& v, ScalarType t);
// Literals and unannotated consts: printed as C++ literals, whatever type
// typing gave them.
bool printsAsLiteral(const Expr& e);
// A body const that differs by warp width (Symbol::wave64Value), as the
// file computes it: `__SPN_WARP_SIZE == 64 ? 2 : 4`.
std::string warpWidthChoice(const Symbol& c);
// Names the struct of tuple-returning `f`, emitted as `functionName`, with
// a file-scope name from `globals` (function_printer.cpp).
TupleResult tupleResultFor(const FunctionScope& f, const std::string& functionName, NameSupply& globals);

class FunctionPrinter {
 public:
  FunctionPrinter(PrintContext& ctx, FunctionScope& fn, Emitter& out);

  // Declares the function's own names (params, captures) and prints its
  // whole definition.
  void printKernel(const std::string& launchBounds);
  void printDeviceFunction();

  // Kernel parameters in ABI order, for the header comment and the launcher:
  // (C++ declaration, description).
  struct ParamLine {
    std::string decl;  // "const float* __restrict__ x"
    std::string name;  // "x"
    std::string what;  // "tensor f32[M, N], read-only"
    AbiArg abi;
    // Not the host launcher's parameter: what it passes instead (a tensor
    // map and its ready flag, which the launcher makes).
    std::string launcherValue;
  };
  const std::vector<ParamLine>& kernelParams() const { return kernelParams_; }
  // The host launcher's statements that make its tensor maps (one a
  // copy_tile box: __spn_make_tensor_map), before the launch.
  const std::vector<std::string>& launcherTensorMaps() const { return launcherTensorMaps_; }
  // For the host launcher, which precedes the consts' declarations (they are
  // mapped to the .spn with #line, the launcher is not): `e` and the dynamic
  // shared bytes with every const written as its value.
  std::string launcherValue(const Expr& e);
  std::string launcherDynamicSharedBytes();

 private:
  // --- names
  void declareKernelParams();
  // copy_tile's tensor maps (docs/language.md 8.14): a map and its ready
  // flag per (tensor, box, swizzle) that TMA can copy, in first-use order.
  void declareTensorMaps();
  std::vector<std::string> declareFunctionParams();
  const std::string& name(const Symbol* s) const { return names_.nameOf(s); }
  std::string strideName(const Symbol* tensor, int axis) const;
  // A matrix's row and element strides as printed, its axes ax and ax + 1
  // (the last two): the stride parameters where it is strided ("1" for a
  // unit inner stride), else its row's extent and "1". mma_store's C and
  // copy_async's and copy_tile's sources.
  std::pair<std::string, std::string> matrixStrides(const Symbol& tensor, int ax) const;

  // --- statements (function_printer.cpp)
  void printBody(const Block& body);
  void printBlock(const Block& body);
  void printStmt(const Stmt& s);
  void printStmtBody(const Stmt& s);
  void printAssign(const AssignStmt& a);
  void printUnpack(const AssignStmt& a);
  void hoistUnpackIndices(const std::vector<ExprPtr>& targets);
  std::string tupleValue(const TupleExpr& values);
  std::string memberInit(const Expr& v, ScalarType member);
  void printTupleResultStruct();
  void printScratchDecl(const Symbol& buf, const CallExpr& call);
  void printAugAssign(const AugAssignStmt& a);
  void printIf(const IfStmt& s);
  void printFor(const ForStmt& f);
  void printElementsFor(const ForStmt& f);
  static std::string fragmentType(const Symbol& frag);
  bool printVectorRun(const ForStmt& f);
  std::optional<std::string> runFitsBeforeStop(const Expr& cond) const;
  std::optional<std::string> provenTrue(const Expr& cond) const;
  Enclosing enclosing() const;
  void printGuardedBody(const Expr& cond, const Block& body);
  enum class LoopCounter { Wide, Signed, Unsigned };
  LoopCounter loopCounter32(const ForStmt& f, const Expr* start, const Expr& stop, bool hoistStop) const;
  bool incrementProvenInRange(const ForStmt& f, const Expr& stop) const;
  void printAssert(const AssertStmt& a);
  static std::string cStringLiteral(std::string_view text);
  static std::string typeLimitLiteral(BuiltinId id, ScalarType t);
  void printPendingDeclarations(const Stmt& s);
  template <typename Key>
  void printComments(const std::map<Key, std::vector<std::string>>& placed, Key key);
  std::string storeValue(const Expr& value, ScalarType target) const;
  std::string pointerDecl(const Symbol& s, const std::string& emittedName) const;
  bool stopIsStable(const ForStmt& f, const Expr& stop) const;
  std::string condition(const Expr& e) const;
  static std::string unambiguous(std::string text);
  std::string hoistRangeArg(const ForStmt& f, const Expr& arg, const std::string& suffix);
  void printDynamicSharedDecls();
  std::vector<const Symbol*> dynamicSharedBuffers() const;
  std::string dynamicSharedLayout(std::map<const Symbol*, std::string>* offsets) const;
  void printAlignmentAssumptions();
  std::string signature(const std::string& prefix, const std::vector<std::string>& params) const;

  // --- expressions (expr_printer.cpp)
 public:
  CppExpr expr(const Expr& e) const;
  // The value of `e` converted to `target`'s compute type where C++ would
  // not do it implicitly (f16/bf16 loads become float(...)).
  std::string value(const Expr& e, int minPrec = 0) const;
  std::string paren(const CppExpr& e, int minPrec) const;

 private:
  CppExpr literal(const Expr& e) const;
  CppExpr nameExpr(const NameExpr& n) const;
  CppExpr unary(const UnaryExpr& u) const;
  CppExpr binary(const BinaryExpr& b) const;
  CppExpr call(const CallExpr& c) const;
  CppExpr builtinCall(const CallExpr& c) const;
  CppExpr matrixCall(const CallExpr& c) const;
  CppExpr asyncCopyCall(const CallExpr& c) const;
  CppExpr tileCopyCall(const CallExpr& c) const;
  CppExpr mmaStoreCall(const CallExpr& c) const;
  void selectBatchMatrix(const Symbol& tensor, const Expr& batch, std::string& base, std::string& rows) const;
  // --- dot (dot_printer.cpp)
  CppExpr dotCall(const CallExpr& c) const;
  void printDotAccumulatorDecl(const Symbol& acc, const std::string& dims);
  std::vector<const Symbol*> settleDotAccumulators(const Stmt& s);
  std::string dotFreshName(const Symbol& acc) const;
  CppExpr userCall(const CallExpr& c) const;
  void tensorArguments(const Symbol& tensor, const Symbol& param, std::vector<std::string>& args) const;
  // What a statement does to the element it names: a checked build tracks
  // the reads and writes of shared memory (docs/language.md 5.12).
  enum class Access { Read, Write, Update, Atomic };
  CppExpr index(const IndexExpr& idx) const { return element(idx, Access::Read); }
  CppExpr element(const IndexExpr& idx, Access access) const;
  // expr(), except that an element is printed for `access`.
  CppExpr target(const Expr& e, Access access) const;
  CppExpr swizzledElement(const Symbol& base, const IndexExpr& idx, Access access) const;
  std::string flatIndex(const Symbol& base, const std::vector<ExprPtr>& indices, bool narrow = false) const;
  std::string copyIndex(const Expr& e) const;
  std::string storeIndex(const Expr& e) const;
  std::string unsigned32(const Expr& e) const;
  std::optional<std::string> signed32(const Expr& e) const;
  std::string checkedArgs(const Symbol& base, const IndexExpr& idx) const;
  CppExpr dimExpr(const Symbol& tensor, size_t axis) const;
  std::string loadValue(const CppExpr& e, ScalarType t, int minPrec) const;

  PrintContext& ctx_;
  FunctionScope& fn_;
  IndexBounds bounds_;  // ranges of integer expressions with 32-bit indices
  TileBounds tiles_;    // bounds tests a tile proves (exact grids, runs of loops)
  Emitter& out_;
  NameSupply names_;
  std::map<StrideKey, std::string> strides_;
  std::string blockScratchName_;
  const LocalDeclarationPlan& plan_;
  const CommentPlacement& comments_;
  std::vector<ParamLine> kernelParams_;
  std::vector<std::string> launcherTensorMaps_;
  struct TensorMapParam {
    std::string map, ready;  // the kernel's parameters
  };
  std::map<const CallExpr*, TensorMapParam> tensorMapOfCall_;  // copy_tile calls TMA may serve
  std::vector<std::string> activeLoopNames_;
  std::vector<const ForStmt*> activeLoops_;   // the range loops around the statement being printed
  std::vector<const Expr*> activeGuards_;     // the `if` conjuncts around it (Enclosing::guards)
  std::map<const Symbol*, bool> loopVars32_;  // i64 loop variables counting in 32 bits: signed? (loopCounter32)
  // Expressions an unpacking evaluated into a temporary before its stores
  // (an index): expr() prints the temporary's name instead.
  std::map<const Expr*, std::string> hoisted_;
  std::map<const Symbol*, std::string> dynamicSharedOffsets_;  // buffer -> byte offset expression
  bool compileTimeValuesInline_ = false;                       // consts as values (launcherValue)
  mutable std::unique_ptr<Divisibility> divisibility_;         // the kernel's, built at its first run loop
  std::map<const Symbol*, std::string> dotFresh_;              // dot accumulator -> its `fresh` flag
  std::vector<const Symbol*> dotOrder_;                        // the dot accumulators in declaration order
  std::set<const Symbol*> dotSettled_;                         // settled around the statement being printed
  std::vector<std::set<const Symbol*>> dotSettledInBlock_;     // per block being printed: settled, no dot since
};

}  // namespace spindle
