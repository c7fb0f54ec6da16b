#!/bin/bash
# t-faults: under busy readers and the plan's prefetch, a volume shut down mid-epoch, a daemon killed with SIGKILL or stopped with SIGTERM, and two mounts of one source never give a wrong byte or a hung read; the daemon survives the volume's failure and everything unmounts and mounts again.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_cmd xfs_io getfattr sha256sum
[[ -x $PY ]] || skip "Debian's /usr/bin/python3 is needed"

make_volume 1024
SRC="$VOL/src"
MNT="$WORK/mnt"
MNT2="$WORK/mnt2"
mkdir "$SRC" "$MNT" "$MNT2"
"$MKTREE" "$SRC/train" 1200 12 60000 41
PLAN="sampler=python-shuffle,seed=3,layout=sorted,dataset=train"
OPTS="cache_size=24M,hugepages=off,$PLAN"
(cd "$SRC" && find train -type f -print0 | xargs -0 sha256sum |
	while read -r sum path; do
		echo "$sum $(stat -c %s "$path") $path"
	done) >"$WORK/manifest"
"$DSFS" --print-plan "$SRC" -o "$PLAN,epoch=0" | sed 's|^|train/|' >"$WORK/order"
sync # the shutdown below must not take the tree with it

# readers MNT THREADS SECONDS: faultread in the background (pid in RPID),
# checking every byte it reads against the manifest.
readers() {
	rm -f "$WORK/stop"
	"$PY" "$srcdir/faultread.py" "$WORK/manifest" "$1" "$2" "$3" \
		--stop-file "$WORK/stop" >"$WORK/readers.out" 2>&1 &
	RPID=$!
}

# readers_done: stop them; fail on a wrong byte or a read that hung.
readers_done() {
	touch "$WORK/stop"
	wait_gone "$RPID" 60 || fail "readers still running 60 s after stop"
	wait "$RPID" || fail "readers saw wrong data: $(cat "$WORK/readers.out")"
	say "readers: $(tail -1 "$WORK/readers.out")"
}

say "the volume shuts down under 8 readers and the plan's prefetch"
mount_dsfs "$SRC" "$MNT" -o "$OPTS"
pid=${DSFS_PID[$(realpath "$MNT")]}
readers "$MNT" 8 120
# A loader in plan order keeps the prefetcher busy until the failure.
"$PY" - "$MNT" "$WORK/order" >/dev/null 2>&1 <<'PYEOF' &
import sys
root, order = sys.argv[1], sys.argv[2]
for p in open(order):
    try:
        open(root + "/" + p.rstrip("\n"), "rb").read()
    except OSError:
        pass
PYEOF
loader=$!
sleep 2
xfs_io -x -c "shutdown" "$VOL"
sleep 3
readers_done
wait_gone "$loader" 60 || fail "the plan-order loader hung after the shutdown"
pid_alive "$pid" || fail "the daemon died with the volume"
# Every file once more, with the page cache dropped (names and attributes
# kept, so the reads reach dsfs): what dsfs has not cached must fail
# (promptly), what it has must be right.
echo 1 >/proc/sys/vm/drop_caches
failed=0
while read -r sum size path; do
	if timeout 20 cat "$MNT/$path" >"$WORK/one" 2>/dev/null; then
		[[ $(sha256sum <"$WORK/one") == "$sum  -" ]] || fail "$path: wrong bytes after the shutdown"
	else
		(($? != 124)) || fail "$path: read hung after the shutdown"
		failed=$((failed + 1))
	fi
done <"$WORK/manifest"
say "after the shutdown: $failed of $(wc -l <"$WORK/manifest") files failed, the rest read right"
((failed > 0)) || fail "every file read after the shutdown (the cache is smaller than the data)"
errors=$(stat_of errors) ioerr=$(stat_of io.errors)
say "daemon up; $errors read errors, $ioerr backing read errors counted"
((errors > 0)) || fail "no read error counted after the shutdown"
unmount_dsfs "$MNT"
umount "$VOL"
mount "$LOOP" "$VOL" || fail "mount $LOOP again after the shutdown"

say "SIGKILL: the mount answers ENOTCONN, unmounts, and mounts again"
mount_dsfs "$SRC" "$MNT" -o "$OPTS"
mnt=$(realpath "$MNT")
pid=${DSFS_PID[$mnt]}
readers "$MNT" 4 60
sleep 1
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
unset "DSFS_PID[$mnt]" "DSFS_LOG[$mnt]"
readers_done
err=$(stat "$MNT/train" 2>&1 >/dev/null || true)
[[ $err == *"Transport endpoint is not connected"* ]] || fail "after SIGKILL: $err"
umount "$MNT" || fail "umount after SIGKILL"
forget_mount "$mnt"
mount_dsfs "$SRC" "$MNT" -o "$OPTS"
"$READCHECK" tree "$SRC" "$MNT" >/dev/null || fail "tree differs after a remount"

say "SIGTERM while 16 readers are busy"
readers "$MNT" 16 60
sleep 2
kill_dsfs TERM "$MNT"
readers_done

say "two mounts of one source side by side, read at the same time"
mount_dsfs "$SRC" "$MNT" -o "$OPTS"
mount_dsfs "$SRC" "$MNT2" -o "cache_size=16M,hugepages=off"
"$READCHECK" tree "$SRC" "$MNT" >"$WORK/rc1" &
rc1=$!
"$READCHECK" tree "$SRC" "$MNT2" >"$WORK/rc2" || fail "second mount: $(head "$WORK/rc2")"
wait "$rc1" || fail "first mount: $(head "$WORK/rc1")"
unmount_dsfs "$MNT2"
unmount_dsfs "$MNT"
