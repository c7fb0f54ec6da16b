#!/bin/bash
# t-layout-golden: layout-dump's imagefolder, sorted and walk orders equal torchvision's ImageFolder (and DatasetFolder given extensions), Python's sorted(), and the unsorted lists of os.walk, glob.glob and pathlib's rglob (given suffix= and hidden=skip) on trap trees.
set -euo pipefail

srcdir=${srcdir:-.}
dump="${builddir:-.}/layout-dump"
python=/usr/bin/python3 # Debian's: the one with python3-torchvision

[[ -x $dump ]] || { echo "t-layout-golden: $dump not built" >&2; exit 1; }
if ! "$python" -c 'import torchvision' 2>/dev/null; then
	if [[ ${CI:-} == true ]]; then
		echo "t-layout-golden: $python cannot import torchvision (CI=true: failing)" >&2
		exit 1
	fi
	echo "t-layout-golden: $python lacks torchvision (apt-get install python3-torchvision); skipped"
	exit 77
fi

work=$(mktemp -d /tmp/dsfs-layout-golden.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$python" "$srcdir/golden_layout.py" "$dump" "$work"
