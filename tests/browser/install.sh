#!/usr/bin/env bash
# Installs puppeteer-core (the npm registry's) into DIR/node_modules for the browser tests and the
# HTML benchmark; the browser is Debian's chromium (scripts/install-deps.sh test). Never
# committed: DIR is under the build folder. Exits 77 (ctest's skip) when node, npm or chromium
# is missing or the registry cannot be reached.
#   tests/browser/install.sh DIR
set -uo pipefail
dir=${1:?usage: install.sh DIR}
for tool in node npm chromium; do
  if ! command -v "$tool" >/dev/null; then
    echo "browser tests skipped: $tool is not installed (scripts/install-deps.sh test)" >&2
    exit 77
  fi
done
[ -f "$dir/node_modules/puppeteer-core/package.json" ] && exit 0
mkdir -p "$dir"
# puppeteer-core 24 supports the node 18+ of Debian 12 and drives any recent Chromium.
if ! npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error \
  puppeteer-core@24 >"$dir/npm-install.log" 2>&1; then
  echo "browser tests skipped: npm could not install puppeteer-core (see $dir/npm-install.log)" >&2
  exit 77
fi
