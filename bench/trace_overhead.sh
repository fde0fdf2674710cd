#!/usr/bin/env bash
# Tracing overhead on call-heavy programs built with -finstrument-functions — recursive fib in C,
# std::sort with a lambda comparator in C++ (inlined template code at -O2), and Lua 5.4 (Debian's
# source) running a recursive fib script — hotline in counts and in timed mode against the same
# binary with empty hooks (the floor), against uftrace on that binary and
# gprof on a -pg build, in one run. CPU time (user+sys of the process tree, median of
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

# shellcheck source=bench/lib.sh
source "$here/lib.sh"
# Runs from the work directory: -pg builds write gmon.out there.
cpu_here() { (cd "$work" && cpu "$work" "$@"); }

# bench LABEL PLAIN INSTRUMENTED PG ARGS...: one table (PG may be "": no gprof row).
bench() {
  local label=$1 plain_bin=$2 instr_bin=$3 pg_bin=$4
  shift 4
  declare -A runs=()
  local tools=(plain floor counts timed)
  [ -n "$pg_bin" ] && tools+=(gprof)
  command -v uftrace >/dev/null && tools+=(uftrace)
  for _ in $(seq "$reps"); do
    for tool in "${tools[@]}"; do
      case $tool in
        plain) t=$(cpu_here "$plain_bin" "$@") ;;
        floor) t=$(cpu_here env LD_PRELOAD="$work/libempty_hooks.so" "$instr_bin" "$@") ;;
        counts) t=$(cpu_here "$hotline" record -q -F 0 --trace=counts -o "$work/counts.hotline" -- "$instr_bin" "$@") ;;
        timed) t=$(cpu_here "$hotline" record -q -F 0 --trace=timed -o "$work/timed.hotline" -- "$instr_bin" "$@") ;;
        gprof) t=$(cpu_here "$pg_bin" "$@") ;;
        uftrace) t=$(cpu_here uftrace record -d "$work/uftrace.data" "$instr_bin" "$@") ;;
      esac
      runs[$tool]+="$t "
    done
  done
  # Every traced call is two events; -M lists each traced function's exact calls.
  local calls
  calls=$("$hotline" report -M -m -p0 "$work/counts.hotline" 2>/dev/null | awk -F'\t' '{s += $3} END {print s}')
  local events=$((2 * calls))
  m() { echo "${runs[$1]}" | tr ' ' '\n' | grep . | median; }
  local plain floor
  plain=$(m plain)
  floor=$(m floor)
  echo "$label: $calls traced calls, $events entry/exit events; median of $reps runs"
  printf "%-8s\t%s\t%s\t%s\t%s\n" tool "cpu s" "÷ plain" "÷ floor" "ns/event over floor"
  for tool in "${tools[@]}"; do
    t=$(m "$tool")
    awk -v tool="$tool" -v t="$t" -v p="$plain" -v f="$floor" -v e="$events" \
      'BEGIN {printf "%-8s\t%.3f\t%.2fx\t%.2fx\t%.1f\n", tool, t, t / p, t / f, (t - f) * 1e9 / e}'
  done
  for mode in counts timed; do
    bytes=$(stat -c %s "$work/$mode.hotline")
    awk -v m="$mode" -v b="$bytes" -v e="$events" 'BEGIN {printf "hotline %s profile: %.0f bytes, %.3f bytes per event\n", m, b, b / e}'
  done
  if [ -d "$work/uftrace.data" ]; then
    bytes=$(du -sb "$work/uftrace.data" | cut -f1)
    awk -v b="$bytes" -v e="$events" 'BEGIN {printf "uftrace data: %.0f bytes, %.3f bytes per event\n", b, b / e}'
    rm -rf "$work/uftrace.data"
  fi
  echo
}

bench "fib($n) in C" "$work/fib" "$work/fib_instr" "$work/fib_pg" "$n"

g++ -O2 -g -o "$work/sort" "$here/programs/sort.cc"
g++ -O2 -g -finstrument-functions -o "$work/sort_instr" "$here/programs/sort.cc"
g++ -O2 -g -pg -o "$work/sort_pg" "$here/programs/sort.cc"
bench "std::sort of 200000 ints with a lambda comparator, 4 rounds" "$work/sort" \
  "$work/sort_instr" "$work/sort_pg" 200000 4

bash "$here/lua-source.sh" "$work/lua-plain"
bash "$here/lua-source.sh" "$work/lua-instr" -finstrument-functions
bench "Lua 5.4 running fib.lua (30)" "$work/lua-plain/lua" "$work/lua-instr/lua" "" \
  "$here/programs/fib.lua" 30
