#!/bin/bash
# t-nextuse: with a dataset twice the cache, the hit rate of a reader following the plan matches an offline simulation of furthest-next-use eviction (Belady's MIN, byte budget, no prefetch) over the same order, sizes and budget; with the plan's prefetch on, it does at least as well.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_cmd getfattr

PY=/usr/bin/python3
[[ -x $PY ]] || skip "Debian's /usr/bin/python3 is needed"
make_volume 1024
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT"
# 1000 files of 1..120000 bytes (about 60 MB, one in 32 empty).
"$MKTREE" "$SRC/train" 1000 10 60000 33
PLAN="sampler=python-shuffle,seed=11,layout=sorted,dataset=train,epoch=0"
EPOCHS=3
for ((e = 0; e <= EPOCHS; e++)); do
	"$DSFS" --print-plan "$SRC" -o "${PLAN/epoch=0/epoch=$e}" >"$WORK/order$e"
done

# run_epochs: read EPOCHS epochs in the planned order, one file at a time
# (as a single-worker loader does), page caches dropped before each.
run_epochs() {
	local e
	for ((e = 0; e < EPOCHS; e++)); do
		read_in_order "$MNT/train" "$WORK/order$e"
	done
}

# simulate BYTES: MIN's byte hit ratio, in percent, over the same epochs and
# a cache of BYTES (tests/minsim.py).
simulate() {
	local e orders=()

	for ((e = 0; e <= EPOCHS; e++)); do
		orders+=("$WORK/order$e")
	done
	"$PY" "$srcdir/minsim.py" "$SRC/train" "$1" "${orders[@]}"
}

say "no prefetch (lead_max=0): the plan only orders eviction"
mount_dsfs "$SRC" "$MNT" -o "cache_size=28M,hugepages=off,lead_max=0,$PLAN"
cap=$(stat_of cache.capacity_bytes)
run_epochs
read=$(stat_of read_bytes) hit=$(stat_of hit_bytes)
scattered=$(stat_of cache.scattered)
unmount_dsfs "$MNT"
sim=$(simulate "$cap")
data=$(du -sb "$SRC/train" | cut -f1)
dsfs=$("$PY" -c "print('%.2f' % (100.0 * $hit / $read))")
say "data $data bytes, cache $cap: dsfs hit $dsfs% of $read bytes, MIN $sim% ($scattered entries in several runs)"
((data >= 2 * cap - (4 << 20))) || fail "the dataset ($data) is not about twice the cache ($cap)"
# MIN keeps about half of every epoch after the first: well above 0.
"$PY" -c "import sys; sys.exit(not $sim > 20)" || fail "simulation: $sim%"
# Within a point of MIN (the issue's bound): an entry takes any free pages,
# so eviction has MIN's whole byte budget; what is left is reports that
# reach the scheduler a little after the reads they stand for.  Runs gave
# 32.60% twice against 32.60% (with one page run per entry, before: 30.30
# to 31.58%).
"$PY" -c "import sys; sys.exit(not abs($dsfs - $sim) <= 1)" ||
	fail "hit rate $dsfs% is not within a point of MIN's $sim%"

say "with the plan's prefetch (and verify: hashes span an entry's runs)"
mount_dsfs "$SRC" "$MNT" -o "cache_size=28M,hugepages=off,verify,$PLAN"
run_epochs
read=$(stat_of read_bytes) hit=$(stat_of hit_bytes)
back=$(stat_of backing_read_bytes)
scattered=$(stat_of cache.scattered)
((scattered > 0)) || fail "no entry took several runs: the bytes compared below cover none"
"$READCHECK" tree "$SRC" "$MNT" >/dev/null || fail "tree differs"
[[ $(stat_of cache.verify_failures) == 0 ]] || fail "verify failures on unchanged data"
unmount_dsfs "$MNT"
pre=$("$PY" -c "print('%.2f' % (100.0 * $hit / $read))")
say "dsfs hit $pre% of $read bytes ($back read from the volume), MIN $sim% ($scattered entries in several runs)"
"$PY" -c "import sys; sys.exit(not $pre >= $sim - 1)" ||
	fail "with prefetch, hit rate $pre% is below MIN's $sim% by more than a point"
