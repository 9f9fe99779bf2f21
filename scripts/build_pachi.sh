#!/usr/bin/env bash
# Build Pachi 12.90 without its neural networks (DCNN=0, JOSEKIFIX=0: no Caffe, Boost, CUDA or
# KataGo) as the strength anchor for obook's matches (docs/benchmarks.md, "Pachi").
#
#   scripts/build_pachi.sh [DEST]          DEST defaults to .cache/pachi/pachi (gitignored)
#
# The source is cloned from https://github.com/pasky/pachi (tag pachi-12.90). On a machine
# without internet access set PACHI_SRC to either
#   - an unpacked Pachi 12.90 source tree (a checkout or the release tarball), or
#   - a git repository holding the tag pachi-12.90 (a clone or a bare mirror): the tag is
#     cloned from it (a local shallow clone keeps the .git the Makefile reads for build.h).
# Pachi's data files (pattern tables, joseki and opening books) are installed beside the binary:
# Pachi looks for them in its executable's directory. Build needs only gcc and make (Debian:
# build-essential); nothing is installed by this script.
set -euo pipefail

TAG=pachi-12.90
URL=https://github.com/pasky/pachi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEST=${1:-$ROOT/.cache/pachi/pachi}
case $DEST in /*) ;; *) DEST=$PWD/$DEST ;; esac
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 1)}

for tool in gcc make; do
    command -v "$tool" >/dev/null || { echo "build_pachi: $tool is missing (Debian: apt-get install build-essential)" >&2; exit 1; }
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/pachi-build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
SRC=$WORK/pachi

if [[ -n ${PACHI_SRC:-} ]]; then
    [[ -d $PACHI_SRC ]] || { echo "build_pachi: PACHI_SRC=$PACHI_SRC is not a directory" >&2; exit 1; }
    if git -C "$PACHI_SRC" rev-parse --verify --quiet "$TAG^{commit}" >/dev/null 2>&1; then
        echo "build_pachi: cloning $TAG from the git repository $PACHI_SRC"
        git -c advice.detachedHead=false clone --quiet --depth 1 --branch "$TAG" "file://$(cd "$PACHI_SRC" && pwd)" "$SRC"
    elif [[ -f $PACHI_SRC/pachi.c && -f $PACHI_SRC/Makefile ]]; then
        echo "build_pachi: copying the source tree $PACHI_SRC"
        cp -a "$PACHI_SRC" "$SRC"
    else
        echo "build_pachi: PACHI_SRC=$PACHI_SRC is neither a Pachi source tree nor a git repository with tag $TAG" >&2
        exit 1
    fi
else
    echo "build_pachi: cloning $URL at $TAG"
    git -c advice.detachedHead=false clone --quiet --depth 1 --branch "$TAG" "$URL" "$SRC"
fi

if [[ ! -d $SRC/.git ]]; then
    # A tarball has no .git, which the Makefile's build.h rule reads for the branch and hash.
    mkdir -p "$SRC/.git" && touch "$SRC/.git/HEAD" "$SRC/.git/index"
    printf '#define PACHI_GIT_BRANCH   "%s"\n#define PACHI_GIT_HASH     "source"\n' "$TAG" >"$SRC/build.h.git"
fi

grep -q '12\.90' "$SRC/version.h" 2>/dev/null \
    || echo "build_pachi: warning: $SRC/version.h does not say 12.90" >&2

started=$(date +%s)
# GENERIC=1: -mtune=generic instead of -march=native, so the binary also runs on other CPUs.
make -C "$SRC" -j"$JOBS" DCNN=0 JOSEKIFIX=0 GENERIC=1 >"$WORK/make.log" 2>&1 \
    || { tail -40 "$WORK/make.log" >&2; echo "build_pachi: make failed" >&2; exit 1; }
elapsed=$(( $(date +%s) - started ))

mkdir -p "$(dirname "$DEST")"
install -m 755 "$SRC/pachi" "$DEST"
for data in patterns_mm.gamma patterns_mm.spat joseki19.gtp book.dat; do
    [[ -f $SRC/$data ]] && install -m 644 "$SRC/$data" "$(dirname "$DEST")/$data"
done
echo "build_pachi: built $("$DEST" --version 2>&1 | head -1) in ${elapsed}s -> $DEST"
