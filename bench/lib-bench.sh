# SPDX-License-Identifier: GPL-2.0-or-later
# lib-bench.sh: the measuring helpers of bench/run, sourced after tests/lib.sh
# (which owns $WORK, $VOL, $LOOP and the cleanup of every mount).
#
# Every figure goes through `record` into $RESULTS, one line a measurement:
#   ROUND SET CONFIG key=value...
# and every fact about the run through `meta` ("meta KEY VALUE..."), which
# bench/report.py turns into the Markdown report.  Single-threaded: the
# driver runs one measurement at a time, so nothing here is shared.

# shellcheck disable=SC2034 # variables used by bench/run

BENCH_BIN=$top_builddir/bench	# shufread, mkdataset (built by make)
SHUFREAD=$BENCH_BIN/shufread
MKDATASET=$BENCH_BIN/mkdataset
FUSEFLOOR=$BENCH_BIN/fusefloor
PAGERUNS=$BENCH_BIN/pageruns
HZ=$(getconf CLK_TCK)
RESULTS=$WORK/results.txt
ROUND=0
MNT=$WORK/mnt	# the one FUSE mount point: dsfs, passthrough or fusefloor
FUSE_PID=	# its daemon, while mounted
CGROUP=		# a memory cgroup (v1 directory) for the next reader, or none
SCAN=-S		# the C reader lists its tree first, as a loader does (shufread -S)
declare -A CG=()	# name -> memory cgroup directory (cg_make)

# progress MESSAGE: to stderr, so stdout carries the report alone.
progress() {
	say "$@" >&2
}

# record SET CONFIG KEY=VALUE...: one measurement of round $ROUND.
record() {
	local set=$1 cfg=$2

	shift 2
	echo "$ROUND $set $cfg $*" >>"$RESULTS"
}

# meta KEY VALUE...: a fact about the run for the report's header.
meta() {
	echo "meta $*" >>"$RESULTS"
}

drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# storage_bytes: bytes read from the volume's loop device since it was made.
storage_bytes() {
	awk '{ printf "%.0f\n", $3 * 512 }' "/sys/block/${LOOP#/dev/}/stat"
}

# cpu_seconds PID: the process's user plus system CPU time.  Fields 14 and
# 15 of /proc/PID/stat, counted after the command name (which may hold
# spaces), where they are the 12th and 13th.
cpu_seconds() {
	awk -v hz="$HZ" '{ sub(/.*\) /, ""); printf "%.2f\n", ($12 + $13) / hz }' \
		"/proc/$1/stat"
}

# busy_seconds: the seconds all CPUs have been busy since boot (the cpu
# line of /proc/stat: user, nice, system, irq and softirq; not idle,
# iowait or steal).
busy_seconds() {
	awk -v hz="$HZ" '$1 == "cpu" {
		printf "%.2f\n", ($2 + $3 + $4 + $7 + $8) / hz; exit }' /proc/stat
}

# steal_seconds: the seconds the host has taken from this machine's CPUs
# since boot (steal, the 8th figure of /proc/stat's cpu line): another
# guest's turn on them.
steal_seconds() {
	awk -v hz="$HZ" '$1 == "cpu" { printf "%.2f\n", $9 / hz; exit }' /proc/stat
}

# delta NOW THEN: NOW - THEN, to the hundredth (counters read twice).
delta() {
	awk -v a="$2" -v b="$1" 'BEGIN { printf "%.2f", b - a }'
}

# busy_since B0: the seconds the CPUs have been busy since busy_seconds
# gave B0.
busy_since() {
	delta "$(busy_seconds)" "$1"
}

# steal_since S0: the seconds the host has taken since steal_seconds gave
# S0.
steal_since() {
	delta "$(steal_seconds)" "$1"
}

# seconds_since T0: the seconds since $EPOCHREALTIME was T0.
seconds_since() {
	awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }'
}

# fetch_run SET CONFIG PLAN BYTES: the machine's CPU time for dsfs at $MNT
# (mounted without a plan) to fetch BYTES into its cache with no reader,
# from the command that gives it PLAN; records busy_s and seconds.
fetch_run() {
	local c0 t0=$EPOCHREALTIME got deadline=$((SECONDS + 300))

	c0=$(busy_seconds)
	getfattr --absolute-names -n "user.dsfs.plan=$3" "$MNT" >/dev/null ||
		fail "$1 $2: the plan command was refused"
	while got=$(dsfs_stat backing_read_bytes) && ((got < $4)); do
		((SECONDS < deadline)) || fail "$1 $2: fetched $got of $4 bytes in 300 s"
		sleep 0.02
	done
	record "$1" "$2" "busy_s=$(busy_since "$c0")" "seconds=$(seconds_since "$t0")" "bytes=$got"
}

# peak_kib PID: the peak resident set (VmHWM) plus the hugetlb pages the
# process maps, which VmHWM leaves out.
peak_kib() {
	awk '/^(VmHWM|HugetlbPages):/ { s += $2 } END { print s + 0 }' \
		"/proc/$1/status"
}

# daemon_cpu_since C0: the FUSE daemon's CPU seconds since it had used C0
# (cpu_seconds $FUSE_PID).
daemon_cpu_since() {
	delta "$(cpu_seconds "$FUSE_PID")" "$1"
}

# in_cgroup CMD...: run CMD in memory cgroup $CGROUP, if one is set.
in_cgroup() {
	if [[ -n $CGROUP ]]; then
		bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CGROUP" "$@"
	else
		"$@"
	fi
}

# reader SET CONFIG ROOT LIST [shufread options...]: one run of the C reader
# over LIST (paths relative to ROOT, in that order), in $CGROUP if set,
# after listing ROOT untimed unless SCAN is empty (scan_s=).
# Records its figures, the bytes read from storage, the seconds the
# machine's CPUs were busy during the run and those the host took from
# them (steal), and the run's wall time (the
# reader's start-up included) and, with a FUSE daemon mounted
# ($FUSE_PID), the daemon's CPU seconds during the run and its peak memory
# so far.
reader() {
	local set=$1 cfg=$2 root=$3 list=$4 out s0 b0 c0 t0 st0 extra=

	shift 4
	s0=$(storage_bytes)
	b0=$(busy_seconds)
	st0=$(steal_seconds)
	t0=$EPOCHREALTIME
	[[ -z $FUSE_PID ]] || c0=$(cpu_seconds "$FUSE_PID")
	out=$(in_cgroup "$SHUFREAD" $SCAN -l "$list" "$@" "$root") ||
		fail "shufread $* $root failed ($set $cfg)"
	if [[ -n $FUSE_PID ]]; then
		extra="daemon_cpu_s=$(daemon_cpu_since "$c0") daemon_peak_kib=$(peak_kib "$FUSE_PID")"
	fi
	record "$set" "$cfg" "${out#round=1 }" \
		"storage_bytes=$(($(storage_bytes) - s0))" "busy_s=$(busy_since "$b0")" \
		"steal_s=$(steal_since "$st0")" \
		"wall_s=$(seconds_since "$t0")" $extra
}

# ranks_run CONFIG ROOT: the C readers of ranks 0 and 1 (the orders in
# $WORK/ranks.r0 and .r1, 2 threads each, listing ROOT first) at once over
# ROOT.  Records the files both read, the seconds until both are done, and
# with a FUSE daemon mounted the daemon's CPU seconds and READs.
ranks_run() {
	local t0 s0 c0 r pids=() files=0 f extra=

	s0=$(storage_bytes)
	[[ -z $FUSE_PID ]] || c0=$(cpu_seconds "$FUSE_PID")
	t0=$EPOCHREALTIME
	for r in 0 1; do
		"$SHUFREAD" $SCAN -t 2 -l "$WORK/ranks.r$r" "$2" >"$WORK/ranks.$1.$r" &
		pids+=($!)
	done
	for r in 0 1; do
		wait "${pids[r]}" || fail "shufread of rank $r failed (ranks $1)"
		f=$(grep -o 'files=[0-9]*' "$WORK/ranks.$1.$r") ||
			fail "shufread of rank $r printed no files= (ranks $1)"
		files=$((files + ${f#files=}))
	done
	if [[ -n $FUSE_PID ]]; then
		extra="daemon_cpu_s=$(daemon_cpu_since "$c0") reads=$(dsfs_stat reads)"
	fi
	record ranks "$1" "files=$files" "$(awk -v a="$t0" -v b="$EPOCHREALTIME" \
		-v n="$files" 'BEGIN { printf "seconds=%.3f files_per_s=%.1f", b - a, n / (b - a) }')" \
		"storage_bytes=$(($(storage_bytes) - s0))" $extra
}

# cold_reader ...: reader after dropping the page caches.
cold_reader() {
	drop_caches
	reader "$@"
}

# warm_reader ...: reader after an unmeasured pass over the same list at 4
# threads, so the run is warm even if another process on the machine
# dropped the page caches since the last one.
warm_reader() {
	in_cgroup "$SHUFREAD" -t 4 -l "$4" "$3" >/dev/null || fail "shufread $3 failed (warming $1 $2)"
	reader "$@"
}

# mount_dsfs_at OPTIONS [LABEL]: dsfs over $VOL at $MNT with -o OPTIONS,
# $PAGES (the cache's page kind) first (in the cgroup DSFS_CGROUP, if set),
# after dropping the page caches; returns once the daemon answers (its
# cache memory faulted in and, for huge pages, registered with io_uring).
# With LABEL, records that start-up time as "mount LABEL startup_s=".
mount_dsfs_at() {
	local t0=$EPOCHREALTIME

	drop_caches
	mount_dsfs "$VOL" "$MNT" -o "$PAGES,$1${BENCH_DSFS_OPTS:+,$BENCH_DSFS_OPTS}"
	ls "$MNT" >/dev/null || fail "ls $MNT after mounting"
	FUSE_PID=${DSFS_PID[$MNT]}
	[[ -z ${2:-} ]] || record mount "$2" "startup_s=$(seconds_since "$t0")"
}

# pool_reserve BYTES: at least BYTES of free 2 MiB pages in the kernel's
# huge page pool (the old size comes back at exit); sets PAGES to
# hugepages=require when they are there, else to hugepages=off.
pool_reserve() {
	local f=/proc/sys/vm/nr_hugepages old want free

	PAGES=hugepages=off
	old=$(cat "$f")
	want=$((old + ($1 >> 21) + 1))
	echo "$want" >"$f" 2>/dev/null || return 0
	at_exit "echo $old >$f"
	free=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
	if ((free >= ($1 >> 21) + 1)); then
		PAGES=hugepages=require
	else
		progress "only $free huge pages free: the cache uses 4 KiB pages"
	fi
}

# build_passthrough: libfuse's passthrough_ll example, as Debian ships it,
# compiled into $WORK (sets PASSTHROUGH).
build_passthrough() {
	local ex=/usr/share/doc/libfuse3-dev/examples

	[[ -r $ex/passthrough_ll.c ]] || skip "$ex/passthrough_ll.c (libfuse3-dev) is needed"
	PASSTHROUGH=$WORK/passthrough_ll
	cc -O2 -I"$ex" -o "$PASSTHROUGH" "$ex/passthrough_ll.c" \
		$(pkg-config --cflags --libs fuse3) 2>"$WORK/passthrough.cc.log" ||
		{ cat "$WORK/passthrough.cc.log" >&2; fail "could not build $ex/passthrough_ll.c"; }
}

# mount_other_at TYPE CMD [ARGS...]: another FUSE filesystem at $MNT,
# page caches dropped first: passthrough_ll (its defaults: 1 s timeouts,
# the page cache kept per open as the kernel decides) or fusefloor.
mount_other_at() {
	drop_caches
	mount_fuse "$1" "$MNT" "${@:2}"
	FUSE_PID=${DSFS_PID[$MNT]}
}

# unmount_at: unmount $MNT (dsfs, passthrough or fusefloor); the daemon must exit 0.
unmount_at() {
	unmount_dsfs "$MNT"
	FUSE_PID=
}

# dsfs_stat KEY: one field of the mounted dsfs's stats (tests/lib.sh).
dsfs_stat() {
	stat_of "$1" "$MNT"
}

# fio_run CONFIG DEPTH: O_DIRECT random 128 KiB reads at queue depth DEPTH
# over the shard files for $FIO_SECS seconds (io_uring); records MB/s,
# IOPS, the mean completion latency, the bytes read and the seconds the
# CPUs were busy.  Terse v3 fields: 6 read KiB, 7 read KiB/s, 8 read IOPS,
# 16 mean completion latency (microseconds).
fio_run() {
	local out b0

	b0=$(busy_seconds)
	out=$(fio --name="qd$2" --filename="$FIO_FILES" --rw=randread --bs=128k \
		--direct=1 --ioengine=io_uring --iodepth="$2" --runtime="$FIO_SECS" \
		--time_based --readonly --output-format=terse --terse-version=3) ||
		fail "fio at queue depth $2 failed"
	record storage "$1" "$(awk -F';' '{ printf "MB_per_s=%.1f iops=%.0f lat_mean_us=%.0f bytes=%.0f", \
		$7 * 1.024 / 1000, $8, $16, $6 * 1024 }' <<<"$out")" "busy_s=$(busy_since "$b0")"
}

# hugetlb_held_bytes: the bytes of the kernel's huge page pool in use or
# reserved by a mapping (a cache maps its pages at mount and faults them in
# as it fills).
hugetlb_held_bytes() {
	awk '/^HugePages_(Total|Rsvd):/ { n += $2 } /^HugePages_Free:/ { n -= $2 }
		/^Hugepagesize:/ { kib = $2 } END { printf "%.0f\n", n * kib * 1024 }' /proc/meminfo
}

# cg_make NAME BYTES: a v1 memory cgroup limited to BYTES, in CG[NAME]
# (removed at exit).  Page cache that a member reads is charged to it.
cg_make() {
	local dir=/sys/fs/cgroup/memory/dsfs-bench.$$.$1

	mkdir "$dir" || fail "mkdir $dir"
	at_exit "rmdir $dir"
	echo "$2" >"$dir/memory.limit_in_bytes" || fail "memory limit $2 for $dir"
	CG[$1]=$dir
}

# cg_peak NAME: the cgroup's peak charge since cg_reset.
cg_peak() {
	cat "${CG[$1]}/memory.max_usage_in_bytes"
}

cg_reset() {
	echo 0 >"${CG[$1]}/memory.max_usage_in_bytes"
}

# loader_start SEED: the DataLoader service (bench/loader-serve.py), one
# process for the whole run so torch is imported once.
loader_start() {
	coproc LOADER { exec "$PY" "$BENCH_SRC/loader-serve.py" --seed "$1" \
		--batch-size "${BENCH_LOADER_BATCH:-16}" \
		--sleep-ms "${BENCH_LOADER_SLEEP_MS:-0}"; }
	at_exit "kill $LOADER_PID 2>/dev/null"
}

# loader_run SET CONFIG ROOT EPOCHS [warm]: EPOCHS epochs of a new
# DataLoader over the ImageFolder ROOT, the page caches dropped before it
# lists ROOT (epoch 0 cold, the others warm) unless "warm" is given;
# records each as CONFIG-eN.
loader_run() {
	local line e

	echo "$3 $4 ${5:-}" >&"${LOADER[1]}"
	while read -r -u "${LOADER[0]}" line; do
		case $line in
		done) return 0 ;;
		epoch=*)
			e=${line%% *}
			record "$1" "$2-e${e#epoch=}" "${line#* }"
			;;
		*) fail "loader-serve: $line" ;;
		esac
	done
	fail "loader-serve.py exited during $2"
}
