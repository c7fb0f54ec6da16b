# SPDX-License-Identifier: GPL-2.0-or-later
"""A real torch DataLoader's epoch times over several roots, from one process (bench/run).

Usage: /usr/bin/python3 loader-serve.py [--seed S] [--batch-size B] [--sleep-ms MS]

The loader of tests/loader.py (ImageFolder read as bytes, num_workers=2,
shuffle=True with torch.Generator().manual_seed(S), a sleep of MS ms per
batch standing for compute) without its byte checks, so an epoch costs what
a training job's data loading costs.  Torch is imported once; bench/run
then sends one command a line on stdin:

    ROOT EPOCHS [warm]

and gets, for a new DataLoader over the ImageFolder ROOT (a fresh generator,
so epoch E reads the order `dsfs --print-plan` gives for epoch E),

    epoch=E samples=N bytes=B seconds=T cpu_busy_s=C

a line per epoch, then "done" (C: the seconds the machine's CPUs were busy
during the epoch, every process's, the daemon's included).  The job starts
cold: the page caches are dropped before the ImageFolder lists ROOT, as
when a training job starts, lists its data set and reads it; with "warm"
nothing is dropped (epoch 0 then reads what earlier runs left cached).  T
covers the epoch only, not the drop or the listing.  It exits at the end
of its input, or with a message on the first error.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import loader  # noqa: E402  (tests/loader.py: the loader the tests check)
from torchvision.datasets import ImageFolder  # noqa: E402


def cpu_busy():
    """Seconds all CPUs have spent busy since boot (/proc/stat: user, nice,
    system, irq and softirq; not idle, iowait or steal)."""
    with open("/proc/stat") as f:
        t = [int(v) for v in f.readline().split()[1:8]]
    return (t[0] + t[1] + t[2] + t[5] + t[6]) / os.sysconf("SC_CLK_TCK")


def epoch(dl, sleep_ms):
    """One pass over the DataLoader; returns (samples, bytes, seconds, CPU
    seconds busy meanwhile, on the whole machine)."""
    n = nbytes = 0
    t, c = time.monotonic(), cpu_busy()
    for batch in dl:
        for _, data, _ in batch:
            n += 1
            nbytes += len(data)
        if sleep_ms:
            time.sleep(sleep_ms / 1000)
    return n, nbytes, time.monotonic() - t, cpu_busy() - c


def serve(a, line):
    root, epochs, *warm = line.split()
    if warm != ["warm"]:
        if warm:
            sys.exit("loader-serve.py: unknown word %r" % " ".join(warm))
        loader.drop_caches()
    # tests/loader.py's own parser: every loader option takes its default.
    opts = loader.parse_args([root, "--mode", "torch-random", "--seed", str(a.seed),
                              "--batch-size", str(a.batch_size), "--workers", "2"])
    ds = loader.Indexed(ImageFolder(root, loader=loader.read_bytes))
    dl, _ = loader.make_loader(opts, ds)
    for e in range(int(epochs)):
        n, nbytes, secs, busy = epoch(dl, a.sleep_ms)
        if n != len(ds):
            sys.exit("loader-serve.py: %s epoch %d: %d samples of %d" % (root, e, n, len(ds)))
        print("epoch=%d samples=%d bytes=%d seconds=%.3f cpu_busy_s=%.2f" %
              (e, n, nbytes, secs, busy), flush=True)
    print("done", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--sleep-ms", type=float, default=0)
    a = ap.parse_args()
    for line in sys.stdin:
        serve(a, line)


if __name__ == "__main__":
    main()
