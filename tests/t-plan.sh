#!/bin/bash
# t-plan: a reader following the seeded order is prefetched (hits >= 95% with a cache smaller than the data, epochs detected and logged); every open counts once in the plan, looked up or not, across a change of plan too, and in a data set of 20 files; a list naming each file twice (oversampling) is followed, and not searched with seed=discover; with epoch=auto, epoch 0 is fetched from the mount until the loader shows its epoch, the fetch's threads at their own nice until the loader opens a file; boosted (nice -10) once the loader reads close behind the fetch (and plan.last_open_seconds says how long ago an open was heard: none before the first) (a loader resumed at epoch 2 is followed there); a wrong seed is noticed, logged and stops the prefetch; a later epoch opens none of the samples a cache holding the data set holds (until names change in SOURCE), and reads right the files changed meanwhile; and a data set grown after the mount makes the lost plan say that names changed since its files were listed.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_cmd getfattr

[[ -x /usr/bin/python3 ]] || skip "Debian's /usr/bin/python3 is needed"
make_volume 1024
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT"
"$MKTREE" "$SRC/train" 800 8 100000 21
PLAN="sampler=python-shuffle,seed=5,layout=sorted,dataset=train"

# thread_nice PID NAME: the nice of process PID's thread NAME.
thread_nice() {
	local t
	for t in /proc/"$1"/task/*; do
		[[ $(<"$t/comm") == "$2" ]] || continue
		awk '{ sub(/^.*\) /, ""); print $17 }' "$t/stat"
		return
	done
}

# check_nice MNT N WHEN: the scheduler's and the I/O engine's threads of
# MNT's daemon run at nice N, where the daemon may lower its nice (root
# with CAP_SYS_NICE; the boost needs it).
check_nice() {
	local t n

	(((0x$(awk '/^CapEff:/ { print $2 }' /proc/self/status) >> 23) & 1)) ||
		return 0
	for t in dsfs-sched dsfs-io; do
		n=$(thread_nice "${DSFS_PID[$1]}" "$t")
		say "$t: nice $n $3"
		[[ $n == "$2" ]] || fail "$t runs at nice '$n' $3, not $2"
	done
}

# read_epoch E: read every file of epoch E in the planned order, as a
# loader does (read_in_order).
read_epoch() {
	"$DSFS" --print-plan "$SRC" -o "$PLAN,epoch=$1" >"$WORK/order$1"
	read_in_order "$MNT/train" "$WORK/order$1"
}

say "right seed: epochs 0 and 1 through a 32 MiB cache over ~80 MB of data"
mount_dsfs "$SRC" "$MNT" -o "cache_size=32M,$PLAN"
read_epoch 0
read_epoch 1
read=$(stat_of read_bytes) hit=$(stat_of hit_bytes)
acc=$(stat_of plan.accesses) mis=$(stat_of plan.mispredictions)
say "read $read bytes, $hit hits; $acc accesses, $mis mispredictions; epoch $(stat_of plan.epoch), $(stat_of plan.detected)"
((hit * 100 >= read * 95)) || fail "hit_bytes $hit < 95% of read_bytes $read"
((mis * 100 <= acc)) || fail "mispredictions $mis > 1% of $acc accesses"
[[ $(stat_of plan.epoch) == 1 ]] || fail "epoch $(stat_of plan.epoch), expected 1"
[[ $(stat_of plan.detected) == '"epoch-detected"' ]] || fail "detected $(stat_of plan.detected)"
"$READCHECK" tree "$SRC" "$MNT" >/dev/null || fail "tree differs"
say "the log has a line per event: the plan, the epoch detected, the next begun"
log_has "$MNT" "plan: python-shuffle over 800 samples" || fail "no plan line"
log_has "$MNT" "plan: epoch 0 detected after" || fail "no detection line"
log_has "$MNT" "plan: epoch 1 begun" || fail "no new epoch line"
unmount_dsfs "$MNT"

# epoch=auto: until the loader's opens show its epoch, the plan fetches
# the first candidate's order (epoch 0 here) from the mount on.
say "epoch=auto: epoch 0 fetched from the mount on, before any open"
mount_dsfs "$SRC" "$MNT" -o "cache_size=32M,$PLAN"
for ((i = 0; i < 100; i++)); do
	(($(stat_of plan.prefetch_bytes) > 0)) && break
	sleep 0.1
done
fetched=$(stat_of plan.prefetch_bytes) acc=$(stat_of plan.accesses)
say "$fetched bytes fetched with $acc opens; plan $(stat_of plan.detected)"
((fetched > 0 && acc == 0)) || fail "nothing fetched before the first open ($fetched bytes, $acc opens)"
# A loader not reading yet waits on nothing: the fetch's threads keep
# their own nice (lib/bgprio.h's boost).
check_nice "$MNT" 0 "before the loader's first open"
# How long ago the plan last heard an open (a loader the page cache serves
# opens nothing: its place stands): none yet, then at least the pause.
[[ -z $(stat_of plan.last_open_seconds) ]] ||
	fail "plan.last_open_seconds $(stat_of plan.last_open_seconds) before any open"
table=$("$DSFS_STATS" "$MNT")
grep -qE "^ *last open +none yet$" <<<"$table" ||
	fail "dsfs-stats does not say no open was heard yet: $table"
read_epoch 0
[[ $(stat_of plan.detected) == '"epoch-detected"' && $(stat_of plan.epoch) == 0 ]] ||
	fail "after epoch 0: $(stat_of plan.detected) at epoch $(stat_of plan.epoch)"
sleep 2
last=$(stat_of plan.last_open_seconds)
say "2 s after the last open: plan.last_open_seconds $last"
awk -v l="$last" 'BEGIN { exit !(l != "" && l >= 1.5 && l < 600) }' ||
	fail "plan.last_open_seconds '$last' 2 s after the last open"
table=$("$DSFS_STATS" "$MNT")
grep -qE "^ *last open +[0-9.]+ s ago$" <<<"$table" ||
	fail "dsfs-stats shows no last open: $table"
"$READCHECK" tree "$SRC" "$MNT" >/dev/null || fail "tree differs"
unmount_dsfs "$MNT"

# A lead of 1 MiB (about 10 files): each sample the loader's reads let
# the fetch read next is one the loader is about to reach, so the fetch
# is behind and its threads run boosted (nice -10), and stay so while
# they wait for the loader's next read.
say "the fetch behind the loader: its threads boosted"
mount_dsfs "$SRC" "$MNT" -o "cache_size=32M,lead_max=1M,$PLAN,epoch=0"
"$DSFS" --print-plan "$SRC" -o "$PLAN,epoch=0" >"$WORK/order0"
head -200 "$WORK/order0" >"$WORK/first200"
read_in_order "$MNT/train" "$WORK/first200"
check_nice "$MNT" -10 "with the loader close behind"
unmount_dsfs "$MNT"

say "epoch=auto, a loader resumed at epoch 2: the guess is dropped, epoch 2 followed"
mount_dsfs "$SRC" "$MNT" -o "cache_size=32M,$PLAN"
read_epoch 2
read=$(stat_of read_bytes) hit=$(stat_of hit_bytes)
acc=$(stat_of plan.accesses) mis=$(stat_of plan.mispredictions)
say "read $read bytes, $hit hits; $acc accesses, $mis mispredictions; epoch $(stat_of plan.epoch), $(stat_of plan.detected)"
[[ $(stat_of plan.detected) == '"epoch-detected"' && $(stat_of plan.epoch) == 2 ]] ||
	fail "resumed at epoch 2: $(stat_of plan.detected) at epoch $(stat_of plan.epoch)"
((hit * 100 >= read * 90)) || fail "hit_bytes $hit < 90% of read_bytes $read after the guess"
"$READCHECK" tree "$SRC" "$MNT" >/dev/null || fail "tree differs"
unmount_dsfs "$MNT"

# An open is reported by its lookup, after the reply, or else by its read
# from offset 0, which may reach dsfs first.  Epoch 1 keeps the dentries:
# its opens make no lookup, and only the read reports them (push=off: a
# read from pages pushed into the kernel's cache would reach no one).
say "every open counts once, lookups or not: epoch 1 with the page cache dropped and the dentries kept"
mount_dsfs "$SRC" "$MNT" -o "cache_size=128M,push=off,$PLAN"
read_epoch 0
acc0=$(stat_of plan.accesses)
DROP_CACHES=1 read_epoch 1
acc=$(stat_of plan.accesses) files=$(wc -l <"$WORK/order0")
# Epoch 1 has no report for the opens of empty files (no lookup, no read).
want=$(cd "$SRC/train" && xargs -d '\n' stat --format=%s <"$WORK/order1" | grep -cvx 0)
say "$acc0 accesses in epoch 0 (of $files opens), $((acc - acc0)) in epoch 1 ($want of its opens read a byte)"
((acc0 == files)) || fail "the plan saw $acc0 of epoch 0's $files opens"
((acc - acc0 == want)) || fail "the plan saw $((acc - acc0)) of epoch 1's opens, expected $want"
unmount_dsfs "$MNT"

# A file whose open was reported by its lookup, with no read since, is
# reported again by the read from offset 0 of a later open that makes no
# lookup, once the lookup's report is more than 1024 reports old.  A new
# plan (the control channel) must not number its reports from 0 again,
# which would make that old report look recent and silence the read.
say "a new plan keeps numbering reports: an old lookup's report does not silence a later read"
mount_dsfs "$SRC" "$MNT" -o "cache_size=32M,push=off,$PLAN"
x=$(cd "$SRC/train" && find . -type f -size +0 -printf '%P\n' | sort | sed -n 1p)
others=$(cd "$SRC/train" && find . -type f -printf '%P\n' | grep -vxF "$x")
exec 3<"$MNT/train/$x" # its lookup reports first; the fd keeps its dentry
stat_others() { (cd "$MNT/train" && xargs -d '\n' stat --format=%s >/dev/null) <<<"$others"; }
stat_others
echo 2 >/proc/sys/vm/drop_caches # the other dentries go, not x's
stat_others # over 1024 reports since x's
getfattr --absolute-names --only-values -n "user.dsfs.plan=seed=7" "$MNT" >/dev/null
echo 2 >/proc/sys/vm/drop_caches
stat "$MNT/train/$(head -n 1 <<<"$others")" >/dev/null # the new plan's first report
acc0=$(stat_of plan.accesses)
cat "$MNT/train/$x" >/dev/null # no lookup: the read reports the open
acc=$(stat_of plan.accesses)
exec 3<&-
say "plan.accesses $acc0 before the read of $x, $acc after"
((acc == acc0 + 1)) || fail "the read of $x after a new plan was not reported ($acc0 -> $acc accesses)"
unmount_dsfs "$MNT"

# A data set smaller than the loader's reach: each epoch opens a file again
# soon after the last epoch did (20 opens apart at most), and every such
# open counts.  With -o direct_io every read reaches the daemon; a reader
# that reads from offset 0 twice in one open (a header, then all) is still
# one open.  Then cold epochs, each open looked up, with page caches.
say "20 files: every open of every epoch counts once (direct_io with re-reads from 0, then cold epochs)"
"$MKTREE" "$SRC/small" 20 1 200000 9
SMALL="sampler=python-shuffle,seed=3,layout=sorted,dataset=small"
small_epochs() { # E0 E1 MODE: read epochs E0..E1 (MODE reread: header, seek 0, all)
	local e acc mis
	for ((e = $1; e <= $2; e++)); do
		"$DSFS" --print-plan "$SRC" -o "$SMALL,epoch=$e" >"$WORK/order"
		[[ $3 == reread ]] || { sync; echo 3 >/proc/sys/vm/drop_caches; }
		/usr/bin/python3 - "$MNT/small" "$SRC/small" "$WORK/order" "$3" <<'PYEOF' || fail "epoch $e: bytes differ"
import sys
mnt, src, order, mode = sys.argv[1:]
for p in open(order):
    p = p.rstrip("\n")
    with open(mnt + "/" + p, "rb", buffering=0) as f:
        if mode == "reread":
            f.read(16)
            f.seek(0)
        data = f.read()
    if data != open(src + "/" + p, "rb").read():
        sys.exit("%s: bytes differ" % p)
PYEOF
		acc=$(stat_of plan.accesses) mis=$(stat_of plan.mispredictions)
		say "epoch $e ($3): plan at epoch $(stat_of plan.epoch), $acc accesses, $mis mispredictions"
		((acc == 20 * (e + 1))) || fail "epoch $e: the plan saw $acc opens, expected $((20 * (e + 1)))"
		((mis == 0)) || fail "epoch $e: $mis mispredictions"
		[[ $(stat_of plan.epoch) == "$e" ]] || fail "epoch $e: the plan is at epoch $(stat_of plan.epoch)"
	done
}
mount_dsfs "$SRC" "$MNT" -o "cache_size=32M,direct_io,$SMALL"
small_epochs 0 3 reread
unmount_dsfs "$MNT"
mount_dsfs "$SRC" "$MNT" -o "cache_size=32M,$SMALL"
small_epochs 0 3 cold
unmount_dsfs "$MNT"

# An oversampling list: every path on two lines, so each file is two
# samples and is read twice an epoch (the second time from the page cache,
# or not: dsfs must place an open of it at either position).
say "a list naming each file twice: every epoch followed"
# (awk, not head: under pipefail, sort would die of SIGPIPE)
(cd "$SRC/train" && find . -type f | sed 's#^\./##' | sort | awk 'NR <= 200') >"$WORK/once"
cat "$WORK/once" "$WORK/once" >"$WORK/twice"
DUP="sampler=python-shuffle,seed=5,layout=list,list=$WORK/twice,dataset=train"
mount_dsfs "$SRC" "$MNT" -o "cache_size=32M,$DUP"
for e in 0 1 2; do
	"$DSFS" --print-plan "$SRC" -o "$DUP,epoch=$e" >"$WORK/order"
	read_in_order "$MNT/train" "$WORK/order"
done
acc=$(stat_of plan.accesses) mis=$(stat_of plan.mispredictions)
say "epoch $(stat_of plan.epoch), $(stat_of plan.detected); $acc accesses, $mis mispredictions"
[[ $(stat_of plan.detected) == '"epoch-detected"' && $(stat_of plan.epoch) == 2 ]] ||
	fail "a list naming each file twice: $(stat_of plan.detected) at epoch $(stat_of plan.epoch)"
((mis * 100 <= acc)) || fail "a list naming each file twice: $mis mispredictions > 1% of $acc accesses"
"$READCHECK" tree "$SRC/train" "$MNT/train" >/dev/null || fail "tree differs"
unmount_dsfs "$MNT"

# seed=discover cannot search such a list (the search matches raw
# permutations, and an open names the file's first sample only): the mount
# says so and searches nothing, and the bytes are right.
say "a list naming each file twice, seed=discover: refused to search, logged"
mount_dsfs "$SRC" "$MNT" -o "cache_size=32M,sampler=torch-random,seed=discover,layout=list,list=$WORK/twice,dataset=train,discover_range=0-65536,discover_threads=1"
shuf --random-source=<(yes) "$WORK/once" >"$WORK/order"
read_in_order "$MNT/train" "$WORK/order"
"$READCHECK" tree "$SRC/train" "$MNT/train" >/dev/null || fail "tree differs"
log=${DSFS_LOG[$(realpath "$MNT")]}
grep "plan:" "$log" >&2 || true
grep -q "seed=discover: 200 of 400 samples share a file with an earlier one" "$log" ||
	fail "seed=discover over a list naming each file twice: no warning"
! grep -q "no seed in\|discovered" "$log" || fail "seed=discover over a list naming each file twice: searched"
unmount_dsfs "$MNT"

# A sample's identity (the cache's key) costs an open; once known, and
# while the watch of SOURCE has seen every change, a sample whose chunks
# are all cached is not opened again.  A name changed in SOURCE forgets
# what is known, and a file changed in place is opened again (its cached
# data dropped); every byte read stays the file's.
say "a cache holding the data set: the next epoch opens none of its samples"
mount_dsfs "$SRC" "$MNT" -o "cache_size=128M,hugepages=off,$PLAN"
read_epoch 0
read_epoch 1 # (a sample the loader read before the plan fetched it: now)
first=$(stat_of plan.sample_opens)
read_epoch 2
again=$(($(stat_of plan.sample_opens) - first))
say "samples opened: $first in epochs 0 and 1, $again in epoch 2"
((first >= 800)) || fail "only $first samples opened in epochs 0 and 1"
((again == 0)) || fail "$again samples opened in epoch 2, every one cached"
say "a file appended to and one replaced: opened again, read right"
mapfile -t two < <(tail -n 2 "$WORK/order2")
"$MKTREE" --file "$WORK/more" 3000 78
cat "$WORK/more" >>"$SRC/train/${two[0]}"
"$MKTREE" --file "$SRC/.replacement" 5000 77
mv "$SRC/.replacement" "$SRC/train/${two[1]}"
before=$(stat_of plan.sample_opens)
read_epoch 3
"$READCHECK" tree "$SRC" "$MNT" >/dev/null || fail "tree differs after the changes"
((before < $(stat_of plan.sample_opens))) || fail "no sample opened after names changed"
unmount_dsfs "$MNT"

say "wrong seed: the plan is abandoned and prefetching stops"
# From the mount to the loader's first opens, the guess (epoch 0 of the
# wrong order) fetches at most a lead, which the cache bounds.
mount_dsfs "$SRC" "$MNT" -o "cache_size=32M,${PLAN/seed=5/seed=6}"
read_epoch 0
det=$(stat_of plan.detected) fetched=$(stat_of plan.prefetch_bytes)
say "detected $det, $(stat_of plan.mispredictions) mispredictions, $fetched bytes prefetched"
[[ $det == '"lost"' ]] || fail "wrong seed not noticed: $det"
((fetched <= 32 << 20)) || fail "fetched $fetched bytes with a wrong seed: more than the cache"
read_epoch 0
again=$(stat_of plan.prefetch_bytes)
((again == fetched)) || fail "kept prefetching with a wrong seed: $fetched bytes, then $again"
log_has "$MNT" "plan: prediction lost" || fail "no line for the lost prediction"
unmount_dsfs "$MNT"

# Files added to the data set after the mount, which listed its files: a
# loader lists them all, so its order is not the plan's.  The lost plan's
# warning says that names changed in SOURCE since the listing.
say "files added to the data set after the mount: the lost plan says so"
mount_dsfs "$SRC" "$MNT" -o "cache_size=32M,$PLAN"
for i in 1 2 3; do
	"$MKTREE" --file "$SRC/train/added-$i" 3000 "$i"
done
read_epoch 0
log_has "$MNT" "3 names were created, removed or renamed in SOURCE since the data set's files were listed" ||
	fail "files added to the data set: the lost plan does not say so"
rm "$SRC"/train/added-*
unmount_dsfs "$MNT"
