#!/usr/bin/env bash
# A long run of the cpu target's differential fuzzer (tests/cpu_fuzz, issue
# 16 item 5): random valid integer kernels, each run on the cpu target with
# its dims static and dynamic and at warp widths 32 and 64 (where it does not
# read the width), which must agree bit for bit; and the HIP of each through
# hipcc (gfx90a) and nvcc (sm_90) where they are installed. CI runs a fixed
# subset (seeds from 1); this runs more, from a seed of your choice.
#
#   scripts/cpu_fuzz.sh [PROGRAMS [FIRST_SEED]]    default: 2000 programs from a random seed
#
# A failure prints its seed, the program and the line that repeats it
# (SPINDLE_FUZZ_SEED=S SPINDLE_FUZZ_PROGRAMS=1 build/bin/cpu_fuzz_tests).
# Environment: BUILD_DIR (default build), SPINDLE_FUZZ_JOBS (threads,
# default 2), SPINDLE_FUZZ_UBSAN=1 (kernels compiled with
# -fsanitize=undefined, one thread), SPINDLE_FUZZ_DUMP=DIR (every program
# written there), GTEST_FILTER (default both tests: CpuFuzz.*).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
programs=${1:-2000}
seed=${2:-$(od -An -N3 -tu4 /dev/urandom | tr -d ' ')}
cmake --build "$build" -j "${SPINDLE_FUZZ_JOBS:-2}" --target cpu_fuzz_tests
echo "cpu fuzz: $programs programs from seed $seed"
SPINDLE_FUZZ_PROGRAMS=$programs SPINDLE_FUZZ_SEED=$seed \
  exec "$build/bin/cpu_fuzz_tests" --gtest_filter="${GTEST_FILTER:-CpuFuzz.*}"
