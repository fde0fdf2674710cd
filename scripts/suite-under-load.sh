#!/usr/bin/env bash
# The whole suite, several times in a row, while another build of hotline runs beside it with
# -j2: a test that fails here without a defect would block someone's landing (issue 28). Prints
# each run's failures and time, and exits 1 if any run failed.
#   scripts/suite-under-load.sh [BUILD_DIR] [RUNS]      (defaults: build, 5)
# The suite must be built in BUILD_DIR already (make test does that). The load is a clean build
# of this checkout in a scratch folder, started again each time it finishes.
set -uo pipefail
build=$(cd "${1:-build}" && pwd)
runs=${2:-5}
source_dir=$(cd "$(dirname "$0")/.." && pwd)
load_dir=$(mktemp -d /tmp/hotline-load.XXXXXX)
log_dir=$(mktemp -d /tmp/hotline-suite.XXXXXX)

# The load runs in a process group of its own (job control), so that all of it stops together.
set -m
(
  while :; do
    rm -rf "$load_dir/build"
    cmake -S "$source_dir" -B "$load_dir/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DHOTLINE_TESTS=ON >/dev/null 2>&1 || exit 1
    cmake --build "$load_dir/build" -j2 >/dev/null 2>&1
  done
) &
load=$!
set +m
cleanup() {
  kill -- -"$load" 2>/dev/null
  wait "$load" 2>/dev/null
  rm -rf "$load_dir"
}
trap cleanup EXIT
failed_runs=0
for run in $(seq "$runs"); do
  start=$(date +%s)
  (cd "$build" && ctest -j2 --output-on-failure) >"$log_dir/run-$run.log" 2>&1
  status=$?
  seconds=$(($(date +%s) - start))
  failures=$(sed -n '/The following tests FAILED:/,$p' "$log_dir/run-$run.log" |
    grep -E '^\s+[0-9]+ - ' | sed 's/^\s*//')
  summary=$(grep -E 'tests passed' "$log_dir/run-$run.log" | tail -1)
  printf 'run %d: %s (%d s)\n' "$run" "${summary:-no summary}" "$seconds"
  if [ "$status" -ne 0 ]; then
    failed_runs=$((failed_runs + 1))
    printf '  %s\n' "$failures"
  fi
done
printf '%d of %d runs clean; logs in %s\n' $((runs - failed_runs)) "$runs" "$log_dir"
[ "$failed_runs" -eq 0 ]
