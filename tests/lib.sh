# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by the mount tests (t-*.sh), which source it first thing.
#
# Contract: sourcing creates a private work dir ($WORK) and installs a
# cleanup trap on EXIT, INT and TERM that always unmounts every dsfs mount
# made through mount_dsfs or recorded with track_mount (umount, then
# umount -l), waits for the daemons, unmounts the XFS volume, detaches its
# loop device and removes $WORK, whatever happened.  A test whose daemon logs
# a sanitizer report fails even when it never unmounts explicitly.
#
# Runs from the build dir (automake TESTS), so VPATH builds and
# `make distcheck` work: the daemon is "${top_builddir:-..}/fs/dsfs", the
# helper programs are in $builddir, and nothing is written into $srcdir.

# shellcheck disable=SC2034 # variables used by the scripts sourcing this

: "${srcdir:=$(dirname "$0")}"
: "${builddir:=.}"
: "${top_builddir:=..}"

# Absolute paths: tests cd, re-exec in a namespace and run as another user.
DSFS=$(cd "$top_builddir/fs" 2>/dev/null && pwd)/dsfs
READCHECK=$(cd "$builddir" && pwd)/readcheck
MKTREE=$(cd "$builddir" && pwd)/mktree
DSFS_STATS=$(cd "$top_builddir/tools" 2>/dev/null && pwd)/dsfs-stats
PY=/usr/bin/python3	# Debian's, with python3-torch: not the first on PATH
export LC_ALL=C

WORK=
VOL=
LOOP=
MOUNTS=()		# mount points to unmount at exit, in mount order
declare -A DSFS_PID=()	# mount point -> daemon pid (our child, or not)
declare -A DSFS_LOG=()	# mount point -> daemon stderr log
DSFS_NLOG=0

say() {
	printf '%s: %s\n' "${0##*/}" "$*"
}

fail() {
	printf 'FAIL: %s\n' "$*" >&2
	exit 1
}

# A missing prerequisite: exit 77 (SKIP), except in CI where nothing may be
# skipped silently.
skip() {
	if [[ ${CI:-} == true ]]; then
		printf 'FAIL: CI=true and a prerequisite is missing: %s\n' "$*" >&2
		exit 1
	fi
	printf 'SKIP: %s\n' "$*"
	exit 77
}

require_root() {
	local c

	[[ $(id -u) == 0 ]] || skip "must run as root"
	[[ -c /dev/fuse ]] || skip "no /dev/fuse"
	for c in losetup mkfs.xfs; do
		command -v "$c" >/dev/null || skip "$c not installed"
	done
	[[ -x $DSFS ]] || fail "daemon not built: $DSFS"
}

# require_cmd CMD...: each CMD must be installed (skip otherwise).
require_cmd() {
	local c

	for c in "$@"; do
		command -v "$c" >/dev/null || skip "$c not installed"
	done
}

# Mountinfo field 5 is the mount point (whitespace octal-escaped, hence no
# whitespace in $WORK); the type follows the "-" field.
# is_mounted MNT [TYPE]: something (of TYPE) is mounted exactly at MNT.
is_mounted() {
	awk -v m="$1" -v t="${2:-}" '
		{ for (i = 7; $i != "-"; i++) ; if ($5 == m && (t == "" || $(i + 1) == t)) f = 1 }
		END { exit !f }' /proc/self/mountinfo
}

# require_torch: Debian's python3-torch and python3-torchvision ($PY).
require_torch() {
	"$PY" -c 'import torch, torchvision' 2>/dev/null ||
		skip "$PY with python3-torch and python3-torchvision is needed"
}

# mount_count MNT: how many mounts are stacked exactly at MNT.
mount_count() {
	awk -v m="$1" '$5 == m { n++ } END { print n + 0 }' /proc/self/mountinfo
}

track_mount() {
	MOUNTS+=("$1")
}

# pid_alive PID: the process exists and is not a zombie.
pid_alive() {
	local st

	st=$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[[ -n $st && $st != Z ]]
}

# wait_gone PID [SECS]: poll until PID has exited (default 20 s); 1 on timeout.
wait_gone() {
	local deadline=$((SECONDS + ${2:-20}))

	while pid_alive "$1"; do
		((SECONDS < deadline)) || return 1
		sleep 0.05
	done
}

# make_volume SIZE_MB: a sparse image on a direct-I/O loop device, XFS,
# mounted at $VOL.  mkfs.xfs wants at least 300 MB.
make_volume() {
	local img="$WORK/vol.img"

	truncate -s "${1}M" "$img"
	LOOP=$(losetup --direct-io=on --find --show "$img") || fail "losetup $img"
	mkfs.xfs -q "$LOOP" || fail "mkfs.xfs $LOOP"
	VOL="$WORK/vol"
	mkdir "$VOL"
	mount "$LOOP" "$VOL" || fail "mount $LOOP $VOL"
	export VOL
}

# make_imagefolder DIR CLASSES FILES KB: an ImageFolder tree, CLASSES class
# directories of FILES .jpg files of seeded random bytes (not images: the
# loaders read bytes only), sizes uniform in [KB/2, 3*KB/2) KiB.  Prints the
# total size in bytes.
make_imagefolder() {
	"$PY" - "$@" <<'PYEOF'
import os, random, sys
root, classes, files, kb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng, total = random.Random(1), 0
for c in range(classes):
    d = os.path.join(root, "class%03d" % c)
    os.makedirs(d)
    for f in range(files):
        data = rng.randbytes(rng.randrange(kb * 512, kb * 1536))
        with open(os.path.join(d, "img%05d.jpg" % f), "wb") as out:
            out.write(data)
        total += len(data)
print(total)
PYEOF
	sync
}

# wait_ranks NAME TAG: wait for the loaders whose pids are the keys of the
# associative array NAME (pid -> rank), printing each one's
# $WORK/TAG.RANK.out as it exits.  If one fails, the others are stopped,
# WAIT_FAILED is set to its rank and the status is 1.
wait_ranks() {
	local -n loaders=$1
	local tag=$2 pid r rc

	while ((${#loaders[@]})); do
		rc=0
		wait -n -p pid "${!loaders[@]}" || rc=$?
		r=${loaders[$pid]}
		unset "loaders[$pid]"
		cat "$WORK/$tag.$r.out"
		if ((rc != 0)); then
			kill "${!loaders[@]}" 2>/dev/null || true
			wait "${!loaders[@]}" 2>/dev/null || true
			WAIT_FAILED=$r
			return 1
		fi
	done
}

# mount_fuse TYPE MNT CMD [ARGS...]: start CMD, a FUSE daemon that stays in
# the foreground, in the background, stderr to a log in $WORK, and wait until
# MNT (absolute, resolved) is a mount of TYPE ("" for any).  The daemon is
# recorded like mount_dsfs's (cleanup, reap, unmount_dsfs).  DSFS_NOFILE=N
# sets its open-file limit, DSFS_NOFILE_SOFT=N the soft one alone;
# DSFS_MOUNT_WAIT=SECS how long to wait for the mount (default 20);
# DSFS_CGROUP=DIR puts it in that cgroup (v1: a directory with
# cgroup.procs).  SIGINT is reset to default: bash starts
# background jobs with it ignored, and libfuse leaves an ignored signal alone.
mount_fuse() {
	local type=$1 mnt=$2 log pid rc deadline
	shift 2

	log="$WORK/dsfs.$((++DSFS_NLOG)).log"
	(
		if [[ -n ${DSFS_NOFILE_SOFT:-} ]]; then ulimit -Sn "$DSFS_NOFILE_SOFT"; fi
		if [[ -n ${DSFS_NOFILE:-} ]]; then ulimit -n "$DSFS_NOFILE"; fi
		if [[ -n ${DSFS_CGROUP:-} ]]; then echo "$BASHPID" >"$DSFS_CGROUP/cgroup.procs"; fi
		exec env --default-signal=INT "$@"
	) 2>"$log" &
	pid=$!
	DSFS_PID[$mnt]=$pid
	DSFS_LOG[$mnt]=$log
	track_mount "$mnt"
	deadline=$((SECONDS + ${DSFS_MOUNT_WAIT:-20}))
	until is_mounted "$mnt" "$type"; do
		if ! pid_alive "$pid"; then
			rc=0
			wait "$pid" || rc=$?
			cat "$log" >&2
			unset "DSFS_PID[$mnt]"
			fail "$* exited ($rc) before mounting"
		fi
		((SECONDS < deadline)) || fail "$*: not mounted after ${DSFS_MOUNT_WAIT:-20} s"
		sleep 0.02
	done
}

# mount_dsfs SRC MNT [dsfs args...]: start the daemon in the foreground in
# the background (mount_fuse: log, DSFS_NOFILE, DSFS_CGROUP) and wait until
# MNT is a fuse.dsfs mount.
mount_dsfs() {
	local src=$1 mnt

	mnt=$(realpath "$2")
	shift 2
	mount_fuse fuse.dsfs "$mnt" "$DSFS" "$src" "$mnt" -f "$@"
}

# check_plan_stats MNT EPOCH MIN_READ [PCT]: `dsfs-stats --json MNT` shows the
# plan followed: read_bytes + push_bytes >= MIN_READ (the loader's reads all
# reached the daemon, page caches being cold, or were pushed into the
# kernel's page cache ahead of it), hit_bytes >= 95% of read_bytes,
# plan.mispredictions <= PCT% (1%) of plan.accesses, plan.epoch == EPOCH and
# plan.detected "epoch-detected".  Prints the numbers, and what is wrong on
# stderr; returns 1 if anything is.
check_plan_stats() {
	"$DSFS_STATS" --json "$1" >"$WORK/stats.json" || fail "dsfs-stats --json $1"
	"$PY" - "$WORK/stats.json" "$2" "$3" "${4:-1}" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
epoch, min_read, mis_pct = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
p, read, hit = d["plan"], d["read_bytes"], d["hit_bytes"]
pushed = d.get("push_bytes", 0)
print("%s: read %d bytes, %d hits (%.1f%%), %d pushed; %d accesses, %d mispredictions; "
      "epoch %d, %s; backing reads %d bytes"
      % (d["mountpoint"], read, hit, 100 * hit / max(read, 1), pushed, p["accesses"],
         p["mispredictions"], p["epoch"], p["detected"], d["backing_read_bytes"]))
bad = []
if read + pushed < min_read:
    bad.append("read_bytes %d + push_bytes %d < %d: reads did not reach the daemon"
               % (read, pushed, min_read))
if hit * 100 < read * 95:
    bad.append("hit_bytes %d < 95%% of read_bytes %d" % (hit, read))
if p["mispredictions"] * 100 > p["accesses"] * mis_pct:
    bad.append("mispredictions %d > %d%% of %d accesses"
               % (p["mispredictions"], mis_pct, p["accesses"]))
if p["epoch"] != epoch:
    bad.append("epoch %d, expected %d" % (p["epoch"], epoch))
if p["detected"] != "epoch-detected":
    bad.append("detected %s, expected epoch-detected" % p["detected"])
for b in bad:
    print("FAIL: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PYEOF
}

# log_ok LOG: the log has no sanitizer report (print it if it has).
log_ok() {
	if grep -qE 'Sanitizer|runtime error' "$1"; then
		cat "$1" >&2
		return 1
	fi
}

# log_has MNT TEXT: the -f log of MNT's daemon (started by mount_dsfs)
# has a line containing TEXT, within 10 s (some lines follow the event that
# a test sees); prints the log and returns 1 if not.
log_has() {
	local log=${DSFS_LOG[$(realpath "$1")]:-} i

	[[ -n $log ]] || fail "no daemon log recorded for $1"
	for ((i = 0; i < 200; i++)); do
		grep -qF -- "$2" "$log" && return 0
		sleep 0.05
	done
	echo "no line with '$2' in the log of $1:" >&2
	cat "$log" >&2
	return 1
}

# reap MNT: wait for MNT's daemon (20 s at most), then check its exit status
# (when it is our child) and its log.  Returns non-zero on any problem.
reap() {
	local mnt=$1 pid=${DSFS_PID[$1]:-} log=${DSFS_LOG[$1]:-} rc=0

	[[ -n $pid ]] || return 0
	unset "DSFS_PID[$mnt]" "DSFS_LOG[$mnt]"
	if ! wait_gone "$pid"; then
		echo "dsfs for $mnt (pid $pid) still running; killing it" >&2
		kill -KILL "$pid" 2>/dev/null
		rc=1
	fi
	if [[ -n $log ]]; then
		local st=0

		wait "$pid" 2>/dev/null || st=$?
		if ((st != 0)); then
			echo "dsfs for $mnt exited with status $st" >&2
			cat "$log" >&2
			rc=1
		fi
		log_ok "$log" || rc=1
	fi
	return "$rc"
}

forget_mount() {
	local m keep=()

	for m in "${MOUNTS[@]}"; do
		[[ $m == "$1" ]] || keep+=("$m")
	done
	MOUNTS=("${keep[@]}")
}

# unmount_dsfs MNT: umount it and fail unless its daemon exits 0 with a
# clean log.
unmount_dsfs() {
	local mnt

	mnt=$(realpath "$1")
	umount "$mnt" || fail "umount $mnt"
	forget_mount "$mnt"
	reap "$mnt" || fail "dsfs for $mnt did not exit cleanly"
	! is_mounted "$mnt" fuse.dsfs || fail "$mnt still mounted after umount"
}

# kill_dsfs SIG MNT: send SIG to MNT's daemon (started by mount_dsfs) and
# fail unless it unmounts and exits 0 with a clean log.
kill_dsfs() {
	local sig=$1 mnt pid

	mnt=$(realpath "$2")
	pid=${DSFS_PID[$mnt]:-}
	[[ -n $pid ]] || fail "no daemon recorded for $mnt"
	kill -"$sig" "$pid" || fail "kill -$sig $pid"
	reap "$mnt" || fail "dsfs for $mnt did not exit cleanly on SIG$sig"
	forget_mount "$mnt"
	! is_mounted "$mnt" || fail "$mnt still mounted after SIG$sig"
}

# find_daemon MNT: find the dsfs process (this build's binary) that has MNT
# among its arguments, for daemons that are not our children (started by
# mount(8), or daemonized), and record it in DSFS_PID so cleanup waits for
# it.  Fails if there is none.
find_daemon() {
	local mnt=$1 exe p a
	local -a args

	exe=$(realpath "$DSFS")
	for p in /proc/[0-9]*; do
		[[ $(readlink "$p/exe" 2>/dev/null) == "$exe" ]] || continue
		mapfile -d '' args <"$p/cmdline" 2>/dev/null || continue
		for a in "${args[@]}"; do
			if [[ $a == "$mnt" ]]; then
				DSFS_PID[$mnt]=${p#/proc/}
				unset "DSFS_LOG[$mnt]" # not our child: no status
				return 0
			fi
		done
	done
	fail "no dsfs process serving $mnt"
}

# stat_of KEY [MNT]: one field of the stats of the dsfs mount MNT (default
# $MNT), as the daemon's snapshot gives it (needs getfattr).
stat_of() {
	getfattr --absolute-names -n user.dsfs.stats --only-values "${2:-$MNT}" |
		awk -v k="$1" '$1 == k { print $2 }'
}

# wait_warmed N SECS [MNT]: until the warm-up of the dsfs mount at MNT
# (default $MNT) has stat'ed N files (dsfs-stats's warmed), or SECS seconds
# have passed; sets warmed to its last count.
wait_warmed() {
	local i

	for ((i = 0; i < $2 * 10; i++)); do
		warmed=$(stat_of warmed "${3:-$MNT}")
		((${warmed:-0} >= $1)) && return 0
		sleep 0.1
	done
}

# read_in_order ROOT LIST: open and read to the end, one after the other,
# the files LIST names (paths relative to ROOT, one a line), the way a
# single-worker loader does, with the page caches dropped first (standing
# for a dataset larger than memory; DROP_CACHES=1: the page cache only,
# the dentries stay).  Needs /usr/bin/python3.
read_in_order() {
	sync
	echo "${DROP_CACHES:-3}" >/proc/sys/vm/drop_caches
	/usr/bin/python3 - "$1" "$2" <<'PYEOF'
import sys
root, order = sys.argv[1], sys.argv[2]
for p in open(order):
    with open(root + "/" + p.rstrip("\n"), "rb") as f:
        while f.read(1 << 20):
            pass
PYEOF
}

# compare_in_order SRC ROOT ORDER [MNT]: read the files ORDER names (paths
# relative to SRC and ROOT, one a line) through ROOT, one after the other,
# each compared byte for byte with its SRC file; 1 if any differs.  With
# MNT (a dsfs mount), wait before each file until the daemon has fetched
# nothing for 0.6 s: the prefetch went as far as it may.  Needs getfattr
# and /usr/bin/python3.
compare_in_order() {
	/usr/bin/python3 - "$@" <<'PYEOF'
import subprocess, sys, time
src, root, order = sys.argv[1:4]
mnt = sys.argv[4] if len(sys.argv) > 4 else None
def fetched():
    out = subprocess.run(["getfattr", "--absolute-names", "--only-values",
                          "-n", "user.dsfs.stats", mnt], check=True,
                         capture_output=True, text=True).stdout
    return [l for l in out.splitlines() if l.startswith("prefetch_bytes ")]
bad = 0
for p in open(order):
    p = p.rstrip("\n")
    same, last = 0, None
    while mnt and same < 3:
        time.sleep(0.2)
        now = fetched()
        same = same + 1 if now == last else 0
        last = now
    with open(root + "/" + p, "rb") as f:
        got = f.read()
    with open(src + "/" + p, "rb") as f:
        if got != f.read():
            print("MISMATCH", p)
            bad += 1
sys.exit(1 if bad else 0)
PYEOF
}

# reexec_in_mount_ns [ARGS...]: run this test again, as root, in a private
# mount namespace, so the bind mounts it makes over system paths (and any
# mount it leaks) are seen by nothing else.  Returns in the re-executed copy.
reexec_in_mount_ns() {
	[[ ${DSFS_TEST_NS:-} == 1 ]] && return 0
	require_cmd unshare
	trap - EXIT INT TERM
	rm -rf "$WORK"
	export DSFS_TEST_NS=1
	exec unshare --mount --propagation private -- bash "$0" "$@"
}

# at_exit CMD: run CMD (a string for eval) at the end of cleanup, after
# everything is unmounted, e.g. to restore a sysctl the test changed.
EXIT_HOOKS=()
at_exit() {
	EXIT_HOOKS+=("$1")
}

cleanup() {
	local rc=$? i m

	set +e
	trap - EXIT INT TERM
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
		m=${MOUNTS[i]}
		if is_mounted "$m"; then
			umount "$m" 2>/dev/null || umount -l "$m"
		fi
		reap "$m" || rc=1
	done
	# Daemons whose mount never appeared.
	for m in "${!DSFS_PID[@]}"; do
		kill -TERM "${DSFS_PID[$m]}" 2>/dev/null
		reap "$m"
	done
	# Mounts below WORK a failed check lost track of, deepest first.
	if [[ -n $WORK ]]; then
		while read -r m; do
			[[ $m == "$VOL" ]] || umount -l "$m" 2>/dev/null
		done < <(awk -v w="$WORK/" 'index($5, w) == 1 { print $5 }' \
			 /proc/self/mountinfo | sort -r)
	fi
	if [[ -n $VOL ]] && is_mounted "$VOL"; then
		umount "$VOL" || umount -l "$VOL"
	fi
	[[ -n $LOOP ]] && losetup -d "$LOOP"
	[[ -n $WORK ]] && rm -rf --one-file-system "$WORK"
	for m in "${EXIT_HOOKS[@]}"; do
		eval "$m"
	done
	exit "$rc"
}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/dsfs-test.XXXXXX") || fail "mktemp"
WORK=$(realpath "$WORK")	# mountinfo shows resolved paths
# Mount tables escape whitespace, and fstab lines split on it.
[[ $WORK != *[[:space:]]* ]] || { rmdir "$WORK"; fail "TMPDIR must not contain whitespace: $WORK"; }
# Other users (t-perms.sh) must be able to reach mounts under $WORK.
chmod 0755 "$WORK"
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
