# Loading modules, kernel objects, diagnostics: no GPU, no compiler.
import os
import pathlib

import pytest

import spindle
from conftest import SAMPLES


def test_load_file_and_kernels(cpu):
    mod = cpu.load(SAMPLES / "axpy.spn")
    assert mod.kernel_names() == ["axpy"]
    k = mod.axpy
    assert k is mod.axpy  # one handle per kernel
    assert k.name == "axpy"
    assert k.type_params == ["T"]
    assert [(p["name"], p["kind"], p["type"], p["writes"]) for p in k.params] == [
        ("x", "tensor", "T[N]", False),
        ("y", "tensor", "T[N]", True),
        ("a", "scalar", "f32", False),
    ]
    assert repr(k) == "<spindle kernel axpy[T](x: T[N], y: T[N], a: f32)>"
    assert "axpy" in dir(mod)


def test_warp_size_is_the_targets(cpu, cache_dir):
    assert cpu.warp_size == 32
    wide = spindle.Runtime(backend="cpu", target="cpu:warp64", cache_dir=cache_dir)
    assert (wide.target, wide.warp_size) == ("cpu:warp64", 64)


def test_missing_kernel_names_the_others(cpu):
    mod = cpu.load(SAMPLES / "softmax.spn")
    with pytest.raises(AttributeError, match=r"has no kernel 'softmx' \(it has: softmax\)"):
        mod.softmx


def test_unreadable_file_is_an_error_not_a_compile_error(cpu, tmp_path):
    with pytest.raises(spindle.Error) as e:
        cpu.load(tmp_path / "nope.spn")
    assert not isinstance(e.value, spindle.CompileError)
    assert "cannot load module" in str(e.value)


BAD = """@grid(1)
@block(32)
kernel k(x: f32[N]):
    x[0] = zz
    x[1] = float(2)
"""


def test_compile_error_carries_structured_diagnostics(cpu):
    with pytest.raises(spindle.CompileError) as e:
        cpu.loads(BAD, "bad.spn")
    text = str(e.value)
    assert text.startswith("spindle: module 'bad.spn' has errors:\n")
    diags = e.value.diagnostics
    assert [(d.file, d.line, d.column, d.severity) for d in diags] == [
        ("bad.spn", 4, 12, "error"),
        ("bad.spn", 5, 12, "error"),
    ]
    assert diags[0].message == "use of undefined name 'zz'"
    assert diags[0].code == "sema-unknown-name"
    # Each rendered diagnostic is a line of the message, as the CLI prints it.
    for d in diags:
        assert str(d) in text.splitlines()
    assert isinstance(e.value, spindle.Error)


def test_loads_and_load_give_the_same_source(cpu):
    text = (SAMPLES / "softmax.spn").read_text()
    a = cpu.load(SAMPLES / "softmax.spn").softmax.specialize(static={"N": 256}).source()
    b = cpu.loads(text, str(SAMPLES / "softmax.spn")).softmax.specialize(static={"N": 256}).source()
    assert a.replace(str(SAMPLES / "softmax.spn"), "P") == b.replace(str(SAMPLES / "softmax.spn"), "P")


def test_import_initializes_no_gpu_runtime():
    import subprocess
    import sys

    # spindle imports neither torch nor any CUDA library by itself.
    code = "import sys, spindle; print(any(m.startswith(('torch', 'cupy')) for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
    maps = subprocess.run(
        [sys.executable, "-c", "import spindle; print(open('/proc/self/maps').read())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "libcuda" not in maps and "libnvrtc" not in maps and "libamdhip" not in maps


def test_nvrtc_from_wheels(tmp_path):
    def touch(rel):
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("")
        return str(p)

    assert spindle.nvrtc_from_wheels([tmp_path]) is None
    # nvidia-cuda-nvrtc-cu12 and nvidia-cuda-runtime-cu12.
    touch("site/nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.4")
    lib = touch("site/nvidia/cuda_nvrtc/lib/libnvrtc.so.12")
    inc = touch("site/nvidia/cuda_runtime/include/cuda_fp16.h")
    touch("site/nvidia/cuda_nvrtc/include/nvrtc.h")
    assert spindle.nvrtc_from_wheels([tmp_path / "none", tmp_path / "site"]) == (lib, str(pathlib.Path(inc).parent))
    # CUDA 13 wheels: one nvidia/cu13 tree, preferred to older headers.
    lib13 = touch("site13/nvidia/cu13/lib/libnvrtc.so.13")
    inc13 = touch("site13/nvidia/cu13/include/cuda_fp16.h")
    touch("site13/nvidia/cuda_runtime/include/cuda_fp16.h")
    assert spindle.nvrtc_from_wheels([tmp_path / "site13"]) == (lib13, str(pathlib.Path(inc13).parent))
    # nvrtc without the runtime wheel's headers.
    only = touch("bare/nvidia/cuda_nvrtc/lib/libnvrtc.so.12")
    assert spindle.nvrtc_from_wheels([tmp_path / "bare"]) == (only, None)


def test_nvrtc_wheels_are_used_only_where_nothing_else_is(tmp_path, monkeypatch):
    import sys

    lib = tmp_path / "nvidia/cuda_nvrtc/lib/libnvrtc.so.12"
    lib.parent.mkdir(parents=True)
    lib.write_text("")
    for v in ("SPINDLE_NVRTC", "SPINDLE_CUDA_INCLUDE", "CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setattr(sys, "path", [str(tmp_path)] + sys.path)
    monkeypatch.setattr(spindle, "_system_nvrtc", lambda: False)  # as on a machine with no toolkit
    spindle._use_nvrtc_wheels("cpu")
    assert "SPINDLE_NVRTC" not in os.environ
    spindle._use_nvrtc_wheels("auto")
    assert os.environ["SPINDLE_NVRTC"] == str(lib)
    assert "SPINDLE_CUDA_INCLUDE" not in os.environ
    monkeypatch.undo()
    monkeypatch.setenv("SPINDLE_NVRTC", "/elsewhere/libnvrtc.so")
    monkeypatch.setattr(sys, "path", [str(tmp_path)] + sys.path)
    spindle._use_nvrtc_wheels("cuda")  # SPINDLE_NVRTC wins
    assert os.environ["SPINDLE_NVRTC"] == "/elsewhere/libnvrtc.so"
