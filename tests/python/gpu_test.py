# The Python package on an NVIDIA GPU with PyTorch: every launch path
# (positional, keyword, stream=, torch's current stream, strided views, CuPy
# if installed), against torch references, and the errors that must launch
# nothing. Skipped where there is no torch or no CUDA device (CI); run on a
# GPU machine with the package installed (docs/python.md):
#
#   python -m pytest -q tests/python/gpu_test.py
import ctypes

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import spindle  # noqa: E402
from conftest import SAMPLES  # noqa: E402

DEV = "cuda:0"


@pytest.fixture(scope="module")
def gpu(tmp_path_factory):
    rt = spindle.Runtime(backend="cuda", cache_dir=str(tmp_path_factory.mktemp("cache")))
    assert rt.has_device, rt.device_status
    return rt


@pytest.fixture
def gen():
    return torch.Generator(device=DEV).manual_seed(1234)


def randn(*shape, gen, dtype=torch.float32):
    return torch.randn(*shape, generator=gen, device=DEV, dtype=dtype)


def kernel(rt, name):
    return getattr(rt.load(SAMPLES / f"{name}.spn"), name)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("n", [1, 1000, 1 << 20])
def test_axpy(gpu, gen, dtype, n):
    x, y = randn(n, gen=gen, dtype=dtype), randn(n, gen=gen, dtype=dtype)
    want = (2.5 * x.float() + y.float()).to(dtype)
    kernel(gpu, "axpy")(x, y, 2.5)
    torch.cuda.synchronize()
    # f32 math, one rounding on the store; nvrtc may fuse the multiply-add,
    # which moves a value next to a rounding tie by one ulp of the dtype.
    tol = {torch.float32: 1e-6, torch.float16: 1e-3, torch.bfloat16: 8e-3}[dtype]
    torch.testing.assert_close(y, want, rtol=tol, atol=tol)


def test_softmax_layernorm_transpose_matmul(gpu, gen):
    x = randn(64, 1000, gen=gen)
    y = torch.empty_like(x)
    kernel(gpu, "softmax")(x, y)
    torch.testing.assert_close(y, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)
    w, b = randn(1000, gen=gen), randn(1000, gen=gen)
    kernel(gpu, "layernorm")(x, w, b, y)
    torch.testing.assert_close(y, torch.nn.functional.layer_norm(x, (1000,), w, b, eps=1e-5), rtol=1e-4, atol=1e-4)
    t = torch.empty(1000, 64, device=DEV)
    kernel(gpu, "transpose")(x, t)
    torch.testing.assert_close(t, x.t(), rtol=0, atol=0)
    a, bm = randn(300, 256, gen=gen), randn(256, 200, gen=gen)
    c = torch.empty(300, 200, device=DEV)
    kernel(gpu, "matmul")(a, bm, c)
    torch.testing.assert_close(c, a @ bm, rtol=1e-3, atol=1e-3)


def test_strided_views_are_not_copied(gpu, gen):
    base = randn(512, 768, gen=gen)
    k = kernel(gpu, "scale_strided")
    for view in (base, base.t(), base[:, ::2], base[1:, 3:]):
        y = torch.empty(view.shape, device=DEV)
        k(view, y, 0.5)
        torch.testing.assert_close(y, 0.5 * view, rtol=0, atol=0)


def test_keywords_streams_and_the_current_stream(gpu, gen):
    x, y = randn(4096, gen=gen), randn(4096, gen=gen)
    want = 3 * x + y
    s = torch.cuda.Stream()
    k = kernel(gpu, "axpy")
    s.wait_stream(torch.cuda.current_stream())
    k(a=1.0, y=y, x=x, stream=s)  # on s
    with torch.cuda.stream(s):
        k(x, y, 2.0)  # torch's current stream: s again
    s.synchronize()
    torch.testing.assert_close(y, want)
    k(x, y, 1.0, stream=torch.cuda.current_stream().cuda_stream)  # a raw handle
    torch.cuda.synchronize()
    torch.testing.assert_close(y, want + x)


def test_errors_launch_nothing(gpu, gen):
    k = kernel(gpu, "axpy")
    x = randn(256, gen=gen)
    y = torch.zeros(256, device=DEV)
    with pytest.raises(spindle.ArgumentError, match="a CPU array for a GPU kernel; move it to cuda:0 first"):
        k(x, torch.zeros(256), 1.0)
    with pytest.raises(spindle.LaunchError, match="type parameter T bound to f32 by 'x' but f16 by 'y'"):
        k(x, y.half(), 1.0)
    with pytest.raises(spindle.LaunchError, match="overlap in memory"):
        k(x[:128], x[64:192], 1.0)
    with pytest.raises(spindle.ArgumentError, match="expected a f32 scalar, got str"):
        k(x, y, "2")
    torch.cuda.synchronize()
    assert (y == 0).all()


def test_cache_hits_and_source(gpu, gen):
    k = kernel(gpu, "softmax")
    x = randn(8, 512, gen=gen)
    y = torch.empty_like(x)
    report = k.compile_for(x, y)
    before = gpu.stats()["memory_hits"]
    k(x, y)
    assert gpu.stats()["memory_hits"] == before + 1
    assert k.compile_for(x, y)["key"] == report["key"]
    assert "constexpr int32_t N = 512;" in k.source(x, y)  # the launch fits 32-bit indices
    assert report["source"] == k.source(x, y)


def test_cupy_arrays(gpu):
    cp = pytest.importorskip("cupy")
    x = cp.arange(1000, dtype=cp.float32)
    y = cp.ones(1000, dtype=cp.float32)
    kernel(gpu, "axpy")(x, y, 2.0, stream=cp.cuda.get_current_stream())
    cp.cuda.get_current_stream().synchronize()
    assert cp.allclose(y, 2 * cp.arange(1000, dtype=cp.float32) + 1)


# --- torch.library custom ops and torch.compile (spindle.torch) -------------


@pytest.fixture(scope="module")
def softmax_op(gpu):
    import spindle.torch

    return spindle.torch.custom_op(kernel(gpu, "softmax"), "spindle_gpu_test::softmax")


def softmax_twice_plus_one(op):
    def f(x):
        y = torch.empty_like(x)
        op(x, y)
        return y * 2.0 + 1.0

    return f


def test_custom_op_eager_and_opcheck(gpu, gen, softmax_op):
    x = randn(64, 1000, gen=gen)
    y = torch.empty_like(x)
    softmax_op(x, y)
    torch.testing.assert_close(y, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)
    torch.library.opcheck(softmax_op, (x, torch.empty_like(x)))


@pytest.mark.parametrize(
    "backend, mode", [("aot_eager", None), ("inductor", "default"), ("inductor", "reduce-overhead")]
)
def test_custom_op_under_torch_compile(gpu, gen, softmax_op, backend, mode):
    # fullgraph=True: a graph break is an error. reduce-overhead replays the
    # graph with CUDA graphs, so the launch is captured (a cache hit by then).
    if backend == "inductor":
        pytest.importorskip("triton")  # inductor's CUDA code generator
    torch._dynamo.reset()
    f = softmax_twice_plus_one(softmax_op)
    compiled = torch.compile(f, fullgraph=True, backend=backend, mode=mode)
    for _ in range(3):
        x = randn(64, 1000, gen=gen)
        torch.testing.assert_close(compiled(x), torch.softmax(x, dim=1) * 2.0 + 1.0, rtol=1e-5, atol=1e-5)


# --- CUDA graph capture --------------------------------------------------------


def test_cuda_graph_capture_and_replay(gpu, gen):
    k = kernel(gpu, "axpy")
    x, y = randn(1 << 16, gen=gen), randn(1 << 16, gen=gen)
    k(x, torch.empty_like(y), 2.0)  # warm: compiled and loaded by a launch
    y0 = y.clone()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        k(x, y, 2.0)
    torch.cuda.synchronize()
    assert torch.equal(y, y0)  # captured, not run
    for times in (1, 2):
        g.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(y, y0 + times * 2.0 * x, rtol=1e-5, atol=1e-5)


def test_compile_for_warms_a_launch_for_capture(gpu, gen):
    k = kernel(gpu, "softmax")
    x = randn(16, 640, gen=gen)
    y = torch.empty_like(x)
    k.compile_for(x, y)  # no launch: compiled and loaded
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        k(x, y)
    g.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(y, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)


def test_a_miss_during_capture_is_a_launch_error(gpu, gen):
    k = kernel(gpu, "softmax")
    x = randn(3, 777, gen=gen)  # a shape nothing launched yet (N is static)
    y = torch.empty_like(x)
    before = gpu.stats()
    g = torch.cuda.CUDAGraph()
    with pytest.raises(spindle.LaunchError) as e:
        with torch.cuda.graph(g):
            k(x, y)
    message = str(e.value)
    assert message.startswith("softmax: cannot launch during CUDA graph capture: specialization [")
    assert "--static N=777" in message and "before capturing" in message
    after = gpu.stats()
    assert (after["misses"], after["compiles"]) == (before["misses"], before["compiles"])  # nothing compiled
    # Outside capture the same launch compiles and runs.
    k(x, y)
    torch.cuda.synchronize()
    torch.testing.assert_close(y, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)


# --- several GPUs (docs/python.md, "Several GPUs") --------------------------------
# One runtime launches on whichever device its tensors live on. Skipped
# unless the machine has two; run on one with two:
#   python -m pytest -q tests/python/gpu_test.py -k several_gpus

several_gpus = pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")


def current_context():
    """The driver's current context of this thread (cuCtxGetCurrent)."""
    libcuda = ctypes.CDLL("libcuda.so.1")
    ctx = ctypes.c_void_p()
    assert libcuda.cuCtxGetCurrent(ctypes.byref(ctx)) == 0
    return ctx.value


@pytest.fixture
def fresh(tmp_path):
    """A runtime of its own (its stats start at zero), home device cuda:0."""
    rt = spindle.Runtime(backend="cuda", cache_dir=str(tmp_path / "cache"))
    assert rt.has_device and rt.device == 0, rt.device_status
    return rt


@several_gpus
def test_several_gpus_a_launch_on_cuda1_runs_there(fresh):
    g1 = torch.Generator(device="cuda:1").manual_seed(7)
    x = torch.randn(64, 640, generator=g1, device="cuda:1")
    y = torch.empty_like(x)
    kernel(fresh, "softmax")(x, y)
    torch.cuda.synchronize("cuda:1")
    torch.testing.assert_close(y, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)
    a, b = torch.randn(4096, generator=g1, device="cuda:1"), torch.randn(4096, generator=g1, device="cuda:1")
    want = 2.5 * a + b
    kernel(fresh, "axpy")(a, b, 2.5)
    torch.cuda.synchronize("cuda:1")
    torch.testing.assert_close(b, want, rtol=1e-6, atol=1e-6)


@several_gpus
def test_several_gpus_one_binary_compiled_once_loaded_on_each_device(fresh):
    k = kernel(fresh, "axpy")
    x0 = torch.randn(1 << 16, device="cuda:0")
    y0 = torch.randn(1 << 16, device="cuda:0")
    x1, y1 = x0.to("cuda:1"), y0.to("cuda:1")
    want = 2.0 * x0 + y0
    key0 = k.compile_for(x0, y0, 2.0)["key"]
    k(x0, y0, 2.0)
    before = fresh.stats()
    k(x1, y1, 2.0)  # the first launch on cuda:1: loads the binary there
    k(x1, y1, 0.0)
    after = fresh.stats()
    assert after["compiles"] == before["compiles"] == 1
    assert after["misses"] == before["misses"] == 1
    assert after["memory_hits"] == before["memory_hits"] + 2
    assert k.compile_for(x1, y1, 2.0)["key"] == key0  # one cache key for both devices (one architecture)
    torch.cuda.synchronize("cuda:0")
    torch.cuda.synchronize("cuda:1")
    torch.testing.assert_close(y0, want, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(y1.to("cuda:0"), want, rtol=1e-6, atol=1e-6)


@several_gpus
def test_several_gpus_per_device_shared_memory_and_occupancy(fresh):
    # histogram: B * 4 bytes of dynamic shared memory (64 KiB here, past the
    # 48 KiB a kernel must opt in to, per device's function) and a grid of
    # resident_blocks() blocks (the device's occupancy).
    B = 16384
    k = kernel(fresh, "histogram")
    for dev in ("cuda:1", "cuda:0", "cuda:1"):
        x = torch.rand(1 << 20, device=dev)
        h = torch.zeros(B, dtype=torch.int32, device=dev)
        k(x, h, 0.0, 1.0)
        want = torch.bincount((x * B).to(torch.int64).clamp(max=B - 1), minlength=B).to(torch.int32)
        torch.cuda.synchronize(dev)
        assert torch.equal(h, want), dev


@several_gpus
def test_several_gpus_mixed_devices_are_refused_and_launch_nothing(fresh):
    k = kernel(fresh, "axpy")
    x0 = torch.ones(256, device="cuda:0")
    y1 = torch.zeros(256, device="cuda:1")
    refusal = r"axpy: tensor arguments on different devices \(device 0: x; device 1: y\)"
    with pytest.raises(spindle.LaunchError, match=refusal):
        k(x0, y1, 1.0)
    s1 = torch.cuda.Stream(device="cuda:1")
    y0 = torch.zeros(256, device="cuda:0")
    with pytest.raises(spindle.LaunchError, match=r"belongs to device 1, but the tensors are on device 0"):
        k(x0, y0, 1.0, stream=s1)
    torch.cuda.synchronize("cuda:0")
    torch.cuda.synchronize("cuda:1")
    assert (y1 == 0).all() and (y0 == 0).all()
    assert fresh.stats()["compiles"] == 0  # refused before anything was compiled


@several_gpus
def test_several_gpus_the_callers_device_and_context_are_unchanged(fresh):
    k = kernel(fresh, "axpy")
    x0, y0 = torch.ones(1024, device="cuda:0"), torch.zeros(1024, device="cuda:0")
    x1, y1 = torch.ones(1024, device="cuda:1"), torch.zeros(1024, device="cuda:1")
    for home, other in ((0, (x1, y1)), (1, (x0, y0))):
        with torch.cuda.device(home):
            torch.zeros(1, device=f"cuda:{home}")  # torch's context of `home` is current
            ctx = current_context()
            k(*other, 1.0)  # a launch on the other device
            assert torch.cuda.current_device() == home
            assert current_context() == ctx
            k(*((x0, y0) if home == 0 else (x1, y1)), 1.0)  # and one on this device
            assert torch.cuda.current_device() == home
            assert current_context() == ctx
    torch.cuda.synchronize("cuda:0")
    torch.cuda.synchronize("cuda:1")
    assert (y0 == 2).all() and (y1 == 2).all()


@several_gpus
def test_several_gpus_torchs_current_stream_of_the_tensors_device(fresh):
    k = kernel(fresh, "axpy")
    x1, y1 = torch.ones(1 << 20, device="cuda:1"), torch.zeros(1 << 20, device="cuda:1")
    s0, s1 = torch.cuda.Stream(device="cuda:0"), torch.cuda.Stream(device="cuda:1")
    s1.wait_stream(torch.cuda.current_stream("cuda:1"))
    with torch.cuda.stream(s1), torch.cuda.stream(s0):
        # cuda:0 is the current device, s0 its current stream, s1 cuda:1's:
        # the launch takes s1 (s0 would be refused as another device's).
        assert torch.cuda.current_device() == 0
        k(x1, y1, 3.0)
    s1.synchronize()
    assert (y1 == 3).all()


@several_gpus
def test_several_gpus_tuning_on_cuda1_uses_its_memory(tmp_path, monkeypatch):
    monkeypatch.setenv("SPINDLE_TUNE", "blocking")
    rt = spindle.Runtime(backend="cuda", cache_dir=str(tmp_path / "cache"))
    g1 = torch.Generator(device="cuda:1").manual_seed(3)
    x = torch.randn(256, 1024, generator=g1, device="cuda:1")
    y = torch.full_like(x, 7.0)
    kernel(rt, "softmax")(x, y)  # tuned first (scratch copies of y on cuda:1), then launched
    torch.cuda.synchronize("cuda:1")
    assert rt.stats()["tunings"] == 1
    torch.testing.assert_close(y, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)


@several_gpus
def test_several_gpus_a_runtime_of_cuda1_launches_on_cuda0_tensors(tmp_path):
    rt1 = spindle.Runtime(backend="cuda", device=1, cache_dir=str(tmp_path / "cache"))
    x0, y0 = torch.ones(512, device="cuda:0"), torch.zeros(512, device="cuda:0")
    kernel(rt1, "axpy")(x0, y0, 4.0)
    torch.cuda.synchronize("cuda:0")
    assert (y0 == 4).all()


class CudaArrayInterface:
    """Only __cuda_array_interface__ (no DLPack): the array's device is unknown to Python."""

    def __init__(self, t):
        self.__cuda_array_interface__ = t.__cuda_array_interface__
        self.keep = t


@several_gpus
def test_several_gpus_array_interface_device_from_the_driver(fresh):
    # The interface does not say the device: the runtime asks the driver
    # where the pointer lives (cuPointerGetAttribute).
    k = kernel(fresh, "axpy")
    x1, y1 = torch.ones(4096, device="cuda:1"), torch.zeros(4096, device="cuda:1")
    k(CudaArrayInterface(x1), CudaArrayInterface(y1), 5.0, stream=torch.cuda.current_stream("cuda:1"))
    torch.cuda.synchronize("cuda:1")
    assert (y1 == 5).all()
    y0 = torch.zeros(4096, device="cuda:0")
    with pytest.raises(spindle.LaunchError, match=r"\(device 1: x; device 0: y\)"):
        k(CudaArrayInterface(x1), CudaArrayInterface(y0), 1.0)
    torch.cuda.synchronize("cuda:0")
    assert (y0 == 0).all()
