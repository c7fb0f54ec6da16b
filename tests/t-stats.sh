#!/bin/bash
# t-stats: the daemon's counters are right, hidden from listings, and private unless stats=public (t-stats-tool tests dsfs-stats's forms and errors).
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_cmd getfattr setpriv useradd

STATS="$(cd "$top_builddir/tools" && pwd)/dsfs-stats"
PY=/usr/bin/python3
USER_NAME=dsfstest
id "$USER_NAME" >/dev/null 2>&1 || useradd -M -r "$USER_NAME"
as_user() {
	setpriv --reuid="$USER_NAME" --regid="$(id -g "$USER_NAME")" --clear-groups "$@"
}

make_volume 512
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT"
"$MKTREE" "$SRC/data" 200 4 50000 3
total=$(find "$SRC/data" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')

mount_dsfs "$SRC" "$MNT" -o cache_size=64M,allow_other
sync; echo 3 >/proc/sys/vm/drop_caches
find "$MNT/data" -type f -exec cat {} + >/dev/null

say "--json is valid JSON with the documented keys and sane values"
"$STATS" --json "$MNT" >"$WORK/stats.json"
"$PY" - "$WORK/stats.json" "$total" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
total = int(sys.argv[2])
for k in ["reads", "read_bytes", "hit_bytes", "miss_bytes", "stalls",
          "stall_seconds", "backing_read_bytes", "prefetch_bytes",
          "evictions", "errors"]:
    assert isinstance(d[k], (int, float)), k
for k in ["capacity_bytes", "used_bytes", "entries", "page_kind", "numa_nodes"]:
    assert k in d["cache"], k
assert d["cache"]["page_kind"] in ("hugetlb", "thp", "4k")
assert d["cache"]["numa_nodes"] and all(isinstance(n, int) for n in d["cache"]["numa_nodes"])
assert d["cache"]["capacity_bytes"] == 64 << 20, d["cache"]
assert d["cache"]["used_bytes"] <= d["cache"]["capacity_bytes"]
assert d["reads"] > 0 and d["errors"] == 0, d
assert d["read_bytes"] >= total, (d["read_bytes"], total)
assert d["hit_bytes"] + d["miss_bytes"] == d["read_bytes"], d
assert d["backing_read_bytes"] >= total, (d["backing_read_bytes"], total)
PYEOF

say "the table shows the hit ratio"
"$STATS" "$MNT" | grep "hit ratio" >/dev/null || fail "no hit ratio in the table"

say "hidden: no listing or xattr list shows the stats"
diff <(ls -a "$SRC") <(ls -a "$MNT") || fail "listing differs"
getfattr -d -m - "$MNT" 2>/dev/null | grep dsfs >/dev/null && fail "listxattr shows the stats attribute"

say "private by default"
as_user "$STATS" "$MNT" 2>"$WORK/err" && fail "another user read private stats"
grep -q "stats=public" "$WORK/err" || fail "unclear refusal: $(cat "$WORK/err")"
unmount_dsfs "$MNT"

mount_dsfs "$SRC" "$MNT" -o cache_size=64M,allow_other,stats=public
as_user "$STATS" --json "$MNT" >/dev/null || fail "stats=public refused another user"
unmount_dsfs "$MNT"
