#!/bin/bash
# t-headers: a torch job that reads the first 4 KiB of every image in index order before training (as an aspect-ratio pass does) is read ahead of in index order, as is a validation DataLoader's (shuffle=False) pass (before, each of their reads waited on storage); the header pass leaves each file's start in the page cache, so its epoch's opens reach the daemon only as reads past offset 0: they are heard, and the epoch is found and followed (before, it was lost and nothing of the epoch was heard); and a loader that reads each file's end first, then all of it (zip, npz, Parquet) is heard once per open, not twice.  Every byte is checked against the source.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_torch

make_volume 512
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT"
# Files of 32 to 96 KiB: more than the kernel reads ahead of a 4 KiB read.
total=$(make_imagefolder "$SRC/train" 20 150 64)
n=3000
PLAN="sampler=torch-random,seed=31,layout=imagefolder,dataset=train"

# epoch0_of FILE: "accesses mispredictions" of epoch 0 alone, from the
# loader's --stats snapshots before it (e0) and after it (end).
epoch0_of() {
	awk '$2 == "plan.accesses" { a[$1] = $3 }
	     $2 == "plan.mispredictions" { m[$1] = $3 }
	     END { print a["end"] - a["e0"], m["end"] - m["e0"] }' "$1"
}

for push in off auto; do
	say "a header pass over $n files, then epoch 0, push=$push"
	mount_dsfs "$SRC" "$MNT" -o "cache_size=$((total >> 20))M,hugepages=off,push=$push,$PLAN"
	rm -f "$WORK/h.stats"
	"$PY" "$srcdir/loader.py" --mode torch-random --seed 31 --first 0 \
		--last 0 --header-pass 4096 --stats "$MNT" "$WORK/h.stats" \
		--source "$SRC/train" "$MNT/train" || fail "the loader failed"
	log=${DSFS_LOG[$(realpath "$MNT")]}
	grep "plan:" "$log" >&2 || true
	read -r acc mis < <(epoch0_of "$WORK/h.stats")
	say "epoch 0: $acc opens heard, $mis mispredicted"
	# The pass in index order is read ahead of (plan.index_pass_samples:
	# the files the guess of epoch 0 fetched at the mount, about half,
	# were cached already), so that most of its reads find their file
	# cached: before, each file the guess had not fetched was read from
	# storage while the pass waited (1,500 of them).
	read -r ahead stalls < <(awk '$1 == "pass" && $2 == "plan.index_pass_samples" { a = $3 }
		$1 == "pass" && $2 == "stalls" { s = $3 } END { print a + 0, s + 0 }' "$WORK/h.stats")
	say "the header pass: $ahead samples read ahead of it, $stalls reads waited"
	((ahead >= n / 4)) || fail "only $ahead of the pass's $n samples read ahead of it"
	((stalls <= n / 4)) || fail "$stalls of the pass's $n reads waited on storage"
	# The header pass is heard in index order (no epoch's): lost, then
	# found at epoch 0 from the loader's first opens.  With push, the
	# files pushed ahead of the loader are read unheard, all but the
	# sentinels (an eighth) when the push keeps ahead: 311 to 2,337
	# opens heard in runs here.
	log_has "$MNT" "following epoch 0" || fail "epoch 0 was not found"
	if grep -F "prediction lost in epoch 0" "$log"; then
		fail "the prediction was lost in epoch 0"
	fi
	((acc >= n / 16)) || fail "only $acc of epoch 0's $n opens were heard"
	((mis * 10 <= acc)) || fail "$mis of epoch 0's $acc opens mispredicted"
	unmount_dsfs "$MNT"
done

say "a validation pass: a DataLoader with shuffle=False, 2 workers of 16, caches dropped"
mount_dsfs "$SRC" "$MNT" -o "cache_size=$((total >> 20))M,hugepages=off,push=off,$PLAN"
rm -f "$WORK/v.stats"
"$PY" "$srcdir/loader.py" --mode sequential --first 0 --last 0 \
	--batch-size 16 --workers 2 --drop-caches --stats "$MNT" "$WORK/v.stats" \
	--source "$SRC/train" "$MNT/train" || fail "the loader failed"
read -r ahead stalls < <(awk '$1 == "end" && $2 == "plan.index_pass_samples" { a = $3 }
	$1 == "end" && $2 == "stalls" { s = $3 } END { print a + 0, s + 0 }' "$WORK/v.stats")
say "the validation pass: $ahead samples read ahead of it, $stalls reads waited"
log_has "$MNT" "in index order" || fail "the pass in index order was not logged"
((ahead >= n / 4)) || fail "only $ahead of the pass's $n samples read ahead of it"
((stalls <= n / 4)) || fail "$stalls of the pass's $n reads waited on storage"
unmount_dsfs "$MNT"

say "each file's last 4 KiB read first, then all of it; 2 epochs, caches dropped"
mount_dsfs "$SRC" "$MNT" -o "cache_size=$((total >> 20))M,hugepages=off,push=off,$PLAN"
"$PY" "$srcdir/loader.py" --mode torch-random --seed 31 --first 0 --last 1 \
	--tail-first 4096 --drop-caches --source "$SRC/train" "$MNT/train" ||
	fail "the loader failed"
acc=$(stat_of plan.accesses)
((acc <= 2 * n + 2 * n / 100)) || fail "$acc opens heard of the loader's $((2 * n))"
check_plan_stats "$MNT" 1 $((2 * total)) || fail "the loader's order was not followed"
unmount_dsfs "$MNT"
