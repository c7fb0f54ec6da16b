#!/bin/bash
# t-churn: files replaced, truncated, appended and deleted and directories renamed on the volume under 8 busy readers: no read returns bytes that were never in the file (by default one kernel page-cache race, a zero-padded old end, is counted apart; with -o direct_io nothing is), and afterwards every name reads as on the volume (deleted and moved-away names give ENOENT).
set -euo pipefail
. "$srcdir/lib.sh"
require_root
[[ -x $PY ]] || skip "Debian's /usr/bin/python3 is needed"

make_volume 1024
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT"
"$MKTREE" "$SRC/data" 300 10 60000 71
# A cache smaller than the data, so entries are evicted and fetched again
# while the files change.
mount_dsfs "$SRC" "$MNT" -o cache_size=12M,hugepages=off
"$PY" "$srcdir/churn.py" "$SRC" "$MNT" 8 "${CHURN_SECONDS:-20}" >"$WORK/churn.out" 2>&1 ||
	fail "$(cat "$WORK/churn.out")"
grep PADDED "$WORK/churn.out" >&2 || true
say "$(tail -1 "$WORK/churn.out")"
say "invalidations $(stat_of cache.invalidations)"
unmount_dsfs "$MNT"

# -o direct_io: no kernel page cache, so no page of an old version either.
# A fresh tree: the churn above deleted and moved much of the first.
rm -rf "${SRC:?}"/*
"$MKTREE" "$SRC/data" 300 10 60000 72
mount_dsfs "$SRC" "$MNT" -o cache_size=12M,hugepages=off,direct_io
"$PY" "$srcdir/churn.py" "$SRC" "$MNT" 8 "${CHURN_SECONDS:-20}" strict \
	>"$WORK/churn.out" 2>&1 || fail "direct_io: $(cat "$WORK/churn.out")"
say "direct_io: $(tail -1 "$WORK/churn.out")"
unmount_dsfs "$MNT"
