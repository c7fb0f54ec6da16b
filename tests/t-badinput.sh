#!/bin/bash
# t-badinput: bad command lines (bad weights files among them) exit non-zero with exactly one stderr line naming the culprit and mount nothing.
set -euo pipefail
. "$srcdir/lib.sh"
require_root

SRC="$WORK/src"
MNT="$WORK/mnt"
BUSY="$WORK/busy"
mkdir "$SRC" "$MNT" "$BUSY" "$WORK/other"
: >"$WORK/file"
"$MKTREE" --file "$SRC/data" 100 1

# bad WANT ARGS...: dsfs ARGS fails, prints one stderr line containing WANT,
# and leaves $MNT (and $BUSY, if named) as they were.
bad() {
	local want=$1 rc=0 lines busy_before
	shift

	say "checking bad input: dsfs $*"
	busy_before=$(mount_count "$BUSY")
	"$DSFS" "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
	lines=$(wc -l <"$WORK/err")
	if ((rc == 0)) || ((lines != 1)) || ! grep -qF -- "$want" "$WORK/err"; then
		echo "--- exit status $rc; stderr ($lines lines):" >&2
		cat "$WORK/err" >&2
		fail "dsfs $*: wanted a non-zero exit and one stderr line naming '$want'"
	fi
	is_mounted "$MNT" && fail "dsfs $*: left something mounted at $MNT"
	[[ $(mount_count "$BUSY") == "$busy_before" ]] ||
		fail "dsfs $*: mounted over $BUSY"
	return 0
}

cd "$WORK"
bad bogus_opt "$SRC" "$MNT" -o bogus_opt
bad bogus_opt "$SRC" "$MNT" -o ro,bogus_opt,allow_other
bad entry_timeout=abc "$SRC" "$MNT" -o entry_timeout=abc
bad entry_timeout= "$SRC" "$MNT" -o entry_timeout=
bad attr_timeout=-1 "$SRC" "$MNT" -o attr_timeout=-1
bad max_open=0 "$SRC" "$MNT" -o max_open=0
bad max_open=12x "$SRC" "$MNT" -o max_open=12x
bad max_threads=99999999999999999999999 "$SRC" "$MNT" \
	-o max_threads=99999999999999999999999
# The cache's options.
bad "cache_size=0: must be between 4K and" "$SRC" "$MNT" -o cache_size=0
bad "cache_size=1: must be between 4K and" "$SRC" "$MNT" -o cache_size=1
bad "lead_max=200%: give a percentage from 0% to 100%" "$SRC" "$MNT" -o lead_max=200%
bad "cache_size=0%: give a percentage from above 0% to 100%" "$SRC" "$MNT" -o cache_size=0%
bad "epoch=4294967296: give auto or an epoch number from 0 to 1073741824" "$SRC" "$MNT" \
	-o sampler=sequential,epoch=4294967296
bad cache_size=12Q "$SRC" "$MNT" -o cache_size=12Q
bad cache_size=100T "$SRC" "$MNT" -o cache_size=100T
bad cache_size=101% "$SRC" "$MNT" -o cache_size=101%
bad hugepages=maybe "$SRC" "$MNT" -o hugepages=maybe
bad numa=999 "$SRC" "$MNT" -o numa=999
bad numa=far "$SRC" "$MNT" -o numa=far
bad io_depth=0 "$SRC" "$MNT" -o io_depth=0
bad whole_file_max=1X "$SRC" "$MNT" -o whole_file_max=1X
bad lead_max=1X "$SRC" "$MNT" -o lead_max=1X
bad lead_max=-5% "$SRC" "$MNT" -o lead_max=-5%
bad stats=everyone "$SRC" "$MNT" -o stats=everyone
# The plan's options, alone and contradicting each other.
bad sampler=bogus "$SRC" "$MNT" -o sampler=bogus
bad seed= "$SRC" "$MNT" -o seed=42
bad seed=4x2 "$SRC" "$MNT" -o sampler=torch-random,seed=4x2
bad seed=INT "$SRC" "$MNT" -o sampler=python-shuffle
bad rank=2 "$SRC" "$MNT" -o sampler=torch-distributed,seed=1,world=2,rank=2
bad world=N "$SRC" "$MNT" -o sampler=torch-distributed,seed=1,ranks=0-1
bad ranks=3-1 "$SRC" "$MNT" -o sampler=torch-distributed,seed=1,world=4,ranks=3-1
bad world= "$SRC" "$MNT" -o sampler=torch-random,seed=1,world=2
bad persistent_workers "$SRC" "$MNT" -o sampler=python-shuffle,seed=1,persistent_workers
bad "drop_last applies only" "$SRC" "$MNT" -o sampler=python-shuffle,seed=1,drop_last
bad "push=on: with direct_io" "$SRC" "$MNT" -o direct_io,push=on
bad sampler_generator "$SRC" "$MNT" -o sampler=numpy-permutation,seed=1,sampler_generator
bad "num_samples applies only" "$SRC" "$MNT" -o sampler=python-shuffle,seed=1,num_samples=5
bad num_samples=0 "$SRC" "$MNT" -o sampler=torch-random,seed=1,num_samples=0
bad num_samples=2147483648 "$SRC" "$MNT" -o sampler=torch-random,seed=1,num_samples=2147483648
bad "num_samples applies only" "$SRC" "$MNT" -o sampler=auto,seed=discover,world=2,num_samples=5
bad "num_samples= needs a plan" "$SRC" "$MNT" -o num_samples=5
bad "replacement applies only" "$SRC" "$MNT" -o sampler=numpy-permutation,seed=1,replacement
bad "replacement: seed=discover" "$SRC" "$MNT" -o sampler=torch-random,seed=discover,replacement
bad "subset applies only" "$SRC" "$MNT" -o sampler=python-shuffle,seed=1,subset
bad "subset: a SubsetRandomSampler without a generator" "$SRC" "$MNT" -o sampler=torch-random,seed=discover,subset
bad "subset: a SubsetRandomSampler has no num_samples" "$SRC" "$MNT" -o sampler=torch-random,seed=1,subset,num_samples=4
# WeightedRandomSampler weights, over the 100 files of $WSRC/data.
WSRC="$WORK/wsrc"
mkdir -p "$WSRC/data"
for ((i = 0; i < 100; i++)); do : >"$WSRC/data/f$i"; done
W="sampler=torch-random,seed=1,layout=sorted,dataset=data,num_samples=10"
seq 100 >"$WORK/w.ok"
seq 99 >"$WORK/w.short"
{ seq 6; echo -2.5; seq 93; } >"$WORK/w.negative"
{ seq 6; echo 1,5; seq 93; } >"$WORK/w.comma"
for ((i = 0; i < 100; i++)); do echo 0; done >"$WORK/w.zero"
# An epoch reached only by redoing more epochs before it than dsfs takes
# on (a typo) is refused at once, at mount and by --print-plan.
bad "epoch=1000000000: sampler=torch-random reaches epoch 1000000000 of 100 samples" \
	"$WSRC" "$MNT" -o sampler=torch-random,seed=1,layout=sorted,dataset=data,epoch=1000000000
bad "epoch=1073741824: sampler=python-shuffle reaches epoch" --print-plan "$WSRC" \
	-o sampler=python-shuffle,seed=1,layout=sorted,dataset=data,inplace,epoch=1073741824
bad "weights= needs num_samples" "$WSRC" "$MNT" -o "${W%,num_samples=10},weights=$WORK/w.ok"
bad "weights= applies only" "$WSRC" "$MNT" -o "sampler=python-shuffle,seed=1,weights=$WORK/w.ok"
bad "weights=w.ok: give an absolute path" "$WSRC" "$MNT" -o "$W,weights=w.ok"
bad "weights=: seed=discover" "$WSRC" "$MNT" -o "sampler=torch-random,seed=discover,num_samples=10,weights=$WORK/w.ok"
bad "weights= needs a plan" "$WSRC" "$MNT" -o "weights=$WORK/w.ok"
bad "w.missing: cannot open: No such file" "$WSRC" "$MNT" -o "$W,weights=$WORK/w.missing"
bad "99 weights for the 100 samples" "$WSRC" "$MNT" -o "$W,weights=$WORK/w.short"
bad 'line 7: "-2.5" is not a weight' "$WSRC" "$MNT" -o "$W,weights=$WORK/w.negative"
bad 'line 7: "1,5" is not a weight' "$WSRC" "$MNT" -o "$W,weights=$WORK/w.comma"
bad "the weights add up to 0" "$WSRC" "$MNT" -o "$W,weights=$WORK/w.zero"
# A plan over no samples: an ImageFolder tree with no class holding an
# image (torchvision raises), here a file in SOURCE's root and no class.
bad "no samples for layout=imagefolder" "$SRC" "$MNT" -o sampler=torch-random,seed=1
bad "layout=list needs list=" "$SRC" "$MNT" -o sampler=sequential,layout=list
# A DatasetFolder's extensions: as torchvision compares them, in lower case.
bad "no samples for layout=imagefolder,extensions=.zip" "$SRC" "$MNT" -o sampler=torch-random,seed=1,extensions=.zip
bad "'.NPY' has capitals" "$SRC" "$MNT" -o sampler=torch-random,seed=1,extensions=.npy:.NPY
bad "an empty extension" "$SRC" "$MNT" -o sampler=torch-random,seed=1,extensions=.npy::.wav
bad "'a/b': give printable ASCII without '/'" "$SRC" "$MNT" -o sampler=torch-random,seed=1,extensions=a/b
bad "extensions= applies only to layout=imagefolder" "$SRC" "$MNT" -o sampler=sequential,layout=sorted,extensions=.npy
bad "extensions= needs a plan" "$SRC" "$MNT" -o extensions=.npy
# A script's own list (layout=sorted or walk): suffix= and hidden=.
bad "no samples for layout=walk: no regular file ending in one of suffix=.zip" "$SRC" "$MNT" -o sampler=torch-random,seed=1,layout=walk,suffix=.zip
mkdir -p "$WORK/hsrc/.h" && : >"$WORK/hsrc/.a.jpg" && : >"$WORK/hsrc/.h/b.jpg"
bad "no samples for layout=sorted: no regular file ending in one of suffix=.jpg outside hidden names" "$WORK/hsrc" "$MNT" -o sampler=sequential,layout=sorted,suffix=.jpg,hidden=skip
bad "suffix=: 'a/b': give printable ASCII without '/'" "$SRC" "$MNT" -o sampler=sequential,layout=walk,suffix=.jpg:a/b
bad "suffix=: an empty suffix" "$SRC" "$MNT" -o sampler=sequential,layout=walk,suffix=.jpg:
bad "suffix= applies only to layout=sorted and layout=walk" "$SRC" "$MNT" -o sampler=sequential,suffix=.jpg
bad "hidden=skip applies only to layout=sorted and layout=walk (an ImageFolder keeps hidden files" "$SRC" "$MNT" -o sampler=sequential,hidden=skip
bad "extensions= applies only to layout=imagefolder (a DatasetFolder given extensions=); with layout=sorted or walk, give suffix=" "$SRC" "$MNT" -o sampler=sequential,layout=walk,extensions=.npy
bad "hidden=yes: give keep" "$SRC" "$MNT" -o sampler=sequential,layout=walk,hidden=yes
bad "suffix= needs a plan" "$SRC" "$MNT" -o suffix=.jpg
# random_split's lengths, seed and part (over SOURCE's one file).
bad "split=0.8:0.2 needs split_seed=" "$SRC" "$MNT" -o sampler=sequential,layout=sorted,split=0.8:0.2
bad "split_part= needs split=" "$SRC" "$MNT" -o sampler=sequential,layout=sorted,split_part=1
bad "split=0.8:0.3: fractions that add up to 1.1000000000000001, not 1" "$SRC" "$MNT" -o sampler=sequential,layout=sorted,split=0.8:0.3,split_seed=1
bad "split=2:0: the lengths add up to 2, not the data set's 1 samples" "$SRC" "$MNT" -o sampler=sequential,layout=sorted,split=2:0,split_seed=1
bad "split=0.5:-0.5: '-0.5' is not a length" "$SRC" "$MNT" -o sampler=sequential,layout=sorted,split=0.5:-0.5,split_seed=1
bad "split_part=2: give the part the loader reads, from 0 to 1" "$SRC" "$MNT" -o sampler=sequential,layout=sorted,split=0.5:0.5,split_seed=1,split_part=2
bad "split_seed=2e3: torch manual_seed() accepts only" "$SRC" "$MNT" -o sampler=sequential,layout=sorted,split=0.5:0.5,split_seed=2e3
bad "split=1:0,split_part=1: random_split gives that part no samples" "$SRC" "$MNT" -o sampler=sequential,layout=sorted,split=1:0,split_seed=1,split_part=1
bad seed=-1 "$SRC" "$MNT" -o sampler=numpy-permutation,seed=-1
bad "default_rng() accepts only seeds >= 0" "$SRC" "$MNT" -o sampler=numpy-generator,seed=-3
bad "seeded_once applies only to sampler=python-shuffle" "$SRC" "$MNT" -o sampler=torch-random,seed=1,seeded_once
bad "inplace= needs a plan" "$SRC" "$MNT" -o inplace
bad epoch=soon "$SRC" "$MNT" -o sampler=sequential,epoch=soon
bad dataset=../up "$SRC" "$MNT" -o sampler=sequential,dataset=../up
# Several dataset directories (a ConcatDataset), one of them bad.
bad "dataset=.:../up: '../up': give directories relative to SOURCE, without .." "$SRC" "$MNT" -o sampler=sequential,dataset=.:../up
bad "dataset=.::.: an empty directory name" "$SRC" "$MNT" -o sampler=sequential,dataset=.::.
bad "dataset 'nope': No such file or directory" "$SRC" "$MNT" -o sampler=sequential,layout=sorted,dataset=.:nope
bad "more than 256 directories" "$SRC" "$MNT" -o "sampler=sequential,layout=sorted,dataset=.$(printf ':.%.0s' {1..256})"
bad "layout=list takes one dataset directory" "$SRC" "$MNT" -o sampler=sequential,layout=list,list=/dev/null,dataset=.:.
bad "sampler=auto works with seed=discover" "$SRC" "$MNT" -o sampler=auto,seed=5
bad "seed=discover works with" "$SRC" "$MNT" -o sampler=python-shuffle,seed=discover
bad "first local rank must be at most 226" "$SRC" "$MNT" \
	-o sampler=torch-distributed,seed=discover,world=512,ranks=227-230
bad "epoch=3 means nothing" "$SRC" "$MNT" \
	-o sampler=auto,seed=discover,world=2,rank=1,epoch=3
bad "$WORK/nonexistent" "$WORK/nonexistent" "$MNT"
bad "$WORK/file" "$WORK/file" "$MNT"
bad "$WORK/nonexistent" "$SRC" "$WORK/nonexistent"
bad "$WORK/file" "$SRC" "$WORK/file"
bad SOURCE
bad MOUNTPOINT "$SRC"
# The mount in its own tree: the daemon's reads of SOURCE would wait on it.
mkdir -p "$SRC/sub/inner"
bad "is SOURCE" "$SRC" "$SRC"
bad "is above SOURCE" "$SRC/sub" "$SRC"
bad "is inside SOURCE" "$SRC" "$SRC/sub/inner"
rmdir "$SRC/sub/inner" "$SRC/sub"
bad extra "$SRC" "$MNT" extra
# libfuse takes max_read=, but its INIT then fails, after dsfs went to the
# background: the command must still say so and exit 1.
bad "did not take the filesystem" "$SRC" "$MNT" -o max_read=4096

# Every option taking a number, with what it needs beside it: empty,
# negative, overflowing and wrong-unit values, and the option given twice.
numeric=(
	entry_timeout= attr_timeout= max_open= max_threads= cache_size= io_depth=
	whole_file_max= readahead_max= lead_max=
	"epoch=|sampler=sequential"
	"world=|sampler=torch-distributed,seed=1,rank=0"
	"rank=|sampler=torch-distributed,seed=1,world=2"
	"ranks=|sampler=torch-distributed,seed=1,world=2"
	"seed=|sampler=numpy-permutation"
)
for spec in "${numeric[@]}"; do
	opt=${spec%%|*} ctx=
	[[ $spec == *"|"* ]] && ctx=${spec#*|},
	for v in "" -1 99999999999999999999999 12Q; do
		bad "$opt$v" "$SRC" "$MNT" -o "$ctx$opt$v"
	done
	bad "${opt%=} given twice" "$SRC" "$MNT" -o "${ctx}${opt}1" -o "${opt}1"
done
# Words and paths, empty or given twice.
for opt in hugepages= numa= stats= sampler= layout= dataset= list= extensions= suffix= hidden= split=; do
	bad "$opt" "$SRC" "$MNT" -o "sampler=sequential,$opt"
done
bad "drop_last given twice" "$SRC" "$MNT" \
	-o sampler=torch-distributed,seed=1,world=2,drop_last,drop_last
bad "give one of --print-plan and --print-plan0" --print-plan --print-plan0 \
	"$SRC" -o sampler=sequential

# Hostile list files (layout=list): refused, naming the line.
mkdir "$SRC/ds"
for f in a b c d; do echo "$f" >"$SRC/ds/$f"; done
LIST="$WORK/list"
badlist() {
	local want=$1
	shift
	printf "$@" >"$LIST"
	bad "$want" "$SRC" "$MNT" -o "sampler=sequential,layout=list,list=$LIST,dataset=ds"
}
badlist "line 2: '/etc/passwd' is an absolute path" 'a\n/etc/passwd\n'
badlist "line 1: '../data' leaves the dataset directory" '../data\n'
badlist "line 3: 'a/../../x' has a '..' component" 'a\nb\na/../../x\n'
badlist "line 2: contains a NUL byte" 'a\nb\0c\n'
badlist "line 2: empty line" 'a\n\nb\n'
badlist "line 3: 'nope'" 'a\nb\nnope\n'
badlist "empty; it must name" ''
head -c $((1 << 20)) /dev/zero | tr '\0' x >"$LIST"
bad "line 1:" "$SRC" "$MNT" -o "sampler=sequential,layout=list,list=$LIST,dataset=ds"

# Ten million lines are handled in memory linear in the lines (about 20
# bytes each here), and --print-plan lists every one.
"$PY" -c "
import sys
with open(sys.argv[1], 'w') as f:
    f.write('a\nb\nc\nd\n' * 2500000)" "$LIST"
/usr/bin/time -f "%M" -o "$WORK/rss" "$DSFS" --print-plan "$SRC" \
	-o "sampler=sequential,layout=list,list=$LIST,dataset=ds" >"$WORK/order"
n=$(wc -l <"$WORK/order") rss=$(tail -1 "$WORK/rss")
say "10,000,000 list lines: $n printed, peak RSS $((rss / 1024)) MiB"
((n == 10000000)) || fail "--print-plan printed $n lines of 10000000"
if ! grep -q __asan_init "$DSFS"; then # ASan's own memory would blur it
	((rss < 64 * 1024 + 10000000 * 40 / 1024)) ||
		fail "peak RSS $rss KiB for 10M lines: not about 20 bytes a line"
fi
rm -f "$LIST" "$WORK/order"

say "checking a MOUNTPOINT that is already a mount point (bind mount)"
mount --bind "$WORK/other" "$BUSY"
track_mount "$BUSY"
bad "$BUSY" "$SRC" "$BUSY"
umount "$BUSY"

say "checking a MOUNTPOINT that is already a dsfs mount"
mount_dsfs "$SRC" "$BUSY"
bad "$BUSY" "$SRC" "$BUSY"
cmp "$BUSY/data" "$SRC/data" || fail "the first mount stopped working"
unmount_dsfs "$BUSY"

say "checking --help and -V"
"$DSFS" --help >"$WORK/out" 2>"$WORK/err" || fail "dsfs --help exited $?"
grep -q "usage:" "$WORK/out" || fail "dsfs --help prints no usage"
[[ ! -s $WORK/err ]] || fail "dsfs --help wrote to stderr: $(cat "$WORK/err")"
"$DSFS" -V >"$WORK/out" 2>&1 || fail "dsfs -V exited $?"
grep -qE '^dsfs [0-9]+\.[0-9]+' "$WORK/out" || fail "dsfs -V: $(cat "$WORK/out")"
say "ok"
