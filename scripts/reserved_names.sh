#!/usr/bin/env bash
# Regenerates generator/printer/reserved_macros.inc and
# reserved_declarations.inc: every identifier that the headers included by
# templates/prelude.in define as a macro, and every one they declare at
# global scope (functions, variables, typedefs, records, enums and
# their unscoped enumerators, namespaces, using-declarations), with hipcc (AMD)
# and nvcc (NVIDIA), in the host and the device compilation pass. A kernel
# author may name a const, local, def or kernel `M_PI`, `rint` or `errno`; the
# generator renames such names (generator/printer/name_supply.cpp) so that the
# generated file still compiles: a macro name everywhere (a macro replaces any
# token), a declared name at file scope (consts, defs, kernels), where it would
# redefine the header's entity; a local may shadow a header's function.
#
# Regenerate (writes the files only once every pass has succeeded):
#   bash scripts/reserved_names.sh generator/printer
# Per-source counts go to stderr. The compilers can be overridden with
# HIPCC=..., NVCC=..., CLANGXX=... (clang++ that parses nvcc's output).
#
# Last run with (these versions are also written into the .inc header):
#   hipcc    HIP 5.2.21153-0 (Debian), Debian clang version 15.0.6, /usr/bin/hipcc
#   nvcc     CUDA 13.0, V13.0.88, /usr/local/cuda/bin/nvcc, host compiler gcc 12.2.0
#   clang++  Debian clang version 15.0.6 (clang++-15)
#
# The passes (PRELUDE is templates/prelude.in, copied to prelude.hip and
# prelude.cu; STD is each dialect of HIP_STDS / CUDA_STDS below):
#
# 1. HIP macros, host and device pass (hipcc 5.2 forwards these to clang):
#      hipcc STD --offload-arch=gfx90a --cuda-host-only   -dM -E prelude.hip
#      hipcc STD --offload-arch=gfx90a --cuda-device-only -dM -E prelude.hip
# 2. CUDA macros. `nvcc -E` preprocesses for the *device* pass (nvcc --dryrun
#    shows it runs `gcc -D__CUDA_ARCH__=900 -DCUDA_DOUBLE_MATH_FUNCTIONS -E`);
#    the host pass of `nvcc -c` is that same gcc command without those two
#    macros, which -U gives (checked: identical -dM output to the host gcc -E
#    line of `nvcc --dryrun -c`):
#      nvcc STD -arch=sm_90 -E -Xcompiler -dM prelude.cu                  (device)
#      nvcc STD -arch=sm_90 -E -Xcompiler -dM -U__CUDA_ARCH__ \
#           -UCUDA_DOUBLE_MATH_FUNCTIONS prelude.cu                         (host)
# 3. HIP declarations: clang's AST of the prelude, each pass:
#      hipcc STD --offload-arch=gfx90a --cuda-host-only|--cuda-device-only \
#            -fsyntax-only -Xclang -ast-dump prelude.hip
# 4. CUDA declarations. clang 15 cannot parse CUDA 13 as CUDA (it supports
#    CUDA <= 11.5; with CUDA 13 it stops at the texture references CUDA 12
#    removed: "no template named 'texture'", "'texture_fetch_functions.h' file
#    not found"), and it would see clang's own CUDA wrappers rather than what
#    nvcc sees anyway. So nvcc preprocesses (passes as in 2, without -dM) and
#    clang++-15 parses that output as plain C++:
#      nvcc STD -arch=sm_90 -E [-U...] prelude.cu -o pass.ii
#      clang++-15 -x c++-cpp-output STD -fsyntax-only -w -ferror-limit=0 \
#                 -Xclang -ast-dump pass.ii
#    clang reports a few hundred errors there, all inside function bodies or
#    in namespace std (inline-asm constraints such as "h" that x86 lacks,
#    nvcc-only builtins, gcc's __integer_pack); the declarations themselves
#    are all in the AST (every function that crt/math_functions.h declares is
#    found). Exit status 1 (errors) is therefore accepted, a crash is not.
#
# From each AST dump (the text dump, parsed by decls.pl below; checked to give
# exactly the names that a walk of -ast-dump=json gives) a name is taken from
# each declaration at global scope: the TranslationUnitDecl's children, and the children of the contexts
# whose members are visible at global scope: extern "C"/"C++" blocks,
# anonymous and inline namespaces and namespaces named by a global `using
# namespace` (hip_fp16.h has an anonymous one), plus the enumerators of
# unscoped enums. Out-of-line member definitions ("parent 0x..." in the dump,
# e.g. HIP's __HIP_Coordinates<F>::x) are skipped, as are operators and
# parameters (which are never at global scope).
#
# Dialects: every standard the file may be compiled in. hipcc 5.2 adds
# -std=c++11 when none is given (the golden compile checks, scripts/demo.sh);
# the runtime compiles with -std=c++17 (hiprtc, nvrtc); nvcc without -std
# leaves gcc's default, gnu++17, whose `linux` and `unix` macros are real
# clashes; a user's build may well pass -std=gnu++17 or -std=c++20, and C++20
# makes libstdc++ bring in <unistd.h> (read, write, sleep, ...). nvcc has no
# -std=gnu++17 (its default is that).
#
# Filtered out: names beginning with `__` (the lexer refuses them:
# generator/frontend/lexer.cpp, lex_reserved_name); everything else, `_Exit` or
# `_SC_PAGESIZE` included, is a name a kernel author can write.
#
# Only macros still defined at the end of the prelude count (-dM gives that
# state); helpers the headers #undef again cannot clash with later code.
#
# Not covered: hiprtc and nvrtc, which have no preprocess-only mode. hiprtc's
# built-in header (the __hipRTC_header text in libhiprtc-builtins.so.5) was
# checked by hand, parsed by clang-15 with -D__HIPCC_RTC__ in front of the
# prelude: its macros and global names are all in the hipcc lists. nvrtc's
# built-in headers are the CUDA headers read with __CUDACC_RTC__ defined (no C
# library); not checked. Other offload targets were checked by hand to give
# the same list: gfx940; sm_75, sm_100, sm_120.
set -euo pipefail
export LC_ALL=C # byte-order sort, locale-independent output

die() {
  echo "reserved_names.sh: error: $*; nothing written" >&2
  exit 1
}
trap 'die "command failed at line $LINENO"' ERR

out=${1:?usage: reserved_names.sh OUTPUT_DIR (generator/printer)}
[[ -d $out ]] || die "$out is not a directory"
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prelude=$repo/templates/prelude.in
[[ -f $prelude ]] || die "$prelude not found"

HIPCC=${HIPCC:-hipcc}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
CLANGXX=${CLANGXX:-clang++-15}
HIP_ARCH=gfx90a
CUDA_ARCH=sm_90
# "" is the compiler's own default (hipcc: c++11; nvcc: gcc's, gnu++17).
HIP_STDS=("" -std=c++17 -std=gnu++17 -std=c++20)
CUDA_STDS=("" -std=c++11 -std=c++17 -std=c++20)
CUDA_DEFAULT_STD=-std=gnu++17 # what clang parses nvcc's default output as

need() {
  command -v "$1" >/dev/null 2>&1 || die "$1 not found ($2); install it or set $3"
}
need "$HIPCC" "the HIP compiler, ROCm 5.2" HIPCC
need "$NVCC" "the CUDA compiler" NVCC
need "$CLANGXX" "clang++ that parses nvcc's preprocessed output" CLANGXX
need perl "parses the AST dumps" PATH
need gcc "nvcc's host compiler" PATH

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$prelude" "$work/prelude.hip"
cp "$prelude" "$work/prelude.cu"

# run NAME CMD...: runs CMD in $work with stdout to NAME.out and stderr to
# NAME.err; on failure shows the end of NAME.err and stops.
run() {
  local name=$1
  shift
  if ! (cd "$work" && "$@" >"$name.out" 2>"$name.err"); then
    tail -n 20 "$work/$name.err" >&2
    die "'$*' failed"
  fi
}

# Macro names of a -dM listing.
macro_names() { sed -n 's/^#define \([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$1"; }

# Global-scope names of a clang -ast-dump text dump (see the notes above).
# Each dump line is `<tree prefix>Kind 0xADDR [parent 0x..] [prev 0x..]
# <range> location [flags] name ['type'] ...`; the prefix is two characters a
# level, so its length gives the depth.
cat >"$work/decls.pl" <<'PERL'
use strict;
use warnings;
my $file = $ARGV[0];
my $ident = qr/[A-Za-z_][A-Za-z0-9_]*/;
my %nominated;  # namespaces named by a global-scope `using namespace`
my %names;
my $named_kinds = qr/^(?:FunctionDecl|FunctionTemplateDecl|VarDecl|VarTemplateDecl|TypedefDecl|TypeAliasDecl|TypeAliasTemplateDecl|CXXRecordDecl|RecordDecl|EnumDecl|ClassTemplateDecl|NamespaceAliasDecl|UsingDecl|ConceptDecl|BuiltinTemplateDecl)$/;

# One pass over the dump; with $collect, records names. Returns how many
# namespaces it found newly nominated by a global `using namespace`.
sub walk {
  my ($collect) = @_;
  my @ctx;  # $ctx[d]: the node last seen at depth d makes its children
            # global ('T') or is an unscoped global enum ('E'), or ''
  my $found = 0;
  open(my $fh, '<', $file) or die "cannot read $file: $!\n";
  while (my $line = <$fh>) {
    next unless $line =~ /^([| `]*)[|`]-(\w+) 0x[0-9a-f]+(.*)$/;
    my ($d, $kind, $rest) = (length($1) / 2 + 1, $2, $3);
    my $up = $ctx[$d - 1] // '';
    $#ctx = $d;
    $ctx[$d] = '';
    next unless $d == 1 || $up eq 'T' || $up eq 'E';
    my $parent = 0;
    while ($rest =~ s/^ (parent|prev) 0x[0-9a-f]+//) { $parent = 1 if $1 eq 'parent'; }
    next if $parent;                          # out-of-line member definition
    $rest =~ s/^ (<(?:[^<>]++|(?1))*>)//;     # source range, may nest <...>
    $rest =~ s/^ (?:<[^<>]*>)?[^ ]*//;        # col:3, <invalid sloc>, <scratch space>:71:1
    my @w = split ' ', $rest;
    my %flag;
    $flag{shift @w} = 1 while @w && $w[0] =~ /^(?:implicit|used|referenced|invalid|inline|hidden|imported)$/;
    if ($up eq 'E') {                          # an unscoped enum's enumerators
      $names{$w[0]} = 1 if $collect && $kind eq 'EnumConstantDecl' && @w && $w[0] =~ /^$ident$/;
      next;
    }
    if ($kind eq 'LinkageSpecDecl' || $kind eq 'ExportDecl') { $ctx[$d] = 'T'; next; }
    if ($kind eq 'NamespaceDecl') {
      my $name = @w && $w[0] =~ /^$ident$/ ? $w[0] : '';
      $ctx[$d] = 'T' if $name eq '' || $flag{inline} || $nominated{$name};
      $names{$name} = 1 if $collect && $name ne '';
      next;
    }
    if ($kind eq 'UsingDirectiveDecl') {
      my ($ns) = $rest =~ /Namespace 0x[0-9a-f]+ '([^']*)'/;
      $found++ if defined $ns && $ns ne '' && !$nominated{$ns}++;
      next;
    }
    next unless $kind =~ $named_kinds;
    my $tagged = 0;
    while (@w && $w[0] =~ /^(?:struct|class|union|__interface)$/) { shift @w; $tagged = 1; }
    $ctx[$d] = 'E' if $kind eq 'EnumDecl' && !$tagged;   # `enum class` is scoped
    next unless @w;
    my $name = $w[0];
    $name =~ s/^.*:://;                        # using std::sin -> sin
    next unless $name =~ /^$ident$/;
    next if $name eq 'operator';               # operator new, operator delete
    next if $name eq 'definition' && @w == 1;  # `struct definition`: anonymous
    $names{$name} = 1 if $collect;
  }
  close $fh;
  return $found;
}
# A `using namespace N;` may follow N's blocks: walk until none is new.
while (walk(0)) {}
walk(1);
print "$_\n" for sort keys %names;
PERL
decl_names() { perl "$work/decls.pl" "$1"; }

# AST dump of nvcc's preprocessed output: clang exits 1 for the errors
# described above; anything else (a crash, a missing file) stops here.
clang_ast_of_ii() {
  local name=$1 std=$2 ii=$3 rc=0
  (cd "$work" && "$CLANGXX" -x c++-cpp-output "$std" -fsyntax-only -w -ferror-limit=0 \
    -fno-color-diagnostics -Xclang -ast-dump "$ii" >"$name.out" 2>"$name.err") || rc=$?
  if [[ $rc -gt 1 ]] || grep -q "PLEASE submit a bug report" "$work/$name.err" ||
    ! head -n 1 "$work/$name.out" | grep -q '^TranslationUnitDecl'; then
    tail -n 20 "$work/$name.err" >&2
    die "$CLANGXX could not parse nvcc's output $ii (exit $rc)"
  fi
}

sources=(hip-macros-host hip-macros-device cuda-macros-host cuda-macros-device
  hip-decls-host hip-decls-device cuda-decls-host cuda-decls-device)
for s in "${sources[@]}"; do : >"$work/$s.names"; done

# --- HIP (hipcc) ----------------------------------------------------------
for std in "${HIP_STDS[@]}"; do
  tag=hip${std#-std=}
  for pass in host device; do
    run "$tag-$pass-dM" "$HIPCC" ${std:+"$std"} --offload-arch=$HIP_ARCH --cuda-$pass-only -dM -E prelude.hip
    macro_names "$work/$tag-$pass-dM.out" >>"$work/hip-macros-$pass.names"
    run "$tag-$pass-ast" "$HIPCC" ${std:+"$std"} --offload-arch=$HIP_ARCH --cuda-$pass-only -fsyntax-only \
      -fno-color-diagnostics -Xclang -ast-dump prelude.hip
    decl_names "$work/$tag-$pass-ast.out" >>"$work/hip-decls-$pass.names"
  done
done

# --- CUDA (nvcc) ----------------------------------------------------------
for std in "${CUDA_STDS[@]}"; do
  tag=cuda${std#-std=}
  for pass in host device; do
    undef=()
    if [[ $pass == host ]]; then undef=(-U__CUDA_ARCH__ -UCUDA_DOUBLE_MATH_FUNCTIONS); fi
    run "$tag-$pass-dM" "$NVCC" ${std:+"$std"} -arch=$CUDA_ARCH -E -Xcompiler -dM "${undef[@]}" prelude.cu
    # The pass is the one intended: __CUDA_ARCH__ in the device pass only.
    if grep -q '^#define __CUDA_ARCH__ ' "$work/$tag-$pass-dM.out"; then
      [[ $pass == device ]] || die "nvcc's host pass defines __CUDA_ARCH__"
    else
      [[ $pass == host ]] || die "'nvcc -E' no longer preprocesses for the device"
    fi
    macro_names "$work/$tag-$pass-dM.out" >>"$work/cuda-macros-$pass.names"
    run "$tag-$pass-E" "$NVCC" ${std:+"$std"} -arch=$CUDA_ARCH -E "${undef[@]}" prelude.cu -o "$tag-$pass.ii"
    clang_ast_of_ii "$tag-$pass-ast" "${std:-$CUDA_DEFAULT_STD}" "$tag-$pass.ii"
    decl_names "$work/$tag-$pass-ast.out" >>"$work/cuda-decls-$pass.names"
  done
done

# --- Filter, check, merge -------------------------------------------------
# Names the lexer refuses (a leading "__") are left out of every list.
for s in "${sources[@]}"; do
  grep -E '^[A-Za-z_][A-Za-z0-9_]*$' "$work/$s.names" | grep -v '^__' | sort -u >"$work/$s.kept" || true
done

# Each source must have produced a plausible list, or a pass silently broke.
check_has() {
  local s=$1 n
  shift
  for n in "$@"; do
    grep -qx "$n" "$work/$s.kept" || die "$s has no '$n': a pass produced an incomplete list"
  done
}
for s in hip-macros-host hip-macros-device cuda-macros-host cuda-macros-device; do
  check_has "$s" M_PI INT_MAX NULL HUGE_VALF
done
check_has hip-decls-host sinf rint lgamma hipMalloc dim3
check_has hip-decls-device sinf rint lgamma dim3 threadIdx
check_has cuda-decls-host sinf rint lgamma cudaMalloc dim3 half
check_has cuda-decls-device sinf rint lgamma dim3 half threadIdx

(cd "$work" && sort -u "${sources[@]/%/.kept}") >"$work/all"
(cd "$work" && sort -u ./*-macros-*.kept) >"$work/macros"
(cd "$work" && sort -u ./*-decls-*.kept) >"$work/declarations"
required=(M_PI INT_MAX M_E M_SQRT2 HUGE_VALF RAND_MAX CHAR_BIT UINT_MAX LLONG_MAX NULL EOF errno
  rint round trunc nearbyint cbrt sinh cosh tan expm1 log1p erfc lgamma tgamma lround signbit
  isnan isinf)
for n in "${required[@]}"; do
  grep -qx "$n" "$work/all" || die "the merged list lacks '$n'"
done

for s in "${sources[@]}"; do
  printf '%-20s %6d\n' "$s" "$(wc -l <"$work/$s.kept")" >&2
done
printf '%-20s %6d\n' total "$(wc -l <"$work/all")" >&2

# --- Write ----------------------------------------------------------------
# first_line PATTERN CMD...: the first line of CMD's output matching PATTERN.
first_line() {
  local pattern=$1 text
  shift
  text=$("$@" 2>/dev/null) || true
  text=$(grep -m1 -e "$pattern" <<<"$text") || text=unknown
  echo "$text"
}
hip_version=$(first_line '^HIP version' "$HIPCC" --version)
hip_clang=$(first_line 'clang version' "$HIPCC" --version)
nvcc_version=$(first_line '^Cuda compilation tools' "$NVCC" --version)
gcc_version=$(first_line . gcc --version)
clang_version=$(first_line version "$CLANGXX" --version)
# write_list WHAT NAMES_FILE OUTPUT
write_list() {
  {
    echo "// Generated by scripts/reserved_names.sh; do not edit by hand. Regenerate with"
    echo "//   bash scripts/reserved_names.sh generator/printer"
    echo "// Every identifier that templates/prelude.in's headers $1 with hipcc"
    echo "// ($HIP_ARCH) and nvcc ($CUDA_ARCH), host and device pass, in the dialects the"
    echo "// script lists; names beginning with \"__\" are left out (the language refuses"
    echo "// them). One string a line, for an initializer list."
    echo "// hipcc: $hip_version, $hip_clang"
    echo "// nvcc: $nvcc_version; host compiler $gcc_version"
    echo "// parser of nvcc's output: $clang_version"
    sed 's/.*/"&",/' "$2"
  } >"$3"
}
write_list "define as macros" "$work/macros" "$work/reserved_macros.inc"
write_list "declare at global scope" "$work/declarations" "$work/reserved_declarations.inc"
for f in reserved_macros.inc reserved_declarations.inc; do
  cp "$work/$f" "$out/$f.tmp.$$"
done
for f in reserved_macros.inc reserved_declarations.inc; do
  mv -f "$out/$f.tmp.$$" "$out/$f"
done
echo "wrote $(wc -l <"$work/macros") macro and $(wc -l <"$work/declarations") declared names to $out" >&2
