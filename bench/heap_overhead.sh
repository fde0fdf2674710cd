#!/usr/bin/env bash
# Heap collector overhead on a real program: Lua 5.4 (Debian's source) running a GC-churn script,
# plain, under `hotline record --heap -F 0`, under heaptrack and under valgrind's massif, in one
# run. Prints CPU time (user+sys of the whole process tree, median of REPS interleaved runs), the
# ratio to the plain run, and hotline's bytes per heap event.
#   bench/heap_overhead.sh [BUILD_DIR] [REPS]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
reps=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
work=${BENCH_OUT:-$here/out}/heap
mkdir -p "$work"
bash "$here/lua-source.sh" "$work/lua-src"
lua=$work/lua-src/lua
script=$here/programs/churn.lua
hotline=$build/bin/hotline

# shellcheck source=bench/lib.sh
source "$here/lib.sh"

declare -A runs
tools=(plain hotline)
command -v heaptrack >/dev/null && tools+=(heaptrack)
command -v valgrind >/dev/null && tools+=(massif)
for _ in $(seq "$reps"); do
  for tool in "${tools[@]}"; do
    case $tool in
      plain) t=$(cpu "$work" "$lua" "$script") ;;
      hotline) t=$(cpu "$work" "$hotline" record -q --heap -F 0 -o "$work/churn.hotline" -- "$lua" "$script") ;;
      heaptrack) t=$(cpu "$work" heaptrack -o "$work/churn.heaptrack" "$lua" "$script") ;;
      massif) t=$(cpu "$work" valgrind --tool=massif --massif-out-file="$work/churn.massif" "$lua" "$script") ;;
    esac
    runs[$tool]+="$t "
  done
done

plain=$(echo "${runs[plain]}" | tr ' ' '\n' | grep . | median)
summary=$("$hotline" report -H -m "$work/churn.hotline")
allocs=$(echo "$summary" | awk '$1 == "alloc_calls" {print $2}')
frees=$(echo "$summary" | awk '$1 == "free_calls" {print $2}')
bytes=$(stat -c %s "$work/churn.hotline")
events=$((allocs + frees))
echo "Lua 5.4 GC churn: $allocs allocations, $frees frees; median of $reps runs"
printf "%-10s\t%s\t%s\t%s\n" tool "cpu s" ratio "ns/event over plain"
for tool in "${tools[@]}"; do
  t=$(echo "${runs[$tool]}" | tr ' ' '\n' | grep . | median)
  awk -v tool="$tool" -v t="$t" -v p="$plain" -v e="$events" \
    'BEGIN {printf "%-10s\t%.3f\t%.2fx\t%.0f\n", tool, t, t / p, (t - p) * 1e9 / e}'
done
awk -v b="$bytes" -v e="$events" 'BEGIN {printf "hotline profile: %d bytes, %.2f bytes per event\n", b, b / e}'
