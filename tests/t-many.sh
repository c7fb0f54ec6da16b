#!/bin/bash
# t-many: 100,000 files read through a daemon limited to 256 open files; all data matches and the fd count stays bounded.
set -euo pipefail
. "$srcdir/lib.sh"
require_root

NFILES=100000
NDIRS=100
NOFILE=256

make_volume 1024
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$MNT"
say "creating $NFILES files in $NDIRS directories"
"$MKTREE" "$SRC" "$NFILES" "$NDIRS" 2048 42 || fail "mktree"

DSFS_NOFILE=$NOFILE mount_dsfs "$SRC" "$MNT"
pid=${DSFS_PID[$(realpath "$MNT")]}
[[ $(awk '/^Max open files/ { print $4 }' "/proc/$pid/limits") == "$NOFILE" ]] ||
	fail "the daemon did not inherit ulimit -n $NOFILE"

say "checking all files with readcheck tree while sampling the daemon's fds"
"$READCHECK" tree "$SRC" "$MNT" >"$WORK/readcheck.out" 2>&1 &
rc_pid=$!
samples=0
max_fds=0
while pid_alive "$rc_pid"; do
	n=$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
	((n > max_fds)) && max_fds=$n
	((n <= NOFILE)) || fail "daemon has $n fds open, more than $NOFILE"
	samples=$((samples + 1))
	sleep 0.2
done
rc=0
wait "$rc_pid" || rc=$?
cat "$WORK/readcheck.out"
((rc == 0)) || fail "readcheck tree over $NFILES files"
grep -q "^tree: $NFILES files" "$WORK/readcheck.out" ||
	fail "readcheck did not see $NFILES files"
say "daemon fds: at most $max_fds over $samples samples (limit $NOFILE)"
((samples >= 1)) || fail "no fd sample taken"

unmount_dsfs "$MNT"
say "ok"
