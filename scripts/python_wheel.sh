#!/usr/bin/env bash
# Builds and installs the Python package the way a user does, offline:
# `pip install --no-index --find-links .whl .` into a venv made by
# scripts/python_env.sh (build isolation on: the build requirements come from
# the wheelhouse too), then runs tests/python against the installed package
# from outside the source tree.
#
#   bash scripts/python_wheel.sh [VENV]   # default VENV: build/wheelenv
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-$root/build/wheelenv}
wheels=${SPINDLE_WHEELHOUSE:-$root/.whl}
py=$(bash "$root/scripts/python_env.sh" "$venv")
start=$(date +%s)
"$py" -m pip install -q --disable-pip-version-check --no-index --find-links "$wheels" "$root"
echo "python_wheel: built and installed spindle-kernels in $(($(date +%s) - start)) s"
cd "$(mktemp -d)"
# The installed package, not build/python: nothing on PYTHONPATH.
env -u PYTHONPATH "$py" -c "import spindle, os; print('python_wheel: spindle from', os.path.dirname(spindle.__file__))"
# fmt is header-only in the extension, Boost.Context travels with it.
ext=$("$py" -c 'import spindle._spindle as m; print(m.__file__)')
if ldd "$ext" | grep -E "libfmt|libboost" | grep -v "=> $(dirname "$ext")/"; then
  echo "python_wheel: the extension needs a shared fmt or Boost library from outside the package" >&2
  exit 1
fi
env -u PYTHONPATH "$py" -m pytest -q -p no:cacheprovider "$root/tests/python"
