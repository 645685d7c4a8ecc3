#!/usr/bin/env python3
"""Launch overhead from Python on cache hits (issue 18): CPU time per launch.

Spindle (torch tensors), CuPy RawKernel (on CuPy arrays and on torch
pointers), Triton (JIT launch), and torch.mul(out=), each launching
y = a * x on a small tensor many times in a row, in one run on one GPU.
The kernel is tiny, so the CPU side of the launch path is what is measured:
per launch, the thread's CPU time (time.thread_time) and the wall time over
the loop; the median of REPS repetitions of LAUNCHES launches, after warm-up
(every binary cached). A peer that is not installed is skipped, not failed.

    python bench/python_launch.py [--launches 5000] [--reps 15] [--n 4096] [--batch 100] [--json out.jsonl]

Two columns: a stream of LAUNCHES launches in a row (the queue of the GPU
fills, and the time includes waiting for it), and batches of 100 with a
synchronization between them outside the timed region (gpu_check's method
for the C++ numbers, so the two compare).
"""

import argparse
import json
import statistics
import time

SCALE_SPN = """@grid(cdiv(N, 256))
@block(256)
kernel scale(x: f32[N], y: f32[N], a: f32):
    i = block_id() * 256 + thread_id()
    if i < N:
        y[i] = a * x[i]
"""

CUDA_SRC = r"""
extern "C" __global__ void scale(const float* x, float* y, float a, long long n) {
    long long i = (long long)blockIdx.x * 256 + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
"""


def measure(launch, sync, launches, reps):
    for _ in range(200):
        launch()
    sync()
    cpu, wall = [], []
    for _ in range(reps):
        c0, w0 = time.thread_time(), time.perf_counter()
        for _ in range(launches):
            launch()
        c1, w1 = time.thread_time(), time.perf_counter()
        sync()
        cpu.append((c1 - c0) / launches * 1e6)
        wall.append((w1 - w0) / launches * 1e6)
    return statistics.median(cpu), statistics.median(wall)


def measure_batched(launch, sync, batch, batches):
    """CPU time per launch in batches of `batch` launches, synchronizing
    between batches outside the timed region, so the GPU's launch queue never
    fills: gpu_check's method for the C++ Kernel::launch and raw
    cuLaunchKernel numbers (bench/gpu_check.cpp, launchOverhead). In a long
    stream of tiny kernels the queue fills and each launch also waits for
    the GPU to retire one, which a faster host path cannot remove."""
    sync()
    per = []
    for b in range(batches + 5):
        c0 = time.thread_time()
        for _ in range(batch):
            launch()
        c1 = time.thread_time()
        sync()
        if b >= 5:
            per.append((c1 - c0) / batch * 1e6)
    return statistics.median(per)


def spindle_case(torch, x, y, n):
    import spindle  # the installed package (pip install .)

    k = spindle.loads(SCALE_SPN, "scale.spn").scale
    k(x, y, 2.0)
    torch.cuda.synchronize()
    assert torch.equal(y, 2.0 * x), "spindle: wrong result"
    return lambda: k(x, y, 2.0)


def cupy_cases(torch, x, y, n):
    import cupy as cp

    kern = cp.RawKernel(CUDA_SRC, "scale")
    grid = ((n + 255) // 256,)
    cx = cp.asarray(x.cpu().numpy())
    cy = cp.empty_like(cx)
    kern(grid, (256,), (cx, cy, cp.float32(2.0), cp.int64(n)))
    cp.cuda.Device().synchronize()
    assert cp.allclose(cy, 2 * cx), "cupy: wrong result"
    on_cupy = lambda: kern(grid, (256,), (cx, cy, cp.float32(2.0), cp.int64(n)))  # noqa: E731
    stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)

    def on_torch():
        with stream:
            kern(grid, (256,), (x.data_ptr(), y.data_ptr(), cp.float32(2.0), cp.int64(n)))

    return {"cupy RawKernel (cupy arrays)": on_cupy, "cupy RawKernel (torch pointers)": on_torch}


def triton_case(torch, x, y, n):
    import triton
    import triton.language as tl

    @triton.jit
    def scale(x_ptr, y_ptr, a, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        tl.store(y_ptr + i, a * tl.load(x_ptr + i, mask=m), mask=m)

    grid = (triton.cdiv(n, 256),)
    scale[grid](x, y, 2.0, n, BLOCK=256)
    torch.cuda.synchronize()
    assert torch.equal(y, 2.0 * x), "triton: wrong result"
    return lambda: scale[grid](x, y, 2.0, n, BLOCK=256)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--launches", type=int, default=5000)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--batch", type=int, default=100, help="launches per batch in the batched measurement")
    ap.add_argument("--batches", type=int, default=200)
    ap.add_argument("--json", help="append one JSON line per case")
    args = ap.parse_args()

    import torch

    assert torch.cuda.is_available(), "needs a CUDA GPU"
    n = args.n
    x = torch.randn(n, device="cuda")
    y = torch.empty_like(x)
    sync = torch.cuda.synchronize
    cases = {}
    builders = [
        ("spindle", lambda: {"spindle": spindle_case(torch, x, y, n)}),
        ("cupy", lambda: cupy_cases(torch, x, y, n)),
        ("triton", lambda: {"triton JIT": triton_case(torch, x, y, n)}),
    ]
    for name, build in builders:
        try:
            cases.update(build())
        except ImportError as e:
            print(f"# {name}: skipped ({e})")
    cases["torch.mul(out=)"] = lambda: torch.mul(x, 2.0, out=y)

    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, n={n}, "
          f"{args.reps} x {args.launches} launches per case")
    print(f"{'case':34} {'cpu us/launch':>14} {'wall us/launch':>15} {'cpu us, batches of ' + str(args.batch):>26}")
    rows = []
    for name, launch in cases.items():
        cpu, wall = measure(launch, sync, args.launches, args.reps)
        batched = measure_batched(launch, sync, args.batch, args.batches)
        rows.append({"case": name, "cpu_us": round(cpu, 2), "wall_us": round(wall, 2),
                     "cpu_us_batched": round(batched, 2), "batch": args.batch,
                     "device": torch.cuda.get_device_name(), "n": n})
        print(f"{name:34} {cpu:14.2f} {wall:15.2f} {batched:26.2f}")
    if args.json:
        with open(args.json, "a") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
