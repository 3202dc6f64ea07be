#!/usr/bin/env bash
# Make the virtual environment VENV with PYTHON (when it is not there yet) and install lock files
# into it: with uv (the one on PATH, else one pip installs into the venv), falling back to pip.
#
#   deploy/tools/venv.sh VENV PYTHON [--editable] LOCK...
#
# --editable also installs the project itself (its console scripts), without dependencies.
set -euo pipefail
venv=$1 python=$2
shift 2
editable=0
if [ "${1:-}" = "--editable" ]; then editable=1; shift; fi
locks=("$@")
vpy="$venv/bin/python"
say() { echo "venv: $*" >&2; }

if [ ! -x "$vpy" ]; then
  if [ -z "$python" ]; then
    say "error: no Python 3.12 or newer found on PATH (python3.13, python3.12, python3, python)." \
      "Install one (Debian/Ubuntu: sudo apt-get install python3 python3-venv), or point make at it:" \
      "make run PYTHON=/path/to/python3.12"
    exit 1
  fi
  if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
    found=$("$python" --version 2>&1 || echo "$python does not run")
    say "error: $python is $found; the workbench needs Python 3.12 or newer (Django 6)." \
      "Point make at one: make run PYTHON=/path/to/python3.12"
    exit 1
  fi
  uv=$(command -v uv || true)
  if [ -n "$uv" ] && "$uv" venv --quiet --python "$python" "$venv" 2>/dev/null; then
    :
  elif ! err=$("$python" -m venv "$venv" 2>&1); then
    rm -rf "$venv"
    say "error: $python cannot make a virtual environment (${err##*$'\n'})." \
      "Its venv module is missing: on Debian/Ubuntu, sudo apt-get install python3-venv"
    exit 1
  fi
fi

# uv: on PATH, already in the venv, or installed there by pip (a wheel). Any failure: pip.
uv=$(command -v uv || true)
if [ -z "$uv" ] && [ -x "$venv/bin/uv" ]; then uv=$venv/bin/uv; fi
if [ -z "$uv" ] && "$vpy" -m pip --version >/dev/null 2>&1 \
  && "$vpy" -m pip install --quiet --disable-pip-version-check uv >/dev/null 2>&1; then
  uv=$venv/bin/uv
fi

install_with_uv() {
  local lock
  for lock in "${locks[@]}"; do
    "$uv" pip install --quiet --python "$vpy" -r "$lock" || return 1
  done
  if ((editable)); then "$uv" pip install --quiet --python "$vpy" --no-deps -e . || return 1; fi
}

install_with_pip() {
  if ! "$vpy" -m pip --version >/dev/null 2>&1; then
    "$vpy" -m ensurepip --upgrade >/dev/null || {
      say "error: the virtual environment has no pip and uv could not install; remove $venv and retry"
      return 1
    }
  fi
  local lock
  for lock in "${locks[@]}"; do
    "$vpy" -m pip install --quiet --disable-pip-version-check -r "$lock" || return 1
  done
  if ((editable)); then
    "$vpy" -m pip install --quiet --disable-pip-version-check --no-deps -e . || return 1
  fi
}

if [ -n "$uv" ] && install_with_uv; then
  exit 0
fi
[ -z "$uv" ] || say "uv could not install the locks; trying pip"
install_with_pip
