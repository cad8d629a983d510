/*
 * cellq.c: the extra names of a cell (docs/usage.md, "HBase reads and
 * counters"), and the dispatch of every special file of fs.h's fs_hq_*
 * (the scan file itself is fs/scan.c).
 *
 *   ROW/F:Q@T1,T2          the newest version in [T1, T2): its value
 *   ROW/F:Q@T1,T2,v=N      the N newest versions in [T1, T2), as lines
 *   ROW/F:Q@v=N            the N newest versions, as lines "TS VALUE"
 *   ROW/F:Q@counter        an 8-byte big-endian counter (HBase Increment)
 *                          read as a decimal line; a write of a decimal
 *                          number adds it at close
 *
 * Either end of a range may be left out (T1 = 0, T2 = the end of time).
 * Lines are newest first, the value escaped as names are (SPEC section 2;
 * the empty value is '').  Every name here is unlisted, read when opened
 * (the content of one cell's versions is held by the open file: at most
 * N values, each at most max_value) and never cached by the kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/fs.h"
#include "fs/scan.h"
#include "util/escape.h"

_Static_assert(FS_HQ_IOV >= FS_SCAN_IOV, "a scan read's pieces");
_Static_assert(FS_HQ_LATER == FS_SCAN_LATER, "a scan read answered later");

struct cellq {
	int64_t tmin, tmax;	/* [tmin, tmax) */
	int versions;		/* 0: the newest one's raw value */
};

struct fs_hq_file {
	enum fs_hq_kind kind;
	cf_db *db;
	char table[CF_TABLE_MAX + 1];
	struct buf row, fam, qual;
	struct buf text;	/* FQ_CELL, FQ_COUNTER: what reads see */
	struct buf in;		/* FQ_COUNTER: what was written */
	int writable;
	struct fs_scan *scan;	/* FQ_SCAN, FQ_DUMP */
};

/* Parses a decimal timestamp of len bytes (0 <= ts < INT64_MAX). */
static int parse_ts(const char *p, size_t len, int64_t *ts)
{
	uint64_t v = 0;
	size_t i;

	if (len == 0 || len > 19)
		return EINVAL;
	for (i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return EINVAL;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	if (v >= INT64_MAX)
		return EINVAL;
	*ts = (int64_t)v;
	return 0;
}

/* Parses "v=N" (1 <= N <= INT32_MAX). */
static int parse_versions(const char *p, size_t len, int *v)
{
	int64_t n;

	if (len < 3 || p[0] != 'v' || p[1] != '=' ||
	    parse_ts(p + 2, len - 2, &n) || n < 1 || n > INT32_MAX)
		return EINVAL;
	*v = (int)n;
	return 0;
}

/* Parses a query spec: "T1,T2", "T1,T2,v=N" or "v=N". */
static int cellq_parse(const char *spec, struct cellq *q)
{
	const char *c1 = strchr(spec, ','), *c2;
	size_t len = strlen(spec);

	q->tmin = 0;
	q->tmax = INT64_MAX;
	q->versions = 0;
	if (!c1)
		return parse_versions(spec, len, &q->versions);
	if (c1 > spec && parse_ts(spec, (size_t)(c1 - spec), &q->tmin))
		return EINVAL;
	c2 = strchr(c1 + 1, ',');
	if (!c2)
		c2 = spec + len;
	else if (parse_versions(c2 + 1, strlen(c2 + 1), &q->versions))
		return EINVAL;
	if (c2 > c1 + 1 &&
	    parse_ts(c1 + 1, (size_t)(c2 - c1 - 1), &q->tmax))
		return EINVAL;
	return q->tmin < q->tmax ? 0 : EINVAL;
}

int fs_hq_cell_kind(const char *spec, enum fs_hq_kind *kind)
{
	struct cellq q;

	if (spec[0] >= '0' && spec[0] <= '9' && !strchr(spec, ','))
		return 0;
	if (!strcmp(spec, "counter")) {
		*kind = FQ_COUNTER;
		return 1;
	}
	if (cellq_parse(spec, &q))
		return EINVAL;
	*kind = FQ_CELL;
	return 1;
}

int fs_hq_scan_check(const char *q, char *why, size_t whylen)
{
	return fs_scan_check(q, why, whylen);
}

/* The versions of the target's cell the query asks for: *r (to
 * cf_row_free) holds them, newest first, from index *first on, *count
 * of them. */
static int cellq_get(cf_db *db, const struct fs_hq_target *t,
		     const struct cellq *q, cf_row **r, size_t *first,
		     size_t *count)
{
	struct cf_column col = { t->fam, t->famlen, t->qlen ? t->qual : "",
				 t->qlen };
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	const struct cf_cell *c;
	cf_table *tb;
	size_t i;
	int rc;

	*r = NULL;
	*count = *first = 0;
	rc = cf_table_open(db, t->table, &tb);
	if (rc)
		return rc;
	if (!cf_table_has_family(tb, t->fam, t->famlen)) {
		cf_table_close(tb);
		return CF_ENOTFOUND;
	}
	o.columns = &col;
	o.ncolumns = 1;
	o.min_ts = q->tmin;
	o.max_ts = q->tmax;
	o.max_versions = q->versions ? q->versions : 1;
	rc = cf_table_get(tb, t->rowlen ? t->row : "", t->rowlen, &o, r);
	cf_table_close(tb);
	for (i = 0; !rc && i < cf_row_count(*r); i++) {
		c = cf_row_cell(*r, i);
		if (c->famlen != t->famlen || memcmp(c->fam, t->fam, t->famlen)
		    || c->qlen != t->qlen ||
		    (c->qlen && memcmp(c->qual, t->qual, c->qlen)))
			continue;
		if (!*count)
			*first = i;
		++*count;
	}
	return rc;
}

/* The content of a cell query into out; *ts the newest version's. */
static int cellq_text(cf_db *db, const struct fs_hq_target *t,
		      struct buf *out, int64_t *ts)
{
	struct cellq q;
	const struct cf_cell *c;
	cf_row *r = NULL;
	size_t first, count, i;
	int rc;

	if (cellq_parse(t->arg, &q))
		return CF_EINVAL;
	rc = cellq_get(db, t, &q, &r, &first, &count);
	if (!rc && !count)
		rc = CF_ENOTFOUND;
	for (i = first; !rc && i < first + count; i++) {
		c = cf_row_cell(r, i);
		if (i == first)
			*ts = c->ts;
		if (!q.versions) {
			rc = buf_append(out, c->val, c->vlen);
			continue;
		}
		rc = buf_printf(out, "%" PRId64 " ", c->ts);
		if (!rc)
			rc = fs_value_text(c->val, c->vlen, out);
		if (!rc)
			rc = buf_putc(out, '\n');
	}
	cf_row_free(r);
	return rc;
}

/* A counter's decimal line into out; *ts its version. */
static int counter_text(cf_db *db, const struct fs_hq_target *t,
			struct buf *out, int64_t *ts, char *why,
			size_t whylen)
{
	struct cellq q = { 0, INT64_MAX, 1 };
	const struct cf_cell *c;
	cf_row *r = NULL;
	size_t first, count, i;
	uint64_t v = 0;
	int rc;

	rc = cellq_get(db, t, &q, &r, &first, &count);
	if (!rc && !count)
		rc = CF_ENOTFOUND;
	if (!rc) {
		c = cf_row_cell(r, first);
		*ts = c->ts;
		if (c->vlen != 8) {
			snprintf(why, whylen, "not an 8-byte counter (%zu "
				 "bytes)", c->vlen);
			rc = CF_EINVAL;
		}
		for (i = 0; !rc && i < 8; i++)
			v = v << 8 | c->val[i];
		if (!rc)
			rc = buf_printf(out, "%" PRId64 "\n", (int64_t)v);
	}
	cf_row_free(r);
	return rc;
}

static int fill_text(struct fs_hq_file *f, const struct fs_hq_target *t,
		     int64_t *ts, char *why, size_t whylen)
{
	buf_reset(&f->text);
	if (f->kind == FQ_COUNTER)
		return counter_text(f->db, t, &f->text, ts, why, whylen);
	return cellq_text(f->db, t, &f->text, ts);
}

int fs_hq_stat(cf_db *db, enum fs_hq_kind k, const struct fs_hq_target *t,
	       struct stat *st, char *why, size_t whylen)
{
	struct fs_hq_file f;
	int64_t ts = 0;
	int rc;

	*why = 0;
	if (k == FQ_SCANS)
		return 0;
	if (k == FQ_SCAN)
		return fs_scan_check(t->arg, why, whylen);
	memset(&f, 0, sizeof f);
	f.kind = k;
	f.db = db;
	rc = fill_text(&f, t, &ts, why, whylen);
	if (rc == CF_EINVAL && k == FQ_COUNTER)
		rc = 0;	/* it exists; reading it says why it is no counter */
	if (!rc) {
		st->st_size = (off_t)f.text.len;
		st->st_mtim.tv_sec = ts / 1000;
		st->st_mtim.tv_nsec = (ts % 1000) * 1000000;
		st->st_atim = st->st_ctim = st->st_mtim;
	}
	buf_release(&f.text);
	if (rc && !*why)
		snprintf(why, whylen, "%s", cf_strerror(rc));
	return fs_errno(rc);
}

void fs_hq_close(struct fs_hq_file *f)
{
	if (!f)
		return;
	fs_scan_close(f->scan);
	buf_release(&f->row);
	buf_release(&f->fam);
	buf_release(&f->qual);
	buf_release(&f->text);
	buf_release(&f->in);
	free(f);
}

int fs_hq_open(cf_db *db, enum fs_hq_kind k, const struct fs_hq_target *t,
	       int flags, struct fs_hq_file **out, char *why, size_t whylen)
{
	struct fs_hq_file *f;
	int64_t ts;
	int rc = 0, acc = flags & O_ACCMODE;

	*out = NULL;
	*why = 0;
	if (acc != O_RDONLY && k != FQ_COUNTER) {
		snprintf(why, whylen, "read-only file");
		return EACCES;
	}
	if (acc == O_RDWR) {
		snprintf(why, whylen, "a counter is opened to read or to "
			 "write");
		return EINVAL;
	}
	f = calloc(1, sizeof *f);
	if (!f)
		return ENOMEM;
	f->kind = k;
	f->db = db;
	f->writable = acc != O_RDONLY;
	snprintf(f->table, sizeof f->table, "%s", t->table);
	if (buf_append(&f->row, t->row, t->rowlen) ||
	    buf_append(&f->fam, t->fam, t->famlen) ||
	    buf_append(&f->qual, t->qual, t->qlen))
		rc = CF_ENOMEM;
	if (!rc && k == FQ_SCAN)
		rc = fs_scan_open(db, t->table, t->arg, &f->scan, why,
				  whylen);
	else if (!rc && k == FQ_DUMP)
		rc = fs_scan_open_dump(db, t->table, &f->scan, why, whylen);
	else if (!rc && !f->writable && k != FQ_SCANS)
		rc = fill_text(f, t, &ts, why, whylen);
	else if (!rc && f->writable) {
		cf_table *tb;
		rc = cf_table_open(db, t->table, &tb);
		if (!rc && !cf_table_has_family(tb, t->fam, t->famlen)) {
			snprintf(why, whylen, "unknown family");
			rc = CF_ENOTFOUND;
		}
		if (!rc)
			cf_table_close(tb);
	}
	if (rc) {
		fs_hq_close(f);
		if (!*why)
			snprintf(why, whylen, "%s", cf_strerror(rc));
		return fs_errno(rc);
	}
	*out = f;
	return 0;
}

int fs_hq_read(struct fs_hq_file *f, size_t n, uint64_t off,
	       struct iovec *iov, int *niov, size_t *got,
	       struct fs_scan **scan, char *why, size_t whylen,
	       fs_hq_reply_fn *reply, void *arg)
{
	int err;

	*got = 0;
	*niov = 0;
	*why = 0;
	*scan = NULL;
	if (f->scan) {
		err = fs_scan_read(f->scan, n, off, iov, niov, got, why,
				   whylen, reply, arg);
		if (!err)
			*scan = f->scan;
		return err;
	}
	if (f->writable)
		return EBADF;
	if (off < f->text.len) {
		*got = f->text.len - (size_t)off < n ?
		       f->text.len - (size_t)off : n;
		iov[0].iov_base = f->text.p + off;
		iov[0].iov_len = *got;
		*niov = 1;
	}
	return 0;
}

void fs_hq_read_end(struct fs_scan *scan)
{
	fs_scan_ahead(scan);
}

/* The delta written to a counter: "[+-]DIGITS[\n]".  With partial, a
 * prefix of that is well formed too. */
static int counter_delta(const struct buf *in, int partial, int64_t *d)
{
	size_t i = 0, len = in->len;
	uint64_t v = 0;
	int neg = 0;

	if (len && in->p[len - 1] == '\n')
		len--;
	if (i < len && (in->p[i] == '+' || in->p[i] == '-'))
		neg = in->p[i++] == '-';
	if (i == len && !partial)
		return EINVAL;
	if (len - i > 19)
		return EINVAL;
	for (; i < len; i++) {
		if (in->p[i] < '0' || in->p[i] > '9')
			return EINVAL;
		v = v * 10 + (uint64_t)(in->p[i] - '0');
	}
	if (v > (uint64_t)INT64_MAX + neg)
		return EINVAL;
	*d = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

int fs_hq_write(struct fs_hq_file *f, const void *p, size_t n, char *why,
		size_t whylen)
{
	int64_t d;
	size_t old = f->in.len;

	*why = 0;
	if (!f->writable) {
		snprintf(why, whylen, "read-only file");
		return EBADF;
	}
	if ((old && f->in.p[old - 1] == '\n') ||
	    buf_append(&f->in, p, n) || counter_delta(&f->in, 1, &d)) {
		f->in.len = old;
		snprintf(why, whylen, "not one decimal number to add to the "
			 "counter");
		return EINVAL;
	}
	return 0;
}

int fs_hq_flush(struct fs_hq_file *f, int *changed, char *why,
		size_t whylen)
{
	cf_table *tb;
	int64_t d = 0, res;
	int rc;

	*changed = 0;
	*why = 0;
	if (!f->writable || !f->in.len)
		return 0;
	if (counter_delta(&f->in, 0, &d)) {
		buf_reset(&f->in);
		snprintf(why, whylen, "not one decimal number to add to the "
			 "counter");
		return EINVAL;
	}
	buf_reset(&f->in);
	rc = cf_table_open(f->db, f->table, &tb);
	if (!rc) {
		rc = cf_table_increment(tb, f->row.len ? f->row.p : (void *)"",
					f->row.len, (const char *)f->fam.p,
					f->fam.len, f->qual.len ? f->qual.p :
					(void *)"", f->qual.len, d, &res);
		cf_table_close(tb);
	}
	if (rc == CF_EINVAL)
		snprintf(why, whylen, "the cell holds no 8-byte counter");
	else if (rc == CF_ERANGE)
		snprintf(why, whylen, "the counter would overflow");
	else if (rc)
		snprintf(why, whylen, "%s", cf_strerror(rc));
	*changed = !rc;
	return fs_errno(rc);
}
