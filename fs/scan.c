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
#include <pthread.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/fs.h"
#include "fs/scan.h"

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

/*
 * An open scan file.  mu guards busy, refs, closed and the condition
 * cv; everything below them belongs to the one thread that set busy
 * (a read, then the production ahead after its reply), and passes to
 * the next through mu.  refs: the open file's and a read's, from
 * fs_scan_read until fs_scan_ahead (which runs after the reply, when
 * the RELEASE may already have closed the file).
 */
struct fs_scan {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int busy, refs, closed;
	cf_db *db;
	cf_table *t;
	cf_scanner *s;
	struct query q;
	struct cf_column cols[COLS_MAX];
	struct buf out;		/* produced, not yet read past */
	uint64_t out_off;	/* file offset of out.p[0] */
	struct buf ahead;	/* produced after the last reply: the bytes
				 * from ahead_off on (out's tail, then more) */
	uint64_t ahead_off;
	int has_ahead;
	int ahead_rc;		/* CF_* met producing ahead: the next read
				 * that needs more fails with it */
	uint64_t next_off;	/* where the last read ended */
	size_t next_n;		/* and how much it asked for */
	struct buf key;		/* the current row's key, escaped */
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

/* Frees s and what it holds but its query. */
static void scan_free(struct fs_scan *s)
{
	if (s->s)
		cf_scan_close(s->s);
	if (s->t)
		cf_table_close(s->t);
	buf_release(&s->out);
	buf_release(&s->ahead);
	buf_release(&s->key);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
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
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->refs = 1;
	s->db = db;
	if (query_parse(qs, &s->q, why, whylen)) {
		scan_free(s);
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
		query_release(&s->q);
		scan_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* Drops a reference; the last frees s. */
static void scan_put(struct fs_scan *s)
{
	int last;

	pthread_mutex_lock(&s->mu);
	last = --s->refs == 0;
	pthread_mutex_unlock(&s->mu);
	if (last) {
		query_release(&s->q);
		scan_free(s);
	}
}

void fs_scan_close(struct fs_scan *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	__atomic_store_n(&s->closed, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&s->mu);
	scan_put(s);
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

/* The bytes that stand for themselves in a name (util/escape.c's
 * plain(): letters, digits and "-_,=+~." with '.' not first), as a
 * bitmap: this is the scan's inner loop, and cf_escape's per-byte call
 * and buf_reserve are a third of a small-cell scan's time. */
static const uint64_t plain_map[2] = {
	0x23ff780000000000u,	/* + , - . 0-9 = */
	0x47fffffe87fffffeu,	/* A-Z _ a-z ~ */
};

static inline int plain_byte(unsigned char c)
{
	return c < 128 && (plain_map[c >> 6] >> (c & 63) & 1);
}

#define ONES 0x0101010101010101u
#define HIGH 0x8080808080808080u

/* The high bit of each byte of x (all below 0x80) in [lo, hi]. */
static inline uint64_t in_range(uint64_t x, unsigned lo, unsigned hi)
{
	return (x + ONES * (0x80 - lo)) & ~(x + ONES * (0x7f - hi)) & HIGH;
}

/* 1 if the 8 bytes of x are letters or digits. */
static inline int alnum8(uint64_t x)
{
	return !(x & HIGH) && (in_range(x, '0', '9') | in_range(x, 'A', 'Z') |
			       in_range(x, 'a', 'z')) == HIGH;
}

/* Copies n bytes: the few of a name without a call. */
static inline unsigned char *put(unsigned char *d, const void *p, size_t n)
{
	const unsigned char *q = p;
	uint64_t a, b;

	if (n >= 8 && n <= 16) {
		memcpy(&a, q, 8);
		memcpy(&b, q + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n < 8) {
		for (a = 0; a < n; a++)
			d[a] = q[a];
	} else
		memcpy(d, q, n);
	return d + n;
}

/* Writes key k escaped as cf_escape() does (at most 3 * len bytes):
 * eight letters or digits at a time while there are. */
static unsigned char *esc(unsigned char *d, const unsigned char *k,
			  size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i = 0;
	uint64_t x;

	while (i < len) {
		unsigned char c = k[i];
		if (len - i >= 8) {
			memcpy(&x, k + i, 8);
			if (alnum8(x)) {
				memcpy(d, &x, 8);
				d += 8;
				i += 8;
				continue;
			}
		}
		if (plain_byte(c) && (c != '.' || i)) {
			*d++ = c;
		} else {
			d[0] = '%';
			d[1] = (unsigned char)hex[c >> 4];
			d[2] = (unsigned char)hex[c & 15];
			d += 3;
		}
		i++;
	}
	return d;
}

/* Writes " TS " (ts >= 0; at most 22 bytes). */
static unsigned char *put_ts(unsigned char *d, int64_t ts)
{
	unsigned char t[20], *e = t + sizeof t, *q = e;
	uint64_t v = (uint64_t)ts;

	do {
		*--q = (unsigned char)('0' + v % 10);
		v /= 10;
	} while (v);
	*d++ = ' ';
	d = put(d, q, (size_t)(e - q));
	*d++ = ' ';
	return d;
}

/* Appends the lines of row r to out; *shown says whether it had any.
 * The row key is escaped once, into key. */
static int row_lines(struct fs_scan *s, const cf_row *r, struct buf *out,
		     int *shown)
{
	const struct cf_cell *c, *prev = NULL;
	const unsigned char *k;
	unsigned char *d;
	size_t klen, i, n = cf_row_count(r), need;
	int rc, nv = 0;

	*shown = 0;
	k = cf_row_key(r, &klen);
	buf_reset(&s->key);
	if ((rc = buf_reserve(&s->key, klen * 3 + 2)))
		return rc;
	if (klen)
		s->key.len = (size_t)(esc(s->key.p, k, klen) - s->key.p);
	else
		buf_append(&s->key, "''", 2);	/* room reserved */
	for (i = 0; i < n; i++) {
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
		/* KEY FAM:QUAL TS VALUE\n, at most this long */
		need = s->key.len + 1 + c->famlen + 1 + c->qlen * 3 + 22 +
		       (c->vlen * 3 > 13 ? c->vlen * 3 : 13) + 1;
		if ((rc = buf_reserve(out, need)))
			return rc;
		d = out->p + out->len;
		d = put(d, s->key.p, s->key.len);
		*d++ = ' ';
		d = put(d, c->fam, c->famlen);
		*d++ = ':';
		d = esc(d, c->qual, c->qlen);
		d = put_ts(d, c->ts);
		if (c->kind) {
			/* a marker (raw): '@' in a value is always %40 */
			const char *m = c->kind == CF_DEL_VERSION ? "@Delete" :
				c->kind == CF_DEL_COLUMN ? "@DeleteColumn" :
				"@DeleteFamily";
			memcpy(d, m, strlen(m));
			d += strlen(m);
		} else if (c->vlen)
			d = esc(d, c->val, c->vlen);
		else {
			memcpy(d, "''", 2);
			d += 2;
		}
		*d++ = '\n';
		out->len = (size_t)(d - out->p);
	}
	return 0;
}

/* Appends the lines of the next row to b, or sets done at the end or
 * at the limit. */
static int produce(struct fs_scan *s, struct buf *b)
{
	const cf_row *r;
	int rc, shown;

	if (s->q.limit && s->rows >= s->q.limit) {
		s->done = 1;
		return 0;
	}
	rc = cf_scan_next(s->s, &r);
	if (!rc && !r)
		s->done = 1;
	else if (!rc) {
		rc = row_lines(s, r, b, &shown);
		s->rows += shown;
	}
	return rc;
}

int fs_scan_read(struct fs_scan *s, size_t n, uint64_t off, const void **p,
		 size_t *got, char *why, size_t whylen)
{
	size_t skip;
	int rc = 0;
	struct buf t;

	*got = 0;
	*p = NULL;
	pthread_mutex_lock(&s->mu);
	while (s->busy)
		pthread_cond_wait(&s->cv, &s->mu);
	s->busy = 1;
	s->refs++;
	pthread_mutex_unlock(&s->mu);
	if (s->has_ahead) {
		/* ahead holds what follows ahead_off; out, what precedes */
		if (off >= s->ahead_off) {
			t = s->out;
			s->out = s->ahead;
			s->ahead = t;
			s->out_off = s->ahead_off;
		} else if (off >= s->out_off) {
			s->out.len = (size_t)(s->ahead_off - s->out_off);
			rc = buf_append(&s->out, s->ahead.p, s->ahead.len);
		}
		buf_reset(&s->ahead);
		s->has_ahead = 0;
	}
	if (!rc && (off < s->out_off || !s->s)) {
		/* from the start (a first read, or a reader going back) */
		if (s->s)
			cf_scan_close(s->s);
		s->s = NULL;
		buf_reset(&s->out);
		s->out_off = 0;
		s->ahead_rc = 0;
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
		if (s->ahead_rc) {
			rc = s->ahead_rc;
			s->ahead_rc = 0;
			break;
		}
		rc = produce(s, &s->out);
	}
	if (rc) {
		snprintf(why, whylen, "scan: %s", cf_strerror(rc));
		s->next_n = 0;
		fs_scan_ahead(s);
		return fs_errno(rc);
	}
	if (off == s->out_off) {
		*got = s->out.len < n ? s->out.len : n;
		*p = s->out.p;
	}
	s->next_off = off + *got;
	s->next_n = n;
	return 0;
}

void fs_scan_ahead(struct fs_scan *s)
{
	size_t from;
	int rc = 0;

	/* The reader takes the bytes of the last read meanwhile: produce
	 * what a read of the same size just after it will want, unless
	 * the file was closed (head) or the scan ended. */
	if (s->next_n && !s->done && s->s &&
	    !__atomic_load_n(&s->closed, __ATOMIC_RELAXED) &&
	    s->next_off >= s->out_off &&
	    s->next_off - s->out_off <= s->out.len) {
		from = (size_t)(s->next_off - s->out_off);
		buf_reset(&s->ahead);
		rc = buf_append(&s->ahead, s->out.p + from, s->out.len - from);
		s->ahead_off = s->next_off;
		while (!rc && !s->done && s->ahead.len < s->next_n &&
		       !__atomic_load_n(&s->closed, __ATOMIC_RELAXED))
			rc = produce(s, &s->ahead);
		if (rc)
			s->ahead_rc = rc;
		s->has_ahead = 1;
	}
	pthread_mutex_lock(&s->mu);
	s->busy = 0;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
	scan_put(s);
}
