#!/usr/bin/env bash
# Tracing overhead on recursive fib built with -finstrument-functions: hotline in counts and in
# timed mode against the same binary with empty hooks (the floor), against uftrace on that
# binary and gprof on a -pg build, in one run. CPU time (user+sys of the process tree, median of
# REPS interleaved runs), ratios to the plain build and to the floor, ns per event above the
# floor and profile bytes per event.
#   bench/trace_overhead.sh [BUILD_DIR] [REPS] [N]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
reps=${2:-3}
n=${3:-35}
here=$(cd "$(dirname "$0")" && pwd)
work=${BENCH_OUT:-$here/out}/trace
mkdir -p "$work"
gcc -O2 -g -o "$work/fib" "$here/programs/fib.c"
gcc -O2 -g -finstrument-functions -o "$work/fib_instr" "$here/programs/fib.c"
gcc -O2 -g -pg -o "$work/fib_pg" "$here/programs/fib.c"
gcc -O2 -shared -fPIC -o "$work/libempty_hooks.so" "$here/programs/empty_hooks.c"
hotline=$build/bin/hotline

cpu() {
  (cd "$work" && /usr/bin/time -f "%U %S" -o "$work/time" "$@" >/dev/null 2>"$work/stderr") || {
    cat "$work/stderr" >&2
    return 1
  }
  awk '{printf "%.3f\n", $1 + $2}' "$work/time"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

declare -A runs
tools=(plain floor counts timed gprof)
command -v uftrace >/dev/null && tools+=(uftrace)
for _ in $(seq "$reps"); do
  for tool in "${tools[@]}"; do
    case $tool in
      plain) t=$(cpu "$work/fib" "$n") ;;
      floor) t=$(cpu env LD_PRELOAD="$work/libempty_hooks.so" "$work/fib_instr" "$n") ;;
      counts) t=$(cpu "$hotline" record -q -F 0 --trace=counts -o "$work/counts.hotline" -- "$work/fib_instr" "$n") ;;
      timed) t=$(cpu "$hotline" record -q -F 0 --trace=timed -o "$work/timed.hotline" -- "$work/fib_instr" "$n") ;;
      gprof) t=$(cpu "$work/fib_pg" "$n") ;;
      uftrace) t=$(cpu uftrace record -d "$work/uftrace.data" "$work/fib_instr" "$n") ;;
    esac
    runs[$tool]+="$t "
  done
done

calls=$("$hotline" report -M -m "$work/counts.hotline" 2>/dev/null | awk -F'\t' '$6 == "fib" {print $3}')
events=$((2 * calls))
m() { echo "${runs[$1]}" | tr ' ' '\n' | grep . | median; }
plain=$(m plain)
floor=$(m floor)
echo "fib($n): $calls calls, $events entry/exit events; median of $reps runs"
printf "%-8s\t%s\t%s\t%s\t%s\n" tool "cpu s" "÷ plain" "÷ floor" "ns/event over floor"
for tool in "${tools[@]}"; do
  t=$(m "$tool")
  awk -v tool="$tool" -v t="$t" -v p="$plain" -v f="$floor" -v e="$events" \
    'BEGIN {printf "%-8s\t%.3f\t%.2fx\t%.2fx\t%.1f\n", tool, t, t / p, t / f, (t - f) * 1e9 / e}'
done
for mode in counts timed; do
  bytes=$(stat -c %s "$work/$mode.hotline")
  awk -v m="$mode" -v b="$bytes" -v e="$events" 'BEGIN {printf "hotline %s profile: %d bytes, %.3f bytes per event\n", m, b, b / e}'
done
if [ -d "$work/uftrace.data" ]; then
  bytes=$(du -sb "$work/uftrace.data" | cut -f1)
  awk -v b="$bytes" -v e="$events" 'BEGIN {printf "uftrace data: %d bytes, %.3f bytes per event\n", b, b / e}'
fi
