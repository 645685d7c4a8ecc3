# source(), bind(), compile_for() and argument errors: nothing here launches.
import threading
import time

import numpy as np
import pytest

import spindle
from conftest import SAMPLES


def test_source_without_arrays_compiles_nothing(cpu):
    k = cpu.load(SAMPLES / "axpy.spn").axpy.specialize(dtypes={"T": "f16"})
    before = cpu.stats()["compiles"]
    src = k.source()
    assert cpu.stats()["compiles"] == before
    assert "// specialization:  N dynamic, T = f16" in src
    assert "__half" in src


def test_source_needs_every_type_and_static_value(cpu):
    mod = cpu.load(SAMPLES / "axpy.spn")
    with pytest.raises(spindle.Error, match=r"axpy: type parameter T needs a dtype \(--dtype T=TYPE\)"):
        mod.axpy.source()
    with pytest.raises(spindle.Error, match=r"softmax: static dim N needs a value"):
        cpu.load(SAMPLES / "softmax.spn").softmax.source()
    with pytest.raises(spindle.Error, match="unknown dtype 'f33'"):
        mod.axpy.specialize(dtypes={"T": "f33"})


def test_source_on_a_compile_only_gpu_runtime(hip_compile_only):
    k = hip_compile_only.load(SAMPLES / "softmax.spn").softmax.specialize(static={"N": 1024})
    src = k.source()
    assert "constexpr int64_t N = 1024;" in src
    assert "__spn_checked_offset" not in src  # GPUs build unchecked by default


def test_source_from_arrays_follows_them(cpu, rng):
    k = cpu.load(SAMPLES / "axpy.spn").axpy
    x = rng.random(1000).astype(np.float32)
    y = rng.random(1000).astype(np.float32)
    src = k.source(x, y, 2.0)
    assert "T = f32" in src
    assert "T = f16" in k.source(x.astype(np.float16), y.astype(np.float16), 2.0)
    # An unaligned view gets the general binary.
    assert "x 16-byte aligned" not in k.source(x[1:], y[1:], 2.0)


def test_bind_reports_dims_and_geometry(cpu, rng):
    k = cpu.load(SAMPLES / "softmax.spn").softmax
    x = rng.random((8, 128)).astype(np.float32)
    plan = k.bind(x, np.empty_like(x))
    assert plan["dims"] == {"M": 8, "N": 128}
    assert plan["static_dims"] == {"N": 128}
    assert plan["grid"][0] == 8


def test_runtime_messages_pass_through_unchanged(cpu):
    k = cpu.load(SAMPLES / "softmax.spn").softmax
    x = np.zeros((8, 128), np.float32)
    with pytest.raises(spindle.LaunchError) as e:
        k(x, np.zeros((8, 64), np.float32))
    assert str(e.value) == "softmax: parameter 'y' dim 1 (N): bound to 128 by 'x' dim 1 but 64 by 'y'"
    with pytest.raises(spindle.LaunchError) as e:
        k(x, np.zeros((8, 128), np.float16))
    assert str(e.value) == "softmax: parameter 'y' (f32[M, N]): dtype mismatch: expected f32, got f16"
    with pytest.raises(spindle.LaunchError) as e:
        k(x)
    assert str(e.value) == "softmax: expected 2 arguments (x: f32[M, N], y: f32[M, N]), got 1"


def test_overlap_is_refused_and_nothing_runs(cpu):
    k = cpu.load(SAMPLES / "axpy.spn").axpy
    x = np.arange(64, dtype=np.float32)
    with pytest.raises(spindle.LaunchError, match="parameters 'y' and 'x' overlap in memory"):
        k(x[:32], x[16:48], 2.0)
    np.testing.assert_array_equal(x, np.arange(64, dtype=np.float32))


def test_a_host_array_for_a_gpu_kernel(hip_compile_only):
    k = hip_compile_only.load(SAMPLES / "axpy.spn").axpy
    x = np.zeros(16, np.float32)
    with pytest.raises(spindle.ArgumentError) as e:
        k(x, x.copy(), 1.0)
    assert str(e.value) == "axpy: parameter 'x' (T[N]): a CPU array for a GPU kernel; move it to hip:0 first"
    assert isinstance(e.value, spindle.LaunchError)


SCALARS = """@grid(1)
@block(1)
kernel put(out: f64[6], a: i32, b: u8, c: f16, d: f32, e: bool, f: i64):
    if thread_id() == 0:
        out[0] = f64(a)
        out[1] = f64(b)
        out[2] = f64(c)
        out[3] = f64(d)
        out[4] = 1.0 if e else 0.0
        out[5] = f64(f)
"""


@pytest.fixture(scope="module")
def put(cpu):
    return cpu.loads(SCALARS, "put.spn").put


def test_scalars_convert_python_numbers(put):
    out = np.zeros(6)
    put(out, -7, 255, 0.5, 1.25, True, 2**40)
    np.testing.assert_array_equal(out, [-7, 255, 0.5, 1.25, 1, 2**40])
    put(out, f=3, e=False, d=2, c=1, b=0, a=2**31 - 1)  # by keyword, ints for floats
    np.testing.assert_array_equal(out, [2**31 - 1, 0, 1, 2, 0, 3])


def test_scalars_numpy_stays_strict(put):
    out = np.zeros(6)
    put(out, np.int32(4), np.uint8(5), np.float16(0.25), np.float32(3.5), np.bool_(True), np.int64(-1))
    np.testing.assert_array_equal(out, [4, 5, 0.25, 3.5, 1, -1])
    with pytest.raises(spindle.ArgumentError, match=r"put: parameter 'd' \(f32\): expected a f32 scalar, got a NumPy float64"):
        put(out, 1, 1, 1.0, np.float64(2.0), True, 1)
    with pytest.raises(spindle.ArgumentError, match=r"parameter 'a' \(i32\): expected a i32 scalar, got a NumPy int64"):
        put(out, np.int64(1), 1, 1.0, 2.0, True, 1)


@pytest.mark.parametrize(
    "args, message",
    [
        ((2**31, 1, 1.0, 1.0, True, 1), r"parameter 'a' \(i32\): 2147483648 does not fit i32"),
        ((1, -1, 1.0, 1.0, True, 1), r"parameter 'b' \(u8\): -1 does not fit u8"),
        ((1, 256, 1.0, 1.0, True, 1), r"parameter 'b' \(u8\): 256 does not fit u8"),
        ((1, 1, 1e5, 1.0, True, 1), r"parameter 'c' \(f16\): 100000 is out of the range of f16"),
        ((1, 1, 1.0, 1e39, True, 1), r"parameter 'd' \(f32\): 1e\+39 is out of the range of f32"),
        ((1.0, 1, 1.0, 1.0, True, 1), r"parameter 'a' \(i32\): expected a i32 scalar, got a Python float"),
        ((1, 1, 1.0, 1.0, 1, 1), r"parameter 'e' \(bool\): expected a bool, got a Python int"),
        ((1, True, 1.0, 1.0, True, 1), r"parameter 'b' \(u8\): expected a u8 scalar, got a Python bool"),
        ((1, 1, 1.0, "x", True, 1), r"parameter 'd' \(f32\): expected a f32 scalar, got str"),
    ],
)
def test_scalar_range_and_kind_errors_launch_nothing(put, args, message):
    out = np.full(6, -1.0)
    with pytest.raises(spindle.ArgumentError, match=message):
        put(out, *args)
    assert (out == -1).all()


def test_keyword_errors(put):
    out = np.zeros(6)
    with pytest.raises(spindle.ArgumentError, match=r"put: no parameter 'g' \(parameters: out, a, b, c, d, e, f\)"):
        put(out, 1, 1, 1.0, 1.0, True, 1, g=2)
    with pytest.raises(spindle.ArgumentError, match="put: parameter 'a' given by position and by keyword"):
        put(out, 1, 1, 1.0, 1.0, True, 1, a=2)
    with pytest.raises(spindle.ArgumentError, match=r"put: missing argument for parameter 'b' \(u8\)"):
        put(out, 1, c=1.0)


def test_specialized_values_are_checked(cpu):
    k = cpu.load(SAMPLES / "softmax.spn").softmax.specialize(static={"N": 128})
    x = np.zeros((4, 64), np.float32)
    with pytest.raises(
        spindle.ArgumentError, match=r"softmax: parameter 'x' dim 1 \(N\): the kernel was specialized for N=128, got 64"
    ):
        k(x, np.empty_like(x))
    k16 = cpu.load(SAMPLES / "axpy.spn").axpy.specialize(dtypes={"T": "f16"})
    x = np.zeros(8, np.float32)
    with pytest.raises(spindle.ArgumentError, match=r"type parameter T is specialized to f16, got f32"):
        k16(x, x.copy(), 1.0)
    with pytest.raises(spindle.Error, match=r"softmax: the caller names 'Q' static, but the kernel has no such dim symbol \(it has: M, N\)"):
        cpu.load(SAMPLES / "softmax.spn").softmax.specialize(static={"Q": 2})


def test_cache_keys_follow_the_specialization(cpu, rng):
    k = cpu.load(SAMPLES / "axpy.spn").axpy
    x = rng.random(1024).astype(np.float32)
    first = k.compile_for(x, x.copy(), 2.0)
    x4 = rng.random(4096).astype(np.float32)
    again = k.compile_for(x4, x4.copy(), 2.0)  # N is dynamic
    assert len(first["key"]) == 64
    assert again["key"] == first["key"] and again["hit"]
    f16 = k.compile_for(x.astype(np.float16), x.astype(np.float16), 2.0)
    assert f16["key"] != first["key"]
    assert first["source"] == k.source(x, x.copy(), 2.0)


def test_the_gil_is_released_while_compiling(cpu_fresh):
    k = cpu_fresh.load(SAMPLES / "row_norms.spn").row_norms
    x = np.ones((4, 64), np.float32)
    ticks = []
    done = threading.Event()

    def compile_it():
        k.compile_for(x, np.empty(4, np.float32), np.empty(4, np.float32))
        done.set()

    t = threading.Thread(target=compile_it)
    start = time.perf_counter()
    t.start()
    while not done.is_set():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    t.join()
    assert cpu_fresh.stats()["compiles"] == 1
    # The compile took a while (the host compiler runs), and this thread kept
    # running meanwhile: with the GIL held it could not have ticked.
    elapsed = time.perf_counter() - start
    assert elapsed > 0.05
    assert len(ticks) > 0.3 * elapsed / 0.002


@pytest.fixture
def cpu_fresh(tmp_path):
    return spindle.Runtime(backend="cpu", cache_dir=str(tmp_path))


@pytest.mark.parametrize(
    "sample, flags, static, dtypes",
    [
        ("axpy", ["--dtype", "T=f32"], {}, {"T": "f32"}),
        ("axpy", ["--dtype", "T=bf16"], {}, {"T": "bf16"}),
        ("softmax", ["--static", "N=1024"], {"N": 1024}, {}),
    ],
)
def test_keys_are_the_cli_keys(cuda_compile_only, tmp_path, sample, flags, static, dtypes):
    # The same specialization from Python and from the C++ CLI (`spindle
    # compile`, whose path ctest passes) is the same disk-cache key: the
    # same binary.
    import os
    import re
    import subprocess

    cli = os.environ.get("SPINDLE_CLI")
    if not cli:
        pytest.skip("SPINDLE_CLI not set (ctest sets it)")
    path = str(SAMPLES / f"{sample}.spn")
    out = subprocess.run(
        [cli, "compile", path, "--kernel", sample, *flags, "--target", "sm_90"],
        env={**os.environ, "SPINDLE_CACHE_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    cli_key = re.search(r"^key: ([0-9a-f]{64})$", out, re.M)[1]
    k = getattr(cuda_compile_only.load(path), sample).specialize(static=static, dtypes=dtypes)
    report = k.compile()
    assert report["key"] == cli_key
    assert report["target"] == "sm_90" and report["binary_bytes"] > 0
    assert report["source"] == k.source()


class Interface:
    """An array known only by an array interface (no DLPack, no buffer)."""

    def __init__(self, name, **iface):
        setattr(self, name, {"version": 3, "strides": None, **iface})


def test_array_interface_on_the_cpu_target(cpu, rng):
    x = rng.standard_normal(300).astype(np.float32)
    y = rng.standard_normal(300).astype(np.float32)
    want = np.float32(0.5) * x + y

    def wrap(a):
        return Interface("__array_interface__", **a.__array_interface__)

    cpu.load(SAMPLES / "axpy.spn").axpy(wrap(x), wrap(y), 0.5)
    np.testing.assert_array_equal(y, want)
    base = rng.standard_normal((20, 30)).astype(np.float32)
    out = np.empty((30, 20), np.float32)
    cpu.load(SAMPLES / "scale_strided.spn").scale_strided(wrap(base.T), wrap(out), 2.0)  # byte strides
    np.testing.assert_array_equal(out, 2 * base.T)
    with pytest.raises(spindle.ArgumentError, match=r"parameter 'x' \(T\[N\]\): a GPU array for the cpu target"):
        cuda = Interface("__cuda_array_interface__", shape=(300,), typestr="<f4", data=(1 << 24, False))
        cpu.load(SAMPLES / "axpy.spn").axpy(cuda, wrap(y), 1.0)
    with pytest.raises(spindle.ArgumentError, match=r"parameter 'x' \(T\[N\]\): unsupported array typestr '>f4'"):
        cpu.load(SAMPLES / "axpy.spn").axpy(Interface("__array_interface__", shape=(4,), typestr=">f4", data=(1 << 24, False)), wrap(y), 1.0)


def test_cuda_array_interface_compiles_without_a_gpu(cuda_compile_only):
    # Pointers are checked (alignment, overlap), never read: no device needed.
    def cuda(addr, n=4096):
        return Interface("__cuda_array_interface__", shape=(n,), typestr="<f2", data=(addr, False))

    k = cuda_compile_only.load(SAMPLES / "axpy.spn").axpy
    report = k.compile_for(cuda(1 << 24), cuda(1 << 25), 1.0)
    assert "T = f16, x 16-byte aligned, y 16-byte aligned" in report["source"]
    # N is dynamic: another N with the same facts (a multiple of 16, and of
    # the grid's tile of 1024 elements: exact grid) has the same key; one
    # that is not a whole number of tiles has its own.
    assert k.compile_for(cuda(1 << 26, 8192), cuda(1 << 27, 8192), 3.0)["key"] == report["key"]
    assert k.compile_for(cuda(1 << 26, 4000), cuda(1 << 27, 4000), 3.0)["key"] != report["key"]
    with pytest.raises(spindle.LaunchError, match="overlap in memory"):
        k.compile_for(cuda(1 << 24), cuda((1 << 24) + 64), 1.0)
