#!/usr/bin/env bash
# A source of 250,000 lines in `hotline html`'s report: a generated C file (a table of 249,950
# lines, then the functions that read it, the hot one near the end), recorded and reported, and
# headless Chromium's time to open its source page at the hot line, as following a link from the
# functions table does, with the rows the page then holds.
#
# usage: bench/html_source.sh [BUILD_DIR] [LINES]   (default: build, 250000)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
lines=${2:-250000}
out=${BENCH_OUT:-$root/bench/out}/html_source
rm -rf "$out"
mkdir -p "$out"

table=$((lines - 50))
{
  echo "static const int table[] = {"
  for ((i = 0; i < table - 2; i += 1000)); do seq -f '  %g,' "$i" $((i + 999 < table - 3 ? i + 999 : table - 3)); done
  echo "};"
  echo "__attribute__((noinline)) long walk(int rounds) {"
  echo "  long s = 0;"
  echo "  for (int r = 0; r < rounds; ++r)"
  echo "    for (unsigned i = 0; i < sizeof table / sizeof *table; ++i)"
  echo "      s += table[i] ^ r;"
  echo "  return s;"
  echo "}"
  echo "int main(void) { return walk(400) == 42; }"
} >"$out/big.c"
hot=$(grep -n 's += table\[i\] ^ r;' "$out/big.c" | cut -d: -f1)
gcc -O0 -g -o "$out/big" "$out/big.c"
"$build/bin/hotline" record -q -o "$out/big.hotline" -- "$out/big" || true
"$build/bin/hotline" html "$out/big.hotline" -o "$out/report" 2>/dev/null
printf 'big.c: %d lines, hot line %d\n' "$(wc -l <"$out/big.c")" "$hot"
if bash "$root/tests/browser/install.sh" "$build/browser"; then
  NODE_PATH="$build/browser/node_modules" node "$root/tests/browser/report_test.js" source-timing \
    "$out/report" big.c "$hot"
else
  echo "headless Chromium: not measured (see above)"
fi
