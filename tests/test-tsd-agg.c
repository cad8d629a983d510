/*
 * test-tsd-agg.c: the cases of OpenTSDB's TestRateSpan, TestDownsampler,
 * TestFillingDownsampler and TestDownsamplingSpecification on tsd/agg.h's
 * per-series chain (tsd_series_iter_*) and tsd/query.h's parser, with
 * OpenTSDB's inputs and expected outputs.  Cases that test Java only
 * (remove(), toString(), constructors cellfs has no counterpart of) and
 * rollups (cellfs has none) are named where they would be, not run.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/tap.h"
#include "tsd/agg.h"
#include "tsd/number.h"
#include "tsd/query.h"
#include "tsd/tz.h"
#include "util/err.h"

#define NO_SEEK INT64_MIN
#define NOW INT64_C(1357000000000)	/* "now" of the parsed queries */

static struct tsd_dp L(int64_t ts, int64_t v)
{
	struct tsd_dp p = { ts, 0, v, 0 };
	return p;
}

static struct tsd_dp D(int64_t ts, double v)
{
	struct tsd_dp p = { ts, 1, 0, v };
	return p;
}

/* An expected point: a double unless is_long. */
struct want {
	int64_t ts;
	double v;
	int is_long;
};

/* "ts:value ..." of points, for diagnostics. */
static void render(char *out, size_t cap, const struct tsd_dp *p, size_t n)
{
	size_t o = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n && o + 80 < cap; i++) {
		char v[TSD_DOUBLE_MAX];
		if (p[i].is_float)
			tsd_format_double(v, p[i].d);
		else
			snprintf(v, sizeof v, "%lld", (long long)p[i].i);
		o += (size_t)snprintf(out + o, cap - o, "%s%lld:%s",
				      i ? " " : "", (long long)p[i].ts, v);
	}
}

/*
 * Runs dp[0..n) through the series chain of s, seeked to seek, and
 * checks the points against w[0..nw) (values within tol, NaN matching
 * NaN) and the last return code against want_rc (0: the end reached).
 */
static void series(const char *what, const struct tsd_agg_spec *s,
		   const struct tsd_dp *dp, size_t n, int64_t seek,
		   const struct want *w, size_t nw, double tol, int want_rc)
{
	struct tsd_span sp = { dp, n };
	struct tsd_series_iter *it;
	struct tsd_dp got[64];
	size_t ng = 0;
	int rc, good = 1;

	if ((rc = tsd_series_iter_new(s, &sp, seek, &it))) {
		ok(0, "%s: iter_new %d", what, rc);
		return;
	}
	while (ng < 64 && (rc = tsd_series_iter_next(it, &got[ng])) > 0)
		ng++;
	tsd_series_iter_free(it);
	if (rc != want_rc || ng != nw)
		good = 0;
	for (size_t i = 0; good && i < nw; i++) {
		const struct tsd_dp *g = &got[i];
		if (g->ts != w[i].ts || g->is_float == w[i].is_long)
			good = 0;
		else if (w[i].is_long)
			good = g->i == (int64_t)w[i].v;
		else if (isnan(w[i].v))
			good = isnan(g->d);
		else
			good = !isnan(g->d) && fabs(g->d - w[i].v) <= tol;
	}
	if (!ok(good, "%s", what)) {
		char buf[2048];
		render(buf, sizeof buf, got, ng);
		diag("  rc %d (want %d), got %zu points: %s", rc, want_rc, ng,
		     buf);
		for (size_t i = 0; i < nw; i++)
			diag("  want %lld:%.17g", (long long)w[i].ts, w[i].v);
	}
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void spec_init(struct tsd_agg_spec *s)
{
	memset(s, 0, sizeof *s);
	s->agg = TSD_AGG_SUM;
	s->end_ms = s->query_end_ms = INT64_MAX - 1;
	s->counter_max = INT64_MAX;
}

/* --- TestRateSpan -------------------------------------------------------- */

static void test_rate_span(void)
{
	const struct tsd_dp data[] = {
		D(1356998400000LL, 40.0),
		L(1356998400000LL + 2000000, 50),
		L(1357002000000LL, 40),
		D(1357002000000LL + 5000, 50.0),
		L(1357005600000LL, 40),
		D(1357005600000LL + 2000000, 50.0),
	};
	const struct want rates[] = {
		{ 1356998400000LL, 40.0 / 1356998400, 0 },
		{ 1356998400000LL + 2000000, 10.0 / 2000.0, 0 },
		{ 1357002000000LL, -10.0 / (1357002000LL - 1356998400LL - 2000),
		  0 },
		{ 1357002000000LL + 5000, 10.0 / 5.0, 0 },
		{ 1357005600000LL, -10.0 / (1357005600LL - 1357002005LL), 0 },
		{ 1357005600000LL + 2000000, 10.0 / 2000.0, 0 },
	};
	struct tsd_agg_spec s;

	spec_init(&s);
	s.rate = 1;
	/* testRateSpan: the first rate is against the time zero */
	series("TestRateSpan.testRateSpan", &s, data, 2, NO_SEEK, rates, 2,
	       0, 0);
	series("TestRateSpan.testNext_iterateAll", &s, data, N(data),
	       NO_SEEK, rates, N(rates), 0.0000001, 0);
	/* testRemove: Java's Iterator.remove(), no counterpart */
	{
		const struct tsd_dp one[] = { L(1356998400000LL, 40) };
		const struct want w[] = { { 1356998400000LL,
					    40.0 / 1356998400, 0 } };
		series("TestRateSpan.testNext_noMoreData: one rate, then the "
		       "end", &s, one, 1, NO_SEEK, w, 1, 0, 0);
	}
	{
		/* after a seek the first rate is again against time zero */
		const struct want w[] = {
			{ 1357002000000LL, 40.0 / 1357002000, 0 },
			rates[3], rates[4], rates[5],
		};
		series("TestRateSpan.testSeek", &s, data, N(data),
		       1357002000000LL, w, N(w), 0.0000001, 0);
	}
	{
		const struct tsd_dp dec[] = { L(1357002000000LL + 5000, 50),
					      L(1357002000000LL + 4000, 50) };
		const struct want w[] = { { 1357002005000LL,
					    50.0 / 1357002005, 0 } };
		series("TestRateSpan.testNext_decreasingTimestamps: refused "
		       "(IllegalStateException)", &s, dec, 2, NO_SEEK, w, 1,
		       0.0000001, CF_EINVAL);
	}
	{
		const struct tsd_dp dup[] = {
			L(1356998400000LL, 40),
			L(1356998400000LL + 2000000, 50),
			L(1356998400000LL + 2000000, 50),
		};
		series("TestRateSpan.testMoveToNextRate_duplicatedTimestamps: "
		       "refused (IllegalStateException)", &s, dup, 3, NO_SEEK,
		       rates, 2, 0.0000001, CF_EINVAL);
	}
	{
		/* (cellfs) OpenTSDB throws here too; cellfs reads ranges
		 * from before 1970 from 0, where a downsampled series may
		 * start: no rate */
		const struct tsd_dp zero[] = { L(0, 5), L(1000, 7) };
		const struct want w[] = { { 0, NAN, 0 }, { 1000, 2, 0 } };
		series("(cellfs) a first rate at time 0 is NaN", &s, zero, 2,
		       NO_SEEK, w, 2, 0, 0);
	}
	{
		/* the difference of two longs taken as a long: exact */
		const struct tsd_dp big[] = {
			L(1356998400000LL, INT64_MAX - 100),
			L(1356998500000LL, INT64_MAX - 20),
		};
		const struct want w[] = {
			{ 1356998400000LL, (double)(INT64_MAX - 100) /
					   1356998400.0, 0 },
			{ 1356998500000LL, 0.8, 0 },
		};
		series("TestRateSpan.testCalculateDelta_bigLongValues", &s, big,
		       2, NO_SEEK, w, 2, 0, 0);
	}
	{
		const struct want w[] = {
			{ 1356998400000LL, 40.0 / 1356998400, 0 },
			{ 1356998400000LL + 2000000, 10.0 / 2000.0, 0 },
			{ 1357002000000LL, (40.0 + 20) / 1600.0, 0 },
			{ 1357002000000LL + 5000, 10.0 / 5.0, 0 },
			{ 1357005600000LL, (40.0 + 20) / 3595, 0 },
			{ 1357005600000LL + 2000000, 10.0 / 2000.0, 0 },
		};
		s.counter = 1;
		s.counter_max = 70;
		series("TestRateSpan.testNext_counter", &s, data, N(data),
		       NO_SEEK, w, N(w), 0.0000001, 0);
	}
	{
		const struct tsd_dp wrap[] = {
			L(1356998430000LL, INT64_MAX - 55),
			L(1356998460000LL, INT64_MAX - 25),
			L(1356998490000LL, 5),
		};
		const struct want w[] = {
			{ 1356998430000LL, (double)(INT64_MAX - 55) /
					   1356998430.0, 0 },
			{ 1356998460000LL, 1, 0 },
			{ 1356998490000LL, 1, 0 },
		};
		s.counter = 1;
		s.counter_max = INT64_MAX;
		series("TestRateSpan.testNext_counterLongMax: a counter that "
		       "wraps at 2^63-1", &s, wrap, 3, NO_SEEK, w, 3,
		       0.0000001, 0);
	}
	const struct tsd_dp rs[] = {
		L(1356998400000LL, 40), L(1356998401000LL, 50),
		L(1356998402000LL, 40), L(1356998403000LL, 50),
	};
	{
		/* not 60: the change is too big for the reset value */
		const struct want w[] = {
			{ 1356998400000LL, 40 / 1356998400.0, 0 },
			{ 1356998401000LL, 10, 0 },
			{ 1356998402000LL, 0, 0 },
		};
		s.counter = 1;
		s.counter_max = 70;
		s.reset_value = 1;
		series("TestRateSpan.testNext_counterWithResetValue", &s, rs,
		       3, NO_SEEK, w, 3, 0.0000001, 0);
	}
	{
		const struct want w[] = {
			{ 1356998400000LL, 40 / 1356998400.0, 0 },
			{ 1356998401000LL, 10, 0 },
			{ 1356998403000LL, 10, 0 },	/* the drop dropped */
		};
		s.drop_resets = 1;
		series("TestRateSpan.testNext_counterDroResets", &s, rs, 4,
		       NO_SEEK, w, 3, 0.0000001, 0);
		series("TestRateSpan.testNext_counterDroResetsNothingAfter",
		       &s, rs, 3, NO_SEEK, w, 2, 0.0000001, 0);
	}
}

/* QueryRpc.parseRateOptions: rate[{counter[,max[,reset]]}] */
static void test_rate_options(void)
{
	static const struct {
		const char *part;
		int rate_opts, counter, drop;
		int64_t max, reset;
	} good[] = {
		{ "rate", 0, 0, 0, INT64_MAX, 0 },
		{ "RATE", 0, 0, 0, INT64_MAX, 0 },
		{ "rates", 0, 0, 0, INT64_MAX, 0 },	/* no '{': no options */
		{ "rate{}", 1, 0, 0, INT64_MAX, 0 },
		{ "rate{counter}", 1, 1, 0, INT64_MAX, 0 },
		{ "rate{counter,65535}", 1, 1, 0, 65535, 0 },
		{ "rate{counter,,1000}", 1, 1, 0, INT64_MAX, 1000 },
		{ "rate{counter,-5,+7}", 1, 1, 0, -5, 7 },
		{ "rate{dropcounter,100,5}", 1, 1, 1, 100, 5 },
		{ "rate{mycounter}", 1, 1, 0, INT64_MAX, 0 },	/* endsWith */
		{ "rate{COUNTER}", 1, 0, 0, INT64_MAX, 0 },
		/* the last character is dropped, brace or not */
		{ "rate{counter", 1, 0, 0, INT64_MAX, 0 },
		{ "rate{counter,12}", 1, 1, 0, 12, 0 },
	};
	static const struct {
		const char *part, *why;
	} bad[] = {
		{ "rate{", "Invalid rate options specification: rate{" },
		{ "rate{counter,1,2,3}", "Incorrect number of values in rate "
		  "options specification, must be counter[,counter max value,"
		  "reset value], recieved: 4 parts" },
		{ "rate{,,,,}", "Incorrect number of values in rate options "
		  "specification, must be counter[,counter max value,reset "
		  "value], recieved: 5 parts" },
		{ "rate{counter,x}", "Max value of counter was not a number, "
		  "received 'x'" },
		{ "rate{counter,99999999999999999999}", "Max value of counter "
		  "was not a number, received '99999999999999999999'" },
		{ "rate{counter,1,y}", "Reset value of counter was not a "
		  "number, received 'y'" },
		{ "rate{counter,x,y}", "Max value of counter was not a number, "
		  "received 'x'" },
	};
	char qs[200], why[200];
	struct tsd_query q;

	for (size_t i = 0; i < N(good); i++) {
		snprintf(qs, sizeof qs, "start=1356998400&m=sum:%s:m",
			 good[i].part);
		int rc = tsd_query_parse(qs, strlen(qs), NOW, &q, why,
					 sizeof why);
		const struct tsd_subquery *sq = rc ? NULL : &q.subs[0];
		ok(sq && sq->rate && sq->rate_opts == good[i].rate_opts &&
		   sq->counter == good[i].counter &&
		   sq->drop_resets == good[i].drop &&
		   sq->counter_max == good[i].max &&
		   sq->reset_value == good[i].reset, "parseRateOptions %s %s",
		   good[i].part, rc ? why : "");
		if (!rc)
			tsd_query_release(&q);
	}
	for (size_t i = 0; i < N(bad); i++) {
		snprintf(qs, sizeof qs, "start=1356998400&m=sum:%s:m",
			 bad[i].part);
		int rc = tsd_query_parse(qs, strlen(qs), NOW, &q, why,
					 sizeof why);
		if (!rc)
			tsd_query_release(&q);
		ok(rc == CF_EINVAL && !strcmp(why, bad[i].why),
		   "parseRateOptions refuses %s: %s", bad[i].part,
		   rc ? why : "accepted");
	}
}

/* --- TestDownsamplingSpecification -------------------------------------- */

/* Parses "start=..&m=sum:SPEC:m" (with extra query parameters). */
static int parse_ds(const char *spec, const char *extra, struct tsd_query *q,
		    char *why, size_t whylen)
{
	char qs[300];

	snprintf(qs, sizeof qs, "start=1356998400&m=sum:%s:m%s", spec, extra);
	return tsd_query_parse(qs, strlen(qs), NOW, q, why, whylen);
}

static void test_ds_spec(void)
{
	static const struct {
		const char *spec;
		int64_t interval;
		enum tsd_agg agg;
		enum tsd_fill fill;
		int all, cal, cal_n;
		enum tsd_cal_unit unit;
	} good[] = {
		/* testStringCtor */
		{ "15m-avg-nan", 900000, TSD_AGG_AVG, TSD_FILL_NAN, 0, 0, 0, 0 },
		/* testSetCalendar: a 'c' sets useCalendar */
		{ "15m-avg", 900000, TSD_AGG_AVG, TSD_FILL_NONE, 0, 0, 0, 0 },
		{ "15mc-avg", 900000, TSD_AGG_AVG, TSD_FILL_NONE, 0, 1, 15,
		  TSD_CAL_MINUTE },
		{ "1dc-sum", 86400000, TSD_AGG_SUM, TSD_FILL_NONE, 0, 1, 1,
		  TSD_CAL_DAY },
		{ "100msc-sum-zero", 100, TSD_AGG_SUM, TSD_FILL_ZERO, 0, 1, 100,
		  TSD_CAL_MS },
		{ "1n-max-null", 2592000000LL, TSD_AGG_MAX, TSD_FILL_NULL, 0, 0,
		  0, 0 },	/* a month is 30 days, off the calendar */
		{ "1nc-max", 2592000000LL, TSD_AGG_MAX, TSD_FILL_NONE, 0, 1, 1,
		  TSD_CAL_MONTH },
		{ "1y-min", 31536000000LL, TSD_AGG_MIN, TSD_FILL_NONE, 0, 0, 0,
		  0 },
		{ "0all-sum", 0, TSD_AGG_SUM, TSD_FILL_NONE, 1, 0, 0, 0 },
		{ "1all-count-nan", 0, TSD_AGG_COUNT, TSD_FILL_NAN, 1, 0, 0, 0 },
		{ "1m-avg-NaN", 60000, TSD_AGG_AVG, TSD_FILL_NAN, 0, 0, 0, 0 },
		{ "1m-avg-ZERO", 60000, TSD_AGG_AVG, TSD_FILL_ZERO, 0, 0, 0, 0 },
		{ "1m-avg-none", 60000, TSD_AGG_AVG, TSD_FILL_NONE, 0, 0, 0, 0 },
		/* Java's split drops the empty parts at the end */
		{ "1m-avg-", 60000, TSD_AGG_AVG, TSD_FILL_NONE, 0, 0, 0, 0 },
		{ "1m-avg-nan--", 60000, TSD_AGG_AVG, TSD_FILL_NAN, 0, 0, 0, 0 },
		{ "1H-p99", 3600000, TSD_AGG_P99, TSD_FILL_NONE, 0, 0, 0, 0 },
	};
	static const struct {
		const char *test, *spec, *why;
	} bad[] = {
		{ "testBadInterval", "blah-avg-lerp",
		  "Invalid duration (number): blah" },
		{ "testBadFunction", "1m-hurp-lerp",
		  "No such downsampling function: hurp" },
		{ "testBadFillPolicy", "10m-avg-max",
		  "Unrecognized fill policy: max" },
		{ "testNoneAgg", "1m-none-lerp",
		  "cannot use the NONE aggregator for downsampling" },
		{ "testStringCtorZeroInterval", "0m-avg-lerp",
		  "Zero or negative duration: 0m" },
		{ "testStringCtorNegativeInterval", "-60m-avg-lerp",
		  "Invalid downsampling specifier '-60m-avg-lerp': must "
		  "consist of interval, function, and optional fill policy" },
		{ "testStringCtorUnknownUnits", "1j-avg-lerp",
		  "Invalid duration (suffix): 1j" },
		{ "testStringCtorMissingUnits", "1-avg-lerp",
		  "Invalid duration, must have an integer and unit: 1" },
		{ "testStringCtorMissingFunction", "1m",
		  "Invalid downsampling specifier '1m': must provide at least "
		  "interval and function" },
		{ "(cellfs) a function's name has its case", "1m-AVG",
		  "No such downsampling function: AVG" },
		{ "(cellfs) \"all\" has its case", "0ALL-sum",
		  "Zero or negative duration: 0ALL" },
		{ "(cellfs) an empty function", "1m--avg",
		  "No such downsampling function: " },
		{ "(cellfs) a calendar interval without a count", "c-avg",
		  "Cannot parse null or empty duration" },
		{ "(cellfs) a calendar interval without a unit", "1c-avg",
		  "Invalid duration, must have an integer and unit: 1" },
		{ "(cellfs) a calendar count past an int", "99999999999dc-sum",
		  "For input string: \"99999999999\"" },
		{ "(cellfs) a bad calendar unit", "1qc-sum",
		  "Invalid duration (suffix): 1q" },
		{ "(cellfs) no interval", "-avg", "String index out of range: "
		  "-1" },
		{ "(cellfs) four parts", "1m-avg-nan-x", "Invalid downsampling "
		  "specifier '1m-avg-nan-x': must consist of interval, "
		  "function, and optional fill policy" },
		{ "(cellfs) scalar has no value here", "1m-avg-scalar",
		  "unhandled fill policy: scalar" },
		{ "(cellfs) a duration with letters between", "1xm-avg",
		  "Invalid duration (suffix): 1xm" },
	};
	struct tsd_query q;
	char why[200];

	for (size_t i = 0; i < N(good); i++) {
		int rc = parse_ds(good[i].spec, "", &q, why, sizeof why);
		const struct tsd_subquery *sq = rc ? NULL : &q.subs[0];
		ok(sq && sq->ds_interval_ms == good[i].interval &&
		   sq->ds_agg == good[i].agg && sq->ds_fill == good[i].fill &&
		   sq->ds_all == good[i].all &&
		   sq->ds_calendar == good[i].cal &&
		   (!good[i].cal || (sq->ds_cal_n == good[i].cal_n &&
				     sq->ds_cal_unit == good[i].unit)) &&
		   !strcmp(sq->ds_text, good[i].spec),
		   "DownsamplingSpecification(\"%s\") %s", good[i].spec,
		   rc ? why : "");
		if (!rc)
			tsd_query_release(&q);
	}
	/* setTimezone: UTC unless timezone= */
	ok(parse_ds("15m-avg", "", &q, why, sizeof why) == 0 && !q.tz,
	   "TestDownsamplingSpecification.setTimezone: UTC by default");
	tsd_query_release(&q);
	ok(parse_ds("15m-avg", "&timezone=America/Denver", &q, why,
		    sizeof why) == 0 && q.tz,
	   "TestDownsamplingSpecification.setTimezone: America/Denver");
	tsd_query_release(&q);
	for (size_t i = 0; i < N(bad); i++) {
		int rc = parse_ds(bad[i].spec, "", &q, why, sizeof why);
		if (!rc)
			tsd_query_release(&q);
		ok(rc == CF_EINVAL && !strcmp(why, bad[i].why), "%s: %s: %s",
		   bad[i].test, bad[i].spec, rc ? why : "accepted");
	}
	/* QueryRpc's other words with a '-' stay unsupported parts */
	ok(parse_ds("show-histogram-buckets", "", &q, why, sizeof why) ==
	   CF_EINVAL && !strcmp(why, "unsupported query part: "
				"show-histogram-buckets"),
	   "show-histogram-buckets is no downsampler: %s", why);
	/* not ported: testCtor, testCtorNegativeInterval,
	 * testCtorZeroInterval, testCtorNullFunction (the Java constructor
	 * of numbers), testStringCtorNull, setTimezoneNull (Java's null),
	 * testToString; testStringCtorEmpty: an empty "downsample" is none
	 * (t1186) */
}

/* --- TestFillingDownsampler ---------------------------------------------- */

/*
 * s as OpenTSDB's FillingDownsampler(source, start, end, SPEC, qstart,
 * qend) (or Downsampler when SPEC has no fill) in zone tzname (NULL:
 * UTC); *tz to free.  0, or -1 when SPEC or the zone is refused.
 */
static int ds_spec(struct tsd_agg_spec *s, const char *spec,
		   const char *tzname, int64_t start, int64_t end,
		   int64_t qstart, int64_t qend, struct tsd_tz **tz)
{
	struct tsd_query q;
	char why[200];

	*tz = NULL;
	if (parse_ds(spec, "", &q, why, sizeof why)) {
		diag("%s: %s", spec, why);
		return -1;
	}
	if (tzname && tsd_tz_load(tzname, tz)) {
		tsd_query_release(&q);
		return -1;
	}
	const struct tsd_subquery *sq = &q.subs[0];
	spec_init(s);
	s->start_ms = start;
	s->end_ms = end;
	s->query_start_ms = qstart;
	s->query_end_ms = qend;
	s->ds_interval_ms = sq->ds_interval_ms;
	s->ds_all = sq->ds_all;
	s->ds_calendar = sq->ds_calendar;
	s->ds_cal_n = sq->ds_cal_n;
	s->ds_cal_unit = sq->ds_cal_unit;
	s->ds_agg = sq->ds_agg;
	s->ds_fill = sq->ds_fill;
	s->tz = *tz;
	tsd_query_release(&q);
	return 0;
}

/* One downsampler case: dp through SPEC as ds_spec() builds it, no
 * seek, against w. */
static void ds_case(const char *what, const char *spec, const char *tzname,
		    int64_t start, int64_t end, int64_t qstart, int64_t qend,
		    const struct tsd_dp *dp, size_t n, const struct want *w,
		    size_t nw, double tol)
{
	struct tsd_agg_spec s;
	struct tsd_tz *tz;

	if (ds_spec(&s, spec, tzname, start, end, qstart, qend, &tz)) {
		ok(0, "%s: %s refused", what, spec);
		return;
	}
	series(what, &s, dp, n, NO_SEEK, w, nw, tol, 0);
	tsd_tz_free(tz);
}

/* The same, seeked to seek first (query bounds open). */
static void ds_case_seek(const char *what, const char *spec, int64_t seek,
			 const struct tsd_dp *dp, size_t n,
			 const struct want *w, size_t nw, double tol)
{
	struct tsd_agg_spec s;
	struct tsd_tz *tz;

	if (ds_spec(&s, spec, NULL, 0, INT64_MAX, 0, INT64_MAX, &tz)) {
		ok(0, "%s: %s refused", what, spec);
		return;
	}
	series(what, &s, dp, n, seek, w, nw, tol, 0);
	tsd_tz_free(tz);
}

#define BASE INT64_C(1356998400000)
#define DST INT64_C(1450137600000)	/* Tue, 15 Dec 2015 00:00 UTC */
#define TV "Pacific/Funafuti"		/* +12, no DST */
#define FJ "Pacific/Fiji"		/* +12, +13 in summer */
#define AF "Asia/Kabul"			/* +4:30 */
#define DAY INT64_C(86400000)
#define WEEK (7 * DAY)
#define HOUR INT64_C(3600000)

static void test_filling(void)
{
	const double nan = NAN;
	{
		/* data with gaps: before, during and after */
		const int64_t b = 500;
		const int k[] = { 4, 5, 7, 12, 15, 24, 25, 26, 27 };
		struct tsd_dp dp[9];
		for (size_t i = 0; i < 9; i++)
			dp[i] = D(b + 25 * k[i], 1.);
		const struct want wn[] = {
			{ 500, nan, 0 }, { 600, 3, 0 }, { 700, nan, 0 },
			{ 800, 2, 0 }, { 900, nan, 0 }, { 1000, nan, 0 },
			{ 1100, 4, 0 }, { 1200, nan, 0 }, { 1300, nan, 0 },
		};
		ds_case("TestFillingDownsampler.testNaNMissingInterval",
			"100ms-sum-nan", NULL, b, b + 36 * 25, 0, 0, dp, 9, wn,
			9, 0.01);
		struct want wz[9];
		for (size_t i = 0; i < 9; i++) {
			wz[i] = wn[i];
			if (isnan(wz[i].v))
				wz[i].v = 0;
		}
		ds_case("TestFillingDownsampler.testZeroMissingInterval",
			"100ms-sum-zero", NULL, b, b + 36 * 25, 0, 0, dp, 9, wz,
			9, 0.01);
		/* the same with fill null: NaN too (printed null) */
		ds_case("(cellfs) fill null fills NaN", "100ms-sum-null", NULL,
			b, b + 36 * 25, 0, 0, dp, 9, wn, 9, 0.01);
	}
	{
		struct tsd_dp dp[12];
		for (int i = 0; i < 12; i++)
			dp[i] = D(1000 + 25 * i, 12. - i);
		const struct want w[] = { { 1000, 42, 0 }, { 1100, 26, 0 },
					  { 1200, 10, 0 } };
		ds_case("TestFillingDownsampler.testWithoutMissingIntervals",
			"100ms-sum-nan", NULL, 1000, 1000 + 12 * 25, 0, 0, dp,
			12, w, 3, 0.01);
	}
	{
		const int64_t b = 1425335895000LL;
		const struct tsd_dp dp[] = {
			D(b - 60000 * 5 + 320, 53.), D(b - 60000 * 2 + 8839, 16.),
			D(b + 849, 9.), D(b + 3849, 8.), D(b + 6210, 7.),
			D(b + 42216, 6.), D(b + 60000 + 167, 5.),
			D(b + 60000 + 28593, 4.),
			D(b + 60000 * 2 + 30384, 37.),
			D(b + 60000 * 4 + 1530, 86.),
		};
		const struct want w[] = { { 1425335880000LL, 30, 0 },
					  { 1425335940000LL, 9, 0 } };
		const struct want wn[] = { { 1425335880000LL, nan, 0 },
					   { 1425335940000LL, nan, 0 } };
		ds_case("TestFillingDownsampler.testWithOutOfBoundsData",
			"1m-sum-nan", NULL, b, b + 120000, 0, 0, dp, N(dp), w,
			2, 0.01);
		ds_case("TestFillingDownsampler.testWithOutOfBoundsDataEarly",
			"1m-sum-nan", NULL, b, b + 120000, 0, 0, dp, 2, wn, 2,
			0.01);
		ds_case("TestFillingDownsampler.testWithOutOfBoundsDataLate",
			"1m-sum-nan", NULL, b, b + 120000, 0, 0, dp + 8, 2, wn,
			2, 0.01);
	}
	{
		const struct tsd_dp dp[] = {
			L(BASE + 5000, 1), L(BASE + 15000, 2), L(BASE + 25000, 4),
			L(BASE + 35000, 8), L(BASE + 45000, 16),
			L(BASE + 55000, 32),
		};
		const struct want all[] = { { 0, 63, 0 } };
		const struct want some[] = { { BASE + 15000, 14, 0 } };
		ds_case("TestFillingDownsampler.testDownsampler_allFullRange",
			"0all-sum-nan", NULL, BASE + 5000, BASE + 55000, 0,
			INT64_MAX, dp, 6, all, 1, 0.01);
		ds_case("TestFillingDownsampler.testDownsampler_allFilterOnQuery",
			"0all-sum-nan", NULL, BASE + 5000, BASE + 55000,
			BASE + 15000, BASE + 45000, dp, 6, some, 1, 0.01);
		ds_case("TestFillingDownsampler.testDownsampler_"
			"allFilterOnQueryOutOfRangeEarly", "0all-sum-nan", NULL,
			BASE + 5000, BASE + 55000, BASE + 65000, BASE + 75000,
			dp, 6, NULL, 0, 0.01);
		ds_case("TestFillingDownsampler.testDownsampler_"
			"allFilterOnQueryOutOfRangeLate", "0all-sum-nan", NULL,
			BASE + 5000, BASE + 55000, BASE - 15000, BASE - 5000,
			dp, 6, NULL, 0, 0.01);
	}
	{
		const struct tsd_dp h[] = {
			L(BASE, 1), L(BASE + 1800000, 2), L(BASE + 3599000, 3),
			L(BASE + 3600000, 4), L(BASE + 5400000, 5),
			L(BASE + 7199000, 6),
		};
		const int64_t af = 1356996600000LL;
		const struct want w1[] = { { BASE, 6, 0 },
					   { BASE + HOUR, 15, 0 },
					   { BASE + 2 * HOUR, nan, 0 } };
		const struct want w2[] = { { af, 1, 0 }, { af + HOUR, 9, 0 },
					   { af + 2 * HOUR, 11, 0 },
					   { af + 3 * HOUR, nan, 0 } };
		const struct want w3[] = { { af, 21, 0 },
					   { 1357011000000LL, nan, 0 } };
		ds_case("TestFillingDownsampler.testDownsampler_calendarHour "
			"(1hc in TV)", "1hc-sum-nan", TV, BASE, BASE + 3 * HOUR,
			0, INT64_MAX, h, 6, w1, 3, 0.001);
		ds_case("TestFillingDownsampler.testDownsampler_calendarHour "
			"(1hc in AF)", "1hc-sum-nan", AF, af, af + 4 * HOUR, 0,
			INT64_MAX, h, 6, w2, 4, 0.001);
		ds_case("TestFillingDownsampler.testDownsampler_calendarHour "
			"(4hc in AF)", "4hc-sum-nan", AF, af, af + 8 * HOUR, 0,
			INT64_MAX, h, 6, w3, 2, 0.001);
	}
	{
		const struct tsd_dp d[] = {
			L(DST, 1), L(DST + 86399000, 2), L(DST + 126001000LL, 3),
			L(DST + 172799000LL, 4), L(DST + 172800000LL, 5),
			L(DST + 242999000LL, 6),
		};
		const int64_t tv = 1450094400000LL - DAY;
		const struct want w1[] = { { DST, 3, 0 }, { DST + DAY, 7, 0 },
					   { DST + 2 * DAY, 11, 0 },
					   { DST + 3 * DAY, nan, 0 } };
		const struct want w2[] = {
			{ tv, nan, 0 }, { tv + DAY, 1, 0 },
			{ tv + 2 * DAY, 5, 0 }, { tv + 3 * DAY, 9, 0 },
			{ tv + 4 * DAY, 6, 0 }, { tv + 5 * DAY, nan, 0 },
		};
		const int64_t fj = 1450090800000LL, af = 1450121400000LL;
		const struct want w3[] = {
			{ fj, 1, 0 }, { fj + DAY, 2, 0 }, { fj + 2 * DAY, 12, 0 },
			{ fj + 3 * DAY, 6, 0 }, { fj + 4 * DAY, nan, 0 },
		};
		const struct want w4[] = {
			{ af, 1, 0 }, { af + DAY, 5, 0 }, { af + 2 * DAY, 15, 0 },
			{ af + 3 * DAY, nan, 0 },
		};
		const struct want w5[] = { { af, 21, 0 },
					   { af + 3 * DAY, nan, 0 } };
		ds_case("TestFillingDownsampler.testDownsampler_calendarDay "
			"(1d, not calendar)", "1d-sum-nan", NULL, DST,
			DST + 4 * DAY, 0, INT64_MAX, d, 6, w1, 4, 0.001);
		ds_case("TestFillingDownsampler.testDownsampler_calendarDay "
			"(1dc in TV, filled in front)", "1dc-sum-nan", TV, tv,
			DST + 5 * DAY, 0, INT64_MAX, d, 6, w2, 6, 0.001);
		ds_case("TestFillingDownsampler.testDownsampler_calendarDay "
			"(1dc in FJ)", "1dc-sum-nan", FJ, 1450094400000LL,
			DST + 5 * DAY, 0, INT64_MAX, d, 6, w3, 5, 0.001);
		ds_case("TestFillingDownsampler.testDownsampler_calendarDay "
			"(1dc in AF)", "1dc-sum-nan", AF, af, DST + 4 * DAY, 0,
			INT64_MAX, d, 6, w4, 4, 0.001);
		ds_case("TestFillingDownsampler.testDownsampler_calendarDay "
			"(3dc in AF)", "3dc-sum-nan", AF, af, DST + 6 * DAY, 0,
			INT64_MAX, d, 6, w5, 2, 0.001);
	}
	{
		const struct tsd_dp w[] = {
			L(DST, 1), L(DST + 7 * DAY, 2), L(1451129400000LL, 3),
			L(DST + 21 * DAY, 4), L(1452367799000LL, 5),
		};
		const int64_t u = 1449964800000LL, tv = 1449921600000LL,
			      fj = 1449918000000LL, af = 1449948600000LL;
		const struct want w1[] = {
			{ u, 1, 0 }, { u + WEEK, 5, 0 }, { u + 2 * WEEK, nan, 0 },
			{ u + 3 * WEEK, 9, 0 }, { u + 4 * WEEK, nan, 0 },
		};
		const struct want w2[] = {
			{ tv, 1, 0 }, { tv + WEEK, 5, 0 },
			{ tv + 2 * WEEK, nan, 0 }, { tv + 3 * WEEK, 4, 0 },
			{ tv + 4 * WEEK, 5, 0 },
		};
		const struct want w3[] = {
			{ fj, 1, 0 }, { fj + WEEK, 2, 0 }, { fj + 2 * WEEK, 3, 0 },
			{ fj + 3 * WEEK, 4, 0 }, { fj + 4 * WEEK, 5, 0 },
		};
		const struct want w4[] = {
			{ af, 1, 0 }, { af + WEEK, 5, 0 },
			{ af + 2 * WEEK, nan, 0 }, { af + 3 * WEEK, 9, 0 },
			{ af + 4 * WEEK, nan, 0 },
		};
		/* the end's interval is its week's Sunday (previousInterval
		 * walks 7 days for any 2 % N == 0), the steps are 14 days */
		const struct want w5[] = { { af, 6, 0 },
					   { af + 2 * WEEK, 9, 0 },
					   { af + 4 * WEEK, nan, 0 } };
		ds_case("TestFillingDownsampler.testDownsampler_calendarWeek "
			"(1wc in UTC)", "1wc-sum-nan", NULL, u, DST + 35 * DAY,
			0, INT64_MAX, w, 5, w1, 5, 0.001);
		ds_case("TestFillingDownsampler.testDownsampler_calendarWeek "
			"(1wc in TV)", "1wc-sum-nan", TV, u, DST + 35 * DAY, 0,
			INT64_MAX, w, 5, w2, 5, 0.001);
		ds_case("TestFillingDownsampler.testDownsampler_calendarWeek "
			"(1wc in FJ)", "1wc-sum-nan", FJ, u, DST + 35 * DAY, 0,
			INT64_MAX, w, 5, w3, 5, 0.001);
		ds_case("TestFillingDownsampler.testDownsampler_calendarWeek "
			"(1wc in AF)", "1wc-sum-nan", AF, u, DST + 35 * DAY, 0,
			INT64_MAX, w, 5, w4, 5, 0.001);
		ds_case("TestFillingDownsampler.testDownsampler_calendarWeek "
			"(2wc in AF)", "2wc-sum-nan", AF, u, DST + 35 * DAY, 0,
			INT64_MAX, w, 5, w5, 3, 0.001);
	}
	{
		const int64_t dec1 = 1448928000000LL, m30 = 2592000000LL;
		const struct tsd_dp m[] = {
			L(dec1, 1), L(1451559600000LL, 2), L(1451606400000LL, 3),
			L(1454284800000LL, 4), L(1456704000000LL, 5),
			L(1456772400000LL, 6),
		};
		const struct want w1[] = {
			{ dec1, 1, 0 }, { dec1 + m30, 5, 0 },
			{ dec1 + 2 * m30, 4, 0 }, { dec1 + 3 * m30, 11, 0 },
			{ dec1 + 4 * m30, nan, 0 },
		};
		const struct want w2[] = {
			{ 1448884800000LL, 3, 0 }, { 1451563200000LL, 3, 0 },
			{ 1454241600000LL, 9, 0 }, { 1456747200000LL, 6, 0 },
			{ 1459425600000LL, nan, 0 },
		};
		const struct want w3[] = {
			{ 1448881200000LL, 1, 0 }, { 1451559600000LL, 5, 0 },
			{ 1454241600000LL, 9, 0 }, { 1456747200000LL, 6, 0 },
			{ 1459425600000LL, nan, 0 },
		};
		const struct want w4[] = {
			{ 1448911800000LL, 3, 0 }, { 1451590200000LL, 3, 0 },
			{ 1454268600000LL, 15, 0 }, { 1456774200000LL, nan, 0 },
		};
		const struct want w5[] = {
			{ 1443614400000LL, 3, 0 }, { 1451563200000LL, 18, 0 },
			{ 1459425600000LL, nan, 0 },
		};
		ds_case("TestFillingDownsampler.testDownsampler_calendarMonth "
			"(1n: 30 days)", "1n-sum-nan", NULL, dec1,
			dec1 + 5 * m30, 0, INT64_MAX, m, 6, w1, 5, 0.001);
		ds_case("TestFillingDownsampler.testDownsampler_calendarMonth "
			"(1nc in TV)", "1nc-sum-nan", TV, dec1, dec1 + 6 * m30,
			0, INT64_MAX, m, 6, w2, 5, 0.001);
		ds_case("TestFillingDownsampler.testDownsampler_calendarMonth "
			"(1nc in FJ)", "1nc-sum-nan", FJ, dec1, dec1 + 6 * m30,
			0, INT64_MAX, m, 6, w3, 5, 0.001);
		ds_case("TestFillingDownsampler.testDownsampler_calendarMonth "
			"(1nc in AF)", "1nc-sum-nan", AF, dec1, dec1 + 5 * m30,
			0, INT64_MAX, m, 6, w4, 4, 0.001);
		ds_case("TestFillingDownsampler.testDownsampler_calendarMonth "
			"(3nc in TV)", "3nc-sum-nan", TV, dec1, dec1 + 9 * m30,
			0, INT64_MAX, m, 6, w5, 3, 0.001);
	}
	{
		const struct tsd_dp p[] = { L(BASE, 1), L(BASE + 1800000, 2),
					    L(BASE + 7200000, 6) };
		const struct want w[] = { { BASE, 3, 0 },
					  { BASE + HOUR, nan, 0 },
					  { BASE + 2 * HOUR, 6, 0 } };
		ds_case("TestFillingDownsampler.testDownsampler_"
			"calendarSkipSomePoints", "1hc-sum-nan", TV, BASE,
			1357009200000LL, 0, INT64_MAX, p, 3, w, 3, 0.001);
	}
	{
		const struct want w[] = { { BASE, nan, 0 },
					  { BASE + 60000, nan, 0 } };
		ds_case("TestFillingDownsampler.testDownsampler_noData",
			"1m-sum-nan", NULL, BASE, BASE + 120000, 0, 0, NULL, 0,
			w, 2, 0.01);
		ds_case("TestFillingDownsampler.testDownsampler_noDataCalendar",
			"1mc-sum-nan", NULL, BASE, BASE + 120000, 0, 0, NULL, 0,
			w, 2, 0.01);
	}
	/* not ported: testDownsampler_rollup, rollupMissing, rollupAvg,
	 * rollupAvgMissing, rollupCount, rollupCountMissing, rollupDev
	 * (cellfs has no rollup tables) */
}

/* --- TestDownsampler ---------------------------------------------------- */

/* Two points a month (or year) as TestDownsampler's calendar tests make
 * them: at each interval start (plus plus ms after the first) and half
 * way to the next, valued 1, 2, 4, ...; starts[0..n] the n intervals and
 * the end of the last. */
static size_t halves(struct tsd_dp *dp, const int64_t *starts, size_t n,
		     int64_t plus)
{
	int64_t t = starts[0];

	for (size_t k = 0; k < n; k++) {
		int64_t next = starts[k + 1] + plus;
		dp[2 * k] = L(t, INT64_C(1) << (2 * k));
		dp[2 * k + 1] = L(t + (next - t) / 2, INT64_C(1) << (2 * k + 1));
		t = next;
	}
	return 2 * n;
}

static void test_downsampler(void)
{
	const struct tsd_dp data[] = {
		L(BASE, 40), L(BASE + 2000000, 50), L(BASE + 3600000, 40),
		L(BASE + 3605000, 50), L(BASE + 7200000, 40),
		L(BASE + 9200000, 50),
	};
	const struct want w1000[] = {
		{ BASE - 400000, 40, 0 }, { BASE + 1600000, 50, 0 },
		{ BASE + 3600000, 45, 0 }, { BASE + 6600000, 40, 0 },
		{ BASE + 8600000, 50, 0 },
	};
	const int64_t Q = INT64_MAX;	/* query end of the tests */
	const double tol = 0.0000001;

	ds_case("TestDownsampler.testDownsampler", "1000s-avg", NULL, 0, Q,
		0, Q, data, 6, w1000, 5, tol);
	/* the constructor of an interval and a function: the same */
	ds_case("TestDownsampler.testDownsamplerDeprecated", "1000000ms-avg",
		NULL, 0, Q, 0, 0, data, 6, w1000, 5, tol);
	{
		struct tsd_dp d[11];
		for (int i = 0; i < 11; i++)
			d[i] = D(BASE + 5000 * i, (double)(1 << i));
		const struct want w[] = {
			{ BASE, 3, 0 }, { BASE + 10000, 12, 0 },
			{ BASE + 20000, 48, 0 }, { BASE + 30000, 192, 0 },
			{ BASE + 40000, 768, 0 }, { BASE + 50000, 1024, 0 },
		};
		ds_case("TestDownsampler.testDownsampler_10seconds", "10s-sum",
			NULL, 0, Q, 0, Q, d, 11, w, 6, tol);
		ds_case("TestDownsampler.testDownsamplerDeprecated_10seconds",
			"10000ms-sum", NULL, 0, Q, 0, 0, d, 11, w, 6, tol);
	}
	const struct tsd_dp six[] = {
		L(BASE + 5000, 1), L(BASE + 15000, 2), L(BASE + 25000, 4),
		L(BASE + 35000, 8), L(BASE + 45000, 16), L(BASE + 55000, 32),
	};
	{
		const struct want w[] = {
			{ BASE, 1, 0 }, { BASE + 15000, 6, 0 },
			{ BASE + 30000, 8, 0 }, { BASE + 45000, 48, 0 },
		};
		ds_case("TestDownsampler.testDownsampler_15seconds", "15s-sum",
			NULL, 0, Q, 0, Q, six, 6, w, 4, tol);
		ds_case("TestDownsampler.testDownsamplerDeprecated_15seconds",
			"15000ms-sum", NULL, 0, Q, 0, 0, six, 6, w, 4, tol);
	}
	{
		const struct want all[] = { { 0, 63, 0 } };
		const struct want some[] = { { BASE + 15000, 14, 0 } };
		ds_case("TestDownsampler.testDownsampler_allFullRange",
			"0all-sum", NULL, 0, Q, 0, Q, six, 6, all, 1, tol);
		ds_case("TestDownsampler.testDownsampler_allFilterOnQuery",
			"0all-sum", NULL, 0, Q, BASE + 15000, BASE + 45000, six,
			6, some, 1, tol);
		ds_case("TestDownsampler.testDownsampler_"
			"allFilterOnQueryOutOfRangeEarly", "0all-sum", NULL, 0,
			Q, BASE + 65000, BASE + 75000, six, 6, NULL, 0, tol);
		ds_case("TestDownsampler.testDownsampler_"
			"allFilterOnQueryOutOfRangeLate", "0all-sum", NULL, 0, Q,
			BASE - 15000, BASE - 5000, six, 6, NULL, 0, tol);
	}
	{
		const struct want w[] = { { 1356937200000LL, 63, 0 } };
		ds_case("TestDownsampler.testDownsampler_calendar (1dc in "
			"America/Denver)", "1dc-sum", "America/Denver", 0, Q, 0,
			Q, six, 6, w, 1, tol);
	}
	/* testDownsampler_calendarHour, calendarDay, calendarWeek and
	 * calendarMonth: tests/test-tsd-query.c (test_calendar) */
	ds_case("TestDownsampler.testDownsampler_noData", "1d-sum", NULL, 0,
		Q, 0, Q, NULL, 0, NULL, 0, tol);
	ds_case("TestDownsampler.testDownsampler_noDataCalendar", "1mc-sum",
		NULL, 0, Q, 0, Q, NULL, 0, NULL, 0, tol);
	{
		const struct tsd_dp d[] = {
			L(BASE, 1), L(BASE + 43200000LL, 2),
			L(BASE + 86400000LL, 4), L(BASE + 129600000LL, 8),
		};
		const struct want w[] = { { BASE, 3, 0 },
					  { 1357084800000LL, 12, 0 } };
		ds_case("TestDownsampler.testDownsampler_1day", "1d-sum", NULL,
			0, Q, 0, 0, d, 4, w, 2, 0.000001);
		const int64_t e = 1357016400000LL;	/* 00:00 in EST */
		const struct tsd_dp de[] = {
			L(e, 1), L(1357059600000LL, 2), L(1357102800000LL, 4),
			L(1357146000000LL, 8),
		};
		const struct want we[] = { { e, 3, 0 },
					   { 1357102800000LL, 12, 0 } };
		ds_case("TestDownsampler.testDownsampler_1day_timezone",
			"1dc-sum", "EST", 0, Q, 0, Q, de, 4, we, 2, 0.000001);
	}
	{
		const struct tsd_dp d[] = {
			L(1356825600000LL, 1), L(1357128000000LL, 2),
			L(1357430400000LL, 4), L(1357732800000LL, 8),
		};
		const struct want w[] = { { 1356825600000LL, 3, 0 },
					  { 1357430400000LL, 12, 0 } };
		ds_case("TestDownsampler.testDownsampler_1week", "1wc-sum",
			NULL, 0, Q, 0, Q, d, 4, w, 2, 0.000001);
		const struct tsd_dp de[] = {
			L(1356843600000LL, 1), L(1357146000000LL, 2),
			L(1357448400000LL, 4), L(1357750800000LL, 8),
		};
		const struct want we[] = { { 1356843600000LL, 3, 0 },
					   { 1357448400000LL, 12, 0 } };
		ds_case("TestDownsampler.testDownsampler_1week_timezone",
			"1wc-sum", "EST", 0, Q, 0, Q, de, 4, we, 2, 0.000001);
	}
	{
		/* month starts of 2013 (and 2014-01-01), UTC and EST */
		static const int64_t mu[] = {
			1356998400000LL, 1359676800000LL, 1362096000000LL,
			1364774400000LL, 1367366400000LL, 1370044800000LL,
			1372636800000LL, 1375315200000LL, 1377993600000LL,
			1380585600000LL, 1383264000000LL, 1385856000000LL,
			1388534400000LL,
		};
		static const int64_t me[] = {
			1357016400000LL, 1359694800000LL, 1362114000000LL,
			1364792400000LL, 1367384400000LL, 1370062800000LL,
			1372654800000LL, 1375333200000LL, 1378011600000LL,
			1380603600000LL, 1383282000000LL, 1385874000000LL,
			1388552400000LL,
		};
		struct tsd_dp d[24];
		struct want w[12];
		size_t n;

		for (int k = 0; k < 12; k++)
			w[k] = (struct want){ mu[k], (double)(3 << (2 * k)), 0 };
		n = halves(d, mu, 12, 1);	/* the next month 1 ms late */
		ds_case("TestDownsampler.testDownsampler_1month", "1nc-sum",
			NULL, 0, Q, 0, Q, d, n, w, 12, tol);
		n = halves(d, mu, 12, 0);
		for (int k = 0; k < 6; k++)
			w[k] = (struct want){ mu[2 * k],
					      (double)(15 << (4 * k)), 0 };
		ds_case("TestDownsampler.testDownsampler_2months", "2nc-sum",
			NULL, 0, Q, 0, Q, d, n, w, 6, tol);
		n = halves(d, me, 12, 0);
		for (int k = 0; k < 12; k++)
			w[k] = (struct want){ me[k], (double)(3 << (2 * k)), 0 };
		ds_case("TestDownsampler.testDownsampler_1month_timezone",
			"1nc-sum", "EST", 0, Q, 0, Q, d, n, w, 12, tol);
	}
	{
		/* a point on each month's first at 04:00 or 05:00 UTC, by
		 * day: each its own day, the 1st */
		static const int64_t pts[] = {
			1380600000000LL, 1383278400000LL, 1385874000000LL,
			1388552400000LL, 1391230800000LL, 1393650000000LL,
			1396324800000LL, 1398916800000LL, 1401595200000LL,
			1404187200000LL, 1406865600000LL, 1409544000000LL,
		};
		static const int64_t days[] = {
			1380585600000LL, 1383264000000LL, 1385856000000LL,
			1388534400000LL, 1391212800000LL, 1393632000000LL,
			1396310400000LL, 1398902400000LL, 1401580800000LL,
			1404172800000LL, 1406851200000LL, 1409529600000LL,
		};
		struct tsd_dp d[12];
		struct want w[12];
		for (int k = 0; k < 12; k++) {
			d[k] = L(pts[k], 1);
			w[k] = (struct want){ days[k], 1, 0 };
		}
		ds_case("TestDownsampler.testDownsampler_1month_alt", "1dc-sum",
			NULL, 0, Q, 0, Q, d, 12, w, 12, tol);
	}
	{
		static const int64_t yu[] = { 1356998400000LL, 1388534400000LL,
					      1420070400000LL };
		static const int64_t ye[] = { 1357016400000LL, 1388552400000LL,
					      1420088400000LL };
		struct tsd_dp d[4];
		size_t n = halves(d, yu, 2, 0);
		const struct want w[] = { { yu[0], 3, 0 }, { yu[1], 12, 0 } };
		ds_case("TestDownsampler.testDownsampler_1year", "1yc-sum",
			NULL, 0, Q, 0, Q, d, n, w, 2, tol);
		n = halves(d, ye, 2, 0);
		const struct want we[] = { { ye[0], 3, 0 }, { ye[1], 12, 0 } };
		ds_case("TestDownsampler.testDownsampler_1year_timezone",
			"1yc-sum", "EST", 0, Q, 0, Q, d, n, we, 2, tol);
	}
	/* not ported: testDownsampler_rollupSum, rollupAvg, rollupCount,
	 * rollupDev (no rollups); testRemove, testToString (Java) */

	/* seeks: to the first whole interval at or after the time */
	struct tsd_agg_spec s;
	struct tsd_tz *tz;
	if (ds_spec(&s, "1000s-avg", NULL, 0, Q, 0, 0, &tz) == 0) {
		series("TestDownsampler.testSeek", &s, data, 6,
		       BASE + 3600000, w1000 + 2, 3, tol, 0);
		/* the interval holding the time is abandoned */
		series("TestDownsampler.testSeek_skipPartialInterval", &s, data,
		       6, BASE + 3800000, w1000 + 3, 2, tol, 0);
		/* a new iterator each time: no state survives a seek */
		series("TestDownsampler.testSeek_doubleIteration (iterated "
		       "whole)", &s, data, 6, NO_SEEK, w1000, 5, tol, 0);
		series("TestDownsampler.testSeek_doubleIteration (then "
		       "seeked)", &s, data, 6, BASE + 3600000, w1000 + 2, 3,
		       tol, 0);
		tsd_tz_free(tz);
	}
	{
		const struct tsd_dp y[] = {
			L(1356998400000LL, 1), L(1388534400000LL, 2),
			L(1420070400000LL, 4), L(1451606400000LL, 8),
		};
		const struct want w[] = { { 1420070400000LL, 4, 0 },
					  { 1451606400000LL, 8, 0 } };
		ds_case_seek("TestDownsampler.testSeek_useCalendar (1y with "
			     "useCalendar)", "1yc-sum", 1420070400000LL, y, 4, w,
			     2, tol);
		ds_case_seek("TestDownsampler.testSeek_useCalendar (a ms "
			     "past a year)", "1yc-sum", 1420070400001LL, y, 4,
			     w + 1, 1, tol);
	}
	{
		struct tsd_dp d[11];
		for (int i = 0; i < 11; i++)
			d[i] = L(BASE + 100 + 1000 * i, 40);
		const struct want first[] = { { BASE, 400, 0 },
					      { BASE + 10000, 40, 0 } };
		const struct want next[] = { { BASE + 10000, 40, 0 } };
		ds_case_seek("TestDownsampler.testSeek_abandoningIncomplete"
			     "Interval: seek(BASE)", "10s-sum", BASE, d, 11,
			     first, 2, tol);
		for (int64_t at = BASE + 1000; at < BASE + 10100; at += 1000) {
			char what[120];
			snprintf(what, sizeof what, "TestDownsampler.testSeek_"
				 "abandoningIncompleteInterval: seek(%lld)",
				 (long long)at);
			ds_case_seek(what, "10s-sum", at, d, 11, next, 1, tol);
		}
	}
}

int main(void)
{
	test_rate_span();
	test_rate_options();
	test_ds_spec();
	test_filling();
	test_downsampler();
	return done_testing();
}
