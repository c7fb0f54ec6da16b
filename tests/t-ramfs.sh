#!/bin/bash
# t-ramfs: a backing filesystem that refuses O_DIRECT (ramfs) is read correctly through buffered reads, with one log line.
set -euo pipefail
. "$srcdir/lib.sh"
require_root

RAM="$WORK/ram"
MNT="$WORK/mnt"
mkdir "$RAM" "$MNT"
mount -t ramfs ramfs "$RAM"
track_mount "$RAM"
"$MKTREE" "$RAM/data" 300 3 40000 5
"$MKTREE" --file "$RAM/big" 5000001 6

mount_dsfs "$RAM" "$MNT" -o cache_size=8M
sync; echo 3 >/proc/sys/vm/drop_caches
"$READCHECK" tree "$RAM" "$MNT" >/dev/null || fail "tree differs on ramfs"
direct=$(getfattr --absolute-names -n user.dsfs.stats --only-values "$MNT" | awk '$1 == "io.direct" { print $2 }')
[[ $direct == false ]] || fail "io.direct is $direct on ramfs"
log=${DSFS_LOG[$MNT]}
unmount_dsfs "$MNT"
n=$(grep -c "refuses O_DIRECT" "$log" || true)
[[ $n == 1 ]] || fail "expected one fallback log line, got $n: $(cat "$log")"
