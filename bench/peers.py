#!/usr/bin/env python3
"""Peers for the Spindle samples: PyTorch eager, Triton, cuBLAS and a
device-to-device copy, at the sizes bench/gpu_check.cpp times.

    python3 bench/peers.py --json results.jsonl [--reps 30] [--dump DIR]

Every implementation is checked against a float64 PyTorch computation before
it is timed; timing is the median of single-launch CUDA-event measurements
after warm-up, as in gpu_check. Writes JSON lines (type "perf" and "check").

--dump DIR: the correctness cases gpu_check --dump DIR wrote (Spindle's exact
inputs and outputs) are recomputed with PyTorch and compared, one "check"
line per output (DUMP_REFERENCES below).

Exit status 1 when a peer is numerically wrong or a dumped Spindle output
disagrees with PyTorch.
"""
import argparse
import json
import math
import os
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


def record_failure(impl, kernel, what, error):
    """A check that could not run (a missing file, no reference): a failure."""
    global FAILURES
    FAILURES += 1
    print(f"  FAIL   {impl:7s} {kernel:14s} {what}: {error}")
    emit({"type": "check", "impl": impl, "kernel": kernel, "output": what, "shape": "", "ok": False,
          "error": error})


def perf(impl, kernel, size, ms, nbytes, flops=0.0):
    rec = {"type": "perf", "impl": impl, "kernel": kernel, "size": size, "ms": ms, "bytes": nbytes,
           "gbps": nbytes / (ms * 1e-3) / 1e9}
    if flops:
        rec["flops"] = flops
        rec["tflops"] = flops / (ms * 1e-3) / 1e12
    print(f"  perf   {impl:7s} {kernel:14s} {size:14s} {ms:9.4f} ms {rec['gbps']:8.1f} GB/s"
          + (f" {rec['tflops']:7.2f} TFLOP/s" if flops else ""))
    emit(rec)


# ------------------------------------------------------------------ Spindle's dumped runs against PyTorch
# gpu_check --dump DIR writes chosen correctness cases: each tensor as raw
# little-endian bytes, each case one line of DIR/manifest.jsonl (sample, case,
# scalars, and per tensor its name, role "in" or "out", dtype, shape, file).
# Each sample that dumps has one function here, registered under its name:
# it takes the case's inputs (torch tensors on the GPU, by parameter name),
# its scalars and the case's name (act_and_mul reads its activation there),
# and returns {output name: (reference, atol, rtol)}. Every
# dumped output is compared with its reference, |got - ref| <= atol + rtol *
# |ref|, NaN never passing, and recorded as a "check" line (impl "spindle",
# reference "torch"). A dumped sample without a function here, or an output
# without a reference, is a failure. To add a sample: a function here under
# @dump_reference("name"), and a c.dump(...) call in its gpu_check run
# function (runFusedAddRmsnorm shows one).
DUMP_REFERENCES = {}
DUMP_DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64,
               "i8": torch.int8, "i16": torch.int16, "i32": torch.int32, "i64": torch.int64, "u8": torch.uint8,
               "bool": torch.bool}
if hasattr(torch, "float8_e4m3fn"):
    DUMP_DTYPES["f8e4m3"] = torch.float8_e4m3fn
if hasattr(torch, "float8_e5m2"):
    DUMP_DTYPES["f8e5m2"] = torch.float8_e5m2


def dump_reference(sample):
    def register(fn):
        DUMP_REFERENCES[sample] = fn
        return fn
    return register


def ulps(dtype, n):
    """n units in the last place of dtype, relative to the value (at most; eps is the spacing just above 1)."""
    return n * torch.finfo(dtype).eps


@dump_reference("fused_add_rmsnorm")
def torch_fused_add_rmsnorm_reference(t, scalars, case):
    # vLLM's rounding (fused_add_rms_norm, and Hugging Face's LlamaRMSNorm):
    # the variance of the residual as stored, s * rinv rounded to the dtype
    # before the weight multiply (which rounds again).
    x, residual, w, eps = t["x"], t["residual"], t["w"], scalars["eps"]
    s = (x.float() + residual.float()).to(x.dtype)
    var = s.float().pow(2).mean(-1, keepdim=True)
    out = (s.float() * torch.rsqrt(var + eps)).to(x.dtype) * w
    # The residual is one f32 addition rounded once on both sides: bit for
    # bit. The output may differ where the summation order moves rinv across
    # a rounding boundary of s * rinv: 2 ulps (atol for f16 subnormals).
    return {"residual": (s, 0.0, 0.0), "x": (out, 1e-5, ulps(x.dtype, 2))}


# vLLM's act_and_mul activations as PyTorch computes them (forward_native of
# SiluAndMul, GeluAndMul(approximate="none" / "tanh")).
ACT_AND_MUL = {
    "silu": F.silu,
    "gelu": lambda v: F.gelu(v, approximate="none"),
    "gelu_tanh": lambda v: F.gelu(v, approximate="tanh"),
}


@dump_reference("act_and_mul")
def torch_act_and_mul_reference(t, scalars, case):
    # The case is named ACT_DTYPE_MxD ("gelu_tanh_bf16_67x1000"): the dump's
    # scalars are numbers, so the activation travels in the name. x is
    # [M, 2 * D], as in vLLM: the gate half first, then the up half.
    act = ACT_AND_MUL[case.rsplit("_", 2)[0]]
    x = t["x"]
    # In the storage dtype, as vLLM rounds: the activation is computed in f32
    # and rounded to the dtype, then the product in f32, rounded again.
    d = x.shape[-1] // 2
    out = act(x[..., :d]) * x[..., d:]
    # Only the last bits of expf / erff / tanhf may differ, which can move the
    # rounded activation by one ulp: 2 ulps of the output (atol for f16
    # subnormals).
    return {"out": (out, 1e-5, ulps(x.dtype, 2))}


# vLLM's dynamic per-token quantization (scaled_fp8_quant with
# use_per_token_if_dynamic, and dynamic_scaled_int8_quant with the fp8 path's
# MIN_SCALE floor), in f32 as the kernels compute: the scale is the row's
# absmax over the format's largest value, the row is multiplied by its
# reciprocal, then clamped and converted (fp8: round to nearest even; int8:
# torch.round, half to even).
QUANT_MIN_SCALE = 1.0 / (448.0 * 512.0)


def torch_quant_per_token(x, q):
    qmax = 448.0 if q == "f8e4m3" else 127.0
    amax = x.float().abs().amax(-1, keepdim=True)
    # A true division: PyTorch divides by a Python number as a multiplication
    # by its f32 reciprocal, which is an ulp off the kernels' amax / qmax.
    scale = torch.clamp(amax / torch.full_like(amax, qmax), min=QUANT_MIN_SCALE)
    v = x.float() * (1.0 / scale)
    if q == "f8e4m3":
        return v.clamp(-448.0, 448.0).to(torch.float8_e4m3fn), scale.squeeze(-1)
    return torch.round(v).clamp(-128.0, 127.0).to(torch.int8), scale.squeeze(-1)


@dump_reference("quant_per_token")
def torch_quant_per_token_reference(t, scalars, case):
    # The case is named T_Q_MxN ("bf16_f8e4m3_67x1000"). Every code and scale
    # is one f32 computation and one rounding on both sides: bit for bit.
    y, scale = torch_quant_per_token(t["x"], case.split("_")[1])
    return {"y": (y.float(), 0.0, 0.0), "scales": (scale, 0.0, 0.0)}


def rope_forward_native(positions, query, key, head_size, cos_sin_cache, is_neox_style):
    """vLLM's RotaryEmbedding.forward_native (forward_static, apply_rotary_emb_torch): out of place, in the
    storage dtype. query [T, NH * HS] or [T, NH, HS] (a view of a qkv buffer is fine), key likewise;
    cos_sin_cache [MAXPOS, ROT], cos in the first ROT / 2 columns, sin in the last; dims past ROT pass."""
    positions = positions.flatten()
    num_tokens = positions.shape[0]
    rotary_dim = cos_sin_cache.shape[-1]
    cos_sin = cos_sin_cache.index_select(0, positions)
    cos, sin = cos_sin.chunk(2, dim=-1)

    def rotate(x):
        shape = x.shape
        x = x.view(num_tokens, -1, head_size)
        x_rot, x_pass = x[..., :rotary_dim], x[..., rotary_dim:]
        c = cos.unsqueeze(-2).to(x.dtype)
        s = sin.unsqueeze(-2).to(x.dtype)
        if is_neox_style:
            x1, x2 = torch.chunk(x_rot, 2, dim=-1)
        else:
            x1, x2 = x_rot[..., ::2], x_rot[..., 1::2]
        o1 = x1 * c - x2 * s
        o2 = x2 * c + x1 * s
        if is_neox_style:
            x_rot = torch.cat((o1, o2), dim=-1)
        else:
            x_rot = torch.stack((o1, o2), dim=-1).flatten(-2)
        return torch.cat((x_rot, x_pass), dim=-1).reshape(shape)

    return rotate(query), rotate(key)


def rope_reference64(positions, x, cos_sin_cache, is_neox_style):
    """float64 rotary embedding of x [T, H, HS] with vLLM's rounding: each product rounded to x's dtype
    (exact in float64 before that), the sum exact. Dims past ROT as they are."""
    rot = cos_sin_cache.shape[-1]
    cos, sin = cos_sin_cache.index_select(0, positions.flatten()).double().chunk(2, dim=-1)
    cos, sin = cos.unsqueeze(-2), sin.unsqueeze(-2)
    xd = x.double()
    x_rot = xd[..., :rot]
    x1, x2 = x_rot.chunk(2, dim=-1) if is_neox_style else (x_rot[..., ::2], x_rot[..., 1::2])

    def rnd(v):
        return v.to(x.dtype).double()

    o1 = rnd(x1 * cos) - rnd(x2 * sin)
    o2 = rnd(x2 * cos) + rnd(x1 * sin)
    x_rot = torch.cat((o1, o2), dim=-1) if is_neox_style else torch.stack((o1, o2), dim=-1).flatten(-2)
    return torch.cat((x_rot, xd[..., rot:]), dim=-1)


@dump_reference("rotary_embedding")
def torch_rotary_embedding_reference(t, scalars, case):
    # The case is named LAYOUT_DTYPE_NTxNHxNKVxHS_rotROT ("neox_bf16_7x32x8x128_rot64"); the layout also
    # comes as the scalar NEOX (1 or 0). q [NT, NH, HS] and k [NT, NKV, HS] were dumped as contiguous
    # copies of the kernel's strided slices of one qkv buffer.
    q, k = t["q"], t["k"]
    q_out, k_out = rope_forward_native(t["positions"], q, k, q.shape[-1], t["cos_sin_cache"], bool(scalars["NEOX"]))
    # Bit for bit: vLLM's kernel, PyTorch's elementwise ops and the sample all round each product to the
    # dtype (exact in f32 before that), then the f32 sum or difference; the dims past ROT pass through.
    return {"q": (q_out, 0.0, 0.0), "k": (k_out, 0.0, 0.0)}


def load_dumped(dump_dir, t, dev):
    data = bytearray(open(os.path.join(dump_dir, t["file"]), "rb").read())
    v = torch.frombuffer(data, dtype=torch.uint8).view(DUMP_DTYPES[t["dtype"]])
    if v.numel() != math.prod(t["shape"]):
        raise ValueError(f"{t['file']}: {v.numel()} elements, shape {t['shape']}")
    v = v.reshape(t["shape"]).to(dev)
    # fp8 tensors compare as their values (not every op takes fp8 operands)
    return v.float() if t["dtype"] in ("f8e4m3", "f8e5m2") else v


def validate_dumps(dump_dir, dev):
    global FAILURES
    manifest = os.path.join(dump_dir, "manifest.jsonl")
    if not os.path.exists(manifest):
        print(f"  no {manifest}: nothing to compare (gpu_check ran without --dump, or skipped those samples)")
        return
    if sys.byteorder != "little":
        record_failure("spindle", "dump", manifest, "the dumps are little-endian; this host is not")
        return
    with open(manifest) as f:
        cases = [json.loads(line) for line in f if line.strip()]
    if not cases:
        print(f"  {manifest} lists no case (the samples that dump were skipped)")
    for case in cases:
        sample, name = case["sample"], case["case"]
        fn = DUMP_REFERENCES.get(sample)
        if fn is None:
            record_failure("spindle", sample, name, "no PyTorch reference for this sample in peers.py DUMP_REFERENCES")
            continue
        try:
            inputs = {t["name"]: load_dumped(dump_dir, t, dev) for t in case["tensors"] if t["role"] == "in"}
            outputs = {t["name"]: load_dumped(dump_dir, t, dev) for t in case["tensors"] if t["role"] == "out"}
            refs = fn(inputs, case.get("scalars", {}), name)
        except Exception as e:  # a missing or short file, a reference that fails
            record_failure("spindle", sample, name, f"{type(e).__name__}: {e}")
            continue
        for out in sorted(set(outputs) | set(refs)):
            if out not in refs or out not in outputs:
                record_failure("spindle", sample, f"{name} {out}",
                               "no PyTorch reference for this output" if out not in refs else "output not dumped")
                continue
            got, (want, atol, rtol) = outputs[out], refs[out]
            if got.shape != want.shape:
                record_failure("spindle", sample, f"{name} {out}", f"shape {list(got.shape)} vs {list(want.shape)}")
                continue
            gd, wd = got.double(), want.double()
            err = (gd - wd).abs()
            good = (err <= atol + rtol * wd.abs()) & ~torch.isnan(gd)
            ok = bool(good.all().item())
            bad = int((~good).sum().item())
            differ = int((got != want).sum().item())
            max_err = float(err.max().item()) if err.numel() else 0.0
            if not ok:
                FAILURES += 1
            print(f"  {'ok   ' if ok else 'WRONG'}  spindle vs torch {sample} {name} {out}: max abs err {max_err:.3g}, "
                  f"{differ} of {got.numel()} differ, {bad} out of tolerance (atol {atol:.3g}, rtol {rtol:.3g})")
            emit({"type": "check", "impl": "spindle", "reference": "torch", "kernel": sample,
                  "output": f"{out} vs torch", "shape": name, "ok": ok, "max_abs_err": max_err, "bad": bad,
                  "differ": differ, "atol": atol, "rtol": rtol})


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
    def fused_add_rmsnorm_kernel(x_ptr, r_ptr, w_ptr, N, eps, BLOCK: tl.constexpr):
        # In place, vLLM's rounding: s = T(x + r) stored; x = T(T(s * rinv) * w).
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
        r = tl.load(r_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
        s = (x + r).to(r_ptr.dtype.element_ty)
        tl.store(r_ptr + row * N + cols, s, mask=mask)
        sf = s.to(tl.float32)
        rinv = 1.0 / tl.sqrt(tl.sum(sf * sf, axis=0) / N + eps)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        y = (sf * rinv).to(x_ptr.dtype.element_ty).to(tl.float32) * w
        tl.store(x_ptr + row * N + cols, y.to(x_ptr.dtype.element_ty), mask=mask)

    @triton.jit
    def silu_and_mul_kernel(x_ptr, out_ptr, D, BLOCK: tl.constexpr):
        # vLLM's silu_and_mul on x [M, 2 * D]: out = T(T(silu(gate)) * up).
        row = tl.program_id(0).to(tl.int64)
        cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        mask = cols < D
        g = tl.load(x_ptr + row * 2 * D + cols, mask=mask, other=0.0).to(tl.float32)
        u = tl.load(x_ptr + row * 2 * D + D + cols, mask=mask, other=0.0).to(tl.float32)
        a = (g / (1.0 + tl.exp(-g))).to(out_ptr.dtype.element_ty).to(tl.float32)
        tl.store(out_ptr + row * D + cols, (a * u).to(out_ptr.dtype.element_ty), mask=mask)

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

    def tri_fused_add_rmsnorm(x, residual, w, eps):
        M, N = x.shape
        block, warps = row_launch_opts(N, 2)
        fused_add_rmsnorm_kernel[(M,)](x, residual, w, N, eps, BLOCK=block, num_warps=warps)

    def tri_silu_and_mul(x, out):
        M, D = out.shape
        silu_and_mul_kernel[(M, triton.cdiv(D, 1024))](x, out, D, BLOCK=1024, num_warps=4)

    def tri_axpy(x, y, a):
        n = x.numel()
        axpy_kernel[(triton.cdiv(n, 4096),)](x, y, a, n, BLOCK=4096, num_warps=8)


def main():
    global OUT
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", required=True)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--dump", help="gpu_check --dump directory: compare Spindle's dumped outputs with PyTorch")
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

    if args.dump:
        print(f"Spindle's dumped cases against PyTorch ({args.dump})")
        validate_dumps(args.dump, dev)

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

    # fused_add_rmsnorm (vLLM's fused_add_rms_norm), bf16, in place on x and
    # residual. PyTorch eager has no fused op; the composition a fallback
    # would write: residual.add_(x) (one kernel, f32 add rounded once), then
    # x.copy_(F.rms_norm(residual, ...)) (F.rms_norm where this PyTorch has
    # it, else vLLM's forward_native formula).
    def torch_fused_add_rmsnorm(xb, rb, wb, eps):
        rb.add_(xb)
        if hasattr(F, "rms_norm"):
            xb.copy_(F.rms_norm(rb, (rb.shape[-1],), wb, eps))
        else:
            s = rb.float()
            xb.copy_((s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + eps)).to(xb.dtype) * wb)

    def far_inputs(m, h):
        return ((torch.rand(m, h, device=dev) * 4 - 2).bfloat16(), (torch.rand(m, h, device=dev) * 6 - 3).bfloat16(),
                (torch.rand(h, device=dev) + 0.5).bfloat16())

    def far_check(impl, fn, m, h):
        xb, rb, wb = far_inputs(m, h)
        sd = (xb.float() + rb.float()).bfloat16().double()  # the new residual, as stored
        want = sd * torch.rsqrt(sd.pow(2).mean(-1, keepdim=True) + 1e-6) * wb.double()
        fn(xb, rb, wb, 1e-6)
        check(impl, "fused_add_rmsnorm", rb, sd, 2e-3, 1.6e-2)
        check(impl, "fused_add_rmsnorm", xb, want, 2e-3, 1.6e-2)

    for m, h in ((67, 1000), (9, 4096)):
        far_check("torch", torch_fused_add_rmsnorm, m, h)
        if triton is not None:
            far_check("triton", tri_fused_add_rmsnorm, m, h)
    for m, h in ((8192, 4096), (4096, 8192)):  # as gpu_check; bytes: x, residual read and written, w read
        xb, rb, wb = far_inputs(m, h)
        size, nbytes = f"{m}x{h} bf16", 8 * m * h + 2 * h
        perf("torch", "fused_add_rmsnorm", size, median_ms(lambda: torch_fused_add_rmsnorm(xb, rb, wb, 1e-6), reps),
             nbytes)
        if triton is not None:
            perf("triton", "fused_add_rmsnorm", size,
                 median_ms(lambda: tri_fused_add_rmsnorm(xb, rb, wb, 1e-6), reps), nbytes)
        del xb, rb, wb

    # act_and_mul (vLLM's silu_and_mul, gelu_and_mul, gelu_tanh_and_mul), bf16:
    # PyTorch eager is vLLM's forward_native, act(x[..., :d]) * x[..., d:]
    # (two kernels: the activation, then the product), rounded as vLLM's
    # kernel (the activation to bf16, then the product). Checked at 67 x 1000
    # against float64 with the activation rounded to bf16 (2e-3 abs + 1.6e-2
    # rel: 4 units of bf16 roundoff, as gpu_check), then timed at 4096 tokens
    # of Llama-3 8B's intermediate size, as gpu_check. Bytes: x read, out
    # written (3 * M * D elements of 2 bytes).
    def act_and_mul_ref(act, xb):
        d = xb.shape[-1] // 2
        return act(xb[..., :d].double()).bfloat16().double() * xb[..., d:].double()

    xb = (torch.rand(67, 2 * 1000, device=dev) * 10 - 5).bfloat16()
    for name, act in ACT_AND_MUL.items():
        check("torch", f"act_and_mul {name}", act(xb[..., :1000]) * xb[..., 1000:], act_and_mul_ref(act, xb), 2e-3,
              1.6e-2)
    if triton is not None:
        ob = torch.empty(67, 1000, device=dev, dtype=torch.bfloat16)
        tri_silu_and_mul(xb, ob)
        check("triton", "act_and_mul silu", ob, act_and_mul_ref(F.silu, xb), 2e-3, 1.6e-2)
    m, d = 4096, 14336
    xb = (torch.rand(m, 2 * d, device=dev) * 10 - 5).bfloat16()
    ob = torch.empty(m, d, device=dev, dtype=torch.bfloat16)
    for name, act in ACT_AND_MUL.items():
        perf("torch", "act_and_mul", f"{m}x{d} bf16 {name}",
             median_ms(lambda: torch.mul(act(xb[..., :d]), xb[..., d:], out=ob), reps), 6 * m * d)
    if triton is not None:
        perf("triton", "act_and_mul", f"{m}x{d} bf16 silu", median_ms(lambda: tri_silu_and_mul(xb, ob), reps),
             6 * m * d)
    del xb, ob

    # rotary_embedding (vLLM's rotary_embedding_kernel), bf16, q and k slices of one qkv buffer
    # [NT, (NH + 2 * NKV) * HS]. PyTorch eager is vLLM's forward_native (index_select of the cache rows,
    # chunk or ::2 / 1::2, x1 * cos - x2 * sin and x2 * cos + x1 * sin, then cat or stack: some 17
    # kernels, and out of place where the sample rotates in place: compare times only). Checked
    # at 333 tokens, GQA, partial rotary (ROT 64 of HS 128), both layouts, against float64 with each
    # product rounded to bf16 (2e-3 abs + 1.6e-2 rel, as gpu_check). (A Triton port written for this
    # bench came out 1.5 ulp off in bf16 and was dropped; no Triton peer is timed.) Timed as gpu_check:
    # a 4096-token prefill of Llama-3 8B (NH 32, NKV 8, HS = ROT = 128), positions 0 .. 4095 into a
    # true cos/sin cache of 8192 rows.
    # Bytes: the rotated parts of q and k read and written, each token's position and cache row.
    def rope_inputs(nt, nh, nkv, hs, rot, maxpos, real_cache):
        qkv = (torch.rand(nt, (nh + 2 * nkv) * hs, device=dev) * 4 - 2).bfloat16()
        if real_cache:
            inv_freq = 500000.0 ** (-torch.arange(0, rot, 2, device=dev, dtype=torch.float64) / rot)
            angles = torch.arange(maxpos, device=dev, dtype=torch.float64)[:, None] * inv_freq[None, :]
            cache = torch.cat((angles.cos(), angles.sin()), dim=-1).bfloat16()
            positions = torch.arange(nt, device=dev, dtype=torch.int64)
        else:
            cache = (torch.rand(maxpos, rot, device=dev) * 2 - 1).bfloat16()
            positions = torch.randint(0, maxpos, (nt,), device=dev, dtype=torch.int64)
        q = qkv[:, :nh * hs].view(nt, nh, hs)
        k = qkv[:, nh * hs:(nh + nkv) * hs].view(nt, nkv, hs)
        return qkv, positions, q, k, cache

    nt, nh, nkv, hs, rot = 333, 32, 8, 128, 64
    for neox in (True, False):
        layout = "neox" if neox else "gptj"
        qkv, positions, q, k, cache = rope_inputs(nt, nh, nkv, hs, rot, 4096, False)
        want_q, want_k = rope_reference64(positions, q, cache, neox), rope_reference64(positions, k, cache, neox)
        got_q, got_k = rope_forward_native(positions, q, k, hs, cache, neox)
        check("torch", f"rotary_embedding {layout}", got_q, want_q, 2e-3, 1.6e-2)
        check("torch", f"rotary_embedding {layout}", got_k, want_k, 2e-3, 1.6e-2)
        del qkv, positions, q, k, cache
    nt, nh, nkv, hs, rot = 4096, 32, 8, 128, 128
    qkv, positions, q, k, cache = rope_inputs(nt, nh, nkv, hs, rot, 8192, True)
    query, key = qkv[:, :nh * hs], qkv[:, nh * hs:(nh + nkv) * hs]  # as vLLM's qkv.split gives them
    nbytes = nt * (2 * (nh + nkv) * rot * 2 + 8 + 2 * rot)
    for neox in (True, False):
        size = f"{nt}x{nh}x{nkv}x{hs} bf16 {'neox' if neox else 'gptj'}"
        perf("torch", "rotary_embedding", size,
             median_ms(lambda: rope_forward_native(positions, query, key, hs, cache, neox), reps), nbytes)
    del qkv, positions, q, k, cache, query, key

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

    # quant_per_token (vLLM's dynamic per-token fp8 / int8 quantization), bf16 in: PyTorch eager is
    # the f32 computation above (absmax, clamp, multiply, clamp, convert: several kernels). Checked at
    # 67 x 1000 against float64, dequantized: within fp8's rounding (2^-4 relative, 2^-9 of the scale
    # for subnormal codes) and int8's (half a step of the scale), timed as gpu_check
    # at 4096 x 8192. Bytes: x read once, y written, one f32 scale per row.
    if hasattr(torch, "float8_e4m3fn"):
        xq = (torch.rand(67, 1000, device=dev) * 6 - 3).bfloat16()
        xd = xq.double()
        sd = torch.clamp(xd.abs().amax(-1, keepdim=True) / 448.0, min=QUANT_MIN_SCALE)
        y, s = torch_quant_per_token(xq, "f8e4m3")
        check("torch", "quant_per_token fp8", y.float() * s[:, None], xd, float(sd.max()) * 2 ** -9, 2 ** -3)
        y, s = torch_quant_per_token(xq, "i8")
        check("torch", "quant_per_token i8", y.float() * s[:, None], xd, 0.51 * float(s.max()), 0.0)
        m, n = 4096, 8192
        xq = (torch.rand(m, n, device=dev) * 6 - 3).bfloat16()
        for q in ("f8e4m3", "i8"):
            perf("torch", "quant_per_token", f"{m}x{n} bf16->{q}",
                 median_ms(lambda: torch_quant_per_token(xq, q), reps), 3 * m * n + 4 * m)
        del xq

    # adamw (llm.c's adamw_kernel3: bf16 parameters and gradients, an f32 master copy, f32 moments,
    # stochastic rounding to bf16). PyTorch eager, as mixed-precision training does it: the gradients
    # cast to f32, torch.optim.AdamW(fused=True) on the master copy, the bf16 parameters copied from it
    # (round to nearest: PyTorch has no stochastic rounding). Checked after one step at 4099 parameters
    # against float64 (PyTorch's formula, step 1), timed at GPT-2 124M's parameter count. Bytes as
    # gpu_check's (30 per parameter: what the fused kernel must move), though PyTorch moves more.
    def adamw_setup(n):
        params = (torch.rand(n, device=dev) * 2 - 1).bfloat16()
        grads = (torch.rand(n, device=dev) * 2 - 1).bfloat16()
        master = params.float().clone().requires_grad_(False)
        master.grad = torch.zeros_like(master)
        opt = torch.optim.AdamW([master], lr=3e-4, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1, fused=True)
        return params, grads, master, opt

    def adamw_step(params, grads, master, opt):
        master.grad.copy_(grads)
        opt.step()
        params.copy_(master)

    params, grads, master, opt = adamw_setup(4099)
    p0, g = master.double().clone(), grads.double()
    adamw_step(params, grads, master, opt)
    mh = (0.1 * g) / 0.1
    vh = (0.05 * g * g) / 0.05
    check("torch", "adamw", master, p0 * (1 - 3e-4 * 0.1) - 3e-4 * mh / (vh.sqrt() + 1e-8), 1e-7, 1e-5)
    n = 124439808
    params, grads, master, opt = adamw_setup(n)
    perf("torch", "adamw", f"{n} bf16 master", median_ms(lambda: adamw_step(params, grads, master, opt), reps), 30 * n)
    del params, grads, master, opt

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
