#!/usr/bin/env bash
# What one idle thread costs a malloc-heavy program (bench/programs/idle_thread_malloc.c: N
# malloc/free of 16-215 bytes, 1024 blocks live), with no profiler at all: the same loop alone and with a second
# thread that only sleeps, interleaved. Prints CPU time (median of REPS runs) and the ratio.
# The reason the runtime starts no thread of its own when nothing needs one.
#   bench/idle_thread.sh [REPS] [N]
set -euo pipefail
reps=${1:-5}
n=${2:-20000000}
here=$(cd "$(dirname "$0")" && pwd)
work=${BENCH_OUT:-$here/out}/idle_thread
mkdir -p "$work"
prog=$work/idle_thread_malloc
gcc -O2 -g -pthread -o "$prog" "$here/programs/idle_thread_malloc.c"

# shellcheck source=bench/lib.sh
source "$here/lib.sh"

alone="" with=""
for _ in $(seq "$reps"); do
  alone+="$(cpu "$work" "$prog" 0 "$n") "
  with+="$(cpu "$work" "$prog" 1 "$n") "
done
a=$(echo "$alone" | tr ' ' '\n' | grep . | median)
w=$(echo "$with" | tr ' ' '\n' | grep . | median)
echo "$n malloc/free pairs; median of $reps interleaved runs"
printf "%-22s\t%s\t%s\n" program "cpu s" ratio
awk -v a="$a" -v w="$w" 'BEGIN {
  printf "%-22s\t%.3f\t%.2fx\n", "single-threaded", a, 1
  printf "%-22s\t%.3f\t%.2fx\n", "with one idle thread", w, w / a
}'
