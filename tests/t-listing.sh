#!/bin/bash
# t-listing: directory listings through the mount: a directory of thousands of long names (many READDIR requests) lists exactly the backing names, seekdir/telldir return to every position (from the kernel's cached listing and, once the page cache is dropped, from the offsets dsfs gave), a listing seen again is served by the kernel (neither OPENDIR nor READDIR reaches the daemon), a listing the kernel dropped while it holds the names' inodes costs the daemon no stat per name (and one of names it forgot does), names added, removed or replaced in SOURCE show in the next listing (and read as the new files); and with a plan, the plan's files are stat'ed in SOURCE from the mount on (dsfs-stats's warmed reaches their count, also when the data set is a symlink inside SOURCE, and stays 0 without a plan) while a listing at once lists and reads the backing tree; a listing after the warm-up takes each name's stat from it (no stat or file-handle call per name), and after a change in SOURCE stats every name again and lists the new attributes.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_cmd strace

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

# stats_during CMD...: the stat and file-handle calls of a name (not of an
# open fd) the daemon makes while CMD runs (strace attached to all its
# threads); its status is CMD's.
stats_during() {
	local out=$WORK/strace.out tracer n rc=0

	strace -f -qq -e trace=newfstatat,name_to_handle_at -o "$out" -p "$pid" 2>/dev/null &
	tracer=$!
	for _ in $(seq 50); do # attached once its first thread shows traced
		grep -q '^TracerPid:[[:space:]]*[1-9]' "/proc/$pid/status" && break
		sleep 0.1
	done
	sleep 0.5 # the other threads
	"$@" || rc=$?
	kill -INT "$tracer"
	wait "$tracer" || true
	n=$(grep -cE '(newfstatat|name_to_handle_at)\([0-9]+, "[^"]' "$out" || true)
	echo "$n"
	return "$rc"
}
# list_same DIR: DIR through the mount lists the backing names, types and
# inode numbers.
list_same() {
	diff <(cd "$MNT/$1" && find . -mindepth 1 -maxdepth 1 -printf '%i %y %f\n' | sort) \
		<(cd "$SRC/$1" && find . -mindepth 1 -maxdepth 1 -printf '%i %y %f\n' | sort) >/dev/null
}
# attrs_same DIR: every file under DIR through the mount has the backing
# file's inode number, type, size, mode, link count, owner and times.
attrs_same() {
	diff <(cd "$MNT/$1" && find . -mindepth 1 -printf '%P %i %y %s %m %n %U %G %T@ %C@\n' | sort) \
		<(cd "$SRC/$1" && find . -mindepth 1 -printf '%P %i %y %s %m %n %U %G %T@ %C@\n' | sort) >/dev/null
}

say "a dropped listing of names the kernel holds is listed again without a stat each"
pid=${DSFS_PID[$MNT]}
ls -l "$MNT/big" >/dev/null # every name looked up: the kernel holds them
echo 1 >/proc/sys/vm/drop_caches # the kernel's cached listing, not its inodes
before=$(dir_requests)
n=$(stats_during list_same big) || fail "the big directory lists other names, types or inode numbers after a drop"
(($(dir_requests) > before)) || fail "the listing did not reach the daemon after drop_caches"
((n < 300)) || fail "$n stat and file-handle calls listing 3000 names the kernel holds"
say "the same listing once the kernel forgot them stats each name again"
echo 2 >/proc/sys/vm/drop_caches # its dentries and inodes: FORGET
sleep 0.5
n=$(stats_during list_same big) || fail "the big directory lists other names, types or inode numbers after forgetting"
((n >= 3000)) || fail "only $n stat and file-handle calls listing 3000 names the kernel does not hold"
"$READCHECK" tree "$SRC" "$MNT" || fail "readcheck tree after the listings"

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

say "a name replaced in SOURCE while the kernel holds it lists and reads the new file"
ls -l "$MNT/small" >/dev/null
"$MKTREE" --file "$SRC/small/.new" 3000 9
mv "$SRC/small/.new" "$SRC/small/f1"
rm "$SRC/small/f2"
"$MKTREE" --file "$SRC/small/f2" 2000 10 # its number may come back
echo 1 >/proc/sys/vm/drop_caches
for _ in $(seq 50); do
	list_same small && break
	sleep 0.1
done
list_same small || fail "the small directory lists other names, types or inode numbers after replacing f1 and f2"
"$READCHECK" tree "$SRC" "$MNT" || fail "readcheck tree after replacing f1 and f2"
warmed=$(stat_of warmed)
[[ $warmed == 0 ]] || fail "warmed $warmed on a mount without a plan"
unmount_dsfs "$MNT"


say "with a plan, its files are stat'ed from the mount on, during a first listing"
make_imagefolder "$SRC/ds" 6 150 1 >/dev/null
files=$(find "$SRC/ds" -type f | wc -l)
sync; echo 3 >/proc/sys/vm/drop_caches
mount_dsfs "$SRC" "$MNT" -o "sampler=torch-random,seed=3,layout=imagefolder,dataset=ds"
"$READCHECK" tree "$SRC/ds" "$MNT/ds" || fail "readcheck tree during the warm-up"
wait_warmed "$files" 10
((warmed == files)) || fail "warmed $warmed of the plan's $files files"

unmount_dsfs "$MNT"

say "a first listing after the warm-up takes the names' stats from it"
mount_dsfs "$SRC" "$MNT" -o "sampler=torch-random,seed=3,layout=imagefolder,dataset=ds"
pid=${DSFS_PID[$MNT]}
wait_warmed "$files" 10
held=$(stat_of warm_bytes)
((held > 0)) || fail "warm_bytes $held before the first listing: the warm-up kept no stats"
n=$(stats_during attrs_same ds) || fail "the data set lists other attributes than the backing files from the warm-up's stats"
((n < files / 10)) || fail "$n stat and file-handle calls listing $files files the warm-up stat'ed"
held=$(stat_of warm_bytes)
((held == 0)) || fail "the warm-up's stats hold $held bytes after the first listing of every name"
echo 2 >/proc/sys/vm/drop_caches # FORGET: the next listing asks SOURCE
n=$(stats_during attrs_same ds) || fail "a second listing lists other attributes than the backing files"
((n >= files)) || fail "only $n stat and file-handle calls in a second listing of $files files: a stat served twice"
unmount_dsfs "$MNT"

say "after a change in SOURCE, the first listing stats every name again"
mount_dsfs "$SRC" "$MNT" -o "sampler=torch-random,seed=3,layout=imagefolder,dataset=ds"
pid=${DSFS_PID[$MNT]}
wait_warmed "$files" 10
head -c 1000 /dev/urandom >>"$SRC/ds/class001/img00003.jpg"
chmod 600 "$SRC/ds/class002/img00004.jpg"
"$MKTREE" --file "$SRC/ds/.new" 3000 11
mv "$SRC/ds/.new" "$SRC/ds/class003/img00005.jpg"
n=$(stats_during attrs_same ds) || fail "the data set lists other attributes than the backing files after changes"
((n >= files)) || fail "only $n stat and file-handle calls listing $files files after a change in SOURCE"
held=$(stat_of warm_bytes)
((held == 0)) || fail "the warm-up's stats, unusable after a change, hold $held bytes once every name was listed"
"$READCHECK" tree "$SRC/ds" "$MNT/ds" || fail "readcheck tree after changes to the warmed data set"
unmount_dsfs "$MNT"

say "on a data set of several thousand files, a listing of part of it gives part of the stats' memory back, of all of it all"
make_imagefolder "$SRC/ds5" 5 1000 1 >/dev/null
mount_dsfs "$SRC" "$MNT" -o "sampler=torch-random,seed=3,layout=imagefolder,dataset=ds5"
wait_warmed 5000 20
((warmed == 5000)) || fail "warmed $warmed of ds5's 5000 files"
held0=$(stat_of warm_bytes)
ls -l "$MNT/ds5/class000" "$MNT/ds5/class001" "$MNT/ds5/class002" "$MNT/ds5/class003" >/dev/null
held=$(stat_of warm_bytes)
((held > 0 && held < held0)) || fail "warm_bytes $held0, then $held after listing 4 of 5 classes"
attrs_same ds5 || fail "ds5 lists other attributes than the backing files"
held=$(stat_of warm_bytes)
((held == 0)) || fail "warm_bytes $held after listing every class of ds5"
unmount_dsfs "$MNT"
rm -rf "$SRC/ds5"

say "a data set reached through a symlink inside SOURCE is warmed as well"
ln -s ds "$SRC/dslink"
mount_dsfs "$SRC" "$MNT" -o "sampler=torch-random,seed=3,layout=imagefolder,dataset=dslink"
wait_warmed "$files" 10
((warmed == files)) || fail "warmed $warmed of the plan's $files files through dataset=dslink"
(cd "$SRC/ds" && find . -type f) | while read -r f; do
	cmp -s "$SRC/ds/$f" "$MNT/dslink/$f" || fail "dslink/$f differs from the backing file"
done
unmount_dsfs "$MNT"
say "ok"
