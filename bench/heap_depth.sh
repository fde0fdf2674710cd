#!/usr/bin/env bash
# Heap collector cost per event against stack depth: N malloc/free pairs of 32 bytes made from a
# 3-deep and a 30-deep stack, and from 30-deep stacks of a random path each (`30p`: consecutive
# events share only their outermost frames, as in code with many call sites;
# bench/programs/heap_depth.c), plain, under `hotline record --heap
# -F 0` (every event), `--heap-sample -F 0` (the sampled mode) and heaptrack, interleaved. Prints
# CPU time (user+sys of the whole process tree, median of REPS runs), the ratio to plain and the
# ns per heap event (a malloc or a free) above plain.
#   bench/heap_depth.sh [BUILD_DIR] [REPS] [N]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
reps=${2:-3}
n=${3:-5000000}
here=$(cd "$(dirname "$0")" && pwd)
work=${BENCH_OUT:-$here/out}/heap_depth
mkdir -p "$work"
hotline=$build/bin/hotline
prog=$work/heap_depth
gcc -O2 -g -fno-omit-frame-pointer -o "$prog" "$here/programs/heap_depth.c"

# shellcheck source=bench/lib.sh
source "$here/lib.sh"

tools=(plain hotline hotline-sampled)
command -v heaptrack >/dev/null && tools+=(heaptrack)
declare -A runs
for _ in $(seq "$reps"); do
  for depth in 3 30 30p; do
    args=("${depth%p}" "$n")
    [ "$depth" = 30p ] && args+=(paths)
    for tool in "${tools[@]}"; do
      case $tool in
        plain) t=$(cpu "$work" "$prog" "${args[@]}") ;;
        hotline) t=$(cpu "$work" "$hotline" record -q --heap -F 0 -o "$work/d.hotline" -- "$prog" "${args[@]}") ;;
        hotline-sampled) t=$(cpu "$work" "$hotline" record -q --heap-sample -F 0 -o "$work/s.hotline" -- "$prog" "${args[@]}") ;;
        heaptrack) t=$(cpu "$work" heaptrack -o "$work/d.heaptrack" "$prog" "${args[@]}") ;;
      esac
      runs[$tool.$depth]+="$t "
    done
  done
done

events=$((2 * n))
echo "$n malloc/free pairs of 32 bytes; median of $reps interleaved runs"
printf "%-16s\t%s\t%s\t%s\t%s\n" tool depth "cpu s" ratio "ns/event over plain"
for depth in 3 30 30p; do
  plain=$(echo "${runs[plain.$depth]}" | tr ' ' '\n' | grep . | median)
  for tool in "${tools[@]}"; do
    t=$(echo "${runs[$tool.$depth]}" | tr ' ' '\n' | grep . | median)
    awk -v tool="$tool" -v d="$depth" -v t="$t" -v p="$plain" -v e="$events" \
      'BEGIN {printf "%-16s\t%s\t%.3f\t%.2fx\t%.0f\n", tool, d, t, t / p, (t - p) * 1e9 / e}'
  done
done
