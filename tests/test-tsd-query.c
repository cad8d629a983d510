/*
 * test-tsd-query.c: OpenTSDB query strings (tsd/query.h) and the query
 * math (tsd/agg.h) on series built in memory, with the exact numbers
 * OpenTSDB's AggregationIterator, Downsampler, FillingDownsampler and
 * RateSpan give (worked out by hand in the comments).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "tests/tap.h"
#include "tsd/agg.h"
#include "tsd/number.h"
#include "tsd/query.h"
#include "util/err.h"

/* 2013-01-01 00:00:00 UTC, an hour boundary, in ms */
#define T INT64_C(1356998400000)

static int parse(const char *qs, int64_t now, struct tsd_query *q, char *why)
{
	return tsd_query_parse(qs, strlen(qs), now, q, why, 200);
}

static void test_times(void)
{
	int64_t ms;

	ok(tsd_parse_duration("1ms", 3, &ms) == 0 && ms == 1, "1ms");
	ok(tsd_parse_duration("90s", 3, &ms) == 0 && ms == 90000, "90s");
	ok(tsd_parse_duration("2m", 2, &ms) == 0 && ms == 120000, "2m");
	ok(tsd_parse_duration("1h", 2, &ms) == 0 && ms == 3600000, "1h");
	ok(tsd_parse_duration("1d", 2, &ms) == 0 && ms == 86400000, "1d");
	ok(tsd_parse_duration("1w", 2, &ms) == 0 && ms == 604800000, "1w");
	ok(tsd_parse_duration("1n", 2, &ms) == 0 && ms == INT64_C(2592000000),
	   "1n = 30 days");
	ok(tsd_parse_duration("1y", 2, &ms) == 0 &&
	   ms == INT64_C(31536000000), "1y = 365 days");
	ok(tsd_parse_duration("1H", 2, &ms) == 0 && ms == 3600000,
	   "unit case-insensitive");
	is_int(tsd_parse_duration("0s", 2, &ms), CF_EINVAL, "zero duration");
	is_int(tsd_parse_duration("5", 1, &ms), CF_EINVAL, "no unit");
	is_int(tsd_parse_duration("s", 1, &ms), CF_EINVAL, "no number");
	is_int(tsd_parse_duration("5x", 2, &ms), CF_EINVAL, "bad unit");

	int64_t now = T + 7200000;
	ok(tsd_parse_time("1h-ago", 6, now, &ms) == 0 && ms == T + 3600000,
	   "1h-ago");
	ok(tsd_parse_time("now", 3, now, &ms) == 0 && ms == now, "now");
	ok(tsd_parse_time("1356998400", 10, now, &ms) == 0 && ms == T,
	   "epoch seconds");
	ok(tsd_parse_time("1356998400000", 13, now, &ms) == 0 && ms == T,
	   "epoch milliseconds");
	ok(tsd_parse_time("1356998400.5", 12, now, &ms) == 0 &&
	   ms == T + 500, "SECONDS.m");
	ok(tsd_parse_time("1356998400123ms", 15, now, &ms) == 0 &&
	   ms == T + 123, "Nms");
	ok(tsd_parse_time("2013/01/01", 10, now, &ms) == 0 && ms == T,
	   "date");
	ok(tsd_parse_time("2013/01/01-01:02:03", 19, now, &ms) == 0 &&
	   ms == T + 3723000, "date and time");
	ok(tsd_parse_time("2013/01/01 01:02", 16, now, &ms) == 0 &&
	   ms == T + 3720000, "date, space, hours and minutes");
	is_int(tsd_parse_time("2013/13/01", 10, now, &ms), CF_EINVAL,
	       "month 13");
	is_int(tsd_parse_time("yesterday", 9, now, &ms), CF_EINVAL, "words");
	is_int(tsd_parse_time("135699840.12", 12, now, &ms), CF_EINVAL,
	       "dotted time needs 10 digits of seconds");
}

static void test_parse(void)
{
	struct tsd_query q;
	char why[200];
	int64_t now = T + 7200000;

	ok(parse("start=1h-ago&m=sum:sys.cpu{host=*,dc=lga|sjc}{env=prod}",
		 now, &q, why) == 0, "query with tags and filters: %s", why);
	ok(q.start_ms == T + 3600000 && q.end_ms == now && q.nsubs == 1,
	   "start, default end");
	struct tsd_subquery *sq = &q.subs[0];
	ok(!strcmp(sq->metric, "sys.cpu") && sq->agg == TSD_AGG_SUM &&
	   sq->nfilters == 3, "metric, aggregator, three filters");
	ok(!strcmp(sq->filters[1].text, "*") &&
	   !strcmp(sq->filters[2].text, "lga|sjc") && !sq->rate_opts,
	   "a plain tag's text is its value");
	ok(!strcmp(sq->filters[0].tagk, "env") &&
	   sq->filters[0].type == TSD_FILTER_LITERAL_OR &&
	   !sq->filters[0].group_by && sq->filters[0].nvalues == 1,
	   "second braces: a filter without grouping");
	ok(!strcmp(sq->filters[1].tagk, "host") &&
	   sq->filters[1].type == TSD_FILTER_WILDCARD &&
	   sq->filters[1].group_by, "host=*: wildcard, grouped");
	ok(!strcmp(sq->filters[2].tagk, "dc") &&
	   sq->filters[2].nvalues == 2 &&
	   !strcmp(sq->filters[2].values[1], "sjc") &&
	   sq->filters[2].group_by, "dc=lga|sjc: literal_or, grouped");
	tsd_query_release(&q);

	ok(parse("?start=1356998400&end=1356999000&m=avg:1m-avg-zero:"
		 "rate{counter,1000,5}:m&m=p95:10s-max:explicit_tags:n&ms",
		 now, &q, why) == 0, "two sub queries: %s", why);
	ok(q.start_ms == T && q.end_ms == T + 600000 && q.ms && q.nsubs == 2,
	   "absolute times, ms flag");
	sq = &q.subs[0];
	ok(sq->agg == TSD_AGG_AVG && sq->ds_interval_ms == 60000 &&
	   sq->ds_agg == TSD_AGG_AVG && sq->ds_fill == TSD_FILL_ZERO &&
	   sq->rate && sq->counter && !sq->drop_resets &&
	   sq->counter_max == 1000 && sq->reset_value == 5,
	   "downsampling and rate options");
	ok(!strcmp(sq->ds_text, "1m-avg-zero") && sq->rate_opts &&
	   !q.show_query, "the specifier as written, options given");
	sq = &q.subs[1];
	ok(sq->agg == TSD_AGG_P95 && sq->ds_interval_ms == 10000 &&
	   sq->ds_agg == TSD_AGG_MAX && sq->ds_fill == TSD_FILL_NONE &&
	   !sq->rate && sq->explicit_tags && sq->nfilters == 0,
	   "second sub query");
	tsd_query_release(&q);

	ok(parse("start=1356998400&m=sum:rate{dropcounter}:m{host="
		 "literal_or(a|b),x=wildcard(w*),y=regexp(^db[0-9]$),"
		 "z=not_literal_or(q)}&wxh=300x200&title=CPU%20load",
		 now, &q, why) == 0, "filter functions: %s", why);
	sq = &q.subs[0];
	ok(sq->rate && sq->counter && sq->drop_resets &&
	   sq->counter_max == INT64_MAX, "dropcounter");
	ok(!sq->ds_text && !strcmp(sq->filters[0].text, "a|b") &&
	   !strcmp(sq->filters[2].text, "^db[0-9]$"),
	   "no downsampling; filters' text as written");
	ok(sq->nfilters == 4 && sq->filters[0].nvalues == 2 &&
	   sq->filters[1].type == TSD_FILTER_WILDCARD &&
	   sq->filters[2].type == TSD_FILTER_REGEXP &&
	   sq->filters[3].type == TSD_FILTER_NOT_LITERAL_OR,
	   "filter types");
	ok(tsd_filter_match(&sq->filters[0], "b", 1) &&
	   !tsd_filter_match(&sq->filters[0], "c", 1), "literal_or matches");
	ok(tsd_filter_match(&sq->filters[1], "web01", 5) &&
	   !tsd_filter_match(&sq->filters[1], "db01", 4), "wildcard matches");
	ok(tsd_filter_match(&sq->filters[2], "db7", 3) &&
	   !tsd_filter_match(&sq->filters[2], "db77", 4), "regexp matches");
	ok(!tsd_filter_match(&sq->filters[3], "q", 1) &&
	   tsd_filter_match(&sq->filters[3], "r", 1), "not_literal_or");
	ok(q.width == 300 && q.height == 200 && !strcmp(q.title, "CPU load"),
	   "graph options, %%XX decoded");
	tsd_query_release(&q);

	ok(parse("start=1356998400&m=sum:m&show_query", now, &q, why) == 0 &&
	   q.show_query, "show_query");
	tsd_query_release(&q);

	/* TestQueryRpc.parseQueryTSUIDType and its variants: tsuid= sub
	 * queries, in the order written among the m= ones */
	ok(parse("start=1h-ago&tsuid=sum:010101", now, &q, why) == 0 &&
	   q.nsubs == 1 && q.subs[0].agg == TSD_AGG_SUM &&
	   q.subs[0].ntsuids == 1 && !strcmp(q.subs[0].tsuids[0], "010101") &&
	   !q.subs[0].metric && !q.show_tsuids, "tsuid=sum:010101");
	tsd_query_release(&q);
	ok(parse("start=1h-ago&tsuid=sum:010101,020202", now, &q, why) == 0 &&
	   q.subs[0].ntsuids == 2 && !strcmp(q.subs[0].tsuids[1], "020202"),
	   "two TSUIDs (of two metrics: refused when run)");
	tsd_query_release(&q);
	ok(parse("start=1h-ago&tsuid=sum:010101&tsuid=avg:020202", now, &q,
		 why) == 0 && q.nsubs == 2 && q.subs[1].agg == TSD_AGG_AVG &&
	   !strcmp(q.subs[1].tsuids[0], "020202"), "two tsuid sub queries");
	tsd_query_release(&q);
	ok(parse("start=1h-ago&tsuid=sum:1m-sum:rate:010101&show_tsuids", now,
		 &q, why) == 0 && q.subs[0].rate &&
	   q.subs[0].ds_interval_ms == 60000 && q.subs[0].ds_agg ==
	   TSD_AGG_SUM && q.show_tsuids, "with rate, downsampling, "
	   "show_tsuids");
	tsd_query_release(&q);
	ok(parse("start=1h-ago&m=sum:a&tsuid=sum:0a0B0c&m=max:b", now, &q,
		 why) == 0 && q.nsubs == 3 && !strcmp(q.subs[0].metric, "a") &&
	   !strcmp(q.subs[1].tsuids[0], "0a0B0c") &&
	   !strcmp(q.subs[2].metric, "b"), "the order written");
	tsd_query_release(&q);

	/* two downsamplers: the later one wins; a bad later one is refused
	 * and the earlier one's text freed once (fuzz-tsdquery found a
	 * double free here) */
	ok(parse("start=1356998400&m=sum:1m-avg:1h-max:m", now, &q, why) == 0 &&
	   !strcmp(q.subs[0].ds_text, "1h-max") &&
	   q.subs[0].ds_interval_ms == 3600000, "the later downsampler");
	tsd_query_release(&q);
	is_int(parse("start=1356998400&m=sum:1m-avg:1m-avg-zxro:m", now, &q,
		     why), CF_EINVAL, "a bad later downsampler");

	ok(parse("start=1356998400&m=sum:m{host=iwildcard(*WEB*)}", now, &q,
		 why) == 0 && tsd_filter_match(&q.subs[0].filters[0],
					       "myweb1", 6), "iwildcard");
	tsd_query_release(&q);
	ok(parse("start=1356998400&m=sum:0all-sum:m{}", now, &q, why) == 0 &&
	   q.subs[0].ds_all && q.subs[0].nfilters == 0, "0all, empty tags");
	tsd_query_release(&q);

	/* TestTagVRegexFilter (Java Pattern.find()) and
	 * TestTagVLiteralOrFilter (String.split("\\|")) */
	static const struct {
		const char *filter;
		int hit;
	} tv[] = {
		{ "regexp(ogg-01.ops.ankh.morpork.com)", 1 },
		{ "regexp(.*.ops.ankh.morpork.com)", 1 },
		{ "regexp(ogg-01.ops.ankh.*)", 1 },
		{ "regexp(.*)", 1 },
		{ "regexp(ogg-01.ops.qurim.*)", 0 },
		{ "regexp(ogg-01.ops.(ankh|quirm|tsort).morpork.com)", 1 },
		{ "regexp(ogg-\\d+.ops.ankh.morpork.com)", 1 },
		{ "regexp(ogg-\\d(3).ops.ankh.morpork.com)", 0 },
		{ "regexp(ankh)", 1 },	/* find(), not matches() */
		{ "regexp((?i)OGG-\\d+\\.)", 1 },
		{ "literal_or(ogg-01.ops.ankh.morpork.com)", 1 },
		{ "literal_or(ogg-01.ops.ankh.morpork.com|)", 1 },
		{ "literal_or(|ogg-01.ops.ankh.morpork.com)", 1 },
		{ "literal_or(LutZe|Keli|Slant)", 0 },
		{ "iliteral_or(OGG-01.OPS.ANKH.MORPORK.COM|)", 1 },
		{ "not_literal_or(|ogg-01.ops.ankh.morpork.com)", 0 },
	};
	const char *tagv = "ogg-01.ops.ankh.morpork.com";
	for (size_t i = 0; i < sizeof tv / sizeof tv[0]; i++) {
		char qs[200];
		snprintf(qs, sizeof qs, "start=1356998400&m=sum:m{host=%s}",
			 tv[i].filter);
		int rc = parse(qs, now, &q, why);
		ok(rc == 0 && tsd_filter_match(&q.subs[0].filters[0], tagv,
					       strlen(tagv)) == tv[i].hit,
		   "%s %s %s", tv[i].filter, tv[i].hit ? "matches" :
		   "does not match", rc ? why : "");
		if (rc == 0)
			tsd_query_release(&q);
	}

#define NINE_PAIRS "000001000001000001000001000001000001000001000001" \
		   "000001000001000001000001000001000001000001000001000001000001"
	static const struct {
		const char *qs, *why;
	} bad[] = {
		{ "start=1356998400&m=sum:m{h=regexp(ogg-\\d(3.ops)}",
		  "When parsing tag 'h=regexp(ogg-\\d(3.ops)': bad regexp: "
		  "ogg-\\d(3.ops: missing closing parenthesis at offset 12" },
		{ "start=1356998400&m=sum:m{h=literal_or(|)}",
		  "When parsing tag 'h=literal_or(|)': Filter must contain "
		  "more than just a pipe" },
		{ "start=1356998400&m=sum:m{h=literal_or()}",
		  "When parsing tag 'h=literal_or()': Filter cannot be null or "
		  "empty" },
		{ "m=sum:m", "Missing parameter <code>start</code>" },
		{ "start=1356998400", "Missing sub queries" },
		{ "start=1356998400&m=foo:m", "No such aggregation function: "
		  "foo" },
		{ "start=1356998400&m=sum", "Invalid parameter m=sum (not "
		  "enough :-separated parts)" },
		{ "start=1356998400&m=sum:a:b:c:d:e", "Invalid parameter "
		  "m=sum:a:b:c:d:e (too many :-separated parts)" },
		{ "start=1356998400&m=sum:1m:m", "Invalid downsampling "
		  "specifier '1m': must provide at least interval and "
		  "function" },
		{ "start=1356998400&m=sum:1m-foo:m",
		  "No such downsampling function: foo" },
		{ "start=1356998400&m=sum:1m-none:m", "cannot use the NONE "
		  "aggregator for downsampling" },
		{ "start=1356998400&m=sum:1m-avg-bad:m",
		  "Unrecognized fill policy: bad" },
		{ "start=1356998400&m=sum:1xc-avg:m", "Invalid duration "
		  "(suffix): 1x" },
		{ "start=1356998400&m=sum:1dc-avg:m&timezone=Mars/Olympus",
		  "unknown timezone: Mars/Olympus" },
		{ "start=1356998400&m=sum:1dc-avg:m&timezone=../etc/passwd",
		  "unknown timezone: ../etc/passwd" },
		{ "start=1356998400&m=sum:rate{counter,x}:m",
		  "Max value of counter was not a number, received 'x'" },
		{ "start=1356998400&m=sum:m{host=a", "Missing '}' at the end "
		  "of: m{host=a" },
		{ "start=1356998400&m=sum:m{host}", "When parsing tag 'host': "
		  "invalid tag: host" },
		{ "start=1356998400&m=sum:m{host=foo(a)}", "When parsing tag "
		  "'host=foo(a)': Could not find a tag value filter of the "
		  "type: foo" },
		{ "start=1356998400&end=1356998300&m=sum:m", "End time "
		  "[1356998300000] must be greater than the start time "
		  "[1356998400000]" },
		{ "start=soon&m=sum:m", "Invalid time: soon. Invalid "
		  "character 's' in soon" },
		{ "start=1356998400&m=sum:pre-agg:m",
		  "unsupported query part: pre-agg" },
		{ "start=1356998400&m=sum:{a=b}", "Missing the metric or "
		  "tsuids, provide at least one" },
		{ "start=1356998400&m=", "The query string was empty" },
		{ "start=1356998400&tsuid=", "The tsuid query string was "
		  "empty" },
		{ "start=1356998400&tsuid=sum:01010", "invalid TSUID: 01010" },
		{ "start=1356998400&tsuid=sum:0101010", "invalid TSUID: "
		  "0101010" },
		{ "start=1356998400&tsuid=sum:01010x", "invalid TSUID: "
		  "01010x" },
		{ "start=1356998400&tsuid=sum:010101,", "invalid TSUID: " },
		{ "start=1356998400&tsuid=sum:010101,,010101",
		  "invalid TSUID: " },
		{ "start=1356998400&tsuid=sum:010101" NINE_PAIRS,
		  "invalid TSUID: 010101000001000001000001000001000001000001"
		  "00000100000100000100000100000100000100" },	/* cut at 80 */
		{ "start=1356998400&tsuid=sum:1m:010101",
		  "Invalid downsampling specifier '1m': must provide at least "
		  "interval and function" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int rc = parse(bad[i].qs, now, &q, why);
		ok(rc == CF_EINVAL && !strcmp(why, bad[i].why), "rejects %s: %s",
		   bad[i].qs, why);
	}
}

static void test_scan_bounds(void)
{
	struct tsd_subquery sq;
	int64_t s, e;

	memset(&sq, 0, sizeof sq);
	tsd_scan_bounds(&sq, T + 1815000, T + 2700000, &s, &e);
	ok(s * 1000 == T && e * 1000 == T + 3600000,
	   "no downsampling: whole hours around the range");
	tsd_scan_bounds(&sq, T + 1815000, T + 3599000, &s, &e);
	ok(e * 1000 == T + 7200000,
	   "an end one second before the hour reaches into the next");
	sq.ds_interval_ms = 60000;
	tsd_scan_bounds(&sq, T + 3661000, T + 3720000, &s, &e);
	ok(s * 1000 == T + 3600000 && e * 1000 == T + 7200000,
	   "1m downsampling");
}

/* --- aggregation ------------------------------------------------------- */

static struct tsd_dp ip(int64_t ts_s, int64_t v)
{
	struct tsd_dp p = { T + ts_s * 1000, 0, v, 0 };
	return p;
}

static struct tsd_dp fp(int64_t ts_s, double v)
{
	struct tsd_dp p = { T + ts_s * 1000, 1, 0, v };
	return p;
}

static void spec(struct tsd_agg_spec *s, enum tsd_agg agg, int64_t qend_s)
{
	memset(s, 0, sizeof *s);
	s->agg = agg;
	s->start_ms = T;
	s->end_ms = T + 3600000;
	s->query_start_ms = T;
	s->query_end_ms = T + qend_s * 1000;
	s->counter_max = INT64_MAX;
}

/* Renders points as "ts:value ..." (ts in seconds from T) for compact
 * exact comparisons. */
static const char *show(const struct tsd_dp *p, size_t n)
{
	static char out[2048];
	size_t o = 0;
	out[0] = '\0';
	for (size_t i = 0; i < n && o < sizeof out - 64; i++) {
		char v[TSD_DOUBLE_MAX];
		if (p[i].is_float)
			tsd_format_double(v, p[i].d);
		else
			snprintf(v, sizeof v, "%lld", (long long)p[i].i);
		o += (size_t)snprintf(out + o, sizeof out - o, "%s%lld:%s",
				      i ? " " : "",
				      (long long)((p[i].ts - T) / 1000), v);
	}
	return out;
}

static void check(const struct tsd_agg_spec *s, const struct tsd_span *sp,
		  size_t n, const char *want, const char *what)
{
	struct tsd_dp *out;
	size_t nout;
	int rc = tsd_aggregate(s, sp, n, &out, &nout);
	if (!ok(rc == 0 && !strcmp(show(out, nout), want), "%s", what))
		diag("  rc %d got '%s' want '%s'", rc, show(out, nout), want);
	free(out);
}

static void test_aggregate(void)
{
	struct tsd_agg_spec s;
	/* s1: 0:10 10:20 20:30, s2: 5:100 15:200 */
	struct tsd_dp a[] = { ip(0, 10), ip(10, 20), ip(20, 30) };
	struct tsd_dp b[] = { ip(5, 100), ip(15, 200) };
	struct tsd_span two[] = { { a, 3 }, { b, 2 } };

	/* sum, linear interpolation between a series' neighbours:
	 * 5: 10 + 5*(20-10)/10 = 15, + 100   -> 115
	 * 10: 20 + (100 + 5*(200-100)/10)     -> 170
	 * 15: (20 + 5*10/10) + 200            -> 225
	 * 0 and 20: only s1 is inside its own range */
	spec(&s, TSD_AGG_SUM, 30);
	check(&s, two, 2, "0:10 5:115 10:170 15:225 20:30", "sum lerp");
	spec(&s, TSD_AGG_AVG, 30);
	check(&s, two, 2, "0:10 5:57 10:85 15:112 20:30",
	      "avg of integers divides as integers");
	spec(&s, TSD_AGG_MIN, 30);
	check(&s, two, 2, "0:10 5:15 10:20 15:25 20:30", "min");
	spec(&s, TSD_AGG_MAX, 30);
	check(&s, two, 2, "0:10 5:100 10:150 15:200 20:30", "max");
	spec(&s, TSD_AGG_ZIMSUM, 30);
	check(&s, two, 2, "0:10 5:100 10:20 15:200 20:30",
	      "zimsum: missing is zero");
	spec(&s, TSD_AGG_MIMMIN, 30);
	check(&s, two, 2, "0:10 5:100 10:20 15:200 20:30",
	      "mimmin: missing is ignored");
	spec(&s, TSD_AGG_MIMMAX, 30);
	check(&s, two, 2, "0:10 5:100 10:20 15:200 20:30", "mimmax");
	spec(&s, TSD_AGG_COUNT, 30);
	check(&s, two, 2, "0:1 5:2 10:2 15:2 20:1", "count");
	/* dev at 5 of {15, 100}: population sd 42.5, as a long 42 */
	spec(&s, TSD_AGG_DEV, 30);
	check(&s, two, 2, "0:0 5:42 10:65 15:87 20:0", "dev");
	spec(&s, TSD_AGG_P50, 30);
	check(&s, two, 2, "0:10 5:57 10:85 15:112 20:30",
	      "p50 of two values is their midpoint");
	spec(&s, TSD_AGG_SUM, 12);
	check(&s, two, 2, "0:10 5:115 10:170",
	      "the query end bounds the output, inclusive");
	s.query_start_ms = T + 5000;
	check(&s, two, 2, "5:115 10:170",
	      "the query start bounds the output, inclusive");

	/* a float anywhere makes the step a double */
	struct tsd_dp c[] = { fp(5, 100.5), fp(15, 200.5) };
	struct tsd_span mixed[] = { { a, 3 }, { c, 2 } };
	spec(&s, TSD_AGG_SUM, 30);
	check(&s, mixed, 2, "0:10.0 5:115.5 10:170.5 15:225.5 20:30",
	      "sum with floats (a float still ahead makes 0 a double)");
	spec(&s, TSD_AGG_AVG, 30);
	check(&s, mixed, 2, "0:10.0 5:57.75 10:85.25 15:112.75 20:30",
	      "avg with floats");
	spec(&s, TSD_AGG_DEV, 30);
	check(&s, mixed, 2, "0:0.0 5:42.75 10:65.25 15:87.75 20:0",
	      "dev with floats (the integer-only end stays an integer)");

	/* downsampling: 0:1 3:2 7:3 12:4 25:5 */
	struct tsd_dp d[] = { ip(0, 1), ip(3, 2), ip(7, 3), ip(12, 4),
			      ip(25, 5) };
	struct tsd_span one[] = { { d, 5 } };
	spec(&s, TSD_AGG_SUM, 40);
	s.ds_interval_ms = 10000;
	s.ds_agg = TSD_AGG_AVG;
	check(&s, one, 1, "0:2.0 10:4.0 20:5.0", "10s-avg");
	s.ds_agg = TSD_AGG_COUNT;
	check(&s, one, 1, "0:3.0 10:1.0 20:1.0", "10s-count");
	s.ds_agg = TSD_AGG_SUM;
	s.ds_fill = TSD_FILL_ZERO;
	check(&s, one, 1, "0:6.0 10:4.0 20:5.0 30:0.0 40:0.0",
	      "10s-sum-zero fills to the end of the range");
	s.ds_fill = TSD_FILL_NAN;
	check(&s, one, 1, "0:6.0 10:4.0 20:5.0 30:NaN 40:NaN",
	      "10s-sum-nan");
	s.ds_fill = TSD_FILL_NONE;
	s.ds_all = 1;
	s.ds_interval_ms = 0;
	s.query_end_ms = T + 20000;
	check(&s, one, 1, "0:10.0", "0all-sum over [start, end)");

	/* two series downsampled, the missing interval interpolated:
	 * s2 has 0:10 and 20:30 only; at 10 it is lerped to 20 */
	struct tsd_dp e[] = { ip(1, 10), ip(21, 30) };
	struct tsd_span ds2[] = { { d, 5 }, { e, 2 } };
	spec(&s, TSD_AGG_SUM, 40);
	s.ds_interval_ms = 10000;
	s.ds_agg = TSD_AGG_AVG;
	check(&s, ds2, 2, "0:12.0 10:24.0 20:35.0",
	      "downsampled series interpolate across a missing interval");
	s.ds_fill = TSD_FILL_ZERO;
	s.query_end_ms = T + 30000;
	check(&s, ds2, 2, "0:12.0 10:4.0 20:35.0 30:0.0",
	      "fill zero instead of interpolation");

	/* rates: 0:100 10:200 20:150 30:250 */
	struct tsd_dp r[] = { ip(0, 100), ip(10, 200), ip(20, 150),
			      ip(30, 250) };
	struct tsd_span rs[] = { { r, 4 } };
	spec(&s, TSD_AGG_SUM, 40);
	s.rate = 1;
	check(&s, rs, 1, "10:10.0 20:-5.0 30:10.0", "rate");
	s.counter = 1;
	s.counter_max = 300;
	check(&s, rs, 1, "10:10.0 20:25.0 30:10.0",
	      "counter rate wraps at the max: (300 - 200 + 150) / 10");
	s.reset_value = 20;
	check(&s, rs, 1, "10:10.0 20:0.0 30:10.0",
	      "a wrapped rate above the reset value is 0");
	s.counter_max = INT64_MAX;
	s.reset_value = 0;
	check(&s, rs, 1, "10:10.0 20:9.223372036854776E17 30:10.0",
	      "counter rate with the default max");
	s.drop_resets = 1;
	check(&s, rs, 1, "10:10.0 30:10.0", "dropcounter drops the reset");

	/* two rates: a series between its points keeps its previous rate
	 * (no interpolation); s2: 5:0 15:50 */
	struct tsd_dp r2[] = { ip(5, 0), ip(15, 50) };
	struct tsd_span rr[] = { { r, 4 }, { r2, 2 } };
	spec(&s, TSD_AGG_SUM, 40);
	s.rate = 1;
	check(&s, rr, 2, "10:10.0 15:15.0 20:-5.0 30:10.0",
	      "sum of rates");
}

static void test_agg_functions(void)
{
	double v5[] = { 3, 1, 5, 2, 4 };
	double v10[] = { 10, 9, 8, 7, 6, 5, 4, 3, 2, 1 };
	int64_t l5[] = { 3, 1, 5, 2, 4 };
	double nanv[] = { NAN, 2, NAN, 4 };

	ok(tsd_agg_double(TSD_AGG_P50, v5, 5) == 3, "p50 of 1..5");
	ok(tsd_agg_double(TSD_AGG_P75, v5, 5) == 4.5, "p75 of 1..5");
	ok(tsd_agg_double(TSD_AGG_P90, v5, 5) == 5, "p90 of 1..5");
	ok(fabs(tsd_agg_double(TSD_AGG_P90, v10, 10) - 9.9) < 1e-12,
	   "p90 of 1..10");
	ok(tsd_agg_double(TSD_AGG_P75, v10, 10) == 8.25, "p75 of 1..10");
	ok(tsd_agg_double(TSD_AGG_P50, v10, 10) == 5.5, "p50 of 1..10");
	ok(tsd_agg_double(TSD_AGG_P95, v10, 10) == 10, "p95 of 1..10");
	ok(tsd_agg_double(TSD_AGG_P999, v10, 10) == 10, "p999 of 1..10");
	is_int(tsd_agg_long(TSD_AGG_P75, l5, 5), 4, "p75 as a long truncates");
	{
		/* Commons Math's R-7 (1 + 9p, interpolated) and R-3 (rank
		 * rint(10p), ties to even) of 10, 20, ..., 100, in any
		 * order; the legacy p75 is at 11 * 0.75 = 8.25 */
		int64_t l[] = { 70, 10, 100, 40, 90, 20, 60, 30, 80, 50 };
		double d[] = { 70, 10, 100, 40, 90, 20, 60, 30, 80, 50 };
		static const struct {
			enum tsd_agg a;
			int64_t want;
		} c[] = {
			{ TSD_AGG_EP50R7, 55 }, { TSD_AGG_EP75R7, 77 },
			{ TSD_AGG_EP90R7, 91 }, { TSD_AGG_EP95R7, 95 },
			{ TSD_AGG_EP99R7, 99 }, { TSD_AGG_EP999R7, 99 },
			{ TSD_AGG_EP50R3, 50 }, { TSD_AGG_EP75R3, 80 },
			{ TSD_AGG_EP90R3, 90 }, { TSD_AGG_EP95R3, 100 },
			{ TSD_AGG_EP99R3, 100 }, { TSD_AGG_EP999R3, 100 },
			{ TSD_AGG_P75, 82 },
		};
		int64_t one = 7;

		for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
			is_int(tsd_agg_long(c[i].a, l, 10), c[i].want, "%s of "
			       "10..100", tsd_agg_name(c[i].a));
		is_int(tsd_agg_long(TSD_AGG_EP50R3, &one, 1), 7,
		       "ep50r3 of one value");
		/* on floats OpenTSDB drops the estimation type */
		ok(tsd_agg_double(TSD_AGG_EP75R3, d, 10) == 82.5 &&
		   tsd_agg_double(TSD_AGG_EP50R7, d, 10) == 55,
		   "ep75r3 and ep50r7 of floats are p75 and p50");
	}
	is_int(tsd_agg_long(TSD_AGG_MEDIAN, l5, 5), 3, "median");
	is_int(tsd_agg_long(TSD_AGG_FIRST, l5, 5), 3, "first");
	is_int(tsd_agg_long(TSD_AGG_LAST, l5, 5), 4, "last");
	is_int(tsd_agg_long(TSD_AGG_DIFF, l5, 5), 1, "diff");
	is_int(tsd_agg_long(TSD_AGG_MULT, l5, 5), 120, "mult");
	is_int(tsd_agg_long(TSD_AGG_SQUARESUM, l5, 5), 55, "squareSum");
	is_int(tsd_agg_long(TSD_AGG_DEV, l5, 5), 1, "dev of 1..5 is 1.41");
	ok(fabs(tsd_agg_double(TSD_AGG_DEV, v5, 5) - sqrt(2)) < 1e-12,
	   "dev of 1..5 as doubles");
	ok(tsd_agg_double(TSD_AGG_SUM, nanv, 4) == 6, "sum skips NaN");
	ok(tsd_agg_double(TSD_AGG_AVG, nanv, 4) == 3, "avg skips NaN");
	ok(tsd_agg_double(TSD_AGG_COUNT, nanv, 4) == 2, "count skips NaN");
	ok(tsd_agg_double(TSD_AGG_MIN, nanv, 4) == 2, "min skips NaN");
	ok(isnan(tsd_agg_double(TSD_AGG_SUM, nanv, 1)), "sum of NaN is NaN");
}

/* TestDownsampler's calendar tests: one series of long values through
 * SPEC-sum in zone TZ (NULL: UTC), query range [0, max]; the result as
 * "ts:value ..." in absolute ms (values only when with_values). */
static void cal_case(const char *tzname, enum tsd_cal_unit u, int n,
		     const int64_t *ts, size_t np, const char *want,
		     int with_values)
{
	struct tsd_tz *tz = NULL;
	struct tsd_agg_spec s;
	struct tsd_dp dp[8], *out = NULL;
	struct tsd_span sp = { dp, np };
	size_t nout = 0, o = 0;
	char got[1024] = "";

	if (tzname && tsd_tz_load(tzname, &tz)) {
		ok(0, "zone %s loads", tzname);
		return;
	}
	for (size_t i = 0; i < np; i++) {
		dp[i].ts = ts[i];
		dp[i].is_float = 0;
		dp[i].i = (int64_t)i + 1;
		dp[i].d = 0;
	}
	memset(&s, 0, sizeof s);
	s.agg = TSD_AGG_SUM;
	s.end_ms = s.query_end_ms = INT64_MAX - 1;	/* TSD_END is INT64_MAX */
	s.ds_interval_ms = 1000;	/* only its being set matters here */
	s.ds_calendar = 1;
	s.ds_cal_n = n;
	s.ds_cal_unit = u;
	s.ds_agg = TSD_AGG_SUM;
	s.tz = tz;
	int rc = tsd_aggregate(&s, &sp, 1, &out, &nout);
	for (size_t i = 0; rc == 0 && i < nout; i++) {
		char v[TSD_DOUBLE_MAX];
		tsd_format_double(v, out[i].d);
		o += (size_t)snprintf(got + o, sizeof got - o, "%s%lld%s%s",
				      i ? " " : "", (long long)out[i].ts,
				      with_values ? ":" : "",
				      with_values ? v : "");
	}
	static const char *const unit[] = { "ms", "s", "m", "h", "d", "w",
					    "n", "y" };
	if (!ok(rc == 0 && !strcmp(got, want), "%d%sc-sum in %s", n, unit[u],
		tzname ? tzname : "UTC"))
		diag("  got  %s\n  want %s", got, want);
	free(out);
	tsd_tz_free(tz);
}

static void test_calendar(void)
{
	const int64_t B = 1356998400000LL, DST = 1450137600000LL;
	const int64_t day = 86400000LL;
	const char *TV = "Pacific/Funafuti", *FJ = "Pacific/Fiji",
		   *AF = "Asia/Kabul";

	int64_t c1[] = { B + 5000, B + 15000, B + 25000, B + 35000,
			 B + 45000, B + 55000 };
	/* values 1..6 here, OpenTSDB's 1 2 4 .. 32 sum to 63 */
	cal_case("America/Denver", TSD_CAL_DAY, 1, c1, 6,
		 "1356937200000:21.0", 1);

	int64_t h[] = { B, B + 1800000, B + 3599000, B + 3600000,
			B + 5400000, B + 7199000 };
	cal_case(TV, TSD_CAL_HOUR, 1, h, 6,
		 "1356998400000:6.0 1357002000000:15.0", 1);
	cal_case(AF, TSD_CAL_HOUR, 1, h, 6, "1356996600000:1.0 "
		 "1357000200000:9.0 1357003800000:11.0", 1);
	cal_case(AF, TSD_CAL_HOUR, 4, h, 6, "1356996600000:21.0", 1);

	int64_t d[] = { DST, DST + 86399000, DST + 126001000LL,
			DST + 172799000LL, DST + 172800000LL,
			DST + 242999000LL };
	cal_case(NULL, TSD_CAL_DAY, 1, d, 6, "1450137600000:3.0 "
		 "1450224000000:7.0 1450310400000:11.0", 1);
	cal_case(TV, TSD_CAL_DAY, 1, d, 6, "1450094400000:1.0 "
		 "1450180800000:5.0 1450267200000:9.0 1450353600000:6.0", 1);
	cal_case(FJ, TSD_CAL_DAY, 1, d, 6, "1450090800000:1.0 "
		 "1450177200000:2.0 1450263600000:12.0 1450350000000:6.0", 1);
	cal_case(AF, TSD_CAL_DAY, 1, d, 6, "1450121400000:1.0 "
		 "1450207800000:5.0 1450294200000:15.0", 1);
	cal_case(AF, TSD_CAL_DAY, 3, d, 6, "1450121400000:21.0", 1);

	int64_t w[] = { DST, DST + 7 * day, 1451129400000LL, DST + 21 * day,
			1452367799000LL };
	cal_case(NULL, TSD_CAL_WEEK, 1, w, 5, "1449964800000:1.0 "
		 "1450569600000:5.0 1451779200000:9.0", 1);
	cal_case(TV, TSD_CAL_WEEK, 1, w, 5, "1449921600000:1.0 "
		 "1450526400000:5.0 1451736000000:4.0 1452340800000:5.0", 1);
	cal_case(FJ, TSD_CAL_WEEK, 1, w, 5, "1449918000000:1.0 "
		 "1450522800000:2.0 1451127600000:3.0 1451732400000:4.0 "
		 "1452337200000:5.0", 1);
	cal_case(AF, TSD_CAL_WEEK, 1, w, 5, "1449948600000:1.0 "
		 "1450553400000:5.0 1451763000000:9.0", 1);
	cal_case(AF, TSD_CAL_WEEK, 2, w, 5, "1449948600000:6.0 "
		 "1451158200000:9.0", 1);

	int64_t m[] = { 1448928000000LL, 1451559600000LL, 1451606400000LL,
			1454284800000LL, 1456704000000LL, 1456772400000LL };
	cal_case(NULL, TSD_CAL_MONTH, 1, m, 6, "1448928000000:3.0 "
		 "1451606400000:3.0 1454284800000:15.0", 1);
	cal_case(TV, TSD_CAL_MONTH, 1, m, 6, "1448884800000:3.0 "
		 "1451563200000:3.0 1454241600000:9.0 1456747200000:6.0", 1);
	cal_case(FJ, TSD_CAL_MONTH, 1, m, 6, "1448881200000 1451559600000 "
		 "1454241600000 1456747200000", 0);
	cal_case(AF, TSD_CAL_MONTH, 1, m, 6, "1448911800000:3.0 "
		 "1451590200000:3.0 1454268600000:15.0", 1);
	cal_case(TV, TSD_CAL_MONTH, 3, m, 6, "1443614400000:3.0 "
		 "1451563200000:18.0", 1);
	/* years: the top of the year in the zone */
	cal_case(NULL, TSD_CAL_YEAR, 1, m, 6, "1420070400000:3.0 "
		 "1451606400000:18.0", 1);

	ok(tsd_cal_previous(NULL, 0, 1, TSD_CAL_DAY) == 0 &&
	   tsd_cal_previous(NULL, B + 1, 1, TSD_CAL_YEAR) == B,
	   "previousInterval at the epoch and a year start");
}

int main(void)
{
	test_times();
	test_parse();
	test_scan_bounds();
	test_aggregate();
	test_agg_functions();
	test_calendar();
	return done_testing();
}
