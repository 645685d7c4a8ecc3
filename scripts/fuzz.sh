#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang, ASan and UBSan, and
# runs them for a while from the seed corpus (samples/*.spn, tests/bad/*.spn),
# at the same time (one core each).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      default: 60 s, fuzz_parse fuzz_pipeline
#
# Environment: BUILD_DIR (default build-fuzz), JOBS (build parallelism,
# default 2), FUZZ_WORKERS (parallel fuzzing jobs per target, default 1).
# New corpus entries collect in $BUILD_DIR/tests/fuzz/corpus/<target>, crash
# reproducers in .../artifacts/<target>/; rerun one with
#   $BUILD_DIR/bin/<target> <crash-file>
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-fuzz}
seconds=${1:-60}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(fuzz_parse fuzz_pipeline)

# Line tables only (-g1): enough for a crash's backtrace, and faster to build.
cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DSPINDLE_FUZZ=ON >/dev/null
cmake --build "$build" --target "${targets[@]}" -j "${JOBS:-2}"

fuzzdir=$build/tests/fuzz
parallel=()
if [[ ${FUZZ_WORKERS:-1} -gt 1 ]]; then  # libFuzzer then logs to fuzz-<n>.log
  parallel=(-jobs="$FUZZ_WORKERS" -workers="$FUZZ_WORKERS")
fi
# The targets fuzz at the same time (one core each), each into its own log,
# printed when both are done.
pids=()
for t in "${targets[@]}"; do
  corpus=$fuzzdir/corpus/$t
  artifacts=$fuzzdir/artifacts/$t/
  mkdir -p "$corpus" "$artifacts"
  "$build/bin/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -dict="$root/tests/fuzz/spindle.dict" -artifact_prefix="$artifacts" -print_final_stats=1 \
    ${parallel[@]+"${parallel[@]}"} \
    "$corpus" "$fuzzdir/seeds" >"$fuzzdir/$t.log" 2>&1 &
  pids+=($!)
done
status=0
for i in "${!targets[@]}"; do
  t=${targets[$i]}
  if wait "${pids[$i]}"; then ok=1; else ok=0; fi
  echo "== $t for ${seconds}s"
  cat "$fuzzdir/$t.log"
  if [ $ok -eq 0 ]; then
    echo "!! $t found a problem; reproducers in $fuzzdir/artifacts/$t/" >&2
    status=1
  fi
done
exit $status
