#!/bin/bash
# t-loader: a real torch DataLoader (ImageFolder, 2 workers, shuffle with a seeded generator) reading 3 cold epochs through a cache half the data's size is prefetched in its order: hits >= 95%, mispredictions <= 1%, epoch 2 reported, every byte right; so is a DistributedSampler's epoch that starts at once after the one before was cut short (its non-persistent workers end, and the new ones are not taken for another program); a loader with persistent workers on a mount not told so is found drawn that way and followed from then on; a RandomSampler(num_samples=) whose epochs are shorter than the data set is followed with num_samples= given; one drawing with replacement (repeats within an epoch); and a SubsetRandomSampler, given the subset's files as a list.
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

# persistent_workers=True, and the mount not told: epoch 1 differs from the
# plan's.  Lost there, dsfs finds the loader drawn that way (at the start
# of epoch 1 or 2: 800 samples leave little room), says so, and follows
# epoch 3 without a miss.
say "a loader with persistent workers, the mount not told"
PLAN="sampler=torch-random,seed=17,layout=imagefolder,dataset=train"
mount_dsfs "$SRC" "$MNT" -o "cache_size=$((total / 2 >> 20))M,hugepages=off,$PLAN"
"$PY" "$srcdir/loader.py" --mode torch-random --seed 17 --first 0 --last 3 \
	--persistent --drop-caches --sleep-ms 5 --stats "$MNT" "$WORK/pw.stats" \
	--source "$SRC/train" "$MNT/train" || fail "the loader failed"
log=${DSFS_LOG[$(realpath "$MNT")]}
grep "plan:" "$log" >&2 || true
grep -q "draws from its generator as a DataLoader's with persistent workers" "$log" ||
	fail "persistent workers: the loader's way not found"
read -r m3 a3 < <(awk '$1 == "e3" && $2 == "plan.mispredictions" { m = $3 }
	$1 == "e3" && $2 == "plan.accesses" { a = $3 }
	END { print m + 0, a + 0 }' "$WORK/pw.stats")
mis=$(stat_of plan.mispredictions) acc=$(stat_of plan.accesses)
say "epoch 3: $((acc - a3)) accesses, $((mis - m3)) mispredictions; in all $mis of $acc"
((acc - a3 >= 700 && mis - m3 <= 8)) || fail "persistent workers: epoch 3 not followed"
[[ $(stat_of plan.epoch) == 3 ]] || fail "persistent workers: plan at epoch $(stat_of plan.epoch)"
unmount_dsfs "$MNT"

# follow WHAT EPOCHS SEED OPTS DIV MIN LOADER_OPTS...: a torch-random loader
# whose sampler LOADER_OPTS describe reads EPOCHS epochs (caches dropped
# before each) through a mount given OPTS and a cache 1/DIV of the data:
# followed to its last epoch, at least MIN bytes read.
follow() {
	local what=$1 last=$(($2 - 1)) seed=$3 opts=$4 div=$5 min=$6
	shift 6
	say "$what, $((last + 1)) epochs"
	mount_dsfs "$SRC" "$MNT" -o "cache_size=$((total / div >> 20))M,hugepages=off,sampler=torch-random,seed=$seed,$opts,dataset=train"
	"$PY" "$srcdir/loader.py" --mode torch-random --seed "$seed" --first 0 \
		--last "$last" "$@" --drop-caches --sleep-ms 5 \
		--source "$SRC/train" "$MNT/train" || fail "$what: the loader failed"
	grep "plan:" "${DSFS_LOG[$(realpath "$MNT")]}" >&2 || true
	check_plan_stats "$MNT" "$last" "$min" ||
		fail "$what: the loader's order was not followed"
	unmount_dsfs "$MNT"
}

# RandomSampler(num_samples=300) over the 800 samples: each epoch reads
# the first 300 of a fresh permutation, and the next one starts there.
follow "RandomSampler(num_samples=300)" 4 29 num_samples=300 2 \
	$((total * 3 / 2)) --num-samples 300
# RandomSampler(replacement=True): 800 draws an epoch, about 37% of them
# repeats of a sample drawn before in the epoch.
follow "RandomSampler(replacement=True)" 3 31 replacement 2 \
	$((total * 3 / 2)) --replacement
# SubsetRandomSampler(range(0, 800, 3), generator=g): one permutation of
# the subset an epoch; the mount gets the subset's files as a list, in
# the indices' order (ImageFolder's order, every third sample).
"$DSFS" --print-plan "$SRC" -o sampler=sequential,dataset=train |
	awk 'NR % 3 == 1' >"$WORK/subset.list"
follow "SubsetRandomSampler of every third sample" 3 37 \
	"subset,layout=list,list=$WORK/subset.list" 4 $((total * 3 / 4)) \
	--subset-every 3
