#!/usr/bin/env bash
# `hotline report -A` against `perf report --stdio` on the same program with the same number of
# samples (about 10 million), as a ratio.
#
# The perf.data is recorded for real from bench/report/workload.c with `perf record -F FREQ -g`
# for PERF_SECONDS (about 10 million samples on the 2-core machines here; perf delivers fewer than
# FREQ × threads per second). The hotline profile is then synthesized with exactly as many samples
# (bench/report/synth_profile.cc) from the real addresses of the same binary: recording 10
# million samples at the runtime's 1 kHz would take hours. Both are timed once, on a warm page
# cache.
#
# usage: bench/report_vs_perf.sh [BUILD_DIR]      (default: build, the release preset's)
# environment: PERF_FREQ (20000), PERF_THREADS (2), PERF_SECONDS (340),
#              SAMPLES (default: as many as perf recorded)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
perf_freq=${PERF_FREQ:-20000}
perf_threads=${PERF_THREADS:-2}
perf_seconds=${PERF_SECONDS:-340}

work=$(mktemp -d "${TMPDIR:-/tmp}/hotline-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

command -v perf >/dev/null || { echo "report_vs_perf: perf is not installed" >&2; exit 1; }
cmake --build "$build" --target hotline hotline_format_writer hotline_base >/dev/null

gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$work/workload" "$root/bench/report/workload.c"
g++ -std=c++20 -O2 -I"$root/src" -o "$work/synth_profile" "$root/bench/report/synth_profile.cc" \
  "$build/lib/libhotline_format_writer.a" "$build/lib/libhotline_base.a" -lzstd -lelf

now() { date +%s.%N; }
elapsed() { echo "$2 - $1" | bc -l; }

echo "recording perf.data: $perf_threads threads for $perf_seconds s at $perf_freq Hz..."
perf record -F "$perf_freq" -g -o "$work/perf.data" -- "$work/workload" "$perf_seconds" \
  "$perf_threads" 2>"$work/perf-record.log" >/dev/null
perf_samples=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$work/perf-record.log" | tail -1)
[ -n "$perf_samples" ] || { cat "$work/perf-record.log" >&2; exit 1; }
samples=${SAMPLES:-$perf_samples}

echo "synthesizing a hotline profile of $samples samples..."
"$work/synth_profile" "$work/workload" "$work/synth.hotline" "$samples" "$perf_threads" \
  $((1000000000 / perf_freq))

# Warm the page cache for both inputs, then time each once.
cat "$work/synth.hotline" "$work/perf.data" >/dev/null
t0=$(now)
"$build/bin/hotline" report -A "$work/synth.hotline" >"$work/hotline.txt"
t1=$(now)
perf report -i "$work/perf.data" --stdio >"$work/perf.txt" 2>/dev/null
t2=$(now)

hotline_s=$(elapsed "$t0" "$t1")
perf_s=$(elapsed "$t1" "$t2")
printf 'hotline report -A      %10d samples  %8.2f s  %8.3f us/sample\n' "$samples" "$hotline_s" \
  "$(echo "$hotline_s * 1000000 / $samples" | bc -l)"
printf 'perf report --stdio    %10d samples  %8.2f s  %8.3f us/sample\n' "$perf_samples" "$perf_s" \
  "$(echo "$perf_s * 1000000 / $perf_samples" | bc -l)"
printf 'ratio perf / hotline: %.1f (wall time), %.1f (per sample)\n' \
  "$(echo "$perf_s / $hotline_s" | bc -l)" \
  "$(echo "($perf_s / $perf_samples) / ($hotline_s / $samples)" | bc -l)"
