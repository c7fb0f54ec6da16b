#!/bin/bash
# t-listing: directory listings through the mount: a directory of thousands of long names (many READDIR requests) lists exactly the backing names, seekdir/telldir return to every position (from the kernel's cached listing and, once the page cache is dropped, from the offsets dsfs gave), a listing seen again is served by the kernel (neither OPENDIR nor READDIR reaches the daemon), and names added or removed in SOURCE show in the next listing.
set -euo pipefail
. "$srcdir/lib.sh"
require_root

make_volume 320
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT" "$SRC/big" "$SRC/small"
say "building a directory of 3000 long names"
pad=$(printf 'n%.0s' $(seq 150))
for i in $(seq -w 1 3000); do
	: >"$SRC/big/$i-$pad"
done
for i in 1 2 3 4 5; do
	"$MKTREE" --file "$SRC/small/f$i" 1000 "$i"
done

mount_dsfs "$SRC" "$MNT" -d
log=${DSFS_LOG[$(realpath "$MNT")]}
# dir_requests: the directory requests that reached the daemon so far.
dir_requests() {
	grep -cE "opcode: (OPENDIR|READDIR|READDIRPLUS|RELEASEDIR) " "$log" || true
}

say "checking the names and seekdir/telldir over the big directory"
"$READCHECK" seekdir "$SRC/big" "$MNT/big" || fail "readcheck seekdir"
"$READCHECK" tree "$SRC" "$MNT" || fail "readcheck tree"
n=$(dir_requests)
((n > 3000 * 170 / 4096)) || fail "only $n directory requests for 3000 long names"

say "a listing seen again is the kernel's"
ls -f "$MNT/big" >/dev/null
ls -f "$MNT/small" >/dev/null
before=$(dir_requests)
for _ in 1 2 3; do
	ls -f "$MNT/big" | sort | diff - <(ls -f "$SRC/big" | sort) >/dev/null ||
		fail "the big directory lists other names a second time"
	ls -f "$MNT/small" >/dev/null
done
after=$(dir_requests)
((after == before)) ||
	fail "$((after - before)) directory requests reached the daemon for listings the kernel had"

say "names added and removed in SOURCE show in the next listing"
: >"$SRC/small/added"
rm "$SRC/small/f3"
want=$(ls -a "$SRC/small" | sort)
for _ in $(seq 50); do
	got=$(ls -a "$MNT/small" | sort)
	[[ $got == "$want" ]] && break
	sleep 0.1
done
[[ $got == "$want" ]] || fail "listing after changes: $got, expected $want"
"$READCHECK" tree "$SRC" "$MNT" || fail "readcheck tree after changes"

unmount_dsfs "$MNT"
say "ok"
