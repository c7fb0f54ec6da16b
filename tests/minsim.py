# SPDX-License-Identifier: GPL-2.0-or-later
"""Offline furthest-next-use (Belady's MIN) simulation of a cache over planned epochs.

Usage: /usr/bin/python3 minsim.py [--page-size P] [--json] ROOT BUDGET ORDER...

ORDER files list paths relative to ROOT, one a line, as `dsfs --print-plan`
prints an epoch.  All but the last ORDER are read, one file after the other;
the last gives only each file's next use after them.  The cache holds
BUDGET bytes in pages of P bytes (default 4096; a file takes its size
rounded up to pages) and keeps what is used again soonest: on a miss it
evicts the file whose next use is furthest, as long as that is later than
the missed file's own next use (otherwise the missed file is not admitted).
No prefetch: the first read of every epoch-0 file misses.  Empty files are
never cached.  This is the bound the next-use eviction of dsfs is measured
against (tests/t-nextuse.sh, bench/run).

Prints the byte hit ratio in percent ("%.2f"), or with --json the counts:
{"hit_bytes", "read_bytes", "hit_pct", "budget_pages", "files", "epochs"}.
O(total accesses * log(files)) time, O(files) memory.
"""
import argparse
import heapq
import json
import os
import sys


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--page-size", type=int, default=4096)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("root")
    ap.add_argument("budget", type=int, help="cache size in bytes")
    ap.add_argument("orders", nargs="+", metavar="ORDER")
    a = ap.parse_args()
    if len(a.orders) < 2:
        ap.error("give the epochs read and one more ORDER for their next uses")
    if a.page_size < 1 or a.budget < 0:
        ap.error("--page-size must be positive and BUDGET not negative")
    return a


def simulate(orders, size, pages, budget):
    """MIN over orders[:-1]; returns (hit_bytes, read_bytes)."""
    n = len(orders[0])
    pos = [{p: i for i, p in enumerate(o)} for o in orders]
    never = float("inf")
    cached = {}  # file -> its next use (a global position)
    heap = []  # (-next use, file); entries whose next use moved on are stale
    used = hit = total = 0
    for e, order in enumerate(orders[:-1]):
        for p in order:
            total += size[p]
            nxt = (e + 1) * n + pos[e + 1].get(p, never)
            if p in cached:
                hit += size[p]
                cached[p] = nxt
                heapq.heappush(heap, (-nxt, p))
                continue
            if not pages[p]:
                continue
            while used + pages[p] > budget:
                while heap and cached.get(heap[0][1]) != -heap[0][0]:
                    heapq.heappop(heap)
                if not heap or -heap[0][0] <= nxt:
                    break
                far = heapq.heappop(heap)[1]
                used -= pages[far]
                del cached[far]
            if used + pages[p] <= budget:
                cached[p] = nxt
                used += pages[p]
                heapq.heappush(heap, (-nxt, p))
    return hit, total


def main():
    a = parse_args()
    orders = [[line.rstrip("\n") for line in open(f)] for f in a.orders]
    names = set().union(*orders)
    size = {p: os.stat(os.path.join(a.root, p)).st_size for p in names}
    pages = {p: (s + a.page_size - 1) // a.page_size for p, s in size.items()}
    budget = a.budget // a.page_size
    hit, total = simulate(orders, size, pages, budget)
    pct = 100.0 * hit / total if total else 0.0
    if a.json:
        json.dump({"hit_bytes": hit, "read_bytes": total, "hit_pct": round(pct, 2),
                   "budget_pages": budget, "files": len(names),
                   "epochs": len(orders) - 1}, sys.stdout)
        print()
    else:
        print("%.2f" % pct)


if __name__ == "__main__":
    main()
