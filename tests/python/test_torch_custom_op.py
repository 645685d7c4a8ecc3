# spindle.torch.custom_op: kernels as torch.library custom operators, on
# CPU tensors with the cpu target (kernels run on the host), checked by value
# against torch references, eagerly and under torch.compile(fullgraph=True),
# where a graph break fails the test. Skipped where torch is not installed
# (CI); the GPU side is in gpu_test.py.
import pytest

torch = pytest.importorskip("torch")

import spindle  # noqa: E402
import spindle.torch as storch  # noqa: E402
from conftest import SAMPLES  # noqa: E402


@pytest.fixture(scope="module")
def ops(cpu):
    """The samples' operators, registered once (a name is registered once per process)."""

    def op(sample, **spec):
        k = getattr(cpu.load(SAMPLES / f"{sample}.spn"), sample)
        if spec:
            k = k.specialize(**spec)
        return storch.custom_op(k, f"spindle_test::{sample}")

    return {
        "axpy": op("axpy"),
        "softmax": op("softmax", static={"N": 96}),
        "fused_add_rmsnorm": op("fused_add_rmsnorm"),
    }


def gen():
    return torch.Generator().manual_seed(1234)


def test_schema_from_the_signature(cpu):
    def schema(sample):
        return storch.op_schema(getattr(cpu.load(SAMPLES / f"{sample}.spn"), sample))

    assert schema("axpy") == ("(Tensor x, Tensor(a!) y, float a) -> ()", ["y"])
    assert schema("softmax") == ("(Tensor x, Tensor(a!) y) -> ()", ["y"])
    assert schema("fused_add_rmsnorm") == (
        "(Tensor(a!) x, Tensor(b!) residual, Tensor w, float eps) -> ()",
        ["x", "residual"],
    )
    # Optional tensors, several written ones, an unsigned scalar.
    s, mutated = schema("adamw")
    assert s.startswith("(Tensor(a!) params, Tensor(b!)? master, Tensor grads, Tensor(c!) m_state, Tensor(d!) v_state, ")
    assert s.endswith(", float grad_scale, int seed) -> ()")
    assert mutated == ["params", "master", "m_state", "v_state"]


def test_the_op_is_registered_with_that_schema(ops):
    schema = torch.ops.spindle_test.axpy.default._schema
    assert str(schema) == "spindle_test::axpy(Tensor x, Tensor(a!) y, float a) -> ()"


def test_eager_call_by_value(ops):
    x = torch.randn(1000, generator=gen())
    y = torch.randn(1000, generator=gen().manual_seed(5))
    want = 2.5 * x + y
    ops["axpy"](x, y, 2.5)
    torch.testing.assert_close(y, want, rtol=1e-6, atol=1e-6)
    # Through torch.ops too.
    y2 = torch.zeros(1000)
    torch.ops.spindle_test.axpy(x, y2, -1.0)
    torch.testing.assert_close(y2, -x)


def test_spindle_errors_pass_through(ops):
    x = torch.randn(10)
    with pytest.raises(spindle.LaunchError, match="axpy"):
        ops["axpy"](x, torch.randn(11), 1.0)


def test_opcheck(ops):
    # torch's own check of a custom op: schema, fake implementation,
    # mutation (only the declared tensors change), functionalization.
    x = torch.randn(8, 96, generator=gen())
    torch.library.opcheck(ops["softmax"], (x, torch.empty_like(x)))
    x, r, w = (torch.randn(4, 64, generator=gen()), torch.randn(4, 64), torch.rand(64) + 0.5)
    torch.library.opcheck(ops["fused_add_rmsnorm"], (x, r, w, 1e-5))


def test_fake_tensors_launch_nothing(cpu, ops):
    from torch._subclasses.fake_tensor import FakeTensorMode

    cpu.reset_stats()
    with FakeTensorMode():
        x = torch.empty(8, 96)
        y = torch.empty(8, 96)
        ops["softmax"](x, y)
    stats = cpu.stats()
    assert stats["memory_hits"] + stats["disk_hits"] + stats["misses"] == 0


def softmax_then_scale(op):
    def f(x):
        y = torch.empty_like(x)
        op(x, y)
        return y * 2.0 + 1.0

    return f


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_torch_compile_fullgraph(ops, backend):
    torch._dynamo.reset()
    f = softmax_then_scale(ops["softmax"])
    compiled = torch.compile(f, fullgraph=True, backend=backend)
    for seed in (1, 2):
        x = torch.randn(8, 96, generator=gen().manual_seed(seed))
        torch.testing.assert_close(compiled(x), torch.softmax(x, dim=1) * 2.0 + 1.0, rtol=1e-5, atol=1e-6)


def test_torch_compile_two_mutated_inputs(ops):
    torch._dynamo.reset()

    def f(x, residual, w):
        ops["fused_add_rmsnorm"](x, residual, w, 1e-5)
        return x.sum(), residual

    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    x, r, w = torch.randn(4, 64, generator=gen()), torch.randn(4, 64), torch.rand(64) + 0.5
    s = x + r
    want_x = s * torch.rsqrt((s * s).mean(dim=1, keepdim=True) + 1e-5) * w
    total, res = compiled(x, r, w)
    # The mutations reach the caller's tensors, as in eager mode.
    torch.testing.assert_close(r, s)
    torch.testing.assert_close(res, s)
    torch.testing.assert_close(x, want_x, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(total, want_x.sum(), rtol=1e-4, atol=1e-4)


def test_no_graph_breaks_reported_by_explain(ops):
    torch._dynamo.reset()
    explain = torch._dynamo.explain(softmax_then_scale(ops["softmax"]))(torch.randn(8, 96))
    assert explain.graph_break_count == 0
    assert explain.graph_count == 1
