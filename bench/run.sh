#!/usr/bin/env bash
# One command on a GPU machine: build gpu_check and parity, check and time
# every sample through the Spindle runtime, run the PyTorch / Triton / cuBLAS
# peers, run the parity benchmark (every sample and bench/parity/kernels/
# against hand-written CUDA, interleaved, L2 flushed), and print the merged
# table and the parity table last. gpu_check also dumps chosen correctness
# cases (RESULTS_DIR/dump), which peers.py recomputes with PyTorch and compares.
#
#   bash bench/run.sh [RESULTS_DIR]        (default: build-bench-gpu/results)
#
# Environment: BENCH_BUILD (build directory), BENCH_JOBS (default 16),
# GPU_CHECK_ARGS (extra gpu_check arguments, e.g. "--seed 42"), PARITY_ARGS
# (extra parity arguments, e.g. "--only encoder_forward --reps 50"),
# PARITY_ONLY=1 (build, then run the parity benchmark alone), GEMM=1 (also
# issue 17's GEMM section, bench/gemm_gpu.sh: Spindle's GEMM variants checked
# and timed against cuBLAS, addmm + GELU and Triton; about 6-8 more minutes;
# GEMM_TYPES, GEMM_ROWS as there; GEMM_SPN picks the sample, default
# samples/gemm.spn; GEMM_SETS runs several sections, each its own sample
# and rows: "SPN=ROWS;SPN=ROWS", an empty ROWS gemm_gpu.sh's default),
# ATTENTION=1 (also issue 17's attention section, bench/attention_gpu.sh on
# samples/attention_dot.spn: checked, timed, and torch's SDPA timed as the
# anchor; about a minute), PARITY=0 (no parity benchmark: with
# PARITY_ONLY=1, the GEMM and attention sections alone).
# Exit status: non-zero when the build fails or any kernel (Spindle's, a
# peer's or a hand-written one) is numerically wrong, against the CPU
# references, PyTorch, or each other.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BENCH_BUILD:-$ROOT/build-bench-gpu}"
RESULTS="${1:-$BUILD/results}"
JOBS="${BENCH_JOBS:-16}"
mkdir -p "$RESULTS"
JSON="$RESULTS/results.jsonl"
: > "$JSON"
PARITY_JSON="$RESULTS/parity.jsonl"
: > "$PARITY_JSON"
DUMP="$RESULTS/dump"   # Spindle's inputs and outputs of chosen cases, for the PyTorch comparison
rm -rf "$DUMP"
start=$(date +%s)

{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader || true; date -u; } \
  | tee "$RESULTS/device.txt"

# fmt: the system's, else Debian's packages carried in .debs/.
source "$ROOT/bench/fmt_from_debs.sh"
fmt_dir=$(fmt_cmake_dir "$ROOT" "$BUILD") || { echo "run.sh: no fmt"; exit 2; }
fmt_args=()
[ -n "$fmt_dir" ] && fmt_args=(-Dfmt_DIR="$fmt_dir")
gen_args=()
command -v ninja >/dev/null && gen_args=(-G Ninja)

echo "== build ($BUILD)"
targets=(spindle)
[ "${PARITY_ONLY:-0}" != 1 ] && targets+=(spindle_gpu_check)
[ "${PARITY:-1}" != 0 ] && targets+=(spindle_parity)
[ "${GEMM:-0}" = 1 ] && targets+=(spindle_gemm_check)
[ "${ATTENTION:-0}" = 1 ] && targets+=(spindle_attention_check)
if ! cmake -S "$ROOT/bench" -B "$BUILD" "${gen_args[@]}" -DCMAKE_BUILD_TYPE=Release -DSPINDLE_BUILD_TESTS=OFF \
       "${fmt_args[@]}" > "$RESULTS/build.log" 2>&1 ||
   ! cmake --build "$BUILD" --target "${targets[@]}" -j "$JOBS" >> "$RESULTS/build.log" 2>&1; then
  tail -40 "$RESULTS/build.log"
  echo "run.sh: build failed (log: $RESULTS/build.log)"
  exit 2
fi
echo "   built in $(( $(date +%s) - start )) s"

# A fresh cache: the first launch of each sample is a real compile.
export SPINDLE_CACHE_DIR="$RESULTS/cache"
rm -rf "$SPINDLE_CACHE_DIR"

rc_check=0 rc_peers=0 rc_report=0
if [ "${PARITY_ONLY:-0}" != 1 ]; then
  echo "== gpu_check"
  # shellcheck disable=SC2086
  "$BUILD/bin/gpu_check" --samples "$ROOT/samples" --json "$JSON" --dump "$DUMP" ${GPU_CHECK_ARGS:-} 2>&1 \
    | tee "$RESULTS/gpu_check.log"
  rc_check=${PIPESTATUS[0]}

  echo "== peers (Spindle's dumped cases against PyTorch; PyTorch, Triton, cuBLAS, copy)"
  PYTHONUNBUFFERED=1 python3 "$ROOT/bench/peers.py" --json "$JSON" --dump "$DUMP" 2>&1 | tee "$RESULTS/peers.log"
  rc_peers=${PIPESTATUS[0]}
fi

rc_parity=0
if [ "${PARITY:-1}" != 0 ]; then
  echo "== parity (Spindle against hand-written CUDA of the same algorithm)"
  # shellcheck disable=SC2086
  "$BUILD/bin/parity" --json "$PARITY_JSON" ${PARITY_ARGS:-} 2>&1 | tee "$RESULTS/parity.log"
  rc_parity=${PIPESTATUS[0]}
fi

rc_gemm=0
gemm_logs=()
if [ "${GEMM:-0}" = 1 ]; then
  # One section a set: its sample (empty: gemm_gpu.sh's) and rows.
  IFS=';' read -ra gemm_sets <<< "${GEMM_SETS:-${GEMM_SPN:-}=${GEMM_ROWS:-}}"
  for k in "${!gemm_sets[@]}"; do
    set_spn="${gemm_sets[$k]%%=*}" set_rows="${gemm_sets[$k]#*=}"
    echo "== gemm (issue 17: Spindle's GEMM variants and their anchors, bench/gemm_gpu.sh ${set_spn})"
    gemm_logs+=("$RESULTS/gemm$k.log")
    # shellcheck disable=SC2086
    GEMM_ROWS="$set_rows" GEMM_CHECK="$BUILD/bin/gemm_check" GEMM_RESULTS="$RESULTS/gemm$k" \
      bash "$ROOT/bench/gemm_gpu.sh" $set_spn 2>&1 | tee "$RESULTS/gemm$k.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc_gemm=1
  done
fi

rc_attention=0
if [ "${ATTENTION:-0}" = 1 ]; then
  echo "== attention (issue 17: samples/attention_dot.spn against torch's SDPA, bench/attention_gpu.sh)"
  ATTENTION_CHECK="$BUILD/bin/attention_check" bash "$ROOT/bench/attention_gpu.sh" "$ROOT/samples/attention_dot.spn" 2>&1 \
    | tee "$RESULTS/attention.log"
  rc_attention=${PIPESTATUS[0]}
fi

echo "== report (gpu_check exit $rc_check, peers exit $rc_peers, parity exit $rc_parity, gemm exit $rc_gemm," \
  "attention exit $rc_attention, $(( $(date +%s) - start )) s in all)"
if [ "${PARITY_ONLY:-0}" != 1 ]; then
  python3 "$ROOT/bench/report.py" "$JSON" | tee "$RESULTS/report.txt"
  rc_report=${PIPESTATUS[0]}
  echo
fi
rc_parity_report=0
if [ "${PARITY:-1}" != 0 ]; then
  python3 "$ROOT/bench/parity/report.py" "$PARITY_JSON" | tee "$RESULTS/parity_report.txt"
  rc_parity_report=${PIPESTATUS[0]}
fi
for log in "${gemm_logs[@]}"; do  # the GEMM tables again, last, with the others
  echo
  sed -n '/^| shape | variant/,$p' "$log"
done
if [ "${ATTENTION:-0}" = 1 ]; then  # and the attention table
  echo
  sed -n '/^config /,$p' "$RESULTS/attention.log"
fi

if [ "$rc_check" -ne 0 ] || [ "$rc_peers" -ne 0 ] || [ "$rc_report" -ne 0 ] || [ "$rc_parity" -ne 0 ] ||
   [ "$rc_parity_report" -ne 0 ] || [ "$rc_gemm" -ne 0 ] || [ "$rc_attention" -ne 0 ]; then
  exit 1
fi
exit 0
