#!/usr/bin/env bash
# Whole stacks, and what they cost (issue 27): for each program, the share of samples whose
# stack reaches the program's root (main, or Py_BytesMain for python3), the CPU time of the whole
# run (the recorder's, or perf's, own included) as a ratio to the plain run, and the bytes written
# per sample; hotline at its defaults at 1 kHz and 10 kHz, with an 8 KiB stack copy, and perf
# record -g (frame pointers) and --call-graph dwarf (perf's 8 KiB default) at the same rates.
# Programs: a 30-deep C stack without frame pointers, 124 frames of C++ of a few hundred bytes
# each (tests/programs/deep_cpp.cc), Lua (Debian's source) and python3 recursing 300 deep.
# CPU ratios are medians of REPS runs (the plain run's of REPS + 2).
#   bench/stack_bytes.sh [BUILD_DIR] [REPS]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
reps=${2:-1}
here=$(cd "$(dirname "$0")" && pwd)
work=${BENCH_OUT:-$here/out}/stack
mkdir -p "$work"
hotline=$build/bin/hotline
# shellcheck source=bench/lib.sh
source "$here/lib.sh"

sampling_programs "$work" "$here"
g++ -O2 -g -o "$work/deep-cpp" "$here/../tests/programs/deep_cpp.cc" -I"$here/../tests/programs"
cat >"$work/recurse.py" <<'EOF'
import sys
sys.setrecursionlimit(10000)
def down(n, acc):
    if n == 0:
        return sum(i * i for i in range(200)) + acc
    return down(n - 1, acc + 1)
total = 0
for _ in range(20000):
    total += down(300, 0)
print(total)
EOF
names=(deep30 deep-cpp lua python-recursion)
programs[deep-cpp]="$work/deep-cpp chain 5000"
programs[python-recursion]="/usr/bin/python3 $work/recurse.py"
declare -A roots=([deep30]=main [deep-cpp]=main [lua]=main [python-recursion]=Py_BytesMain)

# hotline_reach PROFILE ROOT: percent of the sampled time under ROOT.
hotline_reach() {
  "$hotline" report -C -m "$1" 2>/dev/null | awk -F'\t' -v root="$2" '
    $6 != "[unsampled]" { total += $2 } $6 == root { under = $3 }
    END { printf "%.1f", total ? 100 * under / total : 0 }'
}
# perf_reach DATA ROOT: percent of perf's samples whose stack holds ROOT.
perf_reach() {
  perf script -i "$1" -F ip,sym 2>/dev/null | awk -v root="$2" '
    /^$/ { if (open) { n++; if (seen) hit++ } open = 0; seen = 0; next }
    { open = 1; if ($2 == root) seen = 1 }
    END { if (open) { n++; if (seen) hit++ } printf "%.1f", n ? 100 * hit / n : 0 }'
}
samples_in() { "$hotline" report -m "$1" 2>/dev/null | awk -F'\t' '$1 == "samples" {print $2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
per_sample() { awk -v b="$1" -v n="$2" 'BEGIN { printf "%.0f", n ? b / n : 0 }'; }

printf "%-18s %-28s %8s %8s %10s\n" program tool "root %" "cpu x" "B/sample"
for name in "${names[@]}"; do
  read -r -a cmd <<<"${programs[$name]}"
  plain=$(for _ in $(seq $((reps + 2))); do cpu "$work" "${cmd[@]}"; done | median)
  for freq in 1000 10000; do
    for variant in default 8k; do
      extra=()
      [ "$variant" = 8k ] && extra=(--stack-bytes 8192)
      t=$(for _ in $(seq "$reps"); do
        cpu "$work" "$hotline" record -q -F "$freq" "${extra[@]}" -o "$work/p.hotline" -- "${cmd[@]}"
      done | median)
      bytes=$(stat -c %s "$work/p.hotline")
      n=$("$hotline" dump "$work/p.hotline" | grep -c '^SAMPLE ' || true)
      printf "%-18s %-28s %8s %8s %10s\n" "$name" "hotline ${freq}Hz $variant" \
        "$(hotline_reach "$work/p.hotline" "${roots[$name]}")" "$(ratio "$t" "$plain")" \
        "$(per_sample "$bytes" "$n")"
    done
    for mode in fp dwarf; do
      t=$(for _ in $(seq "$reps"); do
        cpu "$work" perf record -q -F "$freq" --call-graph "$mode" -o "$work/perf.data" -- "${cmd[@]}"
      done | median)
      bytes=$(stat -c %s "$work/perf.data")
      n=$(perf script -i "$work/perf.data" -F ip 2>/dev/null | awk '/^$/ {n++} END {print n}')
      printf "%-18s %-28s %8s %8s %10s\n" "$name" "perf ${freq}Hz -g $mode" \
        "$(perf_reach "$work/perf.data" "${roots[$name]}")" "$(ratio "$t" "$plain")" \
        "$(per_sample "$bytes" "$n")"
    done
  done
done
