#!/usr/bin/env bash
# Fetches and builds Lua 5.4 from Debian's source package (a real program nobody here wrote) for
# the benchmarks: `lua-source.sh OUT_DIR [extra CFLAGS]` leaves OUT_DIR/lua. Idempotent.
set -euo pipefail
out=$1
cflags=${2:-}
mkdir -p "$out"
if [ -x "$out/lua" ]; then exit 0; fi

if ! ls "$out"/lua5.4-*/src/lua.c >/dev/null 2>&1; then
  src_list=/etc/apt/sources.list.d/hotline-deb-src.sources
  if ! grep -rqs "deb-src" /etc/apt/sources.list /etc/apt/sources.list.d/; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' |
      $SUDO tee "$src_list" >/dev/null
    $SUDO apt-get update -q >/dev/null
  fi
  (cd "$out" && apt-get source -q lua5.4 >/dev/null 2>&1)
fi
dir=$(ls -d "$out"/lua5.4-*/ | head -n 1)
# Debian's Makefile builds through libtool; the interpreter is simply every source but luac.c.
sources=$(ls "$dir"/src/*.c | grep -v '/luac\.c$')
# Debian's luaconf.h wants a generated header naming the multiarch triplet.
echo "#define DEB_HOST_MULTIARCH \"$(gcc -print-multiarch)\"" >"$dir/src/lua5.4-deb-multiarch.h"
# shellcheck disable=SC2086
gcc -O2 -g -fno-omit-frame-pointer -DLUA_USE_LINUX $cflags -o "$out/lua" $sources -lm -ldl
