/*
 * recent.c: the recent points, a per-series column of the newest hours
 * kept in memory for queries (docs/timeseries.md, "Recent points").
 *
 * It is a copy, never the only one: every point is first written to
 * tsdb (WAL and memstore), then added here.  It covers every row of
 * tsdb whose base hour is at or after ws, the window's start, and
 * answers for them exactly what a scan of the table would: the decoded
 * points of each row in time order.  What could make it differ is
 * caught, never guessed:
 *
 *   - a write to tsdb not made by tsd (a cell written or removed under
 *     MNT/tsdb/, a schema change, the table dropped and made again)
 *     changes the table's stamp (cf_table_stamp()); tsd's own puts and
 *     row compactions keep it (cf_batch_keep_stamp()).  A stamp other
 *     than the one the column was built at sends queries to the table
 *     until the column is rebuilt from it;
 *   - a point written twice at one millisecond with another value (the
 *     table keeps the newest version, which this copy does not know)
 *     marks its row "fallback": queries read that row from the table;
 *   - a row that does not decode is a fallback row too (the table path
 *     logs and skips it).
 *
 * Rebuild: after tsd_open() (so after every restart) and after a stamp
 * change, maintenance clears the column and scans tsdb's rows of the
 * window, metric by metric; puts made meanwhile are added as usual (a
 * point both scanned and put is met twice with the same value).  It is
 * valid once the scan ends with the stamp it began with.
 *
 * Memory (struct tsd_recent.bytes): 13 bytes a point (a 4-byte offset,
 * an 8-byte value, a float flag) times each row's capacity, plus each
 * row's and series' header, at most recent_bytes: past it, the oldest
 * hours are dropped (ws moves forward); hours older than recent_hours
 * are dropped each maintenance pass.  Dropped hours are read from the
 * table, as before.
 *
 * Locking: lock (a rwlock) guards everything here; puts and the
 * rebuild take it for writing after their engine calls, queries for
 * reading, also across the engine reads of fallback rows (engine locks
 * are taken after it, never before).
 */
#include <stdlib.h>
#include <string.h>

#include "tsd/internal.h"
#include "util/coding.h"
#include "util/env.h"
#include "util/err.h"
#include "util/log.h"

#define PT_BYTES (sizeof(uint32_t) + sizeof(uint64_t) + 1)

enum { R_INVALID, R_BUILDING, R_VALID };

struct rseries {
	struct rseries *hnext;	/* hash chain */
	struct rseries *mnext;	/* next series of the metric */
	uint32_t muid;
	uint8_t ntags;
	unsigned char tags[TSD_MAX_TAGS * 2 * TSD_UID_WIDTH];
	struct tsd_recent_row *rows;	/* by base hour */
	uint32_t nrows, caprows;
};

struct rmetric {
	struct rmetric *hnext;
	uint32_t muid;
	struct rseries *first;
};

struct tsd_recent {
	pthread_rwlock_t lock;
	int state;
	uint64_t stamp;		/* the table's, when R_VALID */
	uint64_t gen;		/* a clear makes a new generation */
	int64_t ws;		/* window start (s), an hour */
	size_t max_bytes, bytes, points;
	unsigned hours;
	struct rseries **sh;	/* series hash */
	size_t nsh, nseries;
	struct rmetric **mh;	/* metric hash */
	size_t nmh, nmetrics;
	struct rseries *last;	/* the series of the last put */
	int ttl_off;		/* none for stamp: family t has a TTL */
	uint64_t rebuilds;
};

static uint32_t fnv(const unsigned char *p, size_t n, uint32_t h)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static uint32_t series_hash(uint32_t muid, const unsigned char *tags,
			    size_t ntags)
{
	unsigned char m[3];
	tsd_uid_put(m, muid);
	return fnv(tags, ntags * 6, fnv(m, 3, 2166136261u));
}

static void row_release(struct tsd_recent *r, struct tsd_recent_row *w)
{
	r->bytes -= (size_t)w->cap * PT_BYTES;
	r->points -= w->n;
	free(w->off);
	w->off = NULL;
	w->val = NULL;
	w->isf = NULL;
	w->n = w->cap = 0;
}

static void clear_all(struct tsd_recent *r)
{
	for (size_t i = 0; i < r->nsh; i++) {
		struct rseries *s = r->sh[i], *n;
		for (; s; s = n) {
			n = s->hnext;
			for (uint32_t j = 0; j < s->nrows; j++)
				row_release(r, &s->rows[j]);
			free(s->rows);
			free(s);
		}
	}
	for (size_t i = 0; i < r->nmh; i++) {
		struct rmetric *m = r->mh[i], *n;
		for (; m; m = n) {
			n = m->hnext;
			free(m);
		}
	}
	free(r->sh);
	free(r->mh);
	r->sh = NULL;
	r->mh = NULL;
	r->nsh = r->nseries = r->nmh = r->nmetrics = 0;
	r->bytes = r->points = 0;
	r->last = NULL;
	r->gen++;
}

int tsd_recent_new(const struct tsd_options *o, struct tsd_recent **out)
{
	struct tsd_recent *r = calloc(1, sizeof *r);

	*out = NULL;
	if (!r)
		return CF_ENOMEM;
	pthread_rwlock_init(&r->lock, NULL);
	r->max_bytes = (size_t)o->recent_bytes;
	r->hours = o->recent_hours ? o->recent_hours : 1;
	r->state = R_INVALID;
	*out = r;
	return CF_OK;
}

void tsd_recent_free(struct tsd_recent *r)
{
	if (!r)
		return;
	clear_all(r);
	pthread_rwlock_destroy(&r->lock);
	free(r);
}

static int64_t window_now(const struct tsd_recent *r)
{
	int64_t h = env_now_ms() / 1000;
	h -= h % TSD_MAX_TIMESPAN;
	h -= (int64_t)(r->hours - 1) * TSD_MAX_TIMESPAN;
	return h > 0 ? h : 0;
}

/* --- the structure ------------------------------------------------------ */

static struct rmetric *metric_find(struct tsd_recent *r, uint32_t muid)
{
	if (!r->nmh)
		return NULL;
	for (struct rmetric *m = r->mh[muid & (r->nmh - 1)]; m; m = m->hnext)
		if (m->muid == muid)
			return m;
	return NULL;
}

/* Doubles the series hash when it is half full.  CF_ENOMEM. */
static int grow_series(struct tsd_recent *r)
{
	size_t nn = r->nsh ? 2 * r->nsh : 256;
	struct rseries **nt;

	if (2 * (r->nseries + 1) <= r->nsh)
		return CF_OK;
	if (!(nt = calloc(nn, sizeof *nt)))
		return CF_ENOMEM;
	for (size_t i = 0; i < r->nsh; i++) {
		struct rseries *e = r->sh[i], *next;
		for (; e; e = next) {
			next = e->hnext;
			size_t b = series_hash(e->muid, e->tags, e->ntags) &
				   (nn - 1);
			e->hnext = nt[b];
			nt[b] = e;
		}
	}
	r->bytes += (nn - r->nsh) * sizeof *nt;
	free(r->sh);
	r->sh = nt;
	r->nsh = nn;
	return CF_OK;
}

/* The same for the metric hash. */
static int grow_metrics(struct tsd_recent *r)
{
	size_t nn = r->nmh ? 2 * r->nmh : 64;
	struct rmetric **nt;

	if (2 * (r->nmetrics + 1) <= r->nmh)
		return CF_OK;
	if (!(nt = calloc(nn, sizeof *nt)))
		return CF_ENOMEM;
	for (size_t i = 0; i < r->nmh; i++) {
		struct rmetric *e = r->mh[i], *next;
		for (; e; e = next) {
			next = e->hnext;
			e->hnext = nt[e->muid & (nn - 1)];
			nt[e->muid & (nn - 1)] = e;
		}
	}
	r->bytes += (nn - r->nmh) * sizeof *nt;
	free(r->mh);
	r->mh = nt;
	r->nmh = nn;
	return CF_OK;
}

/* The series of row key key[0..klen) (valid), created when missing;
 * NULL: no memory. */
static struct rseries *series_get(struct tsd_recent *r,
				  const unsigned char *key, size_t klen)
{
	uint32_t muid = tsd_uid_get(key);
	const unsigned char *tags = key + TSD_ROWKEY_PREFIX;
	size_t ntags = (klen - TSD_ROWKEY_PREFIX) / 6;
	struct rseries *s = r->last;

	if (s && s->muid == muid && s->ntags == ntags &&
	    !memcmp(s->tags, tags, ntags * 6))
		return s;
	uint32_t h = series_hash(muid, tags, ntags);
	if (r->nsh)
		for (s = r->sh[h & (r->nsh - 1)]; s; s = s->hnext)
			if (s->muid == muid && s->ntags == ntags &&
			    !memcmp(s->tags, tags, ntags * 6))
				return r->last = s;
	struct rmetric *m = metric_find(r, muid);
	if (!m) {
		if (grow_metrics(r))
			return NULL;
		if (!(m = calloc(1, sizeof *m)))
			return NULL;
		m->muid = muid;
		m->hnext = r->mh[muid & (r->nmh - 1)];
		r->mh[muid & (r->nmh - 1)] = m;
		r->nmetrics++;
		r->bytes += sizeof *m;
	}
	if (grow_series(r))
		return NULL;
	if (!(s = calloc(1, sizeof *s)))
		return NULL;
	s->muid = muid;
	s->ntags = (uint8_t)ntags;
	memcpy(s->tags, tags, ntags * 6);
	s->hnext = r->sh[h & (r->nsh - 1)];
	r->sh[h & (r->nsh - 1)] = s;
	s->mnext = m->first;
	m->first = s;
	r->nseries++;
	r->bytes += sizeof *s;
	return r->last = s;
}

/* The row of s at hour base, created when missing; NULL: no memory. */
static struct tsd_recent_row *row_get(struct tsd_recent *r, struct rseries *s,
				      uint32_t base)
{
	uint32_t i = s->nrows;

	/* rows come mostly in hour order: look from the end */
	while (i > 0 && s->rows[i - 1].base > base)
		i--;
	if (i > 0 && s->rows[i - 1].base == base)
		return &s->rows[i - 1];
	if (s->nrows == s->caprows) {
		uint32_t nc = s->caprows ? 2 * s->caprows : 4;
		struct tsd_recent_row *p = realloc(s->rows, nc * sizeof *p);
		if (!p)
			return NULL;
		r->bytes += (size_t)(nc - s->caprows) * sizeof *p;
		s->rows = p;
		s->caprows = nc;
	}
	memmove(&s->rows[i + 1], &s->rows[i],
		(s->nrows - i) * sizeof *s->rows);
	memset(&s->rows[i], 0, sizeof s->rows[i]);
	s->rows[i].base = base;
	s->nrows++;
	return &s->rows[i];
}

static int row_reserve(struct tsd_recent *r, struct tsd_recent_row *w)
{
	if (w->n < w->cap)
		return CF_OK;
	/* rows of 360 or 3600 points: grow by halves past 64, or at once
	 * to what the points so far predict for the rest of the hour
	 * (points in time order at a steady interval: 16 points of a 10 s
	 * series say 360), at most 16 times the room; fresh memory is
	 * dear (a first touch of a page: 15-30 us on a virtual machine),
	 * and each step copied the row */
	uint32_t nc = w->cap < 64 ? (w->cap ? 4 * w->cap : 16)
				  : w->cap + w->cap / 2;
	if (w->n >= 16 && w->off[w->n - 1] > w->off[0]) {
		uint64_t span = w->off[w->n - 1] - w->off[0];
		uint64_t left = (uint64_t)TSD_MAX_TIMESPAN * 1000 -
				w->off[w->n - 1];
		uint64_t want = w->n + (uint64_t)w->n * left / span + 1;
		if (want > (uint64_t)w->cap * 16)
			want = (uint64_t)w->cap * 16;
		if (want > (uint64_t)TSD_MAX_TIMESPAN * 1000)
			want = (uint64_t)TSD_MAX_TIMESPAN * 1000;
		if (want > nc)
			nc = (uint32_t)want;
	}
	nc = (nc + 1) & ~(uint32_t)1;	/* even: the values stay aligned */
	unsigned char *m = malloc((size_t)nc * PT_BYTES);
	if (!m)
		return CF_ENOMEM;
	uint32_t *off = (uint32_t *)m;
	uint64_t *val = (uint64_t *)(m + (size_t)nc * 4);
	uint8_t *isf = m + (size_t)nc * 12;
	if (w->n) {
		memcpy(off, w->off, w->n * sizeof *off);
		memcpy(val, w->val, w->n * sizeof *val);
		memcpy(isf, w->isf, w->n);
	}
	free(w->off);
	r->bytes += (size_t)(nc - w->cap) * PT_BYTES;
	w->off = off;
	w->val = val;
	w->isf = isf;
	w->cap = nc;
	return CF_OK;
}

static void fallback(struct tsd_recent *r, struct tsd_recent_row *w)
{
	row_release(r, w);
	w->fallback = 1;
}

static uint64_t bits_of(const struct tsd_value *v)
{
	uint64_t b;
	if (v->is_float)
		memcpy(&b, &v->d, 8);
	else
		b = (uint64_t)v->i;
	return b;
}

/* Adds one decoded point to row w.  CF_ENOMEM. */
static int row_add(struct tsd_recent *r, struct tsd_recent_row *w,
		   uint32_t off, const struct tsd_value *v)
{
	uint64_t b = bits_of(v);
	uint32_t i = w->n;
	int rc;

	if (w->fallback)
		return CF_OK;
	if (i && w->off[i - 1] >= off) {
		uint32_t lo = 0, hi = w->n;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (w->off[mid] < off)
				lo = mid + 1;
			else
				hi = mid;
		}
		i = lo;
		if (i < w->n && w->off[i] == off) {
			/* the same point again (a rebuild meeting a put)
			 * changes nothing; another value: which one the
			 * table shows depends on versions */
			if (w->isf[i] != (uint8_t)v->is_float || w->val[i] != b)
				fallback(r, w);
			return CF_OK;
		}
	}
	if ((rc = row_reserve(r, w)))
		return rc;
	if (i < w->n) {
		memmove(&w->off[i + 1], &w->off[i], (w->n - i) * 4);
		memmove(&w->val[i + 1], &w->val[i], (w->n - i) * 8);
		memmove(&w->isf[i + 1], &w->isf[i], w->n - i);
	}
	w->off[i] = off;
	w->val[i] = b;
	w->isf[i] = (uint8_t)v->is_float;
	w->n++;
	r->points++;
	return CF_OK;
}

/* Drops every row of an hour before ws; series left without rows stay
 * (a put of the next hour will need them). */
static void evict_before(struct tsd_recent *r, int64_t ws)
{
	if (ws <= r->ws)
		return;
	r->ws = ws;
	for (size_t i = 0; i < r->nsh; i++)
		for (struct rseries *s = r->sh[i]; s; s = s->hnext) {
			uint32_t k = 0;
			while (k < s->nrows && (int64_t)s->rows[k].base < ws)
				row_release(r, &s->rows[k++]);
			if (k) {
				memmove(s->rows, s->rows + k,
					(s->nrows - k) * sizeof *s->rows);
				s->nrows -= k;
			}
		}
}

/* Keeps bytes at most max_bytes: drops the oldest hours. */
static void trim(struct tsd_recent *r)
{
	while (r->bytes > r->max_bytes) {
		int64_t oldest = INT64_MAX;
		for (size_t i = 0; i < r->nsh; i++)
			for (struct rseries *s = r->sh[i]; s; s = s->hnext)
				if (s->nrows && s->rows[0].base < oldest)
					oldest = s->rows[0].base;
		if (oldest == INT64_MAX)
			break;	/* headers alone: nothing more to drop */
		evict_before(r, oldest + TSD_MAX_TIMESPAN);
	}
}

/* A failure to follow a write: the copy is no longer complete. */
static void invalidate(struct tsd_recent *r)
{
	r->state = R_INVALID;
	clear_all(r);
}

/* --- writes ---------------------------------------------------------- */

void tsd_recent_put(tsd *t, const struct tsd_point *const *pts, size_t n)
{
	struct tsd_recent *r = t->recent;
	int rc = CF_OK;

	if (!r || !r->max_bytes)
		return;
	pthread_rwlock_wrlock(&r->lock);
	if (r->state == R_INVALID)
		goto out;	/* the rebuild will read them */
	for (size_t i = 0; i < n && rc == CF_OK; i++) {
		const struct tsd_point *p = pts[i];
		if (p->gone)
			continue;
		uint32_t base = dec_u32be(p->key + TSD_UID_WIDTH);
		struct tsd_cellpt cp;
		struct tsd_value v;
		size_t np;

		if ((int64_t)base < r->ws)
			continue;
		struct rseries *s = series_get(r, p->key, p->klen);
		struct tsd_recent_row *w = s ? row_get(r, s, base) : NULL;
		if (!w) {
			rc = CF_ENOMEM;
			break;
		}
		if (tsd_cell_split(p->q, p->qlen, p->v, p->vlen, &cp, &np) ||
		    np != 1 ||
		    tsd_value_decode(tsd_qualifier_flags(cp.q, cp.qlen), cp.v,
				     cp.vlen, &v)) {
			fallback(r, w);
			continue;
		}
		rc = row_add(r, w, cp.offset_ms, &v);
	}
	if (rc) {
		cf_log(CF_LOG_WARN, "tsd: recent points: %s; rebuilt from "
		       "the table", cf_strerror(rc));
		invalidate(r);
	} else {
		trim(r);
	}
out:
	pthread_rwlock_unlock(&r->lock);
}

/* --- the rebuild ------------------------------------------------------ */

/* Merges the scanned row (key, row) into the column of generation gen.
 * 0: go on; 1: the rebuild is superseded. */
static int merge_row(tsd *t, uint64_t gen, const unsigned char *key,
		     size_t klen, const cf_row *row, struct tsd_rowpt **pts,
		     size_t *cap)
{
	struct tsd_recent *r = t->recent;
	size_t n = 0, ncells;
	int rc = tsd_row_decode(row, pts, cap, &n, &ncells);
	int gone = 0;

	pthread_rwlock_wrlock(&r->lock);
	if (r->gen != gen || r->state != R_BUILDING) {
		gone = 1;
		goto out;
	}
	uint32_t base = dec_u32be(key + TSD_UID_WIDTH);
	if ((int64_t)base < r->ws)
		goto out;
	struct rseries *s = series_get(r, key, klen);
	struct tsd_recent_row *w = s ? row_get(r, s, base) : NULL;
	if (!w) {
		invalidate(r);
		gone = 1;
		goto out;
	}
	if (rc) {
		fallback(r, w);	/* CF_ECORRUPT: the table path skips it */
		goto out;
	}
	int64_t base_ms = (int64_t)base * 1000;
	for (size_t i = 0; i < n; i++)
		if (row_add(r, w, (uint32_t)((*pts)[i].ts - base_ms),
			    &(*pts)[i].v)) {
			invalidate(r);
			gone = 1;
			goto out;
		}
	trim(r);
out:
	pthread_rwlock_unlock(&r->lock);
	return gone;
}

/* 1 once tsd_close() asked the compaction thread to stop. */
static int stopping(tsd *t)
{
	pthread_mutex_lock(&t->mu);
	int stop = t->stop;
	pthread_mutex_unlock(&t->mu);
	return stop;
}

/* Scans the rows of tsdb from hour ws on, metric after metric. */
static int rebuild_scan(tsd *t, cf_table *dbt, uint64_t gen, int64_t ws)
{
	static const struct cf_column col = { "t", 1, NULL, 0 };
	unsigned char start[TSD_ROWKEY_PREFIX];
	struct tsd_rowpt *pts = NULL;
	size_t cap = 0;
	uint32_t muid = 0;
	uint64_t rows = 0;
	int rc = CF_OK;

	for (;;) {
		struct cf_scan_opts so;
		cf_scanner *s;
		const cf_row *row;
		size_t klen;

		/* the next metric holding any row */
		memset(&so, 0, sizeof so);
		so.read.columns = &col;
		so.read.ncolumns = 1;
		so.read.max_ts = INT64_MAX;
		so.read.max_versions = 1;
		so.read.keys_only = 1;
		tsd_uid_put(start, muid);
		so.start = start;
		so.startlen = TSD_UID_WIDTH;
		so.limit = 1;
		if ((rc = cf_scan_open(dbt, &so, &s)))
			break;
		rc = cf_scan_next(s, &row);
		if (rc || !row) {
			cf_scan_close(s);
			break;
		}
		const unsigned char *key = cf_row_key(row, &klen);
		if (klen < TSD_UID_WIDTH) {
			cf_scan_close(s);
			if (muid == TSD_UID_MAX)
				break;
			muid++;	/* a stray short key: past it */
			continue;
		}
		muid = tsd_uid_get(key);
		cf_scan_close(s);
		/* its rows of the window */
		memset(&so, 0, sizeof so);
		so.read.columns = &col;
		so.read.ncolumns = 1;
		so.read.max_ts = INT64_MAX;
		so.read.max_versions = 1;
		tsd_uid_put(start, muid);
		enc_u32be(start + TSD_UID_WIDTH, (uint32_t)ws);
		so.start = start;
		so.startlen = TSD_ROWKEY_PREFIX;
		so.prefix = start;
		so.prefixlen = TSD_UID_WIDTH;
		if ((rc = cf_scan_open(dbt, &so, &s)))
			break;
		while ((rc = cf_scan_next(s, &row)) == CF_OK && row) {
			if (++rows % 256 == 0 && stopping(t)) {
				rc = CF_ECLOSED;	/* tsd_close() waits */
				break;
			}
			key = cf_row_key(row, &klen);
			if (!tsd_rowkey_valid(key, klen))
				continue;
			if (merge_row(t, gen, key, klen, row, &pts, &cap)) {
				rc = CF_ECLOSED;	/* superseded */
				break;
			}
		}
		cf_scan_close(s);
		if (rc || muid == TSD_UID_MAX)
			break;
		muid++;
	}
	free(pts);
	return rc;
}

int tsd_recent_maintain(tsd *t, cf_table *dbt)
{
	struct tsd_recent *r = t->recent;
	struct cf_family *fams = NULL;
	size_t nf = 0;
	uint64_t stamp, gen;
	int64_t ws;
	int rc, ttl = 0;

	if (!r || !r->max_bytes)
		return CF_OK;
	stamp = cf_table_stamp(dbt);
	pthread_rwlock_wrlock(&r->lock);
	if (r->state == R_VALID && r->stamp == stamp) {
		evict_before(r, window_now(r));
		pthread_rwlock_unlock(&r->lock);
		return CF_OK;
	}
	if (r->ttl_off && r->stamp == stamp) {
		pthread_rwlock_unlock(&r->lock);
		return CF_OK;
	}
	pthread_rwlock_unlock(&r->lock);
	/* cells that expire would leave the copy: no copy then */
	if ((rc = cf_table_schema(dbt, &fams, &nf)))
		return rc;
	for (size_t i = 0; i < nf; i++)
		if (!strcmp(fams[i].name, "t") && fams[i].ttl != CF_TTL_FOREVER)
			ttl = 1;
	free(fams);
	pthread_rwlock_wrlock(&r->lock);
	clear_all(r);
	r->state = ttl ? R_INVALID : R_BUILDING;
	r->ttl_off = ttl;
	r->stamp = stamp;
	gen = r->gen;
	r->ws = ws = window_now(r);
	r->rebuilds++;
	pthread_rwlock_unlock(&r->lock);
	if (ttl)
		return CF_OK;
	rc = rebuild_scan(t, dbt, gen, ws);
	pthread_rwlock_wrlock(&r->lock);
	if (r->gen == gen && r->state == R_BUILDING) {
		if (rc == CF_OK && cf_table_stamp(dbt) == stamp) {
			r->state = R_VALID;
			r->stamp = stamp;
		} else {
			invalidate(r);
		}
	}
	pthread_rwlock_unlock(&r->lock);
	return rc == CF_ECLOSED ? CF_OK : rc;
}

int tsd_recent_wanted(tsd *t, cf_table *dbt)
{
	struct tsd_recent *r = t->recent;
	int want;

	if (!r || !r->max_bytes)
		return 0;
	pthread_rwlock_rdlock(&r->lock);
	want = r->stamp != cf_table_stamp(dbt) ||
	       (r->state != R_VALID && !r->ttl_off);
	pthread_rwlock_unlock(&r->lock);
	return want;
}

/* --- queries ---------------------------------------------------------- */

int tsd_recent_query(tsd *t, cf_table *dbt, uint32_t muid, int64_t ss,
		     int64_t se, const struct tsd_recent_cb *cb)
{
	struct tsd_recent *r = t->recent;
	int64_t done = ss;	/* the table answered [ss, done) */
	int rc;

	if (!r || !r->max_bytes)
		return cb->table(cb->arg, ss, se);
	for (;;) {
		int64_t ws;
		pthread_rwlock_rdlock(&r->lock);
		int ok = r->state == R_VALID &&
			 r->stamp == cf_table_stamp(dbt);
		ws = r->ws;
		if (ok && ws <= done) {
			/* every row from done on is here: rows of a
			 * series in hour order, after the table's */
			rc = CF_OK;
			struct rmetric *m = metric_find(r, muid);
			for (struct rseries *s = m ? m->first : NULL;
			     s && rc == CF_OK; s = s->mnext) {
				uint32_t a = 0, b;
				while (a < s->nrows &&
				       (int64_t)s->rows[a].base < done)
					a++;
				b = a;
				while (b < s->nrows &&
				       (int64_t)s->rows[b].base < se)
					b++;
				if (b > a)
					rc = cb->series(cb->arg, muid, s->tags,
							s->ntags, s->rows + a,
							b - a);
			}
			pthread_rwlock_unlock(&r->lock);
			return rc;
		}
		pthread_rwlock_unlock(&r->lock);
		if (!ok || ws >= se)
			return cb->table(cb->arg, done, se);
		/* the table answers up to the window (which only moves
		 * forward while valid), then look again */
		if ((rc = cb->table(cb->arg, done, ws)))
			return rc;
		done = ws;
	}
}

void tsd_recent_stats(tsd *t, struct tsd_stats *st)
{
	struct tsd_recent *r = t->recent;

	if (!r)
		return;
	pthread_rwlock_rdlock(&r->lock);
	st->recent_points = r->points;
	st->recent_bytes = r->bytes;
	st->recent_ready = r->max_bytes && r->state == R_VALID;
	st->recent_rebuilds = r->rebuilds;
	pthread_rwlock_unlock(&r->lock);
}
