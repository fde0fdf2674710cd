#!/usr/bin/env bash
# What a forked child costs: a program forks N children one after the other, each exiting at
# once (with _exit, then with exit), plain, under `hotline record` and under `perf record -g`
# (which follows children too), in one run. Prints the median of REPS runs of the mean time
# from fork to the child running ("fork") and from the child's exit call to the parent's
# waitpid returning ("exit"), in microseconds, with the ratio to the plain run.
#   bench/fork_exit.sh [BUILD_DIR] [REPS] [CHILDREN]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
reps=${2:-5}
children=${3:-300}
here=$(cd "$(dirname "$0")" && pwd)
work=${BENCH_OUT:-$here/out}/fork_exit
mkdir -p "$work"
program=$work/fork_exit
gcc -O2 -g -o "$program" "$here/programs/fork_exit.c"
hotline=$build/bin/hotline

# shellcheck source=bench/lib.sh
source "$here/lib.sh"

tools=(plain hotline)
command -v perf >/dev/null && tools+=(perf)
declare -A fork_us exit_us
for how in _exit exit; do
  for _ in $(seq "$reps"); do
    for tool in "${tools[@]}"; do
      rm -f "$work"/*.hotline
      case $tool in
        plain) line=$("$program" "$children" "$how") ;;
        hotline) line=$("$hotline" record -q -o "$work/p.hotline" -- "$program" "$children" "$how") ;;
        perf) line=$(perf record -q -g -o "$work/perf.data" -- "$program" "$children" "$how" 2>/dev/null) ;;
      esac
      fork_us[$tool.$how]+="$(echo "$line" | awk '{print $2}') "
      exit_us[$tool.$how]+="$(echo "$line" | awk '{print $4}') "
    done
  done
done

echo "$children children forked one after another; median of $reps runs; microseconds per child"
printf "%-8s %-6s %9s %9s %9s %9s\n" tool exit "fork us" ratio "exit us" ratio
for how in _exit exit; do
  plain_fork=$(echo "${fork_us[plain.$how]}" | tr ' ' '\n' | grep . | median)
  plain_exit=$(echo "${exit_us[plain.$how]}" | tr ' ' '\n' | grep . | median)
  for tool in "${tools[@]}"; do
    f=$(echo "${fork_us[$tool.$how]}" | tr ' ' '\n' | grep . | median)
    e=$(echo "${exit_us[$tool.$how]}" | tr ' ' '\n' | grep . | median)
    awk -v t="$tool" -v h="$how" -v f="$f" -v e="$e" -v pf="$plain_fork" -v pe="$plain_exit" \
      'BEGIN {printf "%-8s %-6s %9.1f %8.2fx %9.1f %8.2fx\n", t, h, f, f / pf, e, e / pe}'
  done
done
