/*
 * lookup.c: the series of a metric, tag key, tag value or pair: OpenTSDB's
 * TimeSeriesLookup (/api/search/lookup; docs/api.md) and MNT/tsd/lookup/
 * (docs/timeseries.md), found in the data table (cellfs has no tsdb-meta).
 *
 * The filter, as TimeSeriesLookup's row key regex means it: one metric
 * (or any); pairs with the same tag key are OR'd ("host=a,host=b"), a
 * key without value ("host=" or "host=*") takes any value and absorbs
 * the pairs of its key, different keys are AND'd; values without key
 * ("=lga", "*=lga") are OR'd among themselves: some tag of the series
 * has one of them.
 *
 * The scan: the rows of the metric, keys only, hour by hour from the
 * newest (scan_metric(); without a metric, the whole table in reverse
 * key order); a series is kept once (a hash set of TSUIDs) and the scan
 * stops when limit series are found.  So the answer holds the limit
 * most recently written series, sorted by TSUID for the answer.
 *
 * Memory: the set, at most limit (<= TSD_LOOKUP_MAX) TSUIDs of at most
 * 51 bytes plus a hash slot each, then their names; one row's keys (the
 * scanner's row).  Time: one pass over the keys of the rows scanned
 * (every row of the metric when fewer than limit series match) and the
 * names of the series found (cached by uid.c).
 */
#include <ctype.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsd/internal.h"
#include "tsd/query.h"
#include "util/coding.h"
#include "util/err.h"

#define TSUID_MAX (TSD_UID_WIDTH + TSD_MAX_TAGS * 2 * TSD_UID_WIDTH)

/* --- the query ----------------------------------------------------------- */

void tsd_lookup_query_init(struct tsd_lookup_query *q)
{
	memset(q, 0, sizeof *q);
	q->limit = TSD_LOOKUP_LIMIT;
}

void tsd_lookup_query_release(struct tsd_lookup_query *q)
{
	free(q->metric);
	for (size_t i = 0; i < q->ntags; i++) {
		free(q->tags[i].key);
		free(q->tags[i].value);
	}
	free(q->tags);
	tsd_lookup_query_init(q);
}

int tsd_lookup_set_metric(struct tsd_lookup_query *q, const char *metric)
{
	char *m = NULL;

	if (metric && !(m = strdup(metric)))
		return CF_ENOMEM;
	free(q->metric);
	q->metric = m;
	return CF_OK;
}

static int add_pair(struct tsd_lookup_query *q, const char *k, size_t kl,
		    const char *v, size_t vl)
{
	struct tsd_lookup_pair *p;

	if (q->ntags == q->cap) {
		size_t cap = q->cap ? 2 * q->cap : 4;
		p = realloc(q->tags, cap * sizeof *p);
		if (!p)
			return CF_ENOMEM;
		q->tags = p;
		q->cap = cap;
	}
	p = &q->tags[q->ntags];
	p->key = k ? tsd_dupn(k, kl) : NULL;
	p->value = v ? tsd_dupn(v, vl) : NULL;
	if ((k && !p->key) || (v && !p->value)) {
		free(p->key);
		free(p->value);
		return CF_ENOMEM;
	}
	q->ntags++;
	q->has_tags = 1;
	return CF_OK;
}

int tsd_lookup_add_pair(struct tsd_lookup_query *q, const char *key,
			const char *value)
{
	return add_pair(q, key, key ? strlen(key) : 0, value,
			value ? strlen(value) : 0);
}

static int fail(struct tsd_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int fail(struct tsd_error *err, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->line = 0;
		va_start(ap, fmt);
		vsnprintf(err->reason, sizeof err->reason, fmt, ap);
		va_end(ap);
	}
	return CF_EINVAL;
}

#define W(n) ((int)((n) > 200 ? 200 : (n)))

/* Tags.parse(List, tag) of one "k=v", "k=", "=v". */
static int parse_tag(struct tsd_lookup_query *q, const char *s, size_t n,
		     struct tsd_error *err)
{
	const char *eq;

	if (n < 2)
		return fail(err, "When parsing tag '%.*s': Missing tag pair",
			    W(n), s);
	if (s[0] == '=')
		return add_pair(q, NULL, 0, s + 1, n - 1);
	if (s[n - 1] == '=')
		return add_pair(q, s, n - 1, NULL, 0);
	eq = memchr(s, '=', n);
	if (!eq || eq == s || eq == s + n - 1 ||
	    memchr(eq + 1, '=', n - (size_t)(eq + 1 - s)))
		return fail(err, "When parsing tag '%.*s': invalid tag: %.*s",
			    W(n), s, W(n), s);
	return add_pair(q, s, (size_t)(eq - s), eq + 1,
			n - (size_t)(eq + 1 - s));
}

int tsd_lookup_parse_m(struct tsd_lookup_query *q, const char *m, size_t len,
		       struct tsd_error *err)
{
	const char *curly = memchr(m, '{', len);
	size_t b;
	int rc;

	q->has_tags = 1;	/* SearchRpc sets an empty list first */
	if (!curly) {
		if (len == 0)
			return fail(err, "Metric string was empty");
		return (q->metric = tsd_dupn(m, len)) ? CF_OK : CF_ENOMEM;
	}
	if (m[len - 1] != '}')
		return fail(err, "Missing '}' at the end of: %.*s", W(len), m);
	if (curly == m + len - 2) {
		if (m[0] == '{')
			return fail(err, "Missing metric and tags: %.*s",
				    W(len), m);
		return (q->metric = tsd_dupn(m, len - 2)) ? CF_OK : CF_ENOMEM;
	}
	/* every ',' splits, empty parts included (Tags.splitString) */
	b = (size_t)(curly - m) + 1;
	for (size_t i = b; i <= len - 1; i++) {
		if (i < len - 1 && m[i] != ',')
			continue;
		if ((rc = parse_tag(q, m + b, i - b, err)))
			return rc;
		b = i + 1;
	}
	if (m[0] == '{')
		return CF_OK;
	q->metric = tsd_dupn(m, (size_t)(curly - m));
	return q->metric ? CF_OK : CF_ENOMEM;
}

int tsd_lookup_parse_limit(struct tsd_lookup_query *q, const char *s,
			   struct tsd_error *err)
{
	const char *p = s;
	long long v = 0;
	int neg = 0;

	/* Integer.parseInt: an optional sign, decimal digits, 32 bits */
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (!*p)
		goto bad;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			goto bad;
		v = v * 10 + (*p - '0');
		if (v > (long long)INT_MAX + 1)
			goto bad;
	}
	if (!neg && v > INT_MAX)
		goto bad;
	q->limit = neg ? (long)-v : (long)v;
	return CF_OK;
bad:
	return fail(err, "Unable to convert 'limit' to a valid number");
}

/* 1 when s[0..n) is the query-string form: "m=...", "limit=..." or
 * "use_meta=..." first, or several parameters. */
static int is_qs(const char *s, size_t n)
{
	return memchr(s, '&', n) || (n >= 2 && !memcmp(s, "m=", 2)) ||
	       (n >= 6 && !memcmp(s, "limit=", 6)) ||
	       (n >= 9 && !memcmp(s, "use_meta=", 9));
}

int tsd_lookup_parse_qs(struct tsd_lookup_query *q, const char *s, size_t n,
			struct tsd_error *err)
{
	char *key = NULL, *val = NULL;
	int have_m = 0, rc = CF_OK;

	q->limit = 0;	/* a file lists every series, up to the bound */
	if (!is_qs(s, n)) {
		if (!(val = tsd_pct_decode(s, n)))
			return CF_ENOMEM;
		rc = tsd_lookup_parse_m(q, val, strlen(val), err);
		free(val);
		return rc;
	}
	for (size_t b = 0, i = 0; i <= n && rc == CF_OK; i++) {
		if (i < n && s[i] != '&')
			continue;
		const char *item = s + b, *eq;
		size_t ilen = i - b, klen;
		b = i + 1;
		if (ilen == 0)
			continue;
		eq = memchr(item, '=', ilen);
		klen = eq ? (size_t)(eq - item) : ilen;
		free(key);
		free(val);
		key = tsd_pct_decode(item, klen);
		val = eq ? tsd_pct_decode(eq + 1, ilen - klen - 1) : strdup("");
		if (!key || !val) {
			rc = CF_ENOMEM;
			break;
		}
		if (!strcmp(key, "m")) {
			if (have_m++)
				rc = fail(err, "more than one m=");
			else if (!*val)
				rc = fail(err, "Missing parameter m");
			else
				rc = tsd_lookup_parse_m(q, val, strlen(val),
							err);
		} else if (!strcmp(key, "limit")) {
			rc = tsd_lookup_parse_limit(q, val, err);
		}
		/* others (use_meta, ...) are ignored, as OpenTSDB's lookup
		 * ignores them */
	}
	free(key);
	free(val);
	if (rc == CF_OK && !have_m)
		rc = fail(err, "Missing parameter m");
	return rc;
}

/* --- the filter ------------------------------------------------------------ */

struct group {
	uint32_t k;
	int any;		/* any value of k */
	uint32_t *v;		/* sorted */
	size_t nv;
};

struct filt {
	int any_metric;
	uint32_t muid;
	struct group *g;
	size_t ng;
	uint32_t *tv;		/* values without key (OR'd), sorted */
	size_t ntv;
	uint32_t *vals;		/* storage of the groups' v */
};

static void filt_release(struct filt *f)
{
	free(f->g);
	free(f->tv);
	free(f->vals);
	memset(f, 0, sizeof *f);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static int has_u32(const uint32_t *v, size_t n, uint32_t x)
{
	return bsearch(&x, v, n, sizeof *v, cmp_u32) != NULL;
}

/* A resolved pair: key or value 0 for none (UIDs start at 1). */
struct rpair {
	uint32_t k, v;
};

static int cmp_rpair(const void *a, const void *b)
{
	const struct rpair *x = a, *y = b;
	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	return x->v < y->v ? -1 : x->v > y->v;
}

static int given(const char *s)
{
	return s && strcmp(s, "*");
}

static int nsun(struct tsd_error *err, enum tsd_kind kind, const char *name)
{
	if (err) {
		err->line = 0;
		snprintf(err->reason, sizeof err->reason, "No such name for "
			 "'%s': '%.200s'", tsd_uid_kind_name(kind), name);
	}
	return CF_ENOTFOUND;
}

/* Resolves a name (uidt NULL: nothing was ever written, so no name). */
static int resolve(tsd *t, cf_table *uidt, enum tsd_kind kind,
		   const char *name, uint32_t *uid, struct tsd_error *err)
{
	int rc;

	if (!uidt)
		return nsun(err, kind, name);
	rc = tsd_uid_lookup(t->uids, uidt, kind, name, strlen(name), uid);
	if (rc == CF_ENOTFOUND)
		return nsun(err, kind, name);
	return rc;
}

static int filt_build(tsd *t, cf_table *uidt,
		      const struct tsd_lookup_query *q, struct filt *f,
		      struct tsd_error *err)
{
	struct rpair *p = NULL;
	size_t np = 0, nv = 0;
	int rc = CF_OK;

	memset(f, 0, sizeof *f);
	f->any_metric = !given(q->metric) || !q->metric[0];
	if (!f->any_metric &&
	    (rc = resolve(t, uidt, TSD_METRICS, q->metric, &f->muid, err)))
		return rc;
	if (q->ntags == 0)
		return CF_OK;
	p = malloc(q->ntags * sizeof *p);
	f->tv = malloc(q->ntags * sizeof *f->tv);
	f->vals = malloc(q->ntags * sizeof *f->vals);
	f->g = malloc(q->ntags * sizeof *f->g);
	if (!p || !f->tv || !f->vals || !f->g) {
		rc = CF_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < q->ntags; i++) {
		const struct tsd_lookup_pair *tp = &q->tags[i];
		uint32_t k = 0, v = 0;
		if (given(tp->key) &&
		    (rc = resolve(t, uidt, TSD_TAGK, tp->key, &k, err)))
			goto out;
		if (given(tp->value) &&
		    (rc = resolve(t, uidt, TSD_TAGV, tp->value, &v, err)))
			goto out;
		if (!k && v)
			f->tv[f->ntv++] = v;
		else if (k) {
			p[np].k = k;
			p[np++].v = v;
		}
		/* neither ("*=*"): no condition */
	}
	qsort(f->tv, f->ntv, sizeof *f->tv, cmp_u32);
	qsort(p, np, sizeof *p, cmp_rpair);
	for (size_t i = 0; i < np; i++) {
		struct group *g;
		if (i == 0 || p[i].k != p[i - 1].k) {
			g = &f->g[f->ng++];
			g->k = p[i].k;
			g->any = 0;
			g->v = f->vals + nv;
			g->nv = 0;
		}
		g = &f->g[f->ng - 1];
		if (p[i].v == 0)
			g->any = 1;	/* sorts first: the key's wildcard */
		else if (!g->any) {
			f->vals[nv++] = p[i].v;
			g->nv++;
		}
	}
out:
	free(p);
	if (rc)
		filt_release(f);
	return rc;
}

/* 1 when the tag pairs tags[0..n) pass f. */
static int filt_match(const struct filt *f, const unsigned char *tags,
		      size_t n)
{
	for (size_t i = 0; i < f->ng; i++) {
		const struct group *g = &f->g[i];
		size_t j;
		for (j = 0; j < n; j++)
			if (tsd_uid_get(tags + j * 6) == g->k)
				break;
		if (j == n)
			return 0;
		if (!g->any && !has_u32(g->v, g->nv,
					tsd_uid_get(tags + j * 6 + 3)))
			return 0;
	}
	if (f->ntv) {
		size_t j;
		for (j = 0; j < n; j++)
			if (has_u32(f->tv, f->ntv, tsd_uid_get(tags + j * 6 + 3)))
				break;
		if (j == n)
			return 0;
	}
	return 1;
}

/* --- the set of series found ----------------------------------------------- */

struct ent {
	unsigned char len;
	unsigned char b[TSUID_MAX];
};

struct set {
	struct ent *e;
	size_t n, cap;
	uint32_t *slot;		/* index + 1; 0: empty */
	size_t nslot;		/* a power of two, > 2 n */
};

static uint64_t hash(const unsigned char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static int set_grow(struct set *s)
{
	size_t ns = s->nslot ? 2 * s->nslot : 64;
	uint32_t *slot = calloc(ns, sizeof *slot);

	if (!slot)
		return CF_ENOMEM;
	for (size_t i = 0; i < s->n; i++) {
		size_t h = (size_t)hash(s->e[i].b, s->e[i].len) & (ns - 1);
		while (slot[h])
			h = (h + 1) & (ns - 1);
		slot[h] = (uint32_t)(i + 1);
	}
	free(s->slot);
	s->slot = slot;
	s->nslot = ns;
	return CF_OK;
}

/* Adds tsuid b[0..n) unless present. */
static int set_add(struct set *s, const unsigned char *b, size_t n)
{
	size_t h;
	int rc;

	if (2 * (s->n + 1) >= s->nslot && (rc = set_grow(s)))
		return rc;
	h = (size_t)hash(b, n) & (s->nslot - 1);
	for (; s->slot[h]; h = (h + 1) & (s->nslot - 1)) {
		const struct ent *e = &s->e[s->slot[h] - 1];
		if (e->len == n && !memcmp(e->b, b, n))
			return CF_OK;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct ent *e = realloc(s->e, cap * sizeof *e);
		if (!e)
			return CF_ENOMEM;
		s->e = e;
		s->cap = cap;
	}
	s->e[s->n].len = (unsigned char)n;
	memcpy(s->e[s->n].b, b, n);
	s->slot[h] = (uint32_t)++s->n;
	return CF_OK;
}

static int cmp_ent(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->b, y->b, n);
	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Takes the row key[0..klen) into s when it is a series of f. */
static int take(const struct filt *f, struct set *s, const unsigned char *key,
		size_t klen)
{
	unsigned char tsuid[TSUID_MAX];
	size_t ntags;

	if (!tsd_rowkey_valid(key, klen))
		return CF_OK;	/* not a data row of ours */
	ntags = (klen - TSD_ROWKEY_PREFIX) / (2 * TSD_UID_WIDTH);
	if (!filt_match(f, key + TSD_ROWKEY_PREFIX, ntags))
		return CF_OK;
	memcpy(tsuid, key, TSD_UID_WIDTH);
	memcpy(tsuid + TSD_UID_WIDTH, key + TSD_ROWKEY_PREFIX,
	       klen - TSD_ROWKEY_PREFIX);
	return set_add(s, tsuid, klen - TSD_TS_BYTES);
}

static void scan_opts(struct cf_scan_opts *so)
{
	static const struct cf_column col = { "t", 1, NULL, 0 };

	memset(so, 0, sizeof *so);
	so->read.columns = &col;
	so->read.ncolumns = 1;
	so->read.max_ts = INT64_MAX;
	so->read.max_versions = 1;
	so->read.keys_only = 1;
}

/* Every row of scan so into s, until limit series are found. */
static int scan_rows(cf_table *dbt, const struct cf_scan_opts *so,
		     const struct filt *f, size_t limit, struct set *s)
{
	cf_scanner *sc = NULL;
	const cf_row *row;
	int rc;

	if ((rc = cf_scan_open(dbt, so, &sc)))
		return rc;
	while (s->n < limit) {
		size_t klen;
		const unsigned char *key;
		if ((rc = cf_scan_next(sc, &row)) || !row)
			break;
		key = cf_row_key(row, &klen);
		if ((rc = take(f, s, key, klen)))
			break;
	}
	cf_scan_close(sc);
	return rc;
}

/*
 * The series of metric f->muid, newest hour first, until limit of them
 * are found: the newest hour below the last one read is found by a
 * reversed scan of one row, then its rows (contiguous: metric, hour,
 * tags) are read forward, which the engine does several times faster
 * than a reversed scan.  A row key too short to hold an hour ends the
 * walk: the rest is read by one reversed scan.
 */
static int scan_metric(cf_table *dbt, const struct filt *f, size_t limit,
		       struct set *s)
{
	unsigned char muid[TSD_UID_WIDTH], below[TSD_ROWKEY_MAX + 1];
	unsigned char hour[TSD_ROWKEY_PREFIX];
	struct cf_scan_opts so;
	size_t blen = 0;	/* 0: from the end of the metric */
	int rc = CF_OK;

	tsd_uid_put(muid, f->muid);
	while (s->n < limit) {
		cf_scanner *sc = NULL;
		const cf_row *row;
		const unsigned char *key;
		size_t klen;
		uint32_t base;

		scan_opts(&so);
		so.prefix = muid;
		so.prefixlen = TSD_UID_WIDTH;
		so.reversed = 1;
		so.limit = 1;
		so.start = blen ? below : NULL;
		so.startlen = blen;
		if ((rc = cf_scan_open(dbt, &so, &sc)))
			return rc;
		rc = cf_scan_next(sc, &row);
		if (rc || !row) {
			cf_scan_close(sc);
			return rc;
		}
		key = cf_row_key(row, &klen);
		if (klen < TSD_ROWKEY_PREFIX) {
			/* not a row of ours: the rest the slow way */
			memcpy(below, key, klen);
			cf_scan_close(sc);
			scan_opts(&so);
			so.prefix = muid;
			so.prefixlen = TSD_UID_WIDTH;
			so.reversed = 1;
			so.start = below;
			so.startlen = klen;
			return scan_rows(dbt, &so, f, limit, s);
		}
		memcpy(hour, key, TSD_ROWKEY_PREFIX);
		cf_scan_close(sc);
		scan_opts(&so);
		so.prefix = hour;
		so.prefixlen = TSD_ROWKEY_PREFIX;
		if ((rc = scan_rows(dbt, &so, f, limit, s)))
			return rc;
		base = dec_u32be(hour + TSD_UID_WIDTH);
		if (base == 0)
			break;
		/* above every key of the hour before: its prefix then more
		 * 0xFF than any tag list has */
		memcpy(below, muid, TSD_UID_WIDTH);
		enc_u32be(below + TSD_UID_WIDTH, base - 1);
		memset(below + TSD_ROWKEY_PREFIX, 0xFF,
		       sizeof below - TSD_ROWKEY_PREFIX);
		blen = sizeof below;
	}
	return rc;
}

/* The series of f, newest first (without a metric: by metric, highest
 * UID first, each newest hour first), until limit of them are found. */
static int scan(cf_table *dbt, const struct filt *f, size_t limit,
		struct set *s)
{
	struct cf_scan_opts so;

	if (!f->any_metric)
		return scan_metric(dbt, f, limit, s);
	scan_opts(&so);
	so.reversed = 1;
	return scan_rows(dbt, &so, f, limit, s);
}

/* --- naming the series ------------------------------------------------------ */

/* Offsets into the names block while it grows. */
struct offs {
	size_t metric, k[TSD_MAX_TAGS], v[TSD_MAX_TAGS];
};

static int name_of(tsd *t, cf_table *uidt, enum tsd_kind kind, uint32_t uid,
		   struct buf *names, size_t *off, struct tsd_error *err)
{
	int rc;

	*off = names->len;
	rc = tsd_uid_name(t->uids, uidt, kind, uid, names);
	if (rc == CF_ENOTFOUND) {
		if (err) {
			err->line = 0;
			snprintf(err->reason, sizeof err->reason, "No such "
				 "unique ID for '%s': %06X",
				 tsd_uid_kind_name(kind), uid);
		}
		return CF_ENOTFOUND;
	}
	return rc ? rc : buf_putc(names, 0);
}

static int name_all(tsd *t, cf_table *uidt, const struct set *s,
		    struct tsd_lookup_result *res, struct tsd_error *err)
{
	struct buf names = BUF_INIT;
	struct offs *o = NULL;
	int rc = CF_OK;

	res->s = calloc(s->n ? s->n : 1, sizeof *res->s);
	o = malloc((s->n ? s->n : 1) * sizeof *o);
	if (!res->s || !o) {
		rc = CF_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < s->n && rc == CF_OK; i++) {
		const struct ent *e = &s->e[i];
		struct tsd_series *x = &res->s[i];
		x->ntags = (size_t)(e->len - TSD_UID_WIDTH) / 6;
		for (size_t j = 0; j < e->len; j++)
			sprintf(x->tsuid + 2 * j, "%02X", e->b[j]);
		rc = name_of(t, uidt, TSD_METRICS, tsd_uid_get(e->b), &names,
			     &o[i].metric, err);
		for (size_t j = 0; j < x->ntags && rc == CF_OK; j++) {
			const unsigned char *p = e->b + TSD_UID_WIDTH + 6 * j;
			rc = name_of(t, uidt, TSD_TAGK, tsd_uid_get(p), &names,
				     &o[i].k[j], err);
			if (rc == CF_OK)
				rc = name_of(t, uidt, TSD_TAGV,
					     tsd_uid_get(p + 3), &names,
					     &o[i].v[j], err);
		}
	}
	if (rc)
		goto out;
	res->n = s->n;
	res->names = (char *)names.p;
	names.p = NULL;
	for (size_t i = 0; i < res->n; i++) {
		struct tsd_series *x = &res->s[i];
		x->metric = res->names + o[i].metric;
		for (size_t j = 0; j < x->ntags; j++) {
			x->tagk[j] = res->names + o[i].k[j];
			x->tagv[j] = res->names + o[i].v[j];
		}
		/* by tag key name: insertion sort of at most eight */
		for (size_t j = 1; j < x->ntags; j++) {
			const char *k = x->tagk[j], *v = x->tagv[j];
			size_t m = j;
			while (m > 0 && strcmp(x->tagk[m - 1], k) > 0) {
				x->tagk[m] = x->tagk[m - 1];
				x->tagv[m] = x->tagv[m - 1];
				m--;
			}
			x->tagk[m] = k;
			x->tagv[m] = v;
		}
	}
out:
	free(o);
	buf_release(&names);
	if (rc) {
		free(res->s);
		res->s = NULL;
		res->n = 0;
	}
	return rc;
}

void tsd_lookup_result_release(struct tsd_lookup_result *r)
{
	free(r->s);
	free(r->names);
	memset(r, 0, sizeof *r);
}

size_t tsd_lookup_limit(const struct tsd_lookup_query *q)
{
	return q->limit <= 0 || q->limit > TSD_LOOKUP_MAX ? TSD_LOOKUP_MAX
		: (size_t)q->limit;
}

int tsd_lookup(tsd *t, const struct tsd_lookup_query *q,
	       struct tsd_lookup_result *res, struct tsd_error *err)
{
	cf_table *uidt = NULL, *dbt = NULL;
	struct set s;
	struct filt f;
	int rc;

	memset(res, 0, sizeof *res);
	memset(&s, 0, sizeof s);
	memset(&f, 0, sizeof f);
	if (!q->metric && q->ntags == 0)
		return fail(err, "Missing metric and tags. Please supply at "
			    "least one value.");
	if (t && (rc = tsd_tables(t, &uidt, &dbt)))
		return rc;
	if ((rc = filt_build(t, uidt, q, &f, err)))
		goto out;
	if (!t)
		goto out;	/* no table: nothing was ever written */
	if ((rc = scan(dbt, &f, tsd_lookup_limit(q), &s)))
		goto out;
	if (s.n)
		qsort(s.e, s.n, sizeof *s.e, cmp_ent);
	rc = name_all(t, uidt, &s, res, err);
out:
	filt_release(&f);
	free(s.e);
	free(s.slot);
	cf_table_close(uidt);
	cf_table_close(dbt);
	return rc;
}

/* --- MNT/tsd/lookup/ -------------------------------------------------------- */

int tsd_lookup_check(tsd *t, const char *qs, size_t len,
		     struct tsd_error *err)
{
	struct tsd_lookup_query q;
	cf_table *uidt = NULL, *dbt = NULL;
	struct filt f;
	int rc;

	tsd_lookup_query_init(&q);
	memset(&f, 0, sizeof f);
	if ((rc = tsd_lookup_parse_qs(&q, qs, len, err)))
		goto out;
	if (!q.metric && q.ntags == 0) {
		rc = fail(err, "Missing metric and tags. Please supply at "
			  "least one value.");
		goto out;
	}
	if (t && (rc = tsd_tables(t, &uidt, &dbt)))
		goto out;
	rc = filt_build(t, uidt, &q, &f, err);
	filt_release(&f);
out:
	cf_table_close(uidt);
	cf_table_close(dbt);
	tsd_lookup_query_release(&q);
	return rc;
}

static int text_more(struct tsd_cursor *c)
{
	c->eof = 1;
	return CF_OK;
}

int tsd_lookup_open(tsd *t, const char *qs, size_t len, tsd_cursor **out,
		    struct tsd_error *err)
{
	struct tsd_lookup_query q;
	struct tsd_lookup_result res;
	struct tsd_cursor *c = NULL;
	int rc;

	tsd_lookup_query_init(&q);
	memset(&res, 0, sizeof res);
	if ((rc = tsd_lookup_parse_qs(&q, qs, len, err)) ||
	    (rc = tsd_lookup(t, &q, &res, err)) ||
	    (rc = tsd_cursor_new(&c)))
		goto out;
	c->more = text_more;
	c->eof = 1;
	for (size_t i = 0; i < res.n && rc == CF_OK; i++) {
		const struct tsd_series *x = &res.s[i];
		rc = buf_append(&c->win, x->metric, strlen(x->metric));
		for (size_t j = 0; j < x->ntags && rc == CF_OK; j++)
			rc = buf_printf(&c->win, " %s=%s", x->tagk[j],
					x->tagv[j]);
		if (rc == CF_OK)
			rc = buf_putc(&c->win, '\n');
	}
out:
	if (rc) {
		tsd_cursor_close(c);
		c = NULL;
	}
	*out = c;
	tsd_lookup_result_release(&res);
	tsd_lookup_query_release(&q);
	return rc;
}
_Static_assert(TSD_LOOKUP_TAGS == TSD_MAX_TAGS, "tag bound");
