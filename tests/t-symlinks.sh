#!/bin/bash
# t-symlinks: a data set reached through symlinks inside SOURCE (files linked into a pool, a class directory that is a link, the dataset directory itself a link; an ImageFolder walk, a ConcatDataset of two such directories, a real DataLoader over torchvision's ImageFolder, and a list) is followed: every open counts in the plan, no misprediction, and later epochs are served from the cache, byte for byte.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_cmd getfattr

[[ -x /usr/bin/python3 ]] || skip "Debian's /usr/bin/python3 is needed"
make_volume 320
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir -p "$SRC" "$MNT"

# pool/: 240 files of 10-70 KB.  linked/: class a links 100 of them one by
# one, class b is a link to the real directory real/, class c links 40
# more.  byname -> linked: the dataset directory itself a link.
/usr/bin/python3 - "$SRC" <<'PYEOF'
import os, random, sys
src, rng = sys.argv[1], random.Random(4)
for d in ("pool", "real", "linked/a", "linked/c"):
    os.makedirs(os.path.join(src, d))
for i in range(240):
    with open(os.path.join(src, "pool", "%03d.bin" % i), "wb") as f:
        f.write(rng.randbytes(rng.randrange(10000, 70000)))
for i in range(60):
    with open(os.path.join(src, "real", "r%02d.jpg" % i), "wb") as f:
        f.write(rng.randbytes(rng.randrange(10000, 70000)))
for i in range(100):
    os.symlink("../../pool/%03d.bin" % i, os.path.join(src, "linked/a", "%03d.jpg" % i))
for i in range(100, 140):
    os.symlink("../../pool/%03d.bin" % i, os.path.join(src, "linked/c", "%03d.jpg" % i))
os.symlink("../real", os.path.join(src, "linked/b"))
os.symlink("linked", os.path.join(src, "byname"))
PYEOF
sync

# epochs PLAN DIR N: read epochs 0..N-1 of PLAN in order from MNT/DIR with
# the caches dropped, each file compared with SOURCE's; after each, every
# open counted, none mispredicted, the plan at that epoch, and from epoch 1
# on at least 95% of the bytes read served from the cache.
epochs() {
	local plan=$1 dir=$2 e n acc mis r0 h0 read hit
	for ((e = 0; e < $3; e++)); do
		"$DSFS" --print-plan "$SRC" -o "$plan,epoch=$e" >"$WORK/order"
		n=$(wc -l <"$WORK/order")
		r0=$(stat_of read_bytes) h0=$(stat_of hit_bytes)
		sync
		echo 3 >/proc/sys/vm/drop_caches
		/usr/bin/python3 - "$MNT/$dir" "$SRC/$dir" "$WORK/order" <<'PYEOF' || fail "epoch $e: bytes differ"
import sys
mnt, src, order = sys.argv[1:]
for p in open(order):
    p = p.rstrip("\n")
    if open(mnt + "/" + p, "rb").read() != open(src + "/" + p, "rb").read():
        sys.exit("%s: bytes differ" % p)
PYEOF
		acc=$(stat_of plan.accesses) mis=$(stat_of plan.mispredictions)
		read=$(($(stat_of read_bytes) - r0)) hit=$(($(stat_of hit_bytes) - h0))
		say "$plan epoch $e: $n files, plan at epoch $(stat_of plan.epoch) ($(stat_of plan.detected)), $acc accesses, $mis mispredictions, $hit of $read bytes read from the cache"
		((acc == n * (e + 1))) || fail "epoch $e: the plan saw $acc opens, expected $((n * (e + 1)))"
		((mis == 0)) || fail "epoch $e: $mis mispredictions"
		[[ $(stat_of plan.epoch) == "$e" ]] || fail "epoch $e: the plan is at epoch $(stat_of plan.epoch)"
		((e == 0 || (read > 0 && hit * 100 >= read * 95))) ||
			fail "epoch $e: $hit of $read bytes from the cache"
	done
}

say "ImageFolder over links to files and to a class directory"
PLAN="sampler=torch-random,seed=5,dataset=linked"
mount_dsfs "$SRC" "$MNT" -o "cache_size=64M,$PLAN"
log_has "$MNT" "over 200 samples (layout imagefolder of linked, 200 reached through symlinks)" ||
	fail "no plan line counting the links"
epochs "$PLAN" linked 3
unmount_dsfs "$MNT"

# torchvision's ImageFolder walks the tree with os.walk(followlinks=True),
# which stats every link to a file to learn whether it is a directory: the
# kernel looks each pool file up then, in the walk's order, long before
# the loader opens it.  Those lookups must not count as the loader's opens
# (with 200 samples the plan was lost at the first epoch, no epoch of the
# 64 tried matching).
say "a torch DataLoader over ImageFolder(linked): the walk's lookups are not opens"
PLAN="sampler=torch-random,seed=6,dataset=linked"
mount_dsfs "$SRC" "$MNT" -o "cache_size=64M,$PLAN"
/usr/bin/python3 "$srcdir/loader.py" --mode torch-random --seed 6 --first 0 \
	--last 1 --workers 2 --batch-size 8 --source "$SRC/linked" \
	"$MNT/linked" >"$WORK/loader.out" || fail "the DataLoader failed: $(cat "$WORK/loader.out")"
acc=$(stat_of plan.accesses) mis=$(stat_of plan.mispredictions)
say "DataLoader, 2 epochs: plan $(stat_of plan.detected) at epoch $(stat_of plan.epoch), $acc accesses, $mis mispredictions"
[[ $(stat_of plan.detected) == '"epoch-detected"' ]] ||
	fail "the plan is $(stat_of plan.detected), not epoch-detected"
((acc >= 32 && mis * 20 <= acc)) ||
	fail "$mis of $acc accesses mispredicted (at most 5% expected)"
unmount_dsfs "$MNT"

say "the dataset directory itself reached through two links (byname/b is real/)"
PLAN="sampler=python-shuffle,seed=2,layout=sorted,dataset=byname/b"
mount_dsfs "$SRC" "$MNT" -o "cache_size=64M,push=off,$PLAN"
epochs "$PLAN" byname/b 3
unmount_dsfs "$MNT"

# torch's ConcatDataset of the two (dataset=A:B, paths relative to
# SOURCE): the first part's directory reached through two links, the
# second's samples links to files (layout=walk keeps them).
say "a ConcatDataset of byname/b and linked (layout=walk)"
PLAN="sampler=torch-random,seed=9,layout=walk,dataset=byname/b:linked"
mount_dsfs "$SRC" "$MNT" -o "cache_size=64M,$PLAN"
epochs "$PLAN" . 3
unmount_dsfs "$MNT"

say "a list naming links"
(cd "$SRC/linked" && find -L . -name '*.jpg' -printf '%P\n' | sort -r) >"$WORK/list"
PLAN="sampler=numpy-permutation,seed=8,layout=list,list=$WORK/list,dataset=linked"
mount_dsfs "$SRC" "$MNT" -o "cache_size=64M,$PLAN"
epochs "$PLAN" linked 2
unmount_dsfs "$MNT"
say "done"
