# pytest fixtures for the Python package (docs/python.md). The package is
# whatever `import spindle` finds: an installed wheel, or build/python when
# ctest runs these (tests/python/CMakeLists.txt sets PYTHONPATH).
import os
import pathlib

import numpy as np
import pytest

import spindle

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("spindle-cache"))


@pytest.fixture(scope="session")
def cpu(cache_dir):
    """The cpu target: kernels run on the host, on NumPy arrays."""
    try:
        return spindle.Runtime(backend="cpu", cache_dir=cache_dir)
    except spindle.Error as e:
        # Only where asked (bench/python_gpu.sh: a GPU machine's build may
        # lack Boost.Context); elsewhere a missing cpu target is a failure.
        if os.environ.get("SPINDLE_TESTS_WITHOUT_CPU_TARGET") == "1" and "no cpu target" in str(e):
            pytest.skip(f"no cpu target in this build: {e}")
        raise


@pytest.fixture(scope="session")
def hip_compile_only(cache_dir):
    """A GPU runtime with no GPU (hiprtc for gfx90a): compile-only."""
    try:
        rt = spindle.Runtime(backend="hip", target="gfx90a", cache_dir=cache_dir)
    except spindle.Error as e:
        pytest.skip(f"no hiprtc: {e}")
    if rt.has_device:
        pytest.skip("a real AMD GPU is present")
    return rt


@pytest.fixture
def rng():
    return np.random.default_rng(int(os.environ.get("SPINDLE_TEST_SEED", "1234")))


@pytest.fixture(scope="session")
def cuda_compile_only(cache_dir):
    """nvrtc for sm_90 with no GPU: compile-only (skipped without nvrtc)."""
    rt = spindle.Runtime(backend="cuda", target="sm_90", cache_dir=cache_dir)
    try:
        rt.load(SAMPLES / "axpy.spn").axpy.specialize(dtypes={"T": "f32"}).compile()
    except spindle.Error as e:
        pytest.skip(f"no nvrtc: {e}")
    return rt
