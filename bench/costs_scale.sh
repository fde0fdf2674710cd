#!/usr/bin/env bash
# The cost model (annotate's implicit costs from exact counts) on a call graph of 100,000
# functions with cycles of recursion, solved component by component: time and peak memory.
# (Solved as one dense system, the matrix alone would take 100,000² × 8 bytes = 80 GB.)
#   bench/costs_scale.sh [BUILD_DIR]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
/usr/bin/time -f "100000 functions: %e s, peak memory %M KiB" \
  "$build/bin/model_test" --gtest_filter='CostModel.SolvesAHundredThousandFunctions*' \
  --gtest_brief=1 >/dev/null
