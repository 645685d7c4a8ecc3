#!/usr/bin/env bash
# Compiles one golden for one AMD target with hipcc to assembly and counts
# instructions in it, the way the AMD path is proved without an AMD GPU:
#   isa_check.sh GOLDEN.hip ARCH "HIPCC FLAGS" MNEMONIC=COUNT...
# Each MNEMONIC must occur exactly COUNT times as an instruction (0: absent).
# Exits 0 with "SKIPPED:" only when hipcc is not installed.
set -u
file=$1 arch=$2 flags=$3
shift 3
compiler=$(command -v hipcc || true)
if [ -z "$compiler" ]; then
  echo "SKIPPED: no hipcc on this machine"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC2086 # the flags are a list
if ! "$compiler" --offload-arch="$arch" $flags -std=c++17 -O3 --cuda-device-only -S "$file" -o "$work/out.s" \
  >"$work/log" 2>&1; then
  echo "FAILED: $(basename "$file") does not compile for $arch with '$flags'"
  cat "$work/log"
  exit 1
fi
failed=0
for expectation in "$@"; do
  mnemonic=${expectation%=*} want=${expectation#*=}
  got=$(grep -cE "^[[:space:]]+$mnemonic([[:space:]]|$)" "$work/out.s")
  if [ "$got" -ne "$want" ]; then
    echo "FAILED: $(basename "$file") for $arch with '$flags': $mnemonic $got times, expected $want"
    failed=1
  else
    echo "ok: $mnemonic $got times ($arch, '$flags')"
  fi
done
exit $failed
