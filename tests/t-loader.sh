#!/bin/bash
# t-loader: a real torch DataLoader (ImageFolder, 2 workers, shuffle with a seeded generator) reading 3 cold epochs through a cache half the data's size is prefetched in its order: hits >= 95%, mispredictions <= 1%, epoch 2 reported, every byte right.
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
