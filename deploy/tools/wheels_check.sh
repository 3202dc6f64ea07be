#!/usr/bin/env bash
# The default install needs no compiler: every package of the locks that `make run` installs
# comes as a wheel for CPython 3.12 and 3.13 on x86-64 and arm64 Linux.
#
#   deploy/tools/wheels_check.sh PYTHON LOCK...
#
# Installs the locks into a fresh virtual environment with `pip install --only-binary :all:`
# (this machine's Python and platform), and asks the registry with `pip download --only-binary
# :all: --platform ... --python-version ...` for the others. Any package without a wheel fails it,
# named by pip.
set -euo pipefail
python=$1
shift
locks=("$@")
requirements=()
for lock in "${locks[@]}"; do requirements+=(-r "$lock"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$python" -m venv "$work/venv"
here=$("$work/venv/bin/python" -c 'import platform, sys; print(f"{platform.machine()} CPython {sys.version_info.major}.{sys.version_info.minor}")')
if ! out=$("$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  --only-binary :all: "${requirements[@]}" 2>&1); then
  grep -v "^WARNING: Location .* is ignored" <<<"$out" >&2
  echo "wheels: FAILED: a package of ${locks[*]} has no wheel for $here (named above)" >&2
  exit 1
fi
count=$("$work/venv/bin/python" -m pip list --format=freeze 2>/dev/null | grep -vc "^pip==")
echo "wheels: $here: ${count} packages installed from wheels alone"

# manylinux_2_28 covers Debian 11+, Ubuntu 20.04+, RHEL 8+; older tags are accepted too.
status=0
for arch in x86_64 aarch64; do
  for version in 3.12 3.13; do
    if [ "$here" = "$arch CPython $version" ]; then continue; fi  # installed above
    tags=()
    for tag in manylinux_2_28 manylinux_2_27 manylinux_2_24 manylinux2014 manylinux2010 manylinux1; do
      tags+=(--platform "${tag}_${arch}")
    done
    target="$work/$arch-$version"
    if out=$("$work/venv/bin/python" -m pip download --quiet --disable-pip-version-check \
      --no-deps --only-binary :all: --implementation cp --python-version "$version" \
      "${tags[@]}" -d "$target" "${requirements[@]}" 2>&1); then
      echo "wheels: $arch CPython $version: $(ls "$target" | wc -l) wheels in the registry"
    else
      grep -v "^WARNING: Location .* is ignored" <<<"$out" >&2
      echo "wheels: FAILED: a package has no wheel for $arch CPython $version (named above)" >&2
      status=1
    fi
    rm -rf "$target"
  done
done
exit $status
