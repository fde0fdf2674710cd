#!/usr/bin/env bash
# What a set of scripts/install-deps.sh costs on a fresh Debian 12: the packages apt would add to
# a minimal system (this machine's required and important packages and what they depend on),
# their download size and their size installed. Asks apt only (a simulation), installs nothing.
#   scripts/deps-size.sh [build|test|bench]
set -euo pipefail
set_name=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
# The package lists, read from install-deps.sh so the two never disagree.
list() { sed -n "/^$1=(/,/^)/p" "$here/install-deps.sh" | grep -v "^$1=(\|^)" | tr '\n' ' '; }
case $set_name in
  build) packages="$(list build)" ;;
  test) packages="$(list build) $(list test)" ;;
  bench) packages="$(list build) $(list test) $(list bench)" ;;
  *)
    echo "deps-size: unknown set '$set_name' (build, test or bench)" >&2
    exit 2
    ;;
esac
status=$(mktemp)
trap 'rm -f "$status"' EXIT
python3 - "$status" <<'PY'
import re, sys
blocks = [b for b in open('/var/lib/dpkg/status').read().split('\n\n') if b.strip()]
packages = {re.search(r'^Package: (\S+)', b, re.M).group(1): b for b in blocks}
def depends(block):
    for field in ('Depends', 'Pre-Depends'):
        m = re.search(r'^' + field + r': (.*)$', block, re.M)
        for alternatives in (m.group(1).split(',') if m else []):
            for a in alternatives.split('|'):
                name = a.strip().split()[0].split(':')[0]
                if name in packages:
                    yield name
                    break
base = {n for n, b in packages.items()
        if re.search(r'^(Priority: (required|important)|Essential: yes)', b, re.M)}
todo = list(base)
while todo:
    for d in depends(packages[todo.pop()]):
        if d not in base:
            base.add(d)
            todo.append(d)
open(sys.argv[1], 'w').write('\n\n'.join(packages[n] for n in sorted(base)) + '\n')
PY
# shellcheck disable=SC2086
apt-get install -s --no-install-recommends -o Dir::State::status="$status" $packages 2>/dev/null |
  awk '/^Inst/ {print $2}' | xargs apt-cache show --no-all-versions 2>/dev/null |
  awk -v set="$set_name" '/^Package:/ {n++} /^Size:/ {s += $2} /^Installed-Size:/ {i += $2}
    END {printf "%s set: %d packages, %.0f MB to download, %.0f MB installed\n", set, n, s / 1e6, i / 1024}'
