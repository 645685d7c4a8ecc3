# Run by test_torch_fast_path.py in a process of its own: a stand-in `torch`
# module in sys.modules (the real one is not installed in CI) whose Tensor
# wraps a NumPy array, so the extension's torch fast path (data_ptr(),
# shape, stride(), dtype, get_device() read directly) runs on the cpu target
# and its results can be checked by value.
import sys
import types

import numpy as np

torch = types.ModuleType("torch")
torch._C = types.ModuleType("torch._C")  # no _cuda_getCurrentRawStream: a CPU build


class dtype:  # hashable by identity, as torch.dtype
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


for name in ("float32", "float16", "int32", "complex64"):
    setattr(torch, name, dtype(name))


class Tensor:
    def __init__(self, array, device=-1):
        self.a = array
        self.device_index = device
        self.dtype = getattr(torch, str(array.dtype))

    @property
    def shape(self):
        return tuple(self.a.shape)

    def stride(self):
        return tuple(s // self.a.itemsize for s in self.a.strides)

    def data_ptr(self):
        return self.a.ctypes.data

    def get_device(self):
        return self.device_index


torch.Tensor = Tensor
sys.modules["torch"] = torch
del torch.complex64  # a dtype the package has no name for is reported, not guessed

import spindle  # noqa: E402

root = sys.argv[1]
rt = spindle.Runtime(backend="cpu", cache_dir=sys.argv[2])
rng = np.random.default_rng(7)

axpy = rt.load(f"{root}/samples/axpy.spn").axpy
x = rng.standard_normal(1000).astype(np.float32)
y = rng.standard_normal(1000).astype(np.float32)
want = np.float32(3.0) * x + y  # f32 math, no contraction on the cpu target: exact
axpy(Tensor(x), Tensor(y), 3.0)
np.testing.assert_array_equal(y, want)

base = rng.standard_normal((30, 40)).astype(np.float32)
scale = rt.load(f"{root}/samples/scale_strided.spn").scale_strided
for view in (base.T, base[::2, 1::3]):
    out = np.empty(view.shape, np.float32)
    scale(Tensor(view), Tensor(out), 2.0)  # strides read from stride(), no copy
    np.testing.assert_array_equal(out, 2.0 * view)

try:
    axpy(Tensor(x), Tensor(y, device=0), 1.0)
except spindle.ArgumentError as e:
    assert str(e) == "axpy: parameter 'y' (T[N]): a GPU array for the cpu target; pass a host (NumPy) array", e
else:
    raise AssertionError("a GPU tensor was accepted")

t = Tensor(x)
t.dtype = dtype("complex64")
try:
    axpy(t, Tensor(y), 1.0)
except spindle.ArgumentError as e:
    assert "axpy: parameter 'x' (T[N]): unsupported torch dtype" in str(e), e
else:
    raise AssertionError("an unknown dtype was accepted")
print("fast path ok")
