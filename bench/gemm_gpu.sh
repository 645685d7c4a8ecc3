#!/usr/bin/env bash
# Issue 17's GEMM benchmark on an NVIDIA GPU, in one session:
# bench/gemm_check.cpp runs samples/gemm.spn (plain) and samples/gemm_ex.spn
# (B or A transposed, bias + tanh GELU, batched, and its plain form) through the
# Spindle runtime (nvrtc, specialized and tuned as a user's launch is),
# checks each row by value, then times it; bench/gemm_anchors.py then times
# the anchors at the same shapes (cuBLAS through torch.matmul / bmm,
# torch.addmm + GELU, the Triton tutorial's tl.dot GEMM) and prints one
# table: shape, variant, Spindle TFLOP/s, anchor TFLOP/s, %, goal.
#
#   bash bench/gemm_gpu.sh [SPN]          (default: samples/gemm.spn; gemm_ex.spn beside it)
#
# Environment: GEMM_CHECK (the gemm_check binary; built into
# build-bench-gpu/ when unset), GEMM_TYPES (f16, the default, or f16,bf16),
# GEMM_ROWS (gemm_check --rows: which variants at which shapes; default
# below), GEMM_ARGS (extra gemm_check arguments), GEMM_RESULTS (where the
# rows' JSON goes; default build-bench-gpu/gemm), NO_TORCH=1 (Spindle's
# rows only, no anchors).
# Every C is in the inputs' type, as torch.matmul's is. About 6-8 minutes
# on an H100/H200 from a clean checkout (the build, then each Spindle row
# tuned before it is timed, Triton autotuned per shape).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BENCH_BUILD:-$ROOT/build-bench-gpu}"
bin="${GEMM_CHECK:-}"
if [ -z "$bin" ]; then
  source "$ROOT/bench/fmt_from_debs.sh"
  bench_build_target "$ROOT" "$BUILD" spindle_gemm_check gemm_gpu || exit 2
  bin="$BUILD/bin/gemm_check"
fi
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader || true
spn="${1:-$ROOT/samples/gemm.spn}"
results="${GEMM_RESULTS:-$BUILD/gemm}"
mkdir -p "$results"
json="$results/rows.jsonl"
: > "$json"
# The issue's shapes; the small ones are checked, not timed (under 10^9
# multiply-adds). B row-major (plain) and transposed (bt) at every shape
# that is not a multiple of 16 somewhere.
S6="4096x4096x4096,8192x8192x1024,4096x4096x128,4096x4096x4095,4096x4095x4096,4000x3000x1000"
small="37x53x29,150x260x100,1000x777x333"
rows="${GEMM_ROWS:-plain@$small,$S6 ex@37x53x29,4096x4096x4096,4096x4096x4095 \
bt@37x53x29,4096x4096x4096,4096x4096x4095,4096x4095x4096,4000x3000x1000 at@37x53x29,4096x4096x4096 \
bias_gelu@37x53x29,$S6 batched@150x260x100,4096x4096x4096}"
echo "== Spindle ($spn, gemm_ex.spn beside it)"
rc=0
# shellcheck disable=SC2086
"$bin" "$spn" --c t --types "${GEMM_TYPES:-f16}" --rows "$rows" --json "$json" ${GEMM_ARGS:-} || rc=1
[ "${NO_TORCH:-0}" = 1 ] && exit $rc
echo "== anchors (torch $(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null), same session)"
python3 "$ROOT/bench/gemm_anchors.py" "$json" || rc=1
exit $rc
