#!/usr/bin/env bash
# The profiling pdfTeX's cost (frontends/tex, docs/tex.md), in one interleaved run: the same
# pdfTeX built without hotline.ch (build-pdftex.sh ... plain) against the hooked engine with
# profiling off (no HOTLINE_TEX_OUTPUT: the hooks' branch only) and on (one rdtsc per command
# slot, the macro stack, line and call counts), on four workloads: the LaTeX format build
# (`-ini '*pdflatex.ini'`, expl3-heavy), a generated 100-page article with amsmath, a generated
# beamer talk with a tikz picture on every frame (when beamer and pgf are installed: Debian's
# texlive-latex-recommended and texlive-pictures), and a plain-TeX book, tex.web woven (536
# pages with webmac). CPU seconds (user+sys) of REPS rounds of runs, medians, and the median of
# each round's ratio to the plain engine's run; then `hotline html`'s time on each profile.
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
(cd "$work" && "$build/bin/hotline" tex -o warm.hotline -- pdftex -interaction=batchmode \
  warm.tex >/dev/null)
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
# The beamer talk: 30 frames, each with a list, a formula and a tikz picture, over 3 overlays.
workloads=(ini doc)
if kpsewhich beamer.cls >/dev/null && kpsewhich tikz.sty >/dev/null; then
  {
    printf '\\documentclass{beamer}\n\\usetheme{Madrid}\n\\usepackage{tikz}\n'
    printf '\\title{A talk}\\author{Someone}\n\\begin{document}\n'
    printf '\\begin{frame}\\titlepage\\end{frame}\n\\begin{frame}{Outline}\\tableofcontents\\end{frame}\n'
    for f in $(seq 1 30); do
      printf '\\section{Part %d}\n\\begin{frame}{Frame %d}\n\\begin{itemize}\n' "$f" "$f"
      printf '\\item<1-> A point about topic %d\n' "$f"
      printf '\\item<2-> A formula: $\\sum_{k=1}^{n} k^2 = \\frac{n(n+1)(2n+1)}{6}$\n'
      printf '\\item<3-> A third point\n\\end{itemize}\n'
      printf '\\begin{tikzpicture}[scale=0.6]\n\\draw[thick,->] (0,0) -- (4,0) node[right] {$x$};\n'
      printf '\\draw[thick,->] (0,0) -- (0,3) node[above] {$y$};\n'
      printf '\\foreach \\x in {0.5,1,...,3.5} \\fill[blue!40] (\\x,0) rectangle ++(0.3,{0.5+mod(\\x*%d,3)});\n' "$f"
      printf '\\node[draw,circle] at (2,2) {%d};\n\\end{tikzpicture}\n\\end{frame}\n' "$f"
    done
    printf '\\end{document}\n'
  } >"$work/talk.tex"
  workloads+=(talk)
else
  echo "note: no beamer talk: beamer.cls or tikz.sty is not installed (texlive-latex-recommended, texlive-pictures)"
fi
# The book: tex.web, from the engine's source tree, woven.
web=$(find "$engine_dir/src" -path '*/web2c/tex.web' -print -quit 2>/dev/null || true)
if [ -n "$web" ] && command -v weave >/dev/null; then
  (cd "$work" && cp "$web" tex.web && weave tex.web >/dev/null 2>&1 && mv tex.tex book.tex)
  workloads+=(book)
else
  echo "note: no book: tex.web or weave is missing"
fi
for side in plain hooked profiled; do
  cp "$work/doc.tex" "$work/$side/"
  [ -f "$work/talk.tex" ] && cp "$work/talk.tex" "$work/$side/"
  [ -f "$work/book.tex" ] && cp "$work/book.tex" "$work/$side/"
done

# Formats: each engine loads only its own (the hooked one has two primitives more).
ini=(-ini -interaction=batchmode -etex -jobname=pdflatex -progname=pdflatex '*pdflatex.ini')
(cd "$work/plain" && "$plain" "${ini[@]}" >/dev/null)
cp "$engine_dir/formats/pdflatex.fmt" "$engine_dir/formats/pdflatex.fmt.hotline-defs" \
  "$work/profiled/"
cp "$engine_dir/formats/pdflatex.fmt" "$work/hooked/"
(cd "$work/plain" && "$plain" -ini -interaction=batchmode -etex -jobname=pdftex -progname=pdftex \
  '*pdfetex.ini' >/dev/null)
cp "$engine_dir/formats/pdftex.fmt" "$engine_dir/formats/pdftex.fmt.hotline-defs" \
  "$work/profiled/"
cp "$engine_dir/formats/pdftex.fmt" "$work/hooked/"

doc=(-fmt=pdflatex -progname=pdflatex -interaction=batchmode doc.tex)
for side in plain hooked profiled; do mkdir -p "$work/$side/ini"; done
pages=$(env -C "$work/plain" "$plain" "${doc[@]}" >/dev/null; pdfinfo "$work/plain/doc.pdf" | awk '/^Pages:/ {print $2}')

# One run of workload W (ini, doc, talk, book) by SIDE (plain, hooked, profiled): its CPU seconds.
run() {
  local w=$1 side=$2 dir=$work/$2 engine=$hooked
  local -a args=("${doc[@]}") env=()
  [ "$w" = ini ] && dir=$dir/ini && args=("${ini[@]}")
  [ "$w" = talk ] && args=(-fmt=pdflatex -progname=pdflatex -interaction=batchmode talk.tex)
  [ "$w" = book ] && args=(-fmt=pdftex -progname=pdftex -interaction=batchmode book.tex)
  [ "$side" = plain ] && engine=$plain
  [ "$side" = profiled ] && env=(HOTLINE_TEX_OUTPUT="$dir/$w.hotline")
  cpu "$work" env -C "$dir" "${env[@]}" "$engine" "${args[@]}"
}

# Each round runs every side once, in an order that turns from round to round: which run comes
# before another moves its time by a point or so.
declare -A t
sides=(plain hooked profiled)
for rep in $(seq 1 "$reps"); do
  for w in "${workloads[@]}"; do
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
for w in "${workloads[@]}"; do
  for side in plain hooked profiled; do
    m=$(printf '%s' "${t[${w}_$side]}" | grep -v '^$' | median)
    ratio=$(paste <(printf '%s' "${t[${w}_$side]}" | grep -v '^$') \
      <(printf '%s' "${t[${w}_plain]}" | grep -v '^$') | awk '{print $1 / $2}' | median)
    label="$w $side"
    [ "$w" = ini ] && label="format build (pdflatex.ini), $side"
    [ "$w" = doc ] && label="$pages-page article, $side"
    [ "$w" = talk ] && label="$(pdfinfo "$work/plain/talk.pdf" | awk '/^Pages:/ {print $2}')-page beamer talk, $side"
    [ "$w" = book ] && label="$(pdfinfo "$work/plain/book.pdf" | awk '/^Pages:/ {print $2}')-page book (tex.web), $side"
    printf '%-34s %8s %8s\n' "$label" "$m" "$(awk -v r="$ratio" 'BEGIN {printf "%.3fx", r}')"
  done
done
# What the profiles weigh, and `hotline html`'s time on each (CPU s of the whole command).
printf '%-34s %10s %10s %10s\n' profile bytes "html cpu s" "html bytes"
for w in "${workloads[@]}"; do
  profile=$work/profiled/$w.hotline
  [ "$w" = ini ] && profile=$work/profiled/ini/ini.hotline
  html_s=$(cpu "$work" "$build/bin/hotline" html "$profile" -o "$work/html-$w")
  printf '%-34s %10s %10s %10s\n' "$w" "$(stat -c %s "$profile")" "$html_s" \
    "$(du -sb "$work/html-$w" | cut -f1)"
done
