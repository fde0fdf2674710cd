#!/usr/bin/env bash
# `make demo`: profiles the bundled example and prints its report.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
out="$build/demo"
mkdir -p "$out"
cc -O2 -g -fno-omit-frame-pointer -o "$out/wordfreq" "$here/wordfreq.c"
echo "== hotline record -o $out/wordfreq.hotline -- $out/wordfreq"
"$build/bin/hotline" record -o "$out/wordfreq.hotline" -- "$out/wordfreq"
echo
echo "== hotline report -A $out/wordfreq.hotline"
"$build/bin/hotline" report -A "$out/wordfreq.hotline"
