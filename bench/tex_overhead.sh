#!/usr/bin/env bash
# The profiling pdfTeX's cost (frontends/tex, docs/tex.md), in one interleaved run: the same
# pdfTeX built without hotline.ch (build-pdftex.sh ... plain) against the hooked engine with
# profiling off (no HOTLINE_TEX_OUTPUT: the hooks' branch only) and on (one rdtsc per command
# slot, the macro stack, line and call counts), on two workloads: the LaTeX format build
# (`-ini '*pdflatex.ini'`, expl3-heavy) and a generated 100-page article with amsmath.
# CPU seconds (user+sys) of REPS rounds of runs, medians, and the median of each round's ratio to
# the plain engine's run.
#   bench/tex_overhead.sh [BUILD] [REPS]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
build=$(cd "${1:-build}" && pwd)
reps=${2:-3}
engine_dir=$build/frontends/tex/engine
work=${BENCH_OUT:-$here/out}/tex
rm -rf "$work"
mkdir -p "$work/plain" "$work/hooked" "$work/profiled"

# The hooked engine and its formats (through hotline tex, once), and the plain engine.
printf '\\relax\\bye\n' >"$work/warm.tex"
(cd "$work" && "$build/bin/hotline" tex -o warm.hotline -- pdflatex -interaction=batchmode \
  '\documentclass{article}\begin{document}x\end{document}' >/dev/null)
"$here/../frontends/tex/build-pdftex.sh" "$engine_dir" "$build/frontends/tex/hooks.env" plain
plain=$engine_dir/bin/pdftex-plain
hooked=$engine_dir/bin/pdftex

# The 100-page article.
{
  printf '\\documentclass{article}\n\\usepackage{amsmath}\n\\begin{document}\n'
  for s in $(seq 1 120); do
    printf '\\section{Section %d}\n' "$s"
    for p in 1 2 3; do
      printf 'Paragraph %d of section %d. ' "$p" "$s"
      for w in $(seq 1 12); do printf 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '; done
      printf '\n\n'
    done
    printf '\\begin{align}\n  a_{%d} &= \\sum_{k=0}^{n} \\binom{n}{k} x^k \\\\\n  \\int_0^1 f_{%d}(x)\\,dx &= \\frac{1}{%d}\n\\end{align}\n' "$s" "$s" "$s"
  done
  printf '\\end{document}\n'
} >"$work/doc.tex"
for side in plain hooked profiled; do cp "$work/doc.tex" "$work/$side/"; done

# Formats: each engine loads only its own (the hooked one has two primitives more).
ini=(-ini -interaction=batchmode -etex -jobname=pdflatex -progname=pdflatex '*pdflatex.ini')
(cd "$work/plain" && "$plain" "${ini[@]}" >/dev/null)
cp "$engine_dir/formats/pdflatex.fmt" "$engine_dir/formats/pdflatex.fmt.hotline-defs" \
  "$work/profiled/"
cp "$engine_dir/formats/pdflatex.fmt" "$work/hooked/"

doc=(-fmt=pdflatex -progname=pdflatex -interaction=batchmode doc.tex)
for side in plain hooked profiled; do mkdir -p "$work/$side/ini"; done
pages=$(env -C "$work/plain" "$plain" "${doc[@]}" >/dev/null; pdfinfo "$work/plain/doc.pdf" | awk '/^Pages:/ {print $2}')

# One run of workload W (ini, doc) by SIDE (plain, hooked, profiled): its CPU seconds.
run() {
  local w=$1 side=$2 dir=$work/$2 engine=$hooked
  local -a args=("${doc[@]}") env=()
  [ "$w" = ini ] && dir=$dir/ini && args=("${ini[@]}")
  [ "$side" = plain ] && engine=$plain
  [ "$side" = profiled ] && env=(HOTLINE_TEX_OUTPUT="$dir/$w.hotline")
  cpu "$work" env -C "$dir" "${env[@]}" "$engine" "${args[@]}"
}

# Each round runs every side once, in an order that turns from round to round: which run comes
# before another moves its time by a point or so.
declare -A t
sides=(plain hooked profiled)
for rep in $(seq 1 "$reps"); do
  for w in ini doc; do
    for k in 0 1 2; do
      side=${sides[$(((rep + k) % 3))]}
      t[${w}_$side]+="$(run "$w" "$side")"$'\n'
    done
  done
done
# The ratio is the median of each round's ratio to the plain run of the same round: the machine's
# drift over the rounds (a shared VM's speed wanders by several percent) cancels out.
printf 'pdfTeX with hotline.ch against the same pdfTeX without it; CPU s, median of %s rounds\n' "$reps"
printf '%-34s %8s %8s\n' workload "cpu s" ratio
for w in ini doc; do
  for side in plain hooked profiled; do
    m=$(printf '%s' "${t[${w}_$side]}" | grep -v '^$' | median)
    ratio=$(paste <(printf '%s' "${t[${w}_$side]}" | grep -v '^$') \
      <(printf '%s' "${t[${w}_plain]}" | grep -v '^$') | awk '{print $1 / $2}' | median)
    label="$w $side"
    [ "$w" = ini ] && label="format build (pdflatex.ini), $side"
    [ "$w" = doc ] && label="$pages-page article, $side"
    printf '%-34s %8s %8s\n' "$label" "$m" "$(awk -v r="$ratio" 'BEGIN {printf "%.3fx", r}')"
  done
done
printf 'profile sizes: format build %s bytes, article %s bytes\n' \
  "$(stat -c %s "$work/profiled/ini/ini.hotline")" \
  "$(stat -c %s "$work/profiled/doc.hotline")"
