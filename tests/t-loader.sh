#!/bin/bash
# t-loader: a real torch DataLoader (ImageFolder, 2 workers, shuffle with a seeded generator) reading 3 cold epochs through a cache half the data's size is prefetched in its order: hits >= 95%, mispredictions <= 1%, epoch 2 reported, every byte right; so is a DistributedSampler's epoch that starts at once after the one before was cut short (its non-persistent workers end, and the new ones are not taken for another program), and a shuffled loader's epochs after one it left early (one permutation fewer drawn); a loader with persistent workers on a mount not told so is found drawn that way and followed from then on; a RandomSampler(num_samples=) whose epochs are shorter than the data set is followed with num_samples= given; one drawing with replacement (repeats within an epoch); and a SubsetRandomSampler, given the subset's files as a list; a WeightedRandomSampler, given its weights; a RandomSampler(num_samples=) on a mount not told so, whose epochs' length dsfs learns; a DistributedSampler without set_epoch(), which the lost plan's warning names; a DatasetFolder given extensions, mounted with extensions=; a random_split part, mounted with split=; a script's own Dataset over glob's unsorted list, mounted with layout=walk; and a ConcatDataset of two ImageFolders, mounted with dataset=A:B.
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
# (The switch to epoch 1 takes 8 votes, 7 of them mispredicted, though a
# quarter of epoch 1's first opens fall in epoch 0's window: up to 1%.)
check_plan_stats "$MNT" 2 $((2 * total)) || fail "the epochs after a cut one were not followed"
unmount_dsfs "$MNT"

# untold WHAT LAST SEED SAYS FROM MIN MAX LOADER_OPTS...: a torch-random
# loader with LOADER_OPTS reads epochs 0 to LAST (caches dropped before
# each) through a mount whose plan has the seed but not the loader option:
# dsfs finds what the loader does and says so (its log has SAYS), and
# epochs FROM to LAST (at least MIN opens) have at most MAX mispredictions.
untold() {
	local what=$1 last=$2 seed=$3 says=$4 from=$5 min=$6 max=$7 log mis acc m0 a0
	shift 7
	say "$what, the mount not told, $((last + 1)) epochs"
	mount_dsfs "$SRC" "$MNT" -o "cache_size=$((total / 2 >> 20))M,hugepages=off,sampler=torch-random,seed=$seed,layout=imagefolder,dataset=train"
	rm -f "$WORK/untold.stats"
	"$PY" "$srcdir/loader.py" --mode torch-random --seed "$seed" --first 0 \
		--last "$last" "$@" --drop-caches --sleep-ms 5 \
		--stats "$MNT" "$WORK/untold.stats" --source "$SRC/train" \
		"$MNT/train" || fail "$what: the loader failed"
	log=${DSFS_LOG[$(realpath "$MNT")]}
	grep "plan:" "$log" >&2 || true
	grep -q "$says" "$log" || fail "$what: not found ('$says' not logged)"
	read -r m0 a0 < <(awk -v e="e$from" '$1 == e && $2 == "plan.mispredictions" { m = $3 }
		$1 == e && $2 == "plan.accesses" { a = $3 }
		END { print m + 0, a + 0 }' "$WORK/untold.stats")
	mis=$(stat_of plan.mispredictions) acc=$(stat_of plan.accesses)
	say "epochs $from to $last: $((acc - a0)) accesses, $((mis - m0)) mispredictions; in all $mis of $acc"
	((acc - a0 >= min && mis - m0 <= max)) ||
		fail "$what: epochs $from to $last not followed"
	[[ $(stat_of plan.epoch) == "$last" ]] ||
		fail "$what: plan at epoch $(stat_of plan.epoch)"
	unmount_dsfs "$MNT"
}

# A shuffled DataLoader left after 10 batches of its first epoch (a
# break): its sampler never draws that epoch's second permutation, so
# every later epoch is drawn one permutation further back.  Its epoch 1 is
# also that of a loader drawing one permutation an epoch, as which it is
# found; lost again at epoch 2's start, it is found as one epoch cut, says
# so, and epochs 3 and 4 are followed.
untold "a loader that leaves its first epoch early" 4 17 \
	"the loader left 1 of its epochs before their end" 3 1600 2 \
	--break-first 10

# A DistributedSampler whose set_epoch() the script forgets: every epoch
# reads epoch 0's order.  Lost at epoch 1, whose start the plan expects;
# the warning names the cause.
say "a DistributedSampler without set_epoch(), 2 epochs"
mount_dsfs "$SRC" "$MNT" -o "cache_size=$((total / 2 >> 20))M,hugepages=off,sampler=torch-distributed,seed=23,world=1,layout=imagefolder,dataset=train"
"$PY" "$srcdir/loader.py" --mode distributed --seed 23 --first 0 --last 1 \
	--no-set-epoch --drop-caches --sleep-ms 5 --source "$SRC/train" \
	"$MNT/train" || fail "the loader failed"
log_has "$MNT" "set_epoch() not called every epoch" ||
	fail "a DistributedSampler without set_epoch(): the warning does not say so"
unmount_dsfs "$MNT"

# persistent_workers=True: epoch 1 differs from the plan's.  Lost there,
# dsfs finds the loader drawn that way (at the start of epoch 1 or 2: 800
# samples leave little room), says so, and follows epoch 3 (8
# mispredictions allowed).
untold "a loader with persistent workers" 3 17 \
	"draws from its generator as a DataLoader's with persistent workers" \
	3 700 8 --persistent

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

# WeightedRandomSampler(weights, 600, generator=g): the first class's
# samples weigh 4, the last one's 0 (never read), the others 1: 600 draws
# an epoch, many of them repeats.  Weights written with repr(), as the
# man page says.
"$PY" - "$SRC/train" "$WORK/weights" <<'PYEOF'
import sys
from torchvision.datasets import ImageFolder
ds = ImageFolder(sys.argv[1], loader=lambda p: p)
last = len(ds.classes) - 1
with open(sys.argv[2], "w") as f:
    for _, c in ds.samples:
        f.write(repr(4.0 if c == 0 else 0.0 if c == last else 1.0) + "\n")
PYEOF
follow "WeightedRandomSampler(num_samples=600)" 3 41 \
	"num_samples=600,weights=$WORK/weights" 2 "$total" \
	--num-samples 600 --weights "$WORK/weights"

# RandomSampler(num_samples=300): each epoch draws one permutation, not
# two.  Lost at epoch 1, dsfs finds the loader drawing so, learns from two
# epochs left at 300 that it reads 300 samples an epoch, says so (with the
# option that gives it), and follows the last two epochs, cut at that
# length (2 mispredictions allowed).
untold "RandomSampler(num_samples=300)" 6 29 \
	"mount with -o num_samples=300 to follow it" 5 550 2 --num-samples 300

# A DatasetFolder given extensions (.npy and .wav, in any case), beside
# files it leaves out (.jpg), mounted with extensions=: followed as an
# ImageFolder is.
say "a DatasetFolder given extensions=('.npy', '.wav'), 2 epochs"
feats=0
for d in "$SRC/train"/class00[0-3]; do
	mkdir -p "$SRC/feats/${d##*/}"
	i=0
	for f in "$d"/*.jpg; do
		case $((i++ % 4)) in
		0 | 1) to=${f%.jpg}.npy ;;
		2) to=${f%.jpg}.WAV ;;
		3) to=$f ;;
		esac
		cp "$f" "$SRC/feats/${d##*/}/${to##*/}"
		[[ $to == "$f" ]] || feats=$((feats + $(stat -c %s "$f")))
	done
done
sync
mount_dsfs "$SRC" "$MNT" -o "cache_size=$((feats / 2 >> 20))M,hugepages=off,sampler=torch-random,seed=31,dataset=feats,extensions=.npy:.wav"
"$PY" "$srcdir/loader.py" --mode torch-random --seed 31 --first 0 --last 1 \
	--extensions .npy:.wav --drop-caches --sleep-ms 5 \
	--source "$SRC/feats" "$MNT/feats" || fail "the loader failed"
check_plan_stats "$MNT" 1 $((2 * feats)) ||
	fail "the DatasetFolder's order was not followed"
unmount_dsfs "$MNT"

# Part 0 of random_split(ds, [0.8, 0.2], generator=manual_seed(3)), the
# training part, mounted with split=: its 3 cold epochs are followed; the
# validation part (the other 20%, --print-plan's split_part=1) read
# through the mount after them is right.
say "a random_split part (0.8 of the data set), 3 epochs"
SPLIT="split=0.8:0.2,split_seed=3"
mount_dsfs "$SRC" "$MNT" -o "cache_size=$((total / 2 >> 20))M,hugepages=off,sampler=torch-random,seed=17,dataset=train,$SPLIT"
"$PY" "$srcdir/loader.py" --mode torch-random --seed 17 --first 0 --last 2 \
	--split 0.8:0.2 --split-seed 3 --drop-caches --sleep-ms 5 \
	--list "$WORK/train.list" --source "$SRC/train" "$MNT/train" ||
	fail "the loader failed"
check_plan_stats "$MNT" 2 $((total * 2)) ||
	fail "the random_split part's order was not followed"
"$DSFS" --print-plan "$SRC" -o "sampler=sequential,dataset=train,$SPLIT,split_part=1" >"$WORK/val"
[[ $(wc -l <"$WORK/val") == 160 ]] || fail "the validation part has $(wc -l <"$WORK/val") files, not 160"
[[ -z $(sort "$WORK/val" | comm -12 - <(sort -u "$WORK/train.list")) ]] ||
	fail "the validation part shares files with the part the loader read"
while read -r f; do cat "$MNT/train/$f"; done <"$WORK/val" | cmp -s - <(
	while read -r f; do cat "$SRC/train/$f"; done <"$WORK/val") ||
	fail "the validation part read through the mount differs"
unmount_dsfs "$MNT"

# A script's own Dataset over glob.glob(root + "/**/*.jpg", recursive=True),
# unsorted: the directories' listing order, which on XFS is the order the
# files were made (here at random, so not sorted order), hidden names left
# out, links to files in.  layout=walk,suffix=.jpg,hidden=skip lists the
# same.
say "a Dataset over glob's unsorted list of *.jpg, 2 epochs"
wtotal=$("$PY" - "$SRC/walk" <<'PYEOF'
import glob, os, random, sys
root, rng, total = sys.argv[1], random.Random(5), 0
names = [os.path.join("d%d" % (i % 5), "s%04d.jpg" % i) for i in range(600)]
names += ["d%d/notes%d.txt" % (i, i) for i in range(5)]
names += ["d%d/._s%04d.jpg" % (i % 5, i) for i in range(0, 600, 50)]
names += [".cache/c%d.jpg" % i for i in range(20)] + ["top.jpg"]
rng.shuffle(names)
for n in names:
    os.makedirs(os.path.join(root, os.path.dirname(n)), exist_ok=True)
    data = rng.randbytes(rng.randrange(20000, 200000))
    with open(os.path.join(root, n), "wb") as f:
        f.write(data)
    total += len(data) if n.endswith(".jpg") and "/." not in "/" + n else 0
for i in range(3):  # links to files are among a directory's files
    target = sorted(n for n in names if n.startswith("d2/s"))[i]
    os.symlink(os.path.join("..", target), os.path.join(root, "d1/alias%d.jpg" % i))
    total += os.path.getsize(os.path.join(root, target))
found = glob.glob(os.path.join(root, "**", "*.jpg"), recursive=True)
assert len(found) == 604 and found != sorted(found), "glob's list is sorted"
print(total)
PYEOF
) || fail "cannot make the tree"
sync
mount_dsfs "$SRC" "$MNT" -o "cache_size=$((wtotal / 2 >> 20))M,hugepages=off,sampler=torch-random,seed=29,layout=walk,dataset=walk,suffix=.jpg,hidden=skip"
"$PY" "$srcdir/loader.py" --mode torch-random --seed 29 --first 0 --last 1 \
	--glob .jpg --drop-caches --sleep-ms 5 --source "$SRC/walk" \
	"$MNT/walk" || fail "the loader failed"
check_plan_stats "$MNT" 1 $((wtotal * 2)) ||
	fail "the order of glob's list was not followed"
unmount_dsfs "$MNT"

# torch's ConcatDataset of two ImageFolders, the first tree and the glob
# tree above (hidden class and files, links to files), mounted with
# dataset=train:walk: its indices run through the first, then the second.
say "a ConcatDataset of two ImageFolders, 2 epochs"
ctotal=$("$PY" -c '
import os, sys
from torchvision.datasets import ImageFolder
print(sum(os.path.getsize(p) for d in sys.argv[1:] for p, _ in ImageFolder(d).samples))
' "$SRC/train" "$SRC/walk") || fail "cannot size the ConcatDataset"
mount_dsfs "$SRC" "$MNT" -o "cache_size=$((ctotal / 2 >> 20))M,hugepages=off,sampler=torch-random,seed=37,dataset=train:walk"
"$PY" "$srcdir/loader.py" --mode torch-random --seed 37 --first 0 --last 1 \
	--concat train:walk --drop-caches --sleep-ms 5 --source "$SRC" "$MNT" ||
	fail "the loader failed"
check_plan_stats "$MNT" 1 $((ctotal * 2)) ||
	fail "the ConcatDataset's order was not followed"
unmount_dsfs "$MNT"
