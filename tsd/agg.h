/*
 * agg.h: OpenTSDB 2.x query math on points in memory: downsampling with
 * fill policies, rates with counter options, and aggregation of several
 * series with interpolation.  Pure; thread safe.
 *
 * The pipeline of one group is OpenTSDB's SpanGroup iterator:
 *
 *   each series: points >= start_ms -> Downsampler or FillingDownsampler
 *                -> RateSpan -> one AggregationIterator over all series
 *
 * with the same integer/float rules: raw integers stay integers through
 * aggregation (avg of integers is an integer division, as in OpenTSDB),
 * downsampled and rate values are doubles.  The comments in agg.c name the
 * OpenTSDB class each step mirrors, quirks included (docs/timeseries.md
 * lists the visible ones).
 */
#ifndef CF_TSD_AGG_H
#define CF_TSD_AGG_H

#include <stddef.h>
#include <stdint.h>

#include "tsd/query.h"

/* A point: timestamp in milliseconds, integer or double value. */
struct tsd_dp {
	int64_t ts;
	int is_float;
	int64_t i;
	double d;
};

/* One series: points in strictly increasing ts order. */
struct tsd_span {
	const struct tsd_dp *dp;
	size_t n;
};

struct tsd_agg_spec {
	enum tsd_agg agg;
	/* SpanGroup bounds in ms: the scan range (hour aligned, see
	 * tsd_scan_bounds()); interpolation may use points in it */
	int64_t start_ms, end_ms;
	/* the query's own bounds: only points in [query_start_ms,
	 * query_end_ms] are returned */
	int64_t query_start_ms, query_end_ms;
	int64_t ds_interval_ms;	/* 0: no downsampling (unless ds_all) */
	int ds_all;
	/* calendar intervals: ds_cal_n units in zone tz (NULL: UTC) */
	int ds_calendar, ds_cal_n;
	enum tsd_cal_unit ds_cal_unit;
	const struct tsd_tz *tz;
	enum tsd_agg ds_agg;
	enum tsd_fill ds_fill;
	int rate, counter, drop_resets;
	int64_t counter_max, reset_value;
};

/* Fills s from a parsed subquery and the query bounds. */
void tsd_agg_spec_init(struct tsd_agg_spec *s, const struct tsd_query *q,
		       const struct tsd_subquery *sq);

/*
 * OpenTSDB's scan bounds for a query (TsdbQuery.getScanStartTimeSeconds
 * and getScanEndTimeSeconds): the first base hour to read and the
 * exclusive end, both in seconds.
 */
void tsd_scan_bounds(const struct tsd_subquery *sq, int64_t start_ms,
		     int64_t end_ms, int64_t *scan_start_s, int64_t *scan_end_s);

/*
 * Runs spans[0..n) through the pipeline and returns the aggregated points
 * in *out (malloc'd array of *nout; caller frees).  Points whose value is
 * NaN (fill policies nan and null) are kept; the caller decides how to
 * print them.  CF_ENOMEM; CF_ERANGE when a value overflows to infinity
 * (OpenTSDB refuses those too).
 */
int tsd_aggregate(const struct tsd_agg_spec *s, const struct tsd_span *spans,
		  size_t n, struct tsd_dp **out, size_t *nout);

/*
 * The same pipeline as an iterator, for results streamed while read: each
 * tsd_agg_iter_next() makes one output point (1, *out set), or says the
 * end (0), or fails (CF_ENOMEM, CF_ERANGE).  Memory: O(n) plus, per
 * series, the values of one downsampling interval; fill policies and
 * long ranges cost time while read, not memory.  spans (and s) must stay
 * valid and unchanged until tsd_agg_iter_free().
 */
struct tsd_agg_iter;
int tsd_agg_iter_new(const struct tsd_agg_spec *s, const struct tsd_span *spans,
		     size_t n, struct tsd_agg_iter **out);
int tsd_agg_iter_next(struct tsd_agg_iter *it, struct tsd_dp *out);
void tsd_agg_iter_free(struct tsd_agg_iter *it);

/*
 * One series through OpenTSDB's per-series chain alone: Downsampler or
 * FillingDownsampler, then RateSpan, as its unit tests build them (the
 * step tsd_agg_iter_new() runs for each series before the merge).
 * Seeks to seek_ms first as AggregationIterator does (SeekableView.seek:
 * with downsampling, to the first whole interval at or after it), or
 * reads every point when seek_ms is INT64_MIN.  Unlike the merge it
 * gives each series' first rate, the one against the point (0, 0).
 * tsd_series_iter_next(): 1 and *out set, 0 at the end, or CF_ENOMEM, or
 * CF_EINVAL when a rate meets a time not after the one before it
 * (OpenTSDB's IllegalStateException; points read from a store are in
 * order).  A first rate at time 0 (a downsampled point of a range read
 * from before 1970, which OpenTSDB refuses) is NaN, not an error.  s and
 * sp must stay valid and unchanged until tsd_series_iter_free().
 */
struct tsd_series_iter;
int tsd_series_iter_new(const struct tsd_agg_spec *s,
			const struct tsd_span *sp, int64_t seek_ms,
			struct tsd_series_iter **out);
int tsd_series_iter_next(struct tsd_series_iter *it, struct tsd_dp *out);
void tsd_series_iter_free(struct tsd_series_iter *it);

/* The aggregators themselves (OpenTSDB's runLong / runDouble) over the
 * values v[0..n), n >= 1, in series order. */
int64_t tsd_agg_long(enum tsd_agg a, const int64_t *v, size_t n);
double tsd_agg_double(enum tsd_agg a, const double *v, size_t n);

#endif
