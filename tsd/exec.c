/*
 * exec.c: running queries (OpenTSDB's TsdbQuery.run and findSpans).
 *
 * For each sub query: the metric and the filter keys are resolved to
 * UIDs, the rows of [metric + first hour, metric + end hour) are scanned
 * (never more of the table), rows are kept or dropped from the tag UIDs in
 * their keys, and the points of each tag set become a span.  Spans are
 * grouped by the values of the group-by keys.  Text results are
 * produced while read: each group goes through a tsd_agg_iter when the
 * reader reaches it (struct qtext, the cursor's producer), and
 * emit_point() is where a point becomes text.  Graphs and JSON answers
 * aggregate every group at open (collect(), at most max_graph_points
 * points) and go to tsd_plot() or tsd_json_format().
 */
#include <inttypes.h>
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "tsd/expr.h"
#include "tsd/internal.h"
#include "tsd/json.h"
#include "tsd/number.h"
#include "tsd/query.h"
#include "util/coding.h"
#include "util/env.h"
#include "util/err.h"
#include "util/log.h"

#define TAGS_MAX (TSD_MAX_TAGS * 2 * TSD_UID_WIDTH)

struct qspan {
	unsigned char tags[TAGS_MAX];
	size_t ntags;
	unsigned char gkey[TAGS_MAX];
	size_t gklen;
	struct tsd_dp *dp;
	size_t n, cap;
};

/* An annotation of a series of the sub query (JSON as printed). */
struct qnote {
	unsigned char tags[TAGS_MAX];
	size_t ntags;
	int64_t ms;
	size_t order;		/* found order: ties of ms keep it */
	char *json;
	size_t len;
};

/* The tag bytes of one TSUID of a tsuid= sub query. */
struct tsuid_tags {
	size_t n;		/* bytes: 6 a pair */
	unsigned char b[TAGS_MAX];
};

struct rfilter {
	const struct tsd_filter *f;
	uint32_t tagk;
	int by_uid;		/* literal_or: compare value UIDs */
	uint32_t *uids;
	size_t nuids;
};

/* A group of series, aggregated while the result is read. */
struct result {
	char *metric;
	struct buf tags;	/* " k=v k=v" */
	struct buf aggtags;	/* " k k": keys of the group not in tags */
	struct buf tsuids;	/* " HEX HEX": its series (show_tsuids) */
	struct buf notes;	/* "[...]": its series' annotations */
	struct tsd_span *sp;	/* its series (points owned by run.dps) */
	size_t nsp;
	struct tsd_agg_spec as;	/* its tz points into run.q */
	int skip_nan;		/* fill policy null: NaN points are gaps */
	const struct tsd_subquery *sq;	/* its sub query (in run.q) */
	/* expressions (run.q->gexp): the metric's UID, the shared tags and
	 * the aggregated keys with their names (tsd/expr.h) */
	uint32_t muid;
	struct tsd_xtag *xt, *xa;
	size_t nxt, nxa;
};

/* The statistics of a sub query (show_stats, show_summary: OpenTSDB's
 * QueryStats); times in ns. */
struct qstat {
	uint64_t points;	/* dpsPostFilter: points loaded */
	uint64_t emitted;	/* emittedDPs: points printed */
	uint64_t nan;		/* nanDPs: of them, NaN */
	int64_t scan_ns;	/* queryScanTime: reading the rows */
	int64_t group_ns;	/* groupByTime: making the groups */
	int64_t agg_ns;		/* aggregationTime */
	int64_t ser_ns;		/* serializationTime */
};

struct run {
	tsd *t;
	cf_table *uidt, *dbt;
	const struct tsd_query *q;
	struct tsd_error *err;
	uint64_t points;
	uint64_t recent_points;	/* of them, from the recent points */
	uint64_t bytes;		/* memory of the loaded points */
	struct result *res;
	size_t nres;
	struct tsd_dp **dps;	/* point arrays of every span kept */
	size_t ndps;
	/* per sub query */
	struct qspan *spans;
	size_t nspans, capspans;
	size_t *hash;		/* span index + 1; 0 = empty */
	size_t nhash;
	struct rfilter *rf;
	size_t nrf;
	struct tsuid_tags *tt;	/* tsuid=: the series asked for, sorted */
	size_t ntt;
	int want_notes;		/* JSON: annotations wanted */
	struct qnote *notes;	/* the sub query's, by tags then order */
	size_t nnotes, capnotes;
	struct buf globals;	/* "[...]": the global annotations, or
				 * empty (global_annotations) */
	struct tsd_rowpt *pts;
	size_t ptcap;
	struct qstat *qst;	/* show_stats or show_summary: one a sub
				 * query; else NULL */
	struct tsd_expr **x;	/* q->exps parsed (q->nexps of them) */
	int64_t t0;		/* when loading began (ns) */
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void set_err(struct tsd_error *err, const char *fmt, const char *a)
{
	if (err) {
		err->line = 0;
		snprintf(err->reason, sizeof err->reason, fmt, a);
	}
}

static uint32_t hash_bytes(const unsigned char *p, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static int hash_grow(struct run *r)
{
	size_t nh = r->nhash ? 2 * r->nhash : 256;
	size_t *h = calloc(nh, sizeof *h);
	if (!h)
		return CF_ENOMEM;
	for (size_t i = 0; i < r->nspans; i++) {
		struct qspan *s = &r->spans[i];
		size_t b = hash_bytes(s->tags, s->ntags * 6) & (nh - 1);
		while (h[b])
			b = (b + 1) & (nh - 1);
		h[b] = i + 1;
	}
	free(r->hash);
	r->hash = h;
	r->nhash = nh;
	return CF_OK;
}

/* The span of tag bytes tags[0..ntags*6), created when new. */
static int span_for(struct run *r, const unsigned char *tags, size_t ntags,
		    struct qspan **out)
{
	size_t len = ntags * 6, b;
	int rc;

	if (2 * (r->nspans + 1) > r->nhash && (rc = hash_grow(r)))
		return rc;
	b = hash_bytes(tags, len) & (r->nhash - 1);
	for (; r->hash[b]; b = (b + 1) & (r->nhash - 1)) {
		struct qspan *s = &r->spans[r->hash[b] - 1];
		if (s->ntags == ntags && !memcmp(s->tags, tags, len)) {
			*out = s;
			return CF_OK;
		}
	}
	if (r->nspans == r->capspans) {
		size_t nc = r->capspans ? 2 * r->capspans : 16;
		struct qspan *p = realloc(r->spans, nc * sizeof *p);
		if (!p)
			return CF_ENOMEM;
		r->spans = p;
		r->capspans = nc;
	}
	struct qspan *s = &r->spans[r->nspans];
	memset(s, 0, sizeof *s);
	memcpy(s->tags, tags, len);
	s->ntags = ntags;
	r->hash[b] = ++r->nspans;
	*out = s;
	return CF_OK;
}

static void release_sub(struct run *r)
{
	for (size_t i = 0; i < r->nspans; i++)
		tsd_points_free(r->t, r->spans[i].dp);
	free(r->spans);
	free(r->hash);
	for (size_t i = 0; i < r->nrf; i++)
		free(r->rf[i].uids);
	free(r->rf);
	free(r->tt);
	for (size_t i = 0; i < r->nnotes; i++)
		free(r->notes[i].json);
	free(r->notes);
	r->notes = NULL;
	r->nnotes = r->capnotes = 0;
	r->spans = NULL;
	r->nspans = r->capspans = r->nhash = r->nrf = r->ntt = 0;
	r->hash = NULL;
	r->rf = NULL;
	r->tt = NULL;
}

/* OpenTSDB's tsd.query.filter.expansion_limit: a literal_or of more
 * values is matched by name, without resolving them. */
#define EXPANSION_LIMIT 4096

/* Resolves the value of a literal_or filter f, as OpenTSDB's
 * TagVFilter.resolveTags does with tsd.query.skip_unresolved_tagvs off
 * (its default): a value never written fails the query (CF_ENOTFOUND,
 * "no such tag value").  An empty alternative ("|a") names no value and
 * is skipped.  uids may be NULL (only check). */
static int resolve_literals(tsd *t, cf_table *uidt, const struct tsd_filter *f,
			    uint32_t *uids, size_t *nuids,
			    struct tsd_error *err)
{
	int rc;

	*nuids = 0;
	for (size_t j = 0; j < f->nvalues; j++) {
		uint32_t uid;
		if (!f->values[j][0])
			continue;
		rc = tsd_uid_lookup(t->uids, uidt, TSD_TAGV, f->values[j],
				    strlen(f->values[j]), &uid);
		if (rc == CF_ENOTFOUND)
			set_err(err, "no such tag value: %s", f->values[j]);
		if (rc)
			return rc;
		if (uids)
			uids[(*nuids)++] = uid;
	}
	return CF_OK;
}

static int by_uid(const struct tsd_filter *f)
{
	return f->type == TSD_FILTER_LITERAL_OR &&
	       f->nvalues <= EXPANSION_LIMIT;
}

static int resolve_filters(struct run *r, const struct tsd_subquery *sq)
{
	int rc;

	r->rf = calloc(sq->nfilters ? sq->nfilters : 1, sizeof *r->rf);
	if (!r->rf)
		return CF_ENOMEM;
	for (size_t i = 0; i < sq->nfilters; i++) {
		const struct tsd_filter *f = &sq->filters[i];
		struct rfilter *rf = &r->rf[r->nrf++];
		rf->f = f;
		rc = tsd_uid_lookup(r->t->uids, r->uidt, TSD_TAGK, f->tagk,
				    strlen(f->tagk), &rf->tagk);
		/* not_key of a key never written: no series has it (tagk
		 * 0 is no UID) */
		if (rc == CF_ENOTFOUND && f->type == TSD_FILTER_NOT_KEY)
			rc = CF_OK;
		if (rc == CF_ENOTFOUND)
			set_err(r->err, "no such tag key: %s", f->tagk);
		if (rc)
			return rc;
		if (!by_uid(f))
			continue;
		rf->by_uid = 1;
		rf->uids = calloc(f->nvalues, sizeof *rf->uids);
		if (!rf->uids)
			return CF_ENOMEM;
		if ((rc = resolve_literals(r->t, r->uidt, f, rf->uids,
					   &rf->nuids, r->err)))
			return rc;
	}
	return CF_OK;
}

/* The value UID of tag key tagk in tags, or 0 (UIDs start at 1). */
static uint32_t tag_value(const unsigned char *tags, size_t ntags,
			  uint32_t tagk)
{
	for (size_t i = 0; i < ntags; i++)
		if (tsd_uid_get(tags + 6 * i) == tagk)
			return tsd_uid_get(tags + 6 * i + 3);
	return 0;
}

static int cmp_tt(const void *a, const void *b)
{
	const struct tsuid_tags *x = a, *y = b;
	int c = memcmp(x->b, y->b, x->n < y->n ? x->n : y->n);
	if (c)
		return c;
	return x->n < y->n ? -1 : x->n > y->n;
}

/* The value of hex digit c (isxdigit). */
static unsigned hexval(char c)
{
	return c <= '9' ? (unsigned)(c - '0') : (unsigned)((c | 0x20) - 'a' + 10);
}

/* b[0..n/2) from the n hex digits of s (checked by the parser). */
static void unhex(const char *s, size_t n, unsigned char *b)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		b[i / 2] = (unsigned char)(hexval(s[i]) << 4 | hexval(s[i + 1]));
}

/* TsdbQuery.configureFromQuery: the TSUIDs of a sub query must name one
 * metric.  CF_EINVAL with OpenTSDB's reason. */
static int one_metric(const struct tsd_subquery *sq, struct tsd_error *err)
{
	const size_t mw = 2 * TSD_UID_WIDTH;

	for (size_t i = 1; i < sq->ntsuids; i++)
		if (strncasecmp(sq->tsuids[0], sq->tsuids[i], mw)) {
			if (err) {
				err->line = 0;
				snprintf(err->reason, sizeof err->reason,
					 "One or more TSUIDs did not share the "
					 "same metric [%.*s] [%.*s]", (int)mw,
					 sq->tsuids[0], (int)mw,
					 sq->tsuids[i]);
			}
			return CF_EINVAL;
		}
	return CF_OK;
}

/* The series of a tsuid= sub query: its metric UID and, in r->tt, the
 * tag bytes of each TSUID, sorted for row_matches(). */
static int resolve_tsuids(struct run *r, const struct tsd_subquery *sq,
			  uint32_t *muid)
{
	unsigned char m[TSD_UID_WIDTH];
	int rc;

	if ((rc = one_metric(sq, r->err)))
		return rc;
	unhex(sq->tsuids[0], 2 * TSD_UID_WIDTH, m);
	*muid = tsd_uid_get(m);
	if (!(r->tt = calloc(sq->ntsuids, sizeof *r->tt)))
		return CF_ENOMEM;
	for (size_t i = 0; i < sq->ntsuids; i++) {
		const char *h = sq->tsuids[i] + 2 * TSD_UID_WIDTH;
		size_t hl = strlen(h);
		if (hl / 2 > TAGS_MAX)
			continue;	/* the parser's bound: never */
		r->tt[r->ntt].n = hl / 2;
		unhex(h, hl, r->tt[r->ntt++].b);
	}
	qsort(r->tt, r->ntt, sizeof *r->tt, cmp_tt);
	return CF_OK;
}

static int row_matches(struct run *r, const struct tsd_subquery *sq,
		       const unsigned char *tags, size_t ntags, int *match)
{
	struct buf name = BUF_INIT;
	int rc = CF_OK;

	*match = 0;
	if (sq->ntsuids) {
		struct tsuid_tags k;
		k.n = ntags * 6;
		memcpy(k.b, tags, k.n);
		*match = bsearch(&k, r->tt, r->ntt, sizeof k, cmp_tt) != NULL;
		return CF_OK;
	}
	for (size_t i = 0; i < r->nrf; i++) {
		const struct rfilter *rf = &r->rf[i];
		uint32_t v = tag_value(tags, ntags, rf->tagk);
		int hit = 0;
		/* OpenTSDB's scan wants every filter's key in the row;
		 * not_key wants it absent */
		if (rf->f->type == TSD_FILTER_NOT_KEY) {
			if (v)
				goto out;
			continue;
		}
		if (v == 0)
			goto out;
		if (rf->by_uid) {
			for (size_t j = 0; j < rf->nuids && !hit; j++)
				hit = rf->uids[j] == v;
		} else {
			buf_reset(&name);
			rc = tsd_uid_name(r->t->uids, r->uidt, TSD_TAGV, v, &name);
			if (rc == CF_ENOTFOUND) {
				rc = CF_OK;
				goto out;
			}
			if (rc)
				goto out;
			hit = tsd_filter_match(rf->f, (const char *)name.p,
					       name.len);
		}
		if (!hit)
			goto out;
	}
	if (sq->explicit_tags) {
		/* exactly the filtered keys, no other tag */
		for (size_t i = 0; i < ntags; i++) {
			uint32_t k = tsd_uid_get(tags + 6 * i);
			int found = 0;
			for (size_t j = 0; j < r->nrf && !found; j++)
				found = r->rf[j].tagk == k &&
					r->rf[j].f->type != TSD_FILTER_NOT_KEY;
			if (!found)
				goto out;
		}
	}
	*match = 1;
out:
	buf_release(&name);
	return rc;
}

/* Counts n more points against the query's bounds.  CF_ETOOBIG. */
static int account(struct run *r, size_t n)
{
	r->points += n;
	r->bytes += n * sizeof(struct tsd_dp);
	if (r->points > r->t->o.max_query_points) {
		char lim[32];
		snprintf(lim, sizeof lim, "%llu",
			 (unsigned long long)r->t->o.max_query_points);
		set_err(r->err, "query loads more than %s points", lim);
		return CF_ETOOBIG;
	}
	if (r->bytes + r->nspans * sizeof(struct qspan) >
	    r->t->o.max_query_bytes) {
		char lim[64];
		snprintf(lim, sizeof lim, "%llu bytes for its points "
			 "(%llu loaded)",
			 (unsigned long long)r->t->o.max_query_bytes,
			 (unsigned long long)r->points);
		set_err(r->err, "query needs more than %s", lim);
		return CF_ETOOBIG;
	}
	return CF_OK;
}

/* Room for n more points in sp (pool.c's arrays).  CF_ENOMEM. */
static int span_reserve(struct run *r, struct qspan *sp, size_t n)
{
	if (sp->n + n <= sp->cap)
		return CF_OK;
	size_t want = sp->cap ? 2 * sp->cap : 64;
	if (want < sp->n + n)
		want = sp->n + n;
	struct tsd_dp *p = tsd_points_grow(r->t, sp->dp, sp->n, want,
					   &sp->cap);
	if (!p)
		return CF_ENOMEM;
	sp->dp = p;
	return CF_OK;
}

/* One sub query's scan: the rows of one metric, from the table or from
 * the recent points (tsd_recent_query). */
struct subscan {
	struct run *r;
	const struct tsd_subquery *sq;
	const char *metric;
	uint32_t muid;
	uint64_t gen;	/* tsd_del_gen() before the table scan opened */
};

/* Takes the row (of a matching tag set) read from the table. */
static int take_row(struct subscan *x, const cf_row *row)
{
	struct run *r = x->r;
	size_t klen, n, ncells;
	const unsigned char *key = cf_row_key(row, &klen);
	const unsigned char *tags = key + TSD_ROWKEY_PREFIX;
	size_t ntags = (klen - TSD_ROWKEY_PREFIX) / 6;
	struct qspan *sp;
	int rc, done;

	rc = tsd_row_decode(row, &r->pts, &r->ptcap, &n, &ncells);
	if (rc == CF_ECORRUPT) {
		cf_log(CF_LOG_WARN, "tsd: query of %s: a row does not "
		       "decode; skipped", x->metric);
		return CF_OK;
	}
	if (rc)
		return rc;
	if (ncells > 1 && r->t->o.compact_on_read &&
	    tsd_row_finished(r->t, dec_u32be(key + TSD_UID_WIDTH)) &&
	    tsd_compact_row(r->t, r->dbt, key, klen, row, x->gen, &done))
		cf_log(CF_LOG_WARN, "tsd: compaction at read failed");
	if ((rc = account(r, n)) || (rc = span_for(r, tags, ntags, &sp)) ||
	    (rc = span_reserve(r, sp, n)))
		return rc;
	for (size_t i = 0; i < n; i++) {
		const struct tsd_rowpt *p = &r->pts[i];
		/* rows of a tag set come in hour order, so a span
		 * only grows forward */
		if (sp->n && sp->dp[sp->n - 1].ts >= p->ts)
			continue;
		struct tsd_dp *d = &sp->dp[sp->n++];
		d->ts = p->ts;
		d->is_float = p->v.is_float;
		d->i = p->v.i;
		d->d = p->v.d;
	}
	return CF_OK;
}

/* The table's rows of hours [from, to). */
static int scan_table(void *arg, int64_t from, int64_t to)
{
	static const struct cf_column col = { "t", 1, NULL, 0 };
	struct subscan *x = arg;
	struct run *r = x->r;
	unsigned char start[TSD_ROWKEY_PREFIX], stop[TSD_ROWKEY_PREFIX];
	struct cf_scan_opts so;
	cf_scanner *s = NULL;
	const cf_row *row;
	int rc;

	if (from >= to || !tsd_hour_scan(&so, start, stop, x->muid, from, to))
		return CF_OK;
	so.read.columns = &col;
	so.read.ncolumns = 1;
	x->gen = tsd_del_gen(r->t);
	if ((rc = cf_scan_open(r->dbt, &so, &s)))
		return rc;
	while ((rc = cf_scan_next(s, &row)) == CF_OK && row) {
		size_t klen, ntags;
		const unsigned char *key = cf_row_key(row, &klen);
		int match;

		if (!tsd_rowkey_valid(key, klen))
			continue;
		ntags = (klen - TSD_ROWKEY_PREFIX) / 6;
		if ((rc = row_matches(r, x->sq, key + TSD_ROWKEY_PREFIX, ntags,
				      &match)))
			break;
		if (match && (rc = take_row(x, row)))
			break;
	}
	cf_scan_close(s);
	return rc;
}

/* The rows rows[0..nrows) of one series from the recent points. */
static int take_series(void *arg, uint32_t muid, const unsigned char *tags,
		       size_t ntags, const struct tsd_recent_row *rows,
		       size_t nrows)
{
	struct subscan *x = arg;
	struct run *r = x->r;
	struct qspan *sp = NULL;
	int rc, match;

	if ((rc = row_matches(r, x->sq, tags, ntags, &match)) || !match)
		return rc;
	size_t total = 0;
	for (size_t k = 0; k < nrows; k++)
		total += rows[k].n;
	if (total && ((rc = span_for(r, tags, ntags, &sp)) ||
		      (rc = span_reserve(r, sp, total))))
		return rc;	/* room for all at once: one allocation */
	for (size_t k = 0; k < nrows; k++) {
		const struct tsd_recent_row *w = &rows[k];
		if (w->fallback) {
			/* a row the copy cannot answer: the table's */
			unsigned char key[TSD_ROWKEY_MAX];
			cf_row *row = NULL;
			tsd_uid_put(key, muid);
			enc_u32be(key + TSD_UID_WIDTH, w->base);
			memcpy(key + TSD_ROWKEY_PREFIX, tags, ntags * 6);
			static const struct cf_column col = { "t", 1, NULL, 0 };
			struct cf_read_opts o = CF_READ_OPTS_INIT;
			o.columns = &col;
			o.ncolumns = 1;
			rc = cf_table_get(r->dbt, key,
					  TSD_ROWKEY_PREFIX + ntags * 6, &o,
					  &row);
			if (rc == CF_OK && cf_row_count(row))
				rc = take_row(x, row);
			cf_row_free(row);
			if (rc)
				return rc;
			continue;
		}
		if (!w->n)
			continue;
		if ((rc = account(r, w->n)) ||
		    (!sp && (rc = span_for(r, tags, ntags, &sp))) ||
		    (rc = span_reserve(r, sp, w->n)))
			return rc;
		r->recent_points += w->n;
		int64_t base_ms = (int64_t)w->base * 1000;
		struct tsd_dp *d = sp->dp + sp->n;
		size_t i = 0;
		/* the copy's rows come after the table's: skip what the
		 * span already holds (never more than a first point) */
		while (i < w->n && sp->n &&
		       sp->dp[sp->n - 1].ts >= base_ms + w->off[i])
			i++;
		for (; i < w->n; i++, d++) {
			uint64_t b = w->val[i];
			d->ts = base_ms + w->off[i];
			d->is_float = w->isf[i];
			if (d->is_float) {
				memcpy(&d->d, &b, 8);
				d->i = 0;
			} else {
				d->i = (int64_t)b;
				d->d = 0;
			}
		}
		sp->n = (size_t)(d - sp->dp);
	}
	return CF_OK;
}

static int scan_sub(struct run *r, const struct tsd_subquery *sq,
		    const char *metric, uint32_t muid)
{
	struct subscan x = { r, sq, metric, muid, 0 };
	struct tsd_recent_cb cb = { &x, scan_table, take_series };
	int64_t ss, se;

	tsd_scan_bounds(sq, r->q->start_ms, r->q->end_ms, &ss, &se);
	return tsd_recent_query(r->t, r->dbt, muid, ss, se, &cb);
}

static int cmp_gkey(const void *a, const void *b)
{
	const struct qspan *x = a, *y = b;
	size_t n = x->gklen < y->gklen ? x->gklen : y->gklen;
	int c = memcmp(x->gkey, y->gkey, n);
	if (c)
		return c;
	return x->gklen < y->gklen ? -1 : x->gklen > y->gklen;
}

/* Groups by gkey, and within a group by tag bytes, so the series order
 * (which float sums depend on) does not depend on qsort. */
static int cmp_span(const void *a, const void *b)
{
	const struct qspan *x = a, *y = b;
	int c = cmp_gkey(a, b);
	if (c)
		return c;
	size_t n = x->ntags < y->ntags ? x->ntags : y->ntags;
	c = memcmp(x->tags, y->tags, 6 * n);
	if (c)
		return c;
	return x->ntags < y->ntags ? -1 : x->ntags > y->ntags;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* " k k": the tag keys of the series g[0..ng) that are not among the
 * nc common pairs, sorted by UID, each once (OpenTSDB's aggregateTags). */
static int agg_tags(struct run *r, const struct qspan *g, size_t ng,
		    const unsigned char *common, size_t nc, struct buf *out,
		    uint32_t *keys, size_t *nkeys)
{
	size_t nk = 0;
	int rc = CF_OK;

	for (size_t i = 0; i < ng; i++)
		for (size_t j = 0; j < g[i].ntags; j++) {
			uint32_t k = tsd_uid_get(g[i].tags + 6 * j);
			int seen = tag_value(common, nc, k) != 0;
			for (size_t x = 0; x < nk && !seen; x++)
				seen = keys[x] == k;
			if (!seen && nk < TSD_MAX_TAGS)
				keys[nk++] = k;
		}
	qsort(keys, nk, sizeof keys[0], cmp_u32);
	*nkeys = nk;
	for (size_t i = 0; i < nk && rc == CF_OK; i++)
		if (!(rc = buf_putc(out, ' ')))
			rc = tsd_uid_name(r->t->uids, r->uidt, TSD_TAGK,
					  keys[i], out);
	return rc;
}

/* The name of UID u of kind k (malloc'd) into *name. */
static int uid_name(struct run *r, enum tsd_kind k, uint32_t u, char **name)
{
	struct buf b = BUF_INIT;
	int rc = tsd_uid_name(r->t->uids, r->uidt, k, u, &b);

	if (rc == CF_OK)
		rc = buf_putc(&b, '\0');
	*name = rc == CF_OK ? (char *)b.p : NULL;
	if (rc)
		buf_release(&b);
	return rc;
}

/* An expression's view of result res: its tag pairs common[0..nc) and
 * aggregated keys keys[0..nk), named. */
static int expr_tags(struct run *r, struct result *res,
		     const unsigned char *common, size_t nc,
		     const uint32_t *keys, size_t nk)
{
	int rc = CF_OK;

	if ((nc && !(res->xt = calloc(nc, sizeof *res->xt))) ||
	    (nk && !(res->xa = calloc(nk, sizeof *res->xa))))
		return CF_ENOMEM;
	for (size_t i = 0; i < nc && rc == CF_OK; i++, res->nxt++) {
		struct tsd_xtag *x = &res->xt[i];
		x->k = tsd_uid_get(common + 6 * i);
		x->v = tsd_uid_get(common + 6 * i + 3);
		rc = uid_name(r, TSD_TAGK, x->k, &x->kname);
		if (rc == CF_OK)
			rc = uid_name(r, TSD_TAGV, x->v, &x->vname);
	}
	for (size_t i = 0; i < nk && rc == CF_OK; i++, res->nxa++) {
		res->xa[i].k = keys[i];
		rc = uid_name(r, TSD_TAGK, keys[i], &res->xa[i].kname);
	}
	return rc;
}

/* Keeps an annotation found for the sub query (tsd_notes_of). */
static int take_note(void *arg, const unsigned char *tags, size_t ntags,
		     int64_t ms, const char *json, size_t len)
{
	struct run *r = arg;
	struct qnote *n;

	if (ntags * 6 > TAGS_MAX)
		return CF_OK;
	if (r->nnotes >= TSD_NOTES_MAX) {
		if (r->err) {
			r->err->line = 0;
			snprintf(r->err->reason, sizeof r->err->reason,
				 "more than %d annotations", TSD_NOTES_MAX);
		}
		return CF_ETOOBIG;
	}
	if (r->nnotes == r->capnotes) {
		size_t nc = r->capnotes ? 2 * r->capnotes : 16;
		if (!(n = realloc(r->notes, nc * sizeof *n)))
			return CF_ENOMEM;
		r->notes = n;
		r->capnotes = nc;
	}
	n = &r->notes[r->nnotes];
	if (!(n->json = tsd_dupn(json, len)))
		return CF_ENOMEM;
	memcpy(n->tags, tags, ntags * 6);
	n->ntags = ntags;
	n->ms = ms;
	n->len = len;
	n->order = r->nnotes++;
	return CF_OK;
}

static int cmp_note_tags(const void *a, const void *b)
{
	const struct qnote *x = a, *y = b;
	int c;

	if (x->ntags != y->ntags)
		return x->ntags < y->ntags ? -1 : 1;
	if ((c = memcmp(x->tags, y->tags, 6 * x->ntags)))
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Annotation.compareTo: by start; equal starts in the order found. */
static int cmp_note_ms(const void *a, const void *b)
{
	const struct qnote *x = *(const struct qnote *const *)a,
			   *y = *(const struct qnote *const *)b;

	if (x->ms != y->ms)
		return x->ms < y->ms ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* "[...]": the annotations of the series g[0..ng) by start, or nothing
 * when they have none (OpenTSDB leaves "annotations" out then). */
static int put_notes(struct run *r, const struct qspan *g, size_t ng,
		     struct buf *out)
{
	const struct qnote **pick = NULL;
	size_t npick = 0;
	int rc = CF_OK;

	for (size_t i = 0; i < ng && rc == CF_OK; i++) {
		size_t lo = 0, hi = r->nnotes;
		struct qnote k;
		memcpy(k.tags, g[i].tags, g[i].ntags * 6);
		k.ntags = g[i].ntags;
		k.order = 0;
		while (lo < hi) {	/* the first note of these tags */
			size_t mid = lo + (hi - lo) / 2;
			if (cmp_note_tags(&r->notes[mid], &k) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < r->nnotes && r->notes[lo].ntags == k.ntags &&
		     !memcmp(r->notes[lo].tags, k.tags, 6 * k.ntags); lo++) {
			const struct qnote **np = realloc(pick, (npick + 1) *
							  sizeof *pick);
			if (!np) {
				rc = CF_ENOMEM;
				break;
			}
			pick = np;
			pick[npick++] = &r->notes[lo];
		}
	}
	if (rc == CF_OK && npick) {
		qsort(pick, npick, sizeof *pick, cmp_note_ms);
		rc = buf_putc(out, '[');
		for (size_t i = 0; i < npick && rc == CF_OK; i++)
			if (!(rc = i ? buf_putc(out, ',') : CF_OK))
				rc = buf_append(out, pick[i]->json,
						pick[i]->len);
		if (rc == CF_OK)
			rc = buf_putc(out, ']');
	}
	free(pick);
	return rc;
}

/* " HEX HEX": the TSUIDs of the series g[0..ng) of metric muid, in the
 * group's order (tag bytes), which is OpenTSDB's sorted order. */
static int put_tsuids(uint32_t muid, const struct qspan *g, size_t ng,
		      struct buf *out)
{
	unsigned char m[TSD_UID_WIDTH];
	int rc = CF_OK;

	tsd_uid_put(m, muid);
	for (size_t i = 0; i < ng && rc == CF_OK; i++) {
		rc = buf_putc(out, ' ');
		for (size_t j = 0; j < TSD_UID_WIDTH && rc == CF_OK; j++)
			rc = buf_printf(out, "%02X", m[j]);
		for (size_t j = 0; j < g[i].ntags * 6 && rc == CF_OK; j++)
			rc = buf_printf(out, "%02X", g[i].tags[j]);
	}
	return rc;
}

static int add_result(struct run *r, const struct tsd_subquery *sq,
		      const char *metric, uint32_t muid, struct qspan *g,
		      size_t ng, const struct tsd_agg_spec *as)
{
	unsigned char common[TAGS_MAX];
	uint32_t keys[TSD_MAX_TAGS];
	struct tsd_dp **dps;
	struct result *res;
	size_t nc, nk;
	int rc;

	dps = realloc(r->dps, (r->ndps + ng) * sizeof *dps);
	if (!dps)
		return CF_ENOMEM;
	r->dps = dps;
	res = realloc(r->res, (r->nres + 1) * sizeof *res);
	if (!res)
		return CF_ENOMEM;
	r->res = res;
	res = &r->res[r->nres++];
	memset(res, 0, sizeof *res);
	res->skip_nan = sq->ds_fill == TSD_FILL_NULL;
	res->sq = sq;
	res->as = *as;
	if (!(res->sp = malloc(ng * sizeof *res->sp)))
		return CF_ENOMEM;
	/* the points move from the sub query's spans to the run */
	for (size_t i = 0; i < ng; i++) {
		res->sp[i].dp = g[i].dp;
		res->sp[i].n = g[i].n;
		r->dps[r->ndps++] = g[i].dp;
		g[i].dp = NULL;
	}
	res->nsp = ng;
	if (!(res->metric = strdup(metric)))
		return CF_ENOMEM;
	if (r->q->show_tsuids && (rc = put_tsuids(muid, g, ng, &res->tsuids)))
		return rc;
	if (r->nnotes && (rc = put_notes(r, g, ng, &res->notes)))
		return rc;
	/* the tags every series of the group shares */
	memcpy(common, g[0].tags, g[0].ntags * 6);
	nc = g[0].ntags;
	for (size_t i = 1; i < ng; i++) {
		size_t k = 0;
		for (size_t j = 0; j < nc; j++) {
			uint32_t key = tsd_uid_get(common + 6 * j);
			uint32_t v = tag_value(g[i].tags, g[i].ntags, key);
			if (v && v == tsd_uid_get(common + 6 * j + 3))
				memmove(common + 6 * k++, common + 6 * j, 6);
		}
		nc = k;
	}
	if ((rc = tsd_format_tags(r->t, r->uidt, common, nc, &res->tags)))
		return rc;
	res->muid = muid;
	if ((rc = agg_tags(r, g, ng, common, nc, &res->aggtags, keys, &nk)))
		return rc;
	return r->q->gexp ? expr_tags(r, res, common, nc, keys, nk) : CF_OK;
}

static int cmp_result(const void *a, const void *b)
{
	const struct result *x = a, *y = b;
	size_t n = x->tags.len < y->tags.len ? x->tags.len : y->tags.len;
	int c = n ? memcmp(x->tags.p, y->tags.p, n) : 0;
	if (c)
		return c;
	return x->tags.len < y->tags.len ? -1 : x->tags.len > y->tags.len;
}

static int run_sub(struct run *r, const struct tsd_subquery *sq)
{
	struct tsd_agg_spec as;
	struct buf mname = BUF_INIT;
	uint32_t muid, gb[TSD_MAX_TAGS * 4];
	size_t ngb = 0, first = r->nres;
	const char *metric = sq->metric;
	struct qstat *st = r->qst ? &r->qst[sq - r->q->subs] : NULL;
	int rc;

	if (sq->ntsuids) {
		/* OpenTSDB names the metric of the rows found: a UID
		 * without a name has no rows, so no result */
		if ((rc = resolve_tsuids(r, sq, &muid)))
			return rc;
		rc = tsd_uid_name(r->t->uids, r->uidt, TSD_METRICS, muid,
				  &mname);
		if (rc == CF_ENOTFOUND) {
			rc = CF_OK;
			goto out;
		}
		if (rc == CF_OK)
			rc = buf_putc(&mname, '\0');
		if (rc)
			goto out;
		metric = (const char *)mname.p;
	} else {
		rc = tsd_uid_lookup(r->t->uids, r->uidt, TSD_METRICS,
				    sq->metric, strlen(sq->metric), &muid);
		if (rc == CF_ENOTFOUND)
			set_err(r->err, "no such metric: %s", sq->metric);
		if (rc)
			return rc;
	}
	if ((rc = resolve_filters(r, sq)))
		goto out;
	for (size_t i = 0; i < r->nrf; i++) {
		int dup = 0;
		if (!r->rf[i].f->group_by)
			continue;
		for (size_t j = 0; j < ngb; j++)
			dup |= gb[j] == r->rf[i].tagk;
		if (!dup && ngb < sizeof gb / sizeof gb[0])
			gb[ngb++] = r->rf[i].tagk;
	}
	if (ngb > TSD_MAX_TAGS)
		goto out;	/* no row has that many tags: no result */
	if (ngb)
		qsort(gb, ngb, sizeof gb[0], cmp_u32);
	if (st)
		st->scan_ns -= now_ns();
	rc = scan_sub(r, sq, metric, muid);
	if (st) {
		st->scan_ns += now_ns();
		st->group_ns -= now_ns();
	}
	if (rc)
		goto out;
	if (r->want_notes && r->nspans) {
		if ((rc = tsd_notes_of(r->t, muid, r->q->start_ms,
				       r->q->end_ms, take_note, r)))
			goto out;
		if (r->nnotes)
			qsort(r->notes, r->nnotes, sizeof *r->notes,
			      cmp_note_tags);
	}
	for (size_t i = 0; i < r->nspans; i++) {
		struct qspan *s = &r->spans[i];
		if (sq->agg == TSD_AGG_NONE) {
			memcpy(s->gkey, s->tags, s->ntags * 6);
			s->gklen = s->ntags * 6;
			continue;
		}
		for (size_t j = 0; j < ngb; j++)
			tsd_uid_put(s->gkey + 3 * j,
				    tag_value(s->tags, s->ntags, gb[j]));
		s->gklen = 3 * ngb;
	}
	/* the hash holds indexes that sorting invalidates; not used after */
	if (r->nspans)
		qsort(r->spans, r->nspans, sizeof *r->spans, cmp_span);
	tsd_agg_spec_init(&as, r->q, sq);
	for (size_t i = 0; i < r->nspans;) {
		size_t j = i + 1;
		while (j < r->nspans && !cmp_gkey(&r->spans[i], &r->spans[j]))
			j++;
		if ((rc = add_result(r, sq, metric, muid, &r->spans[i], j - i,
				     &as)))
			goto out;
		i = j;
	}
	if (r->nres > first)
		qsort(r->res + first, r->nres - first, sizeof *r->res,
		      cmp_result);
	if (st)
		st->group_ns += now_ns();
out:
	buf_release(&mname);
	return rc;
}

static void xtags_free(struct tsd_xtag *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(t[i].kname);
		free(t[i].vname);
	}
	free(t);
}

static void free_results(struct run *r)
{
	for (size_t i = 0; i < r->nres; i++) {
		free(r->res[i].metric);
		buf_release(&r->res[i].tags);
		buf_release(&r->res[i].aggtags);
		buf_release(&r->res[i].tsuids);
		buf_release(&r->res[i].notes);
		free(r->res[i].sp);
		xtags_free(r->res[i].xt, r->res[i].nxt);
		xtags_free(r->res[i].xa, r->res[i].nxa);
	}
	free(r->res);
	r->res = NULL;
	r->nres = 0;
	for (size_t i = 0; i < r->ndps; i++)
		tsd_points_free(r->t, r->dps[i]);
	free(r->dps);
	r->dps = NULL;
	r->ndps = 0;
}

/* The text of a result point: "M TS VALUE TAGS\n" (tsd.h).  This is the
 * one place a query point becomes text. */
static int emit_point(const struct run *r, const struct result *res,
		      const struct tsd_dp *p, struct buf *out)
{
	if (p->is_float && p->d != p->d && res->skip_nan)
		return CF_OK;
	/* seconds unless "ms", even for points between whole seconds, as
	 * OpenTSDB's HttpJsonSerializer prints them */
	return tsd_buf_point(out, res->metric,
			     r->q->ms ? p->ts : p->ts / 1000, p->is_float,
			     p->i, p->d, res->tags.p, res->tags.len);
}

/* Why the aggregation of a group of metric failed with rc, in err. */
static void agg_failed(struct tsd_error *err, int rc, const char *metric)
{
	if (rc == CF_ERANGE)
		set_err(err, "%s: a value overflowed to infinity", metric);
	else if (rc == CF_EINVAL)	/* RateSpan's IllegalStateException */
		set_err(err, "%s: points out of time order for a rate",
			metric);
}

/* Aggregates group res whole into *dp (malloc'd, *n points): graphs and
 * JSON answers need all their points at once, so *total, the points of
 * the result so far, stops at max_graph_points (CF_ETOOBIG, *err says
 * "WHAT of more than N points"). */
static int collect(struct run *r, const struct result *res, const char *what,
		   struct tsd_dp **dp, size_t *n, uint64_t *total)
{
	struct tsd_agg_iter *it;
	struct tsd_dp p;
	size_t cap = 0;
	int rc;

	*dp = NULL;
	*n = 0;
	if ((rc = tsd_agg_iter_new(&res->as, res->sp, res->nsp, &it))) {
		agg_failed(r->err, rc, res->metric);
		return rc;
	}
	while ((rc = tsd_agg_iter_next(it, &p)) > 0) {
		if (++*total > r->t->o.max_graph_points) {
			char lim[32];
			snprintf(lim, sizeof lim, "%llu",
				 (unsigned long long)r->t->o.max_graph_points);
			if (r->err) {
				r->err->line = 0;
				snprintf(r->err->reason, sizeof r->err->reason,
					 "%s of more than %s points", what,
					 lim);
			}
			rc = CF_ETOOBIG;
			break;
		}
		if (*n == cap) {
			size_t nc = cap ? 2 * cap : 256;
			struct tsd_dp *np = realloc(*dp, nc * sizeof *np);
			if (!np) {
				rc = CF_ENOMEM;
				break;
			}
			*dp = np;
			cap = nc;
		}
		(*dp)[(*n)++] = p;
	}
	tsd_agg_iter_free(it);
	agg_failed(r->err, rc, res->metric);
	return rc < 0 ? rc : CF_OK;
}

/* "key":VALUE of one statistic, times as milliseconds (Java doubles). */
static int stat_field(struct buf *b, const char *key, int64_t v, int time,
		      int *first)
{
	int rc = buf_printf(b, "%s\"%s\":", *first ? "" : ",", key);

	*first = 0;
	if (rc)
		return rc;
	return time ? tsd_buf_double(b, (double)v / 1e6) : tsd_buf_long(b, v);
}

/* The statistics of sub query i as getQueryStats prints them: a TreeMap,
 * so by name. */
static int stats_of(const struct qstat *q, size_t i, struct buf *b)
{
	int first = 1, rc;

	if ((rc = buf_putc(b, '{')) ||
	    (rc = stat_field(b, "aggregationTime", q->agg_ns, 1, &first)) ||
	    (rc = stat_field(b, "dpsPostFilter", (int64_t)q->points, 0,
			     &first)) ||
	    (rc = stat_field(b, "emittedDPs", (int64_t)q->emitted, 0,
			     &first)) ||
	    (rc = stat_field(b, "groupByTime", q->group_ns, 1, &first)) ||
	    (rc = stat_field(b, "nanDPs", (int64_t)q->nan, 0, &first)) ||
	    (rc = stat_field(b, "queryIndex", (int64_t)i, 0, &first)) ||
	    (rc = stat_field(b, "queryScanTime", q->scan_ns, 1, &first)) ||
	    (rc = stat_field(b, "serializationTime", q->ser_ns, 1, &first)))
		return rc;
	return buf_putc(b, '}');
}

/* {"statsSummary":{...}}: getStats(true, ...) after aggQueryStats, the
 * sub queries' counters summed, their times averaged and maxed, the
 * time so far, and each sub query's map as queryIdx_NN. */
static int summary_of(const struct run *r, int64_t pre_write, struct buf *b)
{
	static const struct { const char *avg, *max; size_t off; } times[] = {
		{ "avgAggregationTime", "maxAggregationTime",
		  offsetof(struct qstat, agg_ns) },
		{ "avgQueryScanTime", "maxQueryScanTime",
		  offsetof(struct qstat, scan_ns) },
		{ "avgSerializationTime", "maxSerializationTime",
		  offsetof(struct qstat, ser_ns) },
	};
	uint64_t points = 0, emitted = 0, nan = 0;
	int64_t sum[3] = { 0 }, max[3] = { 0 };
	size_t n = r->q->nsubs;
	int first = 1, rc;

	for (size_t i = 0; i < n; i++) {
		points += r->qst[i].points;
		emitted += r->qst[i].emitted;
		nan += r->qst[i].nan;
		for (size_t k = 0; k < 3; k++) {
			int64_t v = *(const int64_t *)(const void *)
				((const char *)&r->qst[i] + times[k].off);
			sum[k] += v;
			max[k] = v > max[k] ? v : max[k];
		}
	}
	if ((rc = buf_append(b, "{\"statsSummary\":{", 17)))
		return rc;
	/* by name: avg..., dpsPostFilter, emittedDPs, max..., nanDPs,
	 * processingPreWriteTime, queryIdx_NN */
	for (size_t k = 0; k < 3 && !rc; k++)
		rc = stat_field(b, times[k].avg, n ? sum[k] / (int64_t)n : 0,
				1, &first);
	if (rc || (rc = stat_field(b, "dpsPostFilter", (int64_t)points, 0,
				   &first)) ||
	    (rc = stat_field(b, "emittedDPs", (int64_t)emitted, 0, &first)))
		return rc;
	for (size_t k = 0; k < 3 && !rc; k++)
		rc = stat_field(b, times[k].max, max[k], 1, &first);
	if (rc || (rc = stat_field(b, "nanDPs", (int64_t)nan, 0, &first)) ||
	    (rc = stat_field(b, "processingPreWriteTime", pre_write, 1,
			     &first)))
		return rc;
	for (size_t i = 0; i < n && !rc; i++)
		if (!(rc = buf_printf(b, ",\"queryIdx_%02zu\":", i)))
			rc = stats_of(&r->qst[i], i, b);
	return rc ? rc : buf_append(b, "}}", 2);
}

/* The JSON answer of results js[0..n) with statistics: each result
 * formatted alone (its serialization timed), "stats" added to it with
 * show_stats, the summary last with show_summary. */
static int format_json_stats(struct run *r, struct tsd_json_series *js,
			     struct buf *out)
{
	struct buf one = BUF_INIT, st = BUF_INIT;
	int rc = buf_putc(out, '[');

	for (size_t i = 0; i < r->nres && rc == CF_OK; i++) {
		size_t sub = js[i].index;
		struct qstat *q = &r->qst[sub];
		int64_t t = now_ns();
		buf_reset(&one);
		rc = tsd_json_format(&one, &js[i], 1, r->q->ms, r->q->arrays,
				     r->q->start_ms, r->q->end_ms);
		q->ser_ns += now_ns() - t;
		for (size_t j = 0; j < js[i].n; j++) {
			const struct tsd_dp *p = &js[i].dp[j];
			if (p->ts < r->q->start_ms || p->ts > r->q->end_ms)
				continue;
			q->emitted++;
			q->nan += p->is_float && p->d != p->d;
		}
		/* "[{...}]": the object, and its stats before its '}' */
		if (rc == CF_OK && i)
			rc = buf_putc(out, ',');
		if (rc == CF_OK)
			rc = buf_append(out, one.p + 1, one.len - 3);
		buf_reset(&st);
		if (rc == CF_OK && r->q->show_stats &&
		    (rc = stats_of(q, sub, &st)) == CF_OK)
			rc = buf_printf(out, ",\"stats\":%.*s", (int)st.len,
					(const char *)st.p);
		if (rc == CF_OK)
			rc = buf_putc(out, '}');
	}
	if (rc == CF_OK && r->q->show_summary) {
		buf_reset(&st);
		rc = summary_of(r, now_ns() - r->t0, &st);
		if (rc == CF_OK && r->nres)
			rc = buf_putc(out, ',');
		if (rc == CF_OK)
			rc = buf_append(out, st.p, st.len);
	}
	buf_release(&one);
	buf_release(&st);
	return rc ? rc : buf_putc(out, ']');
}

static int format_json(struct run *r, struct buf *out)
{
	struct tsd_json_series *js = calloc(r->nres ? r->nres : 1,
					    sizeof *js);
	struct tsd_dp **dps = calloc(r->nres ? r->nres : 1, sizeof *dps);
	uint64_t total = 0;
	int rc = CF_OK;

	if (!js || !dps) {
		rc = CF_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < r->nres && rc == CF_OK; i++) {
		const struct result *res = &r->res[i];
		size_t n, sub = (size_t)(res->sq - r->q->subs);
		int64_t t = r->qst ? now_ns() : 0;
		rc = collect(r, res, "JSON answer", &dps[i], &n, &total);
		if (r->qst)
			r->qst[sub].agg_ns += now_ns() - t;
		js[i] = (struct tsd_json_series){ res->metric, res->tags.p,
			res->tags.len, res->aggtags.p, res->aggtags.len,
			dps[i], n, res->skip_nan,
			r->q->show_query ? res->sq : NULL, sub,
			r->q->show_tsuids ? res->tsuids.p : NULL,
			res->tsuids.len, res->notes.len ? res->notes.p : NULL,
			res->notes.len, r->globals.len ? r->globals.p : NULL,
			r->globals.len };
	}
	if (rc == CF_OK && r->qst)
		rc = format_json_stats(r, js, out);
	else if (rc == CF_OK)
		rc = tsd_json_format(out, js, r->nres, r->q->ms, r->q->arrays,
				     r->q->start_ms, r->q->end_ms);
out:
	for (size_t i = 0; dps && i < r->nres; i++)
		free(dps[i]);
	free(dps);
	free(js);
	return rc;
}

/* --- expressions (exp=: tsd/expr.h) ----------------------------------- */

static int cmp_xtag_name(const void *a, const void *b)
{
	const struct tsd_xtag *const *x = a, *const *y = b;

	return strcmp((*x)->kname, (*y)->kname);
}

/* " k=v k=v" of s's tags, by name (none for an alias). */
static int xs_tags(const struct tsd_xseries *s, struct buf *out)
{
	const struct tsd_xtag *by[TSD_MAX_TAGS];
	size_t n = 0;
	int rc = CF_OK;

	for (size_t i = 0; i < s->ntags && n < TSD_MAX_TAGS; i++)
		if (!s->alias && s->tags[i].vname)
			by[n++] = &s->tags[i];
	qsort(by, n, sizeof by[0], cmp_xtag_name);
	for (size_t i = 0; i < n && rc == CF_OK; i++)
		rc = buf_printf(out, " %s=%s", by[i]->kname, by[i]->vname);
	return rc;
}

/* " k k" of s's aggregated keys, in UID order. */
static int xs_agg(const struct tsd_xseries *s, struct buf *out)
{
	int rc = CF_OK;

	for (size_t i = 0; i < s->nagg && !s->alias && rc == CF_OK; i++)
		rc = buf_printf(out, " %s", s->agg[i].kname);
	return rc;
}

/* The results of the metric queries as the expressions' inputs, one set
 * a sub query; each group's points aggregated whole (collect(): at most
 * max_graph_points in all).  The names and tags move to the sets. */
static int expr_inputs(struct run *r, struct tsd_xset *in, uint64_t *total)
{
	int rc = CF_OK;

	for (size_t i = 0; i < r->nres && rc == CF_OK; i++) {
		struct result *res = &r->res[i];
		struct tsd_xset *set = &in[res->sq - r->q->subs];
		struct tsd_xseries *ns, *x;
		ns = realloc(set->s, (set->n + 1) * sizeof *ns);
		if (!ns)
			return CF_ENOMEM;
		set->s = ns;
		x = memset(&ns[set->n++], 0, sizeof *x);
		x->muid = res->muid;
		x->tags = res->xt;
		x->ntags = res->nxt;
		x->agg = res->xa;
		x->nagg = res->nxa;
		res->xt = res->xa = NULL;
		res->nxt = res->nxa = 0;
		if (!(x->metric = strdup(res->metric)))
			return CF_ENOMEM;
		rc = collect(r, res, "expression", &x->dp, &x->n, total);
	}
	return rc;
}

/* Evaluates the query's expressions over its results and writes theirs:
 * OpenTSDB's JSON answer, or (text) "M TS VALUE TAGS" lines; points in
 * [start, end] only, as OpenTSDB's serializer prints them. */
static int format_exp(struct run *r, int text, struct buf *out)
{
	struct tsd_xset *in = calloc(r->q->nsubs ? r->q->nsubs : 1,
				     sizeof *in);
	struct tsd_xset *res = calloc(r->q->nexps ? r->q->nexps : 1,
				      sizeof *res);
	struct tsd_json_series *js = NULL;
	struct buf tags = BUF_INIT, agg = BUF_INIT;
	size_t nout = 0, k = 0;
	char **names = NULL;
	uint64_t total = 0, made = 0;
	char why[256];
	int rc;

	if (!in || !res) {
		rc = CF_ENOMEM;
		goto out;
	}
	if ((rc = expr_inputs(r, in, &total)))
		goto out;
	/* the points the functions make: max_graph_points for all the
	 * expressions together, as for their inputs */
	for (size_t i = 0; i < r->q->nexps && rc == CF_OK; i++) {
		uint64_t left = r->t->o.max_graph_points > made ?
				r->t->o.max_graph_points - made : 1;
		rc = tsd_expr_eval(r->x[i], in, r->q->nsubs,
				   r->q->start_ms, r->q->end_ms, left, &res[i],
				   why, sizeof why);
		if (rc == CF_EINVAL || rc == CF_ETOOBIG)
			set_err(r->err, "%s", why);
		for (size_t j = 0; j < res[i].n; j++)
			made += res[i].s[j].n;
		nout += res[i].n;
	}
	if (rc)
		goto out;
	js = calloc(nout ? nout : 1, sizeof *js);
	names = calloc(nout ? nout : 1, sizeof *names);
	if (!js || !names) {
		rc = CF_ENOMEM;
		goto out;
	}
	/* the tags' texts of all series in one buffer each: offsets first,
	 * pointers once the buffers no longer move */
	for (size_t i = 0; i < r->q->nexps && rc == CF_OK; i++)
		for (size_t j = 0; j < res[i].n && rc == CF_OK; j++, k++) {
			const struct tsd_xseries *s = &res[i].s[j];
			if (!(names[k] = tsd_xseries_name(s))) {
				rc = CF_ENOMEM;
				break;
			}
			js[k].metric = names[k];
			js[k].tags = (const void *)(uintptr_t)tags.len;
			rc = xs_tags(s, &tags);
			js[k].tagslen = tags.len - (size_t)(uintptr_t)js[k].tags;
			js[k].aggtags = (const void *)(uintptr_t)agg.len;
			if (rc == CF_OK)
				rc = xs_agg(s, &agg);
			js[k].aggtagslen = agg.len -
					   (size_t)(uintptr_t)js[k].aggtags;
			js[k].dp = s->dp;
			js[k].n = s->n;
		}
	for (size_t i = 0; i < k && rc == CF_OK; i++) {
		size_t t = (size_t)(uintptr_t)js[i].tags;
		size_t a = (size_t)(uintptr_t)js[i].aggtags;
		js[i].tags = tags.p ? (const void *)(tags.p + t) : "";
		js[i].aggtags = agg.p ? (const void *)(agg.p + a) : "";
	}
	if (rc == CF_OK && !text)
		rc = tsd_json_format(out, js, k, r->q->ms, r->q->arrays,
				     r->q->start_ms, r->q->end_ms);
	for (size_t i = 0; i < k && rc == CF_OK && text; i++)
		for (size_t j = 0; j < js[i].n && rc == CF_OK; j++) {
			const struct tsd_dp *p = &js[i].dp[j];
			if (p->ts < r->q->start_ms || p->ts > r->q->end_ms)
				continue;
			rc = tsd_buf_point(out, js[i].metric, r->q->ms ?
					   p->ts : p->ts / 1000, p->is_float,
					   p->i, p->d, js[i].tags,
					   js[i].tagslen);
		}
out:
	for (size_t i = 0; names && i < nout; i++)
		free(names[i]);
	free(names);
	free(js);
	buf_release(&tags);
	buf_release(&agg);
	for (size_t i = 0; in && i < r->q->nsubs; i++)
		tsd_xset_release(&in[i]);
	for (size_t i = 0; res && i < r->q->nexps; i++)
		tsd_xset_release(&res[i]);
	free(in);
	free(res);
	return rc;
}

static int format_png(struct run *r, struct buf *out)
{
	struct tsd_plot_series *ps = calloc(r->nres ? r->nres : 1, sizeof *ps);
	struct buf label = BUF_INIT;
	uint64_t total = 0;
	int rc = CF_OK;

	if (!ps)
		return CF_ENOMEM;
	for (size_t i = 0; i < r->nres; i++) {
		const struct result *res = &r->res[i];
		buf_reset(&label);
		/* "metric{k=v,k=v}" from " k=v k=v" */
		if ((rc = buf_printf(&label, "%s", res->metric)))
			goto out;
		for (size_t j = 0; j < res->tags.len; j++) {
			int ch = res->tags.p[j];
			if (ch == ' ')
				ch = j == 0 ? '{' : ',';
			if ((rc = buf_putc(&label, ch)))
				goto out;
		}
		if (res->tags.len && (rc = buf_putc(&label, '}')))
			goto out;
		if (!(ps[i].label = strndup((char *)label.p, label.len))) {
			rc = CF_ENOMEM;
			goto out;
		}
		if ((rc = collect(r, res, "graph", &ps[i].dp, &ps[i].n,
				   &total)))
			goto out;
	}
	rc = tsd_plot(r->t, r->q, ps, r->nres, out, r->err);
out:
	for (size_t i = 0; i < r->nres; i++) {
		free(ps[i].label);
		free(ps[i].dp);
	}
	free(ps);
	buf_release(&label);
	return rc;
}

/* Keeps a global annotation whose end is not past the query's, as
 * Annotation.getGlobalAnnotations does (end 0: none). */
static int take_global(void *arg, const unsigned char *tags, size_t ntags,
		       int64_t ms, const char *json, size_t len)
{
	struct run *r = arg;
	json_error_t je;
	json_t *j = json_loadb(json, len, 0, &je);
	json_int_t end = j ? json_integer_value(json_object_get(j, "endTime"))
			   : 0;

	(void)tags;
	(void)ntags;
	json_decref(j);
	if (end && tsd_ts_to_ms(end) > r->q->end_ms)
		return CF_OK;
	return take_note(r, (const unsigned char *)"", 0, ms, json, len);
}

/* r->globals: "[...]" of the global annotations of the range, sorted by
 * start, or empty when there are none. */
static int load_globals(struct run *r)
{
	struct qspan all;
	int rc;

	if ((rc = tsd_notes_of(r->t, 0, r->q->start_ms, r->q->end_ms,
			       take_global, r)) == CF_OK) {
		all.ntags = 0;
		rc = put_notes(r, &all, 1, &r->globals);
	}
	release_sub(r);
	return rc;
}

/* Scans every sub query into result groups (their points in memory, at
 * most max_query_bytes); nothing is aggregated yet. */
static int load_query(struct run *r)
{
	int rc = CF_OK;

	if ((rc = tsd_tables(r->t, &r->uidt, &r->dbt)))
		return rc;
	if (tsd_recent_wanted(r->t, r->dbt)) {
		/* stale recent points: this query reads the table; the
		 * compaction thread rebuilds them (without one, now) */
		if (r->t->thr_started)
			tsd_recent_kick(r->t);
		else if ((rc = tsd_recent_maintain(r->t, r->dbt)))
			return rc;
	}
	if (r->want_notes && r->q->global_annotations)
		rc = load_globals(r);
	r->t0 = now_ns();
	if (rc == CF_OK && (r->q->show_stats || r->q->show_summary) &&
	    !(r->qst = calloc(r->q->nsubs ? r->q->nsubs : 1,
			      sizeof *r->qst)))
		rc = CF_ENOMEM;
	for (size_t i = 0; i < r->q->nsubs && rc == CF_OK; i++) {
		uint64_t before = r->points;
		rc = run_sub(r, &r->q->subs[i]);
		if (r->qst)
			r->qst[i].points = r->points - before;
		release_sub(r);
	}
	pthread_mutex_lock(&r->t->mu);
	r->t->st.queries++;
	r->t->st.query_points += r->points;
	r->t->st.query_points_recent += r->recent_points;
	pthread_mutex_unlock(&r->t->mu);
	return rc;
}

static void free_exprs(struct tsd_expr **x, size_t n)
{
	for (size_t i = 0; x && i < n; i++)
		tsd_expr_free(x[i]);
	free(x);
}

static void release_run(struct run *r)
{
	free_exprs(r->x, r->q ? r->q->nexps : 0);
	r->x = NULL;
	free(r->qst);
	r->qst = NULL;
	free_results(r);
	buf_release(&r->globals);
	free(r->pts);
	r->pts = NULL;
	cf_table_close(r->uidt);
	cf_table_close(r->dbt);
	r->uidt = r->dbt = NULL;
}

/* TSD_FMT_GRAPH_JSON (GraphHandler's /q?json). */
static int format_graph_json(struct run *r, struct buf *out)
{
	const struct result **last = calloc(r->q->nsubs ? r->q->nsubs : 1,
					    sizeof *last);
	uint64_t total = 0, plotted = 0, points = 0;
	int rc = CF_OK;

	if (!last)
		return CF_ENOMEM;
	for (size_t i = 0; i < r->nres && rc == CF_OK; i++) {
		const struct result *res = &r->res[i];
		struct tsd_dp *dp;
		size_t n;
		if ((rc = collect(r, res, "graph", &dp, &n, &total)))
			break;
		points += n;
		for (size_t j = 0; j < n; j++)
			plotted += dp[j].ts >= r->q->start_ms &&
				   dp[j].ts <= r->q->end_ms &&
				   !(dp[j].is_float && dp[j].d != dp[j].d);
		free(dp);
		last[res->sq - r->q->subs] = res;
	}
	if (rc == CF_OK)
		rc = buf_printf(out, "{\"plotted\":%" PRIu64 ",\"points\":%"
				PRIu64 ",\"etags\":[", plotted, points);
	for (size_t i = 0; i < r->q->nsubs && rc == CF_OK; i++) {
		const struct result *res = last[i];
		if (i)
			rc = buf_putc(out, ',');
		if (rc == CF_OK && !res)
			rc = i ? buf_append(out, "null", 4) :
				 buf_append(out, "[]", 2);
		if (rc || !res)
			continue;
		/* " k k" as ["k","k"] */
		rc = buf_putc(out, '[');
		for (size_t b = 0, j = 0; rc == CF_OK && j <= res->aggtags.len;
		     j++) {
			if (j < res->aggtags.len && res->aggtags.p[j] != ' ')
				continue;
			if (j > b) {
				if (b > 1)
					rc = buf_putc(out, ',');
				if (rc == CF_OK)
					rc = tsd_json_string(out,
							     res->aggtags.p + b,
							     j - b);
			}
			b = j + 1;
		}
		if (rc == CF_OK)
			rc = buf_putc(out, ']');
	}
	if (rc == CF_OK)
		rc = buf_printf(out, "],\"timing\":%" PRId64 "}",
				(now_ns() - r->t0) / 1000000);
	free(last);
	return rc;
}

/* --- the text result, produced while read ------------------------------ */

/* The cursor state of a text query: the loaded groups and the group being
 * aggregated.  Memory: the loaded points (max_query_bytes) plus one
 * aggregation (tsd_agg_iter) plus the cursor's window. */
struct qtext {
	tsd *t;
	struct tsd_query q;	/* owns the zone the specs point to */
	struct run r;
	size_t g;		/* the group being read */
	struct tsd_agg_iter *it;
};

#define CHUNK (64 * 1024)

static int qtext_more(struct tsd_cursor *c)
{
	struct qtext *st = c->state;
	size_t before = c->win.len;
	struct tsd_dp p;
	int rc = CF_OK;

	while (c->win.len < before + CHUNK) {
		if (!st->it) {
			if (st->g == st->r.nres) {
				c->eof = 1;
				break;
			}
			const struct result *res = &st->r.res[st->g];
			if ((rc = tsd_agg_iter_new(&res->as, res->sp, res->nsp,
						   &st->it)))
				break;
		}
		rc = tsd_agg_iter_next(st->it, &p);
		if (rc == 0) {
			tsd_agg_iter_free(st->it);
			st->it = NULL;
			st->g++;
			continue;
		}
		if (rc < 0)
			break;
		if ((rc = emit_point(&st->r, &st->r.res[st->g], &p, &c->win)))
			break;
	}
	if (rc == CF_ERANGE || rc == CF_EINVAL) {
		agg_failed(st->r.err, rc, st->r.res[st->g].metric);
		cf_log(CF_LOG_WARN, "tsd: query of %s", st->r.err ?
		       st->r.err->reason : st->r.res[st->g].metric);
	}
	pthread_mutex_lock(&st->t->mu);
	st->t->st.query_bytes += c->win.len - before;
	pthread_mutex_unlock(&st->t->mu);
	return rc < 0 ? rc : CF_OK;
}

static int qtext_restart(struct tsd_cursor *c)
{
	struct qtext *st = c->state;

	tsd_agg_iter_free(st->it);
	st->it = NULL;
	st->g = 0;
	return CF_OK;
}

static void qtext_release(struct tsd_cursor *c)
{
	struct qtext *st = c->state;

	if (!st)
		return;
	tsd_agg_iter_free(st->it);
	release_run(&st->r);
	tsd_query_release(&st->q);
	free(st);
	c->state = NULL;
}

int tsd_query_sets(tsd *t, const struct tsd_query *q, struct tsd_xset *sets,
		   struct tsd_error *err)
{
	struct run r;
	uint64_t total = 0;
	int rc;

	memset(&r, 0, sizeof r);
	r.t = t;
	r.q = q;
	r.err = err;
	if (err) {
		err->line = 0;
		err->reason[0] = '\0';
	}
	rc = load_query(&r);
	if (rc == CF_OK)
		rc = expr_inputs(&r, sets, &total);
	release_run(&r);
	if (rc)
		for (size_t i = 0; i < q->nsubs; i++)
			tsd_xset_release(&sets[i]);
	return rc;
}

struct xctx {
	struct tsd_query *q;
	char *why;
	size_t whylen;
};

/* tsd_xadd_fn: an expression's metric query becomes a sub query (as
 * QueryRpc.parseMTypeSubQuery adds it), numbered by its index. */
static int add_metric(void *ctx, const char *m, size_t len, size_t *query)
{
	struct xctx *x = ctx;
	int rc = tsd_query_add_m(x->q, m, len, x->why, x->whylen);

	*query = x->q->nsubs - 1;
	return rc;
}

/* Parses query string qs with flags into q, and its expressions into
 * *x (NULL when it has none; free_exprs).  On failure q is released. */
static int parse(const char *qs, size_t len, unsigned flags,
		 struct tsd_query *q, struct tsd_expr ***x,
		 struct tsd_error *err)
{
	char why[200];
	int rc = tsd_query_parse_flags(qs, len, env_now_ms(), flags, q, why,
				       sizeof why);
	struct xctx c = { q, why, sizeof why };
	int parsed = rc == CF_OK;

	*x = NULL;
	if (rc == CF_OK && q->nexps && !(*x = calloc(q->nexps, sizeof **x)))
		rc = CF_ENOMEM;
	for (size_t i = 0; rc == CF_OK && i < q->nexps; i++)
		rc = tsd_expr_parse(q->exps[i], strlen(q->exps[i]),
				    add_metric, &c, &(*x)[i], why,
				    sizeof why);
	if (rc == CF_EINVAL)
		set_err(err, "%s", why);
	if (rc && parsed) {
		free_exprs(*x, q->nexps);
		*x = NULL;
		tsd_query_release(q);
	}
	return rc;
}

int tsd_query_check(tsd *t, const char *qs, size_t len,
		    struct tsd_error *err)
{
	struct tsd_expr **x;
	struct tsd_query q;
	cf_table *uidt, *dbt;
	uint32_t uid;
	size_t n;
	int rc;

	if (err)
		err->reason[0] = '\0';
	if ((rc = parse(qs, len, TSD_QUERY_EXP, &q, &x, err)))
		return rc;
	free_exprs(x, q.nexps);
	if ((rc = tsd_tables(t, &uidt, &dbt)))
		goto out;
	for (size_t i = 0; i < q.nsubs && rc == CF_OK; i++) {
		const struct tsd_subquery *sq = &q.subs[i];
		if (sq->ntsuids) {
			rc = one_metric(sq, err);	/* UIDs: no names */
			continue;
		}
		rc = tsd_uid_lookup(t->uids, uidt, TSD_METRICS, sq->metric,
				    strlen(sq->metric), &uid);
		if (rc == CF_ENOTFOUND)
			set_err(err, "no such metric: %s", sq->metric);
		for (size_t j = 0; j < sq->nfilters && rc == CF_OK; j++) {
			const char *k = sq->filters[j].tagk;
			rc = tsd_uid_lookup(t->uids, uidt, TSD_TAGK, k,
					    strlen(k), &uid);
			if (rc == CF_ENOTFOUND &&
			    sq->filters[j].type == TSD_FILTER_NOT_KEY)
				rc = CF_OK;
			if (rc == CF_ENOTFOUND)
				set_err(err, "no such tag key: %s", k);
			if (rc == CF_OK && by_uid(&sq->filters[j]))
				rc = resolve_literals(t, uidt, &sq->filters[j],
						      NULL, &n, err);
		}
	}
	cf_table_close(uidt);
	cf_table_close(dbt);
out:
	tsd_query_release(&q);
	return rc;
}

int tsd_query_open(tsd *t, const char *qs, size_t len, enum tsd_format fmt,
		   tsd_cursor **out, struct tsd_error *err)
{
	struct tsd_cursor *c = NULL;
	unsigned flags = 0;
	struct qtext *st;
	int rc;

	if (fmt & (TSD_FMT_EXP | TSD_FMT_GEXP))
		flags |= TSD_QUERY_EXP;
	if (fmt & TSD_FMT_GEXP)
		flags |= TSD_QUERY_GEXP;
	fmt = (enum tsd_format)((unsigned)fmt & 0xffu);
	if (err) {
		err->line = 0;
		err->reason[0] = '\0';
	}
	if (!(st = calloc(1, sizeof *st)))
		return CF_ENOMEM;
	st->t = t;
	if ((rc = parse(qs, len, flags, &st->q, &st->r.x, err))) {
		free(st);
		return rc;
	}
	if (st->q.gexp && fmt != TSD_FMT_TEXT && fmt != TSD_FMT_JSON) {
		set_err(err, "%s", "expressions are answered as JSON or "
			"text, not drawn");
		free_exprs(st->r.x, st->q.nexps);
		tsd_query_release(&st->q);
		free(st);
		return CF_EINVAL;
	}
	if ((rc = tsd_cursor_new(&c))) {
		free_exprs(st->r.x, st->q.nexps);
		tsd_query_release(&st->q);
		free(st);
		return rc;
	}
	c->state = st;
	c->release = qtext_release;
	st->r.t = t;
	st->r.q = &st->q;
	st->r.err = err;
	st->r.want_notes = fmt == TSD_FMT_JSON && !st->q.no_annotations &&
			   !st->q.gexp;
	rc = load_query(&st->r);
	/* the points are loaded and the tags named: no table is needed
	 * while the result is read */
	cf_table_close(st->r.uidt);
	cf_table_close(st->r.dbt);
	st->r.uidt = st->r.dbt = NULL;
	if (rc == CF_OK && st->q.gexp) {
		rc = format_exp(&st->r, fmt == TSD_FMT_TEXT, &c->win);
		c->eof = 1;
		release_run(&st->r);
	} else if (rc == CF_OK && fmt != TSD_FMT_TEXT) {
		rc = fmt == TSD_FMT_PNG ? format_png(&st->r, &c->win) :
		     fmt == TSD_FMT_JSON ? format_json(&st->r, &c->win) :
		     format_graph_json(&st->r, &c->win);
		c->eof = 1;
		release_run(&st->r);
	} else if (rc == CF_OK) {
		c->more = qtext_more;
		c->restart = qtext_restart;
		/* the first chunk now: small results fail at open, as
		 * they did when everything was computed there */
		rc = qtext_more(c);
	}
	/* err belongs to this call; later failures go to the log */
	st->r.err = NULL;
	if (rc) {
		tsd_cursor_close(c);
		return rc;
	}
	*out = c;
	return CF_OK;
}

/* --- deleting what a query reads -------------------------------------- */

/* Adds to b the rows of sub query sq in the hours holding [start, end],
 * applying b whenever it holds TSD_DELETE_BATCH rows. */
static int delete_sub(struct run *r, const struct tsd_subquery *sq,
		      cf_batch *b, uint64_t *rows)
{
	unsigned char start[TSD_ROWKEY_PREFIX], stop[TSD_ROWKEY_PREFIX];
	int64_t from = r->q->start_ms / 1000, to = r->q->end_ms / 1000;
	struct cf_scan_opts so;
	cf_scanner *s = NULL;
	const cf_row *row;
	uint32_t muid;
	int rc;

	if (sq->ntsuids) {
		rc = resolve_tsuids(r, sq, &muid);
	} else {
		rc = tsd_uid_lookup(r->t->uids, r->uidt, TSD_METRICS,
				    sq->metric, strlen(sq->metric), &muid);
		if (rc == CF_ENOTFOUND)
			set_err(r->err, "no such metric: %s", sq->metric);
	}
	if (rc || (rc = resolve_filters(r, sq)))
		return rc;
	if (from < 0)
		from = 0;
	from -= from % TSD_MAX_TIMESPAN;
	to += TSD_MAX_TIMESPAN - to % TSD_MAX_TIMESPAN;
	if (!tsd_hour_scan(&so, start, stop, muid, from, to))
		return CF_OK;
	so.read.keys_only = 1;
	if ((rc = cf_scan_open(r->dbt, &so, &s)))
		return rc;
	while ((rc = cf_scan_next(s, &row)) == CF_OK && row) {
		size_t klen;
		const unsigned char *key = cf_row_key(row, &klen);
		int match;

		if (!tsd_rowkey_valid(key, klen))
			continue;
		if ((rc = row_matches(r, sq, key + TSD_ROWKEY_PREFIX,
				      (klen - TSD_ROWKEY_PREFIX) / 6, &match)))
			break;
		if (!match)
			continue;
		if (cf_batch_count(b) >= TSD_DELETE_BATCH) {
			if ((rc = cf_table_apply(r->dbt, b)))
				break;
			cf_batch_clear(b);
		}
		if ((rc = cf_batch_delete(b, CF_DEL_ROW, key, klen, NULL, 0,
					  NULL, 0, CF_TS_NOW)))
			break;
		(*rows)++;
	}
	cf_scan_close(s);
	return rc;
}

int tsd_query_delete(tsd *t, const char *qs, size_t len, uint64_t *rows,
		     struct tsd_error *err)
{
	struct tsd_expr **x;
	struct tsd_query q;
	struct run r;
	cf_batch *b = NULL;
	uint64_t n = 0;
	int rc;

	if (rows)
		*rows = 0;
	if (err) {
		err->line = 0;
		err->reason[0] = '\0';
	}
	if ((rc = parse(qs, len, 0, &q, &x, err)))
		return rc;
	memset(&r, 0, sizeof r);
	r.t = t;
	r.q = &q;
	r.err = err;
	if ((rc = tsd_tables(t, &r.uidt, &r.dbt)) || (rc = cf_batch_new(&b)))
		goto out;
	/* compactions wait, and those that read a row before give up */
	pthread_rwlock_wrlock(&t->del_lock);
	for (size_t i = 0; i < q.nsubs && rc == CF_OK; i++) {
		rc = delete_sub(&r, &q.subs[i], b, &n);
		release_sub(&r);
	}
	if (rc == CF_OK && cf_batch_count(b))
		rc = cf_table_apply(r.dbt, b);
	__atomic_add_fetch(&t->del_gen, 1, __ATOMIC_RELEASE);
	pthread_rwlock_unlock(&t->del_lock);
	cf_log(rc ? CF_LOG_WARN : CF_LOG_INFO, "tsd: query delete%s: %"
	       PRIu64 " rows of %.*s%s", rc ? " failed" : "", n,
	       (int)(len > 200 ? 200 : len), qs, len > 200 ? "..." : "");
	if (rows)
		*rows = n;
out:
	cf_batch_free(b);
	release_run(&r);
	tsd_query_release(&q);
	return rc;
}
