#!/usr/bin/env bash
# Sampling overhead: the same CPU-bound program plain, under `hotline record -F 1000` (the kernel
# sampler, the default; and the in-process signal sampler with DWARF and with frame-pointer
# unwinding), and under `perf record -F 1000 -g`, in one run.
# Prints CPU time (user+sys of the whole process tree, perf's own process included, as FACTS.md
# measured it), median of REPS interleaved runs, and the ratio to the plain run.
#   bench/record_overhead.sh [BUILD_DIR] [REPS]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
reps=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
work=${BENCH_OUT:-$here/out}/record
mkdir -p "$work"
program=$work/cpu_mix
gcc -O2 -g -fno-omit-frame-pointer -o "$program" "$here/programs/cpu_mix.c"
hotline=$build/bin/hotline

# shellcheck source=bench/lib.sh
source "$here/lib.sh"

declare -A runs
tools=(plain hotline hotline-signal signal-fp)
command -v perf >/dev/null && tools+=(perf)
for _ in $(seq "$reps"); do
  for tool in "${tools[@]}"; do
    case $tool in
      plain) t=$(cpu "$work" "$program") ;;
      hotline) t=$(cpu "$work" "$hotline" record -q -F 1000 -o "$work/p.hotline" -- "$program") ;;
      hotline-signal) t=$(cpu "$work" "$hotline" record -q -F 1000 --sampler signal -o "$work/s.hotline" -- "$program") ;;
      signal-fp) t=$(cpu "$work" "$hotline" record -q -F 1000 --sampler signal --unwind fp -o "$work/fp.hotline" -- "$program") ;;
      perf) t=$(cpu "$work" perf record -q -F 1000 -g -o "$work/perf.data" -- "$program") ;;
    esac
    runs[$tool]+="$t "
  done
done

plain=$(echo "${runs[plain]}" | tr ' ' '\n' | grep . | median)
echo "CPU-bound program (qsort, memcpy, arithmetic) at 1000 Hz; median of $reps runs"
printf "%-14s\t%s\t%s\n" tool "cpu s" "ratio to plain"
for tool in "${tools[@]}"; do
  t=$(echo "${runs[$tool]}" | tr ' ' '\n' | grep . | median)
  awk -v tool="$tool" -v t="$t" -v p="$plain" 'BEGIN {printf "%-14s\t%.3f\t%.3fx\n", tool, t, t / p}'
done
echo "hotline profile: $(stat -c %s "$work/p.hotline") bytes; perf.data: $(stat -c %s "$work/perf.data" 2>/dev/null || echo -) bytes"
