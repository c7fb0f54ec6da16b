#!/bin/bash
# t-soak: 64 reader processes (random whole-file and random-range reads, every byte checked) beside a loader prefetched in plan order, for SOAK_SECONDS (60), through a cache a quarter of the data, while the kernel's dentries and inodes are dropped every 0.2 s: no error, no wrong byte, and the daemon's memory stays flat.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_cmd getfattr sha256sum
[[ -x $PY ]] || skip "Debian's /usr/bin/python3 is needed"

SECS=${SOAK_SECONDS:-60}
make_volume 1024
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT"
# The loader's dataset (its opens follow the plan) and another tree for the
# random readers (whose opens would only be the plan's mispredictions),
# about 48 MB each, sharing one cache and one I/O engine.
"$MKTREE" "$SRC/train" 800 8 60000 61
"$MKTREE" "$SRC/other" 800 8 60000 62
PLAN="sampler=python-shuffle,seed=8,layout=sorted,dataset=train"
(cd "$SRC" && find other -type f -print0 | xargs -0 sha256sum |
	while read -r sum path; do
		echo "$sum $(stat -c %s "$path") $path"
	done) >"$WORK/manifest"
for e in 0 1 2 3 4 5 6 7; do
	"$DSFS" --print-plan "$SRC" -o "$PLAN,epoch=$e" >"$WORK/order$e"
done

mount_dsfs "$SRC" "$MNT" -o "cache_size=24M,hugepages=off,$PLAN"
pid=${DSFS_PID[$(realpath "$MNT")]}

# The daemon's resident memory every second, in KiB.
(while pid_alive "$pid"; do
	awk '/^VmRSS/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true
	sleep 1
done) >"$WORK/rss" &

# A loader in plan order, epoch after epoch, keeps the prefetcher busy.
(for e in 0 1 2 3 4 5 6 7; do
	[[ -e $WORK/stop ]] || read_in_order "$MNT/train" "$WORK/order$e"
done) >"$WORK/loader.out" 2>&1 &
loader=$!

say "64 readers for $SECS s"
pids=()
for ((i = 0; i < 48; i++)); do
	READCHECK_SEED=$i READCHECK_SECONDS=$SECS \
		"$READCHECK" random "$SRC/other" "$MNT/other" 1 100000000 >"$WORK/rc.$i" 2>&1 &
	pids+=($!)
done
for ((i = 0; i < 16; i++)); do
	"$PY" "$srcdir/faultread.py" "$WORK/manifest" "$MNT" 1 "$SECS" \
		>"$WORK/fr.$i" 2>&1 &
	pids+=($!)
done
# The kernel forgets inodes under memory pressure, sometimes right after
# the LOOKUP that made them: drop its dentries and inodes all along, so
# that FORGETs race with lookups, reads and pushes.
(while [[ -d $WORK ]]; do
	echo 2 >/proc/sys/vm/drop_caches
	sleep 0.2
done) &
dropper=$!
at_exit "kill $dropper 2>/dev/null"
bad=0
for p in "${pids[@]}"; do
	wait "$p" || bad=$((bad + 1))
done
kill "$dropper"
wait "$dropper" || true
((bad == 0)) || fail "$bad readers failed: $(grep -h -m3 "MISMATCH\|BAD" "$WORK"/rc.* "$WORK"/fr.* | head -5)"
errs=$(cat "$WORK"/fr.* | awk '{ e += $4 } END { print e + 0 }')
((errs == 0)) || fail "whole-file readers got $errs errors"
bytes=$(cat "$WORK"/rc.* | awk '/bytes compared/ { b += $(NF - 4) } END { printf "%.0f", b }')
preads=$(cat "$WORK"/rc.* | awk '/preads over/ { n += $4 } END { print n + 0 }')
whole=$(cat "$WORK"/fr.* | awk '{ n += $2 } END { print n + 0 }')
# The loader ends after its current epoch (its files must be closed
# before the unmount).
touch "$WORK/stop"
wait "$loader" || fail "the loader failed: $(tail -3 "$WORK/loader.out")"
say "verified $bytes bytes in $preads random preads and $whole whole files; plan $(stat_of plan.detected) at epoch $(stat_of plan.epoch), $(stat_of plan.mispredictions) mispredictions; $(stat_of hit_bytes) of $(stat_of read_bytes) bytes hit"
[[ $(stat_of plan.detected) != '"lost"' ]] || fail "the loader's plan was lost"
((preads > 0 && whole > 0)) || fail "the readers did nothing"
(($(stat_of errors) == 0)) || fail "the daemon counted $(stat_of errors) read errors"

# Memory: the second half of the run against the first, after a warm-up.
mapfile -t rss <"$WORK/rss"
n=${#rss[@]}
((n >= 8)) || fail "only $n memory samples"
read -r first second peak < <(printf '%s\n' "${rss[@]:2}" | awk '
	{ v[NR] = $1; if ($1 > p) p = $1 }
	END { h = int(NR / 2); for (i = 1; i <= h; i++) a = a < v[i] ? v[i] : a
	      for (i = h + 1; i <= NR; i++) b = b < v[i] ? v[i] : b
	      print a, b, p }')
say "daemon RSS: peak $((peak / 1024)) MiB; first half max $((first / 1024)) MiB, second half max $((second / 1024)) MiB"
# ASan keeps freed memory in quarantine: its RSS says nothing about ours.
if ! grep -q __asan_init "$DSFS"; then
	((peak < (24 + 128) * 1024)) || fail "RSS peak $peak KiB beyond cache_size + 128 MiB"
	((second <= first + 16 * 1024)) || fail "RSS grew by $(((second - first) / 1024)) MiB in the second half"
fi
unmount_dsfs "$MNT"
