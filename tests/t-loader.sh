#!/bin/bash
# t-loader: a real torch DataLoader (ImageFolder, 2 workers, shuffle with a seeded generator) reading 3 cold epochs through a cache half the data's size is prefetched in its order: hits >= 95%, mispredictions <= 1%, epoch 2 reported, every byte right; so is a DistributedSampler's epoch that starts at once after the one before was cut short (its non-persistent workers end, and the new ones are not taken for another program).
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_torch

make_volume 1024
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT"
total=$(make_imagefolder "$SRC/train" 8 100 100)
# hugepages=off: leave the huge page pool to t-cache.sh, which may run
# alongside.
PLAN="sampler=torch-random,seed=17,layout=imagefolder,dataset=train"
mount_dsfs "$SRC" "$MNT" -o "cache_size=$((total / 2 >> 20))M,hugepages=off,$PLAN"

say "3 epochs of ~$((total >> 20)) MiB, page caches dropped before each"
"$PY" "$srcdir/loader.py" --mode torch-random --seed 17 --first 0 --last 2 \
	--drop-caches --sleep-ms 5 --source "$SRC/train" "$MNT/train" ||
	fail "the loader failed"
check_plan_stats "$MNT" 2 $((3 * total)) || fail "the loader's order was not followed"
unmount_dsfs "$MNT"

# A cap on an epoch's steps: epoch 0 of a DistributedSampler stops after 10
# batches and epoch 1 starts at once.  Its new workers open epoch 1's first
# samples while the old ones were last seen well behind them; once the old
# ones are gone, those opens are the loader's (not another program's).
say "a DistributedSampler's epoch cut short, the next started at once"
PLAN="sampler=torch-distributed,seed=23,world=1,layout=imagefolder,dataset=train"
mount_dsfs "$SRC" "$MNT" -o "cache_size=$((total / 2 >> 20))M,hugepages=off,$PLAN"
"$PY" "$srcdir/loader.py" --mode distributed --seed 23 --first 0 --last 2 \
	--break-first 10 --drop-caches --sleep-ms 5 --source "$SRC/train" \
	"$MNT/train" || fail "the loader failed"
grep "plan:" "${DSFS_LOG[$(realpath "$MNT")]}" >&2 || true
# (Each epoch's end costs a few mispredictions as the old workers end and
# the new ones start: up to 3%.)
check_plan_stats "$MNT" 2 $((2 * total)) 3 || fail "the epochs after a cut one were not followed"
unmount_dsfs "$MNT"
