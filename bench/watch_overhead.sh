#!/usr/bin/env bash
# Cost of `hotline record --watch` on a program that writes the watched variable N times (10^6 by
# default): plain, with a bare counting watchpoint the program opens on itself (the trap alone:
# the floor any watchpoint-based tool pays), under `hotline record -F 0` without a watch (its
# start-up and end), and under `hotline record -F 0 --watch watched`, in one interleaved run.
# Prints elapsed and CPU time (medians of REPS runs), the ratio to the plain run (- when the
# plain run is below /usr/bin/time's 10 ms resolution), and µs per write above the run without
# the watchpoint (plain for the floor, hotline without --watch for hotline). Checks that every
# write was recorded.
#   bench/watch_overhead.sh [BUILD_DIR] [REPS] [N]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
reps=${2:-3}
n=${3:-1000000}
here=$(cd "$(dirname "$0")" && pwd)
work=${BENCH_OUT:-$here/out}/watch
mkdir -p "$work"
hotline=$build/bin/hotline
program=$work/watch_writes
gcc -O2 -g -o "$program" "$here/programs/watch_writes.c"

# elapsed and CPU (user+sys) seconds of COMMAND.
measure() {
  /usr/bin/time -f "%e %U %S" -o "$work/time" "$@" >/dev/null 2>"$work/stderr" || {
    cat "$work/stderr" >&2
    return 1
  }
  awk '{printf "%.3f %.3f\n", $1, $2 + $3}' "$work/time"
}

# shellcheck source=bench/lib.sh
source "$here/lib.sh"

declare -A wall cpus
tools=(plain floor hotline-bare hotline)
for _ in $(seq "$reps"); do
  for tool in "${tools[@]}"; do
    case $tool in
      plain) t=$(measure "$program" "$n") ;;
      floor) t=$(measure "$program" "$n" floor) ;;
      hotline-bare) t=$(measure "$hotline" record -q -F 0 -o "$work/b.hotline" -- "$program" "$n") ;;
      hotline) t=$(measure "$hotline" record -q -F 0 --watch watched -o "$work/w.hotline" -- "$program" "$n") ;;
    esac
    wall[$tool]+="${t% *} "
    cpus[$tool]+="${t#* } "
  done
done

writes=$("$hotline" report -W -m "$work/w.hotline" | awk -F'\t' '$8 == "watched" {print $1}')
lost=$("$hotline" report -W -m "$work/w.hotline" | awk -F'\t' '$8 == "watched" {print $3}')
[ "$writes" = "$n" ] || { echo "hotline recorded $writes writes of $n" >&2; exit 1; }
echo "a global written $n times; median of $reps interleaved runs; hotline recorded $writes writes ($lost lost)"
plain_wall=$(echo "${wall[plain]}" | tr ' ' '\n' | grep . | median)
bare_wall=$(echo "${wall[hotline-bare]}" | tr ' ' '\n' | grep . | median)
printf "%-12s\t%s\t%s\t%s\t%s\n" run "elapsed s" "cpu s" "ratio to plain" "us per write"
for tool in "${tools[@]}"; do
  w=$(echo "${wall[$tool]}" | tr ' ' '\n' | grep . | median)
  c=$(echo "${cpus[$tool]}" | tr ' ' '\n' | grep . | median)
  base=$plain_wall
  [ "$tool" = hotline ] && base=$bare_wall
  awk -v tool="$tool" -v w="$w" -v c="$c" -v pw="$plain_wall" -v b="$base" -v n="$n" \
    'BEGIN {ratio = pw >= 0.01 ? sprintf("%.1fx", w / pw) : "-";
            printf "%-12s\t%.3f\t%.3f\t%s\t%.2f\n", tool, w, c, ratio, (w - b) * 1e6 / n}'
done
awk -v b="$(stat -c %s "$work/w.hotline")" -v n="$n" 'BEGIN {printf "profile: %d bytes, %.2f bytes per write\n", b, b / n}'
