# Torch tensors bound on the cpu target with real torch (skipped without it):
# DLPack's C exchange API (torch 2.10+) for torch.Tensor and nn.Parameter
# (requires_grad ones too), the Python attributes for everything else
# (subclasses, older torch). Either way a tensor must bind exactly as the NumPy array that
# views the same memory: dims, geometry, and the cache key (which holds the
# layout facts: contiguity, unit strides, 16-byte alignment, divisibility).
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import spindle  # noqa: E402
from conftest import SAMPLES  # noqa: E402


class Sub(torch.Tensor):
    """A subclass: read through its attributes, never the C layout."""


def views():
    base = torch.arange(40 * 100, dtype=torch.float32).reshape(40, 100)
    yield "contiguous", base
    yield "transposed", base.T
    yield "sliced with an offset", base[::3, 1::2]
    yield "unaligned start", base.reshape(-1)[1:3001].reshape(30, 100)
    yield "requires_grad", base.clone().requires_grad_(True)
    yield "parameter", torch.nn.Parameter(base.clone())
    yield "subclass", base.clone().as_subclass(Sub)


def as_numpy(t):
    return torch.Tensor.numpy(t.detach().as_subclass(torch.Tensor))


@pytest.fixture(scope="module")
def scale_strided(cpu):
    return cpu.load(SAMPLES / "scale_strided.spn").scale_strided


def test_the_exchange_api_is_used_where_torch_has_it(scale_strided):
    scale_strided.bind(torch.ones(2, 4), torch.ones(2, 4), 1.0)  # torch is known to the extension from here on
    has_api = hasattr(torch.Tensor, "__dlpack_c_exchange_api__")
    assert spindle._spindle._torch_binding() == ("exchange api" if has_api else "attributes")


@pytest.mark.parametrize("name", [n for n, _ in views()])
def test_a_tensor_binds_as_the_numpy_array_of_its_memory(scale_strided, name):
    t = dict(views())[name]
    y = torch.empty(t.shape)
    got = scale_strided.bind(t, y, 0.5)
    want = scale_strided.bind(as_numpy(t), y.numpy(), 0.5)
    assert got == want
    assert scale_strided.compile_for(t, y, 0.5)["key"] == scale_strided.compile_for(as_numpy(t), y.numpy(), 0.5)["key"]


@pytest.mark.parametrize("name", [n for n, _ in views()])
def test_launch_by_value(scale_strided, name):
    t = dict(views())[name]
    y = torch.empty(t.shape)
    with torch.no_grad():
        scale_strided(t, y, 0.75)
    np.testing.assert_allclose(y.numpy(), 0.75 * as_numpy(t), rtol=1e-6)


def test_errors_name_the_parameter(scale_strided):
    with pytest.raises(spindle.LaunchError, match=r"parameter 'x'.*float64|f64"):
        scale_strided(torch.ones(4, 4, dtype=torch.float64), torch.ones(4, 4), 1.0)
    with pytest.raises(spindle.LaunchError, match="unsupported torch dtype torch.complex64"):
        scale_strided(torch.ones(4, 4, dtype=torch.complex64), torch.ones(4, 4), 1.0)
    with pytest.raises(spindle.LaunchError, match="'y'"):
        scale_strided(torch.ones(4, 4), torch.ones(4, 5), 1.0)
