#!/usr/bin/env bash
# Heap collector overhead on real programs, one after the other: Lua 5.4 (Debian's source)
# running a GC-churn script, and Debian's libsqlite3 inserting 300,000 rows into an indexed
# in-memory table (bench/programs/sqlite_inserts.c). Each runs plain, under `hotline record --heap
# -F 0` (every allocation), under `hotline record --heap-sample -F 0` (one per 512 KiB on
# average), under heaptrack and under valgrind's massif, interleaved. Prints CPU time (user+sys of
# the whole process tree, median of REPS interleaved runs), the ratio to the plain run, hotline's
# bytes per heap event, and the sampled mode's estimates beside the exact mode's counts.
# hotline-none is `hotline record -F 0` without the heap: what the recorder and the runtime's
# presence alone cost (starting the recorder, preloading the runtime, its shims passing every call
# through), which both heap modes include. None of these runs has a thread of the runtime's in
# the program (docs/how-it-works.md, "No thread when none is needed"): glibc's malloc keeps its
# single-threaded fast path.
#   bench/heap_overhead.sh [BUILD_DIR] [REPS] [WORKLOADS]   (WORKLOADS: "lua sqlite", the default)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
reps=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
work=${BENCH_OUT:-$here/out}/heap
mkdir -p "$work"
workloads=${3:-lua sqlite}
hotline=$build/bin/hotline
declare -A command title
for w in $workloads; do
  case $w in
    lua)
      bash "$here/lua-source.sh" "$work/lua-src"
      command[lua]="$work/lua-src/lua $here/programs/churn.lua"
      title[lua]="Lua 5.4 GC churn"
      ;;
    sqlite)
      gcc -O2 -g -o "$work/sqlite_inserts" "$here/programs/sqlite_inserts.c" -lsqlite3
      command[sqlite]="$work/sqlite_inserts 300000"
      title[sqlite]="sqlite3: 300000 inserts into an indexed in-memory table"
      ;;
    *) echo "heap_overhead.sh: unknown workload $w (lua, sqlite)" >&2 && exit 2 ;;
  esac
done

# shellcheck source=bench/lib.sh
source "$here/lib.sh"

tools=(plain hotline-none hotline hotline-sampled)
command -v heaptrack >/dev/null && tools+=(heaptrack)
command -v valgrind >/dev/null && tools+=(massif)
declare -A runs
for _ in $(seq "$reps"); do
  for w in $workloads; do
    # shellcheck disable=SC2206
    run=(${command[$w]})
    for tool in "${tools[@]}"; do
      case $tool in
        plain) t=$(cpu "$work" "${run[@]}") ;;
        hotline-none) t=$(cpu "$work" "$hotline" record -q -F 0 -o "$work/$w-none.hotline" -- "${run[@]}") ;;
        hotline) t=$(cpu "$work" "$hotline" record -q --heap -F 0 -o "$work/$w.hotline" -- "${run[@]}") ;;
        hotline-sampled) t=$(cpu "$work" "$hotline" record -q --heap-sample -F 0 -o "$work/$w-sampled.hotline" -- "${run[@]}") ;;
        heaptrack) t=$(cpu "$work" heaptrack -o "$work/$w.heaptrack" "${run[@]}") ;;
        massif) t=$(cpu "$work" valgrind --tool=massif --massif-out-file="$work/$w.massif" "${run[@]}") ;;
      esac
      runs[$w.$tool]+="$t "
    done
  done
done

for w in $workloads; do
  plain=$(echo "${runs[$w.plain]}" | tr ' ' '\n' | grep . | median)
  summary=$("$hotline" report -H -m "$work/$w.hotline" 2>/dev/null)
  allocs=$(echo "$summary" | awk '$1 == "alloc_calls" {print $2}')
  frees=$(echo "$summary" | awk '$1 == "free_calls" {print $2}')
  bytes=$(stat -c %s "$work/$w.hotline")
  events=$((allocs + frees))
  echo "${title[$w]}: $allocs allocations, $frees frees; median of $reps runs"
  printf "%-10s\t%s\t%s\t%s\n" tool "cpu s" ratio "ns/event over plain"
  for tool in "${tools[@]}"; do
    t=$(echo "${runs[$w.$tool]}" | tr ' ' '\n' | grep . | median)
    awk -v tool="$tool" -v t="$t" -v p="$plain" -v e="$events" \
      'BEGIN {printf "%-10s\t%.3f\t%.2fx\t%.0f\n", tool, t, t / p, (t - p) * 1e9 / e}'
  done
  awk -v b="$bytes" -v e="$events" 'BEGIN {printf "hotline profile: %d bytes, %.2f bytes per event\n", b, b / e}'
  # The last sampled run's estimates against the last exact run's counts (the same program and
  # input: the same allocations, up to the addresses).
  sampled=$("$hotline" report -H -m "$work/$w-sampled.hotline" 2>/dev/null)
  printf "%-12s\t%s\t%s\t%s\n" "--heap-sample" exact estimate "error"
  for key in total_bytes alloc_calls free_calls peak_bytes leaked_bytes; do
    exact=$(echo "$summary" | awk -v k=$key '$1 == k {print $2}')
    estimate=$(echo "$sampled" | awk -v k=$key '$1 == k {print $2}')
    awk -v k=$key -v x="$exact" -v e="$estimate" \
      'BEGIN {printf "%-12s\t%d\t%d\t%+.1f%%\n", k, x, e, x ? 100 * (e - x) / x : 0}'
  done
  echo "$sampled" | awk '$1 == "sampled_calls" {s = $2} $1 == "total_bytes_error" {e = $2}
    END {printf "sampled allocations: %d; stated standard error of total_bytes: %d\n", s, e}'
done
