#!/usr/bin/env python3
"""The Python side of a launch, with no GPU: CPU time per call of
Kernel._dry_call, which binds the arguments (dims, dtypes, strides, scalars)
and resolves the stream exactly as a launch does, then stops before the
runtime's Kernel::launch. On NumPy arrays and, when torch is importable,
CPU torch tensors (the torch fast path), and CUDA tensors where there is a
GPU (the stream lookup included). The kernel is bench/python_launch.py's
`scale` (two f32 tensors and an f32 scalar).

    python bench/python_bind.py [--calls 200000] [--reps 7]

A cache-hit launch from Python costs this plus the C++ Kernel::launch
(3.9 µs on an H200, most of it cuLaunchKernel).
"""

import argparse
import statistics
import time

import numpy as np

import spindle

SCALE_SPN = """@grid(cdiv(N, 256))
@block(256)
kernel scale(x: f32[N], y: f32[N], a: f32):
    i = block_id() * 256 + thread_id()
    if i < N:
        y[i] = a * x[i]
"""


def per_call_ns(fn, calls, reps):
    for _ in range(1000):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.thread_time_ns()
        for _ in range(calls):
            fn()
        times.append((time.thread_time_ns() - t0) / calls)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200000)
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args()
    # The host rows need the cpu target (a build with Boost.Context); a GPU
    # machine's build may lack it, and then only the CUDA row is measured.
    try:
        dry = spindle.Runtime(backend="cpu").loads(SCALE_SPN, "scale.spn").scale._dry_call
    except spindle.Error as e:
        print(f"(no host rows: {e})")
        dry = None
    x, y = np.ones(4096, np.float32), np.zeros(4096, np.float32)
    rows = []
    if dry:
        rows += [("numpy, positional", lambda: dry(x, y, 2.0)), ("numpy, keywords", lambda: dry(x=x, y=y, a=2.0))]
    try:
        import torch

        tx, ty = torch.ones(4096), torch.zeros(4096)
        if dry:
            rows += [
                ("torch cpu, positional", lambda: dry(tx, ty, 2.0)),
                ("torch cpu, keywords", lambda: dry(x=tx, y=ty, a=2.0)),
            ]
        if torch.cuda.is_available():  # the current stream is looked up too
            gdry = spindle.Runtime(backend="cuda").loads(SCALE_SPN, "scale.spn").scale._dry_call
            gx, gy = tx.cuda(), ty.cuda()
            rows.append(("torch cuda, positional", lambda: gdry(gx, gy, 2.0)))
    except ImportError:
        pass
    rows.append(("empty Python lambda (loop cost)", lambda: None))
    for name, fn in rows:
        print(f"{name:34s} {per_call_ns(fn, a.calls, a.reps):8.0f} ns/call")


if __name__ == "__main__":
    main()
