#!/bin/bash
# t-loader-fresh: a fresh torch job on a data set of 1,000 files with the default options (epoch=auto, push on) is followed from its epoch 0, though the files fetched while it starts are pushed into the page cache and only every eighth open reaches the daemon; DistributedSampler ranks of 334 samples read by 3 workers of 16 each are followed without mispredictions (with prefetch_factor 2, an open may lag the furthest one by up to 96 positions, more than a quarter of the epoch).
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

# expect_followed MNT EPOCH: the plan of MNT's daemon detected EPOCH (the
# log says so, and never that the prediction was lost), and at most 1% of
# the opens it heard of were mispredicted (else the daemon's lines about
# its plan are shown).
expect_followed() {
	log_has "$1" "epoch $2 detected" || fail "epoch $2 was not detected"
	if grep -F "prediction lost" "${DSFS_LOG[$(realpath "$1")]}"; then
		fail "the prediction was lost"
	fi
	"$DSFS_STATS" --json "$1" >"$WORK/stats.json" || fail "dsfs-stats --json $1"
	if ! "$PY" - "$WORK/stats.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["plan"]
print("%d opens, %d mispredictions, %s, epoch %d; %d pushes, %d READs"
      % (p["accesses"], p["mispredictions"], p["detected"], p["epoch"],
         d["pushes"], d["reads"]))
sys.exit(0 if p["accesses"] and p["mispredictions"] * 100 <= p["accesses"] else 1)
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
