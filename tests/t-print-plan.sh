#!/bin/bash
# t-print-plan: `dsfs --print-plan` lists exactly the files the real loaders (torch, torchvision, numpy, random) read, per epoch and rank.
set -euo pipefail
. "$srcdir/lib.sh"

PY=/usr/bin/python3
"$PY" -c 'import torch, torchvision, numpy' 2>/dev/null ||
	skip "Debian's python3-torch, python3-torchvision and python3-numpy are needed"

# A small ImageFolder tree with the traps of SAMPLERS.md section 5.
T="$WORK/tree"
mkdir -p "$T/train/cat/a" "$T/train/cat/a-b" "$T/train/dog" "$T/train/.hidden" \
	"$T/train/émile" "$T/train/empty-is-not-allowed"
i=0
for f in cat/a/x.jpg cat/a-b/y.JPEG cat/z.png cat/notes.txt cat/.h.jpg dog/1.jpg \
	dog/10.jpg dog/2.Jpg dog/b.webp .hidden/k.ppm émile/é.bmp émile/z.tif \
	empty-is-not-allowed/only.pgm; do
	printf '%s' "$((i++))" >"$T/train/$f"
done
ln -s ../dog "$T/train/cat/linked"
for n in $(seq 1 40); do printf x >"$T/train/dog/many$n.jpg"; done
ls "$T/train" >/dev/null

# One python process computes every expected order; each case is a line
# "ARGS<TAB>path path ...".
"$PY" - "$T/train" "$WORK/subset.list" >"$WORK/expected" <<'PYEOF'
import random, sys
import numpy, torch
from torch.utils.data import DataLoader, DistributedSampler
from torchvision.datasets import ImageFolder

root = sys.argv[1]
ds = ImageFolder(root, loader=lambda p: p)
paths = [p[len(root) + 1:] for p, _ in ds.samples]
n = len(paths)

class Idx(torch.utils.data.Dataset):
    def __len__(self): return n
    def __getitem__(self, i): return i

def emit(args, order):
    print(args + "\t" + "\x1f".join(paths[i] for i in order))

# The generator given to the DataLoader (shuffle=True), or to the sampler
# alone: then the loader's base seed comes from torch's global generator.
for seed in (0, 42, -3, 2**40 + 7):
    for persistent in (False, True):
        for alone in (False, True):
            g = torch.Generator(); g.manual_seed(seed)
            how = (dict(sampler=torch.utils.data.RandomSampler(Idx(), generator=g))
                   if alone else dict(shuffle=True, generator=g))
            dl = DataLoader(Idx(), batch_size=None, **how,
                            num_workers=1 if persistent else 0,
                            persistent_workers=persistent)
            extra = (",persistent_workers" if persistent else "") + \
                    (",sampler_generator" if alone else "")
            for epoch in range(3):
                emit(f"sampler=torch-random,seed={seed},epoch={epoch}{extra}",
                     [int(i) for i in dl])
# RandomSampler(num_samples=K): epochs shorter and longer than the data set.
for k in (5, n, 2 * n + 3):
    g = torch.Generator(); g.manual_seed(11)
    dl = DataLoader(Idx(), batch_size=None, generator=g,
                    sampler=torch.utils.data.RandomSampler(Idx(), num_samples=k,
                                                           generator=g))
    for epoch in range(3):
        emit(f"sampler=torch-random,seed=11,epoch={epoch},num_samples={k}",
             [int(i) for i in dl])
# ... and with replacement=True (num_samples default and given).
for k in (None, 40):
    g = torch.Generator(); g.manual_seed(12)
    dl = DataLoader(Idx(), batch_size=None, generator=g,
                    sampler=torch.utils.data.RandomSampler(
                        Idx(), replacement=True, num_samples=k, generator=g))
    extra = f",num_samples={k}" if k else ""
    for epoch in range(3):
        emit(f"sampler=torch-random,seed=12,epoch={epoch},replacement{extra}",
             [int(i) for i in dl])
# SubsetRandomSampler over a subset of the ImageFolder (every third
# sample, last first), given to dsfs as the list of the subset's files.
idx = list(range(n))[::-3]
with open(sys.argv[2], "w") as f:
    f.writelines(paths[i] + "\n" for i in idx)
for alone in (False, True):
    g = torch.Generator(); g.manual_seed(13)
    dl = DataLoader(Idx(), batch_size=None, **({} if alone else dict(generator=g)),
                    sampler=torch.utils.data.SubsetRandomSampler(idx, generator=g))
    for epoch in range(3):
        emit(f"sampler=torch-random,seed=13,epoch={epoch},subset,layout=list,"
             f"list={sys.argv[2]}" + (",sampler_generator" if alone else ""),
             [int(i) for i in dl])
for world, drop in ((3, False), (4, True)):
    for rank in range(world):
        for epoch in (0, 5):
            s = DistributedSampler(Idx(), num_replicas=world, rank=rank,
                                   shuffle=True, seed=7, drop_last=drop)
            s.set_epoch(epoch)
            extra = ",drop_last" if drop else ""
            emit(f"sampler=torch-distributed,seed=7,world={world},rank={rank},epoch={epoch}{extra}", list(s))
for seed in (0, 5, 10**30):
    for epoch in range(3):
        order = list(range(n)); random.Random(seed + epoch).shuffle(order)
        emit(f"sampler=python-shuffle,seed={seed},epoch={epoch}", order)
for seed in (0, 123, 2**32 - 3):
    for epoch in range(2):
        emit(f"sampler=numpy-permutation,seed={seed},epoch={epoch}",
             [int(i) for i in numpy.random.RandomState(seed + epoch).permutation(n)])
for seed in (0, 123, 2**70 + 1):
    for epoch in range(2):
        emit(f"sampler=numpy-generator,seed={seed},epoch={epoch}",
             [int(i) for i in numpy.random.default_rng(seed + epoch).permutation(n)])
# A generator made once (seeded_once), one list shuffled again (inplace).
rng = numpy.random.default_rng(31)
random.seed(31)
files = list(range(n))
a = numpy.arange(n)
for epoch in range(3):
    emit(f"sampler=numpy-generator,seed=31,seeded_once,epoch={epoch}",
         [int(i) for i in rng.permutation(n)])
    random.shuffle(files)
    emit(f"sampler=python-shuffle,seed=31,seeded_once,inplace,epoch={epoch}", files)
    numpy.random.RandomState(31 + epoch).shuffle(a)
    emit(f"sampler=numpy-permutation,seed=31,inplace,epoch={epoch}",
         [int(i) for i in a])
emit("sampler=sequential", range(n))
PYEOF

# compare_orders FILE [OPTS]: each line of FILE, "ARGS<TAB>path<US>path...",
# is the order `dsfs --print-plan -o OPTSARGS` must print; sets cases to
# the count of lines.
compare_orders() {
	local args want got

	cases=0
	while IFS=$'\t' read -r args want; do
		got=$("$DSFS" --print-plan "$T" -o "${2:-}$args" | paste -sd $'\x1f')
		[[ $got == "$want" ]] || fail "--print-plan -o ${2:-}$args: got [${got//$'\x1f'/ }], want [${want//$'\x1f'/ }]"
		cases=$((cases + 1))
	done <"$1"
}

compare_orders "$WORK/expected" dataset=train,
((cases >= 99)) || fail "only $cases cases ran (python produced too few)"
say "$cases orders equal to the real libraries"

# --print-plan0: a name holding a newline (ImageFolder lists it like any
# other), each path ended by a NUL byte; split there, the order is torch's.
mkdir -p "$WORK/nl/train/c"
for f in a $'b\nc' d $'e\n'; do
	printf x >"$WORK/nl/train/c/$f.jpg"
done
want=$("$PY" - "$WORK/nl/train" <<'PYEOF'
import sys, torch
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder
root = sys.argv[1]
paths = [p[len(root) + 1:] for p, _ in ImageFolder(root, loader=lambda p: p).samples]
g = torch.Generator(); g.manual_seed(9)
order = [int(i) for i in DataLoader(range(len(paths)), batch_size=None, shuffle=True, generator=g)]
print(repr([paths[i] for i in order]))
PYEOF
)
got=$("$DSFS" --print-plan0 "$WORK/nl" -o dataset=train,sampler=torch-random,seed=9 |
	"$PY" -c 'import sys; print(repr(sys.stdin.buffer.read().decode().split("\0")[:-1]))')
[[ $got == "$want" ]] || fail "--print-plan0: got $got, want $want"
say "--print-plan0: $got"

# Class directories without an image: torchvision refuses the tree, so
# --print-plan (and the mount's log) warns, naming how many; the order is
# still that of the other classes.  A tree without one gets no warning.
mkdir -p "$WORK/ec/train/a" "$WORK/ec/train/b" "$WORK/ec/train/c" "$WORK/ec/train/d"
printf x >"$WORK/ec/train/a/1.jpg"
printf x >"$WORK/ec/train/c/notes.txt"
printf x >"$WORK/ec/train/d/2.png"
raised=$("$PY" - "$WORK/ec/train" <<'PYEOF'
import sys
from torchvision.datasets import ImageFolder
try:
    ImageFolder(sys.argv[1])
    print("accepted")
except FileNotFoundError:
    print("refused")
PYEOF
)
[[ $raised == refused ]] || fail "torchvision's ImageFolder $raised a tree with empty classes"
got=$("$DSFS" --print-plan "$WORK/ec" -o dataset=train,sampler=torch-random,seed=1 2>"$WORK/ec.err" | sort | tr '\n' ' ')
[[ $got == "a/1.jpg d/2.png " ]] || fail "--print-plan over empty classes: got [$got]"
grep -q "dataset=train: 2 class directories without a file with an image extension: torchvision's ImageFolder refuses" "$WORK/ec.err" ||
	fail "no warning on empty classes: [$(cat "$WORK/ec.err")]"
"$DSFS" --print-plan "$WORK/nl" -o dataset=train,sampler=torch-random,seed=9 >/dev/null 2>"$WORK/nl.err"
[[ ! -s $WORK/nl.err ]] || fail "a warning without empty classes: $(cat "$WORK/nl.err")"
say "empty classes: $(cat "$WORK/ec.err")"

# A DatasetFolder given extensions= (extensions=.npy:.wav): its files, in
# any case, and nothing else, in the order its shuffled DataLoader reads;
# a class without one is warned about with the extensions named.
D="$WORK/df/train"
mkdir -p "$D/a/sub" "$D/b" "$D/c"
for f in a/1.npy a/2.NPY a/x.jpg a/sub/3.wav b/4.Wav b/5.npy.bak b/6npy \
	b/7.npy c/only.jpg; do
	printf x >"$D/$f"
done
for n in $(seq 10 30); do printf x >"$D/b/$n.npy"; done
want=$("$PY" - "$D" <<'PYEOF'
import sys, torch
from torch.utils.data import DataLoader
from torchvision.datasets import DatasetFolder
from torchvision.datasets.folder import find_classes, make_dataset
root = sys.argv[1]
try:
    DatasetFolder(root, loader=lambda p: p, extensions=(".npy", ".wav"))
    sys.exit("DatasetFolder accepted a class without a .npy or .wav")
except FileNotFoundError:
    pass
# torchvision 0.14 refuses the class c, and newer ones given
# allow_empty=True skip it: make_dataset class by class gives that order
classes, idx = find_classes(root)
samples = []
for c in classes:
    try:
        samples += make_dataset(root, {c: idx[c]}, (".npy", ".wav"))
    except FileNotFoundError:
        pass
paths = [p[len(root) + 1:] for p, _ in samples]
g = torch.Generator(); g.manual_seed(5)
dl = DataLoader(range(len(paths)), batch_size=None, shuffle=True, generator=g)
for epoch in range(2):
    print(" ".join(paths[int(i)] for i in dl))
PYEOF
)
got=$(for e in 0 1; do
	"$DSFS" --print-plan "$WORK/df" -o dataset=train,sampler=torch-random,seed=5,epoch=$e,extensions=.npy:.wav 2>"$WORK/df.err" | paste -sd ' '
done)
[[ -n $want && $got == "$want" ]] || fail "--print-plan extensions=.npy:.wav: got [$got], want [$want]"
grep -q "dataset=train: 1 class directory without a file ending in one of extensions=.npy:.wav: torchvision's DatasetFolder refuses" "$WORK/df.err" ||
	fail "no warning on a class without a .npy or .wav: [$(cat "$WORK/df.err")]"
say "extensions=.npy:.wav: $(wc -w <<<"$got") files in 2 epochs as DatasetFolder's DataLoader reads them"

# torch's random_split(ds, lengths, generator=manual_seed(S)): the part a
# DataLoader (shuffled, or a DistributedSampler's rank) reads, for
# fractions (remainders dealt round-robin, sums that floats make
# 0.9999999999999999, or 1.0000000000000002, which torch refuses) and
# whole lengths, each part, against torch itself.
"$PY" - "$T/train" >"$WORK/split.expected" <<'PYEOF'
import sys, torch, warnings
from torch.utils.data import DataLoader, DistributedSampler, random_split
from torchvision.datasets import ImageFolder
root = sys.argv[1]
ds = ImageFolder(root, loader=lambda p: p)
n = len(ds)
cases = [([0.8, 0.2], 42), ([0.7, 0.2, 0.1], 3), ([0.1, 0.2, 0.7], 1),
         ([0.33, 0.33, 0.34], 5), ([1 / 3, 1 / 3, 1 / 3], 6), ([0.5, 0.5], -2),
         ([n - 7, 7], 2**63 + 5), ([1, 0], 8), ([0, 1], 2), ([1, 0.0], 7),
         ([0.25, 3], 1), ([0.05] * 20, 9), ([n // 2, n - n // 2 - 1], 3)]
warnings.simplefilter("ignore")  # a part of length 0
for lengths, sseed in cases:
    spec = ":".join(repr(x) for x in lengths)
    try:
        parts = random_split(ds, lengths,
                             generator=torch.Generator().manual_seed(sseed))
    except ValueError:  # refused: so must dsfs
        print(f"sampler=torch-random,seed=11,split={spec},split_seed={sseed}\t!")
        continue
    for k in sorted({0, 1, len(parts) - 1}):
        if not len(parts[k]):
            continue
        opt = f"split={spec},split_seed={sseed},split_part={k}"
        g = torch.Generator(); g.manual_seed(11)
        dl = DataLoader(parts[k], batch_size=None, shuffle=True, generator=g)
        for epoch in range(2):
            print(f"sampler=torch-random,seed=11,epoch={epoch},{opt}\t" +
                  "\x1f".join(p[len(root) + 1:] for p, _ in dl))
        s = DistributedSampler(parts[k], num_replicas=2, rank=1, seed=4)
        s.set_epoch(1)
        print(f"sampler=torch-distributed,seed=4,world=2,rank=1,epoch=1,{opt}\t" +
              "\x1f".join(parts[k][i][0][len(root) + 1:] for i in s))
PYEOF
cases=0
refused=0
while IFS=$'\t' read -r args want; do
	if [[ $want == '!' ]]; then
		! "$DSFS" --print-plan "$T" -o "dataset=train,$args" >/dev/null 2>"$WORK/split.err" &&
			grep -q "split=.*random_split" "$WORK/split.err" ||
			fail "--print-plan -o $args: not refused as random_split refuses it: $(cat "$WORK/split.err")"
		refused=$((refused + 1))
		continue
	fi
	got=$("$DSFS" --print-plan "$T" -o "dataset=train,$args" | paste -sd $'\x1f')
	[[ $got == "$want" ]] || fail "--print-plan -o $args: got [${got//$'\x1f'/ }], want [${want//$'\x1f'/ }]"
	cases=$((cases + 1))
done <"$WORK/split.expected"
((cases >= 50 && refused >= 1)) || fail "only $cases random_split cases ($refused refused) ran (python produced too few)"
say "random_split: $cases orders of parts equal to torch's; $refused lengths refused by both"

# torch's ConcatDataset of ImageFolders (dataset=A:B): a shuffled
# DataLoader, a DistributedSampler's rank and a random_split part of it,
# a data set given twice (every path a duplicate), one holding another
# (SOURCE itself, "."), and a ConcatDataset of a script's sorted lists
# (layout=sorted), against torch itself; the paths are relative to
# SOURCE.
mkdir -p "$T/extra/dog" "$T/extra/ant/sub"
for f in dog/1.jpg dog/e.png ant/sub/q.jpg ant/r.JPG ant/s.txt; do
	printf '%s' "$f" >"$T/extra/$f"
done
"$PY" - "$T" >"$WORK/concat.expected" <<'PYEOF'
import os, sys, torch
from torch.utils.data import (ConcatDataset, DataLoader, Dataset,
                              DistributedSampler, random_split)
from torchvision.datasets import ImageFolder
top = sys.argv[1]

class Sorted(Dataset):  # a script's sorted list of every regular file
    def __init__(self, d):
        self.samples = sorted(
            (os.path.join(w, f) for w, _, fs in os.walk(d) for f in fs
             if os.path.isfile(os.path.join(w, f))
             and not os.path.islink(os.path.join(w, f))),
            key=lambda p: os.path.relpath(p, d))
    def __len__(self): return len(self.samples)
    def __getitem__(self, i): return self.samples[i], 0

def paths(ds, order):
    return "\x1f".join(ds[i][0][len(top) + 1:] for i in order)

def folder(d):
    return ImageFolder(os.path.normpath(os.path.join(top, d)), loader=lambda p: p)

for dirs, layout in ((["train", "extra"], ""), (["extra", "train", "extra"], ""),
                     (["train", "extra"], ",layout=sorted"), ([".", "extra"], "")):
    ds = ConcatDataset([Sorted(os.path.join(top, d)) if layout else folder(d)
                        for d in dirs])
    opt = "dataset=" + ":".join(dirs) + layout
    print(f"sampler=sequential,{opt}\t" + paths(ds, range(len(ds))))
    for seed in (0, 9):
        g = torch.Generator(); g.manual_seed(seed)
        dl = DataLoader(range(len(ds)), batch_size=None, shuffle=True, generator=g)
        for epoch in range(2):
            print(f"sampler=torch-random,seed={seed},epoch={epoch},{opt}\t" +
                  paths(ds, [int(i) for i in dl]))
    s = DistributedSampler(ds, num_replicas=2, rank=1, seed=4)
    s.set_epoch(1)
    print(f"sampler=torch-distributed,seed=4,world=2,rank=1,epoch=1,{opt}\t" +
          paths(ds, list(s)))
    part = random_split(ds, [0.7, 0.3], generator=torch.Generator().manual_seed(5))[1]
    g = torch.Generator(); g.manual_seed(3)
    dl = DataLoader(range(len(part)), batch_size=None, shuffle=True, generator=g)
    print(f"sampler=torch-random,seed=3,split=0.7:0.3,split_seed=5,split_part=1,{opt}\t" +
          paths(part, [int(i) for i in dl]))
PYEOF
compare_orders "$WORK/concat.expected"
((cases == 28)) || fail "only $cases ConcatDataset cases ran (python produced too few)"
grep -q $'^sampler=sequential,dataset=extra:train:extra\textra/ant/r.JPG\x1fextra/ant/sub/q.jpg\x1fextra/dog/1.jpg\x1fextra/dog/e.png\x1ftrain/' "$WORK/concat.expected" ||
	fail "the expected ConcatDataset is not as the test meant: $(head -c 300 "$WORK/concat.expected")"
say "ConcatDataset: $cases orders equal to torch's"
