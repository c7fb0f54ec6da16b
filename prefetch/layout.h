/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Layouts: sample index -> file, exactly as the training loader's dataset
 * class maps them, so that a sampler's permutation of indices can be turned
 * into the order in which files will be opened.
 *
 *   imagefolder  torchvision.datasets.ImageFolder(DIR).samples order (or a
 *                DatasetFolder's, given its extensions)
 *   sorted       every regular file below DIR, Python sorted() order
 *   walk         every file os.walk(DIR) lists, in its order: each
 *                directory's files as it lists them, then its
 *                subdirectories' one by one (glob's "**", rglob)
 *   list         one path per line of a list file, in line order
 *
 * A layout is built once (at mount or plan change) from two directory fds'
 * worth of context: the SOURCE root and the dataset directory DIR below it.
 * Every sample keeps its size and whether dsfs may prefetch it: a sample
 * whose path resolves outside SOURCE (through a symlink) or to something other
 * than a regular file keeps its index but is never prefetched.
 *
 * Threads and cost: dsfs_layout_build() is called by one thread; for big
 * layouts it borrows up to 8 short-lived helper threads (at most one per
 * online CPU, all signals blocked) for the stat of each sample, and joins
 * them before returning.  Cost: one getdents64 listing and one open per
 * directory, one fstatat per sample, an open per symlink met, an O(n log n)
 * sort; measured 0.2 s for 100,000 files and ~2 s for 1,000,000 on 2 busy
 * vCPUs with a warm cache, 12 s cold (the stats; the listing alone takes
 * about 1.2 s), hence dsfs_layout_build_quick() for mounts.  The built
 * layout is immutable except for the size words that build_quick leaves
 * pending, each settled once (compare-and-swap) by dsfs_layout_settle():
 * every getter and the lookup may be called from any number of threads at
 * once without locks.  Free it once, when no reader is left.  Memory: one
 * string arena holding each path once, 12 bytes per sample and a
 * 4-byte-slot hash table at load 1/4..1/2: path length + 21..29 bytes per
 * sample (~52 bytes for ImageNet-style names).  Building needs little
 * more: one class's names (imagefolder) or 8 bytes per sample (sorted's
 * sort) of scratch.
 *
 * What "inside SOURCE" means: resolving DIR/path from the SOURCE root with
 * openat2 RESOLVE_BENEATH succeeds, i.e. every symlink on the way is
 * relative and stays below SOURCE.  An absolute symlink counts as leaving,
 * even one pointing back into SOURCE: through the mount it leads outside
 * dsfs.  Caveat: a relative symlink that climbs out of SOURCE is followed
 * (for order only) from SOURCE's own location; through the mount the loader
 * resolves it against the mountpoint, so such trees may order differently.
 */
#ifndef DSFS_LAYOUT_H
#define DSFS_LAYOUT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct stat;

enum dsfs_layout_kind {
	DSFS_LAYOUT_IMAGEFOLDER,
	DSFS_LAYOUT_SORTED,
	DSFS_LAYOUT_LIST,
	DSFS_LAYOUT_WALK,
};

struct dsfs_layout;

/*
 * Which names a tree layout keeps beyond its own rule (NULL or false:
 * none given).  extensions: imagefolder, a DatasetFolder's (see
 * dsfs_layout_build).  suffix: sorted and walk, the file names that end
 * in one of these ':'-separated suffixes, compared as given (str.endswith,
 * or glob's "*.jpg").  skip_hidden: sorted and walk, names beginning with
 * '.' left out, files and directories, as glob.glob leaves them.
 */
struct dsfs_layout_names {
	const char *extensions;
	const char *suffix;
	bool skip_hidden;
};

/* What a build met that a caller may want to log; all counts. */
struct dsfs_layout_info {
	uint64_t dirs;		/* directories listed */
	uint64_t loops;		/* symlinked dirs not entered: already an
				   ancestor (Python would loop, see below) */
	uint64_t unreadable;	/* dirs skipped: open or listing failed,
				   as os.walk() skips them */
	uint64_t outside;	/* samples resolving outside SOURCE */
	uint64_t not_regular;	/* samples that are broken links, fifos, ... */
	uint64_t duplicates;	/* list: lines naming an earlier line's path */
	uint64_t empty_classes;	/* imagefolder: classes without a sample
				   (torchvision 0.14 raises for these) */
	uint64_t links;		/* symlinks followed to samples or their
				   directories (a lower bound for lists) */
	uint64_t aliases;	/* samples known by a second path, the one
				   with every symlink resolved */
};

/* "imagefolder", "sorted", "list", "walk"; NULL for an unknown value. */
const char *dsfs_layout_kind_name(enum dsfs_layout_kind kind);
/* Parses a kind name (exact, lower case).  0 or -EINVAL. */
int dsfs_layout_kind_parse(const char *name, enum dsfs_layout_kind *kind);

/*
 * Builds the layout of the dataset directory dataset_rel (relative to
 * root_fd, the SOURCE root; NULL or "" mean ".").  dataset_rel is resolved
 * with RESOLVE_BENEATH: symlinks that stay inside SOURCE are fine.
 * list_file (kind LIST only, else ignored) is an absolute path, opened
 * normally: it need not live in SOURCE.  root_fd is only borrowed.
 *
 * Returns 0 and *out, or -errno with a one-line reason for the user in why
 * (always NUL-terminated when whylen > 0), e.g.
 *   "list=/x/y.txt line 12: '../a.jpg' leaves the dataset directory".
 *
 * imagefolder: classes are the entries of DIR that are directories (symlinks
 * followed, hidden ones included), sorted; each class is walked as
 * sorted(os.walk(classdir, followlinks=True)) walks it: directories ordered
 * by their whole path string (so "c/a-b" precedes "c/a/x"), files of each
 * directory by name, kept when the name ends in .jpg .jpeg .png .ppm .bmp
 * .pgm .tif .tiff .webp in any ASCII case; given a DatasetFolder's
 * extensions instead (dsfs_layout_extensions_check), when
 * path.lower().endswith(extensions), as torchvision's
 * has_file_allowed_extension() finds.
 * (Python lower-cases the whole path; the only non-ASCII characters whose
 * lower case holds ASCII letters are U+0130, "i" and a combining dot, which
 * cannot complete an ASCII suffix, and U+212A KELVIN SIGN, "k": so ASCII
 * lowering of the name's tail, and U+212A matching a "k", is exact.)
 * Symlinks to files, broken symlinks and other non-directories with such a
 * name are samples, as in os.walk.  A class without samples is kept empty
 * (torchvision 0.14 raises FileNotFoundError; newer ones with
 * allow_empty=True skip it, which gives this order) and counted in
 * info.empty_classes.
 * Symlink loops: os.walk(followlinks=True) walks a loop until the kernel's
 * 40-symlink limit, listing the same files 40 more times under longer paths,
 * and a directory holding two loops effectively forever.  dsfs does not
 * enter a directory whose (dev, ino) is already on the current path: it
 * counts it in info.loops, and from that point its order differs from
 * Python's (which no real loader would survive anyway).  Directories that
 * cannot be opened or listed are skipped whole, as os.walk() skips them.
 * Directories reached through a symlink leaving SOURCE are still listed (the
 * order needs them; symlinks in them are stat'ed to tell directories), but
 * no sample in them is sized or prefetched.  Not mimicked, as no real tree
 * meets them: Python's limits on its longer full paths (PATH_MAX, 40
 * symlinks per path beyond loops, its recursion limit near depth 1000), and
 * permissions when dsfs runs as another user than the loader.
 *
 * sorted: every regular file below DIR (lstat: symlinks are not followed and
 * symlinked directories are not entered; hidden files included, unless
 * names->skip_hidden), ordered by the relative path as Python's sorted()
 * orders str; with names->suffix, only the files whose names end in one.
 *
 * walk: the files os.walk(DIR) lists (followlinks=False), in its order:
 * DIR's files in the order its listing (getdents64) returns them, then
 * each of its subdirectories, in that order, walked so.  Its files are
 * every entry but directories and symlinks to them (which are not
 * entered): regular files, symlinks to files (resolved as imagefolder's,
 * prefetched when inside SOURCE), broken symlinks and fifos (kept, never
 * prefetched); hidden ones unless names->skip_hidden, and with
 * names->suffix only those whose names end in one.  The mount lists a directory
 * in the same order as SOURCE, so a loader that builds its list by
 * os.walk, glob.glob with a recursive "**" pattern, or pathlib's rglob,
 * unsorted, reads these indices.
 *
 * list: one path relative to DIR per line, LF or CRLF line ends; a final
 * line may lack its newline.  "." components and repeated slashes are
 * dropped ("a//./b" is stored as "a/b", the path the loader's open reaches
 * dsfs by).  Refused, naming the line: an absolute path, a ".." component, an
 * empty line, a trailing '/', a NUL byte, a carriage return not followed by
 * LF, a line of PATH_MAX bytes or more, a path naming a missing file or a
 * directory; an empty list file is refused too (no loader trains on it).
 * The first bad line is the one reported.  A fifo or other non-regular file
 * is kept, not prefetchable.  Reading streams the file: memory is the
 * result's, whatever the file size (10 million lines: ~55 bytes a line).
 *
 * Order of names everywhere is Python's str order of the names as os.fsdecode
 * gives them (UTF-8 with surrogateescape): see dsfs_layout_strcmp().
 * Limits: fewer than 2^32 - 1 samples and 4 GiB of path bytes (-EFBIG).
 */
int dsfs_layout_build(int root_fd, const char *dataset_rel,
		      enum dsfs_layout_kind kind, const char *list_file,
		      const struct dsfs_layout_names *names,
		      struct dsfs_layout **out, char *why, size_t whylen);

/*
 * The extensions of a DatasetFolder(DIR, loader, extensions=...) for
 * imagefolder (NULL elsewhere, and for ImageFolder's own): its suffixes
 * separated by ':', ".npy:.wav".  Each is compared with the lower-cased end
 * of a name as given, so it must be printable ASCII without capitals (which
 * would match no name), '/' or ':'; 1 to 64 of them, 1,023 bytes at most.
 * 0, or -EINVAL with a one-line reason in why.  O(length).
 */
int dsfs_layout_extensions_check(const char *extensions, char *why,
				 size_t whylen);

/*
 * The suffixes of sorted and walk (names->suffix): ".jpg:.png", each
 * printable ASCII without '/' or ':', in any case (compared as given);
 * 1 to 64 of them, 1,023 bytes at most.  0, or -EINVAL with a reason.
 */
int dsfs_layout_suffix_check(const char *suffix, char *why, size_t whylen);

/*
 * As dsfs_layout_build(), without the stat pass of the tree layouts: the
 * regular files a walk lists (by d_type) are left with their size unknown
 * (dsfs_layout_pending) for the user to settle one at a time, when it
 * needs them.  A million cold stats take seconds; a listing, a fraction.
 * List layouts are checked line by line at build as before.  Files found
 * later to be missing or of another kind are not counted in the info.
 */
int dsfs_layout_build_quick(int root_fd, const char *dataset_rel,
			    enum dsfs_layout_kind kind, const char *list_file,
			    const struct dsfs_layout_names *names,
			    struct dsfs_layout **out, char *why,
			    size_t whylen);

/*
 * A layout of count samples of l, sample i being l's idx[i] (each below
 * l's count), with their paths, sizes (pending ones stay pending in the
 * new layout), aliases and l's info (counts of the whole listing; the
 * duplicates and aliases counted anew): the part of a data set that
 * random_split() gives a loader.  l is only read.  0 and *out, or -EINVAL
 * (an index out of range), -ENOMEM.  O(count + path bytes).
 */
int dsfs_layout_select(const struct dsfs_layout *l, const uint32_t *idx,
		       uint64_t count, struct dsfs_layout **out);

/*
 * The samples of the n layouts parts, one after another, as torch's
 * ConcatDataset indexes them: sample i of parts[k] is the result's
 * (samples of parts before k) + i, its path dirs[k] + "/" + its path
 * (parts[k]'s DIR relative to SOURCE; "." adds nothing), so that the
 * result's paths are relative to SOURCE (look them up with dir ".").
 * Sizes (pending ones stay pending) and aliases kept; the kind of
 * parts[0]; the parts' infos added up (duplicates and aliases counted
 * anew: a file in two parts is a duplicate).  The parts are only read.
 * 0 and *out, -ENOMEM, or -EFBIG past the caps.  O(samples + path bytes).
 */
int dsfs_layout_concat(const struct dsfs_layout *const *parts,
		       const char *const *dirs, unsigned n,
		       struct dsfs_layout **out);

void dsfs_layout_free(struct dsfs_layout *layout);

uint64_t dsfs_layout_count(const struct dsfs_layout *layout);
enum dsfs_layout_kind dsfs_layout_kind(const struct dsfs_layout *layout);
const struct dsfs_layout_info *dsfs_layout_info(const struct dsfs_layout *layout);
/* The samples' weights of a WeightedRandomSampler plan (weights.h, one
 * per sample, in this order): set takes the malloc'd array over (freeing
 * the one before), get gives it or NULL.  O(1). */
void dsfs_layout_set_weights(struct dsfs_layout *layout, double *weights);
const double *dsfs_layout_weights(const struct dsfs_layout *layout);
/* Bytes of heap the layout holds (arena, arrays, table, header).  O(1). */
size_t dsfs_layout_memory(const struct dsfs_layout *layout);

/*
 * Sample i's path relative to DIR ("class/sub/x.jpg": no "./", no "//"),
 * valid until dsfs_layout_free().  i < count; O(1).
 */
const char *dsfs_layout_path(const struct dsfs_layout *layout, uint64_t i);
/* How many samples' paths begin with prefix (a directory with its '/':
 * the samples below it).  O(samples). */
uint64_t dsfs_layout_count_below(const struct dsfs_layout *layout,
				 const char *prefix, size_t len);
/* st_size of sample i, 0 when it is not prefetchable or still pending.
 * O(1). */
uint64_t dsfs_layout_size(const struct dsfs_layout *layout, uint64_t i);
/* Whether sample i's size is still unknown (dsfs_layout_build_quick). */
bool dsfs_layout_pending(const struct dsfs_layout *layout, uint64_t i);
/*
 * Settles a pending sample from its lstat-like st (the final name not
 * followed, reached beneath SOURCE), or NULL when it cannot be reached:
 * prefetchable with st_size if a regular file, else not.  The first
 * settling wins; any thread, at any time.  O(1).
 */
void dsfs_layout_settle(struct dsfs_layout *layout, uint64_t i,
			const struct stat *st);
/*
 * True when sample i is a regular file reached without leaving SOURCE (every
 * symlink on its way stays inside).  O(1).
 */
bool dsfs_layout_prefetchable(const struct dsfs_layout *layout, uint64_t i);

/*
 * A scan of the samples in index order by several threads (the builds'
 * stat pass, the mount's warm-up of SOURCE's inodes): each claims `chunk`
 * consecutive samples at a time with an atomic counter and calls
 * visit(arg, i, dfd, name) for each, where dfd is an O_PATH fd of sample
 * i's directory (DIR/its directory opened from root_fd as the build opens
 * DIR: symlinks that stay inside SOURCE are followed) or -errno, and name
 * its last path component.  Consecutive samples mostly share a directory,
 * so each thread opens one only when the samples' directory changes.
 *
 * The caller fills in the first six fields and zeroes the rest, then:
 * start runs up to `threads` (at most DSFS_LAYOUT_SCAN_MAX) helper threads
 * named `name`, all signals blocked, and returns how many it started;
 * run lets the calling thread scan along until no chunk is left; join,
 * with stop, ends the helpers after the chunk each is in, else waits for
 * them to finish the scan.  The layout must change meanwhile only in its
 * size words (which visit may set); visit runs in any of the threads.
 */
#define DSFS_LAYOUT_SCAN_MAX 8
struct dsfs_layout_scan {
	const struct dsfs_layout *layout;
	int root_fd;		/* SOURCE, borrowed */
	const char *dir;	/* DIR, relative to root_fd */
	uint64_t chunk;		/* >= 1 */
	void (*visit)(void *arg, uint64_t i, int dfd, const char *name);
	void *arg;
	uint64_t next;		/* atomic: first sample unclaimed */
	bool stop;		/* atomic */
	unsigned nthreads;
	pthread_t threads[DSFS_LAYOUT_SCAN_MAX];
};
unsigned dsfs_layout_scan_start(struct dsfs_layout_scan *scan,
				unsigned threads, const char *name);
void dsfs_layout_scan_run(struct dsfs_layout_scan *scan);
void dsfs_layout_scan_join(struct dsfs_layout_scan *scan, bool stop);

/*
 * Index of the sample whose path (relative to DIR, as dsfs_layout_path()
 * spells it) is `path`: 0 and *index, or -ENOENT.  A path listed more than
 * once (list layouts) gives its first index.  The key is the sample's own
 * path, not the target of a symlink.  O(1) expected: one XXH3 hash and ~1.5
 * string compares.
 */
int dsfs_layout_lookup(const struct dsfs_layout *layout, const char *path,
		       uint64_t *index);
/*
 * The same for a path relative to SOURCE, of a layout of DIR (dir, relative
 * to SOURCE as the plan's dataset= gives it, "." for SOURCE itself): the
 * lookup of what follows "DIR/", or -ENOENT when path is not below DIR.
 */
int dsfs_layout_lookup_in(const struct dsfs_layout *layout, const char *dir,
			  const char *path, uint64_t *index);
/*
 * A sample reached through a symlink inside SOURCE (a link to a file in a
 * pool, a class directory that is a link, DIR itself one) is opened through
 * another path: the one with every symlink resolved, which is all the
 * daemon sees of the loader's open.  dsfs_layout_alias() gives that path
 * (relative to SOURCE, not DIR), or NULL when sample i has none other than
 * DIR/its path; dsfs_layout_lookup_alias() the sample whose resolved path
 * (relative to SOURCE) is `path`, the first one when several links lead to
 * one file: 0 and *index, or -ENOENT.  O(1) expected.
 */
const char *dsfs_layout_alias(const struct dsfs_layout *layout, uint64_t i);
int dsfs_layout_lookup_alias(const struct dsfs_layout *layout,
			     const char *path, uint64_t *index);

/*
 * Python's order of two file names or paths: <0, 0, >0 as str(a) < == >
 * str(b) where str() decodes UTF-8 with surrogateescape (each byte of an
 * invalid sequence b becomes U+DC00 + b), as os.fsdecode does with a UTF-8
 * filesystem encoding (the default on Linux).  For valid UTF-8 this is
 * strcmp's order; invalid bytes sort above U+D7FF and below U+E000.  O(length
 * of the common prefix); pure ASCII differences are compared directly.
 */
int dsfs_layout_strcmp(const char *a, const char *b);

#endif
