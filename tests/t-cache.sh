#!/bin/bash
# t-cache: reads through a cache far smaller than the data are byte-exact for each page kind, and memory stays within the budget.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_cmd getfattr

STATS="$(cd "$top_builddir/tools" && pwd)/dsfs-stats"
HP=/proc/sys/vm/nr_hugepages
OLD_HP=$(cat "$HP")
at_exit 'echo "$OLD_HP" >"$HP"'

make_volume 1024
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT"
"$MKTREE" "$SRC/small" 1500 15 70000 7
for size in 3000000 20000000 41943041; do
	"$MKTREE" --file "$SRC/big$size" "$size" "$size"
done
CACHE_MB=24

# Sample used <= capacity and the daemon's memory until told to stop.
sampler() {
	local pid=$1 used cap rss huge limit=$(((CACHE_MB + 64) * 1024))

	while [[ -e "$WORK/sampling" ]]; do
		used=$(stat_of cache.used_bytes) cap=$(stat_of cache.capacity_bytes)
		((used <= cap)) || { echo "used_bytes $used > capacity_bytes $cap"; return 1; }
		if [[ -z $SANITIZED ]]; then
			rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
			huge=$(awk '/^HugetlbPages:/ { print $2 }' "/proc/$pid/status")
			((rss + huge <= limit)) || { echo "daemon memory ${rss}+${huge} KiB > $limit KiB"; return 1; }
		fi
		sleep 0.2
	done
}

SANITIZED=
# Not `ldd | grep -q`: once grep has its match, ldd's next line meets a
# closed pipe, and under pipefail the SIGPIPE fails the test (seen in CI).
if [[ $(ldd "$DSFS") == *libasan* ]]; then
	SANITIZED=1
	say "sanitizer build: memory budget not checked"
fi

# check_kind MODE KIND: mount with hugepages=MODE, expect page kind KIND,
# read everything twice (caches dropped between) under a sampler.
check_kind() {
	local mode=$1 kind=$2 got spid

	mount_dsfs "$SRC" "$MNT" -o "cache_size=${CACHE_MB}M,hugepages=$mode"
	got=$(stat_of cache.page_kind)
	[[ $got == "\"$kind\"" ]] || fail "hugepages=$mode: page kind $got, expected $kind"
	touch "$WORK/sampling"
	sampler "${DSFS_PID[$MNT]}" & spid=$!
	for round in 1 2; do
		sync; echo 3 >/proc/sys/vm/drop_caches
		"$READCHECK" tree "$SRC" "$MNT" >/dev/null || fail "hugepages=$mode: tree differs (round $round)"
	done
	sync; echo 3 >/proc/sys/vm/drop_caches
	"$READCHECK" random "$SRC" "$MNT" 16 300 >/dev/null || fail "hugepages=$mode: random reads differ"
	rm "$WORK/sampling"
	wait "$spid" || fail "hugepages=$mode: budget exceeded"
	say "hugepages=$mode: $kind pages, $(stat_of read_bytes) bytes read, $(stat_of evictions) evictions, $(stat_of cache.rejections) rejections, $(stat_of cache.scattered) entries in several runs"
	unmount_dsfs "$MNT"
}

echo 0 >"$HP"
check_kind off 4k
thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled)
if [[ $thp == *"[never]"* ]]; then check_kind auto 4k; else check_kind auto thp; fi

say "hugepages=require with an empty pool is refused"
if "$DSFS" "$SRC" "$MNT" -o "cache_size=${CACHE_MB}M,hugepages=require" 2>"$WORK/err"; then
	fail "hugepages=require mounted with an empty pool"
fi
grep -q nr_hugepages "$WORK/err" || fail "message does not name nr_hugepages: $(cat "$WORK/err")"
! is_mounted "$MNT" || fail "something mounted after the refusal"

echo $((CACHE_MB / 2 + 4)) >"$HP"
if (($(cat "$HP") >= CACHE_MB / 2)); then
	check_kind require hugetlb
	check_kind auto hugetlb
	# Mounted the usual way, the daemon forks to go to the background:
	# huge pages mapped before the fork must still be its own, every one
	# registered with io_uring (a private mapping's reservation stayed
	# with the command, and registering failed with EFAULT).
	say "hugepages=require, daemon in the background: the cache is registered with io_uring"
	track_mount "$MNT"
	"$DSFS" "$SRC" "$MNT" -o "cache_size=${CACHE_MB}M,hugepages=require" ||
		fail "hugepages=require in the background: mount failed"
	[[ $(stat_of io.fixed_buffers) == true ]] ||
		fail "hugepages=require in the background: cache not registered (io.fixed_buffers $(stat_of io.fixed_buffers))"
	sync; echo 3 >/proc/sys/vm/drop_caches
	"$READCHECK" tree "$SRC" "$MNT" >/dev/null || fail "hugepages=require in the background: tree differs"
	bg=$(pgrep -nxf "$DSFS $SRC $MNT -o cache_size=${CACHE_MB}M,hugepages=require") ||
		fail "no background daemon found"
	umount "$MNT" || fail "umount $MNT"
	forget_mount "$MNT"
	for ((i = 0; i < 250; i++)); do pid_alive "$bg" && sleep 0.02; done
	! pid_alive "$bg" || fail "the background daemon did not exit after umount"
else
	say "kernel gave only $(cat "$HP") huge pages: hugetlb part not run"
fi

say "verify: served bytes are checked against the hash taken at fill time"
mount_dsfs "$SRC" "$MNT" -o "cache_size=${CACHE_MB}M,verify"
sync; echo 3 >/proc/sys/vm/drop_caches
"$READCHECK" tree "$SRC" "$MNT" >/dev/null || fail "verify: tree differs"
"$READCHECK" random "$SRC" "$MNT" 16 300 >/dev/null || fail "verify: random reads differ"
[[ $(stat_of cache.verify_failures) == 0 ]] || fail "verify failures on unchanged data"
say "verify: $(stat_of cache.scattered) entries in several runs"
unmount_dsfs "$MNT"
