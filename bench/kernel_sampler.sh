#!/usr/bin/env bash
# The kernel sampler against the plain run, the in-process signal sampler, `perf record -g`
# (frame pointers) and `perf record --call-graph dwarf`, at 1 kHz and 10 kHz, on a 30-deep C
# stack built without frame pointers, Lua (Debian's source), and python3 driving zlib. CPU time
# is user+sys of the whole process tree, the recorder's own included; median of REPS
# interleaved runs. Also the bytes each profile spends per sample.
#   bench/kernel_sampler.sh [BUILD_DIR] [REPS]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
reps=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
work=${BENCH_OUT:-$here/out}/kernel
mkdir -p "$work"
hotline=$build/bin/hotline
# shellcheck source=bench/lib.sh
source "$here/lib.sh"

sampling_programs "$work" "$here"
tools=(plain hotline hotline-signal)
command -v perf >/dev/null && tools+=(perf-fp perf-dwarf)

# samples_in TOOL FILE: the number of samples a profile holds.
samples_in() {
  case $1 in
    hotline*) "$hotline" dump "$2" | grep -c '^SAMPLE' ;;
    perf*) perf report -D -i "$2" 2>/dev/null | grep -c 'PERF_RECORD_SAMPLE' ;;
  esac
}

for freq in 1000 10000; do
  echo "== $freq Hz: CPU seconds (ratio to plain), median of $reps; bytes per sample"
  printf "%-12s" program
  for tool in "${tools[@]}"; do printf "\t%-16s" "$tool"; done
  printf "\t%s\t%s\n" "hotline B/sample" "perf-dwarf B/sample"
  for name in "${names[@]}"; do
    read -r -a cmd <<<"${programs[$name]}"
    declare -A runs=()
    for _ in $(seq "$reps"); do
      for tool in "${tools[@]}"; do
        case $tool in
          plain) t=$(cpu "$work" "${cmd[@]}") ;;
          hotline) t=$(cpu "$work" "$hotline" record -q -F "$freq" -o "$work/k.hotline" -- "${cmd[@]}") ;;
          hotline-signal) t=$(cpu "$work" "$hotline" record -q -F "$freq" --sampler signal -o "$work/s.hotline" -- "${cmd[@]}") ;;
          perf-fp) t=$(cpu "$work" perf record -q -F "$freq" -g -o "$work/fp.data" -- "${cmd[@]}") ;;
          perf-dwarf) t=$(cpu "$work" perf record -q -F "$freq" --call-graph dwarf,8192 -o "$work/dwarf.data" -- "${cmd[@]}") ;;
        esac
        runs[$tool]+="$t "
      done
    done
    plain=$(echo "${runs[plain]}" | tr ' ' '\n' | grep . | median)
    printf "%-12s" "$name"
    for tool in "${tools[@]}"; do
      t=$(echo "${runs[$tool]}" | tr ' ' '\n' | grep . | median)
      awk -v t="$t" -v p="$plain" 'BEGIN {printf "\t%.3f (%.3fx)  ", t, t / p}'
    done
    k=$(samples_in hotline "$work/k.hotline")
    printf "\t%.1f" "$(awk -v b="$(stat -c %s "$work/k.hotline")" -v n="$k" 'BEGIN {print b / n}')"
    if [ -f "$work/dwarf.data" ]; then
      d=$(samples_in perf "$work/dwarf.data")
      printf "\t%.0f" "$(awk -v b="$(stat -c %s "$work/dwarf.data")" -v n="$d" 'BEGIN {print b / n}')"
    fi
    echo
  done
done
