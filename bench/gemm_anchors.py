#!/usr/bin/env python3
"""The anchors of issue 17's GEMM goals, timed in the same session as
Spindle's rows, and the table that compares them.

    python3 bench/gemm_anchors.py ROWS.jsonl

ROWS.jsonl: one line per timed Spindle row, written by bench/gemm_check
--json (variant, dtype, M, N, K, NB, ms, tflops, config). For each row's
shape and dtype this times, on fresh random inputs, f16/bf16 in and out:

  cuBLAS      torch.matmul(a, b); for the bt rows torch.matmul(a, w.t())
              with w stored N x K (a linear layer), for the at rows
              torch.matmul(at.t(), b) with at stored K x M; for the batched
              rows torch.bmm
  addmm+GELU  torch.nn.functional.gelu(torch.addmm(bias, a, b),
              approximate="tanh") (two kernels: cuBLAS, then the GELU)
  Triton      the Triton tutorial's tl.dot GEMM (03-matrix-multiplication,
              autotuned over a handful of its configs, key M, N, K),
              checked against torch.matmul first

and prints one table: shape, variant, Spindle TFLOP/s, anchor TFLOP/s, %,
goal. Timing as gemm_check's: median of 20 CUDA-event timings after 5
warm-ups, no cache flush. Exit status 1 when an anchor is numerically
wrong (Triton against cuBLAS) or a Spindle row failed its check.
"""
import json
import sys

import torch

try:
    import triton
    import triton.language as tl
except ImportError:  # the table then has no Triton rows
    triton = None

REPS, WARM = 20, 5


def median_ms(fn):
    for _ in range(WARM):
        fn()
    ts = []
    for _ in range(REPS):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e))
    return sorted(ts)[len(ts) // 2]


if triton is not None:
    # The Triton tutorial's matmul (python/tutorials/03-matrix-multiplication.py),
    # its CUDA configs cut to a handful; C in the inputs' type.
    @triton.autotune(
        configs=[
            triton.Config({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8},
                          num_stages=3, num_warps=8),
            triton.Config({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8},
                          num_stages=4, num_warps=4),
            triton.Config({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8},
                          num_stages=4, num_warps=4),
            triton.Config({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8},
                          num_stages=4, num_warps=4),
            triton.Config({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8},
                          num_stages=4, num_warps=4),
        ],
        key=["M", "N", "K"],
    )
    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                      stride_cn, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                      BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr):
        pid = tl.program_id(axis=0)
        num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
        num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
        num_pid_in_group = GROUP_SIZE_M * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * GROUP_SIZE_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m
        offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
        offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
        offs_k = tl.arange(0, BLOCK_SIZE_K)
        a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
        b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
            accumulator = tl.dot(a, b, accumulator)
            a_ptrs += BLOCK_SIZE_K * stride_ak
            b_ptrs += BLOCK_SIZE_K * stride_bk
        c = accumulator.to(c_ptr.dtype.element_ty)
        offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
        offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
        c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
        tl.store(c_ptrs, c, mask=c_mask)

    def triton_matmul(a, b, c):
        M, K = a.shape
        N = b.shape[1]
        grid = lambda meta: (triton.cdiv(M, meta["BLOCK_SIZE_M"]) * triton.cdiv(N, meta["BLOCK_SIZE_N"]),)
        matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                            c.stride(1))


# The goals of issue 17 (docs/performance.md): of cuBLAS for the plain and
# B-transposed GEMM, of addmm + GELU and of Spindle's own plain GEMM for
# the fused epilogue.
PLAIN_GOALS = {(4096, 4096, 4096): 70, (8192, 8192, 1024): 60, (4096, 4096, 128): 60}
UNALIGNED = {(4096, 4096, 4095), (4096, 4095, 4096), (4000, 3000, 1000)}


def plain_goal(shape):
    if shape in UNALIGNED:
        return 50
    return PLAIN_GOALS.get(shape)


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    dtypes = {"f16": torch.float16, "bf16": torch.bfloat16}
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}"
          + (f", triton {triton.__version__}" if triton is not None else ", no triton"))
    rc = 0
    cache = {}  # (anchor, dtype, shape) -> TFLOP/s

    def anchor(name, dt, M, N, K, NB=1):
        key = (name, dt, M, N, K, NB)
        if key in cache:
            return cache[key]
        nonlocal rc
        t = dtypes[dt]
        torch.manual_seed(0)
        flops = 2.0 * NB * M * N * K
        if name == "batched":
            a = torch.randn(NB, M, K, device="cuda", dtype=t)
            b = torch.randn(NB, K, N, device="cuda", dtype=t)
            ms = median_ms(lambda: torch.bmm(a, b))
        else:
            a = torch.randn(M, K, device="cuda", dtype=t)
            if name == "bt":
                w = torch.randn(N, K, device="cuda", dtype=t)
                ms = median_ms(lambda: torch.matmul(a, w.t()))
            elif name == "at":
                at = torch.randn(K, M, device="cuda", dtype=t)
                b = torch.randn(K, N, device="cuda", dtype=t)
                ms = median_ms(lambda: torch.matmul(at.t(), b))
            elif name == "addmm_gelu":
                b = torch.randn(K, N, device="cuda", dtype=t)
                bias = torch.randn(N, device="cuda", dtype=t)
                ms = median_ms(lambda: torch.nn.functional.gelu(torch.addmm(bias, a, b), approximate="tanh"))
            elif name == "triton":
                if triton is None:
                    cache[key] = None
                    return None
                b = torch.randn(K, N, device="cuda", dtype=t)
                c = torch.empty(M, N, device="cuda", dtype=t)
                triton_matmul(a, b, c)
                want = torch.matmul(a, b)
                err = (c.float() - want.float()).abs().max().item()
                if not err <= 0.02 * max(1.0, want.float().abs().max().item()):
                    print(f"  triton {dt} {M}x{N}x{K}: max error {err:.3g} against torch.matmul: WRONG")
                    rc = 1
                ms = median_ms(lambda: triton_matmul(a, b, c))
            else:  # cuBLAS
                b = torch.randn(K, N, device="cuda", dtype=t)
                ms = median_ms(lambda: torch.matmul(a, b))
        cache[key] = flops / ms / 1e9
        return cache[key]

    table = []  # (shape, variant, spindle, anchor name, anchor, goal)
    plain = {(r["dtype"], r["M"], r["N"], r["K"]): r["tflops"] for r in rows if r["variant"] == "plain"}
    for r in rows:
        if not r["ok"]:
            rc = 1
        dt, M, N, K, NB, v = r["dtype"], r["M"], r["N"], r["K"], r["NB"], r["variant"]
        shape = f"{M}x{N}x{K} {dt}"
        cfg = f" [{r['config']}]" if r.get("config") else ""
        if not r["ok"]:
            cfg += " (WRONG: failed its check)"
        sp = r["tflops"]
        goal = plain_goal((M, N, K))
        if v == "plain":
            table.append((shape, "plain" + cfg, sp, "cuBLAS", anchor("cublas", dt, M, N, K), goal))
            table.append((shape, "plain", sp, "Triton", anchor("triton", dt, M, N, K), None))
        elif v == "ex":
            table.append((shape, "gemm_ex" + cfg, sp, "Spindle plain", plain.get((dt, M, N, K)), None))
        elif v == "bt":
            table.append((shape, "B transposed" + cfg, sp, "cuBLAS (a @ w.T)", anchor("bt", dt, M, N, K),
                          50 if (M, N, K) in UNALIGNED else None))
        elif v == "at":
            table.append((shape, "A transposed" + cfg, sp, "cuBLAS (at.T @ b)", anchor("at", dt, M, N, K), None))
        elif v == "bias_gelu":
            table.append((shape, "bias+GELU" + cfg, sp, "addmm+GELU", anchor("addmm_gelu", dt, M, N, K), 70))
            if r.get("turns_tflops", -1) > 0:
                # The goal's ratio from launches in turns (gemm_check): rows
                # timed apart also carry the GPU's clock drift between them.
                table.append((shape, "bias+GELU", sp, "Spindle plain (rows apart)", plain.get((dt, M, N, K)), None))
                table.append((shape, "bias+GELU in turns", r["turns_tflops"], "Spindle plain in turns",
                              r["turns_plain_tflops"], 95))
            else:
                table.append((shape, "bias+GELU", sp, "Spindle plain", plain.get((dt, M, N, K)), 95))
        elif v == "batched":
            table.append((f"{NB}x{r['Mb']}x{N}x{K} {dt}", "batched" + cfg, sp, "torch.bmm",
                          anchor("batched", dt, r["Mb"], N, K, NB), None))

    print()
    print("| shape | variant | Spindle TFLOP/s | anchor | anchor TFLOP/s | % | goal |")
    print("|---|---|---|---|---|---|---|")
    for shape, variant, sp, name, an, goal in table:
        if an is None:
            print(f"| {shape} | {variant} | {sp:.1f} | {name} | - | - | {'' if goal is None else f'{goal}%'} |")
            continue
        pct = 100.0 * sp / an
        g = "" if goal is None else f"{goal}% ({'met' if pct >= goal else 'not met'})"
        print(f"| {shape} | {variant} | {sp:.1f} | {name} | {an:.1f} | {pct:.1f}% | {g} |")
    return rc


if __name__ == "__main__":
    sys.exit(main())
