#!/usr/bin/env bash
# How much user stack the kernel sampler must copy per sample (`record --stack-bytes`): for each
# size, the share of samples whose unwound stack reaches the program's entry (main, or
# Py_BytesMain for python3), and the CPU time of the whole run (the recorder's own included),
# on a 30-deep C stack without frame pointers, Lua, and python3 driving zlib.
#   bench/stack_bytes.sh [BUILD_DIR]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=${BENCH_OUT:-$here/out}/stack
mkdir -p "$work"
hotline=$build/bin/hotline
# shellcheck source=bench/lib.sh
source "$here/lib.sh"

sampling_programs "$work" "$here"
declare -A roots=([deep30]=main [lua]=main [python-zlib]=Py_BytesMain)

# reach PROFILE ROOT: percent of the program's sampled time under ROOT (the runtime's own
# thread, [profiler], is not the program's).
reach() {
  "$hotline" report -C -m "$1" 2>/dev/null | awk -F'\t' -v root="$2" '
    $6 != "[profiler]" { total += $2 } $6 == root { under = $3 }
    END { printf "%.1f", total ? 100 * under / total : 0 }'
}

printf "%-12s" "stack bytes"
for name in "${names[@]}"; do printf "\t%-22s" "$name: % to root, cpu s"; done
echo
for bytes in 1024 2048 4096 8192 16384 32768; do
  printf "%-12s" "$bytes"
  for name in "${names[@]}"; do
    read -r -a cmd <<<"${programs[$name]}"
    t=$(cpu "$work" "$hotline" record -q --stack-bytes "$bytes" -o "$work/p.hotline" -- "${cmd[@]}")
    printf "\t%-22s" "$(reach "$work/p.hotline" "${roots[$name]}")%, $t"
  done
  echo
done
