# SPDX-License-Identifier: GPL-2.0-or-later
"""golden_sampler: compare sampler-dump's orders with the real libraries.

Usage: /usr/bin/python3 golden_sampler.py PATH/TO/sampler-dump

One process computes every expected order with the real torch, CPython and
numpy and asks sampler-dump (in --batch mode, one query at a time) for the
same order; a mismatch prints the first differing position.  What each case
exercises:

  torch-random       the real DataLoader(shuffle=True, generator=G) with G =
                     torch.Generator().manual_seed(seed), iterated over
                     EPOCHS epochs: num_workers=0, num_workers=2 and
                     num_workers=2 with persistent_workers, so the base-seed
                     draws of each iterator and the sampler's unused second
                     randperm are the real ones.  batch_size is 1 for small n
                     and larger for big n (batching does not touch G; one
                     drop_last=True loader shows that too).  After every epoch
                     G's state is also compared with a fresh generator
                     advanced by the modelled number of outputs ("draw
                     accounting"), which covers n = 1, where the order
                     itself shows nothing.  Seeds torch refuses must be
                     refused by dsfs too.  Then RandomSampler(num_samples=K,
                     generator=G) given to a DataLoader with generator=G,
                     without it (the sampler's own generator), and with
                     persistent workers: K below n, n, multiples of n and
                     between them; and with replacement=True (K default,
                     around the sampler's chunks of 32), draws accounted;
                     and SubsetRandomSampler(range(n), generator=G), whose
                     epochs draw one randperm each.  WeightedRandomSampler(
                     weights, K, generator=G) the same three ways, over
                     weights files written with repr(): zeros among them,
                     float32 weights, magnitudes 600 decades apart, n = 1
                     and 100003, K = 1 up to 2n + 3; a negative weight is
                     refused by both.
  torch-distributed  DistributedSampler(num_replicas=W, rank=r, shuffle=True,
                     seed=seed, drop_last=d) with set_epoch(e), every rank,
                     W with n % W != 0, padding longer than n (n < W).
  python-shuffle     random.Random(seed + e).shuffle(list(range(n))),
                     negative and > 64-bit seeds.
  numpy-permutation  numpy.random.RandomState(seed + e).permutation(n),
                     including seeds RandomState refuses (at some epochs);
                     and its shuffle of a list, the same order.
  numpy-generator    numpy.random.default_rng(seed + e).permutation(n)
                     (PCG64 through SeedSequence), seeds of 1 to 5 words
                     and ones default_rng refuses (negative); and its
                     shuffle of a list.
  seeded_once, inplace  the three script shuffles with a generator made
                     once and drawing on epoch after epoch (rng.permutation
                     each epoch), with one list shuffled again each epoch
                     (random.Random(seed + e).shuffle(files)), and both
                     (random.seed(seed), then random.shuffle(files) each
                     epoch; numpy.random.seed and numpy.random.shuffle).
  sequential         DataLoader(shuffle=False).
"""
import collections
import os
import shutil
import sys
import tempfile
import time
import random
import subprocess

import numpy
import torch
from torch.utils.data import (DataLoader, Dataset, RandomSampler,
                              SubsetRandomSampler, WeightedRandomSampler)
from torch.utils.data.distributed import DistributedSampler

NS = (1, 2, 7, 1000, 100003)
EPOCHS = 4
TORCH_SEEDS = (0, 1, 42, -1, -7, 2**32 + 5, 2**63 - 1, 2**64 - 1,
               -2**63, 2**64, -2**63 - 1)
# num_workers=2 forks workers per iterator: a subset of seeds keeps it quick.
TORCH_WORKER_SEEDS = (42, -7, 2**64 - 1)
PYTHON_SEEDS = (0, 1, 42, -1, -7, 2**32 + 5, 2**63 - 1, 2**64 - 1,
                10**30, -10**30, 2**4000 + 12345)
NUMPY_SEEDS = (0, 1, 42, -1, -7, 2**32 - 3, 2**32 + 5, 2**63 - 1, 2**64 - 1)
# SeedSequence takes every word of the seed: pools of 1 to 5 words.
NUMPY_GENERATOR_SEEDS = NUMPY_SEEDS + (2**96 - 2, 2**128 + 3, 10**40, -2)
MAX_REPORTS = 20


class Indices(Dataset):
    """n samples; sample i is the integer i."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i


def as_list(batch):
    """collate_fn: keep a batch as the list of its indices."""
    return batch


class Dump:
    """sampler-dump --batch as a co-process answering one query at a time."""

    def __init__(self, path):
        self.proc = subprocess.Popen([path, "--batch"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def ask(self, query):
        self.proc.stdin.write(query + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            sys.exit("golden_sampler: sampler-dump died on: " + query)
        return line.rstrip("\n")

    def close(self):
        self.proc.stdin.close()
        return self.proc.wait()


def first_difference(want, got):
    w, g = want.split(), got.split()
    for i, (a, b) in enumerate(zip(w, g)):
        if a != b:
            return "position %d: library %s, dsfs %s (lengths %d, %d)" % (
                i, a, b, len(w), len(g))
    return "lengths differ: library %d, dsfs %d" % (len(w), len(g))


class Checker:
    """Compares expected orders with sampler-dump's, query by query."""

    def __init__(self, dump):
        self.dump = dump
        self.agreed = {}  # query -> hash of the answer both sides gave
        self.queries = collections.Counter()   # kind -> distinct queries
        self.orders = collections.Counter()    # kind -> library orders compared
        self.refusals = collections.Counter()  # kind -> refusals compared
        self.failures = 0
        self.draws = 0

    def expect(self, query, order, source):
        """order: the library's list of indices, or None if it refused."""
        kind = query.split()[0]
        want = "REFUSED" if order is None else " ".join(map(str, order))
        if order is None:
            self.refusals[kind] += 1
        else:
            self.orders[kind] += 1
        if self.agreed.get(query) == hash(want):
            return
        got = self.dump.ask(query)
        if query not in self.agreed:
            self.queries[kind] += 1
        ok = got.startswith("error:") if order is None else got == want
        if ok:
            self.agreed[query] = hash(want)
            return
        self.fail(query, source, "library refused, dsfs gave an order"
                  if order is None else got if got.startswith("error:")
                  else first_difference(want, got))

    def fail(self, what, source, detail):
        self.failures += 1
        if self.failures <= MAX_REPORTS:
            print("MISMATCH %s [%s]: %s" % (what, source, detail[:300]))

    def draws_consumed(self, gen, seed, k, what):
        """gen has drawn exactly k 32-bit outputs since manual_seed(seed)."""
        fresh = torch.Generator().manual_seed(seed)
        if k:
            torch.randperm(k + 1, generator=fresh)  # exactly k draws
        self.draws += 1
        if not torch.equal(gen.get_state(), fresh.get_state()):
            self.fail(what, "draw accounting",
                      "generator state differs from %d outputs drawn" % k)


def torch_random_loader(ck, n, seed, workers, persistent, batch, drop_last):
    """Iterate the real DataLoader EPOCHS times; check orders and draws."""
    opts = " --persistent" if persistent else ""
    source = "DataLoader num_workers=%d persistent=%s batch=%d drop_last=%s" % (
        workers, persistent, batch, drop_last)
    try:
        gen = torch.Generator().manual_seed(seed)
    except RuntimeError:
        for e in range(EPOCHS):
            ck.expect("torch-random %d %d %d%s" % (seed, n, e, opts), None,
                      "manual_seed refused")
        return
    loader = DataLoader(Indices(n), batch_size=batch, shuffle=True,
                        generator=gen, num_workers=workers,
                        persistent_workers=persistent, drop_last=drop_last,
                        collate_fn=as_list)
    for e in range(EPOCHS):
        order = [i for b in loader for i in b]
        query = "torch-random %d %d %d%s" % (seed, n, e, opts)
        if drop_last:
            full = n - n % batch
            got = ck.dump.ask(query).split()[:full]
            if got != [str(i) for i in order]:
                ck.fail(query, source, "drop_last loader: prefix differs")
            ck.orders["torch-random"] += 1
        else:
            ck.expect(query, order, source)
        # Base seed: one random64 (2 outputs) per iterator, once only with
        # persistent workers; randperm(n) and the unused second randperm(n)
        # draw n - 1 outputs each.
        done = e + 1
        model = (2 if persistent else 2 * done) + 2 * (n - 1) * done
        ck.draws_consumed(gen, seed, model, query + " after the epoch")


def cut_loader(ck, n, seed, workers, persistent, batch, cuts):
    """A DataLoader whose epoch e stops after cuts[e] batches (0: whole):
    each epoch's order is sampler-dump's given the epochs cut before it,
    those the loader left before its sampler was done (with workers, the
    sampler runs ahead of the batches taken by prefetch_factor * workers
    batches ahead of those taken, and the batch taken at the break is one
    too: the sampler is done once asked for batch n // batch)."""
    opts = " --persistent" if persistent else ""
    source = "DataLoader num_workers=%d persistent=%s batch=%d cut %s" % (
        workers, persistent, batch, cuts)
    gen = torch.Generator().manual_seed(seed)
    loader = DataLoader(Indices(n), batch_size=batch, shuffle=True,
                        generator=gen, num_workers=workers,
                        persistent_workers=persistent, collate_fn=as_list)
    ahead = 2 * workers
    ncut = 0
    for e, cut in enumerate(cuts):
        order = []
        for k, b in enumerate(loader):
            if k == cut and cut:
                break
            order += b
        query = "torch-random %d %d %d%s --cut-epochs %d" % (seed, n, e, opts,
                                                            ncut)
        got = ck.dump.ask(query).split()
        if got[:len(order)] != [str(i) for i in order]:
            ck.fail(query, source, "epoch %d differs" % e)
        ck.orders["torch-random"] += 1
        if cut and cut + 1 + ahead <= n // batch:
            ncut += 1


def check_torch_random(ck):
    for n in NS:
        big = n > 1000
        for seed in TORCH_SEEDS:
            torch_random_loader(ck, n, seed, 0, False, 1000 if big else 1,
                                False)
        for seed in TORCH_WORKER_SEEDS:
            batch = 2000 if big else 50 if n >= 1000 else 1
            torch_random_loader(ck, n, seed, 2, False, batch, False)
            torch_random_loader(ck, n, seed, 2, True, batch, False)
    torch_random_loader(ck, 7, 42, 0, False, 3, True)
    torch_random_loader(ck, 1000, 42, 2, True, 64, True)
    # Epochs left early: each cut one never draws its second randperm.
    for workers, persistent in ((0, False), (2, False), (2, True)):
        cut_loader(ck, 100, 5, workers, persistent, 4, [3, 0, 0, 2, 1, 0])
        cut_loader(ck, 1000, 2**40 + 7, workers, persistent, 16,
                   [0, 60, 10, 0, 0, 62])
    check_torch_random_num_samples(ck)
    check_torch_weighted(ck)


def num_samples_loader(ck, n, k, way, seed=42, replacement=False,
                       subset=False):
    """RandomSampler(num_samples=k, replacement=...) drawn `way`: default,
    persistent, own; k = 0: the sampler's default (n).  subset: a
    SubsetRandomSampler(range(n)) instead (k and replacement unused)."""
    gen = torch.Generator().manual_seed(seed)
    if subset:
        sampler = SubsetRandomSampler(list(range(n)), generator=gen)
    else:
        sampler = RandomSampler(Indices(n), num_samples=k or None,
                                replacement=replacement, generator=gen)
    kw = {"generator": gen} if way != "own" else {}
    if way == "persistent":
        kw.update(num_workers=2, persistent_workers=True)
    loader = DataLoader(Indices(n), sampler=sampler, collate_fn=as_list,
                        batch_size=1 if (k or n) < 1000 else 100, **kw)
    opts = (" --num-samples %d" % k if k else "") + \
        (" --replacement" if replacement else "") + \
        (" --subset" if subset else "") + \
        {"default": "", "own": " --sampler-generator",
         "persistent": " --persistent"}[way]
    source = "%s, %s generator" % (
        "SubsetRandomSampler" if subset else
        "RandomSampler(num_samples=%d, replacement=%s)" % (k, replacement),
        way)
    # Per epoch: the base seed (2 outputs; once with persistent workers,
    # never for the sampler's own generator), then one output a sample
    # with replacement, one randperm (n - 1 outputs) for a subset, else
    # (k // n + 1) randperms.
    per = (k or n) if replacement else (n - 1) if subset else \
        ((k or n) // n + 1) * (n - 1)
    for e in range(EPOCHS):
        query = "torch-random %d %d %d%s" % (seed, n, e, opts)
        ck.expect(query, [i for b in loader for i in b], source)
        done = e + 1
        base = {"default": 2 * done, "own": 0, "persistent": 2}[way]
        ck.draws_consumed(gen, seed, base + per * done,
                          query + " after the epoch")


def check_torch_random_num_samples(ck):
    for n in (1, 7, 1000):
        for k in sorted({1, max(n // 3, 1), n - 1 or 1, n, n + 1, 2 * n,
                         3 * n + 2}):
            for way in ("default", "own"):
                num_samples_loader(ck, n, k, way)
        for k in sorted({0, 1, 31, 32, 33, 64, 2 * n + 5}):
            for way in ("default", "own"):
                num_samples_loader(ck, n, k, way, replacement=True)
    num_samples_loader(ck, 1000, 300, "persistent")
    num_samples_loader(ck, 7, 17, "persistent", seed=-7)
    num_samples_loader(ck, 1000, 0, "persistent", replacement=True)
    for n in (1, 2, 7, 1000):
        for way in ("default", "own"):
            num_samples_loader(ck, n, 0, way, subset=True)
    num_samples_loader(ck, 1000, 0, "persistent", seed=-7, subset=True)


def weighted_loader(ck, path, weights, k, way, seed=42):
    """WeightedRandomSampler(weights, k, generator=G) drawn `way` (as
    num_samples_loader), weights written to path."""
    n = len(weights)
    gen = torch.Generator().manual_seed(seed)
    kw = {"generator": gen} if way != "own" else {}
    if way == "persistent":
        kw.update(num_workers=2, persistent_workers=True)
    loader = DataLoader(Indices(n), collate_fn=as_list,
                        sampler=WeightedRandomSampler(weights, k,
                                                      generator=gen),
                        batch_size=1 if k < 1000 else 100, **kw)
    opts = " --num-samples %d --replacement --weights %s" % (k, path) + \
        {"default": "", "own": " --sampler-generator",
         "persistent": " --persistent"}[way]
    source = "WeightedRandomSampler(%d weights, %d), %s generator" % (n, k, way)
    for e in range(EPOCHS):
        query = "torch-random %d %d %d%s" % (seed, n, e, opts)
        try:
            order = [i for b in loader for i in b]
        except RuntimeError:  # torch.multinomial refused the weights
            ck.expect(query, None, source + " refused")
            continue
        ck.expect(query, order, source)
        # per epoch: the base seed as for RandomSampler, then a random64
        # (2 outputs) a draw
        base = {"default": 2 * (e + 1), "own": 0, "persistent": 2}[way]
        ck.draws_consumed(gen, seed, base + 2 * k * (e + 1),
                          query + " after the epoch")


def check_torch_weighted(ck):
    rng = random.Random(5)
    cases = [
        [1.0],
        [0.0, 3.0],
        [rng.random() for _ in range(7)],
        [rng.random() * 10 if rng.random() > 0.3 else 0.0
         for _ in range(1000)],
        [float(x) for x in torch.rand(
            100003, generator=torch.Generator().manual_seed(3))],
        [rng.choice((1e-300, 1.0, 1e300)) for _ in range(50)],
    ]
    tmp = tempfile.mkdtemp(prefix="golden-weights.")
    try:
        for i, w in enumerate(cases):
            path = os.path.join(tmp, "w%d" % i)
            with open(path, "w") as f:
                f.write("".join(repr(x) + "\n" for x in w))
            n = len(w)
            ks = (1, 1000) if n > 1000 else sorted({1, 5, n, 2 * n + 3})
            for k in ks:
                for way in ("default", "own"):
                    weighted_loader(ck, path, w, k, way, seed=rng.choice(
                        (0, 42, -7, 2**64 - 1)))
            if n == 1000:
                weighted_loader(ck, path, w, 300, "persistent")
        path = os.path.join(tmp, "negative")
        with open(path, "w") as f:
            f.write("1.0\n-1.0\n")
        weighted_loader(ck, path, [1.0, -1.0], 4, "default")
    finally:
        shutil.rmtree(tmp)


def check_torch_distributed(ck):
    for n in NS:
        worlds = (1, 3, 4, 8) if n <= 7 else (3, 4)
        for seed in TORCH_SEEDS:
            for e in range(EPOCHS):
                for world in worlds:
                    for drop in (False, True):
                        for rank in range(world):
                            distributed_one(ck, n, seed, e, world, rank, drop)
    # A script's own torch.randperm(n, generator=manual_seed(seed + epoch))
    # is world 1's order (dsfs.8, sampler=).
    for n in NS:
        for seed in TORCH_SEEDS:
            for e in range(EPOCHS):
                try:
                    order = torch.randperm(n, generator=torch.Generator()
                                           .manual_seed(seed + e)).tolist()
                except RuntimeError:
                    order = None
                ck.expect("torch-distributed %d %d %d --world 1" % (seed, n, e),
                          order, "torch.randperm(manual_seed(seed + epoch))")


def distributed_one(ck, n, seed, e, world, rank, drop):
    query = "torch-distributed %d %d %d --world %d --rank %d%s" % (
        seed, n, e, world, rank, " --drop-last" if drop else "")
    sampler = DistributedSampler(Indices(n), num_replicas=world, rank=rank,
                                 shuffle=True, seed=seed, drop_last=drop)
    sampler.set_epoch(e)
    try:
        order = list(sampler)
    except RuntimeError:  # manual_seed(seed + epoch) out of range
        order = None
    ck.expect(query, order, "DistributedSampler")


def check_python(ck):
    for n in NS:
        for seed in PYTHON_SEEDS:
            for e in range(EPOCHS):
                x = list(range(n))
                random.Random(seed + e).shuffle(x)
                ck.expect("python-shuffle %d %d %d" % (seed, n, e), x,
                          "random.Random(seed + epoch).shuffle")


def check_numpy_kind(ck, kind, seeds, make, source):
    """make(seed): the generator; its permutation(n) is the epoch's order,
    and so is its shuffle of a list (checked for small n)."""
    for n in NS:
        for seed in seeds:
            for e in range(EPOCHS):
                try:
                    order = make(seed + e).permutation(n).tolist()
                except ValueError:
                    order = None
                query = "%s %d %d %d" % (kind, seed, n, e)
                ck.expect(query, order, source + ".permutation")
                if order is not None and n <= 1000:
                    x = list(range(n))
                    make(seed + e).shuffle(x)
                    ck.expect(query, x, source + ".shuffle(list)")


def check_numpy(ck):
    check_numpy_kind(ck, "numpy-permutation", NUMPY_SEEDS,
                     numpy.random.RandomState, "RandomState(seed + epoch)")


def check_numpy_generator(ck):
    check_numpy_kind(ck, "numpy-generator", NUMPY_GENERATOR_SEEDS,
                     numpy.random.default_rng, "default_rng(seed + epoch)")


# The script shuffles: (kind, the generator from a seed).
SCRIPT_GENS = (("python-shuffle", random.Random),
               ("numpy-permutation", numpy.random.RandomState),
               ("numpy-generator", numpy.random.default_rng))
SCRIPT_SEEDS = (0, 42, 2**32 - 9)


def fresh_list(kind, n):
    return list(range(n)) if kind == "python-shuffle" else numpy.arange(n)


def script_epochs(kind, make, seed, n, once, inplace):
    """The orders of EPOCHS epochs of a script that seeds its generator once
    (once) or with seed + epoch, and shuffles one list again (inplace) or a
    fresh one each epoch."""
    g = make(seed)
    x = fresh_list(kind, n)
    for e in range(EPOCHS):
        if not once and e:
            g = make(seed + e)
        if not inplace and e:
            x = fresh_list(kind, n)
        g.shuffle(x)
        yield [int(i) for i in x]


def check_script_streams(ck):
    modes = ((True, False, "--seeded-once"), (False, True, "--inplace"),
             (True, True, "--seeded-once --inplace"))
    for kind, make in SCRIPT_GENS:
        for n in NS:
            for seed in SCRIPT_SEEDS:
                for once, inplace, flags in modes:
                    for e, order in enumerate(script_epochs(
                            kind, make, seed, n, once, inplace)):
                        ck.expect("%s %d %d %d %s" % (kind, seed, n, e, flags),
                                  order, "%s %s" % (make.__name__, flags))
    # The module-level functions: one hidden generator, one list.
    for n in (7, 1000):
        random.seed(17)
        x = list(range(n))
        numpy.random.seed(17)
        a = numpy.arange(n)
        for e in range(EPOCHS):
            random.shuffle(x)
            numpy.random.shuffle(a)
            ck.expect("python-shuffle 17 %d %d --seeded-once --inplace" % (n, e),
                      x, "random.seed, random.shuffle")
            ck.expect("numpy-permutation 17 %d %d --seeded-once --inplace"
                      % (n, e), a.tolist(), "numpy.random.seed, .shuffle")


def check_sequential(ck):
    for n in NS:
        loader = DataLoader(Indices(n), batch_size=1 if n <= 1000 else 1000,
                            shuffle=False, collate_fn=as_list)
        for e in range(2):
            ck.expect("sequential 0 %d %d" % (n, e),
                      [i for b in loader for i in b], "DataLoader shuffle=False")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: golden_sampler.py PATH/TO/sampler-dump")
    start = time.monotonic()
    torch.set_num_threads(1)
    ck = Checker(Dump(sys.argv[1]))
    print("golden_sampler: torch %s, numpy %s, CPython %s" % (
        torch.__version__, numpy.__version__, sys.version.split()[0]))
    for name, fn in (("torch-random", check_torch_random),
                     ("torch-distributed", check_torch_distributed),
                     ("python-shuffle", check_python),
                     ("numpy-permutation", check_numpy),
                     ("numpy-generator", check_numpy_generator),
                     ("seeded_once, inplace", check_script_streams),
                     ("sequential", check_sequential)):
        t = time.monotonic()
        before = [sum(c.values()) for c in (ck.queries, ck.orders,
                                             ck.refusals)]
        fn(ck)
        q, o, r = (sum(c.values()) - b for c, b in
                   zip((ck.queries, ck.orders, ck.refusals), before))
        print("  %-21s %5d queries, %5d library orders and %3d refusals compared (%.1fs)"
              % (name, q, o, r, time.monotonic() - t))
    print("  draw accounting: %d generator states matched the model" % ck.draws)
    if ck.dump.close():
        ck.fail("sampler-dump --batch", "exit status", "non-zero")
    print("golden_sampler: n in %s, epochs 0..%d: %d mismatches (%.1fs)" % (
        ",".join(map(str, NS)), EPOCHS - 1, ck.failures,
        time.monotonic() - start))
    return 1 if ck.failures else 0


if __name__ == "__main__":
    sys.exit(main())
