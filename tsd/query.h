/*
 * query.h: OpenTSDB's query-string form, parsed (pure; no storage).
 *
 *   start=TIME[&end=TIME]&m=SUB[&m=SUB...][&tsuid=TSUB...][&ms]
 *        [&OPTION=VALUE...]
 *   SUB  = AGG:[DOWNSAMPLE:][rate[{counter[,max[,reset]]}]:]METRIC[{TAGS}][{FILTERS}]
 *   TSUB = AGG:[DOWNSAMPLE:][rate[{...}]:]TSUID[,TSUID...]
 *   TSUID = hex: the metric's UID, then tag key and value UIDs (as
 *           /api/search/lookup prints them); one metric for all
 *   TIME = now | N(ms|s|m|h|d|w|n|y)-ago | epoch seconds (<= 10 digits)
 *          | epoch milliseconds | SECONDS.mmm | yyyy/MM/dd[-HH:mm[:ss]] (UTC)
 *   DOWNSAMPLE = N(ms|s|m|h|d|w|n|y)[c]-AGG[-FILL] | 0all-AGG
 *                (c: calendar intervals in the zone of "timezone=")
 *   FILL = none | nan | null | zero
 *   TAGS = TAGK=VALUES,...   (every one also groups by its key)
 *   FILTERS = TAGK=VALUES,... (filters only)
 *   VALUES = v | v1|v2 | * | web* (wildcard, ignoring case)
 *          | literal_or(v1|v2) | iliteral_or(..) | not_literal_or(..)
 *          | not_iliteral_or(..) | wildcard(..) | iwildcard(..)
 *          | regexp(..)   (PCRE2, found anywhere in the value, as Java's
 *                          find())
 *          | not_key()    (series without the key; never groups)
 *
 * Rules follow OpenTSDB's QueryRpc.parseMTypeSubQuery, Tags.parseWith-
 * MetricAndFilters, TagVFilter, DownsamplingSpecification and
 * DateTime.parseDateTimeString; docs/timeseries.md is the user's guide.
 * %XX escapes are decoded in every value.  Unknown parameters are ignored,
 * as OpenTSDB ignores them.
 */
#ifndef CF_TSD_QUERY_H
#define CF_TSD_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "tsd/tz.h"

/* Aggregators (OpenTSDB names in tsd_agg_name()). */
enum tsd_agg {
	TSD_AGG_SUM, TSD_AGG_PFSUM, TSD_AGG_MIN, TSD_AGG_MAX, TSD_AGG_AVG,
	TSD_AGG_MEDIAN, TSD_AGG_NONE, TSD_AGG_MULT, TSD_AGG_DEV,
	TSD_AGG_DIFF, TSD_AGG_ZIMSUM, TSD_AGG_MIMMIN, TSD_AGG_MIMMAX,
	TSD_AGG_SQUARESUM, TSD_AGG_COUNT, TSD_AGG_FIRST, TSD_AGG_LAST,
	TSD_AGG_P999, TSD_AGG_P99, TSD_AGG_P95, TSD_AGG_P90, TSD_AGG_P75,
	TSD_AGG_P50,
	/* estimated percentiles: Commons Math's R-3 and R-7 (on integers;
	 * OpenTSDB computes them on floats as p999 ... p50) */
	TSD_AGG_EP999R3, TSD_AGG_EP99R3, TSD_AGG_EP95R3, TSD_AGG_EP90R3,
	TSD_AGG_EP75R3, TSD_AGG_EP50R3, TSD_AGG_EP999R7, TSD_AGG_EP99R7,
	TSD_AGG_EP95R7, TSD_AGG_EP90R7, TSD_AGG_EP75R7, TSD_AGG_EP50R7,
	TSD_AGG_COUNT_ALL
};

/* How a series missing at a timestamp is filled when aggregating. */
enum tsd_interp {
	TSD_INTERP_LERP,	/* linear interpolation */
	TSD_INTERP_ZIM,		/* zero */
	TSD_INTERP_MAX,		/* the largest value (ignored by min) */
	TSD_INTERP_MIN,		/* the smallest value (ignored by max) */
	TSD_INTERP_PREV		/* the previous value */
};

enum tsd_fill {
	TSD_FILL_NONE,		/* skip empty intervals (interpolate) */
	TSD_FILL_NAN,		/* NaN (printed "NaN") */
	TSD_FILL_NULL,		/* a gap (the point is not printed) */
	TSD_FILL_ZERO		/* 0 */
};

enum tsd_filter_type {
	TSD_FILTER_LITERAL_OR,
	TSD_FILTER_ILITERAL_OR,
	TSD_FILTER_NOT_LITERAL_OR,
	TSD_FILTER_NOT_ILITERAL_OR,
	TSD_FILTER_WILDCARD,
	TSD_FILTER_IWILDCARD,
	TSD_FILTER_REGEXP,
	TSD_FILTER_NOT_KEY	/* the series has no such tag key */
};

struct tsd_filter {
	char *tagk;
	enum tsd_filter_type type;
	char **values;		/* literal_or kinds: the alternatives */
	size_t nvalues;
	char *pattern;		/* wildcard kinds and regexp */
	void *regex;		/* compiled regexp (pcre2_code, 8-bit) */
	int group_by;
	int icase;		/* a wildcard written without "wildcard(":
				 * "web*" matches WEB01, as OpenTSDB's
				 * TagVFilter.getFilter shortcut does */
	char *text;		/* the expression as written (TagVFilter's
				 * filter: "web01|web02", "web*") */
};

struct tsd_subquery {
	char *metric;		/* NULL in a tsuid= sub query */
	char **tsuids;		/* tsuid=: the TSUIDs as written (hex) */
	size_t ntsuids;
	enum tsd_agg agg;
	/* downsampling: ds_interval_ms 0 means none (unless ds_all) */
	int64_t ds_interval_ms;
	int ds_all;		/* "0all": one value over the whole range */
	/* calendar intervals ("1dc"): ds_cal_n units of ds_cal_unit in the
	 * query's zone; ds_interval_ms still holds the plain duration, which
	 * OpenTSDB uses for the scan bounds */
	int ds_calendar;
	int ds_cal_n;
	enum tsd_cal_unit ds_cal_unit;
	enum tsd_agg ds_agg;
	enum tsd_fill ds_fill;
	char *ds_text;		/* the specifier as written, or NULL */
	/* rate */
	int rate;
	int rate_opts;		/* rate{...}: options were given */
	int counter;
	int drop_resets;
	int64_t counter_max;	/* default INT64_MAX */
	int64_t reset_value;	/* default 0 */
	struct tsd_filter *filters;
	size_t nfilters;
	int explicit_tags;
};

struct tsd_query {
	int64_t start_ms;
	int64_t end_ms;
	int ms;			/* "ms": print timestamps in milliseconds */
	int show_query;		/* "show_query": each JSON result carries
				 * its sub query (OpenTSDB's showQuery) */
	int arrays;		/* "arrays": JSON "dps" as [[TS,VALUE],...]
				 * (OpenTSDB 2.4) */
	int show_tsuids;	/* "show_tsuids": each JSON result lists
				 * the TSUIDs of its series */
	int no_annotations;	/* "no_annotations": JSON results without
				 * the series' annotations */
	int global_annotations;	/* "global_annotations": JSON results
				 * with the global ones of the range */
	int show_stats;		/* "show_stats": each JSON result carries
				 * its sub query's statistics */
	int show_summary;	/* "show_summary": the JSON answer ends
				 * with {"statsSummary":{...}} */
	/* subs: in the order written (/api/query's GET puts the tsuid= ones
	 * first, as OpenTSDB numbers them) */
	struct tsd_tz *tz;	/* "timezone=": calendar downsampling and
				 * dates; NULL: UTC */
	struct tsd_subquery *subs;
	size_t nsubs;
	/* exp= (read with TSD_QUERY_EXP): the expressions as written, in
	 * order; whoever parses them (tsd/expr.h) adds their metric queries
	 * to subs with tsd_query_add_m() */
	char **exps;
	size_t nexps;
	int gexp;		/* the answer is the expressions' results
				 * (TSD_QUERY_GEXP, or an exp= given) */
	/* graph options (OpenTSDB's /q parameters) */
	int width, height;	/* wxh=800x600 */
	char *title;
	char *ylabel;
	char *yrange;		/* "[lo:hi]" */
	int ylog;
	char *key;		/* "top left", "out", ... */
	int nokey;
};

/* The OpenTSDB name of an aggregator; its interpolation. */
const char *tsd_agg_name(enum tsd_agg a);
enum tsd_interp tsd_agg_interp(enum tsd_agg a);
/* Looks an aggregator up by name (n bytes).  CF_ENOTFOUND. */
int tsd_agg_lookup(const char *name, size_t n, enum tsd_agg *out);

/*
 * Parses the query string qs[0..len) (a leading "?" or "q?" is skipped).
 * now_ms resolves relative times.  On success q owns its memory until
 * tsd_query_release().  CF_EINVAL with a reason in why[0..whylen);
 * CF_ENOMEM.  q is released on failure.
 */
int tsd_query_parse(const char *qs, size_t len, int64_t now_ms,
		    struct tsd_query *q, char *why, size_t whylen);

/* tsd_query_parse with flags: TSD_QUERY_EXP keeps exp= parameters
 * (OpenTSDB's /api/query/gexp and MNT/tsd/q/; without it they are
 * ignored, as /api/query ignores them) in q->exps, and a query of
 * expressions only is not missing its sub queries; TSD_QUERY_GEXP also
 * makes the answer the expressions' results only, even with none. */
#define TSD_QUERY_EXP 0x100
#define TSD_QUERY_GEXP 0x200
int tsd_query_parse_flags(const char *qs, size_t len, int64_t now_ms,
			  unsigned flags, struct tsd_query *q, char *why,
			  size_t whylen);
/* Adds the m= sub query s[0..n) to q (an expression's metric query).
 * CF_EINVAL with why, CF_ENOMEM. */
int tsd_query_add_m(struct tsd_query *q, const char *s, size_t n,
		    char *why, size_t whylen);
void tsd_query_release(struct tsd_query *q);

/* OpenTSDB's DateTime.parseDuration: "N" followed by ms, s, m, h, d, w, n
 * (30 days) or y (365 days), N > 0; the result in milliseconds.
 * CF_EINVAL. */
int tsd_parse_duration(const char *s, size_t len, int64_t *ms);
/* DateTime.parseDateTimeString (see the grammar above); milliseconds.
 * CF_EINVAL. */
int tsd_parse_time(const char *s, size_t len, int64_t now_ms, int64_t *ms);

/* 1 if value (vlen bytes) passes filter f; value NULL: the series has
 * no tag of f's key, which passes only not_key. */
int tsd_filter_match(const struct tsd_filter *f, const char *value,
		     size_t vlen);

/* s[0..n) with its %XX escapes decoded, as a new string (malloc'd; the
 * caller frees it), or NULL when out of memory: query strings and the
 * names of series lookups (tsd/lookup.c). */
char *tsd_pct_decode(const char *s, size_t n);

/* The parameters names[0..n) of query string qs[0..len) into vals[i]
 * (%XX decoded, malloc'd, the caller frees them; "" for one without '=';
 * the last of one given twice), NULL for those not given.  CF_EINVAL
 * ("unknown parameter: K" in why) for any other name, CF_ENOMEM; on
 * error every vals[i] is freed and NULL.  The names of MNT/tsd/'s meta
 * files. */
int tsd_qs_take(const char *qs, size_t len, const char *const *names,
		size_t n, char **vals, char *why, size_t whylen);

/* s[0..n) as a new string (malloc'd; the caller frees it), bytes as they
 * are (a NUL among them kept, unlike strndup), or NULL when out of
 * memory. */
char *tsd_dupn(const char *s, size_t n);

#endif
