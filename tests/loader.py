# SPDX-License-Identifier: GPL-2.0-or-later
"""A real training loader's reads, for the mount tests and bench/loader-epochs.

Usage: /usr/bin/python3 loader.py --mode torch-random|distributed|unseeded|sequential ROOT
           [--seed S] [--first E] [--last E] [--world W --rank R]
           [--batch-size B] [--workers N] [--sleep-ms MS] [--drop-caches | --drop-caches-first]
           [--break-first B] [--persistent] [--num-samples K] [--replacement]
           [--weights FILE] [--strays K] [--header-pass BYTES] [--tail-first BYTES]
           [--no-set-epoch]
           [--subset-every K] [--extensions EXT[:EXT...] | --glob SUFFIX]
           [--concat DIR[:DIR...]]
           [--split L0:L1[:...] --split-seed S [--split-part K]]
           [--barrier DIR --parties N] [--list FILE] [--source DIR]
           [--stats MNT FILE]

torchvision.datasets.ImageFolder(ROOT) with a loader that returns the file's
bytes (no decoding), in a torch DataLoader with num_workers=N (2) and a collate
that keeps the bytes, for epochs FIRST..LAST:
- torch-random: shuffle=True, generator=torch.Generator().manual_seed(S).
  The generator advances every epoch, so epoch E's order exists only after
  iterating E epochs from its creation: FIRST must be 0.
- distributed: DistributedSampler(ds, num_replicas=W, rank=R, seed=S,
  shuffle=True) with set_epoch(E) before each epoch.
- unseeded: shuffle=True and no generator, after torch.manual_seed(S) and
  a model's initialisation (which draws from the global RNG): every epoch
  the RandomSampler seeds a fresh generator from the global RNG, as most
  training scripts do.  FIRST must be 0.  --find-seed SPREAD prints, and
  exits, "S s0 s1 ..." for the first S >= --seed whose epochs FIRST..LAST
  draw effective (low 32 bits) seeds s0, s1, ... within SPREAD of each
  other (a test can then search a narrow slice).
- sequential: shuffle=False (a validation loop): index order every epoch;
  with --world W > 1, DistributedSampler(ds, num_replicas=W, rank=R,
  shuffle=False), as DDP validation loops read (rank R: R, R + W, ...).
Before each epoch, optionally, page caches are dropped (standing for a data
set larger than memory; --drop-caches-first: before the first epoch only,
so the later ones are warm) and the processes sharing --barrier DIR (N of them,
each with its own --rank) wait for each other, twice: before the drop, so no
one drops while another still reads, and after it, so all start together.
Each batch is followed by a sleep of MS milliseconds standing for compute.
--break-first B: epoch FIRST stops after B batches (a cap on the steps of
an epoch, or an early stop), and the next epoch starts at once.
--persistent: the DataLoader keeps its workers (persistent_workers=True).
--no-set-epoch (distributed): set_epoch() is never called, as a script may
forget to: every epoch reads epoch 0's order.
--num-samples K: the sampler is a RandomSampler(num_samples=K), so an epoch
reads K samples (torch-random: of the seeded generator, also given to the
DataLoader; unseeded: without a generator).  --replacement (torch-random):
the same sampler given replacement=True.  --subset-every K (torch-random):
SubsetRandomSampler(range(0, n, K), generator=G) instead.  --weights FILE
(torch-random, with --num-samples K): WeightedRandomSampler(weights, K,
generator=G), FILE holding one weight a line, in the samples' order.
--extensions EXTS: the data set is a DatasetFolder(ROOT, extensions=...)
given EXTS split at ':', rather than an ImageFolder.
--glob SUFFIX: the data set is a script's own Dataset over the files
glob.glob(ROOT + "/**/*" + SUFFIX, recursive=True) lists, unsorted.
--concat D1:D2: the data set is ConcatDataset([ImageFolder(ROOT/D1),
ImageFolder(ROOT/D2), ...]) (a DatasetFolder each, with --extensions).
--strays K: each sample read also reads K samples drawn at random (a
Dataset with mosaic or mixup augmentation); their bytes are checked too.
--header-pass BYTES: before the first epoch, the first BYTES of every sample
are read in index order, as a pass over the data set reading each image's
header does (torchvision's detection reference opens every image for its
aspect ratio); with --source their bytes are checked, and --stats takes
a snapshot ("pass") after it.  --tail-first BYTES: each sample's last BYTES are read first,
then the whole file from its start (a format whose index is at its end, as
zip, npz and Parquet files are read).
--split L0:L1 --split-seed S --split-part K: the data set is part K (0) of
random_split(folder, [L0, L1], generator=torch.Generator().manual_seed(S)),
each L a whole length or a fraction as Python reads it.
--stats MNT FILE appends to FILE the stats snapshot of the dsfs mount MNT
(its root's user.dsfs.stats), each line prefixed with where it was taken:
"eE" before epoch E (after the drop and, with --barrier, between the two
barriers: every process is done with the epoch before and none has started
this one, so the counters are exactly those of the epochs before), and "end"
after the last epoch (with --barrier, after a third barrier that every
process reaches once it has finished the last epoch).

Prints "epoch=E rank=R samples=N bytes=B seconds=T wait=W" per epoch (T
excludes the drop and the barriers; W is the part of T the loop spent
waiting for its next batch).  --list FILE writes the path (relative to ROOT)
of every sample read.  --source DIR checks every byte: each sample's digest
must be the same every time it is read and equal that of the same file
under DIR (read once, after the last epoch).  Exit 0, or 1 with a message.
"""
import argparse
import glob
import hashlib
import os
import random
import sys
import time
import warnings

import torch
from torch.utils.data import (ConcatDataset, DataLoader, Dataset,
                              DistributedSampler, RandomSampler,
                              SubsetRandomSampler,
                              WeightedRandomSampler, random_split)
from torchvision.datasets import DatasetFolder, ImageFolder

# More workers than CPUs is what a test of many workers asks for.
warnings.filterwarnings("ignore", message="This DataLoader will create")

BARRIER_TIMEOUT = 300  # seconds: a peer that died must not hang the test


TAIL_FIRST = 0  # --tail-first: set before the workers start, which inherit it


def read_bytes(path):
    """ImageFolder's loader: the file's bytes, as a bytes-only loader has them."""
    with open(path, "rb") as f:
        if TAIL_FIRST:
            f.seek(-min(TAIL_FIRST, os.fstat(f.fileno()).st_size), os.SEEK_END)
            f.read()
            f.seek(0)
        return f.read()


def header_pass(a, folder, nbytes):
    """--header-pass: the first nbytes of every sample, in index order
    (checked against --source)."""
    root = os.path.join(os.path.abspath(a.root), "")
    for path, _ in folder.samples:
        with open(path, "rb") as f:
            got = f.read(nbytes)
        if a.source:
            with open(os.path.join(a.source, path[len(root):]), "rb") as f:
                if f.read(nbytes) != got:
                    die("%s's first %d bytes differ from the same file's "
                        "under %s" % (path, nbytes, a.source))
    snapshot(a, "pass")


def keep(batch):
    """Collate that keeps the list of (index, bytes) as it is."""
    return batch


class Indexed(Dataset):
    """The ImageFolder's samples, each with its index (to check its bytes);
    with strays K, each sample also reads K other samples drawn at random
    (as mosaic or mixup augmentation does), returned as (index, bytes)."""

    def __init__(self, folder, strays=0):
        self.folder = folder
        self.strays = strays

    def __len__(self):
        return len(self.folder)

    def __getitem__(self, i):
        data, extra = self.folder[i][0], []
        if self.strays:
            rng = random.Random(torch.initial_seed() * 1000003 + i)
            extra = [(j, self.folder[j][0]) for j in
                     (rng.randrange(len(self.folder)) for _ in range(self.strays))]
        return i, data, extra


class Globbed(Dataset):
    """A script's Dataset over the files glob lists, in glob's order (that
    of the directories' listings), with a folder's samples attribute."""

    def __init__(self, root, suffix):
        self.samples = [(p, 0) for p in glob.glob(
            os.path.join(root, "**", "*" + suffix), recursive=True)]

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        return read_bytes(self.samples[i][0]), 0


class Concat(Dataset):
    """torch's ConcatDataset of folders, with their samples attribute, one
    after another (--list and --source use it)."""

    def __init__(self, folders):
        self.concat = ConcatDataset(folders)
        self.samples = [s for f in folders for s in f.samples]

    def __len__(self):
        return len(self.concat)

    def __getitem__(self, i):
        return self.concat[i]


class Part(Dataset):
    """A random_split part of a folder, with the folder's samples attribute
    for the part's own indices (--list and --source use it)."""

    def __init__(self, folder, a):
        lengths = [int(x) if x.isdigit() else float(x)
                   for x in a.split.split(":")]
        parts = random_split(folder, lengths, generator=torch.Generator()
                             .manual_seed(a.split_seed))
        self.part = parts[a.split_part]
        self.samples = [folder.samples[i] for i in self.part.indices]

    def __len__(self):
        return len(self.part)

    def __getitem__(self, i):
        return self.part[i]


def die(msg):
    sys.exit("loader.py: " + msg)


def barrier(where, tag, me, parties):
    """Wait until PARTIES processes (ids distinct) reached TAG in WHERE."""
    open(os.path.join(where, "%s.%d" % (tag, me)), "w").close()
    deadline = time.monotonic() + BARRIER_TIMEOUT
    while True:
        n = sum(f.startswith(tag + ".") for f in os.listdir(where))
        if n >= parties:
            return
        if time.monotonic() > deadline:
            die("barrier %s: %d of %d after %d s" % (tag, n, parties, BARRIER_TIMEOUT))
        time.sleep(0.005)


def drop_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def snapshot(a, where):
    """--stats: append the mount's stats, each line prefixed with WHERE."""
    if not a.stats:
        return
    doc = os.getxattr(a.stats[0], "user.dsfs.stats").decode()
    with open(a.stats[1], "a") as f:
        for line in doc.splitlines():
            f.write("%s %s\n" % (where, line))


def parse_args(argv=None):
    """The options of argv (default: the command line's)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root")
    ap.add_argument("--mode", required=True,
                    choices=["torch-random", "distributed", "unseeded",
                             "sequential"])
    ap.add_argument("--find-seed", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--last", type=int, default=0)
    ap.add_argument("--world", type=int, default=1)
    ap.add_argument("--rank", type=int, default=0)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--sleep-ms", type=float, default=0)
    ap.add_argument("--break-first", type=int, default=0)
    ap.add_argument("--persistent", action="store_true")
    ap.add_argument("--no-set-epoch", action="store_true")
    ap.add_argument("--num-samples", type=int, default=0)
    ap.add_argument("--replacement", action="store_true")
    ap.add_argument("--subset-every", type=int, default=0)
    ap.add_argument("--weights")
    ap.add_argument("--extensions")
    ap.add_argument("--glob")
    ap.add_argument("--concat")
    ap.add_argument("--split")
    ap.add_argument("--split-seed", type=int, default=0)
    ap.add_argument("--split-part", type=int, default=0)
    ap.add_argument("--strays", type=int, default=0)
    ap.add_argument("--header-pass", type=int, default=0)
    ap.add_argument("--tail-first", type=int, default=0)
    drop = ap.add_mutually_exclusive_group()
    drop.add_argument("--drop-caches", action="store_true")
    drop.add_argument("--drop-caches-first", action="store_true")
    ap.add_argument("--barrier")
    ap.add_argument("--parties", type=int, default=1)
    ap.add_argument("--list")
    ap.add_argument("--source")
    ap.add_argument("--stats", nargs=2, metavar=("MNT", "FILE"))
    a = ap.parse_args(argv)
    if a.mode in ("torch-random", "unseeded") and a.first != 0:
        die("--mode torch-random: --first must be 0 (epoch E's order needs the "
            "E epochs before it from the same generator)")
    if a.last < a.first:
        die("--last %d < --first %d" % (a.last, a.first))
    return a


def start_unseeded(seed):
    """A training script's start: the global seed, then a model's init."""
    torch.manual_seed(seed)
    torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                        torch.nn.Linear(64, 10))


def next_epoch_seed():
    """The effective seed the next unseeded epoch draws, from a state copy:
    the iterator draws the workers' base seed, then the RandomSampler its
    generator's seed; MT19937 keeps the low 32 bits."""
    state = torch.get_rng_state()
    torch.empty((), dtype=torch.int64).random_()
    seed = int(torch.empty((), dtype=torch.int64).random_().item())
    torch.set_rng_state(state)
    return seed & 0xffffffff


def epochs_apart(n, seeds, batch=16, k=0):
    """Whether no epoch's first sample, nor its second worker's first
    (position `batch`), is among the last 48 samples of the epoch before:
    dsfs drops an open of a sample reported among its last 32 reports as a
    repeat, so such an epoch's head would be lost to its seed search (a
    limitation the test steps around; 48 covers the workers' interleaving)."""
    orders = []
    for s in seeds:
        g = torch.Generator()
        g.manual_seed(s)
        order = []
        while len(order) < (k or n):  # RandomSampler(num_samples=k)
            order += torch.randperm(n, generator=g).tolist()
        orders.append(order[:k or n])
    return all(not {orders[e + 1][0], orders[e + 1][batch]} & set(orders[e][-48:])
               for e in range(len(orders) - 1))


def find_seed(a):
    """The first global seed >= a.seed whose epochs' seeds are close."""
    n = len(ImageFolder(os.path.abspath(a.root), loader=read_bytes))
    for s in range(a.seed, a.seed + 100000):
        start_unseeded(s)
        seeds = []
        for _ in range(a.last + 1):
            seeds.append(next_epoch_seed())
            torch.empty((), dtype=torch.int64).random_()
            torch.empty((), dtype=torch.int64).random_()
        if (max(seeds) - min(seeds) < a.find_seed
                and epochs_apart(n, seeds, a.batch_size, a.num_samples)):
            print(s, *seeds)
            return
    die("no global seed in %d..%d" % (a.seed, a.seed + 100000))


def make_loader(a, ds):
    """The DataLoader and, for distributed, its sampler (for set_epoch)."""
    common = dict(batch_size=a.batch_size, num_workers=a.workers, collate_fn=keep,
                  persistent_workers=a.persistent and a.workers > 0)
    if a.mode == "unseeded":
        start_unseeded(a.seed)
        if a.num_samples:
            sampler = RandomSampler(ds, num_samples=a.num_samples)
            return DataLoader(ds, sampler=sampler, **common), None
        return DataLoader(ds, shuffle=True, **common), None
    if a.mode == "sequential" and a.world > 1:
        sampler = DistributedSampler(ds, num_replicas=a.world, rank=a.rank,
                                     shuffle=False)
        return DataLoader(ds, sampler=sampler, **common), sampler
    if a.mode == "sequential":
        return DataLoader(ds, shuffle=False, **common), None
    if a.mode == "torch-random":
        g = torch.Generator().manual_seed(a.seed)
        if a.subset_every:
            sampler = SubsetRandomSampler(range(0, len(ds), a.subset_every),
                                          generator=g)
            return DataLoader(ds, sampler=sampler, generator=g, **common), None
        if a.weights:
            with open(a.weights) as f:
                w = [float(line) for line in f]
            sampler = WeightedRandomSampler(w, a.num_samples, generator=g)
            return DataLoader(ds, sampler=sampler, generator=g, **common), None
        if a.num_samples or a.replacement:
            sampler = RandomSampler(ds, num_samples=a.num_samples or None,
                                    replacement=a.replacement, generator=g)
            return DataLoader(ds, sampler=sampler, generator=g, **common), None
        return DataLoader(ds, shuffle=True, generator=g, **common), None
    sampler = DistributedSampler(ds, num_replicas=a.world, rank=a.rank,
                                 seed=a.seed, shuffle=True)
    return DataLoader(ds, sampler=sampler, **common), sampler


def run_epoch(a, loader, digests, listing, batches=0):
    """Iterate one epoch (its first `batches` batches, if not 0); returns
    (samples, bytes, seconds, wait): wait is the time the loop spent in the
    loader's iterator, waiting for the next batch, as a training step
    waits for its data."""
    n = nbytes = 0
    wait = 0.0
    t = time.monotonic()
    it = iter(loader)
    b = 0
    while True:
        w = time.monotonic()
        batch = next(it, None)
        wait += time.monotonic() - w
        if batch is None or (batches and b == batches):
            break
        b += 1
        for i, data, extra in batch:
            for j, x in [(i, data)] + extra:
                d = hashlib.blake2b(x, digest_size=16).digest()
                if digests.setdefault(j, d) != d:
                    die("sample %d changed between reads" % j)
            if listing is not None:
                listing.append(i)
            n += 1
            nbytes += len(data)
        if a.sleep_ms:
            time.sleep(a.sleep_ms / 1000)
    return n, nbytes, time.monotonic() - t, wait


def check_source(a, ds, digests):
    """Every sample read equals the same file under --source."""
    root = os.path.join(os.path.abspath(a.root), "")
    for i, d in digests.items():
        path = ds.samples[i][0]
        with open(os.path.join(a.source, path[len(root):]), "rb") as f:
            if hashlib.blake2b(f.read(), digest_size=16).digest() != d:
                die("%s differs from the same file under %s" % (path, a.source))
    print("verified %d files against %s" % (len(digests), a.source))


def make_folder(a, root):
    """An ImageFolder of root, or a DatasetFolder given --extensions."""
    if a.extensions:
        return DatasetFolder(root, loader=read_bytes,
                             extensions=tuple(a.extensions.split(":")))
    return ImageFolder(root, loader=read_bytes)


def main():
    a = parse_args()
    if a.find_seed:
        find_seed(a)
        return
    if a.glob:
        folder = Globbed(os.path.abspath(a.root), a.glob)
    elif a.concat:
        root = os.path.abspath(a.root)
        folder = Concat([make_folder(a, os.path.join(root, d))
                         for d in a.concat.split(":")])
    else:
        folder = make_folder(a, os.path.abspath(a.root))
    if a.split:
        folder = Part(folder, a)
    ds = Indexed(folder, a.strays)
    global TAIL_FIRST
    TAIL_FIRST = a.tail_first
    if a.header_pass:
        header_pass(a, folder, a.header_pass)
    loader, sampler = make_loader(a, ds)
    digests = {}
    listing = [] if a.list else None
    for e in range(a.first, a.last + 1):
        if sampler is not None and not a.no_set_epoch:
            sampler.set_epoch(e)
        if a.barrier:
            barrier(a.barrier, "e%d-ready" % e, a.rank, a.parties)
        if a.drop_caches or (a.drop_caches_first and e == a.first):
            drop_caches()
        snapshot(a, "e%d" % e)
        if a.barrier:
            barrier(a.barrier, "e%d-go" % e, a.rank, a.parties)
        if a.mode == "unseeded":
            print("epoch=%d effective_seed=%d" % (e, next_epoch_seed()), flush=True)
        cut = a.break_first if e == a.first else 0
        n, nbytes, secs, wait = run_epoch(a, loader, digests, listing, cut)
        if n != len(loader.sampler) and not cut:
            die("epoch %d: %d samples, the sampler has %d" % (e, n, len(loader.sampler)))
        print("epoch=%d rank=%d samples=%d bytes=%d seconds=%.3f wait=%.3f"
              % (e, a.rank, n, nbytes, secs, wait), flush=True)
    if a.barrier:
        barrier(a.barrier, "end", a.rank, a.parties)
    snapshot(a, "end")
    if a.list:
        root = os.path.join(os.path.abspath(a.root), "")
        with open(a.list, "w") as f:
            for i in listing:
                f.write(folder.samples[i][0][len(root):] + "\n")
    if a.source:
        check_source(a, folder, digests)


if __name__ == "__main__":
    main()
