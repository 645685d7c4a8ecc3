#!/usr/bin/env bash
# Several GPUs of one machine (issue 18), in one command: build and run
# multi_gpu_check (C++: device pointers, the driver says where), install the
# Python package and run tests/python/gpu_test.py (its several_gpus tests
# run with two devices) with bench/python_gpu.sh, then the launch overhead
# with one device visible (the one-device path) and with every device (the
# path that finds each launch's device), from C++ (gpu_check) and Python.
#
#   bash bench/multi_gpu.sh [RESULTS_DIR]     (default: build-bench-gpu/results)
#
# Needs what bench/run.sh and bench/python_gpu.sh need: .debs/ (Debian's
# libfmt-dev and libfmt9) where libfmt-dev is missing, .whl/ filled for this
# Python, and torch in it. Environment: PYTHON (default python, else python3),
# BENCH_BUILD, BENCH_JOBS (default 16).
# Exit status: non-zero when the build fails or a check or test fails.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BENCH_BUILD:-$ROOT/build-bench-gpu}"
RESULTS="${1:-$BUILD/results}"
JOBS="${BENCH_JOBS:-16}"
PY="${PYTHON:-$(command -v python || command -v python3)}"
mkdir -p "$RESULTS"
{ nvidia-smi -L || true; date -u; } | tee "$RESULTS/device.txt"

source "$ROOT/bench/fmt_from_debs.sh"
fmt_dir=$(fmt_cmake_dir "$ROOT" "$BUILD") || exit 2
fmt_args=()
[ -n "$fmt_dir" ] && fmt_args=(-Dfmt_DIR="$fmt_dir")
gen_args=()
command -v ninja >/dev/null && gen_args=(-G Ninja)
echo "== build multi_gpu_check and gpu_check ($BUILD)"
if ! cmake -S "$ROOT/bench" -B "$BUILD" "${gen_args[@]}" -DCMAKE_BUILD_TYPE=Release -DSPINDLE_BUILD_TESTS=OFF \
       "${fmt_args[@]}" > "$RESULTS/build.log" 2>&1 ||
   ! cmake --build "$BUILD" --target spindle_multi_gpu_check spindle_gpu_check -j "$JOBS" \
       >> "$RESULTS/build.log" 2>&1; then
  tail -40 "$RESULTS/build.log"
  echo "multi_gpu.sh: build failed (log: $RESULTS/build.log)"
  exit 2
fi
export SPINDLE_CACHE_DIR="$BUILD/cache"  # fresh: the first launch of each kernel compiles
rm -rf "$SPINDLE_CACHE_DIR"

echo "== multi_gpu_check"
"$BUILD/bin/multi_gpu_check" --samples "$ROOT/samples" 2>&1 | tee "$RESULTS/multi_gpu_check.log"
rc_cpp=${PIPESTATUS[0]}

echo "== Python: install, tests/python/gpu_test.py (several_gpus included), launch overhead with every device visible"
PYTHON="$PY" bash "$ROOT/bench/python_gpu.sh" "$RESULTS"
rc_py=$?

echo "== launch overhead with one device visible (CUDA_VISIBLE_DEVICES=0: the one-device path)"
CUDA_VISIBLE_DEVICES=0 "$PY" "$ROOT/bench/python_launch.py" --json "$RESULTS/python_launch_one_device.jsonl" 2>&1 |
  tee "$RESULTS/python_launch_one_device.log"
for visible in 0 all; do
  echo "== gpu_check --only axpy (C++ launch overhead), devices visible: $visible"
  if [ "$visible" = all ]; then unset CUDA_VISIBLE_DEVICES; else export CUDA_VISIBLE_DEVICES=0; fi
  "$BUILD/bin/gpu_check" --samples "$ROOT/samples" --only axpy --no-probe --json "$RESULTS/gpu_check_$visible.jsonl" \
    > "$RESULTS/gpu_check_$visible.log" 2>&1
  echo "   exit $?"
  grep -A8 "^launch overhead" "$RESULTS/gpu_check_$visible.log"
done
unset CUDA_VISIBLE_DEVICES
echo "== multi_gpu.sh: multi_gpu_check exit $rc_cpp, python_gpu.sh exit $rc_py"
[ "$rc_cpp" = 0 ] && [ "$rc_py" = 0 ]
