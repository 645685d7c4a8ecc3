// One specialization of a kernel as a value, and its one text form: the
// command-line flags that `spindle gen`, `compile`, `run` and `inspect`
// take. The file header's "Regenerate with" line and the cache key are
// those flags, so a fact added here reaches both through one function.
//
// Adding a specialization fact: a field below, its flag in
// specializationFlags and parseSpecializationFlag (generator/specialization.cpp),
// its check in the driver (generator/generate.cpp, validateSpecialization),
// and, if the runtime derives it at launch, a word of the runtime's
// fixed-size key (runtime/src/launch_binding.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "spindle/types.h"

namespace spindle {

// A value given to a module const or a kernel's compile-time parameter for
// one specialization (`--const NAME=VALUE`): an integer or a float, as the
// const's type takes it, or, for a `fn` parameter, the name of a module def.
struct ConstOverride {
  bool isFloat = false;
  int64_t i = 0;         // when !isFloat
  double f = 0.0;        // when isFloat
  std::string function;  // a `fn` parameter's def; when set, i and f are unused
  static ConstOverride ofInt(int64_t v) { return {false, v, 0.0, {}}; }
  static ConstOverride ofFloat(double v) { return {true, 0, v, {}}; }
  static ConstOverride ofFunction(std::string name) { return {false, 0, 0.0, std::move(name)}; }
  bool operator==(const ConstOverride& o) const {
    return isFloat == o.isFloat && function == o.function && (isFloat ? f == o.f : i == o.i);
  }
  bool operator!=(const ConstOverride& o) const { return !(*this == o); }
};

// What the caller fixes for one compiled binary of one kernel. Everything
// here, and nothing else besides the module's text, changes the generated
// source; the key hashes exactly this (CompiledModule::specializationKey).
// Built once: from command-line flags (parseSpecializationFlag) or, on a
// runtime cache miss, from the launch's arguments.
struct Specialization {
  std::map<std::string, int64_t> staticDims;   // dim symbol -> value (must cover @static)
  std::map<std::string, ScalarType> typeArgs;  // type parameter -> dtype
  // `strided` tensor parameters known to be row-major contiguous at launch:
  // they are addressed through their dims, like a contiguous parameter, and
  // their strides leave the ABI (as PyTorch's contiguous fast paths do).
  std::set<std::string> contiguousTensors;
  // `strided` tensor parameters whose innermost stride is 1 at launch (and
  // that are not contiguous): the last axis is addressed without a multiply
  // (`x[i * x_stride0 + j]`) and its stride leaves the ABI, so a row of a
  // padded or sliced view is consecutive memory and its runs may vectorize.
  std::set<std::string> unitStrideTensors;
  // Tensor parameters whose base address is a multiple of 16 bytes at launch
  // (the runtime checks the pointer of every tensor accessed in runs). The
  // kernel tells the compiler so, and runs whose index keeps that alignment
  // may become 16-byte vector loads and stores; an unaligned pointer gets its
  // own binary. Only tensors with KernelParamInfo::accessedInRuns qualify.
  std::set<std::string> alignedTensors;
  // Values that place the rows of tensors accessed in runs, each with the
  // granularity it is a multiple of at launch (2, 4, 8 or 16: the largest
  // that divides it; the runtime checks them). With them an aligned tensor's
  // rows start aligned too, so runs along a row may become vector accesses
  // (Triton specializes integer arguments the same way). Named as
  // `--divisible` names them (strideDivisibleName, dimDivisibleName, below):
  //   "N"          a dynamic dim symbol (KernelInfo::runRowDims)
  //   "x.stride0"  a row stride of a strided tensor in unitStrideTensors
  //   "x.dim1"     the value of a dim expression (`2 * D`) at axis 1 of a
  //                tensor addressed by its dims
  std::map<std::string, int> divisible;
  // Dynamic dims D that some @grid axis covers in tiles, `cdiv(D, T)` (T an
  // integer const), and that are a whole number of those tiles at launch:
  // D % T == 0 (for every such axis of D; the runtime checks it at every
  // launch, one key bit per dim). Then a block's tile lies inside D, and
  // bounds tests against D that the tile proves are not printed
  // (printer/tile_bounds.h). `--exact-grid M`.
  std::set<std::string> exactGridDims;
  // Optional tensor parameters (`T[N] | None`) the caller passes no tensor
  // for: `x is None` is true, the branches that use x are not generated,
  // and x's pointer is null (its parameter slot stays). Every other optional
  // tensor is present.
  std::set<std::string> absentTensors;
  // Module consts given another value (their expression is ignored; consts
  // computed from them are computed again). An integer const takes an
  // integer that fits its type; a float const takes any number (kept as a
  // float). Checked against the module when generating.
  std::map<std::string, ConstOverride> consts;
  bool lineDirectives = true;  // #line directives to the .spn (an option, not a fact)
  // A checked build: `assert` statements are compiled in (a failure prints
  // the .spn location, block and thread, and stops the kernel); otherwise
  // they are compiled out. `--checked`; the runtime's RuntimeOptions::checked
  // or SPINDLE_CHECKED=1.
  bool checked = false;
  // 32-bit index arithmetic (`--index32`): every dim and stride of the launch
  // and every tensor's extent (its largest element offset + 1) and element
  // count is below 2^31, so dims and strides are int32_t in the kernel and element offsets
  // are computed in 32 bits from indices narrowed to int32_t (an index of an
  // access in bounds fits; one out of bounds is undefined either way). The
  // kernel's own 64-bit arithmetic stays 64-bit: a dim read as a value is
  // `int64_t(N)`. The runtime picks it at every launch whose arguments allow
  // it (RuntimeOptions::index32) and checks that at launch, like alignment.
  bool index32 = false;

  bool operator==(const Specialization& other) const;
  bool operator!=(const Specialization& other) const { return !(*this == other); }
};

// A const value as --const writes it: shortest text that reads back as the
// same value and kind (a float always with a '.' or an exponent: "2.0").
std::string constOverrideText(const ConstOverride& value);

// The largest granularity of Specialization::divisible that divides `value`
// (16, 8, 4 or 2), or 0 when none does: what the runtime specializes on.
int divisibilityGranularity(int64_t value);
// Whether `g` is a granularity --divisible takes: 2, 4, 8 or 16.
bool isDivisibilityGranularity(int64_t g);

// The names Specialization::divisible gives a tensor's stride along `axis`
// ("x.stride0") and the value of its dim expression at `axis` ("x.dim1").
std::string strideDivisibleName(const std::string& tensor, int axis);
std::string dimDivisibleName(const std::string& tensor, int axis);

// The canonical flags of `spec`: --static N=V, --dtype T=TYPE, --const C=V,
// --contiguous X, --unit-stride X, --aligned X, --divisible N (granularity
// 16) or N=G (any other), --exact-grid D, --absent X, --no-line-directives, --checked,
// --index32, in that order and
// each kind sorted by name (a float const's value always has a '.' or an
// exponent, so it reads back as a float). parseSpecializationFlag reads them
// back to an equal Specialization.
std::vector<std::string> specializationFlags(const Specialization& spec);

// Consumes args[i] (and its value) when it is one of the flags above and
// returns true; false for any other argument. Throws std::invalid_argument
// with a one-line message naming the flag for a malformed value
// ("--static N: 'abc' is not an integer", "--divisible N: granularity 3 ...").
bool parseSpecializationFlag(const std::vector<std::string>& args, size_t& i, Specialization& spec);

// A whole decimal integer, or std::invalid_argument naming the flag:
// "--static N: 'abc' is not an integer" (also for the CLI's other flags).
int64_t parseIntegerFlag(const std::string& flag, const std::string& name, const std::string& text);

}  // namespace spindle
