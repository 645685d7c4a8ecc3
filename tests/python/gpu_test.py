# The Python package on an NVIDIA GPU with PyTorch: every launch path
# (positional, keyword, stream=, torch's current stream, strided views, CuPy
# if installed), against torch references, and the errors that must launch
# nothing. Skipped where there is no torch or no CUDA device (CI); run on a
# GPU machine with the package installed (docs/python.md):
#
#   python -m pytest -q tests/python/gpu_test.py
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


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="one GPU")
def test_a_tensor_on_another_gpu_is_refused(gpu, gen):
    x = torch.zeros(16, device="cuda:1")
    with pytest.raises(spindle.ArgumentError, match=r"an array on cuda:1, but the kernel's runtime launches on cuda:0"):
        kernel(gpu, "axpy")(x, x.clone(), 1.0)


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
