#!/bin/bash
# t-loader-fresh: a fresh torch job on a data set of 1,000 files with the default options (epoch=auto, push on) is followed from its epoch 0, though the files fetched while it starts are pushed into the page cache and only every eighth open reaches the daemon; DistributedSampler ranks of 334 samples read by 3 workers of 16 each are followed without mispredictions (with prefetch_factor 2, an open may lag the furthest one by up to 96 positions, more than a quarter of the epoch); and a loader with more than the epoch in flight (8 workers of 128) is followed by its workers' runs, none of them taken for another program.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_torch

make_volume 512
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT"
total=$(make_imagefolder "$SRC/train" 10 100 16)
ROOT_PLAN="layout=imagefolder,dataset=train"

# expect_followed MNT EPOCH [PCT]: the plan of MNT's daemon detected EPOCH
# (the log says so, and never that the prediction was lost), and at most
# 1% of the opens it heard of were mispredicted (else the daemon's lines
# about its plan are shown); with PCT, at most PCT% were mispredicted and
# at most PCT% left out as another program's.
expect_followed() {
	log_has "$1" "epoch $2 detected" || fail "epoch $2 was not detected"
	if grep -F "prediction lost" "${DSFS_LOG[$(realpath "$1")]}"; then
		fail "the prediction was lost"
	fi
	"$DSFS_STATS" --json "$1" >"$WORK/stats.json" || fail "dsfs-stats --json $1"
	if ! "$PY" - "$WORK/stats.json" "${3:-}" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["plan"]
pct = int(sys.argv[2] or 1)
other = p["other_opens"] if sys.argv[2] else 0
print("%d opens, %d mispredictions, %d left out, %s, epoch %d; %d pushes, %d READs"
      % (p["accesses"], p["mispredictions"], p["other_opens"], p["detected"],
         p["epoch"], d["pushes"], d["reads"]))
sys.exit(0 if p["accesses"] and p["mispredictions"] * 100 <= p["accesses"] * pct
         and other * 100 <= (p["accesses"] + other) * pct else 1)
PYEOF
	then
		grep -E "plan|epoch|prediction|other" "${DSFS_LOG[$(realpath "$1")]}" >&2
		fail "the loader's order was not followed"
	fi
}

say "a fresh job, default options: the files fetched from the mount on are pushed"
# hugepages=off: leave the huge page pool to t-cache.sh, which may run
# alongside.
mount_dsfs "$SRC" "$MNT" -o "cache_size=64M,hugepages=off,sampler=torch-random,seed=17,$ROOT_PLAN"
"$PY" "$srcdir/loader.py" --mode torch-random --seed 17 --first 0 --last 1 \
	--source "$SRC/train" "$MNT/train" || fail "the loader failed"
pushes=$(stat_of pushes "$MNT")
((pushes > 0)) || fail "nothing was pushed: the case this checks did not arise"
expect_followed "$MNT" 0
unmount_dsfs "$MNT"

say "DistributedSampler, world 3, rank 1: 3 workers of 16 samples each"
for push in off on; do
	mount_dsfs "$SRC" "$MNT" -o "cache_size=64M,hugepages=off,push=$push,sampler=torch-distributed,seed=5,world=3,rank=1,$ROOT_PLAN"
	"$PY" "$srcdir/loader.py" --mode distributed --seed 5 --world 3 --rank 1 \
		--first 0 --last 0 --workers 3 --drop-caches \
		--source "$SRC/train" "$MNT/train" || fail "the loader failed"
	expect_followed "$MNT" 0
	unmount_dsfs "$MNT"
done

# A loader with more of a small epoch in flight than the epoch holds (8
# workers x prefetch_factor 2 x batches of 128: 2,048 of 1,000 samples)
# opens it as 8 runs side by side, far beyond the window (a quarter of
# the epoch ahead of the furthest open): followed by its runs, the workers
# not taken for other programs.  Before, the prediction was lost from the
# start (2,969 of 3,000 opens mispredicted by hand).
say "a loader with the whole epoch in flight: 8 workers of 128 samples"
for push in off on; do
	mount_dsfs "$SRC" "$MNT" -o "cache_size=64M,hugepages=off,push=$push,sampler=torch-random,seed=19,$ROOT_PLAN"
	"$PY" "$srcdir/loader.py" --mode torch-random --seed 19 --first 0 \
		--last 1 --workers 8 --batch-size 128 --drop-caches \
		--source "$SRC/train" "$MNT/train" || fail "the loader failed"
	expect_followed "$MNT" 0 3
	plan_epoch=$("$DSFS_STATS" --json "$MNT" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["plan"]["epoch"])')
	[[ $plan_epoch == 1 ]] || fail "the plan is at epoch $plan_epoch, not 1"
	unmount_dsfs "$MNT"
done
