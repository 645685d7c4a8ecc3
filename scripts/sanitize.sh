#!/usr/bin/env bash
# Builds everything with AddressSanitizer + UndefinedBehaviorSanitizer
# (-DSPINDLE_SANITIZE=ON, see the top-level CMakeLists.txt) in build-asan and
# runs the whole test suite there, one ctest test per test executable (a
# process per GoogleTest test costs minutes under ASan; the failing test's
# name is in the output). Any sanitizer report fails the test that
# triggered it (UBSan does not recover). Then the generator's concurrency
# tests (threads specializing one module at once) under ThreadSanitizer, in
# build-tsan (SPINDLE_TSAN; ASan and TSan do not mix).
#
#   scripts/sanitize.sh [CTEST-ARGS...]      e.g. scripts/sanitize.sh -R frontend
#
# Environment: BUILD_DIR (default build-asan), JOBS (default 2).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-asan}

# bench/ (programs for a GPU machine, no tests) is left out of this build.
# -O1 -g1 (line tables: enough for the sanitizers' backtraces) in place of
# RelWithDebInfo's -O2 -g: ASan's own advice, and it halves the compile
# time of the generator's largest files under the sanitizers (78 s -> 34 s
# for function_printer.cpp), which is most of CI's sanitizer step.
sanitizer_flags=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG")
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSPINDLE_SANITIZE=ON -DSPINDLE_TEST_PER_EXECUTABLE=ON \
  -DSPINDLE_BUILD_BENCH=OFF "${sanitizer_flags[@]}" >/dev/null
cmake --build "$build" -j "${JOBS:-2}"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/tests/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The matrix API's value suites on the cpu target (swizzled buffers,
# mma_store, dot: hundreds of small kernels at both warp widths) take
# minutes under ASan and run the runtime's paths that the other cpu tests
# run there too; the normal build runs them all.
export GTEST_FILTER=${GTEST_FILTER:--*CpuSwizzle*:*CpuMmaStore*:*CpuDot*}
(cd "$build" && ctest --output-on-failure -j "${JOBS:-2}" "$@")

tsan=${TSAN_BUILD_DIR:-$root/build-tsan}
cmake -S "$root" -B "$tsan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSPINDLE_TSAN=ON -DSPINDLE_BUILD_RUNTIME=OFF \
  "${sanitizer_flags[@]}" >/dev/null
cmake --build "$tsan" -j "${JOBS:-2}" --target concurrency_tests
TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1} "$tsan/bin/concurrency_tests"
