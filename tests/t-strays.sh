#!/bin/bash
# t-strays: a torch job whose Dataset reads a random sample besides each one its sampler asks (mosaic or mixup augmentation) over 50,000 files is followed from its epoch 0 into its epoch 1, with push on and off: the daemon says it reads strays, the prediction is never lost, only the strays are mispredicted, and every byte read equals the source's.  Before, the prediction was lost at the job's first opens.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_torch

make_volume 768
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT"
say "making 50,000 files of about 1 KB in 100 classes"
total=$(make_imagefolder "$SRC/train" 100 500 1)
((total > 0)) || fail "make_imagefolder"

# followed MNT: the plan of MNT's daemon detected epoch 0, said the loader
# reads strays and began epoch 1, never lost it, and mispredicted at most
# 60% of the opens it heard of (the strays that reached it: a third to a
# half of them, measured), leaving none out as another program's.
followed() {
	log_has "$1" "epoch 0 detected" || fail "epoch 0 was not detected"
	log_has "$1" "samples out of its order while it reads on" ||
		fail "the strays were not said"
	log_has "$1" "epoch 1 begun" || fail "epoch 1 was not begun"
	if grep -F "prediction lost" "${DSFS_LOG[$(realpath "$1")]}"; then
		fail "the prediction was lost"
	fi
	"$DSFS_STATS" --json "$1" >"$WORK/stats.json" || fail "dsfs-stats --json $1"
	if ! "$PY" - "$WORK/stats.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["plan"]
print("%d opens, %d mispredictions, %d left out, %s, epoch %d; %d pushes, %d READs"
      % (p["accesses"], p["mispredictions"], p["other_opens"], p["detected"],
         p["epoch"], d["pushes"], d["reads"]))
sys.exit(0 if p["accesses"] >= 50000 and p["epoch"] == 1
         and p["mispredictions"] * 10 <= p["accesses"] * 6
         and p["other_opens"] == 0 else 1)
PYEOF
	then
		grep -E "plan|epoch|prediction|other" "${DSFS_LOG[$(realpath "$1")]}" >&2
		fail "the loader's order was not followed"
	fi
}

for push in auto off; do
	say "2 workers of 16, a stray a sample, push=$push"
	mount_dsfs "$SRC" "$MNT" -o "cache_size=128M,hugepages=off,push=$push,sampler=torch-random,seed=23,layout=imagefolder,dataset=train"
	"$PY" "$srcdir/loader.py" --mode torch-random --seed 23 --first 0 \
		--last 1 --strays 1 --drop-caches --source "$SRC/train" \
		"$MNT/train" || fail "the loader failed"
	followed "$MNT"
	unmount_dsfs "$MNT"
done
