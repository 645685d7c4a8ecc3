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
