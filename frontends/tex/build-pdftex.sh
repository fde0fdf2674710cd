#!/usr/bin/env bash
# Builds hotline's profiling pdfTeX (docs/tex.md) from Debian's texlive-bin source package.
#   build-pdftex.sh ENGINE_DIR HOOKS_FILE [plain]
# ENGINE_DIR  where everything goes: src/ (the unpacked source, fetched once with apt-get
#             source), obj/ (the configured build tree), bin/pdftex (the result).
# HOOKS_FILE  written by CMake: the hook library's sources, include flags and archives.
# plain       builds bin/pdftex-plain instead: the same engine without hotline.ch (for
#             bench/tex_overhead.sh).
# Each step leaves a stamp: a second run with nothing changed does nothing.
set -euo pipefail

engine_dir=$1
hooks_file=$2
variant=${3:-hotline}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=/dev/null
source "$hooks_file"
jobs=${HOTLINE_TEX_JOBS:-$(nproc)}

die() {
  echo "hotline tex: $*" >&2
  exit 1
}

mkdir -p "$engine_dir"
engine_dir=$(cd "$engine_dir" && pwd)
src=$engine_dir/src/texlive-bin
obj=$engine_dir/obj
log=$engine_dir/build.log
mkdir -p "$engine_dir/bin"

# 1. The source, once.
if [ ! -f "$engine_dir/src/.fetched" ]; then
  command -v dpkg-source >/dev/null ||
    die "dpkg-source is missing: run scripts/install-deps.sh build (package dpkg-dev)"
  list=/etc/apt/sources.list.d/hotline-deb-src.sources
  if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ &&
    ! grep -qs '^deb-src ' /etc/apt/sources.list; then
    echo "hotline tex: adding a deb-src entry ($list)" >&2
    sudo_=""
    [ "$(id -u)" -eq 0 ] || sudo_=sudo
    printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' |
      $sudo_ tee "$list" >/dev/null
    $sudo_ apt-get update -q >>"$log" 2>&1 ||
      die "apt-get update failed (see $log): the Debian archive must be reachable to fetch texlive-bin's source"
  fi
  rm -rf "$engine_dir/src"
  mkdir -p "$engine_dir/src"
  (cd "$engine_dir/src" && apt-get source --download-only texlive-bin) >>"$log" 2>&1 ||
    die "cannot fetch texlive-bin's source with apt-get source (see $log): it needs the Debian archive (network) and a deb-src entry"
  (cd "$engine_dir/src" && dpkg-source -x texlive-bin_*.dsc texlive-bin) >>"$log" 2>&1 ||
    die "unpacking texlive-bin's source failed (see $log)"
  touch "$engine_dir/src/.fetched"
fi

flags=(--without-x --disable-shared --disable-all-pkgs --enable-pdftex --enable-etex
  --disable-synctex --disable-xetex --disable-luatex --disable-luajittex --disable-mflua
  --disable-mfluajit --enable-missing --with-system-kpathsea --with-system-zlib
  --with-system-libpng --enable-native-texlive-build --enable-texlive-build --disable-ipc)

# 2. The bundled xpdf library (pdfTeX reads PDF images with it; Debian builds it the same way).
if [ ! -f "$obj/libs/xpdf/.built" ]; then
  echo "hotline tex: building pdfTeX from Debian's texlive-bin source (a few minutes, once; log: $log)" >&2
  mkdir -p "$obj/libs/xpdf"
  (cd "$obj/libs/xpdf" && CFLAGS="-O2 -g" CXXFLAGS="-O2 -g" "$src/libs/xpdf/configure" "${flags[@]}" &&
    make -j"$jobs") >>"$log" 2>&1 || die "building xpdf failed (see $log)"
  touch "$obj/libs/xpdf/.built"
fi

# 3. web2c configured alone, with Debian's banner (debian/rules: "TeX Live 2022/Debian" in the
# log's first line, as the stock engine writes it). Configured and built anew when these flags
# change: make would not see that the banner's object is out of date.
web2c=$obj/texk/web2c
web2c_flags=("${flags[@]}" --with-banner-add=/Debian)
if [ "$(cat "$web2c/.configured" 2>/dev/null)" != "${web2c_flags[*]}" ]; then
  rm -rf "$web2c"
  mkdir -p "$web2c"
  (cd "$web2c" && CFLAGS="-O2 -g" CXXFLAGS="-O2 -g" "$src/texk/web2c/configure" "${web2c_flags[@]}") \
    >>"$log" 2>&1 || die "configuring web2c failed (see $log; libkpathsea-dev, libpng-dev and zlib1g-dev are needed)"
  echo "${web2c_flags[*]}" >"$web2c/.configured"
fi

# 4. pdfTeX, with hotline.ch merged by tie after Debian's change files.
ch_srcs="pdftexdir/pdftex.web pdftexdir/tex.ch0 tex.ch tracingstacklevels.ch partoken-102.ch"
ch_srcs+=" partoken.ch showstream.ch zlib-fmt.ch enctexdir/enctex1.ch enctexdir/enctex-pdftex.ch"
ch_srcs+=" enctexdir/enctex2.ch \$(pdftex_ch_synctex) pdftexdir/pdftex.ch pdftexdir/char-warning-pdftex.ch tex-binpool.ch"
if [ "$variant" = plain ]; then
  out=$engine_dir/bin/pdftex-plain
  inputs=()
  libs="-lm"
  cppflags=""
else
  out=$engine_dir/bin/pdftex
  cp "$here/hotline.ch" "$src/texk/web2c/hotline.ch"
  ch_srcs="$ch_srcs hotline.ch"
  inputs=("$here/hotline.ch" "$here/glue.c" $HOOK_DEPENDS)
  libs="-lm $web2c/hotline_glue.o $HOOK_LIBS"
  cppflags=$HOOK_CFLAGS
fi
# The build's inputs, and web2c's configuration: a new one is a new build.
stamp_key=$(cat "$0" "${inputs[@]}" "$web2c/.configured" 2>/dev/null | sha256sum | cut -c1-16)
if [ -x "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$stamp_key" ]; then
  exit 0
fi
# The generated Pascal and C depend on the change files, which make does not see change in
# the variable: drop them so that tie, tangle and web2c run again.
(cd "$web2c" && rm -f pdftex-final.ch pdftex-tangle pdftex.p pdftex.pool pdftex-web2c \
  pdftexini.c pdftex0.c pdftexcoerce.h pdftexd.h pdftex-pool.c pdftex pdftex-*.o)
if [ "$variant" != plain ]; then
  # tangle and web2c must exist to make pdftexd.h, which the glue includes; makecpool is linked
  # here too, without the glue in LIBS (it has none of pdfTeX's globals the glue reads).
  (cd "$web2c" && make -j"$jobs" pdftex_ch_srcs="$ch_srcs" CPPFLAGS="$cppflags" pdftexd.h \
    web2c/stamp-makecpool) >>"$log" 2>&1 ||
    die "generating pdfTeX's C with hotline.ch failed (see $log)"
  (cd "$web2c" && gcc -O2 -g -DHAVE_CONFIG_H -I. -I"$src/texk/web2c" -I"$src/texk/web2c/pdftexdir" \
    -I"$src/texk" -I.. $HOOK_CFLAGS -c "$here/glue.c" -o hotline_glue.o) >>"$log" 2>&1 ||
    die "compiling the hook glue failed (see $log)"
fi
(cd "$web2c" && make -j"$jobs" pdftex_ch_srcs="$ch_srcs" CPPFLAGS="$cppflags" LIBS="$libs -lstdc++" pdftex) \
  >>"$log" 2>&1 || die "building pdfTeX failed (see $log)"
cp "$web2c/pdftex" "$out.tmp"
mv "$out.tmp" "$out"
echo "$stamp_key" >"$out.key"
