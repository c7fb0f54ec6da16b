#!/bin/bash
# t-sampler-golden: sampler-dump's orders equal those the real torch DataLoader/DistributedSampler, CPython random, numpy RandomState and numpy default_rng compute.
set -euo pipefail

srcdir=${srcdir:-.}
# Debian's interpreter, the one with python3-torch and python3-numpy: a
# python3 earlier in PATH may be another one without them.  (Override only
# to test this script's skip path.)
python=${DSFS_GOLDEN_PYTHON:-/usr/bin/python3}
dump="${builddir:-.}/sampler-dump"
script="$srcdir/golden_sampler.py"

skip()
{
	if [[ ${CI:-} == true ]]; then
		echo "t-sampler-golden: $* (a failure when CI=true)" >&2
		exit 1
	fi
	echo "t-sampler-golden: skipped: $*"
	exit 77
}

[[ -x $python ]] || skip "$python not found"
"$python" -c 'import torch, numpy' 2>/dev/null ||
	skip "$python lacks torch or numpy (Debian: apt-get install python3-torch python3-numpy)"
[[ -r $script ]] || { echo "t-sampler-golden: cannot read $script" >&2; exit 1; }
[[ -x $dump ]] || { echo "t-sampler-golden: $dump not built" >&2; exit 1; }

# One CPU thread for torch; numpy/torch need no GPU and must not look for one.
export OMP_NUM_THREADS=1 CUDA_VISIBLE_DEVICES=
exec "$python" "$script" "$dump"
