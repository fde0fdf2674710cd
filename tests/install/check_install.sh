#!/usr/bin/env bash
# `make install DESTDIR=...` puts what a user needs where a user looks: the tool and the runtime
# (stripped), the C API header, a man page per command that renders, and bash completion that
# completes. check_install.sh BUILD_DIR
set -euo pipefail
build=$1
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
DESTDIR=$stage cmake --install "$build" --prefix /usr/local --strip >/dev/null
root=$stage/usr/local
fail() { echo "check_install: $*" >&2; exit 1; }

for file in bin/hotline lib/libhotline-rt.so include/hotline/hotline.h \
  share/bash-completion/completions/hotline; do
  [ -e "$root/$file" ] || fail "$file was not installed"
done
# Stripped: no symbol table left in the tool.
if readelf -S "$root/bin/hotline" | grep -q '\.symtab'; then fail "bin/hotline is not stripped"; fi

if command -v help2man >/dev/null; then
  for page in hotline hotline-record hotline-report hotline-annotate hotline-merge hotline-diff \
              hotline-html hotline-export hotline-dump; do
    [ -e "$root/share/man/man1/$page.1" ] || fail "the man page $page.1 was not installed"
    MANWIDTH=80 man -l "$root/share/man/man1/$page.1" 2>/dev/null | grep -q "^NAME" ||
      fail "$page.1 does not render"
  done
  man -l "$root/share/man/man1/hotline-record.1" 2>/dev/null | grep -q -- "--follow-exec" ||
    fail "hotline-record.1 lacks record's options"
fi

# The completion completes commands, and a command's options from its --help.
# shellcheck disable=SC1090,SC1091
source "$root/share/bash-completion/completions/hotline"
COMP_WORDS=("$root/bin/hotline" rep)
COMP_CWORD=1
_hotline
[ "${COMPREPLY[*]}" = report ] || fail "'hotline rep<TAB>' gave '${COMPREPLY[*]}'"
COMP_WORDS=("$root/bin/hotline" record --follow)
COMP_CWORD=2
_hotline
[ "${COMPREPLY[*]}" = --follow-exec ] || fail "'hotline record --follow<TAB>' gave '${COMPREPLY[*]}'"
echo "check_install: installed and usable"
