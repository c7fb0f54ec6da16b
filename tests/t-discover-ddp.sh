#!/bin/bash
# t-discover-ddp: with sampler=torch-distributed,seed=discover, DistributedSampler ranks 2-3 of world 4 whose seed is 2^32 - 2 are followed: one search in the first epoch finds its seed, the later epochs follow as seed + 1, + 2 (low 32 bits: 2^32 - 1, then 0) without searching again, >= 95% of their bytes are hits and every byte is right; sampler=auto finds the DistributedSampler (seed 3000000000) too.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_torch
require_cmd getfattr

WORLD=4
RANKS=(2 3)	# a first local rank > 0: the search probes its position
make_volume 1024
SRC="$VOL/src"
mkdir "$SRC"
# 4096 files, ~80 MiB: a rank reads 1024 an epoch, so its tracker's window
# (1/4 of that: 256 positions) spans the batches of 16 that its two workers
# have in flight.  With 800 files and a window of 1/16 (16 positions, as
# dsfs once had) the workers, drifted apart while the first epoch is read
# unprefetched, outran it and the rank was lost.
total=$(make_imagefolder "$SRC/train" 16 256 20)
# The local ranks read half the data set each epoch, a different half every
# epoch; the cache holds half of that: only prefetching in the right order
# makes hits.  hugepages=off: leave the huge page pool to t-cache.sh.
# push=off: the hit rate counts the daemon's reads, so every read must
# reach it (a chunk pushed again after the drop of caches, racing the
# loader's lookup, would be read from the kernel's page cache).
PLAN="cache_size=$((total / 4 >> 20))M,hugepages=off,push=off,layout=imagefolder,dataset=train,seed=discover,world=$WORLD,ranks=${RANKS[0]}-${RANKS[-1]},discover_threads=2"

# range_of S [B]: discover_range for the seeds within 2^B (default 2^18)
# of S, in [0, 2^32].
range_of() {
	local lo=$(($1 - (1 << ${2:-18}))) hi=$(($1 + (1 << ${2:-18})))

	((lo >= 0)) || lo=0
	((hi <= 1 << 32)) || hi=$((1 << 32))
	echo "$lo-$hi"
}

# run_ddp TAG MNT SEED FIRST LAST: the DistributedSampler(seed=SEED) loaders
# of the local ranks on MNT, all at once, meeting at each epoch start, page
# caches dropped before each epoch, every byte checked against $SRC.  Rank R
# prints to $WORK/TAG.R.out; the first rank's loader writes the stats
# snapshots before each epoch and at the end (loader.py --stats) to
# $WORK/TAG.stats; meanwhile the stats are sampled every 0.1 s to
# $WORK/TAG.samples ("detected epoch seed searches read hit").  If one loader
# fails, the others are stopped.
run_ddp() {
	local tag=$1 mnt=$2 seed=$3 first=$4 last=$5 r poller args
	local -A rank_of=()

	mkdir "$WORK/$tag.barrier"
	(while [[ ! -e $WORK/$tag.done ]]; do
		getfattr --absolute-names -n user.dsfs.stats --only-values "$mnt" |
			awk '$1 == "plan.detected" { d = $2 } $1 == "plan.epoch" { e = $2 }
			     $1 == "plan.seed" { s = $2 } $1 == "plan.searches" { n = $2 }
			     $1 == "read_bytes" { r = $2 } $1 == "hit_bytes" { h = $2 }
			     END { print d, e, s, n, r, h }'
		sleep 0.1
	done) >"$WORK/$tag.samples" &
	poller=$!
	for r in "${RANKS[@]}"; do
		args=()
		[[ $r != "${RANKS[0]}" ]] || args=(--stats "$mnt" "$WORK/$tag.stats")
		"$PY" "$srcdir/loader.py" --mode distributed --seed "$seed" \
			--world "$WORLD" --rank "$r" --first "$first" --last "$last" \
			--drop-caches --sleep-ms 20 --barrier "$WORK/$tag.barrier" \
			--parties ${#RANKS[@]} --source "$SRC/train" "${args[@]}" \
			"$mnt/train" >"$WORK/$tag.$r.out" 2>&1 &
		# shellcheck disable=SC2034 # read by wait_ranks (a nameref)
		rank_of[$!]=$r
	done
	if ! wait_ranks rank_of "$tag"; then
		touch "$WORK/$tag.done"
		fail "$tag: the loader of rank $WAIT_FAILED exited with an error"
	fi
	touch "$WORK/$tag.done"
	wait "$poller" || fail "$tag: the stats poller failed"
}

# check_ddp TAG MNT SEED LAST: what the mount showed while the loaders of
# run_ddp read epochs 0 .. LAST:
# - the daemon logged that it found SEED in epoch 0, and was following it
#   ("discovered") before epoch 1 started;
# - every sample while discovered has plan.seed = (SEED + plan.epoch) mod
#   2^32, and epochs 1 .. LAST were each seen so; plan.searches never > 1;
# - at the end: epoch LAST, seed (SEED + LAST) mod 2^32, one search, one
#   seed found, sampler torch-distributed;
# - from the start of epoch 1 to the end (the loaders' snapshots, exact):
#   at least the bytes the loaders read reached the daemon, >= 95% hits.
check_ddp() {
	local tag=$1 mnt=$2 seed=$3 last=$4

	log_has "$mnt" "plan: epoch 0: discovered DistributedSampler seed $seed " ||
		fail "$tag: seed $seed not discovered in epoch 0"
	grep "plan:" "${DSFS_LOG[$(realpath "$mnt")]}" >&2 || true
	grep -E "^(e1|end) (plan\.|read_bytes|hit_bytes|backing_read_bytes|stalls)" \
		"$WORK/$tag.stats" >&2 || true
	"$PY" - "$tag" "$seed" "$last" "$WORK/$tag.stats" "$WORK/$tag.samples" \
		"$WORK/$tag".*.out <<'PYEOF'
import re, sys
tag, seed, last, snaps, samples = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
bad = []
snap = {}
for line in open(snaps):
    where, key, value = (line.rstrip("\n").split(" ", 2) + [""])[:3]
    snap.setdefault(where, {})[key] = value
def want(where, key, value):
    got = snap.get(where, {}).get(key)
    if got != value:
        bad.append("%s: %s %s, expected %s" % (where, key, got, value))
want("e1", "plan.detected", '"discovered"')
for key, value in (("plan.detected", '"discovered"'), ("plan.epoch", str(last)),
                   ("plan.seed", str((seed + last) & 0xffffffff)),
                   ("plan.searches", "1"), ("plan.discovered", "1"),
                   ("plan.sampler", '"torch-distributed"')):
    want("end", key, value)
seen = set()
for n, line in enumerate(open(samples), 1):
    f = line.split()
    if len(f) != 6:
        continue
    det, epoch, s, searches = f[0], int(f[1]), f[2], int(f[3])
    if searches > 1:
        bad.append("sample %d: plan.searches %d" % (n, searches))
    if det != '"discovered"':
        continue
    seen.add(epoch)
    if s != str((seed + epoch) & 0xffffffff):
        bad.append("sample %d: epoch %d, plan.seed %s, expected %d"
                   % (n, epoch, s, (seed + epoch) & 0xffffffff))
missing = set(range(1, last + 1)) - seen
if missing:
    bad.append("epochs %s never seen discovered (seen: %s)" % (sorted(missing), sorted(seen)))
# Bytes the loaders read in epochs 1 .. last.
want_read = 0
for name in sys.argv[6:]:
    for m in re.finditer(r"^epoch=(\d+) rank=\d+ samples=\d+ bytes=(\d+)", open(name).read(), re.M):
        if int(m.group(1)) >= 1:
            want_read += int(m.group(2))
try:
    c = {w: (int(snap[w]["read_bytes"]), int(snap[w]["hit_bytes"])) for w in ("e0", "e1", "end")}
except KeyError as e:
    sys.exit("FAIL: %s: snapshot %s missing" % (tag, e))
r0, h0 = c["e1"][0] - c["e0"][0], c["e1"][1] - c["e0"][1]
r, h = c["end"][0] - c["e1"][0], c["end"][1] - c["e1"][1]
print("%s: epoch 0 (searched): %d of %d bytes hit (%.1f%%); epochs 1-%d "
      "(followed): %d of %d bytes hit (%.1f%%), the loaders read %d; seeds "
      "seen for epochs %s; at the end epoch %s seed %s"
      % (tag, h0, r0, 100 * h0 / max(r0, 1), last, h, r, 100 * h / max(r, 1),
         want_read, sorted(seen), snap["end"].get("plan.epoch"),
         snap["end"].get("plan.seed")))
if r < want_read:
    bad.append("epochs 1-%d: read_bytes %d < %d the loaders read: reads did not reach the daemon"
               % (last, r, want_read))
if h * 100 < r * 95:
    bad.append("epochs 1-%d: only %d of %d bytes hit" % (last, h, r))
for b in bad:
    print("FAIL: %s: %s" % (tag, b), file=sys.stderr)
sys.exit(1 if bad else 0)
PYEOF
}

# (a) sampler=torch-distributed, a seed whose low 32 bits wrap in epoch 2.
SEED=$(((1 << 32) - 2))
say "(a) ranks ${RANKS[*]} of world $WORLD, seed $SEED, epochs 0-2 of ~$((total >> 20)) MiB"
MNT="$WORK/mnt"
mkdir "$MNT"
mount_dsfs "$SRC" "$MNT" -o "$PLAN,sampler=torch-distributed,discover_range=$(range_of "$SEED")"
[[ $(stat_of plan.seed) == '"discover"' ]] || fail "(a): plan.seed before any search: $(stat_of plan.seed)"
[[ $(stat_of plan.detected) == '"searching"' ]] || fail "(a): plan.detected before any open: $(stat_of plan.detected)"
run_ddp a "$MNT" "$SEED" 0 2
check_ddp a "$MNT" "$SEED" 2 || fail "(a): the DistributedSampler was not discovered and followed"
unmount_dsfs "$MNT"

# (b) sampler=auto searches RandomSampler and DistributedSampler orders:
# twice the work, in a range a quarter of (a)'s, so that the search ends
# within epoch 0 (about 2.4 s) on a busy machine under ASan too (2^19 seeds
# took 5.1 s there once, and were found only in epoch 1).
SEED=3000000000
say "(b) sampler=auto, ranks ${RANKS[*]} of world $WORLD, seed $SEED, epochs 0-1"
mount_dsfs "$SRC" "$MNT" -o "$PLAN,sampler=auto,discover_range=$(range_of "$SEED" 16)"
[[ $(stat_of plan.sampler) == '"auto"' ]] || fail "(b): plan.sampler before discovery: $(stat_of plan.sampler)"
run_ddp b "$MNT" "$SEED" 0 1
check_ddp b "$MNT" "$SEED" 1 || fail "(b): sampler=auto did not discover and follow the DistributedSampler"
unmount_dsfs "$MNT"
