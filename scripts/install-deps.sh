#!/usr/bin/env bash
# Installs the Debian packages hotline needs, by set: `build` (building and running hotline: the
# default, what `make demo` and `make install` use), `test` (the toolchains, consumers and peers
# the test suite runs: `make test`), `bench` (the peer tools the benchmarks compare with: `make
# bench`). Each set includes the ones before it. Idempotent: apt-get runs only when something
# is missing.
#   scripts/install-deps.sh [build|test|bench]
set -euo pipefail

build=(
  build-essential cmake ninja-build pkg-config zlib1g-dev
  libdw-dev libelf-dev libunwind-dev libzstd-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libcapstone-dev help2man libsqlite3-dev libpq-dev libperl-dev
  dpkg-dev libkpathsea-dev libpng-dev
)
test=(
  libgtest-dev libgmock-dev
  gfortran fp-compiler gm2-12 libgm2-12-dev
  binutils libc6-dbg python3 heaptrack busybox-static xz-utils bzip2 bc
  valgrind golang-go python3-jsonschema nodejs npm chromium postgresql git
  libdevel-nytprof-perl perltidy
  texlive-latex-base texlive-binaries poppler-utils
  uftrace
)
bench=(linux-perf)

set_name=${1:-build}
case $set_name in
  build) packages=("${build[@]}") ;;
  test) packages=("${build[@]}" "${test[@]}") ;;
  bench) packages=("${build[@]}" "${test[@]}" "${bench[@]}") ;;
  *)
    echo "install-deps: unknown set '$set_name' (build, test or bench)" >&2
    exit 2
    ;;
esac

# Tools a machine may have from elsewhere (NodeSource's nodejs bundles npm and conflicts with
# Debian's): present when their command is, whatever package brought it.
declare -A command_of=([nodejs]=node [npm]=npm [chromium]=chromium [golang-go]=go)
missing=()
for p in "${packages[@]}"; do
  if [ -n "${command_of[$p]:-}" ] && command -v "${command_of[$p]}" >/dev/null; then continue; fi
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
