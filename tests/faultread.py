# SPDX-License-Identifier: GPL-2.0-or-later
"""faultread: readers that must never see a wrong byte, whatever happens to
the mount or the volume under them.

    faultread.py MANIFEST ROOT THREADS SECONDS [--stop-file F]

MANIFEST has one "sha256 size path" line per file (paths relative to ROOT),
written before the fault.  THREADS threads read whole files in a seeded
random order for SECONDS (or until F exists).  Every read either returns
exactly the manifest's bytes, or fails with an OSError; anything else (a
short or different content, a read that takes over 30 s) is a failure.
Prints "ok N errors E errnos {...}" and exits 0, or prints each wrong read
and exits 1.
"""
import hashlib
import os
import random
import sys
import threading
import time


def main():
    manifest, root, threads, seconds = sys.argv[1:5]
    stop_file = sys.argv[6] if len(sys.argv) > 6 and sys.argv[5] == "--stop-file" else None
    files = []
    for line in open(manifest):
        digest, size, path = line.rstrip("\n").split(" ", 2)
        files.append((path, int(size), digest))
    deadline = time.monotonic() + float(seconds)
    lock = threading.Lock()
    stats = {"ok": 0, "errors": 0, "bad": 0, "errnos": {}}

    def worker(seed):
        rng = random.Random(seed)
        while time.monotonic() < deadline:
            if stop_file and os.path.exists(stop_file):
                return
            path, size, digest = files[rng.randrange(len(files))]
            t0 = time.monotonic()
            try:
                with open(os.path.join(root, path), "rb") as f:
                    data = f.read()
            except OSError as e:
                with lock:
                    stats["errors"] += 1
                    stats["errnos"][e.errno] = stats["errnos"].get(e.errno, 0) + 1
                continue
            took = time.monotonic() - t0
            wrong = len(data) != size or hashlib.sha256(data).hexdigest() != digest
            with lock:
                if wrong or took > 30:
                    stats["bad"] += 1
                    print("BAD %s: %d bytes (want %d), %.1f s%s" % (
                        path, len(data), size, took,
                        ", content differs" if wrong else ""), flush=True)
                else:
                    stats["ok"] += 1

    pool = [threading.Thread(target=worker, args=(i,)) for i in range(int(threads))]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    print("ok %d errors %d errnos %s" % (stats["ok"], stats["errors"], stats["errnos"]))
    sys.exit(1 if stats["bad"] else 0)


if __name__ == "__main__":
    main()
