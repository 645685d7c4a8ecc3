// The generator as a library: load a .spn module, inspect its kernels, and
// produce one specialized HIP source per (kernel, specialization). The CLI and
// the runtime both use exactly this API.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "spindle/specialization.h"
#include "spindle/types.h"

namespace spindle {

class DiagnosticEngine;
struct SourceModule;
class SemaModule;

// One step of a dim expression in postfix order: push a number (a literal
// or a const) or a dim symbol's value, or apply an operator to the top two.
struct DimOp {
  enum class Kind { Number, Symbol, Add, Sub, Mul, FloorDiv };
  Kind kind = Kind::Number;
  int64_t value = 0;   // Number
  std::string symbol;  // Symbol
};

// One dimension of a tensor parameter as written: a number (literal or
// const), a dim symbol, or an expression of them (`3 * C`), checked at
// launch against the actual size.
struct DimInfo {
  bool isSymbol = false;
  int64_t value = 0;              // a number: when !isSymbol and expression is empty
  std::string symbol;             // when isSymbol
  std::vector<DimOp> expression;  // an expression, in postfix order
  std::string expressionText;     // as written, for messages
};

// The size a dim stands for, given every dim symbol's value: the number, the
// symbol's value, or the expression's (nullopt when a symbol is missing, the
// value leaves int64, or it divides by zero). The runtime checks launches
// with its own allocation-free form of this.
std::optional<int64_t> evaluateDim(const DimInfo& dim, const std::map<std::string, int64_t>& dims);

struct KernelParamInfo {
  std::string name;
  bool isTensor = false;
  ScalarType dtype = ScalarType::Invalid;  // Invalid when typeParam is set
  std::string typeParam;                   // "T" for a generic element/scalar type
  std::vector<DimInfo> dims;               // tensors only
  bool strided = false;                    // tensors only: one stride per dim
  bool writes = false;                     // tensors only: the kernel stores into it
  bool optional = false;                   // tensors only: `T[...] | None`, may be passed as spindle::none()
  // Tensors only: indexed in runs of consecutive elements (`x[j + k]`, k a
  // static_range variable), so its 16-byte alignment is specialized on.
  bool accessedInRuns = false;
};

// A compile-time parameter from a kernel's brackets besides its type
// parameters: `FLAG: bool`, `W: i32`, `ACT: fn`. A const override of its
// name binds it (Specialization::consts, --const NAME=VALUE; a def's name
// for a fn parameter).
struct CompileTimeParamInfo {
  std::string name;
  std::string kind;  // "fn", or the value's scalar type ("bool", "i32", ...)
};

// A kernel's @tune (docs/language.md 9.6): candidate values for module
// consts, each combination that `where` keeps a config of its own. The
// runtime times the configs per key bucket and keeps the fastest
// (docs/runtime.md, Autotuning).
struct TuneInfo {
  std::vector<std::string> consts;            // the tuned module consts, in @tune's order
  std::vector<std::vector<int64_t>> configs;  // a value per const; configs[0] is the default
  std::vector<std::string> keyDims;           // dim symbols whose buckets key the choice
  int64_t bucketBase = 2;                     // key dims bucketed by powers of this; 0: exact values
  std::string where;                          // the constraint as written; empty without one
  size_t pruned = 0;                          // combinations `where` removed
};

struct KernelInfo {
  std::string name;
  std::vector<std::string> typeParams;
  std::vector<CompileTimeParamInfo> compileTimeParams;
  std::vector<KernelParamInfo> params;
  std::vector<std::string> dimSymbols;  // every dim symbol, in order of first appearance
  std::vector<std::string> staticDims;  // those named in @static
  // Dims that place the rows of tensors accessed in runs: the largest of 16,
  // 8, 4, 2 dividing each is specialized on (Specialization::divisible).
  std::vector<std::string> runRowDims;
  // Dims that a @grid axis covers in tiles, `cdiv(D, T)`, with the tile
  // each must be a multiple of (T; the lcm when several axes cover it):
  // whether it is, at launch, is specialized on
  // (Specialization::exactGridDims). Static ones included; they drop out.
  struct ExactGridDim {
    std::string dim;
    int64_t tile = 0;
  };
  std::vector<ExactGridDim> exactGridDims;
  // @grid calls resident_blocks(): the grid is computed at launch from the
  // device and the loaded binary (CompiledModule::launchGeometry).
  bool gridUsesResidentBlocks = false;
  // Integer scalar parameters @grid or @block use: launchGeometry needs
  // their values.
  std::vector<std::string> launchScalars;
  // Each @alias's tensor parameters: they may be the very same view (same
  // base, dtype, shape and strides); a partial overlap is still refused.
  std::vector<std::vector<std::string>> aliasGroups;
  // @tune, when the kernel has one.
  std::optional<TuneInfo> tune;
};

// The generated kernel's parameter list, in order: for each source parameter,
// a tensor's pointer followed by its strides (if strided; not the last one
// in the unit-stride form, Specialization::unitStrideTensors), or a scalar; then
// every *dynamic* dim symbol in first-appearance order; then, for each tile
// box that copy_tile reads from a tensor (docs/language.md 8.14), a tensor
// map (128 bytes, 64-aligned: NVIDIA's CUtensorMap, made by the runtime
// where it can) and an int32_t that is 1 when the runtime made it, 0 when
// the kernel must copy the box element by element (other targets, an
// unaligned tensor). All strides and dims are int64_t.
enum class AbiArgKind { TensorPointer, Scalar, Stride, Dim, TensorMap, TensorMapReady };
struct AbiArg {
  AbiArgKind kind;
  int paramIndex = -1;                // TensorPointer, Scalar, Stride, TensorMap: the tensor
  int axis = -1;                      // Stride; TensorMap, TensorMapReady: the map's index among the kernel's
  std::string dimSymbol;              // Dim
  ScalarType type = ScalarType::I64;  // Scalar: its type; pointer: element type
  std::string cppName;                // the parameter's name in the generated source
  // TensorMap: the box (rows, and columns of one copy: a 128-byte panel of
  // a swizzled destination) and the destination's swizzle (0 or 128).
  int boxRows = 0, boxCols = 0, swizzle = 0;
};

struct GeneratedKernel {
  std::string source;  // one self-contained HIP file
  // `source` with the module's path (in #line directives and the header)
  // replaced by a fixed placeholder: what cache keys hash, so that one
  // source text gives one key wherever its file lives and however its path
  // is spelled. Never compiled.
  std::string pathFreeSource;
  std::string kernelSymbol;  // extern "C" name to look up in the binary
  std::vector<AbiArg> abi;
  std::string key;  // canonical text of every input the source depends on (no path)
  // Where each statement, function and const was printed (1-based line of
  // `source`) and the .spn line its #line directives must make compilers
  // report there; empty without line directives.
  struct LineMapping {
    uint32_t sourceLine;
    uint32_t spnLine;
  };
  std::vector<LineMapping> lineMappings;
  // Every run access of the kernel's body (docs/language.md 9.4), one line
  // each, "LINE:COL: vector: ..." or "LINE:COL: scalar: ... WHY" (without
  // the file's path): what `spindle inspect --stage runs` shows.
  std::vector<std::string> runReport;
};

struct LaunchGeometry {
  int64_t grid[3] = {1, 1, 1};
  int64_t block[3] = {1, 1, 1};
  uint64_t dynamicSharedBytes = 0;
  // Bytes of `local` buffers one thread may hold at once (an upper bound):
  // the cpu target sizes its fibers' stacks from it.
  uint64_t localBytesPerThread = 0;
};

// How many blocks of a kernel's binary the device holds at once, for a block
// of `blockThreads` threads using `dynamicSharedBytes`: the value of
// resident_blocks() in @grid (the runtime asks the driver's occupancy API).
using ResidentBlocksQuery = std::function<int64_t(int64_t blockThreads, uint64_t dynamicSharedBytes)>;

// Thrown for a bad request to the library (unknown kernel, a missing static
// value, an unbound type parameter). Messages name the offending values.
class GeneratorError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown by CompiledModule::load and loadString for a module with errors:
// what() is every diagnostic, rendered as clang renders them.
class ModuleError : public GeneratorError {
 public:
  using GeneratorError::GeneratorError;
};

class CompiledModule {
 public:
  ~CompiledModule();
  // Parse and check; throws ModuleError when the module has errors and
  // GeneratorError when the file cannot be read. Never returns null.
  static std::unique_ptr<CompiledModule> load(const std::string& path);
  static std::unique_ptr<CompiledModule> loadString(const std::string& name, const std::string& text);
  // Parse and check. Returns nullptr when there are errors (in `diags`:
  // DiagnosticEngine is the generator's own, for its CLI and tests).
  static std::unique_ptr<CompiledModule> fromFile(const std::string& path, DiagnosticEngine& diags);
  static std::unique_ptr<CompiledModule> fromString(const std::string& name, const std::string& text,
                                                    DiagnosticEngine& diags);

  // This module with its consts given other values (`--const`), consts
  // computed from them computed again: kernels() reflects them (a const in
  // a tensor's shape, say), and every specialization it generates carries
  // them, so they are in every key. Throws GeneratorError for a const the
  // module lacks or a value its type cannot hold. The runtime's
  // KernelOptions::consts use it.
  std::unique_ptr<CompiledModule> withConsts(const std::map<std::string, ConstOverride>& consts) const;

  const std::string& path() const;
  const std::vector<KernelInfo>& kernels() const { return kernels_; }
  const KernelInfo* findKernel(const std::string& name) const;

  // The specialization key: Spindle's version, a hash of the module's text
  // (not its path), the kernel and the canonical flags of `spec`
  // (specializationFlags). Equal keys give equal sources.
  std::string specializationKey(const std::string& kernel, const Specialization& spec) const;
  // Generates from a private copy of the module (the module itself is never
  // changed): any number of threads may generate from one module at once.
  GeneratedKernel generate(const std::string& kernel, const Specialization& spec) const;
  // `values` holds every dim symbol's bound value (static and dynamic) and
  // the value of each integer scalar in KernelInfo::launchScalars. The
  // specialization says which dims are static: a shared buffer sized only by
  // static dims is static shared memory, otherwise it is dynamic and counted
  // in dynamicSharedBytes.
  // A grid that uses resident_blocks() asks `residentBlocks` for it, with
  // the block's thread count and dynamic shared bytes already computed; with
  // no callback such a grid is a GeneratorError. `warpSize` is the target's
  // warp width, the value of warp_size() in @grid and @block (0: unknown,
  // and an expression that uses it is a GeneratorError).
  LaunchGeometry launchGeometry(const std::string& kernel, const Specialization& spec,
                                const std::map<std::string, int64_t>& values,
                                const ResidentBlocksQuery& residentBlocks = {}, int64_t warpSize = 0) const;

  const SourceModule& ast() const;
  const SemaModule& sema() const;

 private:
  CompiledModule();
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<KernelInfo> kernels_;
};

}  // namespace spindle
