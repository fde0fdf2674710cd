#!/usr/bin/env bash
# Runs every benchmark in bench/ against one build: `make bench` calls it.
#   bench/run-all.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
for script in record_overhead.sh kernel_sampler.sh costs_scale.sh fork_exit.sh trace_overhead.sh \
    heap_overhead.sh heap_depth.sh html_scale.sh analyser_scale.sh report_vs_perf.sh \
    perl_overhead.sh watch_overhead.sh tex_overhead.sh; do
  echo "== bench/$script"
  bash "$here/$script" "$build"
  echo
done
echo "== bench/idle_thread.sh"
bash "$here/idle_thread.sh"
