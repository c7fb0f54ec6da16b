#!/bin/bash
# t-mount: mount(8) and fstab integration (README.md's fstab line; always nosuid,nodev), fusermount3 -u, clean exit on SIGTERM/SIGINT, daemon mode (Ctrl-C while it starts leaves nothing mounted, even as the mount appears or before the command has its handlers; exit 0 only with the mount in place), the "mounted" log line, -d tracing.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_cmd unshare fusermount3 strace
[[ -x /sbin/mount.fuse3 || -x /usr/sbin/mount.fuse3 ]] || skip "mount.fuse3 not installed"
reexec_in_mount_ns "$@"

# What mount(8) runs helpers with: dsfs must come from /usr/local/sbin,
# where this namespace sees the build's daemon, and nowhere else.
SYS_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

make_volume 300
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$MNT" "$WORK/sbin"
"$MKTREE" "$SRC" 300 5 5000 7

ln -s "$(realpath "$DSFS")" "$WORK/sbin/dsfs"
mount --bind "$WORK/sbin" /usr/local/sbin
track_mount /usr/local/sbin
# The fstab line of README.md's deployment guide, with this test's paths,
# a small cache and no huge pages (t-cache.sh owns the pool); its plan
# wants an ImageFolder in SOURCE/train.
make_imagefolder "$SRC/train" 3 20 8 >/dev/null
line=$(awk '/tests\/t-mount.sh mounts the line below/ { f = 1; next }
	    f && / fuse\.dsfs / { print; exit }' "$srcdir/../README.md")
read -r _ _ type opts rest <<<"$line"
[[ $type == fuse.dsfs && -n $opts ]] || fail "no fstab line found in README.md: '$line'"
opts=${opts/cache_size=400G/cache_size=64M}
opts=${opts/hugepages=require/hugepages=off}
echo "$SRC $MNT $type $opts,noauto $rest" >"$WORK/fstab"
mount --bind "$WORK/fstab" /etc/fstab
track_mount /etc/fstab

# check_mounted: /proc/mounts has MNT as fuse.dsfs from SRC, read-only,
# and the data read through it is right.
check_mounted() {
	local line

	line=$(awk -v m="$MNT" '$2 == m' /proc/mounts)
	say "checking /proc/mounts: $line"
	[[ -n $line ]] || fail "$MNT not in /proc/mounts"
	read -r dev _ type opts _ <<<"$line"
	[[ $type == fuse.dsfs ]] || fail "type is $type, not fuse.dsfs"
	[[ $dev == "$SRC" ]] || fail "source is $dev, not $SRC"
	[[ ,$opts, == *,ro,* ]] || fail "not mounted ro: $opts"
	# mount.fuse3 passes root's default dev,suid: dsfs must override them
	[[ ,$opts, == *,nosuid,* && ,$opts, == *,nodev,* ]] ||
		fail "not mounted nosuid,nodev: $opts"
	"$READCHECK" tree "$SRC" "$MNT" || fail "readcheck tree"
}

# after_unmount: the daemon found by find_daemon exits and MNT is gone.
after_unmount() {
	reap "$MNT" || fail "the daemon for $MNT did not exit"
	forget_mount "$MNT"
	! is_mounted "$MNT" || fail "$MNT still mounted"
}

say "checking mount -t fuse.dsfs (mount.fuse3 runs dsfs from PATH)"
env PATH="$SYS_PATH" mount -t fuse.dsfs "$SRC" "$MNT" -o allow_other ||
	fail "mount -t fuse.dsfs"
track_mount "$MNT"
find_daemon "$MNT"
check_mounted
say "checking umount"
umount "$MNT" || fail "umount $MNT"
after_unmount

say "checking README.md's /etc/fstab entry with mount MNT: $(cat "$WORK/fstab")"
env PATH="$SYS_PATH" mount "$MNT" || fail "mount $MNT (from fstab)"
track_mount "$MNT"
find_daemon "$MNT"
check_mounted
[[ $(stat_of plan.sampler) == '"torch-random"' ]] || fail "the fstab line's plan is not in force: $(stat_of plan.sampler)"
say "checking fusermount3 -u"
fusermount3 -u "$MNT" || fail "fusermount3 -u $MNT"
after_unmount

for sig in TERM INT; do
	say "checking that SIG$sig unmounts cleanly"
	mount_dsfs "$SRC" "$MNT"
	cmp "$MNT/d00000/f0000000" "$SRC/d00000/f0000000" || fail "read before SIG$sig"
	kill_dsfs "$sig" "$MNT"
done

say "checking that -f logs a \"mounted\" line to stderr"
mount_dsfs "$SRC" "$MNT"
log=${DSFS_LOG[$MNT]}
# The mount appears before the daemon logs it: allow it a moment.
for ((i = 0; i < 100; i++)); do
	grep -q "mounted" "$log" && break
	sleep 0.05
done
grep -q "mounted" "$log" || fail "no 'mounted' line in the -f log: $(cat "$log")"
unmount_dsfs "$MNT"

say "checking that -d traces each read with its path"
mount_dsfs "$SRC" "$MNT" -d
cat "$MNT/d00001/f0000001" >/dev/null
log_has "$MNT" "read d00001/f0000001 [0, +" || fail "no trace of the read"
unmount_dsfs "$MNT"

say "checking that daemon mode returns only once the mount is in place"
"$DSFS" "$SRC" "$MNT" -o allow_other 2>"$WORK/daemon.err" ||
	fail "dsfs (daemon mode) exited $?: $(cat "$WORK/daemon.err")"
track_mount "$MNT"
is_mounted "$MNT" fuse.dsfs || fail "dsfs returned before $MNT was mounted"
find_daemon "$MNT"
cmp "$MNT/d00004/f0000004" "$SRC/d00004/f0000004" || fail "read in daemon mode"
[[ ! -s $WORK/daemon.err ]] || fail "daemon mode wrote to stderr: $(cat "$WORK/daemon.err")"
umount "$MNT" || fail "umount $MNT"
after_unmount

# Ctrl-C on the command while the daemon starts: the daemon, which has left
# the terminal's session, stops too, and nothing stays mounted.  A cache in
# huge pages (registering them with io_uring takes a while) widens the
# start; the interrupt comes at several delays, and one that comes after
# the command returned 0 leaves a mount, which is unmounted.
# daemon_ended OPTS: wait up to 10 s for the daemon started on $SRC $MNT
# with "-o OPTS..." to exit; 1 if it still runs.
daemon_ended() {
	local i

	for ((i = 0; i < 500; i++)); do
		pgrep -f -- "$SRC $MNT -o $1" >/dev/null || return 0
		sleep 0.02
	done
	return 1
}

say "checking that an interrupted start leaves nothing mounted"
HP=/proc/sys/vm/nr_hugepages
old_hp=$(cat "$HP")
at_exit "echo $old_hp >$HP"
sync; echo 3 >/proc/sys/vm/drop_caches
echo 1 >/proc/sys/vm/compact_memory 2>/dev/null || true
echo $((old_hp + 520)) >"$HP" || true
pages=hugepages=off
if (($(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo) >= 520)); then
	pages=hugepages=require
fi
stopped=0
for d in 0 0.005 0.01 0.02 0.05 0.1 0.2 0.3 0.5 0.8; do
	rc=0
	"$PY" - "$d" "$DSFS" "$SRC" "$MNT" "cache_size=1000M,$pages" <<'PYEOF' || rc=$?
import os, signal, sys, time
delay, dsfs, src, mnt, opts = float(sys.argv[1]), *sys.argv[2:]
pid = os.fork()
if pid == 0:  # the command, as a shell in the foreground starts it
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.setsid()
    os.execv(dsfs, [dsfs, src, mnt, "-o", opts])
while os.getpgid(pid) != pid:  # until it leads its own group
    time.sleep(0.0005)
time.sleep(delay)
os.killpg(pid, signal.SIGINT)
sys.exit(0 if os.waitpid(pid, 0)[1] == 0 else 1)
PYEOF
	if ((rc == 0)); then # too late: it was mounted and served
		track_mount "$MNT"
		umount "$MNT" || fail "umount $MNT"
		forget_mount "$MNT"
	else
		stopped=$((stopped + 1))
	fi
	if ! daemon_ended cache_size=1000M; then
		pkill -f -- "$SRC $MNT -o cache_size=1000M" # unmounts it
		fail "interrupted after $d s: the daemon is still running"
	fi
	! is_mounted "$MNT" || fail "interrupted after $d s: $MNT is mounted"
done
say "$stopped of 10 starts interrupted ($pages), nothing left mounted"

# The narrowest windows: Ctrl-C the moment the mount appears (the command
# waits on the kernel's INIT), or the moment it first answers (the command
# is about to exit).  The exit status must tell what is left once it
# returns: 0 with the mount in place, else nothing mounted, and a stopped
# start must be reported as such.
say "checking Ctrl-C as the mount appears and as it first answers"
kept=0
for ((n = 0; n < 12; n++)); do
	rc=0
	"$PY" - "$DSFS" "$SRC" "$MNT" "cache_size=64M,hugepages=off" $((n % 2)) \
		<<'PYEOF' 2>"$WORK/start.err" || rc=$?
import os, signal, sys, time
dsfs, src, mnt, opts, answered = sys.argv[1:]
pid = os.fork()
if pid == 0:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.setsid()
    os.execv(dsfs, [dsfs, src, mnt, "-o", opts])
def mounted():
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == mnt for line in f)
deadline = time.monotonic() + 60
while not mounted() and time.monotonic() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        # Between the two looks the mount may have appeared and the
        # command finished (a start too quick to interrupt: exit 0).
        sys.exit(0 if status == 0 and mounted() else 3)
if answered == "1":
    try:
        os.stat(mnt)  # waits for INIT
    except OSError:
        pass
os.killpg(pid, signal.SIGINT)
sys.exit(0 if os.waitpid(pid, 0)[1] == 0 else 1)
PYEOF
	((rc != 3)) || fail "the command ended before $MNT appeared: $(cat "$WORK/start.err")"
	if ((rc == 0)); then
		is_mounted "$MNT" || fail "the command exited 0 after Ctrl-C, and $MNT is not mounted"
		kept=$((kept + 1))
		umount "$MNT" || fail "umount $MNT"
	else
		! is_mounted "$MNT" || fail "the command exited $rc after Ctrl-C, and $MNT is still mounted"
		grep -q "stopped while starting; nothing is mounted" "$WORK/start.err" ||
			fail "a start stopped by Ctrl-C said: $(cat "$WORK/start.err")"
	fi
	daemon_ended cache_size=64M ||
		fail "the daemon runs on after its command was stopped and $MNT unmounted"
done
say "$kept of 12 left mounted (exit 0), the others stopped (nothing mounted)"

# The widest window, held open: strace keeps the command in its fork's
# return for 3 s, so the daemon mounts and leaves the terminal's session
# before the command has its handlers.  A Ctrl-C then must still stop the
# daemon (a busy machine made this window real: the command died of the
# signal, and the daemon served on with nobody told).
say "checking Ctrl-C before the command has its handlers (strace holds its fork)"
strace -o /dev/null -e trace=clone,clone3 -e inject=clone,clone3:delay_exit=3000000 \
	"$DSFS" "$SRC" "$MNT" -o cache_size=64M,hugepages=off 2>"$WORK/start.err" &
tracer=$!
deadline=$((SECONDS + 20))
until is_mounted "$MNT"; do
	pid_alive "$tracer" || fail "the command ended before $MNT appeared: $(cat "$WORK/start.err")"
	((SECONDS < deadline)) || fail "$MNT did not appear"
	sleep 0.01
done
cmd=$(pgrep -P "$tracer") || fail "no command under strace"
caught=$(awk '$1 == "SigCgt:" { print $2 }' "/proc/$cmd/status")
(((16#$caught & 2) == 0)) ||
	fail "the command had its SIGINT handler before strace let its fork return: the window was not held"
kill -INT "$cmd"
rc=0
wait "$tracer" || rc=$?
! is_mounted "$MNT" || fail "Ctrl-C before the command's handlers (exit $rc): $MNT is still mounted"
((rc != 0)) || fail "Ctrl-C before the command's handlers: exit 0 with nothing mounted"
grep -q "stopped while starting; nothing is mounted" "$WORK/start.err" ||
	fail "a start stopped before the command's handlers said: $(cat "$WORK/start.err")"
daemon_ended cache_size=64M ||
	fail "the daemon runs on after its command was stopped before its handlers"
say "ok"
