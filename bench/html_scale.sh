#!/usr/bin/env bash
# `hotline html` at scale: a profile of 10 million samples over 100,000 distinct stacks (written
# by bench/programs/html_synth.cc from the real addresses of a generated C program of 2,000
# functions in 20 source files, so every frame symbolizes to a function and a line and every
# source is on disk). Prints the time `hotline html` takes, the report's size, and how long
# headless Chromium takes to draw the flame graph (the report's heaviest page) and the
# functions table.
#
# usage: bench/html_scale.sh [BUILD_DIR] [SAMPLES] [STACKS]   (default: build, 10000000, 100000)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
samples=${2:-10000000}
stacks=${3:-100000}
out=${BENCH_OUT:-$root/bench/out}/html_scale
rm -rf "$out"
mkdir -p "$out/src"

cmake --build "$build" --target hotline hotline_format_writer hotline_base >/dev/null

# 20 files of 100 functions, each a few lines that call the next: real code with line tables.
for file in $(seq 0 19); do
  {
    echo "double sink$file;"
    for f in $(seq 0 99); do
      n=$((file * 100 + f))
      echo "__attribute__((noinline)) double fn_$n(double x) {"
      echo "  double y = x * $n.5;"
      echo "  for (int i = 0; i < 3; ++i) y += i * x;"
      echo "  sink$file += y;"
      echo "  return y / 2;"
      echo "}"
    done
  } >"$out/src/part$file.c"
done
{
  for n in $(seq 0 1999); do echo "double fn_$n(double);"; done
  echo "int main(int argc, char** argv) { double s = 0;"
  for n in $(seq 0 1999); do echo "  s += fn_$n(argc);"; done
  echo "  return s > 0 ? 0 : 1; }"
} >"$out/src/main.c"
gcc -O0 -g -o "$out/many" "$out"/src/*.c
g++ -std=c++20 -O2 -I"$root/src" -o "$out/html_synth" "$root/bench/programs/html_synth.cc" \
  "$build/lib/libhotline_format_writer.a" "$build/lib/libhotline_base.a" -lzstd -lelf

echo "synthesizing $samples samples over $stacks distinct stacks..."
"$out/html_synth" "$out/many" "$out/synth.hotline" "$samples" "$stacks"
ls -l "$out/synth.hotline" | awk '{printf "profile: %.1f MB\n", $5 / 1e6}'

cat "$out/synth.hotline" >/dev/null
/usr/bin/time -f "%e %M" -o "$out/time" "$build/bin/hotline" html "$out/synth.hotline" -o "$out/report" \
  2>"$out/html.err" || { cat "$out/html.err" >&2; exit 1; }
read -r seconds peak_kb <"$out/time"
# Reading and building the model is shared with every view: `hotline report -C` for comparison.
/usr/bin/time -f "%e" -o "$out/time-report" "$build/bin/hotline" report -N -C -m \
  "$out/synth.hotline" >"$out/flat.txt" 2>/dev/null
distinct=$(wc -l <"$out/flat.txt")
size=$(du -sb "$out/report" | cut -f1)
files=$(find "$out/report" -type f | wc -l)
largest=$(find "$out/report" -type f -printf '%s %P\n' | sort -n | tail -1)
printf 'hotline html: %s s, peak memory %.0f MB (hotline report -C on the same profile: %s s)\n' \
  "$seconds" "$(echo "$peak_kb / 1024" | bc -l)" "$(cat "$out/time-report")"
printf 'report: %.1f MB in %d files (largest: %s bytes)\n' "$(echo "$size / 1000000" | bc -l)" \
  "$files" "$largest"
echo "functions in the profile: $distinct"

if bash "$root/tests/browser/install.sh" "$build/browser"; then
  NODE_PATH="$build/browser/node_modules" node "$root/tests/browser/report_test.js" timing \
    "$out/report"
else
  echo "headless Chromium: not measured (see above)"
fi
