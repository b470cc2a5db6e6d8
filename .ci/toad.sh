#!/usr/bin/env bash
# Toad (PyPI batrachian-toad, the ACP front end of tests/frontends/acp/test_toad_tmux.py)
# needs Python >= 3.14; Debian bookworm has 3.11. This installs Debian sid's CPython 3.14
# into a private prefix (never into the system) and Toad, pinned by
# .ci/toad/requirements.txt, into a venv of it. Prints the `toad` executable's path on
# stdout (everything else goes to stderr); exits non-zero with a `toad.sh: FAILED` line.
#
# Why sid's binary packages: python3.14's source is not on the package mirror this machine
# and CI reach (its pool answers 404 for python3.14's source files; its .debs are served).
# sid's python3.14 needs sid's libc (2.42+, bookworm has 2.36), so sid's libc goes into the
# prefix too and patchelf points the interpreter at that prefix's loader: nothing outside
# the prefix changes. apt resolves the packages from sid's current index (sid moves: a
# pinned file name would disappear from the pool) and checks every file against it (the
# index is signed by Debian's archive keys, as for any apt install).
#
# Idempotent and quick once done: a stamp (the versions installed) under the cache dir
# ($CAVE_TOAD_CACHE, default ~/.cache/cave-ci/toad) skips everything while the venv's toad
# still starts. Idempotent: run it twice, the second run takes about a second.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
requirements="$here/toad/requirements.txt"
cache="${CAVE_TOAD_CACHE:-$HOME/.cache/cave-ci/toad}"
prefix="$cache/python3.14"
venv="$cache/venv"
stamp="$cache/stamp"
key="$(sha256sum "$requirements" | cut -c1-16)"
export DEBIAN_FRONTEND=noninteractive PIP_DISABLE_PIP_VERSION_CHECK=1

say() { echo "toad.sh: $*" >&2; }
fail() {
  say "FAILED: $*"
  exit 1
}

if [ -f "$stamp" ] && grep -qx "requirements $key" "$stamp" && "$venv/bin/toad" --version >/dev/null 2>&1; then
  echo "$venv/bin/toad"
  exit 0
fi

start=$SECONDS
command -v patchelf >/dev/null 2>&1 || {
  apt-get update -qq && apt-get install -y -qq patchelf >/dev/null
} || fail "could not install patchelf with apt-get"

rm -rf "$cache"
mkdir -p "$cache"
# A private apt root on sid: only its index and its .debs; the system's apt state is untouched.
root="$cache/apt"
mkdir -p "$root/etc/apt/apt.conf.d" "$root/etc/apt/preferences.d" "$root/etc/apt/sources.list.d" \
  "$root/var/lib/apt/lists/partial" "$root/var/cache/apt/archives/partial" "$root/var/lib/dpkg"
: >"$root/var/lib/dpkg/status"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main" \
  >"$root/etc/apt/sources.list"
apt_opts=(-q -o "Dir=$root" -o "Dir::State::status=$root/var/lib/dpkg/status"
  -o APT::Architecture=amd64 -o APT::Architectures::=amd64 -o Debug::NoLocking=1
  -o APT::Install-Recommends=0 -o APT::Sandbox::User=root)
apt-get "${apt_opts[@]}" update >/dev/null || fail "apt-get update of Debian sid's index"
# The whole dependency closure of python3.14 and python3.14-venv on an empty system.
mapfile -t packages < <(apt-get "${apt_opts[@]}" -s install python3.14 python3.14-venv |
  awk '/^Inst /{print $2}')
[ ${#packages[@]} -gt 0 ] || fail "apt could not resolve python3.14 in Debian sid"
mkdir -p "$cache/debs"
(cd "$cache/debs" && apt-get "${apt_opts[@]}" download "${packages[@]}" >/dev/null) ||
  fail "apt-get download of ${packages[*]}"
for deb in "$cache"/debs/*.deb; do
  dpkg-deb -x "$deb" "$prefix"
done
libs="$prefix/usr/lib/x86_64-linux-gnu"
python="$prefix/usr/bin/python3.14"
# The prefix's loader and libraries (DT_RPATH also serves the extension modules it loads).
patchelf --set-interpreter "$libs/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$libs" "$python" ||
  fail "patchelf $python"
"$python" -c 'import ssl, sqlite3, ctypes, lzma, bz2, zlib, readline' ||
  fail "the Python 3.14 in $prefix does not start or lacks a module"

# Debian's ensurepip looks for pip in /usr/share/python-wheels (outside the prefix): the
# venv gets pip from the prefix's own wheel instead.
"$python" -m venv --without-pip "$venv" || fail "python3.14 -m venv $venv"
pip_wheel="$(ls "$prefix"/usr/share/python-wheels/pip-*.whl)"
"$venv/bin/python" "$pip_wheel/pip" install -q --no-index "$pip_wheel" || fail "pip into $venv"
"$venv/bin/pip" install -q --no-deps -r "$requirements" || fail "pip install -r $requirements"
"$venv/bin/toad" --version >/dev/null || fail "$venv/bin/toad does not start"
rm -rf "$cache/debs" "$root"

{
  echo "requirements $key"
  "$venv/bin/python" -c 'import sys; print("python", sys.version.split()[0])'
  echo "built in $((SECONDS - start)) s"
} >"$stamp"
say "Python $("$venv/bin/python" -c 'import sys; print(sys.version.split()[0])') and $("$venv/bin/toad" --version 2>&1 | tail -1) in $cache ($((SECONDS - start)) s)"
echo "$venv/bin/toad"
