#!/bin/bash
# t-fresh: files replaced, rewritten, truncated, appended or deleted on the volume while cached are never served stale; files and directories renamed while the kernel holds them are found under their new names, and a hard link's other name once the one the kernel reached it by is removed; a file held open never reads the bytes of a later file given its inode number; a filesystem mounted below SOURCE gets inode numbers of its own and a warning; cached files read again open no backing file for their short last reads.
set -euo pipefail
. "$srcdir/lib.sh"
require_root

make_volume 512
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT"
for f in replaced rewritten truncated appended deleted; do
	"$MKTREE" --file "$SRC/$f" 300000 "${#f}"
done
"$MKTREE" --file "$WORK/new" 250000 99

mount_dsfs "$SRC" "$MNT" -o cache_size=64M
# Cache everything, in dsfs and in the kernel.
"$READCHECK" tree "$SRC" "$MNT" >/dev/null || fail "initial tree differs"

# until_ok SECS CMD...: poll CMD until it succeeds; fail after SECS.
until_ok() {
	local deadline=$((SECONDS + $1))

	shift
	until "$@" 2>/dev/null; do
		((SECONDS < deadline)) || return 1
		sleep 0.1
	done
}

same() {
	cmp -s "$1" "$2"
}

say "rename over a cached file"
cp "$WORK/new" "$SRC/.tmp"
mv "$SRC/.tmp" "$SRC/replaced"
until_ok 5 same "$SRC/replaced" "$MNT/replaced" || fail "replaced: stale after 5 s"

say "rewrite in place"
dd if="$WORK/new" of="$SRC/rewritten" bs=4096 count=20 conv=notrunc status=none
until_ok 5 same "$SRC/rewritten" "$MNT/rewritten" || fail "rewritten: stale after 5 s"

say "truncate and append"
truncate -s 1000 "$SRC/truncated"
cat "$WORK/new" >>"$SRC/appended"
until_ok 5 same "$SRC/truncated" "$MNT/truncated" || fail "truncated: stale after 5 s"
until_ok 5 same "$SRC/appended" "$MNT/appended" || fail "appended: stale after 5 s"

say "delete"
rm "$SRC/deleted"
gone() { ! stat "$MNT/deleted" >/dev/null 2>&1; }
until_ok 5 gone || fail "deleted: still visible after 5 s"
cat "$MNT/deleted" 2>"$WORK/err" && fail "deleted file still readable"
grep -q "No such file" "$WORK/err" || fail "deleted file: $(cat "$WORK/err")"

say "a new file appears"
cp "$WORK/new" "$SRC/created"
until_ok 5 same "$SRC/created" "$MNT/created" || fail "created: not visible after 5 s"

# Renamed while the kernel holds the inode (an open fd, a cwd inside): the
# next lookup finds the same inode under the new name, which must then be
# the one dsfs opens.  Likewise a hard link whose first name is removed.
say "renamed while held: a file, a directory; a hard link's first name removed"
mkdir -p "$SRC/dx/sub"
"$MKTREE" --file "$SRC/ra" 200000 5
"$MKTREE" --file "$SRC/dx/sub/f" 200000 6
"$MKTREE" --file "$SRC/ha" 200000 7
ln "$SRC/ha" "$SRC/hb"
exec 5<"$MNT/ra" 6<"$MNT/dx/sub/f" 7<"$MNT/ha"
echo 3 >/proc/sys/vm/drop_caches # the data, not the held inodes
mv "$SRC/ra" "$SRC/rb"
mv "$SRC/dx" "$SRC/dy"
rm "$SRC/ha"
until_ok 5 same "$SRC/rb" "$MNT/rb" || fail "a file renamed while open: $(cat "$MNT/rb" 2>&1 >/dev/null)"
until_ok 5 same "$SRC/dy/sub/f" "$MNT/dy/sub/f" || fail "a file in a directory renamed while held: $(cat "$MNT/dy/sub/f" 2>&1 >/dev/null)"
[[ $(ls "$MNT/dy/sub") == f ]] || fail "a directory renamed while held lists '$(ls "$MNT/dy/sub" 2>&1)'"
until_ok 5 same "$SRC/hb" "$MNT/hb" || fail "a hard link whose first name went: $(cat "$MNT/hb" 2>&1 >/dev/null)"
exec 5<&- 6<&- 7<&-

# Both names of a hard link looked up, the latest (the inode's front name)
# then removed: the kernel's dentry of the other name leads to the same
# inode, which must now be reached by that name.
say "a hard link's two names looked up, the latest removed"
"$MKTREE" --file "$SRC/hc" 200000 10
ln "$SRC/hc" "$SRC/hd"
cat "$MNT/hd" "$MNT/hc" >/dev/null
rm "$SRC/hc"
until_ok 5 same "$SRC/hd" "$MNT/hd" ||
	fail "a hard link whose other name, looked up last, went: $(cat "$MNT/hd" 2>&1 >/dev/null)"

# The same, but nobody looks the new names up: the held file and the
# working directory must be reached through the descriptor and "." alone.
say "renamed while held, new names never looked up: an open file, a cwd"
mkdir -p "$SRC/cw"
"$MKTREE" --file "$SRC/cw/f" 150000 8
"$MKTREE" --file "$SRC/rc" 180000 9
exec 5<"$MNT/rc"
( cd "$MNT/cw" && ls >/dev/null &&
  echo go >"$WORK/cw-ready" && until_ok 10 test -e "$WORK/cw-moved" &&
  until_ok 5 cmp -s f "$SRC/cz/f" && [[ $(ls) == f ]] ) & cwd_pid=$!
until_ok 10 test -e "$WORK/cw-ready" || fail "the cwd reader did not start"
echo 3 >/proc/sys/vm/drop_caches
mv "$SRC/rc" "$SRC/rd"
mv "$SRC/cw" "$SRC/cz"
touch "$WORK/cw-moved"
until_ok 5 cmp -s /dev/fd/5 "$SRC/rd" ||
	fail "an open file renamed, its new name not looked up: $(cmp /dev/fd/5 "$SRC/rd" 2>&1)"
wait "$cwd_pid" || fail "a working directory renamed, its new name not looked up"
exec 5<&-

# XFS gives a freed inode's number to a file created soon after.  A file
# held open through the mount, then replaced by a rename, must never read
# the bytes of the later file that got its number (renamed over a name the
# kernel knows): ESTALE, or its own bytes, and the later file its own.
say "an inode number reused while the old file is held open"
mkdir "$SRC/reuse"
"$PY" - "$SRC/reuse" "$MNT/reuse" >"$WORK/reuse.out" <<'PYEOF' || fail "inode number reuse: $(cat "$WORK/reuse.out")"
import os, sys, time
src, mnt = sys.argv[1:]
def write(path, byte, n=65536):
    with open(path, "wb") as f:
        f.write(bytes([byte]) * n)
reused = bad = 0
for t in range(100):
    write(src + "/a", 1 + t % 100)
    fd = os.open(mnt + "/a", os.O_RDONLY)
    want = os.pread(fd, 4096, 0)[0]
    old_ino = os.stat(src + "/a").st_ino
    write(src + "/.new", 200)
    os.rename(src + "/.new", src + "/a")
    # dsfs closes its descriptor of the old file once told, and XFS may
    # then give its number to the next file created.
    time.sleep(0.05)
    later = None
    for k in range(32):
        p = "%s/n%d" % (src, k)
        write(p, 150, 4096)
        if os.stat(p).st_ino == old_ino:
            later = p
            break
    if later:
        reused += 1
        write(later, 250)
        os.listdir(mnt)
        if os.path.exists(src + "/b"):
            os.stat(mnt + "/b")
        os.rename(later, src + "/b")
        time.sleep(0.05)  # the rename's event reaches dsfs
        try:
            got = os.pread(fd, 65536, 0)
            if got and set(got) != {want}:
                bad += 1
                print("held file read %s, not %d" % (set(got), want))
        except OSError:
            pass  # ESTALE: replaced
        with open(mnt + "/b", "rb") as f:
            if f.read() != bytes([250]) * 65536:
                bad += 1
                print("the later file read wrong")
    os.close(fd)
    for name in os.listdir(src):
        if name.startswith("n"):
            os.unlink(src + "/" + name)
    if reused >= 5:
        break
print("%d inode numbers reused, %d wrong reads" % (reused, bad))
sys.exit(bad > 0 or reused == 0)
PYEOF
cat "$WORK/reuse.out" >&2

"$READCHECK" tree "$SRC" "$MNT" || fail "final tree differs"

say "a filesystem mounted below SOURCE: its own inode numbers, and a warning"
mkdir "$SRC/nested"
mount -t tmpfs -o size=8M dsfs-nested "$SRC/nested"
track_mount "$SRC/nested"
"$MKTREE" --file "$SRC/nested/f" 100000 5
same "$SRC/nested/f" "$MNT/nested/f" || fail "a nested filesystem's file differs"
ino=$(stat -c %i "$MNT/nested/f")
# The top bit set: never one of SOURCE's numbers, which pass unchanged.
awk -v i="$ino" 'BEGIN { exit !(i + 0 >= 9223372036854775808) }' ||
	fail "nested file's inode number $ino: not renumbered"
[[ $(stat -c %i "$MNT/hb") == $(stat -c %i "$SRC/hb") ]] ||
	fail "a SOURCE file's inode number changed"
log_has "$MNT" "nested is on another filesystem" ||
	fail "no warning for the filesystem mounted below SOURCE"
unmount_dsfs "$MNT"
umount "$SRC/nested"

# Each file's last read ends short (at its end).  Before answering, dsfs
# makes sure the file has not grown unseen: a backing fd and an fstat,
# unless the watch has applied every change so far (no events waiting).
say "cached files read again: their short last reads open no backing file"
mkdir "$SRC/ends"
for i in $(seq 40); do
	"$MKTREE" --file "$SRC/ends/f$i" $((50000 + i * 777)) $((i + 200))
done
mount_dsfs "$SRC" "$MNT" -o cache_size=64M,max_open=1
read_ends() {
	local i

	for i in $(seq 40); do
		cmp "$SRC/ends/f$i" "$MNT/ends/f$i" || fail "ends/f$i differs"
	done
}
read_ends
read_ends
echo 1 >/proc/sys/vm/drop_caches # the kernel's pages; dsfs's cache stays
opens=$(stat_of fd_pool_misses)
bytes=$(stat_of backing_read_bytes)
read_ends
(($(stat_of backing_read_bytes) == bytes)) ||
	fail "the files were not all cached: $(($(stat_of backing_read_bytes) - bytes)) bytes read again"
opens=$(($(stat_of fd_pool_misses) - opens))
((opens == 0)) || fail "$opens backing files opened to read 40 cached files"
say "and one of them appended to: read to its new end"
cat "$WORK/new" >>"$SRC/ends/f1"
until_ok 5 same "$SRC/ends/f1" "$MNT/ends/f1" || fail "ends/f1: stale after 5 s"
unmount_dsfs "$MNT"
