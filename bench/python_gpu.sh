#!/usr/bin/env bash
# The Python package on a GPU machine: install it into the current Python
# (the venv with torch) from the wheelhouse, offline, then run
# tests/python/gpu_test.py (with the torch tests that run on CPU tensors:
# custom ops, torch.compile, tensor binding) and the launch-overhead
# benchmarks.
#
#   bash bench/python_gpu.sh [RESULTS_DIR]     (default: build-bench-gpu/results)
#
# Needs .whl/ filled for this Python on a machine with PyPI, e.g. for 3.12:
#   pip download -d .whl --python-version 3.12 --only-binary=:all: -r python/requirements-build.txt
# and the Python headers. Without libfmt-dev, Debian's libfmt-dev and libfmt9
# .debs in .debs/ are unpacked as bench/run.sh does (fmt is header-only in
# the package). Environment: PYTHON (default python).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RESULTS="${1:-$ROOT/build-bench-gpu/results}"
PY="${PYTHON:-python}"
mkdir -p "$RESULTS"
source "$ROOT/bench/fmt_from_debs.sh"
fmt_dir=$(fmt_cmake_dir "$ROOT" "$ROOT/build-bench-gpu") || exit 2
defines=()
[ -n "$fmt_dir" ] && defines=(-Ccmake.define.fmt_DIR="$fmt_dir")
echo "== pip install (offline, from .whl/)"
# The build requirements go into this Python, and the build uses them
# without isolation: an isolated build environment cannot run a venv's
# `cmake` shim (the torch venv has the cmake package), so scikit-build-core
# would ask for a cmake wheel the wheelhouse does not hold.
{ "$PY" -m pip install --no-index --find-links "$ROOT/.whl" -r "$ROOT/python/requirements-build.txt" &&
  "$PY" -m pip install --no-index --find-links "$ROOT/.whl" --no-build-isolation "${defines[@]}" "$ROOT"; } \
  > "$RESULTS/python_install.log" 2>&1 ||
  { tail -40 "$RESULTS/python_install.log"; echo "python_gpu: install failed"; exit 2; }
cd "$RESULTS" || exit 2
echo "== tests/python/gpu_test.py, test_torch_custom_op.py, test_torch_binding.py"
# The torch files run on the cpu target where this build has one (their
# CUDA halves are in gpu_test.py); without Boost.Context they are skipped.
SPINDLE_TESTS_WITHOUT_CPU_TARGET=1 "$PY" -m pytest -q -p no:cacheprovider "$ROOT/tests/python/gpu_test.py" "$ROOT/tests/python/test_torch_custom_op.py" \
  "$ROOT/tests/python/test_torch_binding.py" 2>&1 | tee "$RESULTS/python_gpu_test.log"
rc=${PIPESTATUS[0]}
echo "== bench/python_launch.py"
"$PY" "$ROOT/bench/python_launch.py" --json "$RESULTS/python_launch.jsonl" 2>&1 | tee "$RESULTS/python_launch.log"
echo "== bench/python_bind.py (the Python side of a launch, no kernel)"
"$PY" "$ROOT/bench/python_bind.py" 2>&1 | tee "$RESULTS/python_bind.log"
exit "$rc"
