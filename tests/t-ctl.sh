#!/bin/bash
# t-ctl: the plan control channel: a new seed is followed and prefetched, a mount without a plan gets one and drops it, malformed commands and other users are refused with the plan unchanged, loaders that shuffle with numpy default_rng or random.shuffle are followed, and the channel is in no listing.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_cmd getfattr setfattr useradd userdel runuser

[[ -x /usr/bin/python3 ]] || skip "Debian's /usr/bin/python3 is needed"
STATS="$(cd "$top_builddir/tools" && pwd)/dsfs-stats"
[[ -x $STATS ]] || fail "dsfs-stats not built: $STATS"
make_volume 1024
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT"
"$MKTREE" "$SRC/train" 800 8 100000 21
LISTING="layout=sorted,dataset=train"

# Another user, for the permission checks; removed at exit.
OTHER="dsfsctl$$"
at_exit "userdel $OTHER 2>/dev/null"
useradd --no-create-home --shell /usr/sbin/nologin "$OTHER" || fail "useradd $OTHER"

# ctl CMD: send CMD as getfattr does (size first, then the value).
ctl() {
	getfattr --absolute-names --only-values -n "user.dsfs.plan=$1" "$MNT"
}

# read_epoch PLAN E: read every file of epoch E of PLAN in its order, as a
# loader does (read_in_order).  Prints "read_bytes hit_bytes" of the epoch.
read_epoch() {
	local r0 h0

	"$DSFS" --print-plan "$SRC" -o "$1,epoch=$2" >"$WORK/order"
	r0=$(stat_of read_bytes) h0=$(stat_of hit_bytes)
	read_in_order "$MNT/train" "$WORK/order"
	echo "$(($(stat_of read_bytes) - r0)) $(($(stat_of hit_bytes) - h0))"
}

# refused CMD ERROR WORD: CMD fails with ERROR (strerror text), the message
# kept for it names WORD, dsfs-stats --set says so too, and the plan stays.
refused() {
	local before msg

	before=$(stat_of plan.options)
	! ctl "$1" >/dev/null 2>"$WORK/err" || fail "command '$1' was accepted"
	grep -q "$2" "$WORK/err" || fail "command '$1': $(cat "$WORK/err"); expected $2"
	msg=$(getfattr --absolute-names --only-values -n user.dsfs.plan.error "$MNT")
	[[ $msg == *"$3"* ]] || fail "command '$1': message '$msg' does not name $3"
	! "$STATS" --set "$1" "$MNT" >/dev/null 2>"$WORK/err" || fail "dsfs-stats --set '$1' exited 0"
	grep -qF "$3" "$WORK/err" || fail "dsfs-stats --set '$1' said: $(cat "$WORK/err")"
	[[ $(stat_of plan.options) == "$before" ]] || fail "command '$1' changed the plan to $(stat_of plan.options)"
	say "refused '$1': $msg"
}

say "a new seed and epoch on a mounted plan are followed (32 MiB cache, ~80 MB of data)"
# dataset= spelt ./train/ names the same directory as train (LISTING).
mount_dsfs "$SRC" "$MNT" -o "allow_other,cache_size=32M,sampler=python-shuffle,seed=5,layout=sorted,dataset=./train/"
ctl "seed=7,epoch=1" >"$WORK/reply"
grep -qx 'plan.seed 7' "$WORK/reply" || fail "reply: $(cat "$WORK/reply")"
n=$(grep -c 'command "seed=7,epoch=1"' "${DSFS_LOG[$MNT]}" || true)
[[ $n == 1 ]] || fail "getfattr's two calls applied the command $n times"
[[ $(stat_of plan.seed) == 7 && $(stat_of plan.epoch) == 1 ]] ||
	fail "stats say seed $(stat_of plan.seed), epoch $(stat_of plan.epoch)"
read -r read hit < <(read_epoch "sampler=python-shuffle,seed=7,$LISTING" 1)
acc=$(stat_of plan.accesses) mis=$(stat_of plan.mispredictions)
say "read $read bytes, $hit hits; $acc accesses, $mis mispredictions; $(stat_of plan.detected)"
((read > 0 && hit * 100 >= read * 95)) || fail "hit_bytes $hit < 95% of read_bytes $read"
((mis * 100 <= acc)) || fail "mispredictions $mis > 1% of $acc accesses"

say "malformed commands and unchangeable options are refused"
refused "foo=1" "Invalid argument" "foo"
refused "seed=abc" "Invalid argument" "seed=abc"
refused "rank=1" "Invalid argument" "rank="
refused "sampler=torch-distributed,seed=1,rank=1" "Invalid argument" "world="
refused "layout=imagefolder" "Invalid argument" "layout=imagefolder: cannot change without remounting"
refused "dataset=x" "Invalid argument" "dataset=x: cannot change without remounting"
refused "extensions=.npy" "Invalid argument" "extensions=.npy: cannot change without remounting"
refused "suffix=.jpg" "Invalid argument" "suffix=.jpg: cannot change without remounting"
refused "hidden=skip" "Invalid argument" "hidden=skip: cannot change without remounting (the plan's files are listed once per mount, here with hidden=keep)"
refused "split=0.5:0.5,split_seed=1" "Invalid argument" "split=0.5:0.5: cannot change without remounting"
refused "cache_size=1G" "Invalid argument" "cache_size=1G: cannot change without remounting"
refused "seed" "Invalid argument" "seed needs a value"
refused "seed=1,epoch=2,seed=3" "Invalid argument" "seed given twice"
refused "seeded_once,epoch=1073741824" "Invalid argument" "epoch=1073741824: sampler=python-shuffle reaches epoch"
# A command is quoted in the log: its control bytes must not start a line
# of their own (one that could pass for the daemon's).
! ctl $'seed=1\ndsfs: forged\e[2J' >/dev/null 2>&1 || fail "a command with a newline was accepted"
log_has "$MNT" 'seed=1\x0adsfs: forged\x1b[2J' || fail "the refused command's control bytes are not escaped in the log"
! grep -q $'^dsfs: forged\|\e' "${DSFS_LOG[$MNT]}" || fail "a command's newline or escape reached the log"
before=$(stat_of plan.options)
"$STATS" --set "$LISTING" "$MNT" >/dev/null || fail "restating $LISTING was refused"
[[ $(stat_of plan.options) == "$before" ]] || fail "restating $LISTING changed the plan"

say "other users may not use the channel"
for name in "user.dsfs.plan=seed=9" user.dsfs.plan user.dsfs.plan.error; do
	! runuser -u "$OTHER" -- getfattr -n "$name" "$MNT" >/dev/null 2>"$WORK/err" ||
		fail "$OTHER read $name"
	grep -q "Operation not permitted" "$WORK/err" || fail "$OTHER got: $(cat "$WORK/err")"
done
! runuser -u "$OTHER" -- "$STATS" --set seed=9 "$MNT" 2>"$WORK/err" || fail "$OTHER's dsfs-stats --set exited 0"
grep -q "only root and the user who mounted" "$WORK/err" || fail "$OTHER's dsfs-stats --set said: $(cat "$WORK/err")"
[[ $(stat_of plan.seed) == 7 ]] || fail "$OTHER changed the seed to $(stat_of plan.seed)"

say "the channel is in no listing and the files read the same"
# SOURCE's own attributes under the channel's names cannot be read through
# the mount, so they are not listed either; others are.  trusted.* names
# are listed to root only, as the kernel does.
setfattr -n user.dsfs.stats -v backing "$SRC"
setfattr -n user.dsfs.plan.error -v backing "$SRC"
setfattr -n user.kept -v backing "$SRC"
setfattr -n trusted.t -v backing "$SRC/train"
getfattr --absolute-names -d -m - "$MNT" >"$WORK/xattrs"
! grep -q '^user\.dsfs' "$WORK/xattrs" || fail "listxattr shows: $(cat "$WORK/xattrs")"
grep -q '^user.kept="backing"' "$WORK/xattrs" || fail "listxattr lost user.kept: $(cat "$WORK/xattrs")"
getfattr --absolute-names -m - "$MNT/train" | grep -x trusted.t >/dev/null || fail "root does not see trusted.t"
! runuser -u "$OTHER" -- getfattr --absolute-names -m - "$MNT/train" | grep trusted >/dev/null ||
	fail "$OTHER sees trusted.t"
[[ $(ls -a "$MNT") == "$(ls -a "$SRC")" ]] || fail "ls -a differs: $(ls -a "$MNT")"
"$READCHECK" tree "$SRC" "$MNT" >/dev/null || fail "tree differs"

say "plans change while the files are being read"
(
	while [[ ! -e $WORK/stop ]]; do
		echo 3 >/proc/sys/vm/drop_caches
		"$READCHECK" tree "$SRC" "$MNT" >/dev/null || exit 1
	done
) 2>"$WORK/readerr" &
reader=$!
for i in $(seq 40); do
	case $((i % 4)) in
	0) cmd=sampler=none ;;
	1) cmd="sampler=python-shuffle,seed=$i" ;;
	2) cmd="seed=$i,epoch=$((i % 3))" ;;
	3) cmd="sampler=torch-random,seed=$i" ;;
	esac
	ctl "$cmd" >/dev/null || fail "command '$cmd' refused during reads"
done
touch "$WORK/stop"
wait "$reader" || fail "tree differs while the plan changed: $(cat "$WORK/readerr")"
[[ $(stat_of plan.options) == '"sampler=none"' ]] || fail "last plan: $(stat_of plan.options)"
unmount_dsfs "$MNT"

say "a mount without a plan gets one, then drops it"
mount_dsfs "$SRC" "$MNT" -o "cache_size=32M"
[[ $(stat_of plan.detected) == '"none"' ]] || fail "no plan, yet detected $(stat_of plan.detected)"
ctl "sampler=python-shuffle,seed=5,epoch=0,$LISTING" >/dev/null
[[ $(stat_of plan.sampler) == '"python-shuffle"' && $(stat_of plan.detected) != '"none"' ]] ||
	fail "plan not started: $(stat_of plan.sampler), $(stat_of plan.detected)"
read -r read hit < <(read_epoch "sampler=python-shuffle,seed=5,$LISTING" 0)
say "with the plan: read $read bytes, $hit hits, $(stat_of plan.prefetch_bytes) prefetched; $(stat_of plan.detected)"
((read > 0 && hit * 100 >= read * 95)) || fail "hit_bytes $hit < 95% of read_bytes $read"
"$STATS" --set sampler=none "$MNT" >/dev/null || fail "sampler=none refused"
[[ $(stat_of plan.sampler) == '"none"' && $(stat_of plan.detected) == '"none"' ]] ||
	fail "plan not dropped: $(stat_of plan.sampler), $(stat_of plan.detected)"
[[ -z $(stat_of plan.position) ]] || fail "a scheduler still reports a position"
read -r read hit < <(read_epoch "sampler=python-shuffle,seed=5,$LISTING" 1)
say "without it: read $read bytes, $hit hits"
((hit * 100 < read * 80)) || fail "hit_bytes $hit of $read bytes: still prefetched by the plan?"
refused "seed=6" "Invalid argument" "seed= needs a plan"
"$STATS" --set "sampler=numpy-permutation,seed=3" "$MNT" >/dev/null || fail "a plan after none was refused"
[[ $(stat_of plan.options) == '"sampler=numpy-permutation,seed=3,epoch=auto,'"$LISTING"'"' ]] ||
	fail "the listing was not kept: $(stat_of plan.options)"
"$READCHECK" tree "$SRC" "$MNT" >/dev/null || fail "tree differs"

# follow_script PLAN MODE [EPOCHS FROM]: with the plan switched to PLAN,
# EPOCHS (2) epochs read in the order the library itself draws (MODE:
# numpy, default_rng(9 + epoch).permutation; python, random.seed(13) once
# and random.shuffle of one list each epoch) are followed: from epoch FROM
# (0) on 90% of the bytes hit, and the plan ends at the last epoch.
follow_script() {
	local e r0 h0 read hit epochs=${3:-2} from=${4:-0}

	"$STATS" --set "$1" "$MNT" >/dev/null || fail "$1 refused"
	# The files in index order (the layout's), then each epoch's order
	# drawn by the library.
	"$DSFS" --print-plan "$SRC" -o "sampler=sequential,$LISTING" >"$WORK/files"
	/usr/bin/python3 - "$WORK/files" "$WORK/order" "$2" "$epochs" <<'PYEOF'
import random, sys, numpy
files = open(sys.argv[1]).read().splitlines()
if sys.argv[3] == "python":
    random.seed(13)
for e in range(int(sys.argv[4])):
    if sys.argv[3] == "python":
        random.shuffle(files)
        order = files
    else:
        p = numpy.random.default_rng(9 + e).permutation(len(files))
        order = [files[i] for i in p]
    with open("%s.%d" % (sys.argv[2], e), "w") as f:
        f.writelines(x + "\n" for x in order)
PYEOF
	for ((e = 0; e < epochs; e++)); do
		r0=$(stat_of read_bytes) h0=$(stat_of hit_bytes)
		read_in_order "$MNT/train" "$WORK/order.$e"
		read=$(($(stat_of read_bytes) - r0)) hit=$(($(stat_of hit_bytes) - h0))
		say "$1, epoch $e: read $read bytes, $hit hits; $(stat_of plan.mispredictions) mispredictions, $(stat_of plan.detected)"
		((e < from || (read > 0 && hit * 100 >= read * 90))) ||
			fail "$1, epoch $e: hit_bytes $hit < 90% of read_bytes $read"
	done
	[[ $(stat_of plan.epoch) == $((epochs - 1)) ]] ||
		fail "$1: plan at epoch $(stat_of plan.epoch), not $((epochs - 1))"
}

say "script shuffles: epochs read in the library's own order are followed"
follow_script "sampler=numpy-generator,seed=9,epoch=auto" numpy
follow_script "sampler=python-shuffle,seed=13,seeded_once,inplace,epoch=auto" python
say "the same script, the plan not told how it seeds and shuffles: found at epoch 1 and named"
follow_script "sampler=python-shuffle,seed=13,epoch=auto" python 3 2
log_has "$MNT" "mount with -o seeded_once,inplace" || fail "the way found was not logged"
unmount_dsfs "$MNT"
