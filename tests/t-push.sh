#!/bin/bash
# t-push: with a plan, fetched files of a listed tree are pushed into the kernel's page cache (every chunk of every sample but each eighth; fetched before the listing: once listed), read back byte for byte without reaching the daemon, dropped when the backing file changes; pushed again from the cache once the kernel dropped pushed pages (a whole cache, or one file mid-epoch: never a sentinel this epoch still reads), or pages the loader's READs brought before the plan; the push thread runs at idle priority (SCHED_IDLE) while ahead of the loader; push=off sends every read to the daemon.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_cmd getfattr

[[ -x /usr/bin/python3 ]] || skip "Debian's /usr/bin/python3 is needed"
make_volume 512
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT"
make_imagefolder "$SRC/train" 4 60 48 >/dev/null
# Files of several chunks (2 MiB each), a size that is no multiple of a
# page, and an empty one.
head -c $((5 << 20)) /dev/urandom >"$SRC/train/class001/big0.jpg"
head -c $(((2 << 20) + 4097)) /dev/urandom >"$SRC/train/class002/big1.jpg"
: >"$SRC/train/class003/empty.jpg"
sync
PLAN="sampler=torch-random,seed=11,layout=imagefolder,dataset=train,epoch=0"
"$DSFS" --print-plan "$SRC" -o "$PLAN" >"$WORK/order"
files=$(wc -l <"$WORK/order")
total=$(find "$SRC/train" -type f -printf '%s\n' | awk '{ n += $1 } END { print n }')

# The chunks the plan pushes: those of every sample whose position in the
# order is not a multiple of 8 (the scheduler's sentinels).
# The sentinels' bytes: what READs should bring when every push landed.
read -r want sentinel_bytes < <(awk -v src="$SRC/train" '{
	cmd = "stat -c %s \"" src "/" $0 "\""; cmd | getline size; close(cmd)
	if (NR % 8 != 1) n += int((size + 2097151) / 2097152); else b += size
	} END { print n + 0, b + 0 }' "$WORK/order")

# check_reads WHAT: the READs that reached the daemon brought the
# sentinels' bytes, and less than a tenth of the pushed ones besides (how
# many READs that takes depends on the kernel's read-ahead).
check_reads() {
	local reads bytes

	reads=$(stat_of reads) bytes=$(stat_of read_bytes)
	say "$1: $reads READs reached the daemon, $bytes bytes; the sentinels have $sentinel_bytes"
	((bytes >= sentinel_bytes && bytes - sentinel_bytes <= (total - sentinel_bytes) / 10)) ||
		fail "$1: $bytes bytes came by READ: pushes not served by the kernel"
}

ctl() {
	getfattr --absolute-names --only-values -n "user.dsfs.plan=$1" "$MNT" >/dev/null
}

# wait_for EXPR: wait until the arithmetic EXPR over the stats named in
# it as $(stat_of KEY) holds; fail after 20 s.
wait_for() {
	local i

	for ((i = 0; i < 200; i++)); do
		eval "(($1))" && return 0
		sleep 0.1
	done
	fail "still not true after 20 s: $1"
}

# check_order [ORDER]: read every file in plan order (epoch 0's, or
# $WORK/ORDER's) through the mount, each compared byte for byte with its
# backing file; the page caches are not dropped (the pushed pages are what
# is read).
check_order() {
	compare_in_order "$SRC/train" "$MNT/train" "$WORK/${1:-order}"
}

say "push on (default): list the tree, start the plan, read in its order"
sync
echo 3 >/proc/sys/vm/drop_caches
mount_dsfs "$SRC" "$MNT" -o cache_size=64M
find "$MNT/train" -type f >/dev/null # READDIRPLUS: the kernel's inodes
ctl "$PLAN"
wait_for '$(stat_of prefetch_bytes) == total'
wait_for '$(stat_of pushes) + $(stat_of push_skipped) >= want'
pushes=$(stat_of pushes) skipped=$(stat_of push_skipped)
say "$files samples: $pushes chunks pushed of $want expected, $skipped skipped"
((pushes == want)) || fail "pushed $pushes chunks, expected $want"
check_order || fail "bytes differ after push"
check_reads "pushed after the listing"
# Ahead of the loader all along (every push before any read), the push
# thread runs at idle priority (SCHED_IDLE, policy 5 in stat's field 41),
# below the daemon's own (SCHED_OTHER, 0), at the daemon's nice; unless
# the way back is closed to it (neither CAP_SYS_NICE, bit 23 of CapEff,
# which a container's root may lack, nor a nice within RLIMIT_NICE):
# then at its own.
pid=${DSFS_PID[$MNT]}
own=$(awk '{ print $41, $19 }' "/proc/$pid/stat")
capeff=$(awk '/^CapEff:/ { print $2 }' "/proc/$pid/status")
nicelim=$(awk '/^Max nice priority/ { print $4 }' "/proc/$pid/limits")
want_prio="5 ${own#0 }"
if ! (((16#$capeff >> 23) & 1)) &&
	[[ $nicelim != unlimited ]] && ((20 - nicelim > ${own#0 })); then
	want_prio=$own
fi
prio=
for t in /proc/"$pid"/task/*; do
	[[ $(<"$t/comm") == dsfs-push ]] && prio=$(awk '{ print $41, $19 }' "$t/stat")
done
say "the push thread's policy and nice: ${prio:-none} (the daemon's: $own; CapEff $capeff, RLIMIT_NICE $nicelim)"
[[ -n $prio ]] || fail "no dsfs-push thread"
[[ $own == "0 "* && $prio == "$want_prio" ]] ||
	fail "the push thread runs at policy and nice $prio while ahead, not $want_prio (the daemon at $own)"
acc=$(stat_of plan.accesses) mis=$(stat_of plan.mispredictions)
say "plan: $acc accesses, $mis mispredictions"
((acc >= files / 8 && mis == 0)) ||
	fail "the plan did not see the sentinels: $acc accesses, $mis mispredictions"
"$READCHECK" tree "$SRC" "$MNT" >/dev/null || fail "tree differs"

say "a pushed file changed on SOURCE: the kernel's pages are dropped"
f=$(sed -n 2p "$WORK/order") # position 1: pushed
head -c "$(stat -c %s "$SRC/train/$f")" /dev/urandom >"$WORK/new"
cp "$WORK/new" "$SRC/train/$f"
for ((i = 0; i < 50; i++)); do
	cmp -s "$WORK/new" "$MNT/train/$f" && break
	sleep 0.1
done
cmp "$WORK/new" "$MNT/train/$f" || fail "$f: old bytes after the change"
unmount_dsfs "$MNT"

# mount_pushed: caches dropped, mount, list the tree, start the plan, and
# wait until every byte is fetched and every push done.
mount_pushed() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	mount_dsfs "$SRC" "$MNT" -o cache_size=64M
	find "$MNT/train" -type f >/dev/null
	ctl "$PLAN"
	wait_for '$(stat_of prefetch_bytes) == total'
	wait_for '$(stat_of pushes) + $(stat_of push_skipped) >= want'
}

# settle KEY: wait until the stat KEY has stayed the same for a second.
settle() {
	local last=-1 now same=0 i

	for ((i = 0; i < 200 && same < 10; i++)); do
		now=$(stat_of "$1")
		if [[ $now == "$last" ]]; then same=$((same + 1)); else same=0; fi
		last=$now
		sleep 0.1
	done
	((same >= 10)) || fail "$1 still moving after 20 s"
}

# The lead (half the cache) holds the whole data set and reaches into
# epoch 1, where a sample this epoch still reads at a sentinel position
# may sit at a pushed one: the walk of the lead after a dropped push must
# not push it for epoch 1 (its read now would not reach the daemon, and
# the plan would lose sight of the loader).
say "a pushed file's pages dropped mid-epoch: pushed again, sentinels still read"
mount_pushed
h=$((files / 2 / 8 * 8 + 3)) # a pushed position (0-based) past the middle
head -n "$h" "$WORK/order" >"$WORK/order-a"
sed -n "$((h + 1))p" "$WORK/order" >"$WORK/order-h"
tail -n +"$((h + 2))" "$WORK/order" >"$WORK/order-c"
check_order order-a || fail "bytes differ before the drop"
pushes0=$(stat_of pushes) read0=$(stat_of read_bytes) acc0=$(stat_of plan.accesses)
reads0=$(stat_of reads)
/usr/bin/python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
os.close(fd)' "$MNT/train/$(cat "$WORK/order-h")"
check_order order-h || fail "bytes differ in the dropped file"
# The copies again may begin later than settle's second of calm on a busy
# machine (once, in CI's ASan build, none had): wait up to 20 s for the
# first, and say what the daemon saw if none comes.
for ((i = 0; i < 200; i++)); do
	(($(stat_of pushes) > pushes0)) && break
	sleep 0.1
done
settle pushes
again=$(($(stat_of pushes) - pushes0))
((again > 0)) || fail "nothing pushed again after a dropped push came by READ ($(($(stat_of reads) - reads0)) READs since the drop, push_skipped $(stat_of push_skipped), plan $(stat_of plan.detected) at $(stat_of plan.position))"
read1=$(stat_of read_bytes)
check_order order-c || fail "bytes differ after the push again"
read -r left_bytes left_sentinels < <(tail -n +"$((h + 2))" "$WORK/order" |
	awk -v src="$SRC/train" -v first=$((h + 1)) '(first + NR - 1) % 8 == 0 {
		cmd = "stat -c %s \"" src "/" $0 "\""; cmd | getline size; close(cmd)
		b += size; n++ } END { print b + 0, n + 0 }')
bytes=$(($(stat_of read_bytes) - read1))
acc=$(($(stat_of plan.accesses) - acc0)) mis=$(stat_of plan.mispredictions)
say "dropped at $h: $again chunks pushed again; then $bytes bytes by READ (sentinels $left_bytes), $acc accesses ($left_sentinels sentinels left), $mis mispredictions"
((bytes >= left_bytes)) ||
	fail "sentinels ahead were pushed: $bytes bytes by READ, their $left_bytes expected"
((acc >= left_sentinels + 1 && mis == 0)) ||
	fail "the plan lost sight of the loader: $acc accesses, $mis mispredictions"
unmount_dsfs "$MNT"

say "plan from the mount, fetched before the listing: pushed once listed"
sync
echo 3 >/proc/sys/vm/drop_caches
mount_dsfs "$SRC" "$MNT" -o "cache_size=64M,$PLAN"
wait_for '$(stat_of prefetch_bytes) == total'
pushes=$(stat_of pushes)
((pushes == 0)) || fail "$pushes chunks pushed before the kernel knew a file"
find "$MNT/train" -type f >/dev/null
wait_for '$(stat_of pushes) + $(stat_of push_skipped) >= want'
pushes=$(stat_of pushes)
say "$pushes chunks pushed of $want after the listing"
((pushes == want)) || fail "pushed $pushes chunks after the listing, expected $want"
check_order || fail "bytes differ after a push on listing"
check_reads "parked, pushed when listed"
unmount_dsfs "$MNT"

say "the kernel dropped pushed pages: what the plan finds cached is pushed again"
mount_pushed
check_order || fail "bytes differ after push"
sync
echo 3 >/proc/sys/vm/drop_caches # pages, dentries and inodes
find "$MNT/train" -type f >/dev/null
"$DSFS" --print-plan "$SRC" -o "${PLAN/epoch=0/epoch=1}" >"$WORK/order1"
read0=$(stat_of read_bytes) pushes0=$(stat_of pushes)
check_order order1 || fail "bytes differ in epoch 1"
bytes=$(($(stat_of read_bytes) - read0)) pushes=$(($(stat_of pushes) - pushes0))
say "epoch 1, every byte cached: $bytes of $total bytes by READ, $pushes chunks pushed again"
# Without pushing again, every byte comes by READ.
((bytes <= total / 2)) || fail "epoch 1: $bytes bytes came by READ: cached data not pushed again"
unmount_dsfs "$MNT"

# Another reader's eviction can keep chunks from their push; the loader's
# READs then fill them, and the next epoch finds them cached: the kernel
# was taken to hold them.  Here the data is read before the plan starts,
# then the kernel's pages (not its inodes) are dropped.
say "read before the plan (cached by READs, then dropped by the kernel): pushed once a READ shows it"
sync
echo 3 >/proc/sys/vm/drop_caches
mount_dsfs "$SRC" "$MNT" -o cache_size=64M
find "$MNT/train" -type f >/dev/null
check_order || fail "bytes differ before the plan"
ctl "$PLAN"
settle plan.lead_bytes
pushes0=$(stat_of pushes)
((pushes0 == 0)) || fail "$pushes0 chunks pushed of data the kernel holds"
sync
echo 1 >/proc/sys/vm/drop_caches # pages only
# The first 16 samples (sentinels and samples held back), then the rest
# once the pushes settled: all but the sentinels' bytes pushed.
head -n 16 "$WORK/order" >"$WORK/order-a"
tail -n +17 "$WORK/order" >"$WORK/order-c"
check_order order-a || fail "bytes differ after the kernel dropped its pages"
settle pushes
read0=$(stat_of read_bytes)
check_order order-c || fail "bytes differ after the push"
bytes=$(($(stat_of read_bytes) - read0)) pushes=$(($(stat_of pushes) - pushes0))
read -r left_bytes < <(tail -n +17 "$WORK/order" | awk -v src="$SRC/train" '
	NR % 8 == 1 {
		cmd = "stat -c %s \"" src "/" $0 "\""; cmd | getline size; close(cmd)
		b += size } END { print b + 0 }')
say "read before the plan, then dropped: $pushes chunks pushed; then $bytes bytes by READ (the sentinels left: $left_bytes)"
# Without a push, every byte comes by READ; the sentinels' always do.
((bytes >= left_bytes && bytes - left_bytes <= (total - left_bytes) / 10)) ||
	fail "$bytes bytes came by READ: cached data not pushed"
unmount_dsfs "$MNT"

say "push=off: the same reads all reach the daemon"
sync
echo 3 >/proc/sys/vm/drop_caches
mount_dsfs "$SRC" "$MNT" -o cache_size=64M,push=off
find "$MNT/train" -type f >/dev/null
ctl "$PLAN"
wait_for '$(stat_of prefetch_bytes) == total'
check_order || fail "bytes differ without push"
reads=$(stat_of reads) pushes=$(stat_of pushes)
say "$reads READs, $pushes pushes"
((pushes == 0 && reads >= files - 1)) || fail "push=off: $reads READs, $pushes pushes"
unmount_dsfs "$MNT"
say "ok"
