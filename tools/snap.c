// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The daemon's stats snapshot as dsfs-stats reads it: one getxattr of the
 * mount root, split into fields in place, and the few JSON token forms the
 * daemon writes (numbers, true/false, strings, the plan.ranks array of flat
 * objects) decoded for the renderers.  Single-threaded.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "dsfs-stats.h"

int dsfs_snap_fetch(const char *mnt, const char *name, struct dsfs_snap *s)
{
	char *line, *save = NULL;
	ssize_t len;

	int root;

	s->text = malloc(XATTR_SIZE_MAX + 1);
	if (!s->text)
		return -ENOMEM;
	len = getxattr(mnt, name, s->text, XATTR_SIZE_MAX);
	if (len < 0)
		return -errno;
	/* Any directory may carry an attribute of that name. */
	root = dsfs_mounts_is_root(mnt);
	if (root <= 0)
		return root ? root : -ENODATA;
	s->text[len] = '\0';
	for (line = strtok_r(s->text, "\n", &save);
	     line && s->n < DSFS_SNAP_FIELDS;
	     line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' ');

		if (!sp)
			continue;
		*sp = '\0';
		s->f[s->n++] = (struct dsfs_snap_field){ line, sp + 1 };
	}
	return 0;
}

void dsfs_snap_free(struct dsfs_snap *s)
{
	free(s->text);
	s->text = NULL;
	s->n = 0;
}

const char *dsfs_snap_get(const struct dsfs_snap *s, const char *key)
{
	unsigned i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->f[i].key, key))
			return s->f[i].val;
	return NULL;
}

double dsfs_snap_num(const struct dsfs_snap *s, const char *key)
{
	const char *v = dsfs_snap_get(s, key);

	if (!v)
		return 0;
	if (!strcmp(v, "true"))
		return 1;
	return strtod(v, NULL);
}

/* Append code point c as UTF-8. */
static size_t put_utf8(char *o, unsigned long c)
{
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xc0 | c >> 6);
		o[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	o[0] = (char)(0xe0 | c >> 12);
	o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
	o[2] = (char)(0x80 | (c & 0x3f));
	return 3;
}

/* The character that a JSON backslash escape with letter c stands for;
 * 0 for u (handled apart) and for anything not an escape. */
static char unescape(char c)
{
	switch (c) {
	case 'b':
		return '\b';
	case 'f':
		return '\f';
	case 'n':
		return '\n';
	case 'r':
		return '\r';
	case 't':
		return '\t';
	case '"':
	case '\\':
	case '/':
		return c;
	default:
		return 0;
	}
}

/*
 * Decode the JSON string token starting at *p (at its opening quote) into
 * buf, NUL-terminated, truncated to size; *p moves past the closing quote.
 * Surrogate pairs are not joined (the daemon escapes only control bytes).
 */
static void json_string(const char **p, char *buf, size_t size)
{
	const char *s = *p + 1;
	size_t n = 0, k;
	char u[4];

	while (*s && *s != '"') {
		k = 1;
		u[0] = *s++;
		if (u[0] == '\\' && *s == 'u' &&
		    strspn(s + 1, "0123456789abcdefABCDEF") >= 4) {
			char hex[5] = { s[1], s[2], s[3], s[4], '\0' };

			k = put_utf8(u, strtoul(hex, NULL, 16));
			s += 5;
		} else if (u[0] == '\\' && unescape(*s)) {
			u[0] = unescape(*s++);
		}
		if (n + k < size) {
			memcpy(buf + n, u, k);
			n += k;
		}
	}
	if (size)
		buf[n] = '\0';
	*p = *s ? s + 1 : s;
}

const char *dsfs_snap_str(const struct dsfs_snap *s, const char *key, char *buf,
			  size_t size)
{
	const char *v = dsfs_snap_get(s, key);

	if (!v)
		snprintf(buf, size, "?");
	else if (*v == '"')
		json_string(&v, buf, size);
	else
		snprintf(buf, size, "%s", v);
	return buf;
}

const char *dsfs_snap_nodes(const struct dsfs_snap *s, char *buf, size_t size)
{
	size_t n;

	dsfs_snap_str(s, "cache.numa_nodes", buf, size);
	n = strlen(buf);
	if (n >= 2 && buf[0] == '[' && buf[n - 1] == ']') {
		memmove(buf, buf + 1, n - 2);
		buf[n - 2] = '\0';
	}
	return buf;
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* One "key": value member of a rank object into r; *p past it.  false on
 * malformed input. */
static bool rank_member(const char **p, struct dsfs_snap_rank *r)
{
	struct {
		const char *name;
		unsigned long long *v;
	} nums[] = {
		{ "rank", &r->rank },
		{ "epoch", &r->epoch },
		{ "position", &r->position },
		{ "lead_items", &r->lead_items },
		{ "lead_bytes", &r->lead_bytes },
		{ "mispredictions", &r->mispredictions },
	};
	char key[64], *end;
	unsigned i;

	if (**p != '"')
		return false;
	json_string(p, key, sizeof(key));
	*p = skip_ws(*p);
	if (**p != ':')
		return false;
	*p = skip_ws(*p + 1);
	if (**p == '"') {
		char val[sizeof(r->detected)];

		json_string(p, val, sizeof(val));
		if (!strcmp(key, "detected"))
			memcpy(r->detected, val, sizeof(val));
		return true;
	}
	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		if (!strcmp(key, nums[i].name))
			*nums[i].v = strtoull(*p, NULL, 10);
	strtod(*p, &end); /* any number, kept or not */
	if (end == *p)
		return false;
	*p = end;
	return true;
}

/* plan.ranks: [{"rank": 0, ...}, ...], flat objects of numbers and
 * strings.  O(length of the value). */
unsigned dsfs_snap_ranks(const struct dsfs_snap *s, struct dsfs_snap_rank *r,
			 unsigned max)
{
	const char *p = dsfs_snap_get(s, "plan.ranks");
	unsigned n = 0;

	if (!p || *(p = skip_ws(p)) != '[')
		return 0;
	for (p = skip_ws(p + 1); *p == '{' && n < max; n++) {
		memset(&r[n], 0, sizeof(r[n]));
		strcpy(r[n].detected, "?");
		for (p = skip_ws(p + 1); *p != '}'; p = skip_ws(p)) {
			if (!rank_member(&p, &r[n]))
				return 0;
			p = skip_ws(p);
			if (*p == ',')
				p = skip_ws(p + 1);
			else if (*p != '}')
				return 0;
		}
		p = skip_ws(p + 1);
		if (*p == ',')
			p = skip_ws(p + 1);
	}
	return n;
}

const char *dsfs_snap_why(const char *path, int err, char *buf, size_t size)
{
	struct stat st;
	char *top;

	switch (-err) {
	case ENODATA:
	case ENOTSUP:
		top = dsfs_mounts_containing(path);
		if (top)
			snprintf(
				buf, size,
				"not the root of a dsfs mount; its mount point is %s",
				top);
		else
			snprintf(buf, size,
				 "not a dsfs mount point");
		free(top);
		return buf;
	case ENOTCONN:
		return "the dsfs daemon is gone (transport endpoint not connected); unmount it with umount";
	case EACCES:
	case EPERM:
		/* Without allow_other, FUSE refuses everything to other
		 * users, stats or not. */
		if (stat(path, &st) < 0 && (errno == EACCES || errno == EPERM))
			return "permission denied: the mount is only for the user who mounted it (mounted without allow_other)";
		return "stats are private to root and the user who mounted (mount with -o stats=public to share them)";
	default:
		return strerror(-err);
	}
}

void dsfs_human(double bytes, char *buf, size_t size)
{
	static const char *const units[] = { "B",   "KiB", "MiB",
					     "GiB", "TiB", "PiB" };
	unsigned u = 0;

	while (bytes >= 1024 && u < 5) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}
