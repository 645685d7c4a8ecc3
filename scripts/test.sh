#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: set-up, build, tests.
# This is the README's test command and exactly what CI runs (.ci/run).
#
#   1. set-up (scripts/setup.sh: Debian packages, idempotent), and the
#      format check of every C++ file (scripts/check_format.sh)
#   2. the suite under AddressSanitizer + UndefinedBehaviorSanitizer
#      (scripts/sanitize.sh; the vendor-compiler checks of the goldens are
#      left to step 5, they run no Spindle code, and so is spindle-verify
#      over every golden: verify_tests runs it under the sanitizers)
#   3. a bounded libFuzzer run of the parser and of the whole pipeline
#      (scripts/fuzz.sh, 60 s each)
#   4. the Python package built as a user builds it, offline from the
#      wheelhouse .whl/ (scripts/python_wheel.sh: pip install --no-index
#      --find-links .whl ., then pytest against the installed copy)
#   5. the normal build and the whole ctest suite, last, so its summary is
#      the closing line. The Python extension is in this build (a venv from
#      scripts/python_env.sh: nanobind, numpy, pytest; ctest python_tests)
#      only with SPINDLE_QUICK=1: otherwise step 4 built and tested it.
#
# Each step's wall time is printed after it (CI has a time budget).
# Environment: BUILD_DIR (default build), JOBS (default: all cores),
# SPINDLE_QUICK=1 skips steps 2, 3 and 4 (for a fast local run).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
jobs=${JOBS:-$(nproc)}
export JOBS=$jobs

step_start=$SECONDS
step() {  # step NAME: the previous step's time, then NAME
  [ -z "${step_name:-}" ] || echo "== $step_name took $((SECONDS - step_start)) s"
  step_name=$1 step_start=$SECONDS
  echo "== $1"
}

step "set-up"
bash "$root/scripts/setup.sh"
step "format (clang-format-14, .clang-format)"
bash "$root/scripts/check_format.sh"
python_build=(-DSPINDLE_BUILD_PYTHON=OFF)
if [ "${SPINDLE_QUICK:-0}" != 1 ]; then
  step "sanitizers (ASan + UBSan)"
  bash "$root/scripts/sanitize.sh" -E "golden_compile|golden_verify|golden_isa|golden_registers"
  step "fuzzing (bounded)"
  bash "$root/scripts/fuzz.sh" "${SPINDLE_FUZZ_SECONDS:-60}"
  step "Python package (offline wheel build, tests against the installed package)"
  bash "$root/scripts/python_wheel.sh" "$build/wheelenv"
else
  python=$(bash "$root/scripts/python_env.sh" "$build/pyenv")
  python_build=(-DSPINDLE_BUILD_PYTHON=ON -DPython_EXECUTABLE="$python")
fi
step "build and test"
# RelWithDebInfo with line tables only (-g1): backtraces keep file and line,
# and the build takes a third less time than with full -g.
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" ${python_build[@]+"${python_build[@]}"}
cmake --build "$build" -j "$jobs"
echo "== build took $((SECONDS - step_start)) s"
ctest --test-dir "$build" --output-on-failure -j "$jobs"
