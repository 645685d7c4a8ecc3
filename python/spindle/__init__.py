"""Spindle from Python: load .spn kernels, launch them on arrays.

    import spindle
    mod = spindle.load("samples/axpy.spn")       # or spindle.loads(text)
    mod.axpy(x, y, 2.0)                          # dims, dtypes, strides bound from the arrays
    print(mod.axpy.source(x, y, 2.0))            # the readable HIP this launch uses
    k = mod.axpy.specialize(dtypes={"T": "f32"})
    print(k.source())                            # no arrays, no GPU needed

Arrays: torch tensors and CuPy/JAX arrays on the GPU, NumPy arrays on the
cpu target (spindle.Runtime(backend="cpu") or SPINDLE_BACKEND=cpu). See
docs/python.md. Importing spindle initializes no GPU runtime: a runtime is
made by the first load().
"""

from __future__ import annotations

import glob
import os
import re
import sys
import threading
from dataclasses import dataclass
from typing import Iterable, Optional

from . import _spindle
from ._spindle import CompileError, Error, Kernel, LaunchError

ArgumentError = _spindle.ArgumentError
for _t in (Error, CompileError, LaunchError, ArgumentError, Kernel):
    _t.__module__ = "spindle"

__all__ = [
    "ArgumentError",
    "CompileError",
    "Diagnostic",
    "Error",
    "Kernel",
    "LaunchError",
    "Module",
    "Runtime",
    "default_runtime",
    "load",
    "loads",
    "nvrtc_from_wheels",
]

__version__ = "0.2.0"


@dataclass(frozen=True)
class Diagnostic:
    """One diagnostic of a module or of the compiler, as the CLI prints it."""

    file: str
    line: int
    column: int
    severity: str  # "error", "warning", "note"
    message: str
    code: str  # the diagnostic's stable name ("sema-unknown-name"), or ""

    def __str__(self) -> str:
        code = f" [{self.code}]" if self.code else ""
        return f"{self.file}:{self.line}:{self.column}: {self.severity}: {self.message}{code}"


# clang-style first lines: "file:line:col: error: message [code]".
_DIAG = re.compile(
    r"^(?P<file>[^\n:]+):(?P<line>\d+):(?P<column>\d+): (?P<severity>error|warning|note): "
    r"(?P<message>.*?)(?: \[(?P<code>[a-z0-9-]+)\])?$",
    re.M,
)
# nvrtc and hiprtc logs: "file(line): error: message".
_RTC_DIAG = re.compile(r"^(?P<file>[^\n(]+)\((?P<line>\d+)\): (?P<severity>error|warning): (?P<message>.*)$", re.M)


def parse_diagnostics(text: str) -> list[Diagnostic]:
    """The diagnostics in an error message (module errors or a compiler log)."""
    out = []
    for m in _DIAG.finditer(text):
        out.append(
            Diagnostic(m["file"], int(m["line"]), int(m["column"]), m["severity"], m["message"], m["code"] or "")
        )
    if not out:
        for m in _RTC_DIAG.finditer(text):
            out.append(Diagnostic(m["file"].strip(), int(m["line"]), 0, m["severity"], m["message"], ""))
    return out


CompileError.diagnostics = property(  # type: ignore[method-assign,assignment]
    lambda self: parse_diagnostics(str(self)),
    doc="The diagnostics (file, line, column, severity, message, code), parsed from the message.",
)


class Module:
    """A loaded .spn module: its kernels are attributes (mod.softmax)."""

    def __init__(self, native: _spindle.Module, runtime: "Runtime") -> None:
        self._native = native
        self._kernels: dict[str, Kernel] = {}
        self.runtime = runtime

    @property
    def path(self) -> str:
        return self._native.path

    def kernel_names(self) -> list[str]:
        return self._native.kernel_names()

    def kernel(self, name: str) -> Kernel:
        k = self._kernels.get(name)
        if k is None:
            k = self._kernels[name] = self._native._kernel(name)
        return k

    def __getattr__(self, name: str) -> Kernel:
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._native.kernel_names():
            raise AttributeError(
                f"module '{self.path}' has no kernel '{name}' (it has: {', '.join(self.kernel_names()) or 'none'})"
            )
        # Kept on the instance: the next `mod.name` is a plain attribute
        # lookup, not a call into the extension (launch overhead).
        k = self.__dict__[name] = self.kernel(name)
        return k

    def __dir__(self) -> list[str]:
        return list(super().__dir__()) + self.kernel_names()

    def __repr__(self) -> str:
        return f"<spindle module {self.path!r}: {', '.join(self.kernel_names())}>"


def nvrtc_from_wheels(paths: Optional[Iterable[str | os.PathLike[str]]] = None) -> Optional[tuple[str, Optional[str]]]:
    """nvrtc and the CUDA headers from pip's NVIDIA wheels, or None.

    Looks in each of `paths` (default: sys.path) for `nvidia/*/lib/libnvrtc.so*`
    (nvidia-cuda-nvrtc-cu12 installs nvidia/cuda_nvrtc/lib, the CUDA 13 wheels
    nvidia/cu13/lib) and for an `nvidia/*/include` holding cuda_fp16.h
    (nvidia-cuda-runtime). Returns (library, include directory or None), the
    newest library of the first directory that has one.
    """
    for base in sys.path if paths is None else paths:
        nv = os.path.join(os.fspath(base), "nvidia")
        if not os.path.isdir(nv):
            continue
        libs = glob.glob(os.path.join(nv, "*", "lib", "libnvrtc.so*"))
        if not libs:
            continue

        def version(path: str) -> list[int]:
            tail = os.path.basename(path)[len("libnvrtc.so") :].lstrip(".")
            return [int(p) for p in tail.split(".") if p.isdigit()]

        lib = max(libs, key=version)
        includes = sorted(glob.glob(os.path.join(nv, "*", "include", "cuda_fp16.h")))
        # Prefer the headers next to the library (CUDA 13: one nvidia/cu13 tree).
        same = [i for i in includes if os.path.dirname(os.path.dirname(i)) == os.path.dirname(os.path.dirname(lib))]
        headers = same or includes
        return lib, os.path.dirname(headers[0]) if headers else None
    return None


def _system_nvrtc() -> bool:
    """Whether the runtime's own search finds nvrtc (docs/runtime.md)."""
    if any(os.environ.get(v) for v in ("SPINDLE_NVRTC", "CUDA_HOME", "CUDA_PATH")):
        return True
    if glob.glob("/usr/local/cuda/lib64/libnvrtc.so*"):
        return True
    import ctypes.util

    return ctypes.util.find_library("nvrtc") is not None


def _use_nvrtc_wheels(backend: str) -> None:
    # Only where the runtime's own search would come up empty.
    if backend not in ("auto", "cuda", "") or _system_nvrtc():
        return
    found = nvrtc_from_wheels()
    if found:
        os.environ["SPINDLE_NVRTC"] = found[0]
        if found[1] and not os.environ.get("SPINDLE_CUDA_INCLUDE"):
            os.environ["SPINDLE_CUDA_INCLUDE"] = found[1]


class Runtime:
    """One backend and device (spindle::Runtime): compiles, caches, launches.

    backend: "auto" (SPINDLE_BACKEND, else the GPU that is present), "cuda",
    "hip" or "cpu" (kernels run on the host, on NumPy arrays). target: "sm_90",
    "gfx90a", "cpu", "cpu:warp64"; empty: the device's own.
    """

    def __init__(
        self,
        backend: str = "auto",
        target: str = "",
        device: int = 0,
        cache_dir: str = "",
        disk_cache: bool = True,
        checked: Optional[bool] = None,
    ) -> None:
        if backend == "cpu" and not target:
            target = "cpu"
        _use_nvrtc_wheels(backend)
        self._native = _spindle.Runtime(backend, target, device, cache_dir, disk_cache, checked)

    def load(self, path: str | os.PathLike[str]) -> Module:
        """Load a .spn file; CompileError (with .diagnostics) when it has errors."""
        try:
            return Module(self._native._load(os.fspath(path)), self)
        except CompileError:
            raise
        except Error as e:
            raise _module_error(str(e)) from None

    def loads(self, text: str, name: str = "<string>.spn") -> Module:
        """Load a module from its text; `name` is the file name diagnostics use."""
        try:
            return Module(self._native._loads(text, name), self)
        except Error as e:
            raise _module_error(str(e)) from None

    def stats(self) -> dict[str, float]:
        return self._native.stats()

    def reset_stats(self) -> None:
        self._native.reset_stats()

    # The native runtime's attributes, declared one by one (not __getattr__)
    # so that type checkers see them and flag a misspelt one.
    @property
    def backend(self) -> str:
        """"cuda", "hip" or "cpu"."""
        return self._native.backend

    @property
    def target(self) -> str:
        """The compile target: "sm_90", "gfx90a", "cpu", "cpu:warp64"."""
        return self._native.target

    @property
    def warp_size(self) -> int:
        """warp_size() on the target: 32, or 64 on AMD CDNA and "cpu:warp64"."""
        return self._native.warp_size

    @property
    def device(self) -> int:
        return self._native.device

    @property
    def has_device(self) -> bool:
        """Whether kernels can launch (False: compile-only, no GPU)."""
        return self._native.has_device

    @property
    def device_name(self) -> str:
        return self._native.device_name

    @property
    def device_status(self) -> str:
        return self._native.device_status

    @property
    def compiler(self) -> str:
        """The run-time compiler in use (nvrtc, hiprtc, the host compiler)."""
        return self._native.compiler

    @property
    def cache_dir(self) -> str:
        return self._native.cache_dir

    def __repr__(self) -> str:
        n = self._native
        return f"<spindle runtime {n.backend} target={n.target} {n.device_status}>"


def _module_error(message: str) -> Error:
    # "module 'x' has errors:" carries diagnostics; an unreadable file does not.
    return CompileError(message) if " has errors:" in message else Error(message)


_default: dict[tuple[str, str, int], Runtime] = {}
_default_lock = threading.Lock()


def default_runtime(backend: str = "auto", target: str = "", device: int = 0) -> Runtime:
    """The shared runtime for these settings, made on first use."""
    key = (backend, target, device)
    with _default_lock:
        rt = _default.get(key)
        if rt is None:
            rt = _default[key] = Runtime(backend, target, device)
        return rt


def load(path: str | os.PathLike[str], *, backend: str = "auto", target: str = "", device: int = 0) -> Module:
    """Load a .spn file with the default runtime for backend/target/device."""
    return default_runtime(backend, target, device).load(path)


def loads(text: str, name: str = "<string>.spn", *, backend: str = "auto", target: str = "", device: int = 0) -> Module:
    """Load a module from its text with the default runtime."""
    return default_runtime(backend, target, device).loads(text, name)
