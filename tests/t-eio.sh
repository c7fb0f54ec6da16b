#!/bin/bash
# t-eio: a backing store that fails mid-read gives the reader EIO (never zeros), is counted and logged with the file's path, and the daemon stays up and unmounts.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_cmd xfs_io getfattr

make_volume 512
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT"
"$MKTREE" "$SRC/data" 50 2 100000 9
mount_dsfs "$SRC" "$MNT" -o cache_size=64M
# Names and attributes known to the kernel before the failure (no
# drop_caches after this: it would make the kernel forget them), data not.
ls -R "$MNT" >/dev/null
mapfile -t files < <(cd "$MNT" && find data -type f -size +0)
((${#files[@]} > 40)) || fail "only ${#files[@]} files to read"
sync

say "shut the backing XFS down, then read uncached files"
xfs_io -x -c "shutdown" "$VOL"
for f in "${files[@]}"; do
	f="$MNT/$f"
	if timeout 20 cat "$f" >"$WORK/out" 2>"$WORK/err"; then
		fail "$f read fine after the shutdown"
	fi
	grep -q "Input/output error" "$WORK/err" || fail "$f: $(cat "$WORK/err")"
	[[ ! -s $WORK/out ]] || fail "$f: bytes returned after the shutdown"
done
errors=$(getfattr --absolute-names -n user.dsfs.stats --only-values "$MNT" | awk '$1 == "errors" { print $2 }')
((errors > 0)) || fail "errors not counted ($errors)"
say "$errors read errors counted"
log_has "$MNT" "read of $SRC/${files[0]} at offset 0 failed: Input/output error" ||
	fail "no log line naming the file that failed"
unmount_dsfs "$MNT"
umount "$VOL" && VOL=
