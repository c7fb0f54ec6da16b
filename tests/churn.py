# SPDX-License-Identifier: GPL-2.0-or-later
"""churn: the backing tree changes under busy readers of the mount.

    churn.py BACKING MNT READERS SECONDS [strict]

One thread mutates files below BACKING for SECONDS: replaces them (write
a new file, rename it over), truncates them, appends to them, deletes
them, and renames whole directories away and back.  READERS threads read
whole files through MNT meanwhile.  A read may fail (the file is gone, or
its name moved), but every 4 KiB page it returns must be that page of some
content the file has had (a read racing a change may mix versions page by
page, as on any filesystem): never bytes that were never there.  One
kernel race is counted apart ("padded"): a page of an older, shorter
version, zero-filled past its end, read into the kernel's page cache
across the page drop that the file's growth caused.  Every content is
recorded before it is written.  With "strict" (a mount with -o direct_io,
which keeps no kernel page cache) a padded page is a violation too.  After the churn and a settling second,
every file reads through MNT exactly as it is on BACKING, deleted files
give ENOENT, and so do the old names of renamed directories.
Prints a summary and exits 0, or prints every violation and exits 1.
"""
import errno
import os
import random
import sys
import threading
import time

PAGE = 4096

def main():
    backing, mnt, nreaders, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    strict = sys.argv[5:] == ["strict"]
    paths = sorted(os.path.relpath(os.path.join(d, f), backing)
                   for d, _, fs in os.walk(backing) for f in fs)
    versions = {p: [open(os.path.join(backing, p), "rb").read()] for p in paths}
    lock = threading.Lock()
    deleted, moved = set(), {}  # moved: old directory -> new name
    bad, padded = [], []
    counts = {"reads": 0, "errors": 0, "bytes": 0, "padded": 0,
                       "replace": 0, "truncate": 0, "append": 0, "delete": 0, "rename": 0}
    end = time.monotonic() + seconds

    def mutate(rng):
        p = rng.choice(paths)
        with lock:
            if p in deleted or os.path.dirname(p) in moved:
                return
            cur = versions[p][-1]
            real = os.path.join(backing, p)
            op = rng.choices(["replace", "truncate", "append", "delete", "rename"],
                             [8, 4, 4, 1, 1])[0]
            if op == "replace":
                new = rng.randbytes(rng.randrange(0, 200000))
                versions[p].append(new)
                tmp = real + ".tmp"
                with open(tmp, "wb") as f:
                    f.write(new)
                os.rename(tmp, real)
            elif op == "truncate":
                new = cur[:rng.randrange(0, len(cur) + 1)]
                versions[p].append(new)
                os.truncate(real, len(new))
            elif op == "append":
                extra = rng.randbytes(rng.randrange(1, 100000))
                versions[p].append(cur + extra)
                with open(real, "ab") as f:
                    f.write(extra)
            elif op == "delete":
                deleted.add(p)
                os.unlink(real)
            else:
                d = os.path.dirname(p)
                moved[d] = d + ".moved"
                os.rename(os.path.join(backing, d), os.path.join(backing, moved[d]))
            counts[op] += 1

    def restore_dirs():
        with lock:
            for d, m in list(moved.items()):
                os.rename(os.path.join(backing, m), os.path.join(backing, d))
                del moved[d]

    def mutator():
        rng = random.Random(1)
        last_restore = time.monotonic()
        while time.monotonic() < end:
            mutate(rng)
            if time.monotonic() - last_restore > 1:
                restore_dirs()  # names come back, under the same inodes
                last_restore = time.monotonic()
            time.sleep(0.005)
        restore_dirs()

    def check(p, data):
        # A read racing a change may mix versions page by page (the
        # kernel's page cache holds pages apart, as on any filesystem), but
        # every page must be what that page of the file was at some time.
        with lock:
            known = list(versions[p])
        for off in range(0, len(data), PAGE):
            page = data[off:off + PAGE]
            if not any(v[off:off + len(page)] == page for v in known):
                # Say what the page looks like: an old end of the file
                # padded with zeros, or something else.
                ends = [len(v) for v in known if off < len(v) < off + len(page)
                        and page[:len(v) - off] == v[off:]
                        and not page[len(v) - off:].strip(b"\0")]
                if ends and not strict:
                    # The kernel's page of an old, shorter file (zeros past
                    # its end) outliving the page drop that the growth
                    # caused: a read in flight across the drop.  dsfs
                    # narrows the window (delayed second drop, size check
                    # on short reads) but cannot close it from user space:
                    # counted and reported, not failed.
                    with lock:
                        counts["padded"] += 1
                        padded.append("%s: bytes %d..%d: an old end at %d padded with zeros"
                                      % (p, off, off + len(page), ends[0]))
                    return
                bad.append("%s: bytes %d..%d (of %d read) were never its content there"
                           % (p, off, off + len(page), len(data)))
                return

    def reader(seed):
        rng = random.Random(seed)
        while time.monotonic() < end:
            p = rng.choice(paths)
            try:
                with open(os.path.join(mnt, p), "rb") as f:
                    data = f.read()
            except OSError:
                with lock:
                    counts["errors"] += 1
                continue
            check(p, data)
            with lock:
                counts["reads"] += 1
                counts["bytes"] += len(data)

    threads = [threading.Thread(target=mutator)] + \
        [threading.Thread(target=reader, args=(i + 10,)) for i in range(nreaders)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    time.sleep(1)  # change notifications reach the daemon
    for p in paths:
        try:
            with open(os.path.join(mnt, p), "rb") as f:
                got = f.read()
        except OSError as e:
            if p not in deleted:
                bad.append("%s: %s after the churn" % (p, os.strerror(e.errno)))
            elif e.errno != errno.ENOENT:
                bad.append("%s (deleted): %s, not ENOENT" % (p, os.strerror(e.errno)))
            continue
        if p in deleted:
            bad.append("%s: deleted, still readable (%d bytes)" % (p, len(got)))
        elif got != open(os.path.join(backing, p), "rb").read():
            bad.append("%s: reads %d bytes that are not its current content" % (p, len(got)))
    for d in {os.path.dirname(p) for p in paths}:
        if os.path.exists(os.path.join(mnt, d + ".moved")):
            bad.append("%s.moved: the old name of a renamed directory still exists" % d)
    for b in bad[:20]:
        print("BAD", b)
    for b in padded[:5]:
        print("PADDED", b)
    print(" ".join("%s %d" % kv for kv in counts.items()), "bad", len(bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
