#!/usr/bin/env bash
# Installs every Debian package Spindle needs. Idempotent: when all of them
# are present it installs nothing and never touches the network.
set -euo pipefail

PACKAGES=(
  build-essential cmake git python3
  python3-dev python3-venv  # the Python package: its headers, and venvs for its build and tests (scripts/python_env.sh)
  libfmt-dev            # all text formatting
  libgtest-dev          # unit tests
  hipcc libamdhip64-dev # AMD: hipcc and hiprtc (ROCm 5.2), compile-only here
  libclang-cpp15-dev llvm-15-dev libclang-15-dev  # spindle-verify (LibTooling)
  clang libclang-rt-14-dev                         # libFuzzer and sanitizers
  clang-format-14                                  # the pinned formatter (scripts/check_format.sh)
  libboost-context-dev  # the cpu target: one fiber per GPU thread (runtime/src/cpu/)
  libhiredis-dev        # the remote cache: hiredis 0.14's header to build (the library is dlopen'ed at run time)
  redis-server          # the remote cache's tests start their own servers (tests/remote_cache/)
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
