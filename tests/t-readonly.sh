#!/bin/bash
# t-readonly: every kind of write through the mount fails with EROFS and the backing tree stays unchanged.
# shellcheck disable=SC2016 # "$1" in bash -c '...' is the inner shell's
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_cmd setfattr setfacl sha256sum

make_volume 300
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT" "$SRC/dir" "$SRC/empty-dir"
"$MKTREE" --file "$SRC/file" 10000 1
"$MKTREE" --file "$SRC/dir/inner" 5000 2
ln -s file "$SRC/link"
setfattr -n user.keep -v 1 "$SRC/file"

# Everything about the backing tree except access times.
snapshot() {
	(
		cd "$SRC"
		find . -printf '%p %y %m %U %G %s %T@ %C@ %n %i %l\n' | sort
		find . -type f -print0 | sort -z | xargs -0 sha256sum
		getfattr -R -d -m - . 2>/dev/null
	)
}
before=$(snapshot)

mount_dsfs "$SRC" "$MNT"

# expect_erofs DESC CMD...: CMD fails and says "Read-only file system".
expect_erofs() {
	local desc=$1 out rc=0
	shift

	say "checking EROFS: $desc"
	out=$("$@" 2>&1) || rc=$?
	((rc != 0)) || fail "$desc: succeeded through a read-only mount"
	[[ $out == *"Read-only file system"* ]] ||
		fail "$desc: wanted 'Read-only file system', got: $out"
}

M=$MNT
expect_erofs "write to a file" bash -c 'echo data >>"$1"' _ "$M/file"
expect_erofs "open read-write (exec 3<>)" bash -c 'exec 3<>"$1"' _ "$M/file"
expect_erofs "open for append (exec 3>>)" bash -c 'exec 3>>"$1"' _ "$M/file"
expect_erofs "O_TRUNC (: > file)" bash -c ': >"$1"' _ "$M/file"
expect_erofs "touch of a new file" touch "$M/new-file"
expect_erofs "create with cp" cp "$SRC/file" "$M/copy"
expect_erofs "mkdir" mkdir "$M/new-dir"
expect_erofs "rmdir" rmdir "$M/empty-dir"
expect_erofs "rm" rm -f "$M/file"
expect_erofs "rm of a symlink" rm -f "$M/link"
expect_erofs "mv (rename)" mv "$M/file" "$M/renamed"
expect_erofs "ln (hard link)" ln "$M/file" "$M/hard"
expect_erofs "ln -s" ln -s file "$M/symlink"
expect_erofs "mknod (fifo)" mkfifo "$M/fifo"
expect_erofs "chmod" chmod 0777 "$M/file"
expect_erofs "chown" chown 1:1 "$M/file"
expect_erofs "truncate" truncate -s 0 "$M/file"
expect_erofs "setfattr" setfattr -n user.new -v x "$M/file"
expect_erofs "setfattr -x" setfattr -x user.keep "$M/file"
expect_erofs "setfacl" setfacl -m u:daemon:r "$M/file"
expect_erofs "touch of an existing file (utimes)" touch "$M/file"
expect_erofs "touch -d (explicit times)" touch -d @0 "$M/dir/inner"

say "checking the backing tree is unchanged"
unmount_dsfs "$MNT"
after=$(snapshot)
if [[ $after != "$before" ]]; then
	diff <(echo "$before") <(echo "$after") || true
	fail "the backing tree changed"
fi
say "ok"
