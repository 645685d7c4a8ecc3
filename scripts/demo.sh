#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: set-up, build, generate readable
# HIP for a sample, compile it for AMD and NVIDIA targets, and run it through
# the runtime where a GPU is present (elsewhere the runtime compiles it and
# says it did not launch).
#
#   scripts/demo.sh [SAMPLE.spn] [KERNEL] [DIMS] [SPECIALIZATION FLAGS...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
sample=${1:-samples/softmax.spn}
kernel=${2:-softmax}
dims=${3:-M=4096,N=4096}
shift $(( $# < 3 ? $# : 3 ))
flags=("$@")
# softmax keeps each row in registers, so its row length N is @static.
[ ${#flags[@]} -gt 0 ] || [ "$sample" != samples/softmax.spn ] || flags=(--static N=4096)
cd "$root"

bash scripts/setup.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)" --target spindle

out="$build/demo"
mkdir -p "$out"
echo "== spindle gen $sample --kernel $kernel ${flags[*]}  ->  $out/$kernel.hip"
"$build/bin/spindle" gen "$sample" --kernel "$kernel" "${flags[@]}" -o "$out/$kernel.hip"
# Show the kernel itself (the prelude above it is the same in every file).
sed -n '/^extern "C" __global__ __launch_bounds__/,/^}/p' "$out/$kernel.hip" | grep -v '^#line'

if command -v hipcc >/dev/null; then
  echo "== hipcc --offload-arch=gfx90a -c"
  hipcc --offload-arch=gfx90a -c "$out/$kernel.hip" -o "$out/$kernel.gfx90a.o" && echo "ok"
fi
echo "== spindle compile (runtime, hiprtc) --target gfx90a"
"$build/bin/spindle" compile "$sample" --kernel "$kernel" "${flags[@]}" --target gfx90a || true
echo "== spindle run --dims $dims"
"$build/bin/spindle" run "$sample" --kernel "$kernel" --dims "$dims"
echo "== spindle run --target cpu (the host, GPU semantics, bounds-checked)"
# A smaller default size: the host runs every GPU thread as a fiber.
cpu_dims=${3:-M=256,N=4096}
"$build/bin/spindle" run "$sample" --kernel "$kernel" --dims "$cpu_dims" --target cpu --reps 3
