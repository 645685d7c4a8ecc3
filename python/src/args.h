// Python launch arguments to spindle::Arg: arrays (torch tensors read
// directly, anything else through nanobind's ndarray: DLPack, the buffer
// protocol), scalars converted to the parameter's declared type, keywords
// ordered by the kernel's signature. Every check here names the kernel and
// the parameter, like the runtime's own (docs/runtime.md, Launch validation).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <map>
#include <spindle/runtime.hpp>
#include <string>
#include <vector>

namespace spindle::py {

namespace nb = nanobind;

// A bad argument found before the runtime sees it (LaunchError in Python).
class ArgError : public Error {
 public:
  using Error::Error;
};

// Where the kernel's runtime launches: arrays must live there.
struct DeviceTarget {
  BackendKind backend = BackendKind::Cpu;
  int device = 0;
};

// The converted arguments of one call, with what keeps their memory alive
// while the GIL is released.
struct BoundArgs {
  std::vector<Arg> args;
  std::vector<nb::ndarray<nb::ro>> arrays;
  // The CUDA device of the first torch tensor (its current stream is the
  // default stream), or -1.
  int torchCudaDevice = -1;
  int torchDeviceType = 2;  // its DLPack device type: 2 CUDA, 10 ROCm
};

// The kernel's parameter as the runtime prints it: "f32[M, N]", "T[N]", "f32".
std::string paramTypeText(const KernelParamInfo& p);

// Orders `args` and `kwargs` by `info`'s parameters (a missing optional
// tensor is None) and converts each. `kwargs` may be null. `launch`: the
// arguments of a launch, which refuses a read-only array (DLPack's read-only
// flag, a buffer that is not writable, an array interface's read-only data)
// for a parameter the kernel writes; source(), compile_for() and bind()
// write nothing and accept one.
void bindPython(const KernelInfo& info, const DeviceTarget& where, nb::handle args, nb::handle kwargs,
                const std::map<std::string, ScalarType>& fixedTypes, bool launch, BoundArgs& out);

// The stream handle `stream` names: an int, an object with `cuda_stream`
// (torch.cuda.Stream) or `ptr` (cupy), or `__cuda_stream__()`; None: the
// current torch stream of `torchCudaDevice` (of DLPack device type
// `torchDeviceType`) when >= 0, else 0.
void* streamHandle(nb::handle stream, int torchCudaDevice, int torchDeviceType = 2);

// How torch tensors are read: "exchange api" (DLPack's C exchange API:
// no Python call per tensor), "attributes" (data_ptr(), shape, stride(),
// dtype, get_device()) or "no torch" (not imported yet).
const char* torchBindingPath();

}  // namespace spindle::py
