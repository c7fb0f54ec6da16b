#!/bin/bash
# t-read: everything readable through the mount equals the backing tree (data, metadata, names, links, xattrs, inode numbers, a sparse file's holes, files mapped privately and shared, random preads with and without O_DIRECT), also with -o direct_io.
# shellcheck disable=SC2012 # the output of ls is what is compared
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_cmd getfattr setfattr setfacl

make_volume 512
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT"

say "building the source tree"
mkdir "$SRC/sizes"
seed=1
for size in 0 1 4095 4096 4097 131071 131072 131073 67108864; do
	"$MKTREE" --file "$SRC/sizes/f$size" "$size" $((seed++))
done
deep="$SRC/deep"
for i in $(seq -w 1 14); do
	deep="$deep/level$i"
done
mkdir -p "$deep"
"$MKTREE" --file "$deep/leaf" 5000 20
mkdir "$SRC/names"
for name in "with space" "café" "日本語" ".hidden" "..dots" "a,comma" "-dash"; do
	"$MKTREE" --file "$SRC/names/$name" 100 $((seed++))
done
mkdir "$SRC/names/.hidden-dir" "$SRC/names/dir with space"
: >"$SRC/names/dir with space/empty"
mkdir "$SRC/links"
ln -s ../sizes/f4096 "$SRC/links/relative"
ln -s "$SRC/sizes/f1" "$SRC/links/absolute"
ln -s does-not-exist "$SRC/links/dangling"
ln -s /etc/hostname "$SRC/links/outside"
ln -s ../deep "$SRC/links/to-dir"
ln "$SRC/sizes/f4097" "$SRC/links/hard"
mkdir "$SRC/private" "$SRC/private/closed"
"$MKTREE" --file "$SRC/private/secret" 3000 40
"$MKTREE" --file "$SRC/private/closed/inner" 3000 41
chmod 0600 "$SRC/private/secret"
chmod 0700 "$SRC/private/closed"
"$MKTREE" --file "$SRC/xattr-file" 1234 50
setfattr -n user.dsfs -v hello "$SRC/xattr-file"
setfattr -n user.empty "$SRC/xattr-file"
setfacl -m u:daemon:r "$SRC/xattr-file"

mount_dsfs "$SRC" "$MNT"

say "checking every entry with readcheck tree"
"$READCHECK" tree "$SRC" "$MNT" || fail "readcheck tree"

say "checking 16 threads of random preads"
"$READCHECK" random "$SRC" "$MNT" 16 2000 || fail "readcheck random"

say "checking mmap of every file"
"$READCHECK" mmap "$SRC" "$MNT" || fail "readcheck mmap"

say "checking stat of the mount root"
fmt='%F %a %U %G %h %i %s %Y'
[[ $(stat -c "$fmt" "$MNT") == "$(stat -c "$fmt" "$SRC")" ]] ||
	fail "stat root: '$(stat -c "$fmt" "$MNT")' != '$(stat -c "$fmt" "$SRC")'"

say "checking ls -la of several directories"
for dir in sizes names links private "names/dir with space" "${deep#"$SRC"/}"; do
	a=$(ls -la --time-style=full-iso "$SRC/$dir" | tail -n +2)
	b=$(ls -la --time-style=full-iso "$MNT/$dir" | tail -n +2)
	if [[ $a != "$b" ]]; then
		diff <(echo "$a") <(echo "$b") || true
		fail "ls -la $dir differs"
	fi
done

say "checking inode numbers, before and after dropping caches"
paths=(. sizes sizes/f0 sizes/f67108864 links/hard links/outside "names/日本語" private/closed "${deep#"$SRC"/}/leaf")
inodes() {
	local p

	for p in "${paths[@]}"; do
		stat -c %i "$1/$p"
	done
}
want=$(inodes "$SRC")
got=$(inodes "$MNT")
[[ $got == "$want" ]] || fail "inode numbers differ from the backing ones: $got vs $want"
[[ $(stat -c %i "$MNT/links/hard") == $(stat -c %i "$MNT/sizes/f4097") ]] ||
	fail "hard links have different inode numbers"
sync
echo 3 >/proc/sys/vm/drop_caches
again=$(inodes "$MNT")
[[ $again == "$got" ]] || fail "inode numbers changed after drop_caches"

say "checking xattrs (getfattr -d -m -)"
a=$(cd "$SRC" && getfattr -d -m - xattr-file)
b=$(cd "$MNT" && getfattr -d -m - xattr-file)
[[ $a == *user.dsfs=\"hello\"* ]] || fail "backing xattr not set: $a"
[[ $a == "$b" ]] || fail "getfattr differs: '$a' vs '$b'"

say "checking that a link out of SOURCE resolves in the reader's namespace"
[[ $(readlink "$MNT/links/outside") == /etc/hostname ]] || fail "readlink outside"
if [[ -r /etc/hostname ]]; then
	cmp "$MNT/links/outside" /etc/hostname || fail "reading links/outside"
fi

say "checking SEEK_DATA and SEEK_HOLE on a sparse file"
"$PY" - "$SRC/sparse" "$MNT/sparse" <<'PYEOF' || fail "SEEK_DATA/SEEK_HOLE differ from the backing file"
import os, sys
src, mnt = sys.argv[1:]
fd = os.open(src, os.O_WRONLY | os.O_CREAT, 0o644)
os.pwrite(fd, b"a" * 8192, 1 << 20)
os.pwrite(fd, b"b" * 4096, 8 << 20)
os.ftruncate(fd, 12 << 20)
os.close(fd)
def walk(path):
    fd, out = os.open(path, os.O_RDONLY), []
    for off in range(0, 13 << 20, 1 << 18):
        for whence in (os.SEEK_DATA, os.SEEK_HOLE):
            try:
                out.append(os.lseek(fd, off, whence))
            except OSError as e:
                out.append(-e.errno)
    os.close(fd)
    return out
want, got = walk(src), walk(mnt)
print(want[:6], got[:6])
sys.exit(0 if want == got and want[0] == 1 << 20 else 1)
PYEOF
cmp "$SRC/sparse" "$MNT/sparse" || fail "sparse file differs"

unmount_dsfs "$MNT"

# No kernel caching of names or attributes and a one-fd pool: every access
# reaches the daemon, and concurrent reads overflow the pool.
say "checking again with entry_timeout=0,attr_timeout=0,max_open=1,max_threads=2"
mount_dsfs "$SRC" "$MNT" -o entry_timeout=0,attr_timeout=0,max_open=1,max_threads=2
"$READCHECK" tree "$SRC" "$MNT" || fail "readcheck tree (no caching)"
"$READCHECK" random "$SRC" "$MNT" 16 500 || fail "readcheck random (no caching)"
unmount_dsfs "$MNT"

# -o direct_io: no page cache for reads, yet a shared mapping works (the
# kernel allows it since Linux 6.6 when INIT's reply asks, see devio.c).
say "checking again with direct_io, mmap shared and private"
mount_dsfs "$SRC" "$MNT" -o direct_io
"$READCHECK" tree "$SRC" "$MNT" || fail "readcheck tree (direct_io)"
"$READCHECK" mmap "$SRC" "$MNT" || fail "readcheck mmap (direct_io)"
unmount_dsfs "$MNT"
say "ok"
