#!/usr/bin/env bash
# Heap collector overhead on a real program: Lua 5.4 (Debian's source) running a GC-churn script,
# plain, under `hotline record --heap -F 0` (every allocation), under `hotline record
# --heap-sample -F 0` (one per 512 KiB on average), under heaptrack and under valgrind's massif,
# in one run. Prints CPU time (user+sys of the whole process tree, median of REPS interleaved
# runs), the ratio to the plain run, hotline's bytes per heap event, and the sampled mode's
# estimates beside the exact mode's counts. hotline-none is `hotline record -F 0` without the heap:
# what the recorder and the runtime's presence alone cost (starting the recorder, preloading the
# runtime, its shims passing every call through), which both heap modes include. None of these
# runs has a thread of the runtime's in the program (docs/how-it-works.md, "No thread when none
# is needed"): glibc's malloc keeps its single-threaded fast path.
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
tools=(plain hotline-none hotline hotline-sampled)
command -v heaptrack >/dev/null && tools+=(heaptrack)
command -v valgrind >/dev/null && tools+=(massif)
for _ in $(seq "$reps"); do
  for tool in "${tools[@]}"; do
    case $tool in
      plain) t=$(cpu "$work" "$lua" "$script") ;;
      hotline-none) t=$(cpu "$work" "$hotline" record -q -F 0 -o "$work/none.hotline" -- "$lua" "$script") ;;
      hotline) t=$(cpu "$work" "$hotline" record -q --heap -F 0 -o "$work/churn.hotline" -- "$lua" "$script") ;;
      hotline-sampled) t=$(cpu "$work" "$hotline" record -q --heap-sample -F 0 -o "$work/churn-sampled.hotline" -- "$lua" "$script") ;;
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
# The last sampled run's estimates against the last exact run's counts (the same program and
# input: the same allocations, up to the addresses).
sampled=$("$hotline" report -H -m "$work/churn-sampled.hotline")
printf "%-12s\t%s\t%s\t%s\n" "--heap-sample" exact estimate "error"
for key in total_bytes alloc_calls free_calls peak_bytes leaked_bytes; do
  exact=$(echo "$summary" | awk -v k=$key '$1 == k {print $2}')
  estimate=$(echo "$sampled" | awk -v k=$key '$1 == k {print $2}')
  awk -v k=$key -v x="$exact" -v e="$estimate" \
    'BEGIN {printf "%-12s\t%d\t%d\t%+.1f%%\n", k, x, e, x ? 100 * (e - x) / x : 0}'
done
echo "$sampled" | awk '$1 == "sampled_calls" {s = $2} $1 == "total_bytes_error" {e = $2}
  END {printf "sampled allocations: %d; stated standard error of total_bytes: %d\n", s, e}'
