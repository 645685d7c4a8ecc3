#!/usr/bin/env bash
# Compiles one golden for one target to assembly and counts instructions
# in it, the way a vendor path is proved without its GPU: AMD (gfx*) with
# hipcc to ISA, NVIDIA (sm_*) with nvcc to PTX.
#   isa_check.sh GOLDEN.hip ARCH "COMPILER FLAGS" MNEMONIC=COUNT...
# Each MNEMONIC (an extended regex of an instruction's start, e.g.
# 'global_load_[a-z0-9]+ .*glc slc' or 'ld\.global\.cs\.[a-z0-9]+') must
# occur exactly COUNT times (0: absent). Exits 0 with "SKIPPED:" only when
# the target's compiler is not installed.
set -u
file=$1 arch=$2 flags=$3
shift 3
case "$arch" in
  sm_*) compiler=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true) ;;
  *) compiler=$(command -v hipcc || true) ;;
esac
if [ -z "$compiler" ]; then
  echo "SKIPPED: no compiler for $arch on this machine"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
compile() {
  # shellcheck disable=SC2086 # the flags are a list
  case "$arch" in
    sm_*)
      cp "$file" "$work/in.cu"
      "$compiler" -arch="$arch" $flags -std=c++17 -O3 -ptx "$work/in.cu" -o "$work/out.s"
      ;;
    *) "$compiler" --offload-arch="$arch" $flags -std=c++17 -O3 --cuda-device-only -S "$file" -o "$work/out.s" ;;
  esac
}
if ! compile >"$work/log" 2>&1; then
  echo "FAILED: $(basename "$file") does not compile for $arch with '$flags'"
  cat "$work/log"
  exit 1
fi
failed=0
for expectation in "$@"; do
  mnemonic=${expectation%=*} want=${expectation#*=}
  # An instruction after its indentation; a pattern of its own starting
  # with ^ (a directive such as ^\.minnctapersm 2$) as written.
  if [[ $mnemonic == ^* ]]; then got=$(grep -cE "$mnemonic" "$work/out.s")
  else got=$(grep -cE "^[[:space:]]+$mnemonic([[:space:]]|$)" "$work/out.s"); fi
  if [ "$got" -ne "$want" ]; then
    echo "FAILED: $(basename "$file") for $arch with '$flags': $mnemonic $got times, expected $want"
    failed=1
  else
    echo "ok: $mnemonic $got times ($arch, '$flags')"
  fi
done
exit $failed
