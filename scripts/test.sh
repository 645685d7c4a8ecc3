#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: set-up, build, ctest.
# This is the README's test command and exactly what CI runs (.ci/run).
#
# Environment: BUILD_DIR (default build), JOBS (default: all cores).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
jobs=${JOBS:-$(nproc)}

bash "$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$jobs"
