/*
 * agg.c: OpenTSDB's query pipeline on points in memory (see agg.h).
 *
 * Each series is a stream (struct sstream: raw points -> downsampling
 * -> fill -> rate, one point per call) and the step that merges the
 * series (struct merge) keeps OpenTSDB's AggregationIterator state
 * exactly: per series a "current" point (the last one at or before the
 * output timestamp, 0 = not started or finished) and a "next" point, and
 * the output timestamps are the union of all series' timestamps.  A series
 * contributes between its first and last point; in between it is
 * interpolated by the aggregator's method.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tsd/agg.h"
#include "tsd/codec.h"
#include "tsd/number.h"
#include "util/err.h"

struct series {
	struct tsd_dp *dp;
	size_t n, cap;
};

static int push(struct series *s, int64_t ts, int is_float, int64_t i,
		double d)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct tsd_dp *p = realloc(s->dp, cap * sizeof *p);
		if (!p)
			return CF_ENOMEM;
		s->dp = p;
		s->cap = cap;
	}
	s->dp[s->n].ts = ts;
	s->dp[s->n].is_float = is_float;
	s->dp[s->n].i = i;
	s->dp[s->n].d = d;
	s->n++;
	return CF_OK;
}

static double to_double(const struct tsd_dp *p)
{
	return p->is_float ? p->d : (double)p->i;
}


/* --- the aggregators (Aggregators.java) -------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int cmp_long(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Apache Commons Math's Percentile on a sorted array, with its default
 * (legacy) estimation (est 0), or its estimation types R-3 (est 3: the
 * element nearest Np, ties to even) and R-7 (est 7: 1 + (N - 1)p,
 * interpolated). */
static double percentile_est(const double *v, size_t n, double p, int est)
{
	double q = p / 100, pos;

	if (n == 0)
		return NAN;
	if (n == 1)
		return v[0];
	if (est == 3)
		pos = q <= 0.5 / (double)n ? 0 : nearbyint((double)n * q);
	else if (est == 7)
		pos = q == 0 ? 0 : q == 1 ? (double)n : 1 + (double)(n - 1) * q;
	else
		pos = p * (double)(n + 1) / 100;
	double fpos = floor(pos), dif = pos - fpos;
	size_t ipos = (size_t)fpos;
	if (pos < 1)
		return v[0];
	if (pos >= (double)n)
		return v[n - 1];
	return v[ipos - 1] + dif * (v[ipos] - v[ipos - 1]);
}

static double percentile_sorted(const double *v, size_t n, double p)
{
	return percentile_est(v, n, p, 0);
}

static double pct_of(enum tsd_agg a)
{
	switch (a) {
	case TSD_AGG_P999: case TSD_AGG_EP999R3: case TSD_AGG_EP999R7:
		return 99.9;
	case TSD_AGG_P99: case TSD_AGG_EP99R3: case TSD_AGG_EP99R7:
		return 99;
	case TSD_AGG_P95: case TSD_AGG_EP95R3: case TSD_AGG_EP95R7:
		return 95;
	case TSD_AGG_P90: case TSD_AGG_EP90R3: case TSD_AGG_EP90R7:
		return 90;
	case TSD_AGG_P75: case TSD_AGG_EP75R3: case TSD_AGG_EP75R7:
		return 75;
	default:
		return 50;
	}
}

/* The estimation type of a percentile aggregator on integers (floats
 * always take the legacy one: OpenTSDB's PercentileAgg.runDouble drops
 * it). */
static int est_of(enum tsd_agg a)
{
	return a >= TSD_AGG_EP999R3 && a <= TSD_AGG_EP50R3 ? 3 :
	       a >= TSD_AGG_EP999R7 && a <= TSD_AGG_EP50R7 ? 7 : 0;
}

int64_t tsd_agg_long(enum tsd_agg a, const int64_t *v, size_t n)
{
	uint64_t acc;

	switch (a) {
	case TSD_AGG_SUM:
	case TSD_AGG_PFSUM:
	case TSD_AGG_ZIMSUM:
		acc = 0;
		for (size_t i = 0; i < n; i++)
			acc += (uint64_t)v[i];
		return (int64_t)acc;
	case TSD_AGG_SQUARESUM:
		acc = 0;
		for (size_t i = 0; i < n; i++)
			acc += (uint64_t)v[i] * (uint64_t)v[i];
		return (int64_t)acc;
	case TSD_AGG_MIN:
	case TSD_AGG_MIMMIN: {
		int64_t m = v[0];
		for (size_t i = 1; i < n; i++)
			if (v[i] < m)
				m = v[i];
		return m;
	}
	case TSD_AGG_MAX:
	case TSD_AGG_MIMMAX: {
		int64_t m = v[0];
		for (size_t i = 1; i < n; i++)
			if (v[i] > m)
				m = v[i];
		return m;
	}
	case TSD_AGG_AVG:
		acc = 0;
		for (size_t i = 0; i < n; i++)
			acc += (uint64_t)v[i];
		return (int64_t)acc / (int64_t)n;
	case TSD_AGG_MEDIAN: {
		int64_t *c = malloc(n * sizeof *c), r;
		if (!c)
			return v[n / 2];
		memcpy(c, v, n * sizeof *c);
		qsort(c, n, sizeof *c, cmp_long);
		r = c[n / 2];
		free(c);
		return r;
	}
	case TSD_AGG_MULT:
		acc = (uint64_t)v[0];
		for (size_t i = 1; i < n; i++)
			acc *= (uint64_t)v[i];
		return (int64_t)acc;
	case TSD_AGG_DEV: {
		double old_mean = (double)v[0], new_mean, m2 = 0;
		long long k = 2;
		if (n == 1)
			return 0;
		for (size_t i = 1; i < n; i++) {
			double x = (double)v[i];
			new_mean = old_mean + (x - old_mean) / (double)k;
			m2 += (x - old_mean) * (x - new_mean);
			old_mean = new_mean;
			k++;
		}
		return tsd_java_d2l(sqrt(m2 / (double)(k - 1)));
	}
	case TSD_AGG_DIFF:
		return n == 1 ? 0 : (int64_t)((uint64_t)v[n - 1] - (uint64_t)v[0]);
	case TSD_AGG_COUNT:
		return (int64_t)n;
	case TSD_AGG_NONE:
	case TSD_AGG_FIRST:
		return v[0];
	case TSD_AGG_LAST:
		return v[n - 1];
	case TSD_AGG_P999: case TSD_AGG_P99: case TSD_AGG_P95:
	case TSD_AGG_P90: case TSD_AGG_P75: case TSD_AGG_P50:
	case TSD_AGG_EP999R3: case TSD_AGG_EP99R3: case TSD_AGG_EP95R3:
	case TSD_AGG_EP90R3: case TSD_AGG_EP75R3: case TSD_AGG_EP50R3:
	case TSD_AGG_EP999R7: case TSD_AGG_EP99R7: case TSD_AGG_EP95R7:
	case TSD_AGG_EP90R7: case TSD_AGG_EP75R7: case TSD_AGG_EP50R7: {
		double *c = malloc(n * sizeof *c), r;
		if (!c)
			return v[0];
		for (size_t i = 0; i < n; i++)
			c[i] = (double)v[i];
		qsort(c, n, sizeof *c, cmp_double);
		r = percentile_est(c, n, pct_of(a), est_of(a));
		free(c);
		return tsd_java_d2l(r);
	}
	case TSD_AGG_COUNT_ALL:
		break;
	}
	return 0;
}

double tsd_agg_double(enum tsd_agg a, const double *v, size_t n)
{
	double r;
	size_t k = 0;

	switch (a) {
	case TSD_AGG_SUM:
	case TSD_AGG_PFSUM:
	case TSD_AGG_ZIMSUM:
		r = 0;
		for (size_t i = 0; i < n; i++)
			if (!isnan(v[i]))
				r += v[i], k++;
		return k ? r : NAN;
	case TSD_AGG_SQUARESUM:
		r = 0;
		for (size_t i = 0; i < n; i++)
			if (!isnan(v[i]))
				r += v[i] * v[i], k++;
		return k ? r : NAN;
	case TSD_AGG_MIN:
	case TSD_AGG_MIMMIN:
		r = isnan(v[0]) ? INFINITY : v[0];
		for (size_t i = 1; i < n; i++)
			if (!isnan(v[i]) && v[i] < r)
				r = v[i];
		return r == INFINITY ? NAN : r;
	case TSD_AGG_MAX:
	case TSD_AGG_MIMMAX:
		r = isnan(v[0]) ? -INFINITY : v[0];
		for (size_t i = 1; i < n; i++)
			if (!isnan(v[i]) && v[i] > r)
				r = v[i];
		return r == -INFINITY ? NAN : r;
	case TSD_AGG_AVG:
		r = 0;
		for (size_t i = 0; i < n; i++)
			if (!isnan(v[i]))
				r += v[i], k++;
		return k ? r / (double)k : NAN;
	case TSD_AGG_MEDIAN:
	case TSD_AGG_P999: case TSD_AGG_P99: case TSD_AGG_P95:
	case TSD_AGG_P90: case TSD_AGG_P75: case TSD_AGG_P50:
	case TSD_AGG_EP999R3: case TSD_AGG_EP99R3: case TSD_AGG_EP95R3:
	case TSD_AGG_EP90R3: case TSD_AGG_EP75R3: case TSD_AGG_EP50R3:
	case TSD_AGG_EP999R7: case TSD_AGG_EP99R7: case TSD_AGG_EP95R7:
	case TSD_AGG_EP90R7: case TSD_AGG_EP75R7: case TSD_AGG_EP50R7: {
		double *c = malloc(n * sizeof *c);
		if (!c)
			return NAN;
		for (size_t i = 0; i < n; i++)
			if (!isnan(v[i]))
				c[k++] = v[i];
		qsort(c, k, sizeof *c, cmp_double);
		if (k == 0)
			r = NAN;
		else if (a == TSD_AGG_MEDIAN)
			r = c[k / 2];
		else
			r = percentile_sorted(c, k, pct_of(a));
		free(c);
		return r;
	}
	case TSD_AGG_MULT:
		r = v[0];
		for (size_t i = 1; i < n; i++)
			r *= v[i];
		return r;
	case TSD_AGG_DEV: {
		size_t i = 0;
		double old_mean = v[i++], new_mean, m2 = 0;
		long long cnt = 2;
		while (isnan(old_mean) && i < n)
			old_mean = v[i++];
		if (isnan(old_mean))
			return NAN;
		if (i == n)
			return 0;
		for (; i < n; i++) {
			double x = v[i];
			if (isnan(x))
				continue;
			new_mean = old_mean + (x - old_mean) / (double)cnt;
			m2 += (x - old_mean) * (x - new_mean);
			old_mean = new_mean;
			cnt++;
		}
		return cnt == 2 ? 0 : sqrt(m2 / (double)(cnt - 1));
	}
	case TSD_AGG_DIFF: {
		size_t i = 0;
		double first = v[i++];
		while (isnan(first) && i < n)
			first = v[i++];
		if (isnan(first))
			return NAN;
		if (i == n)
			return 0;
		return v[n - 1] - first;
	}
	case TSD_AGG_COUNT:
		for (size_t i = 0; i < n; i++)
			if (!isnan(v[i]))
				k++;
		return (double)k;
	case TSD_AGG_NONE:
	case TSD_AGG_FIRST:
		return v[0];
	case TSD_AGG_LAST:
		return v[n - 1];
	case TSD_AGG_COUNT_ALL:
		break;
	}
	return NAN;
}

/* --- per-series stages ------------------------------------------------- */

/* Points with ts >= from (SeekableView.seek). */
static size_t seek_index(const struct tsd_span *sp, int64_t from)
{
	size_t lo = 0, hi = sp->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sp->dp[mid].ts < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int64_t align(int64_t ts, int64_t interval)
{
	return ts - ts % interval;
}

/* The start of the interval holding ts: aligned on the epoch, or on the
 * calendar of the query's zone (DateTime.previousInterval). */
static int64_t interval_start(const struct tsd_agg_spec *s, int64_t ts)
{
	if (s->ds_calendar)
		return tsd_cal_previous(s->tz, ts < 0 ? 0 : ts, s->ds_cal_n,
					s->ds_cal_unit);
	return align(ts, s->ds_interval_ms);
}

/* The start of the interval after the one starting at start. */
static int64_t interval_next(const struct tsd_agg_spec *s, int64_t start)
{
	if (s->ds_calendar)
		return tsd_cal_add(s->tz, start, s->ds_cal_unit, s->ds_cal_n);
	return start + s->ds_interval_ms;
}

/*
 * One series as a stream (OpenTSDB's iterator chain): raw points ->
 * Downsampler (one value per interval) -> FillingDownsampler (every
 * interval of the range) -> RateSpan.  Each next() makes one point, so a
 * fill over decades costs no memory, only time while it is read.
 */
struct sstream {
	const struct tsd_agg_spec *s;
	const struct tsd_dp *p;	/* raw points from the seek on */
	size_t n, i;
	double *vals;		/* the values of one interval */
	size_t vcap;
	int64_t iv_start, iv_end;	/* current interval (INT64_MIN: none) */
	int all_done;		/* 0all: its one value was made */
	/* filling */
	int64_t fill_ts, fill_end;
	struct tsd_dp look;	/* the next downsampled point */
	int have_look, look_done;
	/* rate */
	struct tsd_dp prev;
};

/* A stream of sp, seeked to from (INT64_MIN: not seeked). */
static int stream_init(struct sstream *st, const struct tsd_agg_spec *s,
		       const struct tsd_span *sp, int64_t from)
{
	int ds = s->ds_all || s->ds_interval_ms > 0;

	memset(st, 0, sizeof *st);
	st->s = s;
	if (from == INT64_MIN) {
		/* not seeked: every point */
	} else if (ds && s->ds_calendar) {
		/* seekInterval: the first whole calendar interval */
		int64_t at = from;
		from = interval_start(s, at);
		if (from < at)
			from = interval_next(s, from);
	} else if (ds && !s->ds_all) {
		from = align(from + s->ds_interval_ms - 1, s->ds_interval_ms);
	}
	size_t b = from == INT64_MIN ? 0 : seek_index(sp, from);
	st->p = sp->dp + b;
	st->n = sp->n - b;
	st->iv_end = INT64_MIN;
	if (ds && !s->ds_all && s->ds_fill != TSD_FILL_NONE) {
		/* FillingDownsampler: every interval from the start's to
		 * the end's (at least one with calendar intervals) */
		st->fill_ts = interval_start(s, s->start_ms);
		st->fill_end = interval_start(s, s->end_ms);
		if (s->ds_calendar && st->fill_end == st->fill_ts)
			st->fill_end = interval_next(s, st->fill_end);
	}
	return CF_OK;
}

static void stream_release(struct sstream *st)
{
	free(st->vals);
	st->vals = NULL;
}

static int val_push(struct sstream *st, size_t k, double v)
{
	if (k == st->vcap) {
		size_t nc = st->vcap ? 2 * st->vcap : 16;
		double *p = realloc(st->vals, nc * sizeof *p);
		if (!p)
			return CF_ENOMEM;
		st->vals = p;
		st->vcap = nc;
	}
	st->vals[k] = v;
	return CF_OK;
}

/* Downsampler: the next interval's value.  1: *out set; 0: the end. */
static int ds_next(struct sstream *st, struct tsd_dp *out)
{
	const struct tsd_agg_spec *s = st->s;
	const struct tsd_dp *p = st->p;
	size_t k = 0;
	int rc;

	if (s->ds_all) {
		if (st->all_done)
			return 0;
		st->all_done = 1;
		for (size_t i = 0; i < st->n; i++) {
			if (p[i].ts < s->query_start_ms)
				continue;
			if (p[i].ts >= s->query_end_ms)
				break;
			if ((rc = val_push(st, k++, to_double(&p[i]))))
				return rc;
		}
		if (!k)
			return 0;
		*out = (struct tsd_dp){ s->query_start_ms, 1, 0,
					tsd_agg_double(s->ds_agg, st->vals,
						       k) };
		return 1;
	}
	if (st->i >= st->n)
		return 0;
	/* ValuesInInterval: the first point's interval, then the one of
	 * each next point (calendar intervals step from the first) */
	if (st->iv_end == INT64_MIN) {
		st->iv_start = interval_start(s, p[st->i].ts);
		st->iv_end = interval_next(s, st->iv_start);
	} else if (s->ds_calendar) {
		while (p[st->i].ts >= st->iv_end) {
			st->iv_start = st->iv_end;
			st->iv_end = interval_next(s, st->iv_start);
		}
	} else {
		st->iv_start = align(p[st->i].ts, s->ds_interval_ms);
		st->iv_end = st->iv_start + s->ds_interval_ms;
	}
	while (st->i < st->n && p[st->i].ts < st->iv_end)
		if ((rc = val_push(st, k++, to_double(&p[st->i++]))))
			return rc;
	*out = (struct tsd_dp){ st->iv_start, 1, 0,
				tsd_agg_double(s->ds_agg, st->vals, k) };
	return 1;
}

/* The series before rate: raw, downsampled, or downsampled and filled. */
static int base_next(struct sstream *st, struct tsd_dp *out)
{
	const struct tsd_agg_spec *s = st->s;
	int rc;

	if (!(s->ds_all || s->ds_interval_ms > 0)) {
		if (st->i >= st->n)
			return 0;
		*out = st->p[st->i++];
		return 1;
	}
	if (s->ds_all || s->ds_fill == TSD_FILL_NONE)
		return ds_next(st, out);	/* missing intervals absent */
	if (st->fill_ts >= st->fill_end)
		return 0;
	while (!st->look_done && (!st->have_look ||
				  st->look.ts < st->fill_ts)) {
		rc = ds_next(st, &st->look);
		if (rc < 0)
			return rc;
		st->have_look = rc;
		st->look_done = !rc;
	}
	if (st->have_look && st->look.ts == st->fill_ts) {
		*out = st->look;
		st->have_look = 0;
	} else {
		*out = (struct tsd_dp){ st->fill_ts, 1, 0,
					s->ds_fill == TSD_FILL_ZERO ? 0.0
								    : NAN };
	}
	st->fill_ts = interval_next(s, st->fill_ts);
	return 1;
}

/* RateSpan: the first rate is taken against the point (0, 0), as OpenTSDB
 * does "for backward compatibility"; the aggregation step below never
 * emits it at its own timestamp but may use it as a previous rate. */
static int stream_next(struct sstream *st, struct tsd_dp *out)
{
	const struct tsd_agg_spec *s = st->s;
	struct tsd_dp nx;
	int rc;

	if (!s->rate)
		return base_next(st, out);
	for (;;) {
		if ((rc = base_next(st, &nx)) <= 0)
			return rc;
		const struct tsd_dp *prev = &st->prev, *next = &nx;
		if (next->ts == 0 && prev->ts == 0) {
			/* a first (downsampled) point at time 0, where
			 * OpenTSDB throws; reachable here as start times
			 * before 1970 read from 0: no rate */
			*out = (struct tsd_dp){ 0, 1, 0, NAN };
			st->prev = nx;
			return 1;
		}
		if (next->ts <= prev->ts)
			return CF_EINVAL;	/* IllegalStateException */
		double dt = (double)(next->ts - prev->ts) / 1000.0, diff, r;
		int ints = !prev->is_float && !next->is_float;

		if (ints)
			diff = (double)(int64_t)((uint64_t)next->i -
						 (uint64_t)prev->i);
		else
			diff = to_double(next) - to_double(prev);
		if (s->counter && diff < 0) {
			if (s->drop_resets) {
				st->prev = nx;
				continue;
			}
			if (ints)
				diff = (double)(int64_t)((uint64_t)s->counter_max -
							 (uint64_t)prev->i +
							 (uint64_t)next->i);
			else
				diff = (double)s->counter_max - to_double(prev) +
				       to_double(next);
			r = diff / dt;
			if (s->reset_value > 0 && r > (double)s->reset_value)
				r = 0.0;
		} else {
			r = diff / dt;
		}
		*out = (struct tsd_dp){ next->ts, 1, 0, r };
		st->prev = nx;
		return 1;
	}
}

struct tsd_series_iter {
	struct sstream st;
};

int tsd_series_iter_new(const struct tsd_agg_spec *s,
			const struct tsd_span *sp, int64_t seek_ms,
			struct tsd_series_iter **out)
{
	int rc;

	*out = calloc(1, sizeof **out);
	if (!*out)
		return CF_ENOMEM;
	if ((rc = stream_init(&(*out)->st, s, sp, seek_ms))) {
		tsd_series_iter_free(*out);
		*out = NULL;
	}
	return rc;
}

int tsd_series_iter_next(struct tsd_series_iter *it, struct tsd_dp *out)
{
	return stream_next(&it->st, out);
}

void tsd_series_iter_free(struct tsd_series_iter *it)
{
	if (!it)
		return;
	stream_release(&it->st);
	free(it);
}

/* --- merging the series (AggregationIterator) -------------------------- */

struct slot {
	int64_t ts;		/* 0: empty; TSD_END: series finished */
	int is_float;
	int64_t i;
	double d;
};

#define TSD_END INT64_MAX

struct merge {
	size_t size;
	struct sstream *src;	/* one stream per series */
	int err;		/* a stream's error (CF_ENOMEM) */
	struct slot *cur, *next;
	enum tsd_interp interp;
	int rate;
	int64_t end;
	size_t current;
};

static void put_point(struct slot *sl, const struct tsd_dp *p)
{
	sl->ts = p->ts;
	sl->is_float = p->is_float;
	sl->i = p->i;
	sl->d = p->d;
}

static void end_reached(struct merge *m, size_t i)
{
	m->next[i].ts = TSD_END;
	m->next[i].is_float = 0;
}

static void move_to_next(struct merge *m, size_t i)
{
	struct tsd_dp p;
	int rc;

	m->cur[i] = m->next[i];
	rc = stream_next(&m->src[i], &p);
	if (rc > 0) {
		put_point(&m->next[i], &p);
	} else {
		if (rc < 0 && !m->err)
			m->err = rc;
		end_reached(m, i);
	}
}

static int merge_has_next(const struct merge *m)
{
	for (size_t i = 0; i < m->size; i++)
		if (m->next[i].ts <= m->end)
			return 1;
	return 0;
}

static void merge_next(struct merge *m)
{
	int64_t min_ts = INT64_MAX;
	size_t cur = (size_t)-1;
	int multiple = 0;

	/* finished series leave the aggregation (OpenTSDB starts this loop
	 * at the previous current index; series below it cannot have
	 * finished since) */
	for (size_t i = m->current; i < m->size; i++)
		if (m->next[i].ts == TSD_END)
			m->cur[i].ts = 0;
	for (size_t i = 0; i < m->size; i++) {
		int64_t t = m->next[i].ts;
		if (t > m->end)
			continue;
		if (t < min_ts) {
			min_ts = t;
			cur = i;
			multiple = 0;
		} else if (t == min_ts) {
			multiple = 1;
		}
	}
	m->current = cur;
	move_to_next(m, cur);
	if (multiple)
		for (size_t i = cur + 1; i < m->size; i++)
			if (m->next[i].ts == min_ts)
				move_to_next(m, i);
}

static int merge_is_integer(const struct merge *m)
{
	if (m->rate)
		return 0;
	for (size_t i = 0; i < m->size; i++) {
		if (m->cur[i].ts != 0 && m->cur[i].is_float)
			return 0;
		if (m->next[i].ts != TSD_END && m->next[i].is_float)
			return 0;
	}
	return 1;
}

static int64_t value_long(const struct merge *m, size_t i)
{
	const struct slot *c = &m->cur[i], *nx = &m->next[i];
	int64_t x = m->cur[m->current].ts;

	if (i == m->current || x == c->ts)
		return c->i;
	if (x == nx->ts)
		return nx->i;
	switch (m->interp) {
	case TSD_INTERP_LERP: {
		/* Java's long arithmetic wraps; so does this */
		uint64_t dy = (uint64_t)nx->i - (uint64_t)c->i;
		int64_t num = (int64_t)((uint64_t)(x - c->ts) * dy);
		return (int64_t)((uint64_t)c->i +
				 (uint64_t)(num / (nx->ts - c->ts)));
	}
	case TSD_INTERP_ZIM:
		return 0;
	case TSD_INTERP_MAX:
		return INT64_MAX;
	case TSD_INTERP_MIN:
		return INT64_MIN;
	case TSD_INTERP_PREV:
		return c->i;
	}
	return 0;
}

static double slot_double(const struct slot *s)
{
	return s->is_float ? s->d : (double)s->i;
}

static double value_double(const struct merge *m, size_t i)
{
	const struct slot *c = &m->cur[i], *nx = &m->next[i];
	int64_t x = m->cur[m->current].ts;
	double y0 = slot_double(c), y1;

	if (i == m->current || m->rate || x == c->ts)
		return y0;
	y1 = slot_double(nx);
	if (x == nx->ts)
		return y1;
	switch (m->interp) {
	case TSD_INTERP_LERP:
		return y0 + (double)(x - c->ts) * (y1 - y0) /
				    (double)(nx->ts - c->ts);
	case TSD_INTERP_ZIM:
		return 0;
	case TSD_INTERP_MAX:
		return DBL_MAX;
	case TSD_INTERP_MIN:
		return -DBL_MAX;
	case TSD_INTERP_PREV:
		return y0;
	}
	return y0;
}

/* The aggregation of a group as an iterator (tsd_agg_iter_*). */
struct tsd_agg_iter {
	const struct tsd_agg_spec *s;
	struct merge m;
	int64_t *lv;
	double *dv;
	size_t n;
};

int tsd_agg_iter_new(const struct tsd_agg_spec *s, const struct tsd_span *spans,
		     size_t n, struct tsd_agg_iter **out)
{
	struct tsd_agg_iter *it = calloc(1, sizeof *it);
	size_t sz = n ? n : 1;

	*out = NULL;
	if (!it)
		return CF_ENOMEM;
	it->s = s;
	it->n = n;
	it->m.size = n;
	it->m.interp = tsd_agg_interp(s->agg);
	it->m.rate = s->rate;
	it->m.end = s->end_ms;
	it->m.src = calloc(sz, sizeof *it->m.src);
	it->m.cur = calloc(sz, sizeof *it->m.cur);
	it->m.next = calloc(sz, sizeof *it->m.next);
	it->lv = malloc(sz * sizeof *it->lv);
	it->dv = malloc(sz * sizeof *it->dv);
	if (!it->m.src || !it->m.cur || !it->m.next || !it->lv || !it->dv) {
		tsd_agg_iter_free(it);
		return CF_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct tsd_dp p;
		int rc;
		stream_init(&it->m.src[i], s, &spans[i], s->start_ms);
		rc = stream_next(&it->m.src[i], &p);
		if (rc < 0) {
			tsd_agg_iter_free(it);
			return rc;
		}
		if (rc == 0) {
			end_reached(&it->m, i);
			continue;
		}
		put_point(&it->m.next[i], &p);
		/* with rate, the first rate (against time zero) becomes
		 * the "previous rate" of this series */
		if (it->m.rate)
			move_to_next(&it->m, i);
	}
	if (it->m.err) {
		int rc = it->m.err;
		tsd_agg_iter_free(it);
		return rc;
	}
	*out = it;
	return CF_OK;
}

int tsd_agg_iter_next(struct tsd_agg_iter *it, struct tsd_dp *out)
{
	const struct tsd_agg_spec *s = it->s;
	struct merge *m = &it->m;

	while (merge_has_next(m)) {
		size_t k = 0;
		merge_next(m);
		if (m->err)
			return m->err;
		int64_t ts = m->cur[m->current].ts;
		/* only the query's own range is returned */
		int in = ts >= s->query_start_ms && ts <= s->query_end_ms;
		if (merge_is_integer(m)) {
			for (size_t i = 0; in && i < it->n; i++)
				if (m->cur[i].ts != 0)
					it->lv[k++] = value_long(m, i);
			if (!in)
				continue;
			*out = (struct tsd_dp){ ts, 0,
						tsd_agg_long(s->agg, it->lv, k),
						0 };
			return 1;
		}
		for (size_t i = 0; in && i < it->n; i++)
			if (m->cur[i].ts != 0)
				it->dv[k++] = value_double(m, i);
		if (!in)
			continue;
		double d = tsd_agg_double(s->agg, it->dv, k);
		if (isinf(d))
			return CF_ERANGE;
		*out = (struct tsd_dp){ ts, 1, 0, d };
		return 1;
	}
	return 0;
}

void tsd_agg_iter_free(struct tsd_agg_iter *it)
{
	if (!it)
		return;
	for (size_t i = 0; it->m.src && i < it->n; i++)
		stream_release(&it->m.src[i]);
	free(it->m.src);
	free(it->m.cur);
	free(it->m.next);
	free(it->lv);
	free(it->dv);
	free(it);
}

/* --- the whole pipeline ------------------------------------------------ */

void tsd_agg_spec_init(struct tsd_agg_spec *s, const struct tsd_query *q,
		       const struct tsd_subquery *sq)
{
	int64_t ss, se;

	memset(s, 0, sizeof *s);
	s->agg = sq->agg;
	tsd_scan_bounds(sq, q->start_ms, q->end_ms, &ss, &se);
	s->start_ms = ss * 1000;
	s->end_ms = se * 1000;
	s->query_start_ms = q->start_ms;
	s->query_end_ms = q->end_ms;
	s->ds_interval_ms = sq->ds_interval_ms;
	s->ds_all = sq->ds_all;
	s->ds_calendar = sq->ds_calendar;
	s->ds_cal_n = sq->ds_cal_n;
	s->ds_cal_unit = sq->ds_cal_unit;
	s->tz = q->tz;
	s->ds_agg = sq->ds_agg;
	s->ds_fill = sq->ds_fill;
	s->rate = sq->rate;
	s->counter = sq->counter;
	s->drop_resets = sq->drop_resets;
	s->counter_max = sq->counter_max;
	s->reset_value = sq->reset_value;
}

void tsd_scan_bounds(const struct tsd_subquery *sq, int64_t start_ms,
		     int64_t end_ms, int64_t *scan_start_s, int64_t *scan_end_s)
{
	int64_t start = start_ms / 1000, end = end_ms / 1000;
	int64_t iv = sq->ds_all ? 0 : sq->ds_interval_ms;

	if (iv > 0)
		start -= ((1000 * start) % iv) / 1000;
	start -= start % TSD_MAX_TIMESPAN;
	*scan_start_s = start > 0 ? start : 0;
	/* OpenTSDB's end bound is inclusive, the scan's exclusive; its
	 * query times are milliseconds, which always takes this step */
	end++;
	if (iv > 0) {
		int64_t aligned = end + (iv - (1000 * end) % iv) / 1000;
		int64_t off = aligned % TSD_MAX_TIMESPAN;
		*scan_end_s = off == 0 ? aligned
				       : aligned + (TSD_MAX_TIMESPAN - off);
	} else {
		*scan_end_s = end + (TSD_MAX_TIMESPAN - end % TSD_MAX_TIMESPAN);
	}
}

int tsd_aggregate(const struct tsd_agg_spec *s, const struct tsd_span *spans,
		  size_t n, struct tsd_dp **out, size_t *nout)
{
	struct series res = { NULL, 0, 0 };
	struct tsd_agg_iter *it;
	struct tsd_dp p;
	int rc;

	*out = NULL;
	*nout = 0;
	if ((rc = tsd_agg_iter_new(s, spans, n, &it)))
		return rc;
	while ((rc = tsd_agg_iter_next(it, &p)) > 0)
		if ((rc = push(&res, p.ts, p.is_float, p.i, p.d)))
			break;
	tsd_agg_iter_free(it);
	if (rc < 0) {
		free(res.dp);
		return rc;
	}
	*out = res.dp;
	*nout = res.n;
	return CF_OK;
}
