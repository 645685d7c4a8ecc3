"""Spindle kernels as PyTorch custom operators (torch.library).

    import spindle, spindle.torch, torch
    mod = spindle.load("samples/softmax.spn")
    softmax = spindle.torch.custom_op(mod.softmax)     # torch.ops.spindle.softmax
    softmax(x, y)                                      # y written in place
    torch.compile(lambda x, y: softmax(x, y), fullgraph=True)(x, y)

The operator's schema comes from the kernel's signature: tensor parameters
are `Tensor` (`Tensor?` when optional), and those the kernel writes are
marked mutated (`Tensor(a!)`), so torch.compile and functionalization know
which inputs change; scalars are `int`, `float`, `bool`, or `Scalar` when
their type is a type parameter. The operator returns nothing. Its fake
(meta) implementation does no work: kernels write only into the tensors they
are given, so there is nothing to allocate and no shape to compute, and
tracing never launches or compiles a kernel. This module imports torch;
`import spindle` does not import it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence

import torch

from . import Kernel

if TYPE_CHECKING:  # what torch.library.custom_op returns
    from torch._library.custom_ops import CustomOpDef

__all__ = ["custom_op", "op_schema"]

# Scalar dtypes by the schema type a Python value of them arrives as.
_INT = {"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"}
_FLOAT = {"f16", "bf16", "f32", "f64", "f8e4m3", "f8e5m2"}


def _alias_set(i: int) -> str:
    # a, b, ..., z, then a1, b1, ...: one alias set per mutated tensor.
    return chr(ord("a") + i % 26) + (str(i // 26) if i >= 26 else "")


def op_schema(kernel: Kernel) -> tuple[str, list[str]]:
    """The operator schema of `kernel` ("(Tensor x, Tensor(a!) y) -> ()") and
    the names of the parameters it mutates."""
    args: list[str] = []
    mutated: list[str] = []
    type_params = set(kernel.type_params)
    for p in kernel.params:
        name = p["name"]
        if p["kind"] == "tensor":
            t = "Tensor"
            if p["writes"]:
                t += f"({_alias_set(len(mutated))}!)"
                mutated.append(name)
            if p["optional"]:
                t += "?"
        elif p["dtype"] in type_params:
            t = "Scalar"  # an int or a float, converted to the type the tensors bind
        elif p["dtype"] == "bool":
            t = "bool"
        elif p["dtype"] in _INT:
            t = "int"
        elif p["dtype"] in _FLOAT:
            t = "float"
        else:
            raise ValueError(f"{kernel.name}: parameter '{name}' of type {p['type']} has no torch schema type")
        args.append(f"{t} {name}")
    return f"({', '.join(args)}) -> ()", mutated


def custom_op(
    kernel: Kernel,
    name: Optional[str] = None,
    *,
    device_types: Optional[str | Sequence[str]] = None,
) -> CustomOpDef:
    """Register `kernel` as the custom operator `name` ("namespace::op";
    default "spindle::<kernel name>") and return it (a
    torch._library.custom_ops.CustomOpDef: call it like the kernel, or as
    torch.ops.<namespace>.<op>).

    The launch uses the kernel's runtime and torch's current stream; launch
    errors are spindle exceptions, as with a direct call. `device_types`
    ("cuda", "cpu", ...) limits the devices the implementation is registered
    for (default: all). A name can be registered once per process.
    """
    schema, mutated = op_schema(kernel)
    qualname = name or f"spindle::{kernel.name}"

    def launch(*args: Any) -> None:
        kernel(*args)

    launch.__name__ = kernel.name
    launch.__doc__ = f"Spindle kernel {kernel!r}"
    op = torch.library.custom_op(
        qualname, launch, mutates_args=tuple(mutated), device_types=device_types, schema=schema
    )

    def fake(*args: Any) -> None:
        return None

    op.register_fake(fake)
    return op
