// Scalar types of the Spindle language and their properties. One table
// (SPINDLE_SCALAR_TYPES) drives the enum, the names and the C++ spellings, so
// adding a type is one row.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace spindle {

//  X(enum, spn name, C++ type, bits, isFloat, isSigned)
#define SPINDLE_SCALAR_TYPES(X)                      \
  X(Bool, "bool", "bool", 8, false, false)           \
  X(I8, "i8", "int8_t", 8, false, true)              \
  X(I16, "i16", "int16_t", 16, false, true)          \
  X(I32, "i32", "int32_t", 32, false, true)          \
  X(I64, "i64", "int64_t", 64, false, true)          \
  X(U8, "u8", "uint8_t", 8, false, false)            \
  X(U16, "u16", "uint16_t", 16, false, false)        \
  X(U32, "u32", "uint32_t", 32, false, false)        \
  X(U64, "u64", "uint64_t", 64, false, false)        \
  X(F16, "f16", "__half", 16, true, true)            \
  X(BF16, "bf16", "__spn_bf16", 16, true, true)      \
  X(F8E4M3, "f8e4m3", "__spn_f8e4m3", 8, true, true) \
  X(F8E5M2, "f8e5m2", "__spn_f8e5m2", 8, true, true) \
  X(F32, "f32", "float", 32, true, true)             \
  X(F64, "f64", "double", 64, true, true)

enum class ScalarType : uint8_t {
  Invalid,
#define X(E, N, C, B, F, S) E,
  SPINDLE_SCALAR_TYPES(X)
#undef X
};

std::string_view scalarName(ScalarType t);     // "f32"
std::string_view scalarCppName(ScalarType t);  // "float"
int scalarBits(ScalarType t);
bool isFloat(ScalarType t);
bool isInteger(ScalarType t);  // bool is not an integer
bool isSigned(ScalarType t);
// f16, bf16 and the fp8 types are storage types: arithmetic on them happens in f32.
inline bool isStorageOnly(ScalarType t) {
  return t == ScalarType::F16 || t == ScalarType::BF16 || t == ScalarType::F8E4M3 || t == ScalarType::F8E5M2;
}
inline ScalarType computeType(ScalarType t) { return isStorageOnly(t) ? ScalarType::F32 : t; }
std::optional<ScalarType> scalarFromName(std::string_view name);
size_t scalarBytes(ScalarType t);

}  // namespace spindle
