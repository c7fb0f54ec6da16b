# SPDX-License-Identifier: GPL-2.0-or-later
"""Golden test of prefetch/layout against the real libraries.

Usage: /usr/bin/python3 golden_layout.py LAYOUT_DUMP WORKDIR

Builds trap trees under WORKDIR (SAMPLERS.md section 5 and more), runs
LAYOUT_DUMP on each and compares its samples with
torchvision.datasets.ImageFolder(root).samples (imagefolder) and with Python's
sorted() of the lstat-regular files found by os.walk(followlinks=False)
(sorted), and with the unsorted lists of os.walk, glob.glob(recursive=True)
and pathlib's rglob (walk: every file they list, symlinks to files too).  Sizes and prefetchable flags are compared with a model of openat2
RESOLVE_BENEATH from the SOURCE root.  Exit 0 when everything matches, 1 with
the first differences otherwise.  One process for every tree.
"""
import glob
import os
import pathlib
import random
import stat
import subprocess
import sys

from torchvision.datasets import DatasetFolder, ImageFolder
from torchvision.datasets.folder import IMG_EXTENSIONS, find_classes, make_dataset

DUMP = sys.argv[1]
WORK = os.fsencode(os.path.abspath(sys.argv[2]))
SRC = os.path.join(WORK, b"src")      # the SOURCE root
OUT = os.path.join(WORK, b"outside")  # next to it, outside SOURCE
failed = False


def put(path, size=0):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(b"x" * size)


def link(target, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.symlink(target, path)


def b(s):
    return s if isinstance(s, bytes) else os.fsencode(s)


def build_traps():
    """Every trap of SAMPLERS.md section 5, and the symlink cases."""
    t = os.path.join(SRC, b"traps")
    cat = os.path.join(t, b"cat")
    names = ["1.jpg", "2.JPG", "3.Png", "4.txt", ".hidden.jpg", "z.jpeg",
             "x.TIFF", "x.tif", "y.PGM", "z.ppm", "w.WebP", "b.BMP", "noext",
             "x.jpg.txt", "jpg", ".jpg", "new\nline.jpg", "ta\tb.jpg",
             "back\\slash.png", "Z.jpg", "~.jpg", "sp ace.jpg",
             "a-b/x.jpg", "a/x/y.jpg", "a/f.png", "a.b/q.bmp", "a_b/r.jpg",
             "ab/s.jpg", "A/t.jpg", ".hid/h.jpg", ".hid/.h2.png",
             "only_txt/readme.txt", "a-b/a/deeper.jpg", "a/x-y/z.jpg",
             "/".join("d%d" % i for i in range(40)) + "/deep.tif"]
    uni = ["é.jpg", "日本.png", "\U0001F600.webp", "\ue000.jpg", "e\u0301.jpg",
           b"\xff.jpg", b"\x80x.jpg", b"\xed\xa0\x80.jpg", b"\xc3.jpg",
           b"\xe2\x82.jpg", b"\xe2\x82\xac.jpg", b"\xf0\x9f.jpg", b"\xc0\xaf.jpg",
           b"\xf4\x90\x80\x80.jpg", b"\xef\xbf\xbf.jpg", b"\xe0\x80\x80.jpg",
           b"\xffdir/a.jpg", "édir/a.jpg", "\ue000dir/a.jpg", b"\x7fdir/a.jpg",
           b"\xed\x9f\xbf.jpg", b"\xee\x80\x80x.jpg",
           # for DatasetFolder's extensions: U+212A lowers to "k", U+0130
           # to "i" and a combining dot
           "x.p\u212a", "y.m\u212av", "z.\u0130k", "w.p\u0130", b"v.p\xaa",
           b"u.\x84\xaa", "t.PK", "s.npy", "r.NPY", "q.Wav", "p.tar.GZ",
           "onpy", "n.npy.bak", "m.k\u212a"]
    for i, n in enumerate(names + ["u/" + n if isinstance(n, str) else b"u/" + n
                                   for n in uni]):
        put(os.path.join(cat, b(n)), i)
    os.makedirs(os.path.join(cat, b"emptysub"))
    os.makedirs(os.path.join(cat, b"a/emptier"))
    os.mkfifo(os.path.join(cat, b"fifo.jpg"))
    link(b"1.jpg", os.path.join(cat, b"link_to_file.jpg"))
    link(b"nonexistent", os.path.join(cat, b"x.jpg"))  # broken symlink
    link(os.path.join(OUT, b"o.jpg"), os.path.join(cat, b"outfile.jpg"))
    link(b"../../../outside/o.jpg", os.path.join(cat, b"relout.jpg"))
    link(os.path.join(cat, b"1.jpg"), os.path.join(cat, b"absin.jpg"))
    link(b"../dog/d.jpg", os.path.join(cat, b"sibling.jpg"))
    link(b"../dog/sub", os.path.join(cat, b"sublink"))
    link(os.path.join(OUT, b"dir"), os.path.join(cat, b"outdir"))
    link(b"a", os.path.join(cat, b"dirlink.jpg"))
    for n, size in ((b"dog/d.jpg", 7), (b"dog/sub/s1.png", 8),
                    (b"dog/sub/s2.jpg", 9), (b".hidden_class/h.jpg", 3),
                    (b"Zebra/z.jpg", 4), ("ünï/u.jpg", 5), (b"\xffcls/c.jpg", 6),
                    (b"a-b/k.jpg", 1), (b"a/k.jpg", 2), (b"root.jpg", 1)):
        put(os.path.join(t, b(n)), size)
    link(b"cat", os.path.join(t, b"lion"))
    link(os.path.join(OUT, b"tigerdir"), os.path.join(t, b"tiger"))
    link(b"cat/1.jpg", os.path.join(t, b"notaclass"))
    link(b"nowhere", os.path.join(t, b"broken_class"))
    put(os.path.join(OUT, b"o.jpg"), 11)
    put(os.path.join(OUT, b"dir/o1.jpg"), 12)
    put(os.path.join(OUT, b"dir/sub/o2.png"), 13)
    link(os.path.join(t, b"dog"), os.path.join(OUT, b"dir/back"))
    put(os.path.join(OUT, b"tigerdir/t.jpg"), 14)
    return t


def build_empty():
    """Classes without images: torchvision 0.14 raises for them."""
    t = os.path.join(SRC, b"emptyclass")
    put(os.path.join(t, b"a/1.jpg"), 1)
    os.makedirs(os.path.join(t, b"b"))
    put(os.path.join(t, b"c/readme.txt"), 1)
    os.makedirs(os.path.join(t, b"d/sub"))
    put(os.path.join(t, b"e/x/2.png"), 2)
    return t


def build_big(n=12000):
    """Thousands of files under names built to collide in order; enough for
    the parallel stat pass to use helpers."""
    t = os.path.join(SRC, b"big")
    rnd = random.Random(20240601)
    parts = ["a", "a-b", "a.b", "a_b", "ab", "A", "a b", "é", "z", "0", "~",
             "\ue000", b"\xe9", b"\xff"]
    exts = [".jpg", ".JPG", ".jpeg", ".png", ".Png", ".txt", ".TIFF", "",
            ".webp", ".bmp"]
    for i in range(n):
        depth = rnd.choice([0, 0, 1, 1, 2, 3])
        comps = [b("c%02d" % rnd.randrange(15))]
        comps += [b(rnd.choice(parts)) for _ in range(depth)]
        name = b(rnd.choice(parts)) + b"%d" % i + b(rnd.choice(exts))
        put(os.path.join(t, *comps, name), rnd.randrange(50))
    return t


def beneath(rel):
    """Where SRC/rel leads under openat2 RESOLVE_BENEATH, or None."""
    parts = [p for p in rel.split(b"/") if p not in (b"", b".")]
    cur, links = [], 0
    while parts:
        p = parts.pop(0)
        if p == b"..":
            if not cur:
                return None
            cur.pop()
            continue
        path = os.path.join(SRC, *cur, p)
        try:
            st = os.lstat(path)
        except OSError:
            return None
        if stat.S_ISLNK(st.st_mode):
            links += 1
            target = os.readlink(path)
            if links > 40 or target.startswith(b"/"):
                return None
            parts = [q for q in target.split(b"/") if q not in (b"", b".")] + parts
            continue
        cur.append(p)
    return os.path.join(SRC, *cur)


def expect(ds_rel, rels):
    """(path, size, prefetchable) for sample paths relative to the dataset."""
    out = []
    for r in rels:
        real = beneath(os.path.join(ds_rel, r) if ds_rel != b"." else r)
        st = os.stat(real) if real else None
        ok = st is not None and stat.S_ISREG(st.st_mode)
        out.append((r, st.st_size if ok else 0, ok))
    return out


def unescape(p):
    out, i = bytearray(), 0
    while i < len(p):
        if p[i:i + 1] == b"\\":
            out += {b"\\": b"\\", b"t": b"\t", b"n": b"\n"}[p[i + 1:i + 2]]
            i += 2
        else:
            out += p[i:i + 1]
            i += 1
    return bytes(out)


def dump(root, ds_rel, kind, opts=()):
    r = subprocess.run([DUMP, "-i", *opts, root, ds_rel, kind],
                       capture_output=True)
    if r.returncode:
        raise SystemExit("layout-dump failed: %r" % r.stderr)
    rows = []
    for line in r.stdout.split(b"\n")[:-1]:
        idx, path, size, pf = line.split(b"\t")
        assert int(idx) == len(rows)
        rows.append((unescape(path), int(size), pf == b"1"))
    return rows, r.stderr.decode().strip()


def compare(name, got, want, info):
    global failed
    if got == want:
        npf = sum(1 for r in want if not r[2])
        print("golden: %-22s %5d samples match (%d not prefetchable)  [%s]"
              % (name, len(want), npf, info))
        return
    failed = True
    print("golden: %s MISMATCH: dsfs %d samples, expected %d"
          % (name, len(got), len(want)))
    shown = 0
    for i in range(max(len(got), len(want))):
        g = got[i] if i < len(got) else None
        w = want[i] if i < len(want) else None
        if g != w:
            print("  [%d] dsfs %r\n  [%d] want %r" % (i, g, i, w))
            shown += 1
            if shown == 8:
                break


def rel_samples(root, samples):
    pre = root + b"/"
    return [os.fsencode(p)[len(pre):] for p, _ in samples]


def check_imagefolder(name, root, ds_rel, exts=None):
    """ImageFolder(root), or with exts (a tuple, or one str) the
    DatasetFolder given them, against layout-dump (-x for exts)."""
    try:
        if exts is None:
            samples = ImageFolder(os.fsdecode(root)).samples
        else:
            samples = DatasetFolder(os.fsdecode(root), loader=open,
                                    extensions=exts).samples
    except FileNotFoundError:
        # torchvision 0.14 refuses empty classes; the order it would give
        # (allow_empty=True in newer releases) is make_dataset class by class.
        samples = []
        classes, idx = find_classes(os.fsdecode(root))
        for c in classes:
            try:
                samples += make_dataset(os.fsdecode(root), {c: idx[c]},
                                        IMG_EXTENSIONS if exts is None
                                        else exts)
            except FileNotFoundError:
                pass
        name += " (empty classes)"
    if exts is not None:
        x = exts if isinstance(exts, str) else ":".join(exts)
        got, info = dump(SRC, ds_rel, "imagefolder", ["-x", x])
        name += " extensions=" + x
    else:
        got, info = dump(SRC, ds_rel, "imagefolder")
    compare("imagefolder " + name, got,
            expect(ds_rel, rel_samples(root, samples)), info)


def check_sorted(name, root, ds_rel):
    rels = []
    for dirpath, _, files in os.walk(os.fsdecode(root), followlinks=False):
        for f in files:
            p = os.path.join(dirpath, f)
            if stat.S_ISREG(os.lstat(p).st_mode):
                rels.append(os.path.relpath(p, os.fsdecode(root)))
    rels = [os.fsencode(r) for r in sorted(rels)]
    got, info = dump(SRC, ds_rel, "sorted")
    compare("sorted " + name, got, expect(ds_rel, rels), info)


def linked_dir(root, rel):
    """Whether a directory on the way to root/rel is a symlink (glob enters
    them; os.walk and rglob do not)."""
    parts = rel.split(b"/")[:-1]
    return any(os.path.islink(os.path.join(root, *parts[:i]))
               for i in range(1, len(parts) + 1))


def check_walk(name, root, ds_rel, suffix=None, skip_hidden=False):
    """layout=walk (-s suffix, -H) against the unsorted lists a script
    builds: the files of os.walk(root) ending in suffix (hidden names
    pruned for skip_hidden); glob.glob(root/**/*SUFFIX, recursive=True)
    (skip_hidden, one suffix) and Path(root).rglob(*SUFFIX) (hidden kept),
    without directories (and, for glob, what it found through a symlinked
    directory)."""
    sfx = tuple(b(x) for x in suffix.split(":")) if suffix else (b"",)
    walked = []
    for dirpath, dirs, files in os.walk(root, followlinks=False):
        if skip_hidden:
            dirs[:] = [d for d in dirs if not d.startswith(b".")]
        for f in files:
            if skip_hidden and f.startswith(b"."):
                continue
            if f.endswith(sfx):
                walked.append(os.path.relpath(os.path.join(dirpath, f), root))
    opts = (["-s", suffix] if suffix else []) + (["-H"] if skip_hidden else [])
    got, info = dump(SRC, ds_rel, "walk", opts)
    label = "walk %s%s%s" % (name, " suffix=" + suffix if suffix else "",
                             " hidden=skip" if skip_hidden else "")
    compare(label + " (os.walk)", got, expect(ds_rel, walked), info)
    if len(sfx) > 1:
        return
    if skip_hidden:
        found = glob.glob(os.path.join(root, b"**", b"*" + sfx[0]),
                          recursive=True)
        how = "glob"
    else:
        found = [os.fsencode(p) for p in
                 pathlib.Path(os.fsdecode(root)).rglob("*" + os.fsdecode(sfx[0]))]
        how = "rglob"
    rels = [os.path.relpath(p, root) for p in found if not os.path.isdir(p)]
    rels = [r for r in rels if not linked_dir(root, r)]
    compare(label + " (%s)" % how, got, expect(ds_rel, rels), info)


def main():
    traps, empty, big = build_traps(), build_empty(), build_big()
    for name, root in (("traps", traps), ("emptyclass", empty), ("big", big)):
        ds_rel = os.path.relpath(root, SRC)
        check_imagefolder(name, root, ds_rel)
        check_sorted(name, root, ds_rel)
        check_walk(name, root, ds_rel)
        check_walk(name, root, ds_rel, skip_hidden=True)
    # Unsorted lists of files ending in a suffix, as given (capitals
    # differ), one or several; hidden names kept or skipped as glob does.
    for name, root, suffix in (("traps", traps, ".jpg"),
                               ("traps", traps, ".JPG:.png:g"),
                               ("big", big, ".jpg"),
                               ("big", big, ".Png:.TIFF")):
        for skip in (False, True):
            check_walk(name, root, os.path.relpath(root, SRC), suffix, skip)
    # DatasetFolder's extensions: a "k" matches U+212A, suffixes without a
    # dot, several dots, a str rather than a tuple.
    for name, root, exts in (
            ("traps", traps, (".npy", ".wav")),
            ("traps", traps, ("k", ".pk", ".tar.gz", "npy", ".jpg", "g")),
            ("traps", traps, ".png"),
            ("emptyclass", empty, (".txt",)),
            ("big", big, (".txt", ".tiff", "0"))):
        check_imagefolder(name, root, os.path.relpath(root, SRC), exts)
    sys.exit(1 if failed else 0)


main()
