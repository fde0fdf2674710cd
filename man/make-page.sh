#!/usr/bin/env bash
# make-page.sh HELP2MAN HOTLINE COMMAND PAGE SEE_ALSO: the man page of `hotline COMMAND` (or of
# hotline itself) from its --help, through a wrapper named hotline-COMMAND as git's pages are.
set -euo pipefail
help2man=$1 hotline=$2 command=$3 page=$4 see_also=$5
version=$("$hotline" --version)
if [ "$command" = hotline ]; then
  "$help2man" --no-info --no-discard-stderr --version-string "$version" \
    --name "a source-level profiler for native programs" --include "$see_also" \
    --output "$page" "$hotline"
  exit 0
fi
wrapper_dir=$(mktemp -d)
trap 'rm -rf "$wrapper_dir"' EXIT
printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$hotline" "$command" >"$wrapper_dir/hotline-$command"
chmod +x "$wrapper_dir/hotline-$command"
description=$("$hotline" "$command" --help | head -n 1)
# help2man names the page after the version string's first word.
"$help2man" --no-info --no-discard-stderr --version-string "hotline-$command ${version#hotline }" \
  --name "$description" --include "$see_also" --output "$page" "$wrapper_dir/hotline-$command"
