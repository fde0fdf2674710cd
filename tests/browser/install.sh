#!/usr/bin/env bash
# Installs the npm registry's packages the browser tests need into DIR/node_modules:
# puppeteer-core, to drive Debian's chromium (scripts/install-deps.sh test), and the speedscope
# app, which the export tests open their files in. Never committed: DIR is under the build
# folder. Idempotent, and safe when two tests ask at once (a lock). Exits 77 (ctest's skip)
# when node, npm or chromium is missing or the registry cannot be reached.
#   tests/browser/install.sh DIR
set -uo pipefail
dir=${1:?usage: install.sh DIR}
for tool in node npm chromium; do
  if ! command -v "$tool" >/dev/null; then
    echo "browser tests skipped: $tool is not installed (scripts/install-deps.sh test)" >&2
    exit 77
  fi
done
mkdir -p "$dir"
exec 9>"$dir/.install.lock"
flock 9
[ -f "$dir/node_modules/puppeteer-core/package.json" ] &&
  [ -f "$dir/node_modules/speedscope/dist/release/index.html" ] && exit 0
# puppeteer-core 24 supports the node 18+ of Debian 12 and drives any recent Chromium.
if ! npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error \
  puppeteer-core@24 speedscope@1.25.0 >"$dir/npm-install.log" 2>&1; then
  echo "browser tests skipped: npm could not install puppeteer-core and speedscope" \
    "(see $dir/npm-install.log)" >&2
  exit 77
fi
