#!/usr/bin/env bash
# Installs the Debian packages hotline needs to build, test and benchmark. Idempotent: it only
# calls apt-get when something is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libdw-dev libelf-dev libunwind-dev libzstd-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libcapstone-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev llvm
  gfortran fpc gm2-12 libgm2-12-dev
  binutils
  heaptrack valgrind linux-perf uftrace
  libc6-dbg
)

missing=()
for p in "${packages[@]}"; do
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
