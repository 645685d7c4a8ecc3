// spindle._spindle: the C++ runtime (runtime/include/spindle/runtime.hpp)
// for Python. The Python package (python/spindle/) adds the module-level
// functions and the diagnostics objects; everything on the launch path is
// here, so a cache-hit launch is one C++ call.
#include <fmt/format.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdio>
#include <memory>
#include <spindle/runtime.hpp>

#include "args.h"
#include "dispatch.h"  // generator/cli: the `spindle` commands

namespace nb = nanobind;
using namespace nb::literals;

namespace spindle::py {
namespace {

// The .spn or the compiler rejected the kernel (Python: spindle.CompileError).
class CompileFailure : public Error {
 public:
  using Error::Error;
};
// A launch that was refused or failed (Python: spindle.LaunchError).
class LaunchFailure : public Error {
 public:
  using Error::Error;
};

struct PyRuntime {
  std::shared_ptr<Runtime> rt;
  DeviceTarget where;
};

struct PyModule {
  std::shared_ptr<Runtime> rt;
  DeviceTarget where;
  Module module;
};

ScalarType dtypeNamed(const std::string& name) {
  auto t = scalarFromName(name);
  if (!t) throw Error(fmt::format("unknown dtype '{}' (f32, f16, bf16, f64, i32, ...)", name));
  return *t;
}

// Runs `body`; a spindle::Error from it is a CompileError when the runtime
// counted a failed compile meanwhile, else a LaunchError.
template <typename Fn>
auto classify(Runtime& rt, Fn&& body) -> decltype(body()) {
  uint64_t failures = rt.stats().compileFailures;
  try {
    return body();
  } catch (const ArgError&) {
    throw;
  } catch (const Error& e) {
    if (rt.stats().compileFailures != failures) throw CompileFailure(e.what());
    throw LaunchFailure(e.what());
  }
}

nb::dict reportDict(const CompileReport& r) {
  nb::dict d;
  d["kernel_symbol"] = r.kernelSymbol;
  d["target"] = r.target;
  d["key"] = r.keyHex;
  d["outcome"] = std::string(cacheOutcomeName(r.outcome));
  d["hit"] = r.outcome != CacheOutcome::Miss;
  d["binary_bytes"] = r.binaryBytes;
  d["compile_seconds"] = r.compileSeconds;
  d["source"] = r.source;
  d["tune_config"] = r.tuneConfig;  // a kernel with @tune: the config, and how it was picked
  d["tune_choice"] = r.tuneChoice;
  return d;
}

struct PyKernel {
  std::shared_ptr<Runtime> rt;
  DeviceTarget where;
  Module module;
  Kernel kernel;
  // specialize(): values given for static dims and type parameters. Launches
  // must match them; source() and compile() with no arrays use them.
  std::map<std::string, int64_t> staticValues;
  std::map<std::string, ScalarType> typeArgs;
  std::map<std::string, ConstOverride> consts;

  const KernelInfo& info() const { return kernel.info(); }

  void bind(nb::handle args, nb::handle kwargs, BoundArgs& out, bool launch = false) const {
    bindPython(info(), where, args, kwargs, typeArgs, launch, out);
    if (staticValues.empty()) return;
    // Static values given to specialize(): a launch of other sizes is a
    // mistake, not a new binary.
    for (size_t i = 0; i < out.args.size() && i < info().params.size(); ++i) {
      const KernelParamInfo& p = info().params[i];
      const Arg& a = out.args[i];
      if (!p.isTensor || a.kind != Arg::Kind::Tensor) continue;
      for (size_t d = 0; d < p.dims.size() && int(d) < a.rank; ++d) {
        if (!p.dims[d].isSymbol) continue;
        auto it = staticValues.find(p.dims[d].symbol);
        if (it != staticValues.end() && it->second != a.shape[d])
          throw ArgError(fmt::format("{}: parameter '{}' dim {} ({}): the kernel was specialized for {}={}, got {}",
                                     info().name, p.name, d, it->first, it->first, it->second, a.shape[d]));
      }
    }
  }

  // Everything a launch does in Python before the runtime's Kernel::launch:
  // arguments bound and converted, the stream resolved. `kwargs` may be
  // null; it is not changed.
  void* prepare(PyObject* args, PyObject* kwargs, BoundArgs& b) const {
    nb::object stream = nb::none();
    nb::object rest;                              // kwargs without stream=, made only when there is one
    if (kwargs && PyDict_GET_SIZE(kwargs) > 0) {  // most launches pass no keywords
      static PyObject* const name = PyUnicode_InternFromString("stream");
      if (PyObject* s = PyDict_GetItem(kwargs, name)) {  // borrowed
        stream = nb::borrow(s);
        rest = nb::steal(PyDict_Copy(kwargs));
        if (!rest.is_valid() || PyDict_DelItem(rest.ptr(), name) != 0) throw nb::python_error();
        kwargs = rest.ptr();
      }
    }
    bind(nb::handle(args), nb::handle(kwargs), b, /*launch=*/true);
    return streamHandle(stream, b.torchCudaDevice, b.torchDeviceType);
  }

  void call(PyObject* args, PyObject* kwargs) const {
    BoundArgs b;
    void* s = prepare(args, kwargs, b);
    classify(*rt, [&] {
      nb::gil_scoped_release release;
      kernel.launch(s, b.args.data(), b.args.size());
    });
  }

  // prepare() alone: the Python side of a launch, measurable with no GPU
  // (bench/python_bind.py).
  void dryCall(PyObject* args, PyObject* kwargs) const {
    BoundArgs b;
    prepare(args, kwargs, b);
  }

  Specialization spec() const {
    Specialization s;
    s.staticDims = staticValues;
    s.typeArgs = typeArgs;
    return s;
  }

  std::string source(nb::args args, nb::kwargs kwargs) const {
    if (nb::len(args) == 0 && nb::len(kwargs) == 0) {
      Specialization s = spec();
      return classify(*rt, [&] {
        nb::gil_scoped_release release;
        return kernel.source(s);
      });
    }
    BoundArgs b;
    bind(args, kwargs, b);
    return classify(*rt, [&] {
      nb::gil_scoped_release release;
      return kernel.sourceFor(b.args.data(), b.args.size());
    });
  }

  nb::dict compileFor(nb::args args, nb::kwargs kwargs) const {
    BoundArgs b;
    bind(args, kwargs, b);
    CompileReport r = classify(*rt, [&] {
      nb::gil_scoped_release release;
      return kernel.compileFor(b.args.data(), b.args.size());
    });
    return reportDict(r);
  }

  nb::dict compile() const {
    Specialization s = spec();
    CompileReport r = classify(*rt, [&] {
      nb::gil_scoped_release release;
      return kernel.compile(s);
    });
    return reportDict(r);
  }

  nb::dict bindOnly(nb::args args, nb::kwargs kwargs) const {
    BoundArgs b;
    bind(args, kwargs, b);
    LaunchPlan p = classify(*rt, [&] { return kernel.bind(b.args.data(), b.args.size()); });
    nb::dict d;
    d["dims"] = p.dims;
    d["static_dims"] = p.staticDims;
    nb::dict types;
    for (const auto& [t, v] : p.typeArgs) types[t.c_str()] = std::string(scalarName(v));
    d["dtypes"] = types;
    d["grid"] = nb::make_tuple(p.geometry.grid[0], p.geometry.grid[1], p.geometry.grid[2]);
    d["block"] = nb::make_tuple(p.geometry.block[0], p.geometry.block[1], p.geometry.block[2]);
    d["dynamic_shared_bytes"] = p.geometry.dynamicSharedBytes;
    return d;
  }

  PyKernel specialize(std::optional<std::map<std::string, int64_t>> statics,
                      std::optional<std::map<std::string, std::string>> dtypes,
                      std::optional<nb::dict> constsIn) const {
    PyKernel k = *this;
    if (statics)
      for (const auto& [name, v] : *statics) k.staticValues[name] = v;
    if (dtypes)
      for (const auto& [name, t] : *dtypes) k.typeArgs[name] = dtypeNamed(t);
    if (constsIn) {
      for (auto [key, value] : *constsIn) {
        std::string name = nb::cast<std::string>(key);
        if (PyBool_Check(value.ptr())) k.consts[name] = ConstOverride::ofInt(value.ptr() == Py_True);
        else if (PyLong_Check(value.ptr())) k.consts[name] = ConstOverride::ofInt(nb::cast<int64_t>(value));
        else if (PyFloat_Check(value.ptr())) k.consts[name] = ConstOverride::ofFloat(nb::cast<double>(value));
        else if (PyUnicode_Check(value.ptr())) k.consts[name] = ConstOverride::ofFunction(nb::cast<std::string>(value));
        else
          throw Error(fmt::format("const {}: expected an int, a float or a def's name, got {}", name,
                                  Py_TYPE(value.ptr())->tp_name));
      }
    }
    KernelOptions o;
    // The handle's static dims: @static ones, and every one given a value.
    for (const auto& [name, v] : k.staticValues) o.staticDims.push_back(name);
    o.consts = k.consts;
    k.kernel = module.kernel(info().name, o);
    return k;
  }

  nb::list params() const {
    nb::list out;
    for (const auto& p : info().params) {
      nb::dict d;
      d["name"] = p.name;
      d["kind"] = p.isTensor ? "tensor" : "scalar";
      d["type"] = paramTypeText(p);
      d["dtype"] = p.typeParam.empty() ? std::string(scalarName(p.dtype)) : p.typeParam;
      d["strided"] = p.strided;
      d["writes"] = p.writes;
      d["optional"] = p.optional;
      out.append(d);
    }
    return out;
  }

  std::string repr() const {
    std::string sig;
    for (const auto& p : info().params) sig += (sig.empty() ? "" : ", ") + p.name + ": " + paramTypeText(p);
    std::string tps;
    for (const auto& t : info().typeParams) tps += (tps.empty() ? "" : ", ") + t;
    return fmt::format("<spindle kernel {}{}({})>", info().name, tps.empty() ? "" : "[" + tps + "]", sig);
  }
};

// The exception types of the module (NB_MODULE fills them in).
struct ErrorTypes {
  PyObject* error = nullptr;
  PyObject* compile = nullptr;
  PyObject* launch = nullptr;
  PyObject* argument = nullptr;
} errorTypes;

// A C++ exception as the Python one nanobind's translators would raise (a
// raw entry point below bypasses them).
void raisePython() {
  try {
    throw;
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const ArgError& e) {
    PyErr_SetString(errorTypes.argument, e.what());
  } catch (const CompileFailure& e) {
    PyErr_SetString(errorTypes.compile, e.what());
  } catch (const LaunchFailure& e) {
    PyErr_SetString(errorTypes.launch, e.what());
  } catch (const Error& e) {
    PyErr_SetString(errorTypes.error, e.what());
  } catch (const nb::cast_error&) {
    PyErr_SetString(PyExc_TypeError, "spindle: an argument could not be converted");
  } catch (const nb::builtin_exception& e) {
    e.type() == nb::exception_type::type_error ? PyErr_SetString(PyExc_TypeError, e.what())
                                               : PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
}

// Kernel.__call__ and Kernel._dry_call as plain CPython entry points (the
// type's tp_call slot, a METH_VARARGS | METH_KEYWORDS method): no overload
// resolution and no keyword dict when there are no keywords. Launch
// overhead: about 100 ns less per call than a nanobind method taking
// nb::args and nb::kwargs.
PyObject* kernelCall(PyObject* self, PyObject* args, PyObject* kwargs) {
  if (!nb::inst_ready(self)) {  // Kernel.__new__(Kernel): never made by the extension
    PyErr_SetString(PyExc_TypeError, "spindle.Kernel: an uninitialized kernel object");
    return nullptr;
  }
  try {
    nb::inst_ptr<PyKernel>(self)->call(args, kwargs);
    Py_RETURN_NONE;
  } catch (...) {
    raisePython();
    return nullptr;
  }
}

PyObject* kernelDryCall(PyObject* self, PyObject* args, PyObject* kwargs) {
  if (!nb::inst_ready(self)) {  // Kernel.__new__(Kernel): never made by the extension
    PyErr_SetString(PyExc_TypeError, "spindle.Kernel: an uninitialized kernel object");
    return nullptr;
  }
  try {
    nb::inst_ptr<PyKernel>(self)->dryCall(args, kwargs);
    Py_RETURN_NONE;
  } catch (...) {
    raisePython();
    return nullptr;
  }
}

PyType_Slot kernelSlots[] = {{Py_tp_call, reinterpret_cast<void*>(kernelCall)}, {0, nullptr}};

PyMethodDef kernelDryCallDef = {
    "_dry_call", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(kernelDryCall)),
    METH_VARARGS | METH_KEYWORDS,
    "Bind the arguments and resolve the stream as a launch does, and stop there (benchmarks)."};

DeviceTarget whereOf(const Runtime& rt, int device) {
  DeviceTarget w;
  w.backend = rt.backend();
  w.device = device;
  return w;
}

BackendKind backendNamed(const std::string& s) {
  if (s.empty() || s == "auto") return BackendKind::Auto;
  if (s == "cuda") return BackendKind::Cuda;
  if (s == "hip") return BackendKind::Hip;
  if (s == "cpu") return BackendKind::Cpu;
  throw Error(fmt::format("unknown backend '{}' (auto, cuda, hip, cpu)", s));
}

}  // namespace
}  // namespace spindle::py

NB_MODULE(_spindle, m) {
  using namespace spindle;
  using namespace spindle::py;
  m.doc() = "The Spindle runtime (C++), for the spindle package.";
  // A script that dies of an exception keeps kernels alive in its traceback
  // until the interpreter is gone, and nanobind would report them as leaks.
  nb::set_leak_warnings(false);

  nb::exception<Error> error(m, "Error");
  nb::exception<CompileFailure>(m, "CompileError", error);
  nb::exception<LaunchFailure>(m, "LaunchError", error);
  nb::exception<ArgError>(m, "ArgumentError", m.attr("LaunchError"));

  // `python -m spindle ...`: the C++ CLI's own commands, in this process, so
  // options, diagnostics and exit codes are the executable's by construction.
  // They print through C stdio (file descriptors 1 and 2), flushed before
  // returning so that Python's own output stays in order.
  m.def(
      "_cli",
      [](const std::vector<std::string>& args) {
        nb::gil_scoped_release release;
        int status = spindle::cli::runCli(args);
        std::fflush(stdout);
        std::fflush(stderr);
        return status;
      },
      "args"_a, "Run `spindle ARGS...` (the C++ CLI) and return its exit status.");

  m.def(
      "_torch_binding", [] { return std::string(torchBindingPath()); },
      "How torch tensors are read: 'exchange api', 'attributes' or 'no torch'.");

  nb::class_<PyRuntime>(m, "Runtime")
      .def(
          "__init__",
          [](PyRuntime* self, const std::string& backend, const std::string& target, int device,
             const std::string& cacheDir, bool diskCache, std::optional<bool> checked) {
            RuntimeOptions o;
            o.backend = backendNamed(backend);
            o.target = target;
            o.device = device;
            o.cacheDir = cacheDir;
            o.diskCache = diskCache;
            o.checked = checked;
            std::shared_ptr<Runtime> rt;
            {
              nb::gil_scoped_release release;
              rt = std::make_shared<Runtime>(o);
            }
            new (self) PyRuntime{rt, whereOf(*rt, device)};
          },
          "backend"_a = "", "target"_a = "", "device"_a = 0, "cache_dir"_a = "", "disk_cache"_a = true,
          "checked"_a = nb::none())
      .def_prop_ro("backend", [](const PyRuntime& r) { return std::string(backendName(r.rt->backend())); })
      .def_prop_ro("target", [](const PyRuntime& r) { return r.rt->target(); })
      .def_prop_ro("warp_size", [](const PyRuntime& r) { return r.rt->warpSize(); })
      .def_prop_ro("device", [](const PyRuntime& r) { return r.where.device; })
      .def_prop_ro("has_device", [](const PyRuntime& r) { return r.rt->hasDevice(); })
      .def_prop_ro("device_name", [](const PyRuntime& r) { return r.rt->deviceName(); })
      .def_prop_ro("device_status", [](const PyRuntime& r) { return r.rt->deviceStatus(); })
      .def_prop_ro("compiler", [](const PyRuntime& r) { return r.rt->compilerIdentity(); })
      .def_prop_ro("cache_dir", [](const PyRuntime& r) { return r.rt->cacheDir(); })
      .def("stats",
           [](const PyRuntime& r) {
             CacheStats s = r.rt->stats();
             nb::dict d;
             d["memory_hits"] = s.memoryHits;
             d["disk_hits"] = s.diskHits;
             d["misses"] = s.misses;
             d["compiles"] = s.compiles;
             d["compile_failures"] = s.compileFailures;
             d["compile_seconds"] = s.compileSeconds;
             d["remote_hits"] = s.remoteHits;  // the remote cache (SPINDLE_CACHE_REDIS), docs/runtime.md
             d["remote_misses"] = s.remoteMisses;
             d["remote_rejects"] = s.remoteRejects;
             d["remote_stores"] = s.remoteStores;
             d["remote_errors"] = s.remoteErrors;
             d["tunings"] = s.tunings;  // autotuning (docs/runtime.md, "Autotuning")
             d["tuning_launches"] = s.tuningLaunches;
             d["tune_store_hits"] = s.tuneStoreHits;
             d["tensor_map_fallbacks"] = s.tensorMapFallbacks;  // copy_tile's element path, docs/runtime.md
             return d;
           })
      .def("reset_stats", [](PyRuntime& r) { r.rt->resetStats(); })
      .def("_load",
           [](PyRuntime& r, const std::string& path) {
             std::optional<Module> mod;
             {
               nb::gil_scoped_release release;
               mod = r.rt->loadModule(path);
             }
             return PyModule{r.rt, r.where, *mod};
           })
      .def("_loads", [](PyRuntime& r, const std::string& text, const std::string& name) {
        std::optional<Module> mod;
        {
          nb::gil_scoped_release release;
          mod = r.rt->loadModuleFromString(name, text);
        }
        return PyModule{r.rt, r.where, *mod};
      });

  nb::class_<PyModule>(m, "Module")
      .def_prop_ro("path", [](const PyModule& mod) { return mod.module.compiled().path(); })
      .def("kernel_names", [](const PyModule& mod) { return mod.module.kernelNames(); })
      .def("_kernel", [](const PyModule& mod, const std::string& name) {
        Kernel k = mod.module.kernel(name);
        return PyKernel{mod.rt, mod.where, mod.module, k, {}, {}, {}};
      });

  errorTypes = {m.attr("Error").ptr(), m.attr("CompileError").ptr(), m.attr("LaunchError").ptr(),
                m.attr("ArgumentError").ptr()};  // the module keeps them alive

  // __call__ (launch with arrays and scalars; stream= picks the stream) is
  // the type's tp_call slot, _dry_call a raw method: kernelCall above.
  auto kernelClass = nb::class_<PyKernel>(m, "Kernel", nb::type_slots(kernelSlots));
  {
    nb::object dry = nb::steal(PyDescr_NewMethod((PyTypeObject*)kernelClass.ptr(), &kernelDryCallDef));
    if (!dry.is_valid() || PyObject_SetAttrString(kernelClass.ptr(), "_dry_call", dry.ptr()) != 0)
      throw nb::python_error();
  }
  kernelClass.def("source", &PyKernel::source, "The specialized HIP source a launch with these arguments compiles.")
      .def("compile_for", &PyKernel::compileFor, "Compile what a launch with these arguments uses; no launch.")
      .def("compile", &PyKernel::compile, "Compile the specialization given to specialize(); no arrays needed.")
      .def("bind", &PyKernel::bindOnly, "Bind and check the arguments: dims, dtypes, launch geometry.")
      .def("specialize", &PyKernel::specialize, "static"_a = nb::none(), "dtypes"_a = nb::none(),
           "consts"_a = nb::none(), "A handle with static dims, dtypes or consts fixed (like the C++ KernelOptions).")
      .def_prop_ro("name", [](const PyKernel& k) { return k.info().name; })
      .def_prop_ro("params", &PyKernel::params)
      .def_prop_ro("type_params", [](const PyKernel& k) { return k.info().typeParams; })
      .def_prop_ro("dim_symbols", [](const PyKernel& k) { return k.info().dimSymbols; })
      .def_prop_ro("static_dims", [](const PyKernel& k) { return k.kernel.staticDims(); })
      .def_prop_ro("static_values", [](const PyKernel& k) { return k.staticValues; })
      .def_prop_ro("dtypes",
                   [](const PyKernel& k) {
                     std::map<std::string, std::string> out;
                     for (const auto& [t, v] : k.typeArgs) out[t] = std::string(scalarName(v));
                     return out;
                   })
      .def("__repr__", &PyKernel::repr);
}
