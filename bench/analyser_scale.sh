#!/usr/bin/env bash
# The analyser against its peers' on big inputs: wall time and peak memory (/usr/bin/time -v's
# maximum resident set) of
#  - `hotline report -H` on the heap profile of Lua 5.4's GC churn recorded with --heap (about
#    25 MB, 4.8 million events) against `heaptrack_print` on heaptrack's recording of the same
#    run;
#  - `hotline report -A` on synthesized profiles of 1 and 10 million samples over the same
#    stacks (bench/report/synth_profile.cc: real addresses of a real binary), against `perf
#    report --stdio` on a perf.data recorded for PERF_SECONDS from that binary (perf's samples
#    cannot be synthesized; its figures per sample are printed beside).
# Memory should grow with distinct stacks, not with samples or events: the 1 M and 10 M rows
# show whether it does. The heap's two tools run REPS times, interleaved, and their rows are the
# medians; the CPU column is user+sys (report -H applies the heap's events in a thread of its own
# while it reads, so its wall time can be below its CPU time).
#   bench/analyser_scale.sh [BUILD_DIR] [REPS]
# environment: PERF_SECONDS (30), PERF_FREQ (20000), PERF_THREADS (2)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
root=$(cd "$here/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
work=${BENCH_OUT:-$here/out}/analyser
mkdir -p "$work"
hotline=$build/bin/hotline
perf_seconds=${PERF_SECONDS:-30}
perf_freq=${PERF_FREQ:-20000}
perf_threads=${PERF_THREADS:-2}
reps=${2:-5}

# run_once RUNS COMMAND...: appends a line "wall cpu rss_kib" of one run of COMMAND to RUNS.
run_once() {
  local runs=$1
  shift
  /usr/bin/time -v -o "$work/time.txt" "$@" >"$work/out.txt" 2>"$work/err.txt" || {
    cat "$work/err.txt" >&2
    return 1
  }
  awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; ++i) s = s * 60 + p[i]; w = s}
    /User time/ {c += $2} /System time/ {c += $2} /Maximum resident set size/ {r = $2}
    END {print w, c, r}' "$work/time.txt" >>"$runs"
}

# row LABEL UNITS RUNS: wall seconds, CPU seconds, peak RSS in MiB and per unit; each the median
# of the runs.
row() {
  local label=$1 units=$2 runs=$3 wall cpu rss
  wall=$(awk '{print $1}' "$runs" | median)
  cpu=$(awk '{print $2}' "$runs" | median)
  rss=$(awk '{print $3}' "$runs" | median)
  awk -v l="$label" -v w="$wall" -v c="$cpu" -v r="$rss" -v u="$units" \
    'BEGIN {printf "%-34s\t%7.2f s\t%7.2f s cpu\t%8.1f MiB\t%8.3f us/unit\t%8.1f B/unit\n", l, w, c, r / 1024, w * 1e6 / u, r * 1024 / u}'
}

# measure LABEL UNITS COMMAND...: the row of one run.
measure() {
  local label=$1 units=$2
  shift 2
  rm -f "$work/once.runs"
  run_once "$work/once.runs" "$@"
  row "$label" "$units" "$work/once.runs"
}

echo "== the heap: Lua 5.4 GC churn"
bash "$here/lua-source.sh" "$work/lua-src"
lua=$work/lua-src/lua
"$hotline" record -q --heap -F 0 -o "$work/churn.hotline" -- "$lua" "$here/programs/churn.lua" >/dev/null
events=$("$hotline" report -H -m "$work/churn.hotline" |
  awk '$1 == "alloc_calls" || $1 == "free_calls" {s += $2} END {print s}')
printf "hotline profile: %d bytes, %d heap events (units below: events)\n" \
  "$(stat -c %s "$work/churn.hotline")" "$events"
cat "$work/churn.hotline" >/dev/null
data=
if command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null; then
  rm -f "$work"/churn.heaptrack*
  heaptrack -o "$work/churn.heaptrack" "$lua" "$here/programs/churn.lua" >/dev/null 2>&1
  data=$(ls "$work"/churn.heaptrack*)
  printf "heaptrack data: %d bytes\n" "$(stat -c %s "$data")"
  cat "$data" >/dev/null
fi
printf "medians of %d interleaved runs\n" "$reps"
rm -f "$work"/*.runs
for _ in $(seq "$reps"); do
  run_once "$work/hotline.runs" "$hotline" report -H "$work/churn.hotline"
  [ -z "$data" ] || run_once "$work/heaptrack.runs" heaptrack_print "$data"
done
row "hotline report -H" "$events" "$work/hotline.runs"
[ -z "$data" ] || row "heaptrack_print" "$events" "$work/heaptrack.runs"

echo
echo "== samples: report -A against perf report"
cmake --build "$build" --target hotline_format_writer hotline_base >/dev/null
gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$work/workload" "$here/report/workload.c"
g++ -std=c++20 -O2 -I"$root/src" -o "$work/synth_profile" "$here/report/synth_profile.cc" \
  "$build/lib/libhotline_format_writer.a" "$build/lib/libhotline_base.a" -lzstd -lelf
for samples in 1000000 10000000; do
  "$work/synth_profile" "$work/workload" "$work/synth-$samples.hotline" "$samples" "$perf_threads" \
    $((1000000000 / perf_freq)) >/dev/null
  cat "$work/synth-$samples.hotline" >/dev/null
  measure "hotline report -A ($((samples / 1000000)) M samples)" "$samples" \
    "$hotline" report -A "$work/synth-$samples.hotline"
done
if command -v perf >/dev/null; then
  perf record -F "$perf_freq" -g -o "$work/perf.data" -- "$work/workload" "$perf_seconds" \
    "$perf_threads" 2>"$work/perf-record.log" >/dev/null
  perf_samples=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$work/perf-record.log" | tail -1)
  cat "$work/perf.data" >/dev/null
  measure "perf report --stdio ($perf_samples samples)" "$perf_samples" \
    perf report -i "$work/perf.data" --stdio
fi
