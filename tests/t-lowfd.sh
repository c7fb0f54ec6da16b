#!/bin/bash
# t-lowfd: the daemon serves any number of files under `ulimit -n 64`, with or without a plan, concurrent readers of the same data share one fetch, worker threads that cannot fit under the limit are refused, and a low soft limit is raised to the hard one.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_cmd getfattr

make_volume 512
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT"
"$MKTREE" "$SRC/many" 3000 30 8000 11
"$MKTREE" --file "$SRC/shared" 41943040 12

DSFS_NOFILE=64 mount_dsfs "$SRC" "$MNT" -o cache_size=128M
pid=${DSFS_PID[$MNT]}
[[ $(awk '/^Max open files/ { print $4 }' "/proc/$pid/limits") == 64 ]] || fail "limit not applied"
sync; echo 3 >/proc/sys/vm/drop_caches
say "8 readers of one cold file: one fetch"
before=$(stat_of backing_read_bytes)
pids=()
for i in 1 2 3 4 5 6 7 8; do
	cmp "$SRC/shared" "$MNT/shared" & pids+=($!)
done
for p in "${pids[@]}"; do
	wait "$p" || fail "a concurrent reader saw different bytes"
done
after=$(stat_of backing_read_bytes)
fetched=$((after - before))
say "fetched $fetched bytes for a 40 MiB file read 8 times"
((fetched > 0 && fetched <= 41943040)) || fail "expected one fetch of 41943040 bytes, got $fetched"
# 40 MiB is beyond whole_file_max (16 MiB): sequential reads get read-ahead.
((  $(stat_of prefetch_bytes) > 0 )) || fail "no read-ahead for a sequential read of a large file"
"$READCHECK" tree "$SRC" "$MNT" >/dev/null || fail "tree differs under ulimit -n 64"
"$READCHECK" random "$SRC" "$MNT" 16 300 >/dev/null || fail "random reads differ under ulimit -n 64"
fds=$(ls "/proc/$pid/fd" | wc -l)
((fds <= 64)) || fail "daemon holds $fds fds"

unmount_dsfs "$MNT"

# With a plan, the fetch runs from the mount on, many reads in flight: each
# holds its file's fd.  They must leave the loader's own reads and listings
# the descriptors they need.
say "a plan under ulimit -n 64: its fetch leaves the readers their files"
"$MKTREE" "$SRC/planned" 2000 20 131072 13
# Three cold mounts: the fetch overlaps the readers differently each time.
for round in 1 2 3; do
	sync; echo 3 >/proc/sys/vm/drop_caches
	DSFS_NOFILE=64 mount_dsfs "$SRC" "$MNT" -o cache_size=512M,sampler=python-shuffle,seed=$round,layout=sorted,dataset=planned
	pid=${DSFS_PID[$MNT]}
	"$READCHECK" tree "$SRC/planned" "$MNT/planned" >"$WORK/tree.out" & tree=$!
	if ! "$READCHECK" random "$SRC/planned" "$MNT/planned" 16 300 >"$WORK/rc.out"; then
		tail -3 "$WORK/rc.out" >&2
		fail "random reads differ with a plan under ulimit -n 64 (round $round)"
	fi
	if ! wait "$tree"; then
		tail -3 "$WORK/tree.out" >&2
		fail "tree differs with a plan under ulimit -n 64 (round $round)"
	fi
	prefetched=$(stat_of prefetch_bytes)
	((prefetched > 0)) || fail "the plan fetched nothing (round $round)"
	errors=$(stat_of errors)
	((errors == 0)) || fail "$errors reads failed with a plan under ulimit -n 64 (round $round)"
	fds=$(ls "/proc/$pid/fd" | wc -l)
	((fds <= 64)) || fail "daemon holds $fds fds"
	unmount_dsfs "$MNT"
done

say "more worker threads than the limit leaves room for: refused"
rc=0
(ulimit -n 64 && exec "$DSFS" "$SRC" "$MNT" -o max_threads=64) 2>"$WORK/err" || rc=$?
((rc == 1)) && grep -q "max_threads=64 .* the limit is 64" "$WORK/err" ||
	fail "max_threads=64 under ulimit -n 64: rc $rc, $(cat "$WORK/err")"
! is_mounted "$MNT" || fail "mounted anyway"

# A shell's soft limit (often 1024) under a higher hard one does not size
# the pool: the daemon raises its soft limit to the hard one, and a
# max_open that fits only under the hard limit is accepted and serves.
hard=$(ulimit -Hn)
if [[ $hard == unlimited ]] || ((hard < 1100)); then
	say "skipped the soft-limit section: hard limit $hard"
else
	say "soft limit 128 under a hard limit of $hard: raised, max_open=1000 serves"
	DSFS_NOFILE_SOFT=128 mount_dsfs "$SRC" "$MNT" -o cache_size=128M,max_open=1000
	pid=${DSFS_PID[$MNT]}
	soft=$(awk '/^Max open files/ { print $4 }' "/proc/$pid/limits")
	[[ $soft == "$hard" ]] || fail "soft limit $soft, not raised to the hard $hard"
	sync; echo 3 >/proc/sys/vm/drop_caches
	"$READCHECK" random "$SRC/many" "$MNT/many" 16 300 >/dev/null ||
		fail "random reads differ with max_open=1000"
	unmount_dsfs "$MNT"
fi
