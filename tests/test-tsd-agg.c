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

int main(void)
{
	test_rate_span();
	test_rate_options();
	test_ds_spec();
	return done_testing();
}
