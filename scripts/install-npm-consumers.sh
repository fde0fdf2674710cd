#!/usr/bin/env bash
# Installs the npm packages the export tests open speedscope with (the speedscope app, and
# puppeteer-core to drive Debian's chromium) into DIR/node_modules: the build folder, never the
# source tree. Idempotent. Needs npm (Debian's npm) and the network on the first run.
#   scripts/install-npm-consumers.sh DIR
set -euo pipefail
dir=${1:?usage: install-npm-consumers.sh DIR}
if [ -f "$dir/node_modules/speedscope/dist/release/index.html" ] &&
  [ -f "$dir/node_modules/puppeteer-core/package.json" ]; then
  exit 0
fi
mkdir -p "$dir"
cd "$dir"
[ -f package.json ] || echo '{"private": true}' >package.json
npm install --no-audit --no-fund --loglevel=error speedscope@1.25.0 puppeteer-core@22
