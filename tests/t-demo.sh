#!/bin/bash
# t-demo: scripts/demo, the README's first command, at a small size (4 classes of 25 files, no compute per batch) with the built tree's programs: it ends with "demo: done"; its DataLoader read every sample in both epochs on the volume and through dsfs, every byte checked; its tables have a figure in every cell; dsfs-stats reports the run's opens under the seed plan, at most 1% of them mispredicted; and it leaves no mount, loop device or scratch directory behind.
set -euo pipefail
. "$srcdir/lib.sh"
require_root

demo=$(cd "$srcdir/../scripts" && pwd)/demo
[[ -r $demo ]] || fail "no $demo"
loops_before=$(losetup -a | grep -c '/dsfs-demo\.' || true)
scratch_before=$(find /tmp -maxdepth 1 -name 'dsfs-demo.*' | wc -l)

rc=0
DEMO_BUILDDIR=$(cd "$top_builddir" && pwd) DEMO_CLASSES=4 DEMO_FILES=25 \
	DEMO_STEP_MS=0 DEMO_HUGEPAGES=off bash "$demo" >"$WORK/out" 2>&1 || rc=$?
((rc == 0)) || { cat "$WORK/out" >&2; fail "scripts/demo exited with $rc"; }
grep -qx 'demo: done' "$WORK/out" || { cat "$WORK/out" >&2; fail "no 'demo: done'"; }

# Two runs (the volume, then dsfs) of two epochs, each of all 100 samples.
for e in 0 1; do
	n=$(grep -c "^epoch=$e rank=0 samples=100 bytes=[0-9]* seconds=[0-9.]* wait=[0-9.]*$" "$WORK/out" || true)
	((n == 2)) || { cat "$WORK/out" >&2; fail "epoch $e: $n of 2 runs read all 100 samples"; }
done
grep -q '^verified 100 files against ' "$WORK/out" ||
	fail "the bytes read through dsfs were not checked against the volume"
n=$(grep -Ec '^epoch [01] +[0-9.]+ s +[0-9.]+ s +[0-9.]+ s +[0-9.]+ s +[0-9.]+x$' "$WORK/out" || true)
((n == 2)) || { cat "$WORK/out" >&2; fail "the DataLoader's table has $n of its 2 rows"; }
grep -Eq '^C reader +[0-9]+ files/s +[0-9]+ files/s +[0-9.]+x$' "$WORK/out" ||
	{ cat "$WORK/out" >&2; fail "no figures for the C reader"; }
grep -Eq '^  plan +torch-random, seed 42' "$WORK/out" ||
	{ cat "$WORK/out" >&2; fail "dsfs-stats shows no seed plan"; }
read -r missed opens < <(sed -n 's/^  mispredictions *\([0-9]*\) of \([0-9]*\) opens$/\1 \2/p' "$WORK/out") || true
[[ $opens == 200 ]] || fail "dsfs-stats counts ${opens:-no} opens, not the 200 of the two epochs"
((missed <= 2)) || fail "dsfs-stats counts $missed of the 200 opens mispredicted (the plan is the loader's)"

loops_after=$(losetup -a | grep -c '/dsfs-demo\.' || true)
((loops_after == loops_before)) || fail "the demo's loop devices: $loops_before before it, $loops_after after"
scratch_after=$(find /tmp -maxdepth 1 -name 'dsfs-demo.*' | wc -l)
((scratch_after == scratch_before)) || fail "the demo left its scratch directory in /tmp"
! grep -q '/dsfs-demo\.' /proc/self/mounts || fail "a mount of the demo is left"
say "$(grep -E '^(epoch [01]|C reader) ' "$WORK/out" | tr -s ' ' | paste -sd ';')"
