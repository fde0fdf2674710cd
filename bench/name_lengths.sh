#!/usr/bin/env bash
# How long the names people read are: a C++17 program with templates, lambdas, std::function
# and threads (bench/programs/cxx_templates.cc), recorded once and reported with hotline's short
# names (the default) and with --full-names. Prints the median and the longest function name in
# the flat table (-C) and the longest row of `report -A -C -M`, unlimited width (as in a pipe).
#   bench/name_lengths.sh [BUILD_DIR]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
g++ -std=c++17 -O2 -g -pthread -o "$work/cxx" "$here/programs/cxx_templates.cc"
"$build/bin/hotline" record -q -o "$work/cxx.hotline" -- "$work/cxx"

# The names as the human table prints them: its last column (-m keeps whole names: they are
# data). Lengths in characters, "…" being one.
chars() { perl -CS -ne 'chomp; print length($_), "\n"'; }
names() {
  "$build/bin/hotline" report -C -N "$@" "$work/cxx.hotline" 2>/dev/null | tail -n +3 |
    sed -E 's/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+  //'
}
longest_row() {
  "$build/bin/hotline" report -A -C -M "$@" "$work/cxx.hotline" 2>/dev/null |
    chars | sort -n | tail -1
}
for mode in short full; do
  flag=()
  [ "$mode" = full ] && flag=(--full-names)
  lengths=$(names "${flag[@]}" | chars)
  printf '%-6s names: %4d functions, median %4d characters, longest %5d; longest row of -A -C -M %5d\n' \
    "$mode" "$(echo "$lengths" | wc -l)" "$(echo "$lengths" | median)" \
    "$(echo "$lengths" | sort -n | tail -1)" "$(longest_row "${flag[@]}")"
done
