# SPDX-License-Identifier: GPL-2.0-or-later
"""golden_discover: discover-find finds the seeds the real torch drew.

Usage: /usr/bin/python3 golden_discover.py PATH/TO/discover-find

A real DataLoader(shuffle=True) without a generator, after
torch.manual_seed(GLOBAL_SEED) and a model whose initialisation consumes
the global RNG, runs EPOCHS epochs (num_workers 0 and 2).  Before each
epoch a copy of the global RNG state tells which seed the epoch will use:
the iterator first draws the workers' base seed, then the RandomSampler
draws `seed = int(torch.empty((), dtype=torch.int64).random_().item())`
and seeds a fresh torch.Generator with it; MT19937 keeps the low 32 bits.
The script checks that model against the first PREFIX indices of the
loader's real order (so a torch that draws differently fails here, not in
dsfs; leaving an epoch early draws nothing more from the global RNG), then asks discover-find to
search a slice of SLICE seeds around the effective seed from the epoch's
first opens: in order, and as two workers with batches of 16 would open
them (heads 2, window 16).  It must report exactly that seed, and nothing on
the slice just above it.
"""
import subprocess
import sys
import time

import torch
from torch.utils.data import DataLoader

GLOBAL_SEED = 1234
EPOCHS = 3
NS = (1000, 100003)
OPENS = 16
PREFIX = 64  # of each epoch's order, compared with the model
SLICE = 1 << 21
SEEDS = 1 << 32


def epoch_seed():
    """The seed the next epoch's RandomSampler draws, from a state copy."""
    state = torch.get_rng_state()
    torch.empty((), dtype=torch.int64).random_()  # the iterator's base seed
    seed = int(torch.empty((), dtype=torch.int64).random_().item())
    torch.set_rng_state(state)
    return seed


def first_indices(loader):
    """The epoch's first PREFIX indices; the rest of it draws nothing."""
    order = []
    for batch in loader:
        order += [int(i) for i in batch]
        if len(order) >= PREFIX:
            return order[:PREFIX]
    return order


def two_workers(order):
    """Batches of 16: worker 1 (positions 16..31) opens first, then 0."""
    opens = []
    for k in range(OPENS // 2):
        opens += [order[16 + k], order[k]]
    return opens


def find(tool, n, lo, hi, opens, extra=()):
    out = subprocess.run([tool, *extra, str(n), "%d-%d" % (lo, hi),
                          *map(str, opens)], check=True, text=True,
                         stdout=subprocess.PIPE).stdout
    return out.split()[0].split("=")[1], out.strip()


def check_epoch(tool, n, seed, order):
    """The failures for one epoch: [] when every search answered right."""
    low = seed & 0xffffffff
    g = torch.Generator()
    g.manual_seed(low)
    if torch.randperm(n, generator=g).tolist()[:PREFIX] != order:
        return ["model: randperm(%d) from seed %d's low 32 bits is not the "
                "loader's order" % (n, seed)]
    lo, hi = max(0, low - SLICE // 2), min(SEEDS, low + SLICE // 2)
    bad = []
    for opens, extra in ((order[:OPENS], ()),
                         (two_workers(order), ("-H", "2", "-w", "16"))):
        got, line = find(tool, n, lo, hi, opens, extra)
        if got != str(low):
            bad.append("n=%d seed %d: want %d, %s" % (n, seed, low, line))
    if low + 1 < SEEDS:
        got, line = find(tool, n, low + 1, min(SEEDS, low + 1 + SLICE),
                         order[:OPENS])
        if got != "none":
            bad.append("n=%d: above seed %d: %s" % (n, low, line))
    return bad


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: golden_discover.py PATH/TO/discover-find")
    start, failures, epochs = time.monotonic(), [], 0
    torch.set_num_threads(1)
    torch.manual_seed(GLOBAL_SEED)
    torch.nn.Linear(64, 64)  # model initialisation draws from the global RNG
    for n in NS:
        for workers in (0, 2):
            loader = DataLoader(range(n), batch_size=8, shuffle=True,
                                num_workers=workers)
            for _ in range(EPOCHS):
                seed = epoch_seed()
                order = first_indices(loader)
                failures += check_epoch(sys.argv[1], n, seed, order)
                epochs += 1
    for f in failures:
        print("MISMATCH " + f)
    print("golden_discover: torch %s, %d epochs, %d mismatches (%.1fs)" % (
        torch.__version__, epochs, len(failures), time.monotonic() - start))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
