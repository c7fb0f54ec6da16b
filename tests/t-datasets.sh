#!/bin/bash
# t-datasets: a mount over a directory of data sets (SOURCE holding train/ and val/, as imagenet/ does) without dataset= plans train/: a shuffled torch DataLoader over train/ is followed from its first epoch (hits >= 95%, mispredictions <= 1%, every byte checked), a validation pass over val/ is read ahead of, and --print-plan prints the loader's own order; a plan given after a mount without one (user.dsfs.plan) is train/'s too; with dataset=. given, the mount warns that its classes hold only directories of images and names dataset=train, and the plan lost at the loader's first opens says they are all below train/.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_torch

make_volume 512
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT"
total=$(make_imagefolder "$SRC/train" 10 80 64)
vtotal=$(make_imagefolder "$SRC/val" 10 40 64)
n=800
# Room for both: the validation pass is fetched into room the plan's
# samples leave (never in place of them).
CACHE="cache_size=$(((total + vtotal) / 1048576 + 32))M,hugepages=off,push=off"
PLAN="sampler=torch-random,seed=31"

say "--print-plan without dataset=: train/'s order, the loader's own"
"$DSFS" --print-plan "$SRC" -o "$PLAN,epoch=1" >"$WORK/plan.o1" 2>"$WORK/plan.err" ||
	{ cat "$WORK/plan.err" >&2; fail "--print-plan failed"; }
grep -q "dataset=train, not given" "$WORK/plan.err" ||
	{ cat "$WORK/plan.err" >&2; fail "--print-plan did not say it picked train/"; }
"$PY" "$srcdir/loader.py" --mode torch-random --seed 31 --first 0 --last 1 \
	--workers 0 --list "$WORK/loader.list" "$SRC/train" >/dev/null ||
	fail "the loader failed on the volume"
# --list holds both epochs' samples; the plan's is epoch 1's.
tail -n "$n" "$WORK/loader.list" | cmp -s - "$WORK/plan.o1" ||
	fail "--print-plan's epoch 1 is not the loader's (first lines: $(head -n 2 "$WORK/plan.o1" | paste -sd ' '))"

say "mounted without dataset=: a shuffled DataLoader over train/, 2 epochs, caches dropped"
mount_dsfs "$SRC" "$MNT" -o "$CACHE,$PLAN"
log_has "$MNT" "dataset=train, not given" || fail "the mount did not say it picked train/"
log_has "$MNT" "over $n samples (layout imagefolder of train)" ||
	fail "the plan is not train/'s"
"$PY" "$srcdir/loader.py" --mode torch-random --seed 31 --first 0 --last 1 \
	--workers 2 --drop-caches --source "$SRC/train" "$MNT/train" ||
	fail "the loader failed"
check_plan_stats "$MNT" 1 $((total / 2)) || fail "the loader over train/ was not followed"

say "a validation pass over val/ beside it, 2 workers of 16, caches dropped"
before=$(stat_of plan.index_pass_samples)
"$PY" "$srcdir/loader.py" --mode sequential --first 0 --last 0 \
	--batch-size 16 --workers 2 --drop-caches \
	--source "$SRC/val" "$MNT/val" || fail "the validation loader failed"
ahead=$(($(stat_of plan.index_pass_samples) - before))
say "the validation pass: $ahead of its 400 files read ahead of it"
((ahead >= 100)) || fail "only $ahead of the validation pass's 400 files read ahead of it"
cat "${DSFS_LOG[$(realpath "$MNT")]}" >&2; unmount_dsfs "$MNT"

say "mounted without a plan, then given one (user.dsfs.plan=$PLAN): train/'s"
mount_dsfs "$SRC" "$MNT" -o "$CACHE"
getfattr --absolute-names --only-values -n "user.dsfs.plan=$PLAN" "$MNT" >/dev/null ||
	fail "the plan command failed"
opts=$(stat_of plan.options)
[[ $opts == *,dataset=train* ]] || fail "the plan given later is $opts, not train/'s"
"$PY" "$srcdir/loader.py" --mode torch-random --seed 31 --first 0 --last 0 \
	--workers 2 --drop-caches --source "$SRC/train" "$MNT/train" ||
	fail "the loader failed"
mis=$(stat_of plan.mispredictions)
((mis <= n / 100)) || fail "$mis of the loader's $n opens mispredicted"
unmount_dsfs "$MNT"

say "dataset=. given: the mount warns, and the lost plan names train/"
mount_dsfs "$SRC" "$MNT" -o "$CACHE,$PLAN,dataset=."
log_has "$MNT" "its classes hold no image of their own, only directories of images" ||
	fail "no warning that SOURCE looks like a directory of data sets"
log_has "$MNT" "give it, as dataset=train;" || fail "the warning names no dataset="
"$PY" "$srcdir/loader.py" --mode torch-random --seed 31 --first 0 --last 0 \
	--workers 2 --drop-caches --source "$SRC/train" "$MNT/train" ||
	fail "the loader failed"
log_has "$MNT" "all 32 of them are below train/: if that is the loader's data set, give dataset=train" ||
	fail "the lost plan does not name train/"
cat "${DSFS_LOG[$(realpath "$MNT")]}" >&2; unmount_dsfs "$MNT"
