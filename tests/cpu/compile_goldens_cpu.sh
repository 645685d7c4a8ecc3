#!/usr/bin/env bash
# Compiles every golden (tests/golden/expected/*.hip) for the host as the
# runtime's CPU target builds a kernel: runtime/cpu/spindle_cpu_abi.h, then
# runtime/cpu/spindle_cpu.h, then the generated file, then the entry point
# for its kernel, with -D__SPN_CPU=1 and a warp width of 32 and of 64, by
# g++ and (where installed) clang++. A syntax check with -Wall for each, and
# one real -O2 shared library (softmax) per compiler, checked for the
# symbols the runtime looks up. Exits 1 if anything fails to compile.
#
#   bash tests/cpu/compile_goldens_cpu.sh [-j JOBS] [-v] [GOLDEN.hip ...]
#
# -v prints every warning (otherwise only a count per compiler).
# g++ warns about every `#pragma unroll` (clang honours it): not reported.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
jobs=$(nproc)
verbose=0
while getopts "j:v" opt; do
  case $opt in
    j) jobs=$OPTARG ;;
    v) verbose=1 ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -gt 0 ]; then goldens=("$@"); else goldens=("$root"/tests/golden/expected/*.hip); fi

compilers=()
for cxx in "${CXX:-g++}" clang++; do
  if command -v "$cxx" >/dev/null && [[ ! " ${compilers[*]-} " =~ " $cxx " ]]; then compilers+=("$cxx"); fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The source the runtime compiles for one golden, on stdout.
cpu_source() {
  local golden=$1 kernel
  # The kernel is the one `extern "C" __global__ ... void NAME(` defined last
  # (the launcher's declaration of it comes first).
  kernel=$(grep -oE '^extern "C" __global__ .*void [A-Za-z_][A-Za-z0-9_]*\(' "$golden" | tail -1 |
    sed -E 's/.*void ([A-Za-z_][A-Za-z0-9_]*)\($/\1/')
  if [ -z "$kernel" ]; then
    echo "compile_goldens_cpu: no kernel found in $golden" >&2
    return 1
  fi
  cat "$root/runtime/cpu/spindle_cpu_abi.h" "$root/runtime/cpu/spindle_cpu.h" "$golden"
  printf '\nextern "C" __attribute__((visibility("default"))) void __spn_cpu_entry(void** args) { __spn_cpu_invoke(&%s, args); }\n' "$kernel"
}
export -f cpu_source
export root work

flags=(-std=c++17 -fPIC -ffp-contract=off -fvisibility=hidden -D__SPN_CPU=1)
check_one() {  # compiler width golden
  local cxx=$1 width=$2 golden=$3 log
  log="$work/$(basename "$golden" .hip).$cxx.w$width.log"
  if cpu_source "$golden" |
    "$cxx" "${flags[@]}" -D__SPN_CPU_WARP_SIZE="$width" -O0 -fsyntax-only -Wall -Wno-unknown-pragmas -x c++ - \
      >"$log" 2>&1; then
    return 0
  fi
  echo "FAILED: $cxx, warp $width: $golden" >&2
  head -40 "$log" >&2
  return 1
}
export -f check_one
export flags_string="${flags[*]}"

start=$(date +%s.%N)
failed=0
for cxx in "${compilers[@]}"; do
  for width in 32 64; do
    for g in "${goldens[@]}"; do printf '%s\0%s\0%s\0' "$cxx" "$width" "$g"; done
  done
done | xargs -0 -n 3 -P "$jobs" bash -c 'flags=($flags_string); check_one "$@"' _ || failed=1
end=$(date +%s.%N)
echo "compile_goldens_cpu: ${#goldens[@]} goldens x warp 32, 64 x ${compilers[*]}: syntax check in" \
  "$(printf '%.1f' "$(echo "$end - $start" | bc)") s"
for cxx in "${compilers[@]}"; do
  count=$(cat "$work"/*."$cxx".w*.log 2>/dev/null | grep -c 'warning:' || true)
  echo "  $cxx: $count warnings (-Wall)"
  if [ "$verbose" = 1 ] && [ "$count" != 0 ]; then grep -h -A3 'warning:' "$work"/*."$cxx".w*.log || true; fi
done

# One real build per compiler: the runtime's flags, a shared library with the three C entry points.
softmax="$root/tests/golden/expected/softmax.N-1024.hip"
for cxx in "${compilers[@]}"; do
  lib="$work/softmax.$cxx.so"
  start=$(date +%s.%N)
  if ! cpu_source "$softmax" | "$cxx" "${flags[@]}" -D__SPN_CPU_WARP_SIZE=32 -O2 -shared -x c++ - -o "$lib"; then
    echo "FAILED: $cxx -O2 -shared of $softmax" >&2
    failed=1
    continue
  fi
  end=$(date +%s.%N)
  exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -c '^__spn_cpu_\(entry\|bind\|abi_version\)$' || true)
  if [ "$exported" != 3 ]; then
    echo "FAILED: $lib exports $exported of __spn_cpu_entry, __spn_cpu_bind, __spn_cpu_abi_version" >&2
    failed=1
  fi
  echo "  $cxx -O2 -shared softmax.N-1024: $(printf '%.2f' "$(echo "$end - $start" | bc)") s"
done
exit $failed
