#!/usr/bin/env bash
# Compiles every checked-in golden with a real compiler, as users would:
#   compile_goldens.sh gfx90a|gfx940|gfx90a,gfx940|sm_90 GOLDEN_DIR [OBJECT_DIR]
# The AMD targets use hipcc (ROCm; several, comma-separated, in one
# invocation per file), sm_90 uses nvcc on a .cu copy. Both compile the
# device side, through the vendor's backend to a code object / cubin,
# with the runtime's -std=c++17: most of a generated file is device code,
# and a host pass of every file took half the time. A golden whose host
# launcher makes tensor maps (__spn_make_tensor_map: host code of its own)
# gets the host pass as well, as an nvcc or hipcc build of the file would
# compile it. Exits 0 with a "skipped" message only when that compiler is not
# installed. With OBJECT_DIR (AMD only), emptied first, each golden's code
# objects stay there as NAME.o (one offload bundle of every target) for
# check_amd_registers.sh, which then needs no compiler pass of its own.
set -u
target=$1
dir=$2
case "$target" in
  gfx*) compiler=$(command -v hipcc || true) ;;
  sm_*) compiler=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true) ;;
  *) echo "unknown target $target"; exit 2 ;;
esac
if [ -z "$compiler" ]; then
  echo "SKIPPED: no compiler for $target on this machine"
  exit 0
fi
arch_flags=()
IFS=, read -r -a archs <<<"$target"
for arch in "${archs[@]}"; do arch_flags+=("--offload-arch=$arch"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
objects=$work
if [ -n "${3:-}" ]; then
  objects=$3
  rm -rf "$objects"
  mkdir -p "$objects"
fi
failed=0
count=0
for f in "$dir"/*.hip; do
  name=$(basename "$f" .hip)
  count=$((count + 1))
  host=0
  grep -q '__spn_make_tensor_map(' "$f" && host=1
  if [[ $target == gfx* ]]; then
    "$compiler" "${arch_flags[@]}" -std=c++17 -Werror=return-type --cuda-device-only -c "$f" -o "$objects/$name.o" >"$work/$name.log" 2>&1 &&
      { [ $host = 0 ] || "$compiler" "${arch_flags[@]}" -std=c++17 -Werror=return-type --cuda-host-only -c "$f" -o "$work/$name.host.o" >>"$work/$name.log" 2>&1; }
  else
    cp "$f" "$work/$name.cu"
    if [ $host = 1 ]; then  # both passes
      "$compiler" -arch="$target" -std=c++17 -c "$work/$name.cu" -o "$work/$name.o" >"$work/$name.log" 2>&1
    else
      "$compiler" -arch="$target" -std=c++17 -cubin "$work/$name.cu" -o "$work/$name.cubin" >"$work/$name.log" 2>&1
    fi
  fi
  if [ $? -ne 0 ]; then
    echo "FAILED: $name for $target"
    cat "$work/$name.log"
    failed=$((failed + 1))
  fi
done
echo "$((count - failed)) passed, $failed failed ($target, $compiler)"
[ $failed -eq 0 ]
