#!/bin/bash
# t-stats-tool: dsfs-stats against live mounts: the table, --json, --prometheus (strictly parsed, values as --json), --watch 1 into a pipe until SIGINT, the listing of every mount (no hit ratio for one that read nothing), and one clear line for each error.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_cmd getfattr setfattr setpriv useradd

STATS=$DSFS_STATS
[[ -x $STATS ]] || fail "dsfs-stats not built: $STATS"
USER_NAME=dsfstest
id "$USER_NAME" >/dev/null 2>&1 || useradd -M -r -s /usr/sbin/nologin "$USER_NAME"
as_user() {
	setpriv --reuid="$USER_NAME" --regid="$(id -g "$USER_NAME")" --clear-groups "$@"
}

make_volume 300
SRC="$VOL/src"
MNT="$WORK/mnt"
# A mount point with a double quote: the label value must escape it.
QMNT="$WORK/q\"mnt"
mkdir "$SRC" "$MNT" "$QMNT"
"$MKTREE" "$SRC/data" 400 4 20000 5
# hugepages=off: leave the huge page pool to t-cache.sh.
PLAN="sampler=torch-distributed,seed=3,world=4,ranks=1-2,layout=sorted,dataset=data"
mount_dsfs "$SRC" "$MNT" -o "cache_size=64M,hugepages=off,allow_other,$PLAN"
mount_dsfs "$SRC" "$QMNT" -o cache_size=16M,hugepages=off
sync; echo 3 >/proc/sys/vm/drop_caches
cat "$MNT"/data/d0000[01]/* >/dev/null
cat "$QMNT"/data/d00002/* >/dev/null

say "the table"
"$STATS" "$MNT" >"$WORK/table" || fail "dsfs-stats $MNT exited $?"
for row in "$MNT  (source $SRC)" "mounted for" "reads" "hit ratio" "stalls" \
	"from backing" "prefetched" "cache " "pages " "I/O engine" "errors" \
	"plan                 torch-distributed, seed 3" "position" \
	"prefetch lead" "mispredictions" "rank 1 " "rank 2 "; do
	grep -qF -- "$row" "$WORK/table" || fail "no '$row' in the table: $(cat "$WORK/table")"
done

say "--json is one JSON document"
"$STATS" --json "$MNT" >"$WORK/stats.json" || fail "dsfs-stats --json exited $?"
"$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["reads"] > 0 and len(d["plan"]["ranks"]) == 2, d' \
	"$WORK/stats.json" || fail "bad --json: $(cat "$WORK/stats.json")"

say "--prometheus is strict text exposition format with the values of --json"
"$STATS" --prometheus "$MNT" >"$WORK/one.prom" || fail "dsfs-stats --prometheus exited $?"
"$STATS" --json "$MNT" >"$WORK/stats.json"
"$STATS" --prometheus >"$WORK/all.prom" || fail "dsfs-stats --prometheus (all mounts) exited $?"
"$PY" - "$WORK/one.prom" "$WORK/stats.json" "$MNT" "$WORK/all.prom" "$QMNT" <<'PYEOF'
import json, math, re, sys

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"')
SAMPLE = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^\n]*\})? (\S+)( -?[0-9]+)?$")

def fail(lineno, msg):
    sys.exit("FAIL: line %d: %s" % (lineno, msg))

def labels(text, lineno):
    """{a="x",b="y"} -> dict, strictly."""
    body, out, pos = text[1:-1], {}, 0
    while pos < len(body):
        m = LABEL.match(body, pos)
        if not m:
            fail(lineno, "bad label syntax at %r" % body[pos:])
        if m.group(1) in out:
            fail(lineno, "label %s twice" % m.group(1))
        out[m.group(1)] = re.sub(r'\\(.)', lambda e: "\n" if e.group(1) == "n" else e.group(1), m.group(2))
        pos = m.end()
        if pos < len(body):
            if body[pos] != ",":
                fail(lineno, "expected ',' at %r" % body[pos:])
            pos += 1
    return out

def parse(path):
    """Check the exposition format; return {(name, labels): value}, types."""
    types, helps, done, cur, series = {}, set(), set(), None, {}
    for lineno, line in enumerate(open(path).read().split("\n")[:-1], 1):
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                name = parts[2]
                if not NAME.match(name) or not name.startswith("dsfs_"):
                    fail(lineno, "bad metric name %r" % name)
                if name in done or name == cur:
                    fail(lineno, "%s for %s after its samples" % (parts[1], name))
                if parts[1] == "HELP":
                    if name in helps or len(parts) < 4 or not parts[3].strip():
                        fail(lineno, "HELP twice or empty for %s" % name)
                    helps.add(name)
                else:
                    if name in types or len(parts) != 4 or parts[3] not in ("counter", "gauge"):
                        fail(lineno, "bad TYPE line %r" % line)
                    types[name] = parts[3]
            continue
        m = SAMPLE.match(line)
        if not m:
            fail(lineno, "not a sample line: %r" % line)
        name = m.group(1)
        if name not in types or name not in helps:
            fail(lineno, "sample of %s before its HELP and TYPE" % name)
        if name != cur:
            if name in done:
                fail(lineno, "samples of %s are not together" % name)
            if cur:
                done.add(cur)
            cur = name
        if types[name] == "counter" and not name.endswith("_total"):
            fail(lineno, "counter %s does not end in _total" % name)
        if types[name] == "gauge" and name.endswith("_total"):
            fail(lineno, "gauge %s ends in _total" % name)
        lab = labels(m.group(2) or "{}", lineno)
        if "mountpoint" not in lab:
            fail(lineno, "no mountpoint label: %r" % line)
        try:
            v = float(m.group(3))
        except ValueError:
            fail(lineno, "value %r is not a float" % m.group(3))
        if m.group(3).lower() in ("nan", "inf", "-inf", "+inf") or math.isnan(v):
            fail(lineno, "value %r" % m.group(3))
        key = (name, tuple(sorted(lab.items())))
        if key in series:
            fail(lineno, "series %r twice" % (key,))
        series[key] = v
    return series, types

one, types = parse(sys.argv[1])
d, mnt = json.load(open(sys.argv[2])), sys.argv[3]

# Every number and boolean of --json has its metric, with the same value.
def metric_of(path):
    name = "dsfs_" + "_".join(path)
    return name + "_total" if name + "_total" in types else name
volatile = {("uptime_seconds",), ("io", "inflight"), ("plan", "last_open_seconds")}
checked = 0
for top, v in d.items():
    leaves = v.items() if isinstance(v, dict) else [(None, v)]
    for sub, x in leaves:
        path = (top,) if sub is None else (top, sub)
        if isinstance(x, bool):
            x = int(x)
        if not isinstance(x, (int, float)) or path == ("plan", "seed"):
            continue  # the seed names the plan: a label of dsfs_plan_info
        name = metric_of(path)
        got = one.get((name, (("mountpoint", mnt),)))
        if got is None:
            sys.exit("FAIL: %s (%s in --json) is not exported" % (name, ".".join(path)))
        if path in volatile:
            continue
        if abs(got - x) > 1e-6 * max(1, abs(x)):
            sys.exit("FAIL: %s is %r, --json says %r" % (name, got, x))
        checked += 1
# Per-rank metrics: a rank label, the values of plan.ranks.
for r in d["plan"]["ranks"]:
    for f in ("epoch", "position", "lead_items", "lead_bytes", "mispredictions"):
        name = "dsfs_plan_rank_" + f + ("_total" if f == "mispredictions" else "")
        got = one.get((name, (("mountpoint", mnt), ("rank", str(r["rank"])))))
        if got != r[f]:
            sys.exit("FAIL: %s rank %d is %r, --json says %r" % (name, r["rank"], got, r[f]))
        checked += 1
    state = (("mountpoint", mnt), ("rank", str(r["rank"])), ("state", r["detected"]))
    if one.get(("dsfs_plan_rank_state", state)) != 1:
        sys.exit("FAIL: dsfs_plan_rank_state is not 1 for %r" % (state,))
if one.get(("dsfs_plan_state", (("mountpoint", mnt), ("state", d["plan"]["detected"])))) != 1:
    sys.exit("FAIL: dsfs_plan_state is not 1 for %s" % d["plan"]["detected"])
info = (("mountpoint", mnt), ("sampler", d["plan"]["sampler"]), ("seed", str(d["plan"]["seed"])))
if one.get(("dsfs_plan_info", info)) != 1:
    sys.exit("FAIL: no dsfs_plan_info %r" % (info,))
if one.get(("dsfs_up", (("mountpoint", mnt),))) != 1:
    sys.exit("FAIL: dsfs_up is not 1")

# Every mount: both mounts, the quote in one mount point escaped and back.
everything, _ = parse(sys.argv[4])
for m in (mnt, sys.argv[5]):
    if everything.get(("dsfs_up", (("mountpoint", m),))) != 1:
        sys.exit("FAIL: no dsfs_up 1 for %r in the all-mounts output" % m)
    if not any(n == "dsfs_info" and dict(lab)["mountpoint"] == m and dict(lab)["source"]
               for n, lab in everything):
        sys.exit("FAIL: no dsfs_info with a source for %r" % m)
if '\\"' not in open(sys.argv[4]).read():
    sys.exit("FAIL: the double quote of %r is not escaped" % sys.argv[5])
print("prometheus: %d series in all, %d values checked against --json" % (len(everything), checked))
PYEOF

say "--watch 1 into a pipe: a header, then one line per second until SIGINT"
"$STATS" --watch 1 "$MNT" >"$WORK/watch" 2>"$WORK/watch.err" &
wpid=$!
for ((i = 0; i < 300; i++)); do
	cat "$MNT"/data/d00002/* >/dev/null
	(($(wc -l <"$WORK/watch") >= 3)) && break
	sleep 0.1
done
kill -INT "$wpid"
rc=0
wait "$wpid" || rc=$?
((rc == 0)) || fail "dsfs-stats --watch exited $rc on SIGINT: $(cat "$WORK/watch.err")"
(($(wc -l <"$WORK/watch") >= 3)) || fail "fewer than two updates in 30 s: $(cat "$WORK/watch")"
head -1 "$WORK/watch" | grep "reads/s" >/dev/null || fail "no header: $(cat "$WORK/watch")"
tail -n +2 "$WORK/watch" | grep -Ev '^[0-9]{2}:[0-9]{2}:[0-9]{2}( +[-0-9.]+){7} +[0-9]+ +[0-9]+/[0-9]+$' >/dev/null &&
	fail "malformed update lines: $(cat "$WORK/watch")"

say "no argument: a line per dsfs mount"
"$STATS" >"$WORK/list" || fail "dsfs-stats (listing) exited $?"
grep -q "^MOUNTPOINT" "$WORK/list" || fail "no header: $(cat "$WORK/list")"
grep -qF "$MNT " "$WORK/list" || fail "$MNT not listed: $(cat "$WORK/list")"
grep -qF "$QMNT " "$WORK/list" || fail "$QMNT not listed: $(cat "$WORK/list")"
# A newline in a mount point's name must not break the listing's lines.
NMNT="$WORK/n"$'\n'"mnt"
mkdir "$NMNT"
"$DSFS" "$SRC" "$NMNT" -o cache_size=4M,hugepages=off || fail "mount at $NMNT"
# (lib.sh's cleanup finds mounts by /proc/mounts names, escaped for this one)
at_exit 'umount -l "$NMNT" 2>/dev/null'
"$STATS" >"$WORK/list" || fail "dsfs-stats (listing) exited $?"
grep -qF "$WORK/n\\012mnt " "$WORK/list" ||
	fail "the mount point with a newline: $(cat "$WORK/list")"
! grep -q "^mnt " "$WORK/list" || fail "the name broke the line: $(cat "$WORK/list")"
# It has read nothing: no hit ratio ("-", as --watch shows it), not 0.0%.
line=$(grep -F "$WORK/n\\012mnt " "$WORK/list")
[[ $line =~ \ -\ +0\ +0\  ]] || fail "a mount that read nothing: $line"
umount "$NMNT" || fail "umount $NMNT"

# expect_error WHAT TEXT CMD...: CMD fails, prints nothing on stdout and
# one line on stderr that contains TEXT.
expect_error() {
	local what=$1 text=$2 rc=0
	shift 2

	"$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
	((rc != 0)) || fail "$what: exit status 0"
	[[ ! -s $WORK/out ]] || fail "$what: wrote to stdout: $(cat "$WORK/out")"
	(($(wc -l <"$WORK/err") == 1)) || fail "$what: not one line: $(cat "$WORK/err")"
	grep -qF -- "$text" "$WORK/err" || fail "$what: unclear: $(cat "$WORK/err")"
	say "$what: $(cat "$WORK/err")"
}

say "errors: one line each, non-zero exit"
expect_error "a plain directory" "not a dsfs mount" "$STATS" "$WORK"
mkdir "$WORK/fake"
setfattr -n user.dsfs.stats -v $'reads 999\nread_bytes 12' "$WORK/fake"
expect_error "a directory with its own user.dsfs.stats" "not a dsfs mount" "$STATS" "$WORK/fake"
expect_error "a directory inside the mount" "its mount point is $MNT" "$STATS" "$MNT/data"
expect_error "--set on a directory inside the mount" "its mount point is $MNT" \
	"$STATS" --set seed=3 "$MNT/data"
expect_error "another user, stats private" "stats=public" as_user "$STATS" "$MNT"
expect_error "another user, no allow_other" "allow_other" as_user "$STATS" --json "$QMNT"
expect_error "a bad interval" "--watch 0" "$STATS" --watch 0 "$MNT"

say "a plan still detecting its epoch has no position yet"
"$STATS" --set sampler=python-shuffle,seed=1,layout=sorted "$QMNT" >/dev/null ||
	fail "could not give $QMNT a plan"
"$STATS" "$QMNT" >"$WORK/table" || fail "dsfs-stats $QMNT exited $?"
grep -qE "^  position +not known yet" "$WORK/table" ||
	fail "the position of a plan detecting its epoch: $(grep position "$WORK/table")"

qpid=${DSFS_PID[$QMNT]}
kill -KILL "$qpid"
wait "$qpid" 2>/dev/null || true
unset 'DSFS_PID[$QMNT]' 'DSFS_LOG[$QMNT]' # quoted: the key has a '"'

expect_error "a killed daemon" "not connected" "$STATS" "$QMNT"
"$STATS" >"$WORK/list" || fail "the listing failed with one live mount left"
grep -qF "$QMNT  error: the dsfs daemon is gone" "$WORK/list" ||
	fail "the dead mount's line: $(cat "$WORK/list")"
"$STATS" --prometheus >"$WORK/all.prom" 2>/dev/null || fail "--prometheus (all) failed with a dead mount"
grep -qF 'dsfs_up{mountpoint="'"${QMNT//\"/\\\"}"'"} 0' "$WORK/all.prom" ||
	fail "no dsfs_up 0 for the dead mount: $(grep dsfs_up "$WORK/all.prom")"
umount "$QMNT"
forget_mount "$QMNT"
unmount_dsfs "$MNT"
say "ok"
