#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh SECONDS OUT FUZZDIR NAME [libFuzzer options...]: run fuzz/fuzz-NAME
# (from the build's tests/ directory) for SECONDS on the seed corpus
# FUZZDIR/corpus/NAME, growing OUT/NAME/corpus and leaving crashes in
# OUT/NAME/ (FUZZDIR/NAME.dict is its dictionary, if there is one).  Prints
# executions per second and in total from the log OUT/NAME/log; exits 1 when
# the target found a crash, a leak or a timeout (the log says which).
set -uo pipefail

seconds=$1 out=$2 fuzzdir=$3 name=$4
shift 4
dir="$out/$name"
mkdir -p "$dir/corpus"
args=(-max_total_time="$seconds" -timeout=20 -print_final_stats=1
	-artifact_prefix="$dir/" "$@")
if [[ -f $fuzzdir/$name.dict ]]; then
	args+=(-dict="$fuzzdir/$name.dict")
fi
echo "fuzz: $name for $seconds s (log: $dir/log)"
rc=0
"./fuzz/fuzz-$name" "${args[@]}" "$dir/corpus" "$fuzzdir/corpus/$name" \
	>"$dir/log" 2>&1 || rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log")
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log")
echo "fuzz: $name: ${execs:-?} executions, ${rate:-?}/s, corpus $(ls "$dir/corpus" | wc -l) inputs"
if ((rc != 0)); then
	grep -E '^(==[0-9]+==|SUMMARY|.*invariant broken)' "$dir/log" | head -20
	echo "fuzz: $name failed ($rc); the input is in $dir/ (crash-*, leak-*, timeout-*)."
	echo "fuzz: once fixed, add it to tests/fuzz/corpus/$name/ as a regression test."
	exit 1
fi
