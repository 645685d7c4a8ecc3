# JAX arrays (docs/python.md): immutable, so they are inputs only. A real
# jax.Array on the CPU reaches the package through DLPack: as the read-only
# input x of samples/axpy.spn it launches (cpu target) and matches NumPy,
# and as the written y it is refused before anything runs. Skipped where
# JAX is not installed (CI installs no JAX; neither does the GPU machine:
# tests/python/test_read_only.py covers the same path with a hand-made
# read-only DLPack producer).
import numpy as np
import pytest

import spindle
from conftest import SAMPLES

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


@pytest.fixture
def axpy(cpu):
    return cpu.load(SAMPLES / "axpy.spn").axpy


def test_a_jax_array_is_a_read_only_input(axpy):
    rng = np.random.default_rng()
    x_host = rng.standard_normal(1000).astype(np.float32)
    x = jnp.asarray(x_host)
    y = rng.standard_normal(1000).astype(np.float32)
    want = 1.5 * x_host.astype(np.float64) + y.astype(np.float64)
    axpy(x, y, 1.5)
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(x), x_host)  # the JAX array is unchanged


def test_a_jax_array_for_a_written_parameter_is_refused(axpy):
    x = np.ones(8, np.float32)
    y = jnp.zeros(8, jnp.float32)
    refused = r"axpy: parameter 'y' \(T\[N\]\): the kernel writes this parameter, but the array is read-only \(a JAX array is immutable\)"
    with pytest.raises(spindle.ArgumentError, match=refused):
        axpy(x, y, 2.0)
    assert not np.asarray(y).any()
