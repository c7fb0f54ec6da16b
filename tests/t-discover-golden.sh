#!/bin/bash
# t-discover-golden: discover-find finds the seeds a real unseeded torch RandomSampler drew (golden_discover.py).
set -euo pipefail

# Debian's interpreter has python3-torch; an earlier python3 in PATH may not.
python=${DSFS_GOLDEN_PYTHON:-/usr/bin/python3}
if ! "$python" -c 'import torch' 2>/dev/null; then
	[[ ${CI:-} != true ]] || { echo "t-discover-golden: no torch in $python (CI)" >&2; exit 1; }
	echo "t-discover-golden: skipped: $python lacks torch (apt-get install python3-torch)"
	exit 77
fi
# One CPU thread for torch, and no GPU to look for.
export OMP_NUM_THREADS=1 CUDA_VISIBLE_DEVICES=
exec "$python" "${srcdir:-.}/golden_discover.py" "${builddir:-.}/discover-find"
