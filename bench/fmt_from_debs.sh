# Sourced by bench/'s GPU scripts. The GPU machines reach no package
# registry and lack Debian's libfmt-dev: the caller carries libfmt-dev and
# libfmt9 as .debs in .debs/ (git-ignored; `apt-get download libfmt-dev
# libfmt9` where a registry is reachable), unpacked here into the build
# directory, never into /.
#
#   fmt_cmake_dir ROOT BUILD
#
# Prints the directory of fmt's CMake config to pass as -Dfmt_DIR, or
# nothing when the system has fmt installed. Fails (status 1, a message on
# stderr) when neither the system nor .debs/ has it.
fmt_cmake_dir() {
  local root=$1 build=$2 deb
  if ls /usr/lib/cmake/fmt /usr/lib/*/cmake/fmt /usr/local/lib/cmake/fmt /usr/local/lib64/cmake/fmt \
       /usr/share/cmake/fmt 2>/dev/null | grep -q -i config; then
    return 0
  fi
  if ! ls "$root"/.debs/libfmt*.deb >/dev/null 2>&1; then
    echo "libfmt-dev is missing: install it, or put Debian's libfmt-dev and libfmt9 .debs in .debs/" >&2
    return 1
  fi
  mkdir -p "$build/debroot"
  for deb in "$root"/.debs/libfmt*.deb; do dpkg -x "$deb" "$build/debroot" || return 1; done
  dirname "$(ls "$build"/debroot/usr/lib/*/cmake/fmt/fmt-config.cmake)"
}

# bench_build_target ROOT BUILD TARGET WHO
#
# Configures bench/'s CMake project in BUILD (fmt as fmt_cmake_dir finds
# it) and builds TARGET, quietly: the scripts that build their one tool
# when not given it. On failure says so, naming WHO, and returns 2.
bench_build_target() {
  local root=$1 build=$2 target=$3 who=$4 fmt_dir
  fmt_dir=$(fmt_cmake_dir "$root" "$build") || { echo "$who: no fmt"; return 2; }
  local fmt_args=()
  [ -n "$fmt_dir" ] && fmt_args=(-Dfmt_DIR="$fmt_dir")
  cmake -S "$root/bench" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSPINDLE_BUILD_TESTS=OFF "${fmt_args[@]}" >/dev/null &&
    cmake --build "$build" --target "$target" -j "${BENCH_JOBS:-16}" >/dev/null || { echo "$who: build failed"; return 2; }
}
