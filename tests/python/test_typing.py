# The package's types (docs/python.md, Types): python/spindle/_spindle.pyi
# is written by hand for the extension, so it is compared here with the
# extension itself (names, properties, parameter names and defaults, the keys
# of the dicts it returns); the Python modules are typed inline, and every
# public function and method must be fully annotated. Pure Python: ast and
# the imported package. With mypy installed (not in CI), a snippet using the
# API is also type-checked.
import ast
import os
import pathlib
import re
import site
import subprocess
import sys

import numpy as np
import pytest

import spindle
from spindle import _spindle
from conftest import ROOT, SAMPLES

PACKAGE = ROOT / "python" / "spindle"
STUB = ast.parse((PACKAGE / "_spindle.pyi").read_text())


def stub_classes():
    return {n.name: n for n in STUB.body if isinstance(n, ast.ClassDef)}


def is_typed_dict(c):
    return any(isinstance(b, ast.Name) and b.id == "TypedDict" for b in c.bases)


def stub_members(c):
    return {n.name: n for n in c.body if isinstance(n, ast.FunctionDef)}


def is_property(f):
    return any(isinstance(d, ast.Name) and d.id == "property" for d in f.decorator_list)


def stub_params(f):
    """[(name, default or '-')] of a stub def, without self; a positional-only
    parameter is named '/' (nanobind calls those arg, arg0, ...)."""
    a = f.args
    names = ["/"] * len(a.posonlyargs) + [x.arg for x in a.args]
    defaults = ["-"] * (len(names) - len(a.defaults)) + [ast.literal_eval(d) for d in a.defaults]
    out = list(zip(names, defaults))
    if a.vararg:
        out.append(("*" + a.vararg.arg, "-"))
    out += [(x.arg, "-" if d is None else ast.literal_eval(d)) for x, d in zip(a.kwonlyargs, a.kw_defaults)]
    if a.kwarg:
        out.append(("**" + a.kwarg.arg, "-"))
    return out[1:] if (a.posonlyargs + a.args)[:1] and (a.posonlyargs + a.args)[0].arg == "self" else out


def native_params(fn):
    """[(name, default or '-')] from nanobind's __nb_signature__, without self."""
    (sig, _doc, defaults), *_ = fn.__nb_signature__
    inner = sig[sig.index("(") + 1 : sig.rindex(")")]
    params, depth, cur = [], 0, ""
    for ch in inner + ",":
        if ch == "," and depth == 0:
            if cur.strip():
                params.append(cur.strip())
            cur = ""
            continue
        depth += ch in "[(" and 1 or (ch in "])" and -1 or 0)
        cur += ch
    if params and params[0] == "self":
        params = params[1:]
    if "/" in params:  # the parameters before it are positional-only
        cut = params.index("/")
        params = ["/"] * cut + params[cut + 1 :]
    out = []
    for p in params:
        name = re.match(r"/|\*{0,2}\w+", p).group(0)
        m = re.search(r"= \\(\d+)$", p)
        out.append((name, defaults[int(m.group(1))] if m else "-"))
    return out


def native_names(obj):
    return {n for n in vars(obj) if not n.startswith("__")}


def test_stub_module_names_match_the_extension():
    classes = {n for n, c in stub_classes().items() if not is_typed_dict(c)}
    functions = {n.name for n in STUB.body if isinstance(n, ast.FunctionDef)}
    assert classes | functions == native_names(_spindle) - {"__doc__"}
    for name in classes:
        assert isinstance(getattr(_spindle, name), type), name


@pytest.mark.parametrize("cls", ["Error", "CompileError", "LaunchError", "ArgumentError", "Kernel", "Module", "Runtime"])
def test_stub_classes_match_the_extension(cls):
    stub = stub_classes()[cls]
    native = getattr(_spindle, cls)
    members = stub_members(stub)
    # Bases: ArgumentError(LaunchError), ...
    assert [b.id for b in stub.bases] == [b.__name__ for b in native.__bases__ if b is not object]
    assert {n for n in members if not n.startswith("__")} == native_names(native)
    for name, f in members.items():
        got = vars(native).get(name)
        assert got is not None, f"{cls}.{name} is in the stub, not in the extension"
        assert is_property(f) == isinstance(got, property), f"{cls}.{name}: property in one, method in the other"
        fn = got.fget if isinstance(got, property) else got
        if hasattr(fn, "__nb_signature__"):  # nanobind functions; __call__ and _dry_call take *args, **kwargs
            assert stub_params(f) == native_params(fn), f"{cls}.{name}"
        else:
            assert name in ("__call__", "_dry_call", "diagnostics"), f"{cls}.{name}: {type(fn)}"


def test_stub_functions_match_the_extension():
    for f in STUB.body:
        if isinstance(f, ast.FunctionDef):
            assert stub_params(f) == native_params(getattr(_spindle, f.name)), f.name


def typed_dict_keys(name):
    c = stub_classes()[name]
    return {n.target.id for n in c.body if isinstance(n, ast.AnnAssign)}


def test_typed_dicts_match_what_the_extension_returns(cpu):
    k = cpu.load(SAMPLES / "axpy.spn").axpy
    x = np.zeros(256, np.float32)
    for p in k.params:
        assert set(p) == typed_dict_keys("Param")
    assert set(k.bind(x, x.copy(), 2.0)) == typed_dict_keys("LaunchPlan")
    assert set(k.compile_for(x, x.copy(), 2.0)) == typed_dict_keys("CompileReport")


# The inline annotations of the Python modules: every public function and
# method (and __init__ / __call__) fully annotated, so that a checker sees
# the whole API and no parameter silently becomes Any.
MODULES = ["__init__.py", "torch.py", "__main__.py"]


def public_functions(tree):
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            yield node.name, node
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for f in node.body:
                if isinstance(f, ast.FunctionDef) and (not f.name.startswith("_") or f.name in ("__init__", "__call__")):
                    yield f"{node.name}.{f.name}", f


@pytest.mark.parametrize("module", MODULES)
def test_python_modules_are_fully_annotated(module):
    tree = ast.parse((PACKAGE / module).read_text())
    checked = 0
    for name, f in public_functions(tree):
        a = f.args
        params = a.posonlyargs + a.args + a.kwonlyargs + [p for p in (a.vararg, a.kwarg) if p]
        missing = [p.arg for p in params if p.annotation is None and p.arg not in ("self", "cls")]
        assert not missing, f"{module}: {name}: parameters without a type: {missing}"
        assert f.returns is not None, f"{module}: {name}: no return type"
        checked += 1
    assert checked > 0


def test_public_names_exist():
    for name in spindle.__all__:
        assert hasattr(spindle, name), name
    # spindle.torch imports torch; its names are read from its source.
    tree = ast.parse((PACKAGE / "torch.py").read_text())
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    all_ = next(n.value for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "__all__")
    assert set(ast.literal_eval(all_)) <= defined
    assert (pathlib.Path(spindle.__file__).parent / "py.typed").exists()


GOOD = """
import numpy as np
import spindle

rt = spindle.Runtime(backend="cpu")
mod: spindle.Module = rt.load("samples/axpy.spn")
k: spindle.Kernel = mod.axpy
x = np.zeros(8, np.float32)
k(x, x, 2.0, stream=None)
report = k.compile_for(x, x, 2.0)
key: str = report["key"]
hit: bool = report["hit"]
src: str = k.specialize(static={"N": 8}, dtypes={"T": "f32"}).source()
writes: bool = k.params[1]["writes"]
backend: str = rt.backend
grid: tuple[int, int, int] = k.bind(x, x, 2.0)["grid"]
try:
    spindle.loads("kernel k(", "bad.spn", backend="cpu")
except spindle.CompileError as e:
    line: int = e.diagnostics[0].line
except spindle.ArgumentError as e:
    message: str = str(e)
"""

BAD = """
import spindle

rt = spindle.Runtime(backend="cpu")
rt.backnd
k = rt.load("samples/axpy.spn").axpy
k.specialize(static={"N": "8"})
n: int = k.source()
spindle.load(3)
"""


def mypy(tmp_path, text):
    (tmp_path / "use.py").write_text(text)
    env = dict(os.environ)
    where = str(pathlib.Path(spindle.__file__).parent.parent)
    if where not in site.getsitepackages():  # build/python (ctest): on PYTHONPATH, which mypy does not search
        env["MYPYPATH"] = where
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--cache-dir", str(tmp_path / "cache"), "use.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    return r.returncode, r.stdout + r.stderr


def test_mypy_sees_the_api(tmp_path):
    pytest.importorskip("mypy")
    rc, out = mypy(tmp_path, GOOD)
    assert rc == 0, out
    rc, out = mypy(tmp_path, BAD)
    assert rc == 1
    errors = sorted(int(m) for m in re.findall(r"use\.py:(\d+): error", out))
    assert errors == [5, 7, 8, 9], out
