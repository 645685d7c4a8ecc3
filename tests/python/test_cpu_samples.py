# The samples launched from Python on the cpu target, by value, against
# NumPy references computed in float64 on random inputs. Tolerances: a few
# f32 ulps per operation, as tests/cpu_golden.
import numpy as np
import pytest

from conftest import SAMPLES


def load(cpu, name):
    return getattr(cpu.load(SAMPLES / f"{name}.spn"), name)


def close(got, want, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("n", [1, 1000, 4099])
def test_axpy_f32(cpu, rng, n):
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    want = 1.5 * x.astype(np.float64) + y
    load(cpu, "axpy")(x, y, 1.5)
    close(y, want)


def test_axpy_f16_by_keyword(cpu, rng):
    x = rng.standard_normal(777).astype(np.float16)
    y = rng.standard_normal(777).astype(np.float16)
    want = (np.float32(-0.25) * x.astype(np.float32) + y.astype(np.float32)).astype(np.float16)
    load(cpu, "axpy")(y=y, x=x, a=-0.25)
    np.testing.assert_array_equal(y, want)  # f32 math, one rounding on the store


@pytest.mark.parametrize("shape", [(3, 128), (5, 1000)])
def test_softmax(cpu, rng, shape):
    x = (4 * rng.standard_normal(shape)).astype(np.float32)
    y = np.empty_like(x)
    load(cpu, "softmax")(x, y)
    e = np.exp(x - x.max(axis=1, keepdims=True).astype(np.float64))
    close(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_transpose(cpu, rng):
    x = rng.standard_normal((67, 45)).astype(np.float32)
    y = np.empty((45, 67), np.float32)
    load(cpu, "transpose")(x, y)
    np.testing.assert_array_equal(y, x.T)


def test_scale_strided_takes_views_without_copies(cpu, rng):
    base = rng.standard_normal((40, 100)).astype(np.float32)
    k = load(cpu, "scale_strided")
    for view in (base, base.T, base[::3, 1::2]):
        y = np.empty(view.shape, np.float32)
        k(view, y, 0.75)
        close(y, 0.75 * view.astype(np.float64))


def test_row_norms(cpu, rng):
    x = rng.standard_normal((37, 300)).astype(np.float32)
    amax = np.empty(37, np.float32)
    l2 = np.empty(37, np.float32)
    load(cpu, "row_norms")(x, amax, l2)
    np.testing.assert_array_equal(amax, np.abs(x).max(axis=1))
    close(l2, np.sqrt((x.astype(np.float64) ** 2).sum(axis=1)))


def test_layernorm(cpu, rng):
    x = rng.standard_normal((6, 512)).astype(np.float32)
    w = rng.standard_normal(512).astype(np.float32)
    b = rng.standard_normal(512).astype(np.float32)
    y = np.empty_like(x)
    load(cpu, "layernorm")(x, w, b, y)
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=1, keepdims=True)
    close(y, (x64 - mean) / np.sqrt(var + 1e-5) * w + b, rtol=1e-4, atol=1e-5)


def test_bias_gelu(cpu, rng):
    x = rng.standard_normal((9, 300)).astype(np.float32)
    bias = rng.standard_normal(300).astype(np.float32)
    y = np.empty_like(x)
    rowsum = np.empty(9, np.float32)
    load(cpu, "bias_gelu")(x, bias, y, rowsum)
    v = x.astype(np.float64) + bias
    g = 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v**3)))
    close(y, g, rtol=1e-5, atol=1e-6)
    close(rowsum, g.sum(axis=1), rtol=1e-4, atol=1e-4)


def test_matmul(cpu, rng):
    a = rng.standard_normal((70, 48)).astype(np.float32)
    b = rng.standard_normal((48, 130)).astype(np.float32)
    c = np.empty((70, 130), np.float32)
    load(cpu, "matmul")(a, b, c)
    close(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
