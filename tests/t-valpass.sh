#!/bin/bash
# t-valpass: a validation DataLoader (shuffle=False) over val/, an ImageFolder beside the plan's train/ and outside its data set, is noticed from its opens and read ahead of in sorted order (before, each of its reads waited on storage), listed again once files were added; so is a DDP validation loop (DistributedSampler(shuffle=False) of the plan's world), of the local ranks' share only; a shuffled loader over val/ is not taken for such a pass and nothing is read ahead of it.  Every byte is checked against the source.  bench/val-pass runs at its smallest.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_torch

make_volume 512
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT"
total=$(make_imagefolder "$SRC/train" 10 100 64)
vtotal=$(make_imagefolder "$SRC/val" 40 50 64)
n=2000
# Room for both, with a page of slack a file.
CACHE="cache_size=$(((total + vtotal) / 1048576 + 64))M,hugepages=off,push=off"
PLAN="sampler=torch-random,seed=31,layout=imagefolder,dataset=train"

# ahead_stalls FILE: "samples read ahead of passes, reads waited" at the
# loader's end.
ahead_stalls() {
	awk '$1 == "end" && $2 == "plan.index_pass_samples" { a = $3 }
	     $1 == "end" && $2 == "stalls" { s = $3 } END { print a + 0, s + 0 }' "$1"
}

say "a validation pass over val/ ($n files): shuffle=False, 2 workers of 16, caches dropped"
mount_dsfs "$SRC" "$MNT" -o "$CACHE,$PLAN"
rm -f "$WORK/v.stats"
"$PY" "$srcdir/loader.py" --mode sequential --first 0 --last 0 \
	--batch-size 16 --workers 2 --drop-caches --stats "$MNT" "$WORK/v.stats" \
	--source "$SRC/val" "$MNT/val" || fail "the loader failed"
read -r ahead stalls < <(ahead_stalls "$WORK/v.stats")
say "the validation pass: $ahead files read ahead of it, $stalls reads waited"
log_has "$MNT" "over val, outside the plan's data set: $n files listed" ||
	fail "the pass over val/ was not noticed"
log_has "$MNT" "a pass in sorted order over val, at file" ||
	fail "the pass over val/ was not followed"
# Noticed within its first opens (24 steps of one directory's files in
# order), listed in a moment, followed by index after 24 more steps, then
# fetched ahead.
((ahead >= n / 2)) || fail "only $ahead of the pass's $n files read ahead of it"
((stalls <= n / 4)) || fail "$stalls of the pass's $n reads waited on storage"

say "a class of 50 files added to val/, then the validation pass again"
make_imagefolder "$VOL/more" 1 50 64 >/dev/null
mv "$VOL/more/class000" "$SRC/val/class040"
n=$((n + 50))
"$PY" "$srcdir/loader.py" --mode sequential --first 0 --last 0 \
	--batch-size 16 --workers 2 --drop-caches \
	--source "$SRC/val" "$MNT/val" || fail "the loader failed"
log_has "$MNT" "over val, outside the plan's data set: $n files listed" ||
	fail "val/ was not listed again with the files added"
unmount_dsfs "$MNT"

# ddp_val WORLD RANK...: a DDP validation loop over val/, each rank's
# DistributedSampler(shuffle=False) in a DataLoader of 2 workers of 16,
# the ranks starting together with caches dropped.
ddp_val() {
	local world=$1 r
	local -A rank_of=()

	shift
	rm -rf "$WORK/ddp.barrier"
	mkdir "$WORK/ddp.barrier"
	for r in "$@"; do
		"$PY" "$srcdir/loader.py" --mode sequential --world "$world" \
			--rank "$r" --first 0 --last 0 --batch-size 16 --workers 2 \
			--drop-caches --barrier "$WORK/ddp.barrier" --parties $# \
			--source "$SRC/val" "$MNT/val" >"$WORK/ddp.$r.out" 2>&1 &
		# shellcheck disable=SC2034 # read by wait_ranks (a nameref)
		rank_of[$!]=$r
	done
	wait_ranks rank_of ddp || fail "the loader of rank $WAIT_FAILED failed"
}

# Each rank's process opens every second file: a step by the plan's world.
say "a DDP validation pass over val/: world 2, both ranks on this node"
mount_dsfs "$SRC" "$MNT" -o "$CACHE,sampler=torch-distributed,seed=31,world=2,ranks=0-1,layout=imagefolder,dataset=train"
ddp_val 2 0 1
ahead=$(stat_of plan.index_pass_samples)
stalls=$(stat_of stalls)
say "the DDP validation pass: $ahead files read ahead of it, $stalls reads waited"
((ahead >= n / 2)) || fail "only $ahead of the pass's $n files read ahead of it"
((stalls <= n / 4)) || fail "$stalls of the pass's $n reads waited on storage"
unmount_dsfs "$MNT"

# Only rank 0's share is read here, and only it is fetched.
say "a DDP validation pass over val/: world 2, rank 0 alone on this node"
mount_dsfs "$SRC" "$MNT" -o "$CACHE,sampler=torch-distributed,seed=31,world=2,rank=0,layout=imagefolder,dataset=train"
ddp_val 2 0
ahead=$(stat_of plan.index_pass_samples)
stalls=$(stat_of stalls)
say "rank 0's validation pass: $ahead files read ahead of it, $stalls reads waited"
((ahead >= n / 4)) || fail "only $ahead of rank 0's $((n / 2)) files read ahead of it"
((ahead <= n / 2 + 32)) || fail "$ahead files read ahead of rank 0's $((n / 2)): another rank's too"
((stalls <= n / 8)) || fail "$stalls of rank 0's $((n / 2)) reads waited on storage"
unmount_dsfs "$MNT"

say "a shuffled loader over val/ (seed 5), 2 workers of 16: no pass"
mount_dsfs "$SRC" "$MNT" -o "$CACHE,$PLAN"
rm -f "$WORK/s.stats"
"$PY" "$srcdir/loader.py" --mode torch-random --seed 5 --first 0 --last 0 \
	--batch-size 16 --workers 2 --drop-caches --stats "$MNT" "$WORK/s.stats" \
	--source "$SRC/val" "$MNT/val" || fail "the loader failed"
read -r ahead stalls < <(ahead_stalls "$WORK/s.stats")
say "the shuffled loader: $ahead files read ahead of it, $stalls reads waited"
log=${DSFS_LOG[$(realpath "$MNT")]}
if grep -F "sorted order" "$log"; then
	fail "a shuffled loader was taken for a pass in sorted order"
fi
((ahead == 0)) || fail "$ahead files read ahead of a shuffled loader outside the plan"
unmount_dsfs "$MNT"

say "bench/val-pass at its smallest: every configuration ran"
VP_CLASSES=4 VP_FILES=10 VP_ROUNDS=1 DSFS_BUILDDIR=$(cd "$top_builddir" && pwd) \
	"$srcdir/../bench/val-pass" >"$WORK/vp.md" 2>"$WORK/vp.err" ||
	{ cat "$WORK/vp.err" >&2; fail "bench/val-pass failed"; }
cat "$WORK/vp.md"
rows=$(grep -cE '^\| (raw XFS|dsfs)[^|]*\| [0-9.]+ \| [0-9.]+ \|' "$WORK/vp.md" || true)
((rows == 6)) || fail "bench/val-pass printed $rows of its 6 rows"
