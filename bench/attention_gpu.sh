#!/usr/bin/env bash
# samples/attention.spn on an NVIDIA GPU through the Spindle runtime (nvrtc,
# specialized as a user's launch is): bench/attention_check.cpp checks small
# shapes (odd lengths, grouped-query, causal and not) and the timed ones by
# value against an fp64 reference, and times batch*heads = 32, seq 4096,
# d 64 and 128, causal and not, f16 and bf16; then torch's
# scaled_dot_product_attention at the same shapes in the same session (the
# anchor), and a table of TFLOP/s and % of SDPA.
#
#   bash bench/attention_gpu.sh [SPN]     (default: samples/attention.spn)
#
# Environment: ATTENTION_CHECK (the attention_check binary; built into
# build-bench-gpu/ when unset), ATTENTION_ARGS (extra attention_check
# arguments, e.g. "--no-small" or "--seq 8192"), NO_TORCH=1 (skip the anchor).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BENCH_BUILD:-$ROOT/build-bench-gpu}"
bin="${ATTENTION_CHECK:-}"
if [ -z "$bin" ]; then
  source "$ROOT/bench/fmt_from_debs.sh"
  bench_build_target "$ROOT" "$BUILD" spindle_attention_check attention_gpu || exit 2
  bin="$BUILD/bin/attention_check"
fi
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader || true
spn="${1:-$ROOT/samples/attention.spn}"
results="$(mktemp)"
trap 'rm -f "$results"' EXIT
echo "== $spn"
rc=0
# shellcheck disable=SC2086
"$bin" "$spn" --results "$results" ${ATTENTION_ARGS:-} || rc=1
[ "${NO_TORCH:-0}" = 1 ] && exit $rc
echo "== torch.nn.functional.scaled_dot_product_attention (the anchor)"
RESULTS="$results" python3 - <<'PY' || rc=1
import os
import torch
import torch.nn.functional as F

rows = [line.split() for line in open(os.environ["RESULTS"]) if line.strip()]
print(f"{'config':34} {'spindle':>16} {'sdpa':>16} {'% of sdpa':>9}")
for dt, bh, s, d, causal, ms, tflops in rows:
    bh, s, d, causal, ms, tflops = int(bh), int(s), int(d), int(causal) == 1, float(ms), float(tflops)
    dtype = torch.bfloat16 if dt == "bf16" else torch.float16
    q, k, v = (torch.randn(1, bh, s, d, device="cuda", dtype=dtype) for _ in range(3))
    scale = 2.0 / d**0.5
    run = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
    for _ in range(5):
        run()
    ts = []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); run(); b.record(); b.synchronize()
        ts.append(a.elapsed_time(b))
    ref_ms = sorted(ts)[len(ts) // 2]
    ref_tflops = 4.0 * bh * s * s * d / (2 if causal else 1) / (ref_ms * 1e-3) / 1e12
    name = f"{dt} bh={bh} s={s} d={d} {'causal' if causal else 'full'}"
    print(f"{name:34} {ms:7.3f} ms {tflops:5.1f} {ref_ms:7.3f} ms {ref_tflops:5.1f} {100 * tflops / ref_tflops:8.0f}%")
PY
exit $rc
