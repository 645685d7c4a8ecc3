#!/usr/bin/env python3
"""Peers for the Spindle samples: PyTorch eager, Triton, cuBLAS and a
device-to-device copy, at the sizes bench/gpu_check.cpp times.

    python3 bench/peers.py --json results.jsonl [--reps 30]

Every implementation is checked against a float64 PyTorch computation before
it is timed; timing is the median of single-launch CUDA-event measurements
after warm-up, as in gpu_check. Writes JSON lines (type "perf" and "check").
Exit status 1 when a peer is numerically wrong.
"""
import argparse
import json
import math
import sys

import torch
import torch.nn.functional as F

try:
    import triton
    import triton.language as tl
except Exception as e:  # pragma: no cover - Triton is optional
    triton = None
    print(f"peers: no Triton ({e}); Triton rows are skipped", file=sys.stderr)

FAILURES = 0
OUT = None


def emit(rec):
    OUT.write(json.dumps(rec) + "\n")
    OUT.flush()


def median_ms(fn, reps):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    n = len(times)
    return times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])


def check(impl, kernel, got, want, atol, rtol):
    global FAILURES
    got = got.double()
    want = want.double()
    err = (got - want).abs()
    ok = bool(torch.all(err <= atol + rtol * want.abs()).item()) and not bool(torch.isnan(got).any().item())
    max_err = float(err.max().item())
    if not ok:
        FAILURES += 1
    print(f"  {'ok   ' if ok else 'WRONG'}  {impl:7s} {kernel:14s} max abs err {max_err:.3g}")
    emit({"type": "check", "impl": impl, "kernel": kernel, "ok": ok, "max_abs_err": max_err})
    return ok


def perf(impl, kernel, size, ms, nbytes, flops=0.0):
    rec = {"type": "perf", "impl": impl, "kernel": kernel, "size": size, "ms": ms, "bytes": nbytes,
           "gbps": nbytes / (ms * 1e-3) / 1e9}
    if flops:
        rec["flops"] = flops
        rec["tflops"] = flops / (ms * 1e-3) / 1e12
    print(f"  perf   {impl:7s} {kernel:14s} {size:14s} {ms:9.4f} ms {rec['gbps']:8.1f} GB/s"
          + (f" {rec['tflops']:7.2f} TFLOP/s" if flops else ""))
    emit(rec)


# ------------------------------------------------------------------ Triton kernels
if triton is not None:

    @triton.jit
    def softmax_kernel(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_ptr + row * N + cols, mask=mask, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        y = e / tl.sum(e, axis=0)
        tl.store(y_ptr + row * N + cols, y, mask=mask)

    @triton.jit
    def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, N, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0)
        mean = tl.sum(x, axis=0) / N
        d = tl.where(mask, x - mean, 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / N + eps)
        w = tl.load(w_ptr + cols, mask=mask)
        b = tl.load(b_ptr + cols, mask=mask)
        tl.store(y_ptr + row * N + cols, d * rstd * w + b, mask=mask)

    @triton.jit
    def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, N, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
        rinv = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
        w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
        tl.store(y_ptr + row * N + cols, (x * rinv * w).to(tl.float16), mask=mask)

    @triton.jit
    def axpy_kernel(x_ptr, y_ptr, a, N, BLOCK: tl.constexpr):
        i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = i < N
        x = tl.load(x_ptr + i, mask=mask)
        y = tl.load(y_ptr + i, mask=mask)
        tl.store(y_ptr + i, a * x + y, mask=mask)

    def row_launch_opts(N, elem_bytes):
        block = triton.next_power_of_2(N)
        warps = 8 if block * elem_bytes >= 16384 else 4
        if block * elem_bytes >= 65536:
            warps = 16
        return block, warps

    def tri_softmax(x, y):
        M, N = x.shape
        block, warps = row_launch_opts(N, 4)
        softmax_kernel[(M,)](x, y, N, BLOCK=block, num_warps=warps)

    def tri_layernorm(x, w, b, y, eps):
        M, N = x.shape
        block, warps = row_launch_opts(N, 4)
        layernorm_kernel[(M,)](x, w, b, y, N, eps, BLOCK=block, num_warps=warps)

    def tri_rmsnorm(x, w, y, eps):
        M, N = x.shape
        block, warps = row_launch_opts(N, 2)
        rmsnorm_kernel[(M,)](x, w, y, N, eps, BLOCK=block, num_warps=warps)

    def tri_axpy(x, y, a):
        n = x.numel()
        axpy_kernel[(triton.cdiv(n, 4096),)](x, y, a, n, BLOCK=4096, num_warps=8)


def main():
    global OUT
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", required=True)
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    OUT = open(args.json, "a")
    reps = args.reps
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    torch.manual_seed(1234)
    print(f"peers: {torch.cuda.get_device_name()} torch {torch.__version__}"
          + (f" triton {triton.__version__}" if triton is not None else ""))
    emit({"type": "meta", "impl": "peers", "device": torch.cuda.get_device_name(), "torch": torch.__version__,
          "triton": triton.__version__ if triton is not None else None})

    M, N = 8192, 8192
    x = torch.rand(M, N, device=dev) * 2 - 1
    out = torch.empty_like(x)

    # Device-to-device copy: the roofline for bandwidth-bound kernels.
    ms = median_ms(lambda: out.copy_(x), reps)
    perf("copy", "copy", "8192x8192 f32", ms, 2 * x.numel() * 4)
    big = torch.empty(1 << 26, device=dev)
    big_out = torch.empty_like(big)
    ms = median_ms(lambda: big_out.copy_(big), reps)
    perf("copy", "copy", "64M f32", ms, 2 * big.numel() * 4)
    del big, big_out

    # softmax
    small = torch.rand(67, 1000, device=dev) * 8 - 4
    want = torch.softmax(small.double(), dim=1)
    check("torch", "softmax", torch.softmax(small, dim=1), want, 1e-9, 1e-5)
    if triton is not None:
        y = torch.empty_like(small)
        tri_softmax(small, y)
        check("triton", "softmax", y, want, 1e-9, 1e-5)
    perf("torch", "softmax", "8192x8192", median_ms(lambda: torch.softmax(x, dim=1), reps), 8 * M * N)
    if triton is not None:
        tri_softmax(x, out)
        check("triton", "softmax", out, torch.softmax(x, dim=1), 1e-8, 1e-4)
        perf("triton", "softmax", "8192x8192", median_ms(lambda: tri_softmax(x, out), reps), 8 * M * N)

    # layernorm
    w = torch.rand(N, device=dev) * 2 - 1
    b = torch.rand(N, device=dev) * 2 - 1
    ref = F.layer_norm(x.double(), (N,), w.double(), b.double(), 1e-5)
    check("torch", "layernorm", F.layer_norm(x, (N,), w, b, 1e-5), ref, 1e-4, 1e-4)
    perf("torch", "layernorm", "8192x8192", median_ms(lambda: F.layer_norm(x, (N,), w, b, 1e-5), reps), 8 * M * N + 8 * N)
    if triton is not None:
        tri_layernorm(x, w, b, out, 1e-5)
        check("triton", "layernorm", out, ref, 1e-4, 1e-4)
        perf("triton", "layernorm", "8192x8192", median_ms(lambda: tri_layernorm(x, w, b, out, 1e-5), reps), 8 * M * N + 8 * N)
    del ref

    # rmsnorm f16
    xh = (torch.rand(M, N, device=dev) * 2 - 1).half()
    wh = (torch.rand(N, device=dev) + 0.5).half()
    yh = torch.empty_like(xh)

    def torch_rms():
        xf = xh.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * wh.float()).half()

    rms_fn = torch_rms
    if hasattr(F, "rms_norm"):
        rms_fn = lambda: F.rms_norm(xh, (N,), wh, 1e-6)  # noqa: E731
    xd = xh.double()
    ref = xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + 1e-6) * wh.double()
    check("torch", "rmsnorm_f16", rms_fn(), ref, 2e-3, 1e-2)
    perf("torch", "rmsnorm_f16", "8192x8192", median_ms(rms_fn, reps), 4 * M * N + 2 * N)
    if triton is not None:
        tri_rmsnorm(xh, wh, yh, 1e-6)
        check("triton", "rmsnorm_f16", yh, ref, 2e-3, 1e-2)
        perf("triton", "rmsnorm_f16", "8192x8192", median_ms(lambda: tri_rmsnorm(xh, wh, yh, 1e-6), reps), 4 * M * N + 2 * N)
    del xd, ref

    # axpy (in place, as the sample): y += a * x
    n = 1 << 26
    ax = torch.rand(n, device=dev) * 2 - 1
    ay = torch.rand(n, device=dev) * 2 - 1
    want = ay.double() + 0.5 * ax.double()
    got = ay.clone().add_(ax, alpha=0.5)
    check("torch", "axpy", got, want, 1e-6, 1e-5)
    perf("torch", "axpy", "64M f32", median_ms(lambda: ay.add_(ax, alpha=0.5), reps), 12 * n)
    if triton is not None:
        got = ay.clone()
        want = got.double() + 0.5 * ax.double()
        tri_axpy(ax, got, 0.5)
        check("triton", "axpy", got, want, 1e-6, 1e-5)
        perf("triton", "axpy", "64M f32", median_ms(lambda: tri_axpy(ax, ay, 0.5), reps), 12 * n)
    axh, ayh = ax.half(), ay.half()
    perf("torch", "axpy", "64M f16", median_ms(lambda: ayh.add_(axh, alpha=0.5), reps), 6 * n)

    # histogram (torch.histc: same binning over [lo, hi])
    hx = ax
    got = torch.histc(hx, bins=256, min=-1.0, max=1.0)
    want = torch.histc(hx.double(), bins=256, min=-1.0, max=1.0)
    check("torch", "histogram", got, want, 64.0, 0.0)  # float vs double binning at bin edges
    perf("torch", "histogram", "64M B=256", median_ms(lambda: torch.histc(hx, bins=256, min=-1.0, max=1.0), reps), 4 * n)
    del ax, ay, axh, ayh

    # transpose (materialized)
    check("torch", "transpose", x.t().contiguous(), x.t(), 0.0, 0.0)
    perf("torch", "transpose", "8192x8192", median_ms(lambda: x.t().contiguous(), reps), 8 * M * N)

    # scan
    want = torch.cumsum(small.double(), dim=1)
    check("torch", "scan", torch.cumsum(small, dim=1), want, 1e-6 * 1000, 1e-5)
    perf("torch", "scan", "8192x8192", median_ms(lambda: torch.cumsum(x, dim=1, out=out), reps), 8 * M * N)

    # bias_gelu: y = gelu_tanh(x + bias), rowsum = y.sum(1) (two kernels in eager)
    def torch_bias_gelu():
        y = F.gelu(x + w, approximate="tanh")
        return y, y.sum(1)

    yg, rs = torch_bias_gelu()
    vd = x.double() + w.double()
    yd = 0.5 * vd * (1 + torch.tanh(math.sqrt(2 / math.pi) * (vd + 0.044715 * vd ** 3)))
    check("torch", "bias_gelu", yg, yd, 1e-6, 1e-5)
    check("torch", "bias_gelu", rs, yd.sum(1), 1e-6 * N, 1e-5)
    del vd, yd, yg, rs
    perf("torch", "bias_gelu", "8192x8192", median_ms(torch_bias_gelu, reps), 8 * M * N + 4 * (N + M))

    # row_norms: max-abs and L2 of each row
    xr = x.view(65536, 1024)

    def torch_row_norms():
        return xr.abs().amax(1), torch.linalg.vector_norm(xr, dim=1)

    a_, l_ = torch_row_norms()
    check("torch", "row_norms", a_, xr.double().abs().amax(1), 0.0, 0.0)
    check("torch", "row_norms", l_, torch.linalg.vector_norm(xr.double(), dim=1), 1e-4, 1e-4)
    perf("torch", "row_norms", "65536x1024", median_ms(torch_row_norms, reps), 4 * 65536 * 1024 + 8 * 65536)

    # scale_strided: contiguous and transposed view
    check("torch", "scale_strided", torch.mul(x, 2.0), x.double() * 2, 0.0, 0.0)
    perf("torch", "scale_strided", "8192x8192", median_ms(lambda: torch.mul(x, 2.0, out=out), reps), 8 * M * N)
    xt = x.t()
    perf("torch", "scale_strided", "8192x8192 x.T", median_ms(lambda: torch.mul(xt, 2.0, out=out), reps), 8 * M * N)

    # matmul: cuBLAS fp32, TF32 off
    del out, xt, xr
    K = 4096
    A = torch.rand(4096, K, device=dev) * 2 - 1
    B = torch.rand(K, 4096, device=dev) * 2 - 1
    C = A @ B
    sub = (A[:64].double() @ B.double())
    check("cublas", "matmul", C[:64], sub, 1e-6 * K, 1e-5)
    ms = median_ms(lambda: torch.mm(A, B, out=C), reps)
    perf("cublas", "matmul", "4096^3", ms, 4 * (3 * 4096 * 4096), 2.0 * 4096 ** 3)

    OUT.close()
    print(f"peers: {'all correct' if FAILURES == 0 else f'{FAILURES} WRONG'}")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
