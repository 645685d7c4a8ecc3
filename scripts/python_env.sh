#!/usr/bin/env bash
# A virtual environment with what the Python package needs to build and test
# (python/requirements-build.txt), installed from a local wheelhouse:
#
#   bash scripts/python_env.sh [VENV]     # default VENV: build/pyenv
#
# The wheelhouse (.whl/, or SPINDLE_WHEELHOUSE) is filled with `pip download`
# only when something is missing from it; every install is --no-index, so
# with a filled wheelhouse this runs offline. Prints the venv's python.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=$(realpath -m "${1:-$root/build/pyenv}")
wheels=${SPINDLE_WHEELHOUSE:-$root/.whl}
reqs=$root/python/requirements-build.txt
python=${PYTHON:-python3}

[ -x "$venv/bin/python" ] || "$python" -m venv "$venv" >&2
pip=("$venv/bin/python" -m pip -q --disable-pip-version-check)
if ! "${pip[@]}" install --no-index --find-links "$wheels" -r "$reqs" >/dev/null 2>&1; then
  echo "python_env: filling the wheelhouse $wheels (pip download)" >&2
  mkdir -p "$wheels"
  "${pip[@]}" download -d "$wheels" -r "$reqs" >&2
  "${pip[@]}" install --no-index --find-links "$wheels" -r "$reqs" >&2
fi
echo "$venv/bin/python"
