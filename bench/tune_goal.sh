#!/usr/bin/env bash
# Issue 19's autotuning goal on one GPU, in one run (bench/tune_goal.cpp says
# what is measured): gemm across shapes and dtypes, softmax and layernorm at
# short and long rows; each tuned choice against an exhaustive sweep timed
# the same way.
#
#   bash bench/tune_goal.sh [RESULTS_DIR]     (default: build-tunegoal/results)
#
# Uses build-tunegoal/tune_goal with the shared libraries beside it when
# present (built elsewhere and carried), else builds tune_goal from this tree
# as bench/run.sh builds gpu_check (libfmt from .debs/ when missing).
# Exit status: 0 when every case meets the goal, 1 when one misses, 2 when
# nothing could run.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RESULTS="${1:-$ROOT/build-tunegoal/results}"
mkdir -p "$RESULTS"
if [ -x "$ROOT/build-tunegoal/tune_goal" ]; then
  BIN="$ROOT/build-tunegoal/tune_goal"
  export LD_LIBRARY_PATH="$ROOT/build-tunegoal${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
else
  BUILD="${BENCH_BUILD:-$ROOT/build-bench-gpu}"
  source "$ROOT/bench/fmt_from_debs.sh"
  fmt_dir=$(fmt_cmake_dir "$ROOT" "$BUILD") || { echo "tune_goal: no fmt"; exit 2; }
  fmt_args=()
  [ -n "$fmt_dir" ] && fmt_args=(-Dfmt_DIR="$fmt_dir")
  gen_args=()
  command -v ninja >/dev/null && gen_args=(-G Ninja)
  if ! cmake -S "$ROOT/bench" -B "$BUILD" "${gen_args[@]}" -DCMAKE_BUILD_TYPE=Release -DSPINDLE_BUILD_TESTS=OFF \
         "${fmt_args[@]}" > "$RESULTS/build.log" 2>&1 ||
     ! cmake --build "$BUILD" --target spindle_tune_goal -j "${BENCH_JOBS:-16}" >> "$RESULTS/build.log" 2>&1; then
    tail -30 "$RESULTS/build.log"
    echo "tune_goal.sh: build failed (log: $RESULTS/build.log)"
    exit 2
  fi
  BIN="$BUILD/bin/tune_goal"
fi
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader || true; date -u; } \
  | tee "$RESULTS/device.txt"
"$BIN" --samples "$ROOT/samples" --json "$RESULTS/tune_goal.jsonl" ${TUNE_GOAL_ARGS:-} 2>&1 | tee "$RESULTS/tune_goal.log"
exit "${PIPESTATUS[0]}"
