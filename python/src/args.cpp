#include "args.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace spindle::py {

namespace {

// DLPack's C exchange API (dlpack.h 1.3, DLPackExchangeAPI), which torch
// publishes as the capsule torch.Tensor.__dlpack_c_exchange_api__ (torch
// 2.10 and later): C functions that fill a DLTensor from a tensor object
// and return the current stream of a device, with no Python call and no
// allocation. Declared here, as dlpack.h lays them out, so that building
// needs no torch headers.
struct DlpVersion {
  uint32_t major, minor;
};
struct DlpApiHeader {
  DlpVersion version;
  DlpApiHeader* prev;  // an older version's table, or null
};
struct DlpTensor {
  void* data;
  int32_t deviceType, deviceId;  // DLDevice
  int32_t ndim;
  uint8_t code, bits;  // DLDataType
  uint16_t lanes;
  int64_t* shape;
  int64_t* strides;  // in elements; null: compact row-major
  uint64_t byteOffset;
};
struct DlpExchangeApi {
  DlpApiHeader header;
  void* managedTensorAllocator;
  void* managedTensorFromPyObject;
  void* managedTensorToPyObject;
  int (*dltensorFromPyObject)(void* object, DlpTensor* out);  // 0, or -1 with a Python error set
  int (*currentWorkStream)(int32_t deviceType, int32_t deviceId, void** stream);
};

// torch, found once it has been imported by the caller (never imported here:
// importing spindle must stay cheap and initialize no GPU runtime). Strong
// references that are never released: a static's destructor runs after the
// interpreter is gone, when dropping a Python reference would crash.
struct Torch {
  bool ready = false;
  PyObject* tensorType = nullptr;
  PyObject* dtypes = nullptr;     // dict: torch.dtype -> int(ScalarType)
  PyObject* rawStream = nullptr;  // torch._C._cuda_getCurrentRawStream, or null
  // Interned attribute names: PyObject_GetAttrString would make a new string
  // object per lookup, on the launch path, for every tensor.
  PyObject* dtypeName = nullptr;
  PyObject* getDeviceName = nullptr;
  PyObject* shapeName = nullptr;
  PyObject* strideName = nullptr;
  PyObject* dataPtrName = nullptr;
  // The exchange API (version 1.x), or null: then every tensor goes through
  // its Python attributes.
  const DlpExchangeApi* api = nullptr;
  PyObject* parameterType = nullptr;  // torch.nn.Parameter, or null
};

// The version-1 table of the capsule on torch.Tensor, or null.
const DlpExchangeApi* exchangeApi(PyObject* tensorType) {
  PyObject* capsule = PyObject_GetAttrString(tensorType, "__dlpack_c_exchange_api__");
  const DlpExchangeApi* api = nullptr;
  if (capsule && PyCapsule_IsValid(capsule, "dlpack_exchange_api")) {
    auto* h = static_cast<const DlpApiHeader*>(PyCapsule_GetPointer(capsule, "dlpack_exchange_api"));
    while (h && h->version.major != 1) h = h->prev;
    api = reinterpret_cast<const DlpExchangeApi*>(h);
    if (api && (!api->dltensorFromPyObject || !api->currentWorkStream)) api = nullptr;
  }
  Py_XDECREF(capsule);  // the table is static in torch; the capsule stays on the type
  PyErr_Clear();
  return api;
}
Torch& torchState() {
  static Torch t;
  if (t.ready) return t;
  PyObject* mod = PyDict_GetItemString(PyImport_GetModuleDict(), "torch");
  if (!mod) return t;
  nb::module_ torch = nb::borrow<nb::module_>(mod);
  t.tensorType = nb::object(torch.attr("Tensor")).release().ptr();
  nb::dict d;
  const std::pair<const char*, const char*> names[] = {{"float32", "f32"},       {"float64", "f64"},
                                                       {"float16", "f16"},       {"bfloat16", "bf16"},
                                                       {"int8", "i8"},           {"int16", "i16"},
                                                       {"int32", "i32"},         {"int64", "i64"},
                                                       {"uint8", "u8"},          {"uint16", "u16"},
                                                       {"uint32", "u32"},        {"uint64", "u64"},
                                                       {"bool", "bool"},         {"float8_e4m3fn", "f8e4m3"},
                                                       {"float8_e5m2", "f8e5m2"}};
  for (const auto& [torchName, spindleName] : names)
    if (nb::hasattr(torch, torchName)) d[torch.attr(torchName)] = int(*scalarFromName(spindleName));
  t.dtypes = d.release().ptr();
  nb::object c = torch.attr("_C");
  if (nb::hasattr(c, "_cuda_getCurrentRawStream"))
    t.rawStream = nb::object(c.attr("_cuda_getCurrentRawStream")).release().ptr();
  t.api = exchangeApi(t.tensorType);
  if (nb::hasattr(torch, "nn") && nb::hasattr(torch.attr("nn"), "Parameter"))
    t.parameterType = nb::object(torch.attr("nn").attr("Parameter")).release().ptr();
  t.dtypeName = PyUnicode_InternFromString("dtype");
  t.getDeviceName = PyUnicode_InternFromString("get_device");
  t.shapeName = PyUnicode_InternFromString("shape");
  t.strideName = PyUnicode_InternFromString("stride");
  t.dataPtrName = PyUnicode_InternFromString("data_ptr");
  t.ready = true;
  return t;
}

// h.name(), a method call with no arguments and no bound-method object.
nb::object callMethod(nb::handle h, PyObject* name) {
  PyObject* self = h.ptr();
  PyObject* r = PyObject_VectorcallMethod(name, &self, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
  if (!r) throw nb::python_error();
  return nb::steal(r);
}

nb::object getAttr(nb::handle h, PyObject* name) {
  PyObject* r = PyObject_GetAttr(h.ptr(), name);
  if (!r) throw nb::python_error();
  return nb::steal(r);
}

// A Python int (a torch.Size or stride() element) as int64_t.
int64_t asInt64(PyObject* o) {
  long long v = PyLong_AsLongLong(o);
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  return v;
}

ScalarType dtypeFromDlpack(nb::dlpack::dtype t) {
  using C = nb::dlpack::dtype_code;
  if (t.lanes != 1) return ScalarType::Invalid;
  switch (C(t.code)) {
    case C::Int:
      return t.bits == 8    ? ScalarType::I8
             : t.bits == 16 ? ScalarType::I16
             : t.bits == 32 ? ScalarType::I32
             : t.bits == 64 ? ScalarType::I64
                            : ScalarType::Invalid;
    case C::UInt:
      return t.bits == 8    ? ScalarType::U8
             : t.bits == 16 ? ScalarType::U16
             : t.bits == 32 ? ScalarType::U32
             : t.bits == 64 ? ScalarType::U64
                            : ScalarType::Invalid;
    case C::Float:
      return t.bits == 16   ? ScalarType::F16
             : t.bits == 32 ? ScalarType::F32
             : t.bits == 64 ? ScalarType::F64
                            : ScalarType::Invalid;
    case C::Bfloat: return t.bits == 16 ? ScalarType::BF16 : ScalarType::Invalid;
    case C::Bool: return t.bits == 8 ? ScalarType::Bool : ScalarType::Invalid;
    case C::Float8_E4M3FN: return ScalarType::F8E4M3;
    case C::Float8_E5M2: return ScalarType::F8E5M2;
    default: return ScalarType::Invalid;
  }
}

const char* deviceWord(const DeviceTarget& w) {
  return w.backend == BackendKind::Cuda ? "cuda" : w.backend == BackendKind::Hip ? "hip" : "cpu";
}

std::string typeName(nb::handle h) { return Py_TYPE(h.ptr())->tp_name; }

// str(h). (nb::str(accessor) would convert without calling str().)
std::string pyStr(nb::handle h) {
  nb::object s = nb::steal(PyObject_Str(h.ptr()));
  if (!s.is_valid()) throw nb::python_error();
  return nb::cast<std::string>(s);
}

[[noreturn]] void fail(const KernelInfo& k, const KernelParamInfo& p, const std::string& what) {
  throw ArgError(fmt::format("{}: parameter '{}' ({}): {}", k.name, p.name, paramTypeText(p), what));
}

// A read-only array (a JAX array, a NumPy array with flags.writeable False)
// for a parameter the kernel writes: the kernel would write into memory its
// owner treats as immutable.
[[noreturn]] void failReadOnly(const KernelInfo& k, const KernelParamInfo& p, const std::string& why) {
  fail(k, p,
       fmt::format("the kernel writes this parameter, but the array is read-only ({}); pass a writable array "
                   "(a copy)",
                   why));
}

// Device memory of one device (CUDA, ROCm, CUDA managed): its DLPack id is
// the Arg's device. Host memory (pinned included) belongs to none.
bool onDevice(int type) { return type == 2 || type == 10 || type == 13; }

// Where an array lives, as DLPack device types: 1 CPU, 2 CUDA, 3 CUDA host,
// 10 ROCm, 11 ROCm host, 13 CUDA managed. On CUDA any device of the machine
// is accepted: the runtime launches on the tensors' device and refuses
// tensors on two (docs/python.md, "Several GPUs"); HIP launches on the
// runtime's device only.
void checkDevice(const KernelInfo& k, const KernelParamInfo& p, const DeviceTarget& w, int type, int id) {
  bool host = type == 1 || type == 3 || type == 11;
  if (w.backend == BackendKind::Cpu) {
    if (!host) fail(k, p, "a GPU array for the cpu target; pass a host (NumPy) array");
    return;
  }
  bool ok = w.backend == BackendKind::Cuda ? (type == 2 || type == 13) : type == 10;
  if (!ok) {
    if (host) fail(k, p, fmt::format("a CPU array for a GPU kernel; move it to {}:{} first", deviceWord(w), w.device));
    fail(k, p, fmt::format("an array on DLPack device type {}, not {}", type, deviceWord(w)));
  }
  if (id != w.device && w.backend != BackendKind::Cuda)
    fail(k, p,
         fmt::format("an array on {0}:{1}, but the kernel's runtime launches on {0}:{2}; load the module with "
                     "spindle.Runtime(device={1})",
                     deviceWord(w), id, w.device));
}

void checkFixedType(const KernelInfo& k, const KernelParamInfo& p, ScalarType got,
                    const std::map<std::string, ScalarType>& fixed) {
  if (p.typeParam.empty()) return;
  auto it = fixed.find(p.typeParam);
  if (it != fixed.end() && it->second != got)
    fail(k, p,
         fmt::format("type parameter {} is specialized to {}, got {}", p.typeParam, scalarName(it->second),
                     scalarName(got)));
}

// A torch.Tensor (or nn.Parameter, requires_grad or not) through the
// exchange API: false when it cannot say (no API, another subclass, a tensor
// DLPack does not describe: a meta tensor, a dtype Spindle lacks), and the
// caller reads the attributes instead, which also give the precise message.
// Subclasses may
// override data_ptr() and the rest (FakeTensor, wrapper subclasses), so
// only the two types whose C layout the API reads go here.
bool torchTensorFast(const KernelInfo& k, const KernelParamInfo& p, const DeviceTarget& w, Torch& t, nb::handle h,
                     BoundArgs& out) {
  PyTypeObject* type = Py_TYPE(h.ptr());
  if (!t.api || (type != (PyTypeObject*)t.tensorType && type != (PyTypeObject*)t.parameterType)) return false;
  DlpTensor d;
  if (t.api->dltensorFromPyObject(h.ptr(), &d) != 0) {
    PyErr_Clear();
    return false;
  }
  nb::dlpack::dtype code;
  code.code = d.code;
  code.bits = d.bits;
  code.lanes = d.lanes;
  ScalarType dtype = dtypeFromDlpack(code);
  if (dtype == ScalarType::Invalid) return false;  // the attribute path names the torch dtype
  checkDevice(k, p, w, d.deviceType, d.deviceType == 1 ? 0 : d.deviceId);
  if (d.deviceType != 1 && out.torchCudaDevice < 0) {
    out.torchCudaDevice = d.deviceId;
    out.torchDeviceType = d.deviceType;
  }
  if (d.ndim > kMaxRank) fail(k, p, fmt::format("rank {} is over the limit of {}", d.ndim, kMaxRank));
  const char* data = static_cast<const char*>(d.data) + d.byteOffset;
  out.args.push_back(tensor(data, dtype, d.shape, d.ndim, d.strides));
  if (onDevice(d.deviceType)) out.args.back().device = int16_t(d.deviceId);  // the runtime asks the driver nothing
  return true;
}

bool torchTensor(const KernelInfo& k, const KernelParamInfo& p, const DeviceTarget& w, nb::handle h, BoundArgs& out) {
  Torch& t = torchState();
  if (!t.ready || !PyObject_TypeCheck(h.ptr(), (PyTypeObject*)t.tensorType)) return false;
  if (torchTensorFast(k, p, w, t, h, out)) return true;
  nb::object torchDtype = getAttr(h, t.dtypeName);
  PyObject* code = PyDict_GetItem(t.dtypes, torchDtype.ptr());  // borrowed
  if (!code) fail(k, p, fmt::format("unsupported torch dtype {}", pyStr(torchDtype)));
  auto dtype = ScalarType(PyLong_AsLong(code));
  int device = int(asInt64(callMethod(h, t.getDeviceName).ptr()));
  checkDevice(k, p, w, device < 0 ? 1 : (w.backend == BackendKind::Hip ? 10 : 2), device < 0 ? 0 : device);
  if (device >= 0 && out.torchCudaDevice < 0) {
    out.torchCudaDevice = device;
    out.torchDeviceType = w.backend == BackendKind::Hip ? 10 : 2;
  }
  // torch.Size is a tuple subclass; stride() returns a tuple.
  nb::object shape = getAttr(h, t.shapeName);
  nb::object strides = callMethod(h, t.strideName);
  if (!PyTuple_Check(shape.ptr()) || !PyTuple_Check(strides.ptr()))
    fail(k, p, "torch tensor: shape or stride() is not a tuple");
  Py_ssize_t rank = PyTuple_GET_SIZE(shape.ptr());
  if (rank > Py_ssize_t(kMaxRank)) fail(k, p, fmt::format("rank {} is over the limit of {}", rank, kMaxRank));
  if (PyTuple_GET_SIZE(strides.ptr()) != rank) fail(k, p, "torch tensor: stride() and shape differ in length");
  int64_t s[kMaxRank], st[kMaxRank];
  for (Py_ssize_t i = 0; i < rank; ++i) {
    s[i] = asInt64(PyTuple_GET_ITEM(shape.ptr(), i));
    st[i] = asInt64(PyTuple_GET_ITEM(strides.ptr(), i));
  }
  nb::object ptrObj = callMethod(h, t.dataPtrName);
  void* ptr = PyLong_AsVoidPtr(ptrObj.ptr());
  if (!ptr && PyErr_Occurred()) throw nb::python_error();
  out.args.push_back(tensor(ptr, dtype, s, int(rank), st));
  if (device >= 0) out.args.back().device = int16_t(device);
  return true;
}

// The array interfaces (NumPy's __array_interface__, Numba's and CuPy's
// __cuda_array_interface__, version 2 or later): for arrays that speak
// neither DLPack nor the buffer protocol. `device` is the DLPack device type
// they mean (1 host, 2 CUDA). The interface does not say which device: the
// Arg's device stays unknown, and with several devices the runtime asks the
// driver where the pointer lives (cuPointerGetAttribute).
bool interfaceArg(const KernelInfo& k, const KernelParamInfo& p, const DeviceTarget& w, nb::handle h,
                  bool refuseReadOnly, Arg& out) {
  int device = 0;
  nb::object iface;
  const char* which = "__cuda_array_interface__";
  if (nb::hasattr(h, "__cuda_array_interface__")) {
    iface = h.attr("__cuda_array_interface__");
    device = w.backend == BackendKind::Hip ? 10 : 2;
  } else if (nb::hasattr(h, "__array_interface__")) {
    iface = h.attr("__array_interface__");
    which = "__array_interface__";
    device = 1;
  } else {
    return false;
  }
  nb::dict d = nb::borrow<nb::dict>(iface);
  // data is (pointer, read-only).
  if (refuseReadOnly && p.writes && nb::cast<bool>(nb::borrow<nb::tuple>(d["data"])[1]))
    failReadOnly(k, p, fmt::format("its {} says read-only: data[1] is True", which));
  std::string typestr = nb::cast<std::string>(d["typestr"]);
  static const std::map<std::string, ScalarType> types = {
      {"<f2", ScalarType::F16}, {"<f4", ScalarType::F32}, {"<f8", ScalarType::F64}, {"|i1", ScalarType::I8},
      {"<i2", ScalarType::I16}, {"<i4", ScalarType::I32}, {"<i8", ScalarType::I64}, {"|u1", ScalarType::U8},
      {"<u2", ScalarType::U16}, {"<u4", ScalarType::U32}, {"<u8", ScalarType::U64}, {"|b1", ScalarType::Bool}};
  auto t = types.find(typestr);
  if (t == types.end()) fail(k, p, fmt::format("unsupported array typestr '{}'", typestr));
  checkDevice(k, p, w, device, w.device);
  nb::tuple shape = nb::borrow<nb::tuple>(d["shape"]);
  size_t rank = shape.size();
  if (rank > size_t(kMaxRank)) fail(k, p, fmt::format("rank {} is over the limit of {}", rank, kMaxRank));
  int64_t sh[kMaxRank], st[kMaxRank];
  for (size_t i = 0; i < rank; ++i) sh[i] = nb::cast<int64_t>(shape[i]);
  bool strided = d.contains("strides") && !d["strides"].is_none();
  int64_t bytes = int64_t(scalarBytes(t->second));
  for (size_t i = 0; i < rank && strided; ++i) {
    int64_t b = nb::cast<int64_t>(nb::borrow<nb::tuple>(d["strides"])[i]);
    if (b % bytes) fail(k, p, fmt::format("stride {} of {} bytes is not a whole number of elements", i, b));
    st[i] = b / bytes;
  }
  auto ptr = reinterpret_cast<const void*>(nb::cast<uintptr_t>(nb::borrow<nb::tuple>(d["data"])[0]));
  out = tensor(ptr, t->second, sh, int(rank), strided ? st : nullptr);
  return true;
}

// Whether `h` is a JAX array. JAX arrays are immutable, but JAX (0.10)
// exports them as unversioned DLPack capsules, which carry no read-only
// flag, so they are known by their type's module ("jaxlib._jax" for
// jax.Array), looked up once per type (the GIL guards the cache).
bool isJaxArray(nb::handle h) {
  static std::vector<std::pair<PyTypeObject*, bool>> seen;
  PyTypeObject* type = Py_TYPE(h.ptr());
  for (const auto& [t, jax] : seen)
    if (t == type) return jax;
  bool jax = false;
  nb::object module = nb::getattr(nb::handle(reinterpret_cast<PyObject*>(type)), "__module__", nb::none());
  if (nb::isinstance<nb::str>(module)) {
    const std::string m = nb::cast<std::string>(module);
    jax = m == "jax" || m == "jaxlib" || m.rfind("jax.", 0) == 0 || m.rfind("jaxlib.", 0) == 0;
  }
  seen.emplace_back(type, jax);
  return jax;
}

// An array: through DLPack or the buffer protocol (nanobind's ndarray), else
// the array interfaces. `refuseReadOnly`: a launch, where a read-only array
// for a parameter the kernel writes is refused.
Arg arrayArg(const KernelInfo& k, const KernelParamInfo& p, const DeviceTarget& w, nb::handle h, bool refuseReadOnly,
             BoundArgs& out) {
  nb::ndarray<nb::ro> a;
  bool cast;
  if (refuseReadOnly && p.writes) {
    // Asked for a writable array, nanobind refuses a versioned DLPack capsule
    // with DLPACK_FLAG_BITMASK_READ_ONLY (JAX, read-only NumPy) and a buffer
    // that is not writable; what the read-only request then accepts is
    // read-only. (An unversioned capsule cannot say, and passes: hence the
    // test for JAX, whose arrays come as such capsules.)
    if (isJaxArray(h)) failReadOnly(k, p, "a JAX array is immutable");
    nb::ndarray<> writable;
    cast = nb::try_cast(h, writable, /*convert=*/false);
    if (cast) a = nb::ndarray<nb::ro>(writable);
    else if (nb::try_cast(h, a, /*convert=*/false))  // nanobind tries DLPack first
      failReadOnly(
          k, p, nb::hasattr(h, "__dlpack__") ? "its DLPack export is flagged read-only" : "its buffer is not writable");
  } else {
    cast = nb::try_cast(h, a, /*convert=*/false);
  }
  if (!cast) {
    Arg viaInterface;
    if (interfaceArg(k, p, w, h, refuseReadOnly, viaInterface)) return viaInterface;
    fail(k, p,
         fmt::format("expected a tensor (an array with DLPack, the buffer protocol, __cuda_array_interface__ or "
                     "__array_interface__: torch, CuPy, JAX, NumPy), got {}",
                     typeName(h)));
  }
  ScalarType dtype = dtypeFromDlpack(a.dtype());
  if (dtype == ScalarType::Invalid)
    fail(k, p,
         fmt::format("unsupported array dtype (DLPack code {}, {} bits, {} lanes)", int(a.dtype().code),
                     int(a.dtype().bits), int(a.dtype().lanes)));
  checkDevice(k, p, w, a.device_type(), a.device_id());
  if (a.ndim() > size_t(kMaxRank)) fail(k, p, fmt::format("rank {} is over the limit of {}", a.ndim(), kMaxRank));
  const char* data = static_cast<const char*>(a.data_handle()) + a.byte_offset();
  Arg arg = tensor(data, dtype, a.shape_ptr(), int(a.ndim()), a.stride_ptr());
  if (onDevice(a.device_type())) arg.device = int16_t(a.device_id());
  out.arrays.push_back(std::move(a));
  return arg;
}

double maxFinite(ScalarType t) {
  switch (t) {
    case ScalarType::F16: return 65504.0;
    case ScalarType::BF16: return 3.3895313892515355e38;
    case ScalarType::F32: return std::numeric_limits<float>::max();
    case ScalarType::F8E4M3: return 448.0;
    case ScalarType::F8E5M2: return 57344.0;
    default: return std::numeric_limits<double>::max();
  }
}

Arg integerArg(const KernelInfo& k, const KernelParamInfo& p, ScalarType t, nb::handle h) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
  if (t == ScalarType::U64 && overflow > 0) {
    unsigned long long u = PyLong_AsUnsignedLongLong(h.ptr());
    if (PyErr_Occurred()) {
      PyErr_Clear();
    } else {
      return scalar(uint64_t(u));
    }
  }
  std::string text = pyStr(h);
  auto outOfRange = [&] { fail(k, p, fmt::format("{} does not fit {}", text, scalarName(t))); };
  if (overflow) outOfRange();
  int bits = scalarBits(t);
  if (isSigned(t)) {
    if (bits < 64 && (v < -(1LL << (bits - 1)) || v >= (1LL << (bits - 1)))) outOfRange();
  } else {
    if (v < 0 || (bits < 64 && v >= (1LL << bits))) outOfRange();
  }
  switch (t) {
    case ScalarType::I32: return scalar(int32_t(v));
    case ScalarType::I64: return scalar(int64_t(v));
    case ScalarType::U32: return scalar(uint32_t(v));
    case ScalarType::U64: return scalar(uint64_t(v));
    default: return scalar(t, double(v));  // 8 and 16 bits: exact in a double
  }
}

// NumPy scalars (np.float32(2), np.int64(3)) and 0-d arrays: their dtype must
// be the parameter's; they are never converted.
bool numpyScalar(const KernelInfo& k, const KernelParamInfo& p, ScalarType want, nb::handle h, Arg& out) {
  if (!nb::hasattr(h, "dtype") || !nb::hasattr(h, "item") || !nb::hasattr(h, "ndim")) return false;
  if (nb::cast<int>(h.attr("ndim")) != 0) return false;
  std::string name = pyStr(h.attr("dtype"));
  static const std::map<std::string, ScalarType> numpyNames = {
      {"float16", ScalarType::F16}, {"float32", ScalarType::F32}, {"float64", ScalarType::F64},
      {"int8", ScalarType::I8},     {"int16", ScalarType::I16},   {"int32", ScalarType::I32},
      {"int64", ScalarType::I64},   {"uint8", ScalarType::U8},    {"uint16", ScalarType::U16},
      {"uint32", ScalarType::U32},  {"uint64", ScalarType::U64},  {"bool", ScalarType::Bool}};
  auto it = numpyNames.find(name);
  if (it == numpyNames.end()) fail(k, p, fmt::format("unsupported NumPy scalar dtype {}", name));
  if (it->second != want)
    fail(k, p,
         fmt::format("expected a {} scalar, got a NumPy {} (NumPy scalars are not converted; pass np.{}(...) or a "
                     "Python number)",
                     scalarName(want), name, std::string(scalarName(want))));
  nb::object v = h.attr("item")();
  if (want == ScalarType::Bool) out = scalar(nb::cast<bool>(v));
  else if (isInteger(want)) out = integerArg(k, p, want, v);
  else out = scalar(want, nb::cast<double>(v));
  return true;
}

Arg scalarArg(const KernelInfo& k, const KernelParamInfo& p, ScalarType want, nb::handle h) {
  Arg out;
  if (want == ScalarType::Invalid) {
    // A type parameter no tensor binds: only a NumPy scalar says which type.
    if (nb::hasattr(h, "dtype") && nb::hasattr(h, "ndim") && nb::cast<int>(h.attr("ndim")) == 0) {
      std::string name = pyStr(h.attr("dtype"));
      static const std::map<std::string, std::string> alias = {{"float16", "f16"}, {"float32", "f32"},
                                                               {"float64", "f64"}, {"int32", "i32"},
                                                               {"int64", "i64"},   {"bool", "bool"}};
      auto a = alias.find(name);
      if (a != alias.end() && numpyScalar(k, p, *scalarFromName(a->second), h, out)) return out;
    }
    fail(k, p,
         fmt::format("type parameter {} is bound by no tensor; pass a NumPy scalar of the type, or specialize(dtypes="
                     "{{'{}': ...}})",
                     p.typeParam, p.typeParam));
  }
  if (PyBool_Check(h.ptr())) {
    if (want != ScalarType::Bool) fail(k, p, fmt::format("expected a {} scalar, got a Python bool", scalarName(want)));
    return scalar(h.ptr() == Py_True);
  }
  // NumPy scalars first: np.float64 is a subclass of float, and stays strict.
  if (!PyLong_CheckExact(h.ptr()) && !PyFloat_CheckExact(h.ptr()) && numpyScalar(k, p, want, h, out)) return out;
  if (PyLong_Check(h.ptr())) {
    if (want == ScalarType::Bool) fail(k, p, "expected a bool, got a Python int");
    if (isInteger(want)) return integerArg(k, p, want, h);
    double v = PyLong_AsDouble(h.ptr());
    if (PyErr_Occurred() || std::fabs(v) > maxFinite(want)) {
      PyErr_Clear();
      fail(k, p, fmt::format("{} is out of the range of {}", pyStr(h), scalarName(want)));
    }
    return scalar(want, v);
  }
  if (PyFloat_Check(h.ptr())) {
    if (!isFloat(want))
      fail(k, p, fmt::format("expected a {} scalar, got a Python float (pass an int)", scalarName(want)));
    double v = PyFloat_AS_DOUBLE(h.ptr());
    if (std::isfinite(v) && std::fabs(v) > maxFinite(want))
      fail(k, p, fmt::format("{} is out of the range of {}", v, scalarName(want)));
    if (want == ScalarType::F32) return scalar(float(v));
    if (want == ScalarType::F64) return scalar(v);
    return scalar(want, v);
  }
  fail(k, p, fmt::format("expected a {} scalar, got {}", scalarName(want), typeName(h)));
}

}  // namespace

std::string paramTypeText(const KernelParamInfo& p) {
  std::string t = p.typeParam.empty() ? std::string(scalarName(p.dtype)) : p.typeParam;
  if (!p.isTensor) return t;
  t += "[";
  for (size_t i = 0; i < p.dims.size(); ++i) {
    const DimInfo& d = p.dims[i];
    if (i) t += ", ";
    t += d.isSymbol ? d.symbol : !d.expressionText.empty() ? d.expressionText : std::to_string(d.value);
  }
  return t + "]";
}

void bindPython(const KernelInfo& info, const DeviceTarget& where, nb::handle args, nb::handle kwargs,
                const std::map<std::string, ScalarType>& fixedTypes, bool launch, BoundArgs& out) {
  size_t n = info.params.size();
  size_t given = size_t(PyTuple_GET_SIZE(args.ptr()));
  // Slots by parameter; a surplus of positional arguments goes to the runtime,
  // whose arity message lists the signature. On the stack for the usual
  // kernel (no allocation per launch).
  PyObject* slotBuffer[16];
  std::vector<PyObject*> slotHeap;
  size_t slots = std::max(n, given);
  PyObject** slot = slotBuffer;
  if (slots > 16) {
    slotHeap.resize(slots);
    slot = slotHeap.data();
  }
  std::fill(slot, slot + slots, nullptr);
  for (size_t i = 0; i < given; ++i) slot[i] = PyTuple_GET_ITEM(args.ptr(), Py_ssize_t(i));
  if (kwargs.is_valid() && !kwargs.is_none() && PyDict_GET_SIZE(kwargs.ptr()) > 0) {
    for (auto [key, value] : nb::borrow<nb::dict>(kwargs)) {
      std::string name = nb::cast<std::string>(key);
      size_t i = 0;
      while (i < n && info.params[i].name != name) ++i;
      if (i == n) {
        std::string names;
        for (const auto& p : info.params) names += (names.empty() ? "" : ", ") + p.name;
        throw ArgError(fmt::format("{}: no parameter '{}' (parameters: {})", info.name, name, names));
      }
      if (slot[i]) throw ArgError(fmt::format("{}: parameter '{}' given by position and by keyword", info.name, name));
      slot[i] = value.ptr();
    }
  }
  size_t count = given;
  for (size_t i = 0; i < n; ++i) {
    if (slot[i]) {
      count = std::max(count, i + 1);
      continue;
    }
    if (info.params[i].isTensor && info.params[i].optional) {
      slot[i] = Py_None;
      count = std::max(count, i + 1);
    }
  }
  // A gap before the last argument given: name the missing one (otherwise the
  // runtime's arity message says what is expected).
  for (size_t i = 0; i < count && i < n; ++i)
    if (!slot[i])
      throw ArgError(fmt::format("{}: missing argument for parameter '{}' ({})", info.name, info.params[i].name,
                                 paramTypeText(info.params[i])));

  out.args.clear();
  out.args.reserve(count);
  // Tensors first: they bind the type parameters scalars of type T take.
  for (size_t i = 0; i < count; ++i) {
    nb::handle h(slot[i]);
    if (i >= n) {  // surplus: any value, the runtime counts them
      out.args.push_back(scalar(int32_t(0)));
      continue;
    }
    const KernelParamInfo& p = info.params[i];
    if (!p.isTensor) {
      out.args.push_back(Arg{});  // filled below
      continue;
    }
    if (h.is_none()) {
      out.args.push_back(none());
      continue;
    }
    if (!torchTensor(info, p, where, h, out)) out.args.push_back(arrayArg(info, p, where, h, launch, out));
    checkFixedType(info, p, out.args.back().dtype, fixedTypes);
  }
  // The type a scalar of type parameter `tp` takes: the first tensor of that
  // type, else specialize(dtypes=...) (no map built per launch).
  auto boundType = [&](const std::string& tp) {
    for (size_t j = 0; j < count && j < n; ++j) {
      const KernelParamInfo& q = info.params[j];
      if (q.isTensor && q.typeParam == tp && out.args[j].kind == Arg::Kind::Tensor) return out.args[j].dtype;
    }
    auto it = fixedTypes.find(tp);
    return it == fixedTypes.end() ? ScalarType::Invalid : it->second;
  };
  for (size_t i = 0; i < count && i < n; ++i) {
    const KernelParamInfo& p = info.params[i];
    if (p.isTensor) continue;
    nb::handle h(slot[i]);
    ScalarType want = p.typeParam.empty() ? p.dtype : boundType(p.typeParam);
    // An array for a scalar parameter: the runtime says "expected a scalar".
    if (!PyLong_Check(h.ptr()) && !PyFloat_Check(h.ptr()) && nb::hasattr(h, "shape") &&
        !(nb::hasattr(h, "ndim") && nb::cast<int>(h.attr("ndim")) == 0)) {
      if (!torchTensor(info, p, where, h, out)) out.args.push_back(arrayArg(info, p, where, h, false, out));
      out.args[i] = out.args.back();
      out.args.pop_back();
      continue;
    }
    out.args[i] = scalarArg(info, p, want, h);
  }
}

const char* torchBindingPath() {
  Torch& t = torchState();
  return !t.ready ? "no torch" : t.api ? "exchange api" : "attributes";
}

void* streamHandle(nb::handle stream, int torchCudaDevice, int torchDeviceType) {
  if (stream.is_none()) {
    if (torchCudaDevice < 0) return nullptr;
    Torch& t = torchState();
    if (t.api) {  // no Python call
      void* s = nullptr;
      if (t.api->currentWorkStream(torchDeviceType, torchCudaDevice, &s) == 0) return s;
      throw nb::python_error();
    }
    if (!t.rawStream) return nullptr;
    return reinterpret_cast<void*>(nb::cast<uintptr_t>(nb::handle(t.rawStream)(torchCudaDevice)));
  }
  if (PyLong_Check(stream.ptr())) return reinterpret_cast<void*>(nb::cast<uintptr_t>(stream));
  if (nb::hasattr(stream, "__cuda_stream__")) {
    nb::tuple vh = nb::borrow<nb::tuple>(stream.attr("__cuda_stream__")());
    return reinterpret_cast<void*>(nb::cast<uintptr_t>(vh[1]));
  }
  if (nb::hasattr(stream, "cuda_stream"))
    return reinterpret_cast<void*>(nb::cast<uintptr_t>(stream.attr("cuda_stream")));
  if (nb::hasattr(stream, "ptr")) return reinterpret_cast<void*>(nb::cast<uintptr_t>(stream.attr("ptr")));
  throw ArgError(
      fmt::format("stream: expected an int, a torch.cuda.Stream, a CuPy stream or an object with "
                  "__cuda_stream__, got {}",
                  typeName(stream)));
}

}  // namespace spindle::py
