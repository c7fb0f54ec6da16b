#!/bin/bash
# t-ranks: DistributedSampler ranks sharing one mount (ranks=A-B, epoch=auto, starting at set_epoch(5)) are all prefetched, and so is the same job run again on the mount; two "nodes" (world=4, ranks 0-1 and 2-3) mounting one source each read from the volume only their ranks' share; a fresh job's ranks (epoch 0) are all fetched from the mount on, before their first open; two nodes over a data set that DistributedSampler pads (1,001 samples, world 4) follow 4 epochs without a misprediction.
#
# DSFS_TEST_LOCAL_RANKS=1 runs one rank per mount (ranks=0-0; 0-0 and 2-2)
# instead of two, e.g. to tell a fault in following several local ranks
# from one in following any.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_torch

LOCAL=${DSFS_TEST_LOCAL_RANKS:-2}
[[ $LOCAL == [12] ]] || fail "DSFS_TEST_LOCAL_RANKS=$LOCAL: give 1 or 2"
SEED=23
failed=()	# checks that failed; (b) still runs when (a) fails
make_volume 1024
SRC="$VOL/src"
mkdir "$SRC"
total=$(make_imagefolder "$SRC/train" 8 100 100)
PLAN="sampler=torch-distributed,seed=$SEED,layout=imagefolder,dataset=train,epoch=auto"

# run_loaders TAG FIRST LAST WORLD MNT:RANK...: one DistributedSampler loader
# per MNT:RANK, all at once, meeting at each epoch start, page caches dropped
# before each epoch.  Rank R's output goes to $WORK/TAG.R.out, the paths it
# read to $WORK/TAG.R.list.  If one fails, the others are stopped.
run_loaders() {
	local tag=$1 first=$2 last=$3 world=$4 m r
	local -A rank_of=()
	shift 4

	mkdir "$WORK/$tag.barrier"
	for m in "$@"; do
		r=${m##*:}
		"$PY" "$srcdir/loader.py" --mode distributed --seed "$SEED" \
			--world "$world" --rank "$r" --first "$first" --last "$last" \
			--drop-caches --sleep-ms 5 --barrier "$WORK/$tag.barrier" \
			--parties $# --list "$WORK/$tag.$r.list" --source "$SRC/train" \
			"${m%:*}/train" >"$WORK/$tag.$r.out" 2>&1 &
		# shellcheck disable=SC2034 # read by wait_ranks (a nameref)
		rank_of[$!]=$r
	done
	wait_ranks rank_of "$tag" ||
		fail "the loader of rank $WAIT_FAILED exited with an error"
}

# sum_read TAG RANK...: bytes the loaders of these ranks read (with repeats).
sum_read() {
	local tag=$1
	shift
	awk '/^epoch=/ { split($4, b, "="); s += b[2] } END { print s + 0 }' \
		"${@/#/$WORK/$tag.}"
}

say "(a) ranks 0-$((LOCAL - 1)) of world 2 on one mount, epochs 5 and 6 of ~$((total >> 20)) MiB"
MNT="$WORK/mnt"
mkdir "$MNT"
# The local ranks' loaders on $MNT, and their outputs for sum_read.
on_mnt=() outs=()
for ((r = 0; r < LOCAL; r++)); do
	on_mnt+=("$MNT:$r")
	outs+=("$r.out")
done
# hugepages=off: leave the huge page pool to t-cache.sh, which may run
# alongside.  The cache holds half the data: only prefetching in the right
# order makes hits.
mount_dsfs "$SRC" "$MNT" -o "cache_size=$((total / 2 >> 20))M,hugepages=off,$PLAN,world=2,ranks=0-$((LOCAL - 1))"
run_loaders a 5 6 2 "${on_mnt[@]}"
check_plan_stats "$MNT" 6 "$(sum_read a "${outs[@]}")" ||
	failed+=("(a): the ranks' orders were not followed")
# The ranks found their epoch together: each says so, and the log names
# the group, not its first rank.
states=$("$PY" -c 'import json, sys; print(" ".join(r["detected"] for r in json.load(open(sys.argv[1]))["plan"]["ranks"]))' "$WORK/stats.json")
say "(a) the ranks' states: $states"
[[ $states == "$(printf 'epoch-detected %.0s' $(seq "$LOCAL") | sed 's/ $//')" ]] ||
	failed+=("(a): the ranks' states are $states")
if ((LOCAL > 1)); then
	log_has "$MNT" "plan: ranks 0-$((LOCAL - 1)): epoch 5 detected" ||
		failed+=("(a): no detection line for the ranks")
fi
# The same job run again on the mount (set_epoch(5) again): the ranks are
# lost at its first opens, found again at epoch 5's start, and followed.
say "(a) the same job again on the same mount"
run_loaders a2 5 6 2 "${on_mnt[@]}"
"$DSFS_STATS" --json "$MNT" >"$WORK/stats2.json" || fail "dsfs-stats --json"
states=$("$PY" -c 'import json, sys; print(" ".join("%s@%d" % (r["detected"], r["epoch"]) for r in json.load(open(sys.argv[1]))["plan"]["ranks"]))' "$WORK/stats2.json")
say "(a) after the second job: $states"
[[ $states == "$(printf 'epoch-detected@6 %.0s' $(seq "$LOCAL") | sed 's/ $//')" ]] ||
	failed+=("(a): the second job was not followed: $states")
log_has "$MNT" "found again" || log_has "$MNT" "epoch 5 detected after" ||
	failed+=("(a): no line for the second job found again")
# Found again together: the log names the group, as for the detection.
if ((LOCAL > 1)) && log_has "$MNT" "found again"; then
	log_has "$MNT" "plan: ranks 0-$((LOCAL - 1)): prediction found again" ||
		failed+=("(a): the ranks found again together, but no line names the group")
fi
# The counters only grow (Prometheus counters): the mispredictions and
# accesses, and every rank's mispredictions, after the second job are at
# least what they were after the first, although its trackers are new.
counts() {
	"$PY" -c 'import json, sys
p = json.load(open(sys.argv[1]))["plan"]
print(p["mispredictions"], p["accesses"], *(r["mispredictions"] for r in p["ranks"]))' "$1"
}
c1=$(counts "$WORK/stats.json") c2=$(counts "$WORK/stats2.json")
say "(a) mispredictions, accesses, each rank's mispredictions: after the first job $c1; after the second $c2"
"$PY" -c 'import sys; a, b = ([int(x) for x in s.split()] for s in sys.argv[1:]); sys.exit(0 if all(y >= x for x, y in zip(a, b)) else 1)' "$c1" "$c2" ||
	failed+=("(a): a counter went down: $c1, then $c2")
# ... and keep the opens of the trackers replaced: the same job again
# opens as many files (nine tenths: some may be served by the kernel).
read -r _ acc1 _ <<<"$c1"
read -r _ acc2 _ <<<"$c2"
((acc2 - acc1 >= acc1 * 9 / 10)) ||
	failed+=("(a): $((acc2 - acc1)) accesses counted for the second job, $acc1 for the first")
unmount_dsfs "$MNT"

# (b) Node n of 2 (mount $WORK/node$n) has ranks 2n .. 2n+LOCAL-1 of world 4:
# its loaders read its share of the data set, about LOCAL/4 of it.  The
# volume must give each mount that share once and little more:
# - at least every distinct byte its loaders read (exact: the mount's cache
#   starts empty and the epoch reads each of those files; the page caches
#   are dropped first, and backing_read_bytes counts the daemon's reads);
# - at most that plus two leads (cache_size/2 = 1/16 of the data set here)
#   and 1/16 for reads in flight: a daemon that follows its ranks fetches
#   ahead of them at most its lead, past the end of the epoch too, and with
#   epoch=auto it fetches one lead of the ranks' epoch 0 orders (the guess)
#   from the mount on, until the loaders' opens show epoch 5 (dsfs(8)).
#   One that prefetches the whole data set, or every rank's order, reads
#   about all of it (twice the share of two ranks, four times that of one)
#   and fails.
say "(b) two nodes of world 4 on one source, $LOCAL rank(s) each, epoch 5"
args=()
for n in 0 1; do
	mkdir "$WORK/node$n"
	mount_dsfs "$SRC" "$WORK/node$n" -o "cache_size=$((total / 8 >> 20))M,hugepages=off,$PLAN,world=4,ranks=$((2 * n))-$((2 * n + LOCAL - 1))"
	for ((r = 2 * n; r < 2 * n + LOCAL; r++)); do args+=("$WORK/node$n:$r"); done
done
run_loaders b 5 5 4 "${args[@]}"
for n in 0 1; do
	lists=()
	for ((r = 2 * n; r < 2 * n + LOCAL; r++)); do lists+=("$WORK/b.$r.list"); done
	"$DSFS_STATS" --json "$WORK/node$n" >"$WORK/node$n.json" || fail "dsfs-stats --json node$n"
	if ! "$PY" - "$WORK/node$n.json" "$SRC/train" "$total" "${lists[@]}" <<'PYEOF'
import json, os, sys
d = json.load(open(sys.argv[1]))
src, total = sys.argv[2], int(sys.argv[3])
paths = set()
for name in sys.argv[4:]:
    paths.update(line.rstrip("\n") for line in open(name))
share = sum(os.stat(os.path.join(src, p)).st_size for p in paths)
got, most = d["backing_read_bytes"], share + 3 * total // 16
print("%s: backing reads %d bytes (%.1f%% of the data set); its ranks' share %d "
      "(%.1f%%), at most %d; hits %.1f%%"
      % (d["mountpoint"], got, 100 * got / total, share, 100 * share / total,
         most, 100 * d["hit_bytes"] / max(d["read_bytes"], 1)))
if not share <= got <= most:
    sys.exit("FAIL: backing_read_bytes %d outside [%d, %d]" % (got, share, most))
PYEOF
	then
		failed+=("(b): node$n read from the volume more or less than its share")
	fi
done
unmount_dsfs "$WORK/node1"
unmount_dsfs "$WORK/node0"

# (c) A job starting afresh, at epoch 0, on a mount with epoch=auto: each
# local rank's order of epoch 0 is fetched from the mount on, before any
# open, and the loaders are followed from there.
say "(c) a fresh job: every local rank's epoch 0 fetched before its first open"
mount_dsfs "$SRC" "$MNT" -o "cache_size=$((total / 2 >> 20))M,hugepages=off,$PLAN,world=2,ranks=0-$((LOCAL - 1))"
# "OPENS LEAD0 LEAD1 ...": the opens so far, each rank's lead in bytes.
leads() {
	"$DSFS_STATS" --json "$MNT" >"$WORK/stats0.json" || fail "dsfs-stats --json"
	"$PY" -c 'import json, sys; p = json.load(open(sys.argv[1]))["plan"]; print(p["accesses"], *(r["lead_bytes"] for r in p["ranks"]))' "$WORK/stats0.json"
}
for ((i = 0; i < 100; i++)); do
	l=$(leads)
	[[ " ${l#* } " == *" 0 "* ]] || break
	sleep 0.1
done
say "(c) before any open: opens, then each rank's lead in bytes: $l"
[[ $l == "0 "* && " ${l#* } " != *" 0 "* ]] ||
	failed+=("(c): not every rank's order was fetched before the first open: $l")
run_loaders c 0 0 2 "${on_mnt[@]}"
check_plan_stats "$MNT" 0 "$(sum_read c "${outs[@]}")" ||
	failed+=("(c): the ranks' epoch 0 was not followed")
unmount_dsfs "$MNT"

# (d) Two nodes of world 4 over 1,001 samples: DistributedSampler pads
# each epoch to 1,004 with its first samples, so ranks 1 to 3 end on a
# sample another rank read at the start; for ranks 1 and 3 that rank is on
# their own node, whose kernel serves the second read unseen.  The epoch
# must still end there, and every rank's next epoch begin at its first
# open, not one open later (a misprediction each epoch from the second).
# In epochs of 251 samples, a rank's next epoch "starts" over most of its
# order: the first opens of rank 3's epoch must go to rank 3, not to rank
# 2 just begun (the rank they come first in).  No misprediction in 4
# epochs, page caches dropped before each.  push=off: every open but the
# kernel's repeats reaches the daemon.  (With push, which samples the
# kernel serves from pushed pages, unseen, depends on timing: in one CI
# run 107 of node 0's reads were, and rank 0's tracker took 15 of its
# sparse opens at epochs' starts for mispredictions: unit-tracker's
# test_sparse_ends.)
say "(d) two nodes of world 4 over 1,001 samples (padded): 4 epochs, no misprediction"
SRC="$VOL/pad"
make_imagefolder "$SRC/train" 7 143 8 >/dev/null
args=()
for n in 0 1; do
	mount_dsfs "$SRC" "$WORK/node$n" -o "cache_size=64M,hugepages=off,push=off,$PLAN,world=4,ranks=$((2 * n))-$((2 * n + 1))"
	args+=("$WORK/node$n:$((2 * n))" "$WORK/node$n:$((2 * n + 1))")
done
run_loaders d 0 3 4 "${args[@]}"
for n in 0 1; do
	"$DSFS_STATS" --json "$WORK/node$n" >"$WORK/node$n.json" || fail "dsfs-stats --json node$n"
	if ! "$PY" - "$WORK/node$n.json" <<'PYEOF'
import json, sys
p = json.load(open(sys.argv[1]))["plan"]
print("node: %d opens; %s" % (p["accesses"], ", ".join(
    "rank %d epoch %d, %d mispredictions" % (r["rank"], r["epoch"], r["mispredictions"])
    for r in p["ranks"])))
sys.exit(any(r["mispredictions"] or r["epoch"] != 3 for r in p["ranks"]))
PYEOF
	then
		failed+=("(d): node$n mispredicted, or is not at epoch 3")
	fi
	unmount_dsfs "$WORK/node$n"
done
((${#failed[@]} == 0)) || fail "${failed[*]}"
