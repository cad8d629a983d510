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
 *   filter=F                       FILTER => "F", HBase's filter language
 *                                  (fs/filter.c; %XX escapes allowed)
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
 * reads need and up to AHEAD reads further, so `head` of a huge table
 * stops the work, and an open file holds at most NCHUNK chunks of lines
 * (struct fs_scan).
 * T/.batch's dump is read the same way (fs_scan_open_dump): every kept
 * version as `put ROW FAM:QUAL@TS VALUE`, rows read in pages of
 * DUMP_PAGE cells.
 *
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
#include <sys/uio.h>

#include "fs/filter.h"
#include "fs/fs.h"
#include "fs/scan.h"
#include "util/escape_fast.h"

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
	struct buf filter;	/* filter=: its text, unescaped */
	int has_filter;
	struct fs_filter *flt;	/* and parsed */
};

/*
 * An open scan file.  A producer writes the lines into chunks (a ring of
 * NCHUNK, each about CHUNK bytes, split anywhere in a line) and seals
 * each when full; a read replies straight from the sealed chunks that
 * hold its bytes (one iovec each), so the bytes are never copied again.
 * The producer is whichever thread holds `producing`: a read that finds
 * its bytes not made and no producer produces them itself; after each
 * reply, the replying thread (fs_scan_ahead) goes on producing while
 * the reader takes the reply, until AHEAD reads past the last one, the
 * ring full, the end, or the file's release.  A read whose bytes are
 * not made while a producer runs is left to it (struct later): the
 * producer replies as soon as they are sealed, and no thread sleeps
 * waiting for them.  So on two cores the engine's iteration runs on one
 * while the READ workers and the reader run on the other.
 *
 * Memory: at most NCHUNK chunks of CHUNK bytes (2 MiB), one of them
 * longer when a single cell's line is (its value escaped).
 *
 * mu (a leaf: nothing else is locked under it) guards the fields up to
 * `want`, and the sealed chunks; the producer's part (and the chunk
 * being filled) is the producing thread's, passed on through mu; a
 * read's part is the thread whose turn it is (busy), from fs_scan_read
 * to fs_scan_ahead, or to the producer's answer of a read left to it.
 * refs: the open file's and a read's (fs_scan_ahead runs after the
 * reply, when the RELEASE may already have closed the file).
 */
#define CHUNK (64u << 10)
#define NCHUNK 32
#define AHEAD 3			/* reads' worth produced past the last */
#define READ_MAX ((size_t)(NCHUNK / 2) * CHUNK)	/* longer: short */
_Static_assert(FS_SCAN_IOV >= NCHUNK, "a read's pieces");

struct chunk {
	struct buf b;		/* b.len bytes of lines from offset off */
	uint64_t off;
};

/* A read whose bytes were not made yet: the producer answers it with
 * fn(arg, ...) once they are (fn NULL: none). */
struct later {
	fs_scan_reply_fn *fn;
	void *arg;
	uint64_t off;
	size_t n;
};

struct fs_scan {
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* turn, bytes, producer gone: broadcast */
	int busy, refs, closed;	/* closed: also read without mu */
	int producing;		/* a thread holds the producer's part */
	int stop;		/* (also read without mu) a read going back
				 * wants the producer gone */
	int started;		/* the scan is open and ch[] holds its
				 * bytes from base on */
	int done;		/* every byte is in a sealed chunk */
	int prod_rc;		/* CF_* the producer met */
	int waiting;		/* reads waiting for bytes */
	size_t head, nready;	/* sealed: ch[head .. head + nready) */
	uint64_t ready_end;	/* offset where the sealed bytes end */
	uint64_t next_off;	/* where the last read ended */
	size_t last_n;		/* and how much it asked for */
	struct buf spare[NCHUNK];	/* freed chunks' memory */
	size_t nspare;
	struct later later;	/* a read answered by the producer */
	uint64_t want;		/* (atomic) the end a waiting read needs */
	/* the producer's */
	cf_db *db;
	cf_table *t;
	cf_scanner *s;
	struct query q;
	struct cf_column cols[COLS_MAX];
	struct chunk ch[NCHUNK];	/* the filling one: head + nready */
	const cf_row *row;	/* the row being written, from cell ci */
	size_t ci;
	const struct cf_cell *prev;	/* its last cell shown */
	int nv;			/* versions of prev's column shown */
	int shown;		/* the row showed a cell */
	const unsigned char *key;	/* its key */
	size_t klen;
	const unsigned char *ekey;	/* escaped in the chunk being
					 * filled (NULL: not yet) */
	size_t eklen;
	uint64_t rows;		/* rows shown so far */
	int64_t ts;		/* the last timestamp written */
	unsigned char tsd[24];	/* " TS " of it, at the end */
	size_t tslen;
	int end;		/* no row left (end, or limit) */
	int filtered;		/* cell filters: row_lines counts versions */
	unsigned char *keep;	/* filter=: the row's cells shown (kcap) */
	size_t kcap;
	int keys_only;		/* filter= KeyOnlyFilter: FS_KEYS_* */
	int64_t len_as;		/* FS_KEYS_LEN: -1, or the length shown */
	int dump;		/* T/.batch's dump: `put` lines, rows read
				 * in pages of DUMP_PAGE cells */
};

/* Cells the dump reads at a time: a row of millions of cells comes a
 * page after another (each of its lines names the row). */
#define DUMP_PAGE 1024

static void query_release(struct query *q)
{
	size_t i;

	buf_release(&q->start);
	buf_release(&q->stop);
	buf_release(&q->prefix);
	buf_release(&q->colprefix);
	buf_release(&q->qualifier);
	buf_release(&q->value);
	buf_release(&q->filter);
	fs_filter_free(q->flt);
	q->flt = NULL;
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
	if (K("filter")) {
		*what = "filter=F: '%' not followed by two hex digits";
		q->has_filter = 1;
		buf_reset(&q->filter);
		return fs_filter_decode(v, vl, &q->filter);
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
			break;
		p = amp + 1;
	}
	/* after every parameter: reversed changes the filter's ends */
	if (q->has_filter) {
		char fwhy[200] = "";
		int rc = fs_filter_parse((const char *)q->filter.p,
					 q->filter.len, q->reversed, &q->flt,
					 fwhy, sizeof fwhy);
		if (rc) {
			snprintf(why, whylen, "scan query: %s", fwhy);
			query_release(q);
			return rc;
		}
		/* PageFilter(N): at most N rows, as limit= */
		if (fs_filter_page(q->flt) && (!q->limit ||
		    fs_filter_page(q->flt) < q->limit))
			q->limit = fs_filter_page(q->flt);
	}
	return 0;
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
	s->filtered = q->has_value || q->nts || q->has_qualifier ||
		      q->has_colprefix || q->has_filter;
	s->keys_only = q->flt ? fs_filter_keys_only(q->flt, &s->len_as) :
		       FS_KEYS_NONE;
	o.read.max_versions = s->filtered ? INT32_MAX : q->versions;
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
	if (s->dump)
		o.batch = DUMP_PAGE;
	s->rows = 0;
	s->end = 0;
	s->row = NULL;
	return cf_scan_open(s->t, &o, &s->s);
}

/* Frees s and what it holds but its query. */
static void scan_free(struct fs_scan *s)
{
	size_t i;

	if (s->s)
		cf_scan_close(s->s);
	if (s->t)
		cf_table_close(s->t);
	for (i = 0; i < NCHUNK; i++) {
		buf_release(&s->ch[i].b);
		buf_release(&s->spare[i]);
	}
	free(s->keep);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

/* Opens a scan of table: query qs, or with dump the .batch dump. */
static int scan_new(cf_db *db, const char *table, const char *qs, int dump,
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
	if (dump) {
		/* every kept version, as a Get of all of them sees it */
		s->dump = 1;
		s->q.versions = INT32_MAX;
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

int fs_scan_open(cf_db *db, const char *table, const char *qs,
		 struct fs_scan **out, char *why, size_t whylen)
{
	return scan_new(db, table, qs, 0, out, why, whylen);
}

int fs_scan_open_dump(cf_db *db, const char *table, struct fs_scan **out,
		      char *why, size_t whylen)
{
	return scan_new(db, table, "all", 1, out, why, whylen);
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
	    (q->colprefix.len &&
	     memcmp(c->qual, q->colprefix.p, q->colprefix.len))))
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

/* Copies n bytes: the few of a name without a call. */
static inline unsigned char *put(unsigned char *d, const void *p, size_t n)
{
	if (n <= 16)
		cf_copy_short(d, p, n);	/* a byte loop would become a call */
	else
		memcpy(d, p, n);
	return d + n;
}

/* Writes " TS " (ts >= 0; at most 21 bytes), kept as text: a row's
 * cells and a batch's rows often share it. */
static inline unsigned char *put_ts(struct fs_scan *s, unsigned char *d,
				    int64_t ts)
{
	unsigned char *e = s->tsd + sizeof s->tsd, *q = e;
	uint64_t v = (uint64_t)ts;

	if (ts != s->ts || !s->tslen) {
		*--q = ' ';
		do {
			*--q = (unsigned char)('0' + v % 10);
			v /= 10;
		} while (v);
		*--q = ' ';
		s->ts = ts;
		s->tslen = (size_t)(e - q);
	}
	return put(d, e - s->tslen, s->tslen);
}

/* The line of cell c at most this long: KEY FAM:QUAL TS VALUE\n (a
 * key or value '' or a marker's text at most 13 bytes; a dump's "put "
 * before it, '@' for the first space of " TS "), and the 16
 * bytes past an escaped name that cf_escape_put() may write over
 * (CF_ESCAPE_ROOM). */
static inline size_t line_max(const struct fs_scan *s,
			      const struct cf_cell *c)
{
	return (s->klen + c->qlen + c->vlen) * 3 + c->famlen +
	       4 + 13 + 1 + 1 + 21 + 13 + 1 + 16;
}

/* Writes the lines of the current row from cell ci on into chunk f:
 * 0 when the row is written (row NULL), 1 when f is full (the row goes
 * on in the next chunk), or a CF_* code. */
static int row_lines(struct fs_scan *s, struct chunk *f)
{
	const struct cf_cell *c;
	unsigned char *d;
	size_t n = cf_row_count(s->row), need;
	int rc;

	for (; s->ci < n; s->ci++) {
		c = cf_row_cell(s->row, s->ci);
		/* without cell filters the engine counts the versions */
		if (!s->filtered)
			;
		else if (!cell_passes(&s->q, c) ||
			 (s->keep && !s->keep[s->ci]))
			continue;
		else if (s->q.raw)
			;
		else if (s->prev && s->prev->famlen == c->famlen &&
		    s->prev->qlen == c->qlen &&
		    !memcmp(s->prev->fam, c->fam, c->famlen) &&
		    (!c->qlen || !memcmp(s->prev->qual, c->qual, c->qlen))) {
			if (s->nv >= s->q.versions)
				continue;
		} else
			s->nv = 0;
		need = line_max(s, c);
		if (f->b.cap - f->b.len < need) {
			if (f->b.len) {
				s->ekey = NULL;	/* not in the next */
				return 1;
			}
			/* an empty chunk: made to hold the line */
			if ((rc = buf_reserve(&f->b, need > CHUNK ?
					      need : CHUNK)))
				return rc;
		}
		s->nv++;
		s->prev = c;
		s->shown = 1;
		d = f->b.p + f->b.len;
		if (s->dump) {
			memcpy(d, "put ", 4);
			d += 4;
		}
		/* the key escaped once per row and chunk, then copied
		 * from the line before (not from a buffer just written,
		 * whose overlapping words would stall the load) */
		if (s->ekey)
			d = put(d, s->ekey, s->eklen);
		else {
			s->ekey = d;
			if (s->klen)
				d = cf_escape_put(d, s->key, s->klen);
			else {
				memcpy(d, "''", 2);
				d += 2;
			}
			s->eklen = (size_t)(d - s->ekey);
		}
		*d++ = ' ';
		d = put(d, c->fam, c->famlen);
		*d++ = ':';
		d = cf_escape_put(d, c->qual, c->qlen);
		d = put_ts(s, d, c->ts);
		if (s->dump) {
			/* put ROW FAM:QUAL@TS VALUE (the empty value is
			 * nothing: a .batch line's value is the rest) */
			d[-(ptrdiff_t)s->tslen] = '@';
			d = cf_escape_put(d, c->val, c->vlen);
		} else if (c->kind) {
			/* a marker (raw): '@' in a value is always %40 */
			const char *m = c->kind == CF_DEL_VERSION ? "@Delete" :
				c->kind == CF_DEL_COLUMN ? "@DeleteColumn" :
				"@DeleteFamily";
			memcpy(d, m, strlen(m));
			d += strlen(m);
		} else if (s->keys_only == FS_KEYS_LEN) {
			/* KeyOnlyFilter(true): the value's length as 4
			 * big-endian bytes (at most 12 escaped, within
			 * line_max's 13 for a marker) */
			uint32_t vl = s->len_as < 0 ? (uint32_t)c->vlen :
				      (uint32_t)s->len_as;
			unsigned char be[4] = { (unsigned char)(vl >> 24),
				(unsigned char)(vl >> 16),
				(unsigned char)(vl >> 8), (unsigned char)vl };
			d = cf_escape_put(d, be, 4);
		} else if (c->vlen && s->keys_only == FS_KEYS_NONE)
			d = cf_escape_put(d, c->val, c->vlen);
		else {
			memcpy(d, "''", 2);
			d += 2;
		}
		*d++ = '\n';
		f->b.len = (size_t)(d - f->b.p);
	}
	s->rows += s->shown;
	s->row = NULL;
	return 0;
}

/* Applies filter= to the row just read: s->keep says which cells show;
 * a row after which none can pass ends the scan (row NULL, end). */
static int row_filter(struct fs_scan *s)
{
	size_t n = cf_row_count(s->row);
	int end, rc;

	if (s->kcap < n) {
		unsigned char *k = realloc(s->keep, n);
		if (!k)
			return CF_ENOMEM;
		s->keep = k;
		s->kcap = n;
	}
	if ((rc = fs_filter_row(s->q.flt, s->row, s->keep, &end)))
		return rc == ENOMEM ? CF_ENOMEM : CF_EINVAL;
	if (end) {
		s->row = NULL;
		s->end = 1;
	}
	return 0;
}

/* Takes the next row, or sets end at the end or at the limit. */
static int next_row(struct fs_scan *s)
{
	int rc;

	if (s->q.limit && s->rows >= s->q.limit) {
		s->end = 1;
		return 0;
	}
	if ((rc = cf_scan_next(s->s, &s->row)))
		return rc;
	if (!s->row) {
		s->end = 1;
		return 0;
	}
	if (s->q.flt && (rc = row_filter(s)))
		return rc;
	if (!s->row)
		return 0;
	s->ci = 0;
	s->prev = NULL;
	s->nv = 0;
	s->shown = 0;
	s->key = cf_row_key(s->row, &s->klen);
	s->ekey = NULL;
	return 0;
}

/* The chunk being filled, NULL when the ring is full.  Under mu. */
static struct chunk *fill_slot(struct fs_scan *s)
{
	struct chunk *f;

	if (s->nready == NCHUNK)
		return NULL;
	f = &s->ch[(s->head + s->nready) % NCHUNK];
	if (!f->b.len) {
		f->off = s->ready_end;
		if (!f->b.p && s->nspare) {
			f->b = s->spare[--s->nspare];
			s->spare[s->nspare] = (struct buf)BUF_INIT;
		}
	}
	return f;
}

/* Seals the chunk being filled (its bytes become a read's); the next
 * one, or NULL when the ring is full.  *wake: a waiting read has its
 * bytes (woken after mu is dropped, so that it does not wait for mu
 * again).  Under mu. */
static struct chunk *seal(struct fs_scan *s, struct chunk *f, int *wake)
{
	if (f && f->b.len) {
		s->nready++;
		s->ready_end = f->off + f->b.len;
	}
	*wake = (s->waiting || s->later.fn) && s->ready_end >=
		__atomic_load_n(&s->want, __ATOMIC_RELAXED);
	return fill_slot(s);
}

/* Empties chunk c: its memory kept for the next (one of a longer line
 * freed).  Under mu. */
static void chunk_free(struct fs_scan *s, struct chunk *c)
{
	c->b.len = 0;
	if (c->b.p && c->b.cap <= CHUNK && s->nspare < NCHUNK)
		s->spare[s->nspare++] = c->b;
	else
		buf_release(&c->b);
	c->b = (struct buf)BUF_INIT;
}

/* Frees the sealed chunks that end at or before off.  Under mu, by the
 * read whose turn it is. */
static void drop_before(struct fs_scan *s, uint64_t off)
{
	struct chunk *c;

	while (s->nready) {
		c = &s->ch[s->head];
		if (c->off + c->b.len > off)
			break;
		chunk_free(s, c);
		s->head = (s->head + 1) % NCHUNK;
		s->nready--;
	}
}

/* How far the producer goes ahead of the reads.  Under mu. */
static uint64_t ahead_end(const struct fs_scan *s)
{
	uint64_t w = __atomic_load_n(&s->want, __ATOMIC_RELAXED),
		 e = s->next_off + (uint64_t)AHEAD * s->last_n;

	return w > e ? w : e;
}

/* The pieces of [off, off + n) in the sealed chunks (none ending at or
 * before off: drop_before(off) first): up to the end of the sealed
 * bytes.  Under mu, by the read whose turn it is. */
static void pieces(struct fs_scan *s, uint64_t off, size_t n,
		   struct iovec *iov, int *niov, size_t *got)
{
	uint64_t end = off + n < s->ready_end ? off + n : s->ready_end;
	struct chunk *c;
	size_t i, from, take;

	*got = 0;
	*niov = 0;
	for (i = 0; i < s->nready && off + *got < end; i++) {
		c = &s->ch[(s->head + i) % NCHUNK];
		from = (size_t)(off + *got - c->off);
		take = c->b.len - from;
		if (take > end - off - *got)
			take = (size_t)(end - off - *got);
		iov[*niov].iov_base = c->b.p + from;
		iov[*niov].iov_len = take;
		(*niov)++;
		*got += take;
	}
	s->next_off = off + *got;
}

/* A read answered later and how: its pieces, or an error. */
struct answer {
	struct later l;
	struct iovec iov[NCHUNK];
	int niov, rc;
	size_t got;
};

/* Takes the later read if its bytes are sealed, the scan ended or
 * failed, or (stopped: the producer stopped) the ring is full of its
 * bytes, which must do (a short read): 1 and *a.  Under mu. */
static int take_later(struct fs_scan *s, int stopped, struct answer *a)
{
	if (!s->later.fn)
		return 0;
	/* chunks sealed since it was left may end before it */
	drop_before(s, s->later.off);
	if (s->ready_end < s->later.off + s->later.n && !s->done &&
	    !s->prod_rc && !(stopped && s->nready == NCHUNK))
		return 0;
	a->l = s->later;
	s->later.fn = NULL;
	__atomic_store_n(&s->want, 0, __ATOMIC_RELAXED);
	a->rc = 0;
	a->niov = 0;
	a->got = 0;
	if (s->prod_rc && s->ready_end < a->l.off + a->l.n) {
		a->rc = s->prod_rc;
		s->prod_rc = 0;
		s->started = 0;
		s->next_off = a->l.off;
	} else
		pieces(s, a->l.off, a->l.n, a->iov, &a->niov, &a->got);
	return 1;
}

/* Answers the later read taken, then ends its turn (as fs_scan_ahead
 * does, but for producing: the caller is the producer). */
static void answer(struct fs_scan *s, struct answer *a)
{
	char why[80];

	if (a->rc) {
		snprintf(why, sizeof why, "scan: %s", cf_strerror(a->rc));
		a->l.fn(a->l.arg, NULL, 0, fs_errno(a->rc), why);
	} else
		a->l.fn(a->l.arg, a->iov, a->niov, 0, NULL);
	pthread_mutex_lock(&s->mu);
	drop_before(s, s->next_off);
	s->busy = 0;
	pthread_mutex_unlock(&s->mu);
	pthread_cond_broadcast(&s->cv);
	scan_put(s);
}

/*
 * The producer's loop, by the thread that set producing: writes rows
 * into the chunks, sealing each when full, when a waiting read's bytes
 * are in it, and at the end.  A read producing its own bytes passes
 * until (their end): it returns once they are sealed.  Production ahead
 * (until 0) stops AHEAD reads past the last, when the ring is full, or
 * when the file is closed or a read going back asks it to.  Every check
 * but a seal's is a load of a word per row.
 */
static void produce(struct fs_scan *s, uint64_t until)
{
	struct answer a;
	struct chunk *f;
	uint64_t limit, end, w;
	int rc = 0, go, wake, took;

	pthread_mutex_lock(&s->mu);
	f = fill_slot(s);
	limit = until ? until : ahead_end(s);
	pthread_mutex_unlock(&s->mu);
	while (f) {
		if (!s->row) {
			end = f->off + f->b.len;
			w = __atomic_load_n(&s->want, __ATOMIC_ACQUIRE);
			if (end >= limit || (w && end >= w)) {
				pthread_mutex_lock(&s->mu);
				f = seal(s, f, &wake);
				took = wake && take_later(s, 0, &a);
				if (until)
					go = s->ready_end < until;
				else {
					limit = ahead_end(s);
					go = s->ready_end < limit;
				}
				pthread_mutex_unlock(&s->mu);
				if (took)
					answer(s, &a);
				else if (wake)
					pthread_cond_broadcast(&s->cv);
				if (!go || !f)
					return;
				w = __atomic_load_n(&s->want, __ATOMIC_ACQUIRE);
			}
			/* (a read waiting keeps the file open: no close or
			 * read going back before it is answered) */
			if (!until && !(w > end) &&
			    (__atomic_load_n(&s->closed, __ATOMIC_RELAXED) ||
			     __atomic_load_n(&s->stop, __ATOMIC_RELAXED)))
				return;
			if ((rc = next_row(s)))
				break;
			if (s->end) {
				pthread_mutex_lock(&s->mu);
				seal(s, f, &wake);
				s->done = 1;
				took = take_later(s, 0, &a);
				pthread_mutex_unlock(&s->mu);
				if (took)
					answer(s, &a);
				pthread_cond_broadcast(&s->cv);
				return;
			}
		}
		rc = row_lines(s, f);
		if (rc < 0 || rc > 1)
			break;
		if (rc == 1) {
			pthread_mutex_lock(&s->mu);
			f = seal(s, f, &wake);
			took = wake && take_later(s, 0, &a);
			pthread_mutex_unlock(&s->mu);
			if (took)
				answer(s, &a);
			else if (wake)
				pthread_cond_broadcast(&s->cv);
			rc = 0;
		}
	}
	if (rc) {
		pthread_mutex_lock(&s->mu);
		s->prod_rc = rc;
		took = take_later(s, 0, &a);
		pthread_mutex_unlock(&s->mu);
		if (took)
			answer(s, &a);
		pthread_cond_broadcast(&s->cv);
	}
}

/* Starts the scan again from the first byte: drops every chunk.  Under
 * mu, by the read whose turn it is, with no producer; drops mu while it
 * opens the scan. */
static int restart(struct fs_scan *s)
{
	size_t i;
	int rc;

	drop_before(s, UINT64_MAX);
	for (i = 0; i < NCHUNK; i++)	/* the one being filled */
		chunk_free(s, &s->ch[i]);
	s->head = 0;
	s->ready_end = 0;
	s->next_off = 0;
	s->done = 0;
	s->prod_rc = 0;
	s->producing = 1;
	pthread_mutex_unlock(&s->mu);
	if (s->s)
		cf_scan_close(s->s);
	s->s = NULL;
	rc = scan_start(s);
	pthread_mutex_lock(&s->mu);
	s->producing = 0;
	s->started = !rc;
	return rc;
}

/* Ends a read's turn and drops its reference.  Under mu (unlocks). */
static void turn_end(struct fs_scan *s)
{
	s->busy = 0;
	pthread_mutex_unlock(&s->mu);
	pthread_cond_broadcast(&s->cv);
	scan_put(s);
}

int fs_scan_read(struct fs_scan *s, size_t n, uint64_t off,
		 struct iovec *iov, int *niov, size_t *got, char *why,
		 size_t whylen, fs_scan_reply_fn *reply, void *arg)
{
	uint64_t end, base;
	int rc = 0;

	*got = 0;
	*niov = 0;
	if (n > READ_MAX)
		n = READ_MAX;	/* a short read; the kernel asks 1 MiB */
	pthread_mutex_lock(&s->mu);
	while (s->busy)
		pthread_cond_wait(&s->cv, &s->mu);
	s->busy = 1;
	s->refs++;
	s->last_n = n;
	for (;;) {
		base = s->nready ? s->ch[s->head].off : s->ready_end;
		if (!s->started || off < base) {
			/* a first read, or a reader going back */
			if (s->producing) {
				__atomic_store_n(&s->stop, 1,
						 __ATOMIC_RELAXED);
				while (s->producing)
					pthread_cond_wait(&s->cv, &s->mu);
				__atomic_store_n(&s->stop, 0,
						 __ATOMIC_RELAXED);
				continue;
			}
			if ((rc = restart(s)))
				break;
			continue;
		}
		drop_before(s, off);
		if (s->ready_end >= off + n || s->done)
			break;
		if (s->prod_rc) {
			rc = s->prod_rc;
			s->prod_rc = 0;
			s->started = 0;
			break;
		}
		__atomic_store_n(&s->want, off + n, __ATOMIC_RELEASE);
		if (s->producing && reply) {
			/* the producer answers it: this thread goes back
			 * to the kernel, and no thread waits to be woken */
			s->later.fn = reply;
			s->later.arg = arg;
			s->later.off = off;
			s->later.n = n;
			pthread_mutex_unlock(&s->mu);
			return FS_SCAN_LATER;
		}
		if (s->producing) {
			s->waiting++;
			pthread_cond_wait(&s->cv, &s->mu);
			s->waiting--;
			continue;
		}
		/* no producer: make the bytes here */
		end = s->ready_end;
		s->producing = 1;
		pthread_mutex_unlock(&s->mu);
		produce(s, off + n);
		pthread_mutex_lock(&s->mu);
		s->producing = 0;
		pthread_cond_broadcast(&s->cv);
		if (s->ready_end == end && !s->done && !s->prod_rc &&
		    s->nready == NCHUNK)
			break;	/* the ring full: a short read */
	}
	__atomic_store_n(&s->want, 0, __ATOMIC_RELAXED);
	if (rc) {
		snprintf(why, whylen, "scan: %s", cf_strerror(rc));
		s->next_off = off;
		turn_end(s);
		return fs_errno(rc);
	}
	pieces(s, off, n, iov, niov, got);
	pthread_mutex_unlock(&s->mu);
	return 0;
}

void fs_scan_ahead(struct fs_scan *s)
{
	int run;

	pthread_mutex_lock(&s->mu);
	drop_before(s, s->next_off);
	/* The reader takes the bytes of the last read meanwhile: go on
	 * producing, unless another thread does, the scan ended or failed,
	 * or the file was closed (head). */
	run = !s->producing && s->started && !s->done && !s->prod_rc &&
	      !__atomic_load_n(&s->closed, __ATOMIC_RELAXED) &&
	      s->nready < NCHUNK;
	if (run)
		s->producing = 1;
	s->busy = 0;
	pthread_mutex_unlock(&s->mu);
	pthread_cond_broadcast(&s->cv);	/* after mu: see seal() */
	while (run) {
		struct answer a;
		int took;

		produce(s, 0);
		/* stopped (ahead far enough, the ring full, closed): but
		 * a read left to it is answered first */
		pthread_mutex_lock(&s->mu);
		took = take_later(s, 1, &a);
		run = took || s->later.fn;
		if (!run)
			s->producing = 0;
		pthread_mutex_unlock(&s->mu);
		if (took)
			answer(s, &a);
		else if (!run)
			pthread_cond_broadcast(&s->cv);
	}
	scan_put(s);
}
