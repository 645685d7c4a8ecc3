# Read-only arrays (a JAX array, a NumPy array with flags.writeable False)
# for a parameter the kernel writes: a launch refuses them before anything
# runs, through each way an array arrives (DLPack's read-only flag, a buffer
# that is not writable, an array interface's data[1]). samples/axpy.spn
# writes y and only reads x. On the cpu target.
import array
import ctypes

import numpy as np
import pytest

import spindle
from conftest import SAMPLES

REFUSED = r"axpy: parameter 'y' \(T\[N\]\): the kernel writes this parameter, but the array is read-only \({}\)"


@pytest.fixture
def axpy(cpu):
    return cpu.load(SAMPLES / "axpy.spn").axpy


def read_only(a):
    a = a.copy()
    a.flags.writeable = False
    return a


class DLPackOnly:
    """An array that speaks DLPack and nothing else (no buffer protocol), as
    JAX arrays reach the package: versioned capsules carry the read-only flag."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, **kwargs):
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):  # dlpack.h
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device_type", ctypes.c_int32),
        ("device_id", ctypes.c_int32),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("major", ctypes.c_uint32),
        ("minor", ctypes.c_uint32),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),  # null: the producer object owns everything
        ("flags", ctypes.c_uint64),
        ("dl_tensor", _DLTensor),
    ]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_VERSIONED = b"dltensor_versioned"  # the capsule keeps a pointer to its name


class VersionedProducer:
    """A DLPack 1.0 producer made by hand, as JAX exports: only versioned
    capsules (an unversioned request is a BufferError, since it could not
    carry the flag), DLPACK_FLAG_BITMASK_READ_ONLY (1) when read-only."""

    def __init__(self, a, readonly):
        self._a = a
        self._shape = (ctypes.c_int64 * 1)(a.size)
        m = self._m = _DLManagedTensorVersioned(1, 0, None, None, 1 if readonly else 0)
        m.dl_tensor = _DLTensor(a.ctypes.data, 1, 0, 1, _DLDataType(2, 32, 1), self._shape, None, 0)  # f32, CPU

    def __dlpack__(self, stream=None, max_version=None, **kwargs):
        if max_version is None or max_version[0] < 1:
            raise BufferError("only versioned DLPack capsules")
        return _capsule_new(ctypes.addressof(self._m), _VERSIONED, None)

    def __dlpack_device__(self):
        return (1, 0)


class Interface:
    """An array with only __array_interface__ or __cuda_array_interface__."""

    def __init__(self, a, name, readonly):
        self._a = a  # keeps the memory alive
        d = dict(a.__array_interface__)
        d["data"] = (a.ctypes.data, readonly)
        if name == "__cuda_array_interface__":
            d["version"] = 3
        setattr(self, name, d)


@pytest.mark.parametrize("entry", ["__call__", "_dry_call"])
def test_read_only_numpy_array_for_a_written_parameter_is_refused(axpy, rng, entry):
    x = rng.random(100).astype(np.float32)
    y = read_only(rng.random(100).astype(np.float32))
    before = y.copy()
    with pytest.raises(spindle.ArgumentError, match=REFUSED.format("its DLPack export is flagged read-only")):
        getattr(axpy, entry)(x, y, 2.0)
    with pytest.raises(spindle.ArgumentError, match="the array is read-only"):
        getattr(axpy, entry)(x=x, a=2.0, y=y)
    np.testing.assert_array_equal(y, before)


def test_read_only_array_for_a_read_parameter_launches(axpy, rng):
    x = read_only(rng.random(100).astype(np.float32))
    y = rng.random(100).astype(np.float32)
    want = 2.0 * x + y
    axpy(x, y, 2.0)
    np.testing.assert_allclose(y, want, rtol=1e-6)
    # A read-only view of a writable array is read-only too.
    v = y.view()
    v.flags.writeable = False
    with pytest.raises(spindle.ArgumentError, match="the array is read-only"):
        axpy(x, v, 2.0)


def test_calls_that_write_nothing_accept_read_only_arrays(axpy, rng):
    x = rng.random(64).astype(np.float32)
    y = read_only(x)
    assert axpy.bind(x, y, 2.0)["dims"] == {"N": 64}
    assert "T = f32" in axpy.source(x, y, 2.0)


def test_dlpack_read_only_flag(axpy, rng):
    x = rng.random(50).astype(np.float32)
    with pytest.raises(spindle.ArgumentError, match=REFUSED.format("its DLPack export is flagged read-only")):
        axpy(x, DLPackOnly(read_only(x)), 2.0)
    y = rng.random(50).astype(np.float32)
    want = 2.0 * x + y
    axpy(DLPackOnly(read_only(x)), DLPackOnly(y), 2.0)
    np.testing.assert_allclose(y, want, rtol=1e-6)


def test_hand_made_versioned_dlpack_producer(axpy, rng):
    x = rng.random(20).astype(np.float32)
    y = rng.random(20).astype(np.float32)
    before = y.copy()
    with pytest.raises(spindle.ArgumentError, match=REFUSED.format("its DLPack export is flagged read-only")):
        axpy(x, VersionedProducer(y, readonly=True), 2.0)
    np.testing.assert_array_equal(y, before)
    axpy(VersionedProducer(x, readonly=True), VersionedProducer(y, readonly=False), 2.0)
    np.testing.assert_allclose(y, 2.0 * x + before, rtol=1e-6)


def test_buffer_that_is_not_writable(axpy, rng):
    x = rng.random(40).astype(np.float32)
    frozen = memoryview(x.tobytes()).cast("f")  # bytes: a read-only buffer
    with pytest.raises(spindle.ArgumentError, match=REFUSED.format("its buffer is not writable")):
        axpy(x, frozen, 2.0)
    y = array.array("f", rng.random(40).astype(np.float32).tobytes())  # a writable buffer, no DLPack
    want = 2.0 * x + np.frombuffer(y, np.float32)
    axpy(frozen, y, 2.0)
    np.testing.assert_allclose(np.frombuffer(y, np.float32), want, rtol=1e-6)


def test_array_interface_read_only_flag(axpy, rng):
    x = rng.random(30).astype(np.float32)
    y = rng.random(30).astype(np.float32)
    with pytest.raises(
        spindle.ArgumentError,
        match=REFUSED.format(r"its __array_interface__ says read-only: data\[1\] is True"),
    ):
        axpy(x, Interface(y, "__array_interface__", True), 2.0)
    want = 2.0 * x + y
    axpy(Interface(x, "__array_interface__", True), Interface(y, "__array_interface__", False), 2.0)
    np.testing.assert_allclose(y, want, rtol=1e-6)


def test_cuda_array_interface_read_only_flag(axpy):
    # Refused as read-only before its device is looked at: the same message on
    # any target. A writable one reaches the device check (a GPU array for the
    # cpu target).
    y = np.zeros(30, np.float32)
    with pytest.raises(
        spindle.ArgumentError,
        match=REFUSED.format(r"its __cuda_array_interface__ says read-only: data\[1\] is True"),
    ):
        axpy(np.zeros(30, np.float32), Interface(y, "__cuda_array_interface__", True), 2.0)
    with pytest.raises(spindle.ArgumentError, match="a GPU array for the cpu target"):
        axpy(np.zeros(30, np.float32), Interface(y, "__cuda_array_interface__", False), 2.0)
