#!/bin/bash
# t-bench-smoke: bench/run --smoke (tiny data sets, one round) runs every configuration of the benchmark suite and each one gives its numbers (bench/report.py --check); no timing is checked.
set -euo pipefail
. "$srcdir/lib.sh"
require_root

bench=$(cd "$srcdir/../bench" && pwd)
rc=0
DSFS_BUILDDIR=$(cd "$top_builddir" && pwd) \
	"$bench/run" --smoke --results "$WORK/results" >"$WORK/report.md" 2>"$WORK/run.err" || rc=$?
if ((rc == 77)); then
	skip "bench/run: $(tail -n 1 "$WORK/run.err")"
fi
((rc == 0)) || { cat "$WORK/run.err" >&2; fail "bench/run --smoke exited with $rc"; }
results=("$WORK"/results/*-smoke.txt)
[[ -f ${results[0]} ]] || fail "bench/run --smoke saved no results in $WORK/results"
"$PY" "$bench/report.py" --check "${results[0]}" >"$WORK/missing" ||
	{ cat "$WORK/run.err" "$WORK/missing" >&2; fail "figures missing from the smoke run"; }
grep -q '^## Targets' "$WORK/report.md" || fail "no report on stdout"
# A fast machine's tiny runs can keep the CPUs busy for less than a clock
# tick: the report must render the same results with every busy_s at 0.
sed -E 's/(^| )busy_s=[0-9.]+/\1busy_s=0.00/g' "${results[0]}" >"$WORK/idle.txt"
grep -q ' busy_s=0.00' "$WORK/idle.txt" || fail "no busy_s in the smoke run's results"
"$PY" "$bench/report.py" "$WORK/idle.txt" >"$WORK/idle.md" ||
	fail "bench/report.py failed on results whose busy_s are all 0"
grep -q '^## Targets' "$WORK/idle.md" || fail "no report from results whose busy_s are all 0"
say "$(grep -c '^| ' "$WORK/report.md") table rows, no figure missing"
