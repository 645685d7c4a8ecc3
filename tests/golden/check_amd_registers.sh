#!/usr/bin/env bash
# Registers, not scratch: reads the AMD code objects compile_goldens.sh kept
# (one offload bundle per golden, every target in it) and asserts that no
# kernel has a private segment (scratch memory: a `local` array the
# compiler did not promote to registers, or spills) or a dynamic stack.
#   check_amd_registers.sh gfx90a,gfx940 GOLDEN_DIR OBJECT_DIR ALLOW_LIST
# Prints each kernel's private segment, VGPRs, AGPRs and SGPRs per target.
# A kernel with scratch fails with its name and size unless ALLOW_LIST has
# a line `GOLDEN_STEM KERNEL REASON...` for it; an entry no kernel needs any
# more fails too, so the list stays true. Exits 0 with "SKIPPED:" only when
# hipcc is not installed.
set -u
targets=$1 golden_dir=$2 object_dir=$3 allow_list=$4
if ! command -v hipcc >/dev/null; then
  echo "SKIPPED: no hipcc on this machine"
  exit 0
fi
# hipcc's own LLVM (the Debian package depends on both tools' packages).
tools=/usr/lib/llvm-15/bin
bundler=$(command -v "$tools/clang-offload-bundler" clang-offload-bundler-15 clang-offload-bundler | head -n 1)
readelf=$(command -v "$tools/llvm-readelf" llvm-readelf-15 llvm-readelf | head -n 1)
if [ -z "$bundler" ] || [ -z "$readelf" ]; then
  echo "FAILED: clang-offload-bundler or llvm-readelf not found next to hipcc's clang"
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

declare -A allowed allow_used
while read -r stem kernel reason; do
  [[ -z "$stem" || $stem == \#* ]] && continue
  if [ -z "$reason" ]; then
    echo "FAILED: $allow_list: the entry for $stem $kernel gives no reason"
    exit 1
  fi
  allowed["$stem $kernel"]=$reason
done <"$allow_list"

# One line per kernel of a code object's metadata: name, private segment
# bytes, dynamic stack, VGPRs, AGPRs, SGPRs, VGPR and SGPR spills. Kernel
# fields sit at four spaces in llvm-readelf's YAML, its arguments' deeper.
kernels() {
  "$readelf" --notes "$1" | awk '
    function flush() { if (name != "") print name, f["private_segment_fixed_size"], f["uses_dynamic_stack"],
                       f["vgpr_count"], f["agpr_count"], f["sgpr_count"], f["vgpr_spill_count"], f["sgpr_spill_count"];
                       name = ""; delete f }
    /^  - / || /^[^ ]/ { flush() }
    /^(  -|   ) \.[a-z_]+:/ { key = $0; sub(/^  -? *\./, "", key); sub(/:.*/, "", key); f[key] = $NF
                             if (key == "name") name = $NF }
    END { flush() }'
}

IFS=, read -r -a archs <<<"$targets"
failed=0 scratch=0 objects=0 rows=0
for golden in "$golden_dir"/*.hip; do
  stem=$(basename "$golden" .hip)
  object=$object_dir/$stem.o
  if [ ! -f "$object" ]; then
    echo "FAILED: no code object for $stem in $object_dir (run golden_compile_amd first)"
    failed=1
    continue
  fi
  objects=$((objects + 1))
  for arch in "${archs[@]}"; do
    elf=$work/$stem.$arch.elf
    if ! "$bundler" --unbundle --type=o --input="$object" --targets="hipv4-amdgcn-amd-amdhsa--$arch" \
      --output="$elf" 2>"$work/log" || [ ! -s "$elf" ]; then
      echo "FAILED: no $arch code object in $object"
      cat "$work/log"
      failed=1
      continue
    fi
    found=0
    while read -r kernel private dynamic vgpr agpr sgpr vspill sspill; do
      found=1 rows=$((rows + 1))
      if [ -z "$sspill" ]; then
        echo "FAILED: $stem $kernel ($arch): metadata fields missing"
        failed=1
        continue
      fi
      line=$(printf '%-7s %-70s private %4s B  VGPR %3s  AGPR %3s  SGPR %3s' "$arch" "$stem $kernel" \
        "$private" "$vgpr" "$agpr" "$sgpr")
      [ "$vspill$sspill" != 00 ] && line+="  spills: $vspill VGPR, $sspill SGPR"
      if [ "$private" != 0 ] || [ "$dynamic" != false ]; then
        what="$private bytes of scratch"
        [ "$dynamic" != false ] && what+=" and a dynamic stack"
        if [ -n "${allowed["$stem $kernel"]+x}" ]; then
          allow_used["$stem $kernel"]=1
          echo "$line  allowed: ${allowed["$stem $kernel"]}"
        else
          echo "$line  FAILED: $what"
          failed=1 scratch=1
        fi
      else
        echo "$line"
      fi
    done < <(kernels "$elf")
    if [ $found -eq 0 ]; then
      echo "FAILED: no kernel metadata read from the $arch code object of $stem"
      failed=1
    fi
  done
done
for entry in "${!allowed[@]}"; do
  if [ -z "${allow_used[$entry]+x}" ]; then
    echo "FAILED: $allow_list allows scratch for $entry, but no kernel read here uses it: remove the entry"
    failed=1
  fi
done
if [ $objects -eq 0 ]; then
  echo "FAILED: no goldens in $golden_dir"
  failed=1
fi
echo "$rows kernels x targets read from $objects code objects ($targets)"
if [ $scratch -ne 0 ]; then
  echo "FAILED: a kernel above keeps data in scratch memory. A local array indexed only at compile time must" \
    "live in registers (docs/language.md 5.4); a kernel that needs scratch goes in $allow_list with its reason."
fi
exit $failed
