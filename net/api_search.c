/*
 * api_search.c: /api/search/lookup (OpenTSDB's SearchRpc.processLookup;
 * docs/api.md): the series of a metric, tag key, tag value or pair, found
 * by tsd_lookup() in the data table.
 *
 * GET takes m=METRIC{TAGK=TAGV,...} and limit=N; POST a JSON SearchQuery
 * ({"metric":..,"tags":[{"key":..,"value":..}],"limit":N}), or, with an
 * empty body, the query string as GET does.  The other kinds of search
 * (/api/search/tsmeta, ...) need a search plugin: they are answered as
 * by a TSD without one (net_api_search).
 *
 * Memory: the series found (at most TSD_LOOKUP_MAX, tsd/tsd.h) and the
 * answer's text, written here without a JSON tree (a jansson tree of
 * 100000 series would take several times the text); for POST the parsed
 * body of at most NET_BODY_MAX.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "net/internal.h"
#include "util/err.h"
#include "util/log.h"

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Appends s as a JSON string, as Jackson writes it (UTF-8 as is; '"',
 * '\\' and control characters escaped). */
static int put_str(struct buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	int rc = buf_putc(b, '"');

	for (; *s && rc == CF_OK; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			rc = buf_putc(b, '\\') || buf_putc(b, c);
		else if (c == '\n')
			rc = buf_append(b, "\\n", 2);
		else if (c == '\t')
			rc = buf_append(b, "\\t", 2);
		else if (c == '\r')
			rc = buf_append(b, "\\r", 2);
		else if (c < 0x20) {
			char e[6] = { '\\', 'u', '0', '0', hex[c >> 4],
				      hex[c & 15] };
			rc = buf_append(b, e, 6);
		} else
			rc = buf_putc(b, c);
	}
	return rc ? CF_ENOMEM : buf_putc(b, '"');
}

static int put_str_or_null(struct buf *b, const char *s)
{
	return s ? put_str(b, s) : buf_append(b, "null", 4);
}

/* SearchQuery as Jackson serializes it (its fields in declaration
 * order, then startIndex and totalResults; nulls left out); a result's
 * keys in the order of its ConcurrentHashMap (tsuid, metric, tags). */
static int answer(struct buf *b, const struct tsd_lookup_query *q,
		  const struct tsd_lookup_result *res, int64_t ms)
{
	int rc = buf_append(b, "{\"type\":\"LOOKUP\"", 16);

	if (rc == CF_OK && q->metric)
		rc = buf_append(b, ",\"metric\":", 10) ||
		     put_str(b, q->metric);
	if (rc == CF_OK && q->has_tags) {
		rc = buf_append(b, ",\"tags\":[", 9);
		for (size_t i = 0; i < q->ntags && rc == CF_OK; i++)
			rc = buf_append(b, i ? ",{\"key\":" : "{\"key\":",
					i ? 8 : 7) ||
			     put_str_or_null(b, q->tags[i].key) ||
			     buf_append(b, ",\"value\":", 9) ||
			     put_str_or_null(b, q->tags[i].value) ||
			     buf_putc(b, '}');
		rc = rc || buf_putc(b, ']');
	}
	if (rc == CF_OK)
		rc = buf_printf(b, ",\"limit\":%ld,\"time\":%lld.0,"
				"\"results\":[", q->limit, (long long)ms);
	for (size_t i = 0; i < res->n && rc == CF_OK; i++) {
		const struct tsd_series *s = &res->s[i];
		rc = buf_printf(b, "%s{\"tsuid\":\"%s\",\"metric\":",
				i ? "," : "", s->tsuid) ||
		     put_str(b, s->metric) ||
		     buf_append(b, ",\"tags\":{", 9);
		for (size_t j = 0; j < s->ntags && rc == CF_OK; j++)
			rc = (j && buf_putc(b, ',')) ||
			     put_str(b, s->tagk[j]) || buf_putc(b, ':') ||
			     put_str(b, s->tagv[j]);
		rc = rc || buf_append(b, "}}", 2);
	}
	if (rc == CF_OK)
		rc = buf_printf(b, "],\"startIndex\":0,\"totalResults\":%zu}",
				res->n);
	return rc ? CF_ENOMEM : CF_OK;
}

/* The POST body into q: SearchQuery's JSON fields (others ignored).
 * 0, or 1 with the reason in why. */
static int from_json(struct tsd_lookup_query *q, json_t *body,
		     const char **why, struct tsd_error *err)
{
	json_t *m = json_object_get(body, "metric");
	json_t *tags = json_object_get(body, "tags");
	json_t *lim = json_object_get(body, "limit");
	json_t *p;
	size_t i;

	if (!json_is_object(body))
		return *why = "the query is not a JSON object", 1;
	/* SearchQuery's constructor sets metric "*" */
	if (m && !json_is_null(m) && !json_is_string(m))
		return *why = "metric is not a string", 1;
	if ((!m || json_is_string(m)) &&
	    tsd_lookup_set_metric(q, m ? json_string_value(m) : "*"))
		return -1;
	if (json_is_integer(lim)) {
		json_int_t v = json_integer_value(lim);
		if (v < INT32_MIN || v > INT32_MAX)
			return *why = "limit is not a 32-bit integer", 1;
		q->limit = (long)v;
	} else if (json_is_string(lim)) {
		if (tsd_lookup_parse_limit(q, json_string_value(lim), err))
			return *why = err->reason, 1;
	} else if (lim && !json_is_null(lim)) {
		return *why = "limit is not an integer", 1;
	}
	if (!tags || json_is_null(tags))
		return 0;
	if (!json_is_array(tags))
		return *why = "tags is not a list", 1;
	q->has_tags = 1;
	json_array_foreach(tags, i, p) {
		json_t *k = json_object_get(p, "key");
		json_t *v = json_object_get(p, "value");
		if (!json_is_object(p) || (k && !json_is_null(k) &&
					   !json_is_string(k)) ||
		    (v && !json_is_null(v) && !json_is_string(v)))
			return *why = "a tag is not {\"key\":..,\"value\":..}",
			       1;
		if (tsd_lookup_add_pair(q, json_string_value(k),
					json_string_value(v)))
			return -1;
	}
	return 0;
}

/* The query string of GET (and of a POST without body) into q.  0, or
 * the answer is set. */
static int from_qs(struct net_req *r, struct tsd_lookup_query *q,
		   struct tsd_error *err)
{
	const char *m = net_arg(r, "m"), *lim = net_arg(r, "limit");
	int rc;

	if (!m || !*m) {
		net_error(r, 400, "Missing parameter <code>m</code>", NULL);
		return -1;
	}
	rc = tsd_lookup_parse_m(q, m, strlen(m), err);
	if (rc == CF_EINVAL) {
		cf_log(CF_LOG_WARN, "tsd http: lookup: %s", err->reason);
		net_error(r, 400, "Unable to parse query", err->reason);
		return -1;
	}
	if (rc == CF_OK && lim && tsd_lookup_parse_limit(q, lim, err)) {
		net_error(r, 400, err->reason, NULL);
		return -1;
	}
	if (rc) {
		net_error(r, 500, cf_strerror(rc), NULL);
		return -1;
	}
	return 0;
}

static int run(struct net_req *r, struct tsd_lookup_query *q,
	       struct tsd_error *err)
{
	struct tsd_lookup_result res;
	int64_t t0 = now_ms();
	tsd *t;
	int rc;

	rc = r->get(0, &t);
	if (rc == CF_ENOTFOUND) {
		t = NULL;	/* nothing written: no name, no series */
		rc = CF_OK;
	}
	if (rc == CF_OK)
		rc = tsd_lookup(t, q, &res, err);
	if (rc == CF_OK) {
		buf_reset(&r->out);
		rc = answer(&r->out, q, &res, now_ms() - t0);
		tsd_lookup_result_release(&res);
		if (rc == CF_OK) {
			r->status = 200;
			return 0;
		}
		buf_release(&r->out);
	}
	switch (rc) {
	case CF_EINVAL:
		cf_log(CF_LOG_WARN, "tsd http: lookup: %s", err->reason);
		return net_error(r, 400, err->reason, NULL);
	case CF_ENOTFOUND:
		cf_log(CF_LOG_WARN, "tsd http: lookup: %s", err->reason);
		return net_error(r, 404, strncmp(err->reason, "No such name",
						 12) ?
				 "Unable to resolve one or more TSUIDs" :
				 "Unable to resolve one or more UIDs",
				 err->reason);
	default:
		cf_log(CF_LOG_ERROR, "tsd http: lookup: %s", cf_strerror(rc));
		return net_error(r, 500, "Unexpected exception",
				 cf_strerror(rc));
	}
}

int net_api_search_lookup(struct net_req *r)
{
	struct tsd_lookup_query q;
	struct tsd_error err = { 0, "" };
	json_t *body = NULL;
	const char *why = NULL;
	int rc;

	if (strcmp(r->method, "GET") && strcmp(r->method, "POST"))
		return net_bad_method(r);
	tsd_lookup_query_init(&q);
	if (!strcmp(r->method, "POST") && r->body_len) {
		json_error_t jerr;
		if (!(body = json_loadb(r->body, r->body_len, 0, &jerr))) {
			net_error(r, 400, "Unable to parse the given JSON",
				  jerr.text);
			goto out;
		}
		rc = from_json(&q, body, &why, &err);
		if (rc > 0) {
			net_error(r, 400, "Unable to parse the given JSON",
				  why);
			goto out;
		}
		if (rc < 0) {
			net_error(r, 500, "out of memory", NULL);
			goto out;
		}
	} else if (from_qs(r, &q, &err)) {
		goto out;
	}
	run(r, &q, &err);
out:
	json_decref(body);
	tsd_lookup_query_release(&q);
	return 0;
}

/* /api/search and /api/search/TYPE other than lookup (SearchRpc.execute
 * with no search plugin): the method, the type and the query string are
 * checked as OpenTSDB checks them, then 400 "Searching is not enabled". */
int net_api_search(struct net_req *r)
{
	static const char *const types[] = { "tsmeta", "tsmeta_summary",
		"tsuids", "uidmeta", "annotation" };
	const char *m = net_method(r), *type, *v;
	char *end;
	int ok = 0;

	if (!m)
		return 0;
	if (strcmp(m, "GET") && strcmp(m, "POST"))
		return net_bad_method(r);
	type = strncmp(r->path, "/api/search/", 12) ? "" : r->path + 12;
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		ok |= !strncasecmp(type, types[i], strlen(types[i])) &&
		      (type[strlen(types[i])] == '\0' ||
		       type[strlen(types[i])] == '/');
	if (!ok)
		return net_error(r, 400, "Invalid search query type supplied",
				 NULL);
	if (!net_has_body(r)) {
		if (!(v = net_arg(r, "query")) || !*v)
			return net_error(r, 400, "Missing parameter <code>"
					 "query</code>", NULL);
		if ((v = net_arg(r, "limit")) &&
		    (strtol(v, &end, 10), *end || end == v))
			return net_error(r, 400, "Unable to convert 'limit' "
					 "to a valid number", NULL);
		if ((v = net_arg(r, "start_index")) &&
		    (strtol(v, &end, 10), *end || end == v))
			return net_error(r, 400, "Unable to convert "
					 "'start_index' to a valid number",
					 NULL);
	}
	cf_log(CF_LOG_WARN, "tsd http: %s: no search plugin", r->path);
	return net_error(r, 400, "Searching is not enabled", NULL);
}
