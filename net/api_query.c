/*
 * api_query.c: /api/query and /api/query/last (OpenTSDB's QueryRpc;
 * docs/api.md).
 *
 * GET passes its query string to tsd_query_open() as MNT/tsd/q/ does;
 * POST turns OpenTSDB's JSON query (TSQuery, TSSubQuery) into the same
 * query string, so both run the one engine.  The answer is the result in
 * TSD_FMT_JSON.
 *
 * Memory: the query's points (tsd_options.max_query_points bounds them;
 * past it 413) and the answer's text (at most NET_REPLY_MAX, past it
 * 413), plus for POST the parsed JSON of a body of at most NET_BODY_MAX.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/internal.h"
#include "tsd/number.h"
#include "util/env.h"
#include "util/err.h"
#include "util/log.h"

/* Appends s with the bytes that a query string gives a meaning to
 * ('&', '%', '#', '+', controls, space) as %XX. */
static int put_escaped(struct buf *b, const char *s, size_t n)
{
	int rc = CF_OK;

	for (size_t i = 0; i < n && rc == CF_OK; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c <= ' ' || c == '&' || c == '%' || c == '#' || c == '+' ||
		    c == 0x7f)
			rc = buf_printf(b, "%%%02X", c);
		else
			rc = buf_putc(b, c);
	}
	return rc;
}

static int put_str(struct buf *b, json_t *v)
{
	return put_escaped(b, json_string_value(v), json_string_length(v));
}

/* A time of the JSON query: a string as the query string takes it, or
 * an integer of epoch seconds or milliseconds. */
static int put_time(struct buf *b, const char *key, json_t *v)
{
	if (json_is_string(v))
		return buf_printf(b, "&%s=", key) || put_str(b, v);
	if (json_is_integer(v))
		return buf_printf(b, "&%s=%lld", key,
				  (long long)json_integer_value(v));
	return -1;
}

/* The TSUIDs of a tsuid query: T1,T2,...  why set on a refusal. */
static int put_tsuid_list(struct buf *b, json_t *ts, const char **why)
{
	json_t *v;
	size_t i;

	json_array_foreach(ts, i, v) {
		if (!json_is_string(v))
			return *why = "a TSUID is not a string", 1;
		if ((i && buf_putc(b, ',')) || put_str(b, v))
			return -1;
	}
	return 0;
}

/* OpenTSDB's RateOptions as the JSON of a sub query gives them: rate
 * appended as rate{[drop]counter,MAX,RESET} when counter is set.
 * RateOptions has no @JsonIgnoreProperties, so a field Jackson does not
 * know refuses the query, and so does a value of the wrong type (1 with
 * why and jwhy). */
static int put_rate_options(struct buf *b, json_t *ro, const char **why,
			    char *jwhy, size_t jn)
{
	static const char *const known[] = { "counter", "isCounter",
		"counterMax", "resetValue", "dropResets" };
	long long max = 0, rst = 0;
	int counter = 0, drop = 0, bad = 0;
	json_t *v, *mx, *rs;
	const char *k;

	if (!ro || json_is_null(ro))
		return 0;
	*why = "Unable to parse the given JSON";
	if (!json_is_object(ro)) {
		snprintf(jwhy, jn, "Cannot construct instance of "
			 "`net.opentsdb.core.RateOptions`: rateOptions is "
			 "not an object");
		return 1;
	}
	/* in the order written: counter and isCounter set one field, the
	 * last of them wins */
	json_object_foreach(ro, k, v) {
		size_t i = 0;
		while (i < sizeof known / sizeof known[0] && strcmp(k, known[i]))
			i++;
		if (i == sizeof known / sizeof known[0]) {
			snprintf(jwhy, jn, "Unrecognized field \"%.80s\" "
				 "(class net.opentsdb.core.RateOptions), not "
				 "marked as ignorable", k);
			return 1;
		}
		bad = i < 2 ? net_jackson_bool(v, &counter, jwhy, jn) :
		      i == 4 ? net_jackson_bool(v, &drop, jwhy, jn) :
		      net_jackson_long(v, i == 2 ? &max : &rst, "long", jwhy, jn);
		if (bad)
			return 1;
	}
	mx = json_object_get(ro, "counterMax");
	rs = json_object_get(ro, "resetValue");
	*why = NULL;
	if (!counter)
		return 0;
	if (buf_printf(b, "{%scounter,", drop ? "drop" : ""))
		return -1;
	if (mx && buf_printf(b, "%lld", max))
		return -1;
	if (buf_putc(b, ','))
		return -1;
	if (rs && buf_printf(b, "%lld", rst))
		return -1;
	return buf_putc(b, '}') ? -1 : 0;
}

/* One sub query as m=AGG:[DS:][rate{...}:][explicit_tags:]METRIC
 * {GROUPBY}{FILTERS}, or with a non-empty "tsuids" (which OpenTSDB
 * prefers to the metric) tsuid=AGG:[DS:][rate{...}:]T1,T2,...  why set
 * on a refusal (returns 1). */
static int put_sub(struct buf *b, json_t *s, int calendar, const char **why,
		   char *jwhy, size_t jn)
{
	json_t *agg = json_object_get(s, "aggregator");
	json_t *m = json_object_get(s, "metric");
	json_t *ds = json_object_get(s, "downsample");
	json_t *ro = json_object_get(s, "rateOptions");
	json_t *tags = json_object_get(s, "tags");
	json_t *filters = json_object_get(s, "filters");
	json_t *ts = json_object_get(s, "tsuids");
	int by_tsuid = json_is_array(ts) && json_array_size(ts);
	int rate, explicit_tags, r;
	json_t *v, *f;
	const char *k;
	size_t i;
	int first;

	if (!json_is_object(s))
		return *why = "a query is not an object", 1;
	if (net_jackson_bool(json_object_get(s, "rate"), &rate, jwhy, jn) ||
	    net_jackson_bool(json_object_get(s, "explicitTags"), &explicit_tags, jwhy,
		  jn))
		return *why = "Unable to parse the given JSON", 1;
	if (!json_is_string(agg) || !json_string_length(agg))
		return *why = "Missing the aggregation function", 1;
	if (!by_tsuid && (!json_is_string(m) || !json_string_length(m)))
		return *why = "Missing the metric or tsuids, provide at "
			      "least one", 1;
	if (buf_append(b, by_tsuid ? "&tsuid=" : "&m=", by_tsuid ? 7 : 3) ||
	    put_str(b, agg) || buf_putc(b, ':'))
		return -1;
	if (json_is_string(ds) && json_string_length(ds)) {
		/* TSQuery's useCalendar: the interval in calendar units
		 * ("1d-avg" as "1dc-avg"); not "0all" */
		const char *d = json_string_value(ds);
		size_t dl = json_string_length(ds), il = strcspn(d, "-");
		int c = calendar && il < dl && il > 0 && d[il - 1] != 'c' &&
			!(il >= 3 && !memcmp(d + il - 3, "all", 3));
		if (put_escaped(b, d, il) || (c && buf_putc(b, 'c')) ||
		    put_escaped(b, d + il, dl - il) || buf_putc(b, ':'))
			return -1;
	}
	if (rate) {
		if (buf_append(b, "rate", 4))
			return -1;
		if ((r = put_rate_options(b, ro, why, jwhy, jn)))
			return r;
		if (buf_putc(b, ':'))
			return -1;
	} else {
		/* read whether or not they are used */
		struct buf none = BUF_INIT;
		r = put_rate_options(&none, ro, why, jwhy, jn);
		buf_release(&none);
		if (r)
			return r;
	}
	if (by_tsuid)
		return put_tsuid_list(b, ts, why);
	if (explicit_tags &&
	    buf_append(b, "explicit_tags:", 14))
		return -1;
	if (put_str(b, m))
		return -1;
	/* group by: the tags map and the filters with groupBy */
	if (buf_putc(b, '{'))
		return -1;
	first = 1;
	json_object_foreach(tags, k, v) {
		if (!json_is_string(v))
			return *why = "a tag value is not a string", 1;
		if ((!first && buf_putc(b, ',')) ||
		    put_escaped(b, k, strlen(k)) || buf_putc(b, '=') ||
		    put_str(b, v))
			return -1;
		first = 0;
	}
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			if (buf_append(b, "}{", 2))
				return -1;
			first = 1;
		}
		json_array_foreach(filters, i, f) {
			json_t *ty = json_object_get(f, "type");
			json_t *tk = json_object_get(f, "tagk");
			json_t *fl = json_object_get(f, "filter");
			int gb;
			if (net_jackson_bool(json_object_get(f, "groupBy"), &gb, jwhy,
				  jn))
				return *why = "Unable to parse the given JSON",
				       1;
			if (gb != (pass == 0))
				continue;
			/* TagVFilter.Builder.build; a null filter is
			 * empty (not_key's, refused by the others) */
			if (!json_is_string(ty) || !json_string_length(ty))
				return *why = "The filter type cannot be null "
					      "or empty", 1;
			if (!json_is_string(tk) || !json_string_length(tk))
				return *why = "The tagk cannot be null or "
					      "empty", 1;
			if (fl && !json_is_null(fl) && !json_is_string(fl))
				return *why = "a filter's filter is not a "
					      "string", 1;
			if ((!first && buf_putc(b, ',')) || put_str(b, tk) ||
			    buf_putc(b, '=') || put_str(b, ty) ||
			    buf_putc(b, '(') ||
			    (json_is_string(fl) && put_str(b, fl)) ||
			    buf_putc(b, ')'))
				return -1;
			first = 0;
		}
	}
	return buf_putc(b, '}') ? -1 : 0;
}

/* The query string of a JSON query body, *del its "delete" (TSQuery's).
 * 0, 1 with why, -1 no memory. */
static int json_query(const char *body, size_t len, struct buf *qs,
		      int *del, const char **why, char *jwhy, size_t jn)
{
	json_error_t jerr;
	json_t *root = json_loadb(body, len, 0, &jerr), *subs, *s, *v;
	size_t i;
	int rc = 0, calendar = 0;

	if (!root) {
		snprintf(jwhy, jn, "%s", jerr.text);
		*why = "Unable to parse the given JSON";
		return 1;
	}
	if (!json_is_object(root)) {
		*why = "Unable to parse the given JSON";
		snprintf(jwhy, jn, "the query is not a JSON object");
		rc = 1;
		goto out;
	}
	/* TSQuery.validateAndSetQuery: an empty start is none, an empty
	 * end now */
	v = json_object_get(root, "start");
	if ((json_is_string(v) && !json_string_length(v)) ||
	    put_time(qs, "start", v)) {
		*why = "Missing start time";
		rc = 1;
		goto out;
	}
	v = json_object_get(root, "end");
	if (v && !json_is_null(v) &&
	    !(json_is_string(v) && !json_string_length(v)) &&
	    put_time(qs, "end", v)) {
		*why = "Invalid end time";
		rc = 1;
		goto out;
	}
	{
		/* TSQuery's booleans, and the query string each asks for */
		static const struct { const char *key, *arg; } flags[] = {
			{ "msResolution", "&ms" },
			/* Grafana's data source (version 2.3) asks for it
			 * and finds each result's target by its index */
			{ "showQuery", "&show_query" },
			{ "showTSUIDs", "&show_tsuids" },
			{ "showStats", "&show_stats" },
			{ "showSummary", "&show_summary" },
			/* Grafana's annotation queries ask for these */
			{ "noAnnotations", "&no_annotations" },
			{ "globalAnnotations", "&global_annotations" },
		};
		int on;
		for (i = 0; i < sizeof flags / sizeof flags[0]; i++) {
			if (net_jackson_bool(json_object_get(root, flags[i].key), &on,
				  jwhy, jn)) {
				*why = "Unable to parse the given JSON";
				rc = 1;
				goto out;
			}
			/* msResolution, which "ms" asks for too */
			if (i == 0 && json_is_true(json_object_get(root, "ms")))
				on = 1;
			if (on && buf_append(qs, flags[i].arg,
					     strlen(flags[i].arg)))
				rc = -1;
		}
		if (net_jackson_bool(json_object_get(root, "delete"), del, jwhy, jn) ||
		    net_jackson_bool(json_object_get(root, "useCalendar"), &calendar,
			  jwhy, jn)) {
			*why = "Unable to parse the given JSON";
			rc = 1;
			goto out;
		}
	}
	subs = json_object_get(root, "queries");
	if (!json_is_array(subs) || json_array_size(subs) == 0) {
		*why = "Missing queries";
		rc = 1;
		goto out;
	}
	/* TSQuery's timezone: of the dates and, with useCalendar, of the
	 * calendar intervals */
	v = json_object_get(root, "timezone");
	if (rc == 0 && json_is_string(v) && json_string_length(v) &&
	    (buf_append(qs, "&timezone=", 10) || put_str(qs, v)))
		rc = -1;
	json_array_foreach(subs, i, s)
		if (rc == 0)
			rc = put_sub(qs, s, calendar, why, jwhy, jn);
out:
	json_decref(root);
	return rc;
}

/* OpenTSDB's NoSuchUniqueName message for tsd's "no such ...: X". */
static void nsun(const char *reason, char *msg, size_t n)
{
	static const struct { const char *pre, *kind; } k[] = {
		{ "no such metric: ", "metrics" },
		{ "no such tag key: ", "tagk" },
		{ "no such tag value: ", "tagv" },
	};
	for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
		size_t pl = strlen(k[i].pre);
		if (!strncmp(reason, k[i].pre, pl)) {
			snprintf(msg, n, "No such name for '%s': '%s'",
				 k[i].kind, reason + pl);
			return;
		}
	}
	snprintf(msg, n, "%s", reason);
}

static int query_failed(struct net_req *r, int rc, const struct tsd_error *e);

/* The tsd layer of the mount into *t: CF_OK, an engine error, or 1 with
 * the answer set (nothing was ever written: OpenTSDB's unknown metric). */
static int get_tsd(struct net_req *r, tsd **t)
{
	int rc = r->get(0, t);

	if (rc == CF_ENOTFOUND) {
		net_error(r, 400, "No such name for 'metrics': no data point "
			  "was ever written", NULL);
		return 1;
	}
	return rc;
}

/* Runs qs and puts its answer in format fmt (or the error) into r. */
static int run_as(struct net_req *r, const char *qs, size_t len,
		  enum tsd_format fmt)
{
	struct tsd_error err;
	tsd_cursor *c = NULL;
	tsd *t;
	int rc;

	err.reason[0] = '\0';
	if ((rc = get_tsd(r, &t)) > 0)
		return 0;
	if (rc == CF_OK)
		rc = tsd_query_open(t, qs, len, fmt, &c, &err);
	if (rc == CF_OK) {
		size_t got;
		do {
			if (r->out.len > NET_REPLY_MAX) {
				rc = CF_ETOOBIG;
				break;
			}
			if ((rc = buf_reserve(&r->out, 1 << 16)))
				break;
			rc = tsd_cursor_pread(c, r->out.p + r->out.len,
					      r->out.cap - r->out.len,
					      r->out.len, &got);
			r->out.len += got;
		} while (rc == CF_OK && got);
		tsd_cursor_close(c);
		if (rc == CF_OK) {
			r->status = 200;
			return 0;
		}
	}
	buf_release(&r->out);
	return query_failed(r, rc, &err);
}

/* The answer to a query that failed with rc (err says why). */
static int query_failed(struct net_req *r, int rc, const struct tsd_error *e)
{
	struct tsd_error err = *e;
	char msg[400];

	switch (rc) {
	case CF_EINVAL:
		cf_log(CF_LOG_WARN, "tsd http: query: %s", err.reason);
		return net_error(r, 400, err.reason, NULL);
	case CF_ENOTFOUND:
		nsun(err.reason, msg, sizeof msg);
		cf_log(CF_LOG_WARN, "tsd http: query: %s", msg);
		return net_error(r, 400, msg, msg);
	case CF_ETOOBIG:
		cf_log(CF_LOG_WARN, "tsd http: query: %s", err.reason[0] ?
		       err.reason : "answer over 256 MiB");
		return net_error(r, 413, "Sorry, you have attempted to fetch "
				 "more data than this TSD allows", err.reason);
	default:
		snprintf(msg, sizeof msg, "%s%s%s", cf_strerror(rc),
			 err.reason[0] ? ": " : "", err.reason);
		cf_log(CF_LOG_ERROR, "tsd http: query: %s", msg);
		return net_error(r, 500, msg, NULL);
	}
}

/* Runs qs and puts its JSON answer (or error) into r. */
static int run(struct net_req *r, const char *qs, size_t len)
{
	return run_as(r, qs, len, TSD_FMT_JSON);
}

/* /q (OpenTSDB's GraphHandler, what its GUI and old scripts ask): the
 * query string of /api/query's GET with one of ascii (the points as
 * text lines), png (the graph) or json (what the graph would hold:
 * tsd.h's TSD_FMT_GRAPH_JSON); without one OpenTSDB sends the browser
 * to its GUI, which cellfs does not have. */
int net_api_graph(struct net_req *r)
{
	enum tsd_format fmt;
	int rc;

	if (strcmp(r->method, "GET") && strcmp(r->method, "POST"))
		return net_bad_method(r);
	if (net_arg(r, "ascii"))
		fmt = TSD_FMT_TEXT;
	else if (net_arg(r, "png"))
		fmt = TSD_FMT_PNG;
	else if (net_arg(r, "json"))
		fmt = TSD_FMT_GRAPH_JSON;
	else
		return net_error(r, 400, "Missing one of the parameters "
				 "<code>ascii</code>, <code>png</code> or "
				 "<code>json</code>", "cellfs serves no GUI");
	if (!net_arg(r, "start"))
		return net_error(r, 400, "Missing parameter <code>start</code>",
				 NULL);
	rc = run_as(r, r->query, strlen(r->query), fmt);
	if (r->status == 200)
		r->ctype = fmt == TSD_FMT_PNG ? "image/png" :
			   fmt == TSD_FMT_TEXT ? "text/plain; charset=UTF-8" :
			   NULL;
	return rc;
}

/* OpenTSDB's QueryRpc reads a GET's tsuid= sub queries before its m=
 * ones, so they come first in the answer and take the first indexes:
 * the query string with its tsuid= items moved ahead of the rest (the
 * parser keeps the order written). */
static int tsuids_first(const char *q, struct buf *out)
{
	size_t len = strlen(q);
	int rc = CF_OK;

	for (int pass = 0; pass < 2 && rc == CF_OK; pass++)
		for (size_t b = 0, i = 0; i <= len && rc == CF_OK; i++) {
			if (i < len && q[i] != '&')
				continue;
			int t = i - b >= 6 && !memcmp(q + b, "tsuid=", 6);
			if (i > b && t == (pass == 0))
				rc = buf_putc(out, '&') ||
				     buf_append(out, q + b, i - b) ? -1 : 0;
			b = i + 1;
		}
	return rc;
}

/* The answer of a delete query when the TSD does not serve them. */
static int no_delete(struct net_req *r)
{
	cf_log(CF_LOG_WARN, "tsd http: query: a delete refused (tsd_allow_delete "
	       "is off)");
	return net_error(r, 400, "Bad request", "Deleting data is not enabled "
			 "(tsd.http.query.allow_delete=false)");
}

/* Runs qs; with del, once its answer is made, deletes what it read
 * (QueryRpc with TsdbQuery.setDelete: the answer shows the data as it
 * was).  A failed delete replaces the answer with its error. */
static int run_del(struct net_req *r, const char *qs, size_t len, int del)
{
	struct tsd_error err;
	uint64_t rows;
	tsd *t;
	int rc;

	run(r, qs, len);
	if (!del || r->status != 200)
		return 0;
	err.reason[0] = '\0';
	if ((rc = r->get(0, &t)) == CF_OK)
		rc = tsd_query_delete(t, qs, len, &rows, &err);
	if (rc == CF_OK)
		return 0;
	buf_release(&r->out);
	cf_log(CF_LOG_ERROR, "tsd http: query delete: %s%s%s",
	       cf_strerror(rc), err.reason[0] ? ": " : "", err.reason);
	return net_error(r, 500, cf_strerror(rc), err.reason);
}

int net_api_query(struct net_req *r)
{
	struct buf qs = BUF_INIT;
	const char *why = NULL, *m = net_method(r);
	char jwhy[200] = "";
	int rc, del, jdel = 0;

	if (!m)
		return 0;
	/* RpcUtil.allowedMethods(GET, DELETE, POST), then a DELETE
	 * refused unless tsd.http.query.allow_delete; a GET's override
	 * asks for a delete too */
	if (strcmp(r->method, "GET") && strcmp(r->method, "POST") &&
	    strcmp(r->method, "DELETE"))
		return net_bad_method(r);
	del = !strcmp(m, "DELETE");
	if (del && !r->allow_delete)
		return no_delete(r);
	if (strcmp(r->method, "POST")) {
		if (!strstr(r->query, "tsuid="))
			return run_del(r, r->query, strlen(r->query), del);
		if (tsuids_first(r->query, &qs))
			net_error(r, 500, "out of memory", NULL);
		else
			run_del(r, (const char *)qs.p, qs.len, del);
		buf_release(&qs);
		return 0;
	}
	if (!net_has_body(r))
		return net_no_body(r);
	rc = json_query(r->body, r->body_len, &qs, &jdel, &why, jwhy,
			sizeof jwhy);
	/* ?arrays on the URL, as OpenTSDB 2.4 reads it for POST too
	 * (Grafana's data source set to 2.4 asks for it) */
	if (rc == 0 && net_arg(r, "arrays") && buf_append(&qs, "&arrays", 7))
		rc = -1;
	if (rc == 0 && jdel && !r->allow_delete)
		no_delete(r);
	else if (rc == 0)
		run_del(r, (const char *)qs.p, qs.len, jdel);
	else if (rc == 1)
		net_error(r, 400, why, jwhy);
	else
		net_error(r, 500, "out of memory", NULL);
	buf_release(&qs);
	return 0;
}

/* /api/query/gexp (QueryRpc.handleQuery with expressions): the query
 * string of /api/query's GET whose exp= parameters (tsd/expr.h) are
 * evaluated over their metric queries; the answer holds the
 * expressions' results only.  OpenTSDB reads no expression from a POST
 * body (it fails with a NullPointerException): cellfs takes GET only. */
int net_api_query_gexp(struct net_req *r)
{
	if (!net_method(r))
		return 0;
	if (strcmp(r->method, "GET"))
		return net_bad_method(r);
	return run_as(r, r->query, strlen(r->query),
		      (enum tsd_format)(TSD_FMT_JSON | TSD_FMT_GEXP));
}

/* /api/query/exp (QueryRpc.handleExpressionQuery): the JSON query of
 * metrics, filters, expressions and outputs in the body, answered by
 * tsd_query_exp() (docs/api.md). */
int net_api_query_exp(struct net_req *r)
{
	struct tsd_error err;
	tsd *t;
	int rc;

	if (!net_method(r))
		return 0;
	if (strcmp(r->method, "GET") && strcmp(r->method, "POST"))
		return net_bad_method(r);
	if (!net_has_body(r))
		return net_no_body(r);
	err.reason[0] = '\0';
	if ((rc = get_tsd(r, &t)) > 0)
		return 0;
	if (rc == CF_OK)
		rc = tsd_query_exp(t, r->body, r->body_len, &r->out, &err);
	if (rc == CF_OK && r->out.len > NET_REPLY_MAX)
		rc = CF_ETOOBIG;
	if (rc == CF_OK) {
		r->status = 200;
		return 0;
	}
	buf_release(&r->out);
	return query_failed(r, rc, &err);
}

/* The hours of a tsdb row (OpenTSDB's Const.MAX_TIMESPAN). */
#define ROW_SPAN_S 3600

/* /api/query/last (QueryRpc.handleLastDataPointQuery, LastPointQuery):
 * its sub queries, each a series spec (METRIC{TAGK=TAGV,...}) or one
 * TSUID, in the order given. */
struct lastq {
	struct buf specs;	/* NUL-separated */
	unsigned char *tsuid;	/* per spec: 1 a TSUID */
	size_t n, cap;
};

static int last_add(struct lastq *l, const char *s, size_t len, int tsuid)
{
	if (l->n == l->cap) {
		size_t nc = l->cap ? 2 * l->cap : 8;
		unsigned char *p = realloc(l->tsuid, nc);
		if (!p)
			return -1;
		l->tsuid = p;
		l->cap = nc;
	}
	if (buf_append(&l->specs, s, len) || buf_putc(&l->specs, '\0'))
		return -1;
	l->tsuid[l->n++] = (unsigned char)tsuid;
	return 0;
}

static int last_ts_arg(void *arg, const char *v)
{
	return last_add(arg, v, strlen(v), 0);
}

/* tsuids=A,B: one sub query of each TSUID (LastPointSubQuery's split) */
static int last_tsuids_arg(void *arg, const char *v)
{
	for (const char *p = v;; p++) {
		size_t n = strcspn(p, ",");
		if (last_add(arg, p, n, 1))
			return -1;
		p += n;
		if (!*p)
			return 0;
	}
}

/* The sub queries of a POST body ({"queries":[{"metric":M,"tags":{..}} or
 * {"tsuids":[..]}],"resolveNames":B,"backScan":N}).  0; 1 with why. */
static int last_json(json_t *root, struct lastq *l, int *resolve,
		     long *back, int *has_back, const char **why,
		     char *jwhy, size_t jn)
{
	json_t *qs = json_object_get(root, "queries"), *q, *v;
	size_t i, j;
	long long bs;

	*why = "Unable to parse the given JSON";
	if (!json_is_object(root))
		return 1;
	/* LastPointQuery and LastPointSubQuery have no
	 * @JsonIgnoreProperties: Jackson refuses a field they lack */
	if (net_jackson_unknown(root, "resolveNames\0backScan\0queries\0",
			  "net.opentsdb.tsd.QueryRpc$LastPointQuery", jwhy, jn))
		return 1;
	if (net_jackson_bool(json_object_get(root, "resolveNames"), resolve, jwhy, jn))
		return 1;
	if ((v = json_object_get(root, "backScan"))) {
		/* an int field: Jackson's _parseIntPrimitive */
		if (net_jackson_long(v, &bs, "int", jwhy, jn))
			return 1;
		if (bs > INT32_MAX || bs < INT32_MIN) {
			snprintf(jwhy, jn, "Numeric value (%lld) out of range "
				 "of int", bs);
			return 1;
		}
		*back = (long)bs;
		*has_back = 1;
	}
	if (qs && !json_is_array(qs))
		return 1;
	json_array_foreach(qs, i, q) {
		json_t *ts = json_object_get(q, "tsuids"), *tags;
		const char *m, *k;
		struct buf spec = BUF_INIT;
		int rc = 0;

		if (!json_is_object(q))
			return 1;
		if (net_jackson_unknown(q, "metric\0tags\0tsuids\0",
				  "net.opentsdb.tsd.QueryRpc$LastPointSubQuery",
				  jwhy, jn))
			return 1;
		if (json_is_array(ts) && json_array_size(ts)) {
			json_array_foreach(ts, j, v) {
				if (!json_is_string(v))
					return 1;
				if (last_add(l, json_string_value(v),
					     json_string_length(v), 1))
					return -1;
			}
			continue;
		}
		m = json_string_value(json_object_get(q, "metric"));
		if (!m || !*m) {
			*why = "Metric cannot be null or empty";
			return 1;
		}
		tags = json_object_get(q, "tags");
		rc = buf_append(&spec, m, strlen(m)) ? -1 : 0;
		if (json_object_size(tags)) {
			int first = 1;
			rc = rc ? rc : buf_putc(&spec, '{') ? -1 : 0;
			json_object_foreach(tags, k, v) {
				if (!json_is_string(v)) {
					buf_release(&spec);
					return 1;
				}
				if (rc == 0 && ((!first && buf_putc(&spec, ',')) ||
				    buf_printf(&spec, "%s=%s", k,
					       json_string_value(v))))
					rc = -1;
				first = 0;
			}
			rc = rc ? rc : buf_putc(&spec, '}') ? -1 : 0;
		}
		if (rc == 0)
			rc = last_add(l, (const char *)spec.p, spec.len, 0);
		buf_release(&spec);
		if (rc)
			return rc;
	}
	return 0;
}

/* The value of a point of a JSON answer as LastPointCB prints it
 * (Number.toString of the stored value). */
static json_t *last_value(json_t *v)
{
	char d[TSD_DOUBLE_MAX];

	if (json_is_integer(v))
		return json_sprintf("%" PRId64, (int64_t)json_integer_value(v));
	if (json_is_real(v)) {
		tsd_format_double(d, json_real_value(v));
		return json_string(d);
	}
	return json_is_string(v) ? json_incref(v) : json_string("null");
}

/* One sub query: the last point of each series it names in the hours
 * [from, to) (seconds), appended to arr as IncomingDataPoints. */
static int last_of(struct net_req *r, const char *spec, int tsuid,
		   int exact, int resolve, int64_t from, int64_t to,
		   json_t *arr)
{
	struct buf qs = BUF_INIT;
	json_t *res, *s;
	size_t i;

	if (from < 0)
		from = 0;
	if (buf_printf(&qs, "start=%" PRId64 "&end=%" PRId64
		       "&ms&show_tsuids&no_annotations&%s=none:%s", from,
		       to - 1, tsuid ? "tsuid" : "m",
		       exact ? "explicit_tags:" : "") ||
	    put_escaped(&qs, spec, strlen(spec))) {
		buf_release(&qs);
		return net_error(r, 500, "out of memory", NULL);
	}
	run(r, (const char *)qs.p, qs.len);
	buf_release(&qs);
	if (r->status != 200)
		return -1;
	res = json_loadb((char *)r->out.p, r->out.len, 0, NULL);
	buf_reset(&r->out);
	json_array_foreach(res, i, s) {
		json_t *dps = json_object_get(s, "dps"), *o, *v = NULL;
		json_t *ids = json_object_get(s, "tsuids");
		const char *k, *lastk = NULL;

		json_object_foreach(dps, k, o) {
			lastk = k;
			v = o;
		}
		if (!lastk)
			continue;
		/* IncomingDataPoint's fields, the names only when resolved
		 * (Jackson's NON_NULL) */
		o = json_object();
		if (resolve)
			json_object_set(o, "metric", json_object_get(s, "metric"));
		json_object_set_new(o, "timestamp",
				    json_integer(strtoll(lastk, NULL, 10)));
		json_object_set_new(o, "value", last_value(v));
		if (resolve)
			json_object_set(o, "tags", json_object_get(s, "tags"));
		json_object_set(o, "tsuid", json_array_get(ids, 0));
		json_array_append_new(arr, o);
	}
	json_decref(res);
	return 0;
}

struct last_ctr {
	struct net_req *r;
	int resolve;
	json_t *arr;
};

/* One series' counter: the newest point of the counter's hour and the
 * hour before it (a point written just before an hour ends may be
 * counted just after). */
static int last_ctr_one(void *arg, const char *tsuid, int64_t ts_ms)
{
	struct last_ctr *c = arg;
	int64_t h = ts_ms / 1000 - ts_ms / 1000 % ROW_SPAN_S;

	return last_of(c->r, tsuid, 1, 0, c->resolve, h - ROW_SPAN_S,
		       h + ROW_SPAN_S, c->arr) ? CF_ECANCELED : CF_OK;
}

/* A sub query without back_scan, tracking on: each series' newest point
 * from the hour its counter in tsdb-meta was last set (OpenTSDB's
 * getLastWriteTimes, then getLastPoint at that time), so a series
 * written long ago is found too.  0 done, 1 when the names are not all
 * known (the query reports them), -1 when r holds an error. */
static int last_by_counters(struct net_req *r, const char *spec,
			    int tsuid, int resolve, json_t *arr)
{
	struct last_ctr c = { r, resolve, arr };
	struct tsd_error err;
	tsd *t;
	int rc;

	memset(&err, 0, sizeof err);
	if ((rc = r->get(0, &t)) == CF_ENOTFOUND)
		return 0;	/* nothing written yet */
	if (rc == CF_OK)
		rc = tsd_tsmeta_written(t, spec, tsuid, last_ctr_one, &c,
					&err);
	if (rc == CF_ECANCELED)
		return -1;	/* last_of set the error */
	if (rc == CF_ENOTFOUND || rc == CF_EINVAL)
		return 1;
	if (rc) {
		net_error(r, 500, cf_strerror(rc), err.reason);
		return -1;
	}
	return 0;
}

int net_api_query_last(struct net_req *r)
{
	const char *bs = net_arg(r, "back_scan"), *why, *spec;
	struct lastq l;
	json_t *arr = NULL, *root = NULL;
	int64_t now_s = env_now_ms() / 1000, hour;
	long back = 0;
	int resolve = 0, has_back = 0, scan, rc = 0;
	char *end, jwhy[200] = "";

	memset(&l, 0, sizeof l);
	if (strcmp(r->method, "GET") && strcmp(r->method, "POST"))
		return net_bad_method(r);
	if (!strcmp(r->method, "POST")) {
		if (!(root = net_body_json(r)))
			return 0;
		rc = last_json(root, &l, &resolve, &back, &has_back, &why,
			       jwhy, sizeof jwhy);
		json_decref(root);
		if (rc == 1) {
			net_error(r, 400, why, jwhy);
			goto out;
		}
	} else {
		resolve = net_arg(r, "resolve") != NULL;
		if (bs) {
			back = strtol(bs, &end, 10);
			if (*end || end == bs) {
				net_error(r, 400, "Unable to parse back_scan "
					  "parameter", NULL);
				goto out;
			}
			has_back = 1;
		}
		rc = net_args(r, "timeseries", last_ts_arg, &l);
		if (rc == 0)
			rc = net_args(r, "tsuids", last_tsuids_arg, &l);
	}
	if (rc) {
		net_error(r, 500, "out of memory", NULL);
		goto out;
	}
	if (l.n == 0) {
		net_error(r, 400, "Missing sub queries", NULL);
		goto out;
	}
	if (back < 0 || back > 24L * 366 * 100) {
		net_error(r, 400, back < 0 ? "Backscan must be zero or a "
			  "positive number" : "Backscan too large", NULL);
		goto out;
	}
	/* the hours LastPointCB reads: this one and back_scan before it;
	 * without a back_scan OpenTSDB reads each series' counter in its
	 * meta table, which cellfs keeps when tracking is on; without the
	 * counters, the last 24 hours (docs/api.md) */
	hour = now_s - now_s % ROW_SPAN_S;
	scan = has_back && back > 0;
	if (!scan)
		back = 24;
	arr = json_array();
	spec = (const char *)l.specs.p;
	for (size_t i = 0; i < l.n; spec += strlen(spec) + 1, i++) {
		/* with back_scan, a series named exactly (tsuidFromMetric) */
		int exact = scan && !l.tsuid[i];
		if (exact && !strchr(spec, '{')) {
			net_error(r, 400, "Tags cannot be null or empty when "
				  "getting a TSUID", NULL);
			goto out;
		}
		if (!scan && (r->opts & (NET_TSUID_TRACKING |
					 NET_TSUID_INCREMENTING))) {
			rc = last_by_counters(r, spec, l.tsuid[i], resolve,
					      arr);
			if (rc < 0)
				goto out;
			if (rc == 0)
				continue;
		}
		if (last_of(r, spec, l.tsuid[i], exact,
			    resolve, hour - back * ROW_SPAN_S,
			    hour + ROW_SPAN_S, arr))
			goto out;
	}
	net_json_reply(r, arr);
	arr = NULL;
out:
	json_decref(arr);
	buf_release(&l.specs);
	free(l.tsuid);
	return 0;
}
