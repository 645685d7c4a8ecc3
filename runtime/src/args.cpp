// Construction of launch arguments (spindle::tensor, spindle::scalar).
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

#include <spindle/runtime.hpp>

namespace spindle {
namespace {

Arg makeTensor(const void* data, ScalarType dtype, const int64_t* shape, size_t rank, const int64_t* strides,
               size_t strideCount) {
  Arg a;
  a.kind = Arg::Kind::Tensor;
  a.data = data;
  a.dtype = dtype;
  a.rank = int(rank);
  for (size_t i = 0; i < rank && i < size_t(kMaxRank); ++i) a.shape[i] = shape[i];
  if (strides) {
    if (strideCount != rank)
      throw Error(fmt::format("spindle::tensor: {} strides for a rank-{} shape", strideCount, rank));
    a.hasStrides = true;
    for (size_t i = 0; i < rank && i < size_t(kMaxRank); ++i) a.strides[i] = strides[i];
  }
  return a;
}

}  // namespace

Arg none() {
  Arg a;
  a.kind = Arg::Kind::None;
  return a;
}

namespace {

template <typename T>
Arg makeScalar(ScalarType type, T v) {
  Arg a;
  a.kind = Arg::Kind::Scalar;
  a.dtype = type;
  std::memcpy(&a.bits, &v, sizeof v);
  return a;
}

uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// IEEE binary16, round to nearest even.
uint16_t toHalf(float f) {
  uint32_t x = floatBits(f);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t exp = (x >> 23) & 0xff;
  uint32_t mant = x & 0x7fffff;
  if (exp == 0xff) return uint16_t(sign | 0x7c00 | (mant ? 0x200 : 0));
  int e = int(exp) - 127 + 15;
  if (e >= 31) return uint16_t(sign | 0x7c00);
  if (e <= 0) {
    if (e < -10) return uint16_t(sign);
    mant |= 0x800000;
    int shift = 14 - e;
    uint32_t half = mant >> shift;
    uint32_t rest = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1))) ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = uint32_t(e) << 10 | (mant >> 13);
  uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;  // may carry into the exponent: correct
  return uint16_t(sign | half);
}

uint16_t toBf16(float f) {
  uint32_t x = floatBits(f);
  if ((x & 0x7fffffff) > 0x7f800000) return uint16_t((x >> 16) | 0x40);  // quiet NaN
  x += 0x7fff + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}

// fp8 (M mantissa bits, bias B), round to nearest even; `max` is the largest
// finite code, `overflow` what lies past it (e4m3fn: NaN, e5m2: infinity).
// The prelude's __spn_fp8_encode, on the host.
uint8_t toF8(float f, int M, int B, uint32_t max, uint32_t overflow, uint32_t nan, uint32_t inf) {
  uint32_t u = floatBits(f);
  const uint32_t sign = (u >> 24) & 0x80u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return uint8_t(sign | nan);
  if (a == 0x7f800000u) return uint8_t(sign | inf);
  if ((a >> 23) == 0) return uint8_t(sign);
  const int e = int(a >> 23) - 127 + B;
  const uint32_t mant = (a & 0x7fffffu) | 0x800000u;
  const int shift = 23 - M + (e < 1 ? 1 - e : 0);
  if (shift > 24) return uint8_t(sign);
  uint32_t q = mant >> shift;
  const uint32_t rest = mant & ((1u << shift) - 1u), half = 1u << (shift - 1);
  if (rest > half || (rest == half && (q & 1u))) ++q;
  const uint32_t code = e >= 1 ? (uint32_t(e) << M) + q - (1u << M) : q;
  return uint8_t(sign | (code > max ? overflow : code));
}

template <typename I>
I exactInteger(ScalarType type, double v) {
  // max + 1 is a power of two, exact in a double even where max is not.
  if (!(v >= double(std::numeric_limits<I>::min()) && v < double(std::numeric_limits<I>::max()) + 1.0) ||
      std::trunc(v) != v)
    throw Error(fmt::format("spindle::scalar: {} is not representable as {}", v, scalarName(type)));
  return I(v);
}

}  // namespace

const char* backendName(BackendKind kind) {
  switch (kind) {
    case BackendKind::Hip: return "hip";
    case BackendKind::Cuda: return "cuda";
    case BackendKind::Cpu: return "cpu";
    case BackendKind::Auto: break;
  }
  return "auto";
}

const char* cacheOutcomeName(CacheOutcome o) {
  switch (o) {
    case CacheOutcome::MemoryHit: return "hit (memory)";
    case CacheOutcome::DiskHit: return "hit (disk)";
    case CacheOutcome::RemoteHit: return "hit (remote)";
    case CacheOutcome::Miss: break;
  }
  return "miss";
}

Arg tensor(const void* data, ScalarType dtype, std::initializer_list<int64_t> shape) {
  return makeTensor(data, dtype, shape.begin(), shape.size(), nullptr, 0);
}
Arg tensor(const void* data, ScalarType dtype, std::initializer_list<int64_t> shape,
           std::initializer_list<int64_t> strides) {
  return makeTensor(data, dtype, shape.begin(), shape.size(), strides.begin(), strides.size());
}
Arg tensor(const void* data, ScalarType dtype, const int64_t* shape, int rank, const int64_t* strides) {
  if (rank < 0) throw Error(fmt::format("spindle::tensor: negative rank {}", rank));
  return makeTensor(data, dtype, shape, size_t(rank), strides, size_t(rank));
}

Arg scalar(float v) { return makeScalar(ScalarType::F32, v); }
Arg scalar(double v) { return makeScalar(ScalarType::F64, v); }
Arg scalar(bool v) { return makeScalar(ScalarType::Bool, uint8_t(v)); }
Arg scalar(int32_t v) { return makeScalar(ScalarType::I32, v); }
Arg scalar(int64_t v) { return makeScalar(ScalarType::I64, v); }
Arg scalar(uint32_t v) { return makeScalar(ScalarType::U32, v); }
Arg scalar(uint64_t v) { return makeScalar(ScalarType::U64, v); }

Arg scalar(ScalarType type, double v) {
  switch (type) {
    case ScalarType::Bool: return makeScalar(type, uint8_t(v != 0));
    case ScalarType::I8: return makeScalar(type, exactInteger<int8_t>(type, v));
    case ScalarType::I16: return makeScalar(type, exactInteger<int16_t>(type, v));
    case ScalarType::I32: return makeScalar(type, exactInteger<int32_t>(type, v));
    case ScalarType::I64: return makeScalar(type, exactInteger<int64_t>(type, v));
    case ScalarType::U8: return makeScalar(type, exactInteger<uint8_t>(type, v));
    case ScalarType::U16: return makeScalar(type, exactInteger<uint16_t>(type, v));
    case ScalarType::U32: return makeScalar(type, exactInteger<uint32_t>(type, v));
    case ScalarType::U64: return makeScalar(type, exactInteger<uint64_t>(type, v));
    case ScalarType::F16: return makeScalar(type, toHalf(float(v)));
    case ScalarType::BF16: return makeScalar(type, toBf16(float(v)));
    case ScalarType::F8E4M3: return makeScalar(type, toF8(float(v), 3, 7, 0x7e, 0x7f, 0x7f, 0x7f));
    case ScalarType::F8E5M2: return makeScalar(type, toF8(float(v), 2, 15, 0x7b, 0x7c, 0x7e, 0x7c));
    case ScalarType::F32: return makeScalar(type, float(v));
    case ScalarType::F64: return makeScalar(type, v);
    case ScalarType::Invalid: break;
  }
  throw Error("spindle::scalar: invalid scalar type");
}

}  // namespace spindle
