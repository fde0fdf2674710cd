#!/usr/bin/env bash
# Instructions executed, counted (issue 30): what a run costs to count them. Lua 5.4 (Debian's
# source) built plain at -O2, and at -O2 with --coverage -fprofile-update=atomic, the build
# `hotline record --counts-only` counts instructions from (and, for the price of atomic counters,
# with plain ones); the same script under
# `hotline record --counts-only` (its reading of the counters after the run included) and under
# callgrind on the coverage build. CPU seconds are medians of REPS runs; ratios are to the plain
# build's run.
#   bench/instructions.sh [BUILD_DIR] [REPS]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
reps=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
work=${BENCH_OUT:-$here/out}/instructions
mkdir -p "$work"
hotline=$build/bin/hotline
# shellcheck source=bench/lib.sh
source "$here/lib.sh"

fixed="-Dluai_makeseed(L)=0 -Dl_randomizePivot()=0"  # the same work every run
bash "$here/lua-source.sh" "$work/plain" "$fixed"
bash "$here/lua-source.sh" "$work/coverage" "$fixed --coverage -fprofile-update=atomic"
bash "$here/lua-source.sh" "$work/single" "$fixed --coverage"
script=$here/programs/sorts_formats.lua
run() { for _ in $(seq "$reps"); do cpu "$work" "$@" 500000 30; done | median; }
plain=$(run "$work/plain/lua" "$script")
coverage=$(run "$work/coverage/lua" "$script")
single=$(run "$work/single/lua" "$script")
counted=$(run "$hotline" record -q --counts-only -o "$work/p.hotline" -- "$work/coverage/lua" "$script")
grind=$(run valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" "$work/coverage/lua" "$script")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
printf "%-44s %8s %8s\n" run "cpu s" "x plain"
printf "%-44s %8s %8s\n" "plain -O2" "$plain" 1.00
printf "%-44s %8s %8s\n" "--coverage (plain counters: not countable)" "$single" "$(ratio "$single" "$plain")"
printf "%-44s %8s %8s\n" "--coverage -fprofile-update=atomic" "$coverage" "$(ratio "$coverage" "$plain")"
printf "%-44s %8s %8s\n" "hotline record --counts-only (coverage)" "$counted" "$(ratio "$counted" "$plain")"
printf "%-44s %8s %8s\n" "valgrind --tool=callgrind (coverage)" "$grind" "$(ratio "$grind" "$plain")"
