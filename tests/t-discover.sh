#!/bin/bash
# t-discover: with seed=discover, an unseeded torch DataLoader(shuffle=True, num_workers=2) after torch.manual_seed and a model's initialisation is followed: each epoch's effective seed is found from its first opens (searching a slice around the true seeds), and after discovery >= 95% of the bytes read are hits; so is a RandomSampler(num_samples=500) without a generator, whose epochs end after 500 opens (mounted with num_samples=500).
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_torch

# run_loader MNT ARGS...: the unseeded loader (2 workers, 40 ms a batch,
# caches dropped each epoch) over MNT/train for two epochs, the stats
# sampled every 0.1 s meanwhile into $WORK/samples: plan.detected,
# plan.epoch, read_bytes and hit_bytes.
run_loader()
{
	local mnt=$1 poller
	shift
	rm -f "$WORK/done"
	(while [[ ! -e $WORK/done ]]; do
		getfattr --absolute-names -n user.dsfs.stats --only-values "$mnt" |
			awk '$1 == "plan.detected" { d = $2 } $1 == "plan.epoch" { e = $2 }
			     $1 == "read_bytes" { r = $2 } $1 == "hit_bytes" { h = $2 }
			     END { print d, e, r, h }'
		sleep 0.1
	done) >"$WORK/samples" &
	poller=$!
	"$PY" "$srcdir/loader.py" "$mnt/train" --mode unseeded --last 1 \
		--drop-caches --sleep-ms 40 --source "$SRC/train" "$@" \
		>"$WORK/loader.out" || fail "loader: $(cat "$WORK/loader.out")"
	touch "$WORK/done"
	wait "$poller"
	cat "$WORK/loader.out" >&2
}

# hits_after_discovery LABEL READ: the reads and hits between each
# discovery and the end of its epoch (consecutive samples both
# "discovered" in the same epoch: a search may end between two samples),
# which the prefetch can serve: >= 95% hit, and more than
# half of the READ bytes the loader read in all.
hits_after_discovery()
{
	local r h
	read -r r h < <(awk '
		{ on = $1 == "\"discovered\""
		  if (on && was && $2 == e0) { r += $3 - r0; h += $4 - h0 }
		  was = on; e0 = $2; r0 = $3; h0 = $4 }
		END { print r + 0, h + 0 }' "$WORK/samples")
	say "${1}after discovery: $h of $r bytes hit"
	((r > $2 / 2)) || fail "${1}only $r bytes read after discovery (of $2)"
	((h * 100 >= r * 95)) || fail "${1}after discovery only $h of $r bytes hit"
}

make_volume 1024
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT"
bytes=$(make_imagefolder "$SRC/train" 16 50 60) # 800 files, ~47 MiB
sync
# A global seed whose two epochs draw seeds within 2^20 of each other, so
# that one narrow slice of the seed space holds both.
read -r gseed s0 s1 < <("$PY" "$srcdir/loader.py" "$SRC/train" \
	--mode unseeded --seed 1 --last 1 --find-seed $((1 << 20)))
lo=$(((s0 < s1 ? s0 : s1) - (1 << 18))) hi=$(((s0 > s1 ? s0 : s1) + (1 << 18)))
((lo >= 0)) || lo=0
((hi <= 1 << 32)) || hi=$((1 << 32))
say "global seed $gseed: epochs draw seeds $s0 and $s1; searching $lo-$hi"

mount_dsfs "$SRC" "$MNT" -o "cache_size=$((bytes / 2 / 1048576))M,hugepages=off,sampler=torch-random,seed=discover,layout=imagefolder,dataset=train,discover_range=$lo-$hi,discover_threads=2"
[[ $(stat_of plan.seed) == '"discover"' ]] || fail "plan.seed before any search: $(stat_of plan.seed)"

run_loader "$MNT" --seed "$gseed"

log=${DSFS_LOG[$(realpath "$MNT")]}
grep "plan:" "$log" >&2 || true
getfattr --absolute-names -n user.dsfs.stats --only-values "$MNT" | grep "^plan\.\|read_bytes\|hit_bytes" >&2
grep -q "epoch 0: discovered RandomSampler seed $s0 " "$log" || fail "epoch 0's seed $s0 not discovered"
grep -q "epoch 1: discovered RandomSampler seed $s1 " "$log" || fail "epoch 1's seed $s1 not discovered"
[[ $(stat_of plan.seed) == "$s1" ]] || fail "plan.seed $(stat_of plan.seed), not $s1"
[[ $(stat_of plan.discovered) == 2 ]] || fail "plan.discovered $(stat_of plan.discovered)"
[[ $(stat_of plan.detected) == '"discovered"' ]] || fail "plan.detected $(stat_of plan.detected)"
say "searches $(stat_of plan.searches), $(stat_of plan.search_seconds) s; hits $(stat_of hit_bytes) of $(stat_of read_bytes) bytes in all"
"$DSFS_STATS" "$MNT" | grep -E "seed search +[0-9]+ searches, 2 found" >/dev/null || fail "dsfs-stats: $("$DSFS_STATS" "$MNT")"
hits_after_discovery "" $((2 * bytes))
unmount_dsfs "$MNT"

# RandomSampler(ds, num_samples=500) without a generator: each epoch seeds
# a fresh generator as above and reads the head of its permutation; the
# epoch ends after 500 opens, the next one's first sample most likely not
# read in it.
read -r gseed s0 s1 < <("$PY" "$srcdir/loader.py" "$SRC/train" \
	--mode unseeded --seed 1 --last 1 --num-samples 500 --find-seed $((1 << 20)))
lo=$(((s0 < s1 ? s0 : s1) - (1 << 18))) hi=$(((s0 > s1 ? s0 : s1) + (1 << 18)))
((lo >= 0)) || lo=0
((hi <= 1 << 32)) || hi=$((1 << 32))
say "num_samples=500: global seed $gseed: epochs draw seeds $s0 and $s1"
mount_dsfs "$SRC" "$MNT" -o "cache_size=$((bytes / 2 / 1048576))M,hugepages=off,sampler=torch-random,seed=discover,num_samples=500,layout=imagefolder,dataset=train,discover_range=$lo-$hi,discover_threads=2"
run_loader "$MNT" --seed "$gseed" --num-samples 500
log=${DSFS_LOG[$(realpath "$MNT")]}
grep "plan:" "$log" >&2 || true
grep -q "epoch 0 over: its 500 samples (num_samples) opened" "$log" ||
	fail "num_samples: epoch 0's end not seen after its 500 opens"
grep -q "epoch 0: discovered RandomSampler seed $s0 " "$log" || fail "num_samples: epoch 0's seed $s0 not discovered"
grep -q "epoch 1: discovered RandomSampler seed $s1 " "$log" || fail "num_samples: epoch 1's seed $s1 not discovered"
say "num_samples: hits $(stat_of hit_bytes) of $(stat_of read_bytes) bytes in all"
# Each epoch's first opens, before its search ends, are not prefetched:
# how many depends on the search's speed against the loader's workers.
# Two epochs of 500 of the 800 samples: about 1.25 times the tree's bytes.
hits_after_discovery "num_samples: " $((bytes * 5 / 4))
unmount_dsfs "$MNT"
