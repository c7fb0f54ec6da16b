#!/bin/bash
# t-others: another program reading the data set beside the loader (a walk of the whole tree that compares every byte, as a sha1sum or tar of it would read) is told apart by its process: its opens are left out of the plan (logged with its name, counted as plan.other_opens), and the loader keeps its prediction (not lost, both epochs followed, its bytes right), as it does alone (one process that lists the tree: with push, the next epoch's first opens switch the epoch); alone, the walk is never left out.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_cmd getfattr

[[ -x /usr/bin/python3 ]] || skip "Debian's /usr/bin/python3 is needed"
make_volume 1024
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT"
"$MKTREE" "$SRC/train" 4000 16 16000 7
PLAN="sampler=python-shuffle,seed=11,layout=sorted,dataset=train"
for e in 0 1; do
	"$DSFS" --print-plan "$SRC" -o "$PLAN,epoch=$e" >"$WORK/order$e"
done

# loader: list the tree, then read epochs 0 and 1 in the planned order,
# one process, a file a millisecond or so, comparing every file with
# SOURCE's; the page cache dropped between them (a data set larger than
# memory), so that epoch 1's opens reach dsfs.
loader() {
	/usr/bin/python3 - "$SRC/train" "$MNT/train" "$WORK/order0" "$WORK/order1" <<'PYEOF'
import os, sys, time
src, mnt = sys.argv[1], sys.argv[2]
bad = 0
for d, dirs, files in os.walk(mnt):
    pass  # list the tree first, as ImageFolder does
for order in sys.argv[3:]:
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("1")
    for p in open(order):
        p = p.rstrip("\n")
        with open(mnt + "/" + p, "rb") as f:
            got = f.read()
        if got != open(src + "/" + p, "rb").read():
            bad += 1
            print("loader: %s differs" % p, file=sys.stderr)
        time.sleep(0.0005)
print("loader: %d files differ" % bad)
sys.exit(1 if bad else 0)
PYEOF
}

# walk: another program; read every file of the tree in sorted order, as
# tar or sha1sum would, comparing it with SOURCE's, and drop its pages
# once read (standing for a data set larger than memory: the pages it read
# would otherwise serve the loader's opens, which dsfs then never sees).
walk() {
	/usr/bin/python3 - "$SRC" "$MNT" <<'PYEOF'
import os, sys
src, mnt = sys.argv[1], sys.argv[2]
n = bad = 0
for d, dirs, files in os.walk(mnt):
    dirs.sort()
    for name in sorted(files):
        p = os.path.join(d, name)
        fd = os.open(p, os.O_RDONLY)
        got = b""
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            got += b
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
        n += 1
        if got != open(src + p[len(mnt):], "rb").read():
            bad += 1
            print("walk: %s differs" % p, file=sys.stderr)
print("walk: %d files, %d differ" % (n, bad))
sys.exit(1 if bad or not n else 0)
PYEOF
}

# train WALK: mount, read epochs 0 and 1 with the loader (and, WALK=1,
# the walk beside it, from the loader's 100th reported open on); check the
# plan followed the loader to epoch 1 and was never lost.
train() {
	local det log

	mount_dsfs "$SRC" "$MNT" -o "cache_size=32M,$PLAN"
	log=${DSFS_LOG[$(realpath "$MNT")]}
	sync
	echo 3 >/proc/sys/vm/drop_caches
	loader >"$WORK/loader.out" 2>&1 &
	lpid=$!
	if (($1)); then
		for ((i = 0; i < 300; i++)); do
			(($(stat_of plan.accesses) >= 100)) && break
			sleep 0.05
		done
		walk >"$WORK/walk.out" 2>&1 ||
			fail "the walk read wrong bytes: $(tail -3 "$WORK/walk.out")"
	fi
	wait "$lpid" || fail "the loader read wrong bytes: $(cat "$WORK/loader.out")"
	acc=$(stat_of plan.accesses) mis=$(stat_of plan.mispredictions)
	other=$(stat_of plan.other_opens) det=$(stat_of plan.detected)
	say "$acc accesses, $mis mispredictions, $other opens left out; epoch $(stat_of plan.epoch), $det"
	[[ $det == '"epoch-detected"' && $(stat_of plan.epoch) == 1 ]] ||
		fail "the plan did not follow the loader to epoch 1: $det at epoch $(stat_of plan.epoch); log: $(grep plan: "$log")"
	! grep "prediction lost" "$log" || fail "the prediction was lost"
	((mis * 20 <= acc)) || fail "$mis mispredictions in $acc accesses (more than 5%)"
}

# With push (the loader lists the tree, as ImageFolder does), the kernel
# serves 7 of 8 opens; the next epoch's first opens land on positions of
# this one never seen, and must switch the epoch, not lose it.
say "the loader alone: both epochs followed"
train 0
((other == 0)) || fail "$other of the loader's opens left out"
unmount_dsfs "$MNT"

say "the loader, and a walk of the whole tree beside it"
train 1
((other >= 100)) || fail "only $other of the walk's opens left out"
log_has "$MNT" "(python3) reads the data set out of the plan's order" ||
	fail "no line names the walk"
"$DSFS_STATS" "$MNT" | grep -E "^ *other readers +$other opens left out" >/dev/null ||
	fail "dsfs-stats does not show the opens left out: $("$DSFS_STATS" "$MNT" | grep -i other)"
unmount_dsfs "$MNT"

say "the walk alone: no process follows the plan, nothing is left out"
mount_dsfs "$SRC" "$MNT" -o "cache_size=32M,$PLAN"
sync
echo 3 >/proc/sys/vm/drop_caches
"$READCHECK" tree "$SRC" "$MNT" >"$WORK/walk.out" || fail "the walk read wrong bytes: $(tail -3 "$WORK/walk.out")"
acc=$(stat_of plan.accesses) other=$(stat_of plan.other_opens)
say "$acc accesses, $other left out, $(stat_of plan.detected)"
((other == 0)) || fail "$other opens left out with no loader"
((acc >= 1000)) || fail "only $acc of the walk's opens reached the plan"
unmount_dsfs "$MNT"
say "ok"
