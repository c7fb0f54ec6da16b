#!/bin/bash
# t-direct: direct_io=auto for a daemon in a memory cgroup that leaves the page cache less room than the lead: whole-file readers bypass the page cache (no page of the mount's files resident), readers in pieces and a data set read again within the room get it back; every byte compared each time; outside such a cgroup, and with direct_io=off, the page cache as before.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_cmd getfattr fincore

if [[ ! -w /sys/fs/cgroup/memory ]]; then
	[[ ${CI:-} != true ]] || fail "CI needs the v1 memory cgroup"
	skip "no writable cgroup v1 memory controller"
fi

make_volume 1024
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT"
# About 60 MB in files of about 100 KB, and a small tree of 2.4 MB.
"$MKTREE" "$SRC/data" 600 6 100000 61
"$MKTREE" "$SRC/small" 300 3 8000 62
sync
PLAN=sampler=torch-random,seed=5,layout=sorted

# Only the daemon is in the cgroup (the choice is made from its own), and
# under AddressSanitizer it keeps freed memory in quarantine (256 MiB by
# default), which the cgroup cannot reclaim: it was OOM-killed.  The
# readers run outside (a reader's memory there got it OOM-killed too).
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8
CG=/sys/fs/cgroup/memory/dsfs-test.$$
mkdir "$CG"
at_exit "rmdir $CG"
# 24 MiB of cache, the daemon's 64 and 3 KiB for each of the 600 files
# leave 20 MiB of 110 for the page cache: less than a lead of 24.
echo $((110 << 20)) >"$CG/memory.limit_in_bytes"
OPTS=cache_size=24M,hugepages=off,lead_max=100%

# pass DIR WHAT [CHUNK]: DIR of the mount read whole and compared with
# SOURCE's, byte for byte (read(2)s of CHUNK bytes).
pass() {
	READCHECK_CHUNK=${3:-1048576} "$READCHECK" tree "$SRC/$1" "$MNT/$1" \
		>"$WORK/rc.out" || {
		cat "$WORK/rc.out" >&2
		fail "$1 differs through the mount ($2)"
	}
}

# resident DIR: the pages of DIR's files in the kernel's page cache,
# through the mount.
resident() {
	find "$MNT/$1" -type f -print0 | xargs -0 fincore -nb -o RES |
		awk '{ s += $1 } END { print s + 0 }'
}

# opens: "DIRECT CACHED" opens so far; page_cache: its state's line.
opens() {
	echo "$(stat_of direct_opens) $(stat_of cached_opens)"
}
page_cache() {
	getfattr --absolute-names -n user.dsfs.stats --only-values "$MNT" |
		awk '$1 == "page_cache" { $1 = ""; print substr($0, 2) }'
}

say "whole files in a cgroup without room: direct I/O"
DSFS_CGROUP=$CG mount_dsfs "$SRC" "$MNT" -o "$OPTS,$PLAN,dataset=data"
log_has "$MNT" "direct_io=auto: the memory cgroup limit of 110 MiB ($CG) leaves 20 MiB, less than the lead (24 MiB)" ||
	fail "no direct_io=auto line at the mount"
pass data "first pass"
pass data "second pass"
read -r d c <<<"$(opens)"
say "opens: $d direct, $c with the page cache; page cache: $(page_cache)"
((d >= 1200 && c == 0)) || fail "whole-file passes: $d direct and $c cached opens, want >= 1200 and 0"
[[ $(page_cache) == '"bypassed: no room in the memory cgroup"' ]] ||
	fail "page_cache $(page_cache)"
"$DSFS_STATS" "$MNT" | grep -q "kernel page cache.*bypassed: no room.*$d bypass it, 0 use it" ||
	fail "dsfs-stats' table: $("$DSFS_STATS" "$MNT" | grep "page cache")"
# (fincore's own opens of the files come to the daemon too: after that)
res=$(resident data)
((res == 0)) || fail "$res bytes of the mount's files in the page cache after direct passes"
# Files opened for direct I/O map, privately and shared (devio.c).
"$READCHECK" mmap "$SRC/data" "$MNT/data" >"$WORK/rc.out" || {
	cat "$WORK/rc.out" >&2
	fail "mmap of files opened for direct I/O"
}
# sendfile(2) from such files (shutil.copyfile) to a scratch file.
"$PY" - "$MNT/data" "$SRC/data" "$WORK/copy" <<'PYEOF' || fail "sendfile from files opened for direct I/O"
import os, shutil, sys
mnt, src, tmp = sys.argv[1:]
n = 0
for d, _, names in os.walk(mnt):
    for name in sorted(names)[:5]:
        shutil.copyfile(os.path.join(d, name), tmp)
        with open(tmp, "rb") as a, open(os.path.join(src, os.path.relpath(d, mnt), name), "rb") as b:
            if a.read() != b.read():
                sys.exit("%s: the copy differs" % os.path.join(d, name))
        n += 1
print("t-direct.sh: %d files copied by sendfile, equal" % n)
PYEOF
read -r d c <<<"$(opens)"
((c == 0)) || fail "$c cached opens before a reader in pieces"
say "the daemon's cgroup peaked at $(($(cat "$CG/memory.max_usage_in_bytes") >> 20)) MiB of 110"

say "a reader in pieces of 8 KiB: the page cache from then on"
pass data "pieces" 8192
read -r d2 c2 <<<"$(opens)"
say "opens: $((d2 - d)) direct, $c2 with the page cache; page cache: $(page_cache)"
((c2 >= 400)) || fail "a reader in pieces: $c2 of 600 opens with the page cache"
[[ $(page_cache) == '"used: readers read in pieces"' ]] || fail "page_cache $(page_cache)"
log_has "$MNT" "readers read in pieces, and later opens use the page cache" ||
	fail "no line for the readers in pieces"
pass data "whole files after pieces"
read -r d3 c3 <<<"$(opens)"
((d3 == d2 && c3 == c2 + 600)) || fail "after pieces: $((d3 - d2)) direct, $((c3 - c2)) cached of 600"
unmount_dsfs "$MNT"

say "a small data set read again within the room: the page cache"
DSFS_CGROUP=$CG mount_dsfs "$SRC" "$MNT" -o "$OPTS,$PLAN,dataset=small"
for e in 1 2 3; do
	pass small "pass $e"
	read -r d c <<<"$(opens)"
	say "after pass $e: $d direct, $c cached opens"
done
# The first pass has no reopen; the second shows the 300 files fit the
# room at the 256th of them; the third uses the page cache.
((d >= 555 && d < 650 && c >= 300)) || fail "small tree: $d direct and $c cached opens"
[[ $(page_cache) == '"used: the files read again fit its room"' ]] || fail "page_cache $(page_cache)"
res=$(resident small)
((res > 1000000)) || fail "only $res bytes of the small tree resident after its cached pass"
log_has "$MNT" "files opened again were within the page cache's room" ||
	fail "no line for the files that fit"
unmount_dsfs "$MNT"

say "direct_io=off in the same cgroup, and a mount outside it: no OPEN"
DSFS_CGROUP=$CG mount_dsfs "$SRC" "$MNT" -o "$OPTS,$PLAN,dataset=data,direct_io=off"
pass data "direct_io=off"
[[ "$(opens) $(page_cache)" == '0 0 "used"' ]] || fail "direct_io=off: $(opens) $(page_cache)"
unmount_dsfs "$MNT"
mount_dsfs "$SRC" "$MNT" -o "$OPTS,$PLAN,dataset=data"
pass data "outside the cgroup"
[[ "$(opens) $(page_cache)" == '0 0 "used"' ]] || fail "outside the cgroup: $(opens) $(page_cache)"
((($(resident data)) > 0)) || fail "outside the cgroup: nothing resident"
unmount_dsfs "$MNT"

say "contradictory options are refused"
rc=0
"$DSFS" "$SRC" "$MNT" -f -o direct_io,direct_io=off 2>"$WORK/err" || rc=$?
((rc != 0)) && grep -q "direct_io given twice (direct_io, then direct_io=off)" "$WORK/err" ||
	fail "direct_io,direct_io=off: rc $rc, $(cat "$WORK/err")"
rc=0
"$DSFS" "$SRC" "$MNT" -f -o direct_io=sometimes 2>"$WORK/err" || rc=$?
((rc != 0)) && grep -q "direct_io=sometimes: unknown value; use off, on or auto" "$WORK/err" ||
	fail "direct_io=sometimes: rc $rc, $(cat "$WORK/err")"
say "done"
