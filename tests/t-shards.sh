#!/bin/bash
# t-shards: shards of about a quarter of the prefetch's lead (a few tar files of a WebDataset-style job, python-shuffle order): no shard is pushed, so that every open shows the loader's place, and the lead starts right behind the loader; a loader that lets the prefetch settle before each shard gets every byte from the cache, epoch 0 (the guess at the mount) included.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_cmd getfattr

PY=/usr/bin/python3
[[ -x $PY ]] || skip "Debian's /usr/bin/python3 is needed"
make_volume 512
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir -p "$SRC/shards" "$MNT"
# 16 shards of 4 to 6 MiB (about 80 MiB); the cache holds half of them,
# and its lead (half the cache) four.
for ((i = 0; i < 16; i++)); do
	head -c $(((4 << 20) + i * 131072 + 4099)) /dev/urandom \
		>"$SRC/shards/shard-$(printf %02d "$i").tar"
done
sync
PLAN="sampler=python-shuffle,seed=5,layout=sorted,dataset=shards"
EPOCHS=3
for ((e = 0; e < EPOCHS; e++)); do
	"$DSFS" --print-plan "$SRC" -o "$PLAN,epoch=$e" >"$WORK/order$e"
done

echo 3 >/proc/sys/vm/drop_caches
mount_dsfs "$SRC" "$MNT" -o "cache_size=40M,hugepages=off,$PLAN"

# Each epoch in its order, the kernel's page cache dropped first (a data
# set larger than memory); before each shard, wait until the daemon has
# fetched nothing for 0.6 s: the prefetch went as far as it may.  Every
# byte is compared with the backing shard.
for ((e = 0; e < EPOCHS; e++)); do
	sync
	echo 1 >/proc/sys/vm/drop_caches
	compare_in_order "$SRC/shards" "$MNT/shards" "$WORK/order$e" "$MNT" ||
		fail "epoch $e: bytes differ"
	read -r reads bytes hits stalls pushes acc mis < <(
		printf '%s ' "$(stat_of reads)" "$(stat_of read_bytes)" \
			"$(stat_of hit_bytes)" "$(stat_of stalls)" \
			"$(stat_of pushes)" "$(stat_of plan.accesses)" \
			"$(stat_of plan.mispredictions)"
		echo)
	say "epoch $e: $reads READs, $bytes bytes, $hits from the cache, $stalls stalls, $pushes pushes; plan $acc accesses, $mis mispredictions"
done

total=$(find "$SRC/shards" -type f -printf '%s\n' | awk '{ n += $1 } END { print n }')
((pushes == 0)) || fail "$pushes chunks of shards pushed: their opens hide the loader's place"
((bytes == EPOCHS * total)) ||
	fail "$bytes bytes came by READ, $((EPOCHS * total)) read"
((acc == EPOCHS * 16 && mis == 0)) ||
	fail "the plan placed $((acc - mis)) of $acc opens, $((EPOCHS * 16)) made"
((hits == bytes && stalls == 0)) ||
	fail "$((bytes - hits)) bytes ($stalls stalls) waited on the backing store: the lead did not start at the loader"
unmount_dsfs "$MNT"
say ok
