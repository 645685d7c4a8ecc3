# Kernel.__call__ and Kernel._dry_call are raw CPython entry points
# (python/src/ext.cpp, kernelCall): the exception types, stream=, keywords
# and a bad call through them, on the cpu target.
import numpy as np
import pytest

import spindle
from conftest import SAMPLES


@pytest.fixture
def axpy(cpu):
    return cpu.load(SAMPLES / "axpy.spn").axpy


def test_launch_with_stream_and_keywords(axpy, rng):
    x, y = rng.standard_normal(100).astype(np.float32), rng.standard_normal(100).astype(np.float32)
    want = 3.0 * x + y
    kw = {"a": 3.0, "stream": None}
    axpy(x, y, **kw)  # the cpu target ignores the stream
    np.testing.assert_allclose(y, want, rtol=1e-6)
    assert kw == {"a": 3.0, "stream": None}
    axpy(y=y, x=x, a=0.0, stream=0)
    np.testing.assert_allclose(y, want, rtol=1e-6)
    assert axpy._dry_call(x, y, a=1.0, stream=None) is None


@pytest.mark.parametrize("entry", ["__call__", "_dry_call"])
def test_errors_keep_their_types(axpy, entry):
    x = np.zeros(10, np.float32)
    call = getattr(axpy, entry)
    with pytest.raises(spindle.ArgumentError, match=r"axpy: parameter 'a' \(f32\): expected a f32 scalar, got str"):
        call(x, x.copy(), "2")
    with pytest.raises(spindle.ArgumentError, match="stream: expected an int"):
        call(x, x.copy(), 1.0, stream="s")
    with pytest.raises(spindle.ArgumentError, match="axpy: no parameter 'b'"):
        call(x, x.copy(), b=1.0)


def test_a_runtime_refusal_is_a_launch_error(axpy):
    with pytest.raises(spindle.LaunchError) as e:
        axpy(np.zeros(10, np.float32), np.zeros(11, np.float32), 1.0)
    assert type(e.value) is spindle.LaunchError and "axpy" in str(e.value)
    with pytest.raises(spindle.LaunchError) as e:
        axpy(np.zeros(10, np.float32), np.zeros(10, np.float64), 1.0)
    assert "axpy" in str(e.value)
