#!/bin/bash
# t-limits: under a memory cgroup close to cache_size (push=auto then off), with io_uring disabled, and with the hugepage pool shrunk while mounted, dsfs serves every byte right or refuses the mount with a clear message.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_cmd getfattr

make_volume 1024
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT"
# About 60 MB: more than every cache below, so they evict as they go.
"$MKTREE" "$SRC/data" 600 6 100000 51
sync

# two_passes: the whole tree twice through the mount, byte for byte.
two_passes() {
	"$READCHECK" tree "$SRC" "$MNT" >/dev/null || fail "tree differs ($1)"
	"$READCHECK" tree "$SRC" "$MNT" >/dev/null || fail "tree differs again ($1)"
}

CG=
if [[ -w /sys/fs/cgroup/memory ]]; then
	say "a memory cgroup (v1) of 96 MiB"
	CG=/sys/fs/cgroup/memory/dsfs-test.$$
	mkdir "$CG"
	at_exit "rmdir $CG"
	echo $((96 << 20)) >"$CG/memory.limit_in_bytes"
	# A cache the cgroup cannot hold (with the daemon's own memory) is
	# refused before anything is mounted, naming the cgroup.
	rc=0
	(echo "$BASHPID" >"$CG/cgroup.procs" &&
		exec "$DSFS" "$SRC" "$MNT" -f -o cache_size=64M,hugepages=off) \
		2>"$WORK/err" || rc=$?
	((rc != 0)) || fail "cache_size=64M mounted in a 96 MiB cgroup"
	grep -q "memory cgroup limit of 96 MiB" "$WORK/err" || fail "message: $(cat "$WORK/err")"
	! is_mounted "$(realpath "$MNT")" || fail "mounted after the refusal"
	say "refused: $(cat "$WORK/err")"
	# One that fits serves every byte, and the daemon is not killed.
	PLAN=sampler=torch-random,seed=3,layout=sorted,dataset=data
	DSFS_CGROUP=$CG mount_dsfs "$SRC" "$MNT" -o cache_size=24M,hugepages=off,$PLAN
	# 96 MiB less the cache and the daemon's 64 leave no room to push a
	# lead of 12 MiB into the page cache (push=auto).
	log_has "$MNT" "push: off: the memory cgroup limit of 96 MiB" ||
		fail "push not turned off in a cgroup without room for it"
	# Nor for the kernel's inodes of the plan's files: a warning.
	files=$(find "$SRC/data" -type f | wc -l)
	log_has "$MNT" "the memory cgroup limit of 96 MiB ($CG) leaves 72 MiB beside the cache, where the daemon, the page cache of reads and the kernel's inodes of the plan's $files files" ||
		fail "no warning of a cgroup without room for the tree's inodes"
	two_passes "memory cgroup"
	peak=$(cat "$CG/memory.max_usage_in_bytes")
	say "daemon peak charge $((peak >> 20)) MiB of 96"
	unmount_dsfs "$MNT"
	# A mount without a plan knows no file count: no warning until its
	# first plan from the control channel lists the tree.
	DSFS_CGROUP=$CG mount_dsfs "$SRC" "$MNT" -o cache_size=24M,hugepages=off
	log_has "$MNT" "mounted" || fail "not mounted"
	! grep -q "kernel's inodes of the plan" "${DSFS_LOG[$(realpath "$MNT")]}" ||
		fail "warned with no plan"
	getfattr --absolute-names --only-values -n "user.dsfs.plan=$PLAN" "$MNT" \
		>/dev/null || fail "plan command refused"
	log_has "$MNT" "kernel's inodes of the plan's $files files" ||
		fail "no warning at the first plan from the control channel"
	"$READCHECK" tree "$SRC" "$MNT" >/dev/null || fail "tree differs (plan command)"
	unmount_dsfs "$MNT"
	# With the room dsfs(8) asks (64 MiB for the daemon, 64 for the page
	# cache of reads, 3 KiB a file), no warning.
	echo $(((24 + 128 + (files * 3 + 1023) / 1024) << 20)) >"$CG/memory.limit_in_bytes"
	DSFS_CGROUP=$CG mount_dsfs "$SRC" "$MNT" -o cache_size=24M,hugepages=off,$PLAN
	log_has "$MNT" "plan: torch-random over $files samples" || fail "no plan"
	! grep -q "kernel's inodes of the plan" "${DSFS_LOG[$(realpath "$MNT")]}" ||
		fail "warned with the room dsfs(8) asks"
	"$READCHECK" tree "$SRC" "$MNT" >/dev/null || fail "tree differs (room)"
	unmount_dsfs "$MNT"
else
	say "no writable cgroup v1 memory controller: memory cgroup part skipped"
	[[ ${CI:-} != true ]] || fail "CI needs the memory cgroup part"
fi

if [[ -w /proc/sys/kernel/io_uring_disabled ]]; then
	say "io_uring disabled: a thread pool of preads takes over"
	old=$(cat /proc/sys/kernel/io_uring_disabled)
	at_exit "echo $old >/proc/sys/kernel/io_uring_disabled"
	echo 2 >/proc/sys/kernel/io_uring_disabled
	mount_dsfs "$SRC" "$MNT" -o cache_size=24M,hugepages=off
	echo "$old" >/proc/sys/kernel/io_uring_disabled
	[[ $(stat_of io.engine) == '"threads"' ]] || fail "engine $(stat_of io.engine)"
	grep -q "io_uring unavailable" "${DSFS_LOG[$(realpath "$MNT")]}" ||
		fail "no log line for the fallback"
	two_passes "io_uring disabled"
	unmount_dsfs "$MNT"
else
	say "no kernel.io_uring_disabled: that part skipped"
fi

say "the hugepage pool shrinks under a mounted cache of huge pages"
old=$(cat /proc/sys/vm/nr_hugepages)
at_exit "echo $old >/proc/sys/vm/nr_hugepages"
echo 24 >/proc/sys/vm/nr_hugepages
(($(cat /proc/sys/vm/nr_hugepages) >= 16)) || skip "could not reserve 16 huge pages"
mount_dsfs "$SRC" "$MNT" -o cache_size=32M,hugepages=require
[[ $(stat_of cache.page_kind) == '"hugetlb"' ]] || fail "page kind $(stat_of cache.page_kind)"
"$READCHECK" tree "$SRC" "$MNT" >/dev/null || fail "tree differs (huge pages)"
echo 0 >/proc/sys/vm/nr_hugepages
say "pool now $(cat /proc/sys/vm/nr_hugepages) pages, $(awk '/HugePages_Surp/ { print $2 }' /proc/meminfo) surplus"
two_passes "pool shrunk"
unmount_dsfs "$MNT"
