/*
 * scan.c: the scan file of a table, T/.scan/QUERY (docs/usage.md, "Scans").
 * The query is the file's name: `all`, or parameters joined by `&`:
 *
 *   start=ROW stop=ROW prefix=P    rows [start, stop), beginning with P
 *   column=F or column=F:Q         (repeated) only these columns
 *   time=T1,T2                     versions in [T1, T2) (either end may
 *                                  be left out)
 *   versions=N                     the N newest versions of each column
 *   limit=N                        at most N rows
 *   colprefix=P qualifier=Q        HBase ColumnPrefixFilter,
 *   value=V ts=T[,T...]            QualifierFilter, ValueFilter (equal),
 *                                  TimestampsFilter
 *   raw                            RAW => true: every cell still held,
 *                                  delete markers as @Delete,
 *                                  @DeleteColumn, @DeleteFamily in
 *                                  the value's place; versions= ignored
 *   reversed                       REVERSED => true: rows in descending
 *                                  order (a row's cells as forward);
 *                                  start= is then the greatest row
 *                                  (inclusive), stop= the lower bound
 *                                  (exclusive)
 *
 * Keys and values are escaped as names are (SPEC section 2).  A read
 * gives one line per cell, `ROW FAM:QUAL TS VALUE`, rows in key order
 * (descending with reversed), cells as the engine orders them (family,
 * qualifier, newest first).
 *
 * The result is produced while read: the scan advances as far as the
 * read needs and no further, so `head` of a huge table stops the work,
 * and an open file holds the bytes of one read and one row's lines.
 * As in HBase, the filters apply before versions are counted: with
 * value=, ts= (or qualifier filters) every kept version is read and the
 * N newest that pass are shown.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/fs.h"
#include "fs/scan.h"
#include "util/escape.h"

#define TS_MAX 64		/* timestamps of a ts= filter */
#define COLS_MAX 64		/* column= parameters */

struct query {
	struct buf start, stop, prefix, colprefix, qualifier, value;
	int has_start, has_stop, has_prefix, has_colprefix, has_qualifier,
	    has_value;
	struct buf colfam[COLS_MAX], colqual[COLS_MAX];
	int colhasq[COLS_MAX];
	size_t ncols;
	int64_t tmin, tmax;
	int versions;
	uint64_t limit;
	int64_t ts[TS_MAX];
	size_t nts;
	int raw;
	int reversed;
};

struct fs_scan {
	cf_db *db;
	cf_table *t;
	cf_scanner *s;
	struct query q;
	struct cf_column cols[COLS_MAX];
	struct buf out;		/* produced, not yet read past */
	uint64_t out_off;	/* file offset of out.p[0] */
	uint64_t rows;		/* rows shown so far */
	int done;
};

static void query_release(struct query *q)
{
	size_t i;

	buf_release(&q->start);
	buf_release(&q->stop);
	buf_release(&q->prefix);
	buf_release(&q->colprefix);
	buf_release(&q->qualifier);
	buf_release(&q->value);
	for (i = 0; i < COLS_MAX; i++) {
		buf_release(&q->colfam[i]);
		buf_release(&q->colqual[i]);
	}
}

static int num(const char *p, size_t len, uint64_t max, uint64_t *v)
{
	size_t i;

	*v = 0;
	if (len == 0 || len > 19)
		return -1;
	for (i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		*v = *v * 10 + (uint64_t)(p[i] - '0');
	}
	return *v <= max ? 0 : -1;
}

/* An escaped key parameter; '' is the empty key. */
static int key_param(const char *p, size_t len, struct buf *out, int *has)
{
	*has = 1;
	buf_reset(out);
	if (len == 2 && !memcmp(p, "''", 2))
		return 0;
	return cf_unescape(p, len, out) ? -1 : 0;
}

/* Parses one "KEY=VALUE" or flag; what on error names it. */
static int param(struct query *q, const char *p, size_t len,
		 const char **what)
{
	const char *eq = memchr(p, '=', len), *v, *c;
	size_t kl, vl;
	uint64_t n;

	*what = "unknown parameter";
	if (len == 3 && !memcmp(p, "raw", 3)) {
		q->raw = 1;
		return 0;
	}
	if (len == 8 && !memcmp(p, "reversed", 8)) {
		q->reversed = 1;
		return 0;
	}
	if (!eq)
		return -1;
	kl = (size_t)(eq - p);
	v = eq + 1;
	vl = len - kl - 1;
#define K(s) (kl == sizeof(s) - 1 && !memcmp(p, s, kl))
	if (K("start")) {
		*what = "start=ROW: malformed escape";
		return key_param(v, vl, &q->start, &q->has_start);
	}
	if (K("stop")) {
		*what = "stop=ROW: malformed escape";
		return key_param(v, vl, &q->stop, &q->has_stop);
	}
	if (K("prefix")) {
		*what = "prefix=P: malformed escape";
		return key_param(v, vl, &q->prefix, &q->has_prefix);
	}
	if (K("colprefix")) {
		*what = "colprefix=P: malformed escape";
		return key_param(v, vl, &q->colprefix, &q->has_colprefix);
	}
	if (K("qualifier")) {
		*what = "qualifier=Q: malformed escape";
		return key_param(v, vl, &q->qualifier, &q->has_qualifier);
	}
	if (K("value")) {
		*what = "value=V: malformed escape";
		return key_param(v, vl, &q->value, &q->has_value);
	}
	if (K("column")) {
		*what = "column=FAM[:QUAL]: malformed";
		if (q->ncols == COLS_MAX)
			return -1;
		c = memchr(v, ':', vl);
		if (!cf_family_name_valid(v, c ? (size_t)(c - v) : vl))
			return -1;
		buf_reset(&q->colfam[q->ncols]);
		buf_reset(&q->colqual[q->ncols]);
		if (buf_append(&q->colfam[q->ncols], v,
			       c ? (size_t)(c - v) : vl))
			return -1;
		if (c && cf_unescape(c + 1, vl - (size_t)(c + 1 - v),
				     &q->colqual[q->ncols]))
			return -1;
		q->colhasq[q->ncols++] = c != NULL;
		return 0;
	}
	if (K("time")) {
		*what = "time=T1,T2: malformed";
		c = memchr(v, ',', vl);
		if (!c)
			return -1;
		q->tmin = 0;
		q->tmax = INT64_MAX;
		if (c > v) {
			if (num(v, (size_t)(c - v), INT64_MAX - 1, &n))
				return -1;
			q->tmin = (int64_t)n;
		}
		if (c + 1 < v + vl) {
			if (num(c + 1, vl - (size_t)(c + 1 - v),
				INT64_MAX - 1, &n))
				return -1;
			q->tmax = (int64_t)n;
		}
		return q->tmin < q->tmax ? 0 : -1;
	}
	if (K("versions")) {
		*what = "versions=N: N from 1";
		if (num(v, vl, INT32_MAX, &n) || n == 0)
			return -1;
		q->versions = (int)n;
		return 0;
	}
	if (K("limit")) {
		*what = "limit=N: N from 1";
		if (num(v, vl, UINT64_MAX / 2, &n) || n == 0)
			return -1;
		q->limit = n;
		return 0;
	}
	if (K("ts")) {
		*what = "ts=T[,T...]: malformed";
		q->nts = 0;
		while (vl) {
			c = memchr(v, ',', vl);
			kl = c ? (size_t)(c - v) : vl;
			if (q->nts == TS_MAX ||
			    num(v, kl, INT64_MAX - 1, &n))
				return -1;
			q->ts[q->nts++] = (int64_t)n;
			if (!c)
				break;
			vl -= kl + 1;
			v = c + 1;
			if (!vl)
				return -1;
		}
		return q->nts ? 0 : -1;
	}
#undef K
	return -1;
}

static int query_parse(const char *s, struct query *q, char *why,
		       size_t whylen)
{
	const char *p = s, *amp, *what;
	size_t len;

	memset(q, 0, sizeof *q);
	q->tmax = INT64_MAX;
	q->versions = 1;
	if (!strcmp(s, "all"))
		return 0;
	for (;;) {
		amp = strchr(p, '&');
		len = amp ? (size_t)(amp - p) : strlen(p);
		if (param(q, p, len, &what)) {
			snprintf(why, whylen, "scan query: %s in '%.*s'",
				 what, (int)(len > 80 ? 80 : len), p);
			query_release(q);
			return EINVAL;
		}
		if (!amp)
			return 0;
		p = amp + 1;
	}
}

int fs_scan_check(const char *qs, char *why, size_t whylen)
{
	struct query q;
	int rc = query_parse(qs, &q, why, whylen);

	if (!rc)
		query_release(&q);
	return rc;
}

static int scan_start(struct fs_scan *s)
{
	struct cf_scan_opts o;
	struct query *q = &s->q;
	size_t i;

	memset(&o, 0, sizeof o);
	for (i = 0; i < q->ncols; i++) {
		s->cols[i].fam = (const char *)q->colfam[i].p;
		s->cols[i].famlen = q->colfam[i].len;
		s->cols[i].qual = q->colhasq[i] ? (q->colqual[i].len ?
			(const void *)q->colqual[i].p : "") : NULL;
		s->cols[i].qlen = q->colqual[i].len;
	}
	o.read.columns = q->ncols ? s->cols : NULL;
	o.read.ncolumns = q->ncols;
	o.read.raw = q->raw;
	o.read.min_ts = q->tmin;
	o.read.max_ts = q->tmax;
	/* filters apply before versions are counted: every kept one */
	o.read.max_versions = q->has_value || q->nts || q->has_qualifier ||
			      q->has_colprefix ? INT32_MAX : q->versions;
	if (q->has_start) {
		o.start = q->start.len ? (const void *)q->start.p : "";
		o.startlen = q->start.len;
	}
	if (q->has_stop && q->stop.len) {
		o.stop = q->stop.p;
		o.stoplen = q->stop.len;
	}
	if (q->has_prefix && q->prefix.len) {
		o.prefix = q->prefix.p;
		o.prefixlen = q->prefix.len;
	}
	o.reversed = q->reversed;
	s->rows = 0;
	s->done = 0;
	return cf_scan_open(s->t, &o, &s->s);
}

int fs_scan_open(cf_db *db, const char *table, const char *qs,
		 struct fs_scan **out, char *why, size_t whylen)
{
	struct fs_scan *s = calloc(1, sizeof *s);
	size_t i;
	int rc;

	*out = NULL;
	if (!s)
		return CF_ENOMEM;
	s->db = db;
	if (query_parse(qs, &s->q, why, whylen)) {
		free(s);
		return CF_EINVAL;
	}
	rc = cf_table_open(db, table, &s->t);
	for (i = 0; !rc && i < s->q.ncols; i++)
		if (!cf_table_has_family(s->t, (const char *)s->q.colfam[i].p,
					 s->q.colfam[i].len)) {
			snprintf(why, whylen, "scan query: unknown family "
				 "'%.*s'", (int)s->q.colfam[i].len,
				 (const char *)s->q.colfam[i].p);
			rc = CF_ENOTFOUND;
		}
	if (rc) {
		fs_scan_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

void fs_scan_close(struct fs_scan *s)
{
	if (!s)
		return;
	if (s->s)
		cf_scan_close(s->s);
	if (s->t)
		cf_table_close(s->t);
	query_release(&s->q);
	buf_release(&s->out);
	free(s);
}

/* 1 if cell c passes the query's cell filters. */
static int cell_passes(const struct query *q, const struct cf_cell *c)
{
	size_t i;

	if (q->has_colprefix && (c->qlen < q->colprefix.len ||
	    memcmp(c->qual, q->colprefix.p, q->colprefix.len)))
		return 0;
	if (q->has_qualifier && (c->qlen != q->qualifier.len ||
	    (c->qlen && memcmp(c->qual, q->qualifier.p, c->qlen))))
		return 0;
	if (q->has_value && (c->kind || c->vlen != q->value.len ||
	    (c->vlen && memcmp(c->val, q->value.p, c->vlen))))
		return 0;
	if (q->nts) {
		for (i = 0; i < q->nts && q->ts[i] != c->ts; i++)
			;
		if (i == q->nts)
			return 0;
	}
	return 1;
}

/* Appends " TS " (ts >= 0). */
static int put_ts(struct buf *b, int64_t ts)
{
	char d[24];
	size_t n = 0;
	uint64_t v = (uint64_t)ts;
	int rc = buf_reserve(b, sizeof d + 2);

	if (rc)
		return rc;
	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	b->p[b->len++] = ' ';
	while (n)
		b->p[b->len++] = (unsigned char)d[--n];
	b->p[b->len++] = ' ';
	return 0;
}

/* Appends the lines of row r; *shown says whether it had any. */
static int row_lines(struct fs_scan *s, const cf_row *r, int *shown)
{
	const struct cf_cell *c, *prev = NULL;
	const unsigned char *k;
	size_t klen, i;
	int rc = 0, nv = 0;

	*shown = 0;
	k = cf_row_key(r, &klen);
	for (i = 0; !rc && i < cf_row_count(r); i++) {
		c = cf_row_cell(r, i);
		if (!cell_passes(&s->q, c))
			continue;
		if (prev && prev->famlen == c->famlen && prev->qlen == c->qlen
		    && !memcmp(prev->fam, c->fam, c->famlen) &&
		    (!c->qlen || !memcmp(prev->qual, c->qual, c->qlen))) {
			if (++nv > s->q.versions && !s->q.raw)
				continue;
		} else
			nv = 1;
		prev = c;
		*shown = 1;
		/* no printf: this is the scan's inner loop */
		rc = klen ? cf_escape(k, klen, &s->out)
			  : buf_append(&s->out, "''", 2);
		if (!rc)
			rc = buf_reserve(&s->out, c->famlen + 24);
		if (!rc) {
			s->out.p[s->out.len++] = ' ';
			memcpy(s->out.p + s->out.len, c->fam, c->famlen);
			s->out.len += c->famlen;
			s->out.p[s->out.len++] = ':';
			rc = cf_escape(c->qual, c->qlen, &s->out);
		}
		if (!rc)
			rc = put_ts(&s->out, c->ts);
		if (!rc && c->kind)
			/* a marker (raw): '@' in a value is always %40 */
			rc = buf_append(&s->out, c->kind == CF_DEL_VERSION ?
					"@Delete" : c->kind == CF_DEL_COLUMN ?
					"@DeleteColumn" : "@DeleteFamily",
					c->kind == CF_DEL_VERSION ? 7 :
					c->kind == CF_DEL_COLUMN ? 13 : 13);
		else if (!rc)
			rc = fs_value_text(c->val, c->vlen, &s->out);
		if (!rc)
			rc = buf_putc(&s->out, '\n');
	}
	return rc;
}

int fs_scan_read(struct fs_scan *s, size_t n, uint64_t off, const void **p,
		 size_t *got, char *why, size_t whylen)
{
	const cf_row *r;
	size_t skip;
	int rc = 0, shown;

	*got = 0;
	*p = NULL;
	if (off < s->out_off || !s->s) {
		/* from the start (a first read, or a reader going back) */
		if (s->s)
			cf_scan_close(s->s);
		s->s = NULL;
		buf_reset(&s->out);
		s->out_off = 0;
		rc = scan_start(s);
	}
	while (!rc) {
		/* drop what lies before off, keep what the read wants */
		if (off > s->out_off) {
			skip = off - s->out_off < s->out.len ?
			       (size_t)(off - s->out_off) : s->out.len;
			memmove(s->out.p, s->out.p + skip, s->out.len - skip);
			s->out.len -= skip;
			s->out_off += skip;
		}
		if (s->done || (off == s->out_off && s->out.len >= n))
			break;
		if (s->q.limit && s->rows >= s->q.limit) {
			s->done = 1;
			continue;
		}
		rc = cf_scan_next(s->s, &r);
		if (!rc && !r)
			s->done = 1;
		else if (!rc) {
			rc = row_lines(s, r, &shown);
			s->rows += shown;
		}
	}
	if (rc) {
		snprintf(why, whylen, "scan: %s", cf_strerror(rc));
		return fs_errno(rc);
	}
	if (off == s->out_off) {
		*got = s->out.len < n ? s->out.len : n;
		*p = s->out.p;
	}
	return 0;
}
