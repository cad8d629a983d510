/*
 * api_meta.c: the small endpoints: /api/suggest (SuggestRpc),
 * /api/aggregators, /api/version and /api/config/filters (RpcManager's
 * ListAggregators, Version, ShowConfig).  docs/api.md has their answers.
 * Memory: the answer (suggest: at most max names).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/internal.h"
#include "util/err.h"

static int get_or_post(struct net_req *r)
{
	return !strcmp(r->method, "GET") || !strcmp(r->method, "POST");
}

int net_api_suggest(struct net_req *r)
{
	const char *type, *q, *max;
	json_t *body = NULL, *arr;
	enum tsd_kind kind;
	char **names = NULL, *end;
	size_t n = 0;
	long m = 25;	/* UniqueId's default number of suggestions */
	tsd *t;
	int rc;

	if (!get_or_post(r))
		return net_bad_method(r);
	if (!strcmp(r->method, "POST") && r->body_len) {
		json_error_t jerr;
		if (!(body = json_loadb(r->body, r->body_len, 0, &jerr)))
			return net_error(r, 400, "Unable to parse the given "
					 "JSON", jerr.text);
		type = json_string_value(json_object_get(body, "type"));
		q = json_string_value(json_object_get(body, "q"));
		max = json_string_value(json_object_get(body, "max"));
		if (json_is_integer(json_object_get(body, "max"))) {
			m = (long)json_integer_value(json_object_get(body,
								     "max"));
			max = NULL;
		}
		if (!type || !*type) {
			json_decref(body);
			return net_error(r, 400, "Missing 'type' parameter",
					 NULL);
		}
	} else {
		type = net_arg(r, "type");
		q = net_arg(r, "q");
		max = net_arg(r, "max");
		if (!type || !*type)
			return net_error(r, 400, "Missing parameter <code>"
					 "type</code>", NULL);
	}
	if (max && *max) {
		m = strtol(max, &end, 10);
		if (*end || end == max) {
			json_decref(body);
			return net_error(r, 400, "Unable to parse 'max' as a "
					 "number", NULL);
		}
	}
	if (!strcmp(type, "metrics"))
		kind = TSD_METRICS;
	else if (!strcmp(type, "tagk"))
		kind = TSD_TAGK;
	else if (!strcmp(type, "tagv"))
		kind = TSD_TAGV;
	else {
		char msg[200];
		snprintf(msg, sizeof msg, "Invalid 'type' parameter:%s", type);
		json_decref(body);
		return net_error(r, 400, msg, NULL);
	}
	arr = json_array();
	rc = r->get(0, &t);
	if (rc == CF_OK && m > 0)
		rc = tsd_names(t, kind, q ? q : "", (size_t)m, &names, &n);
	json_decref(body);
	if (rc && rc != CF_ENOTFOUND) {
		json_decref(arr);
		return net_error(r, 500, cf_strerror(rc), NULL);
	}
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, json_string(names[i]));
	free(names);
	return net_json_reply(r, arr);
}

int net_api_aggregators(struct net_req *r)
{
	/* the names tsd/query.h's enum tsd_agg accepts (t1150 checks each
	 * of them in a query) */
	static const char *const aggs[] = {
		"sum", "pfsum", "min", "max", "avg", "median", "none",
		"mult", "dev", "diff", "zimsum", "mimmin", "mimmax",
		"squareSum", "count", "first", "last", "p999", "p99", "p95",
		"p90", "p75", "p50",
	};
	json_t *arr;

	if (!get_or_post(r))
		return net_bad_method(r);
	arr = json_array();
	for (size_t i = 0; i < sizeof aggs / sizeof aggs[0]; i++)
		json_array_append_new(arr, json_string(aggs[i]));
	return net_json_reply(r, arr);
}

int net_api_version(struct net_req *r)
{
	json_t *o;

	if (!get_or_post(r))
		return net_bad_method(r);
	/* in the order of OpenTSDB's HashMap */
	o = json_object();
	json_object_set_new(o, "short_revision", json_string("cellfs"));
	json_object_set_new(o, "repo", json_string("cellfs"));
	json_object_set_new(o, "host", json_string("localhost"));
	json_object_set_new(o, "version", json_string(NET_VERSION));
	json_object_set_new(o, "full_revision", json_string("cellfs"));
	json_object_set_new(o, "repo_status", json_string("MODIFIED"));
	json_object_set_new(o, "user", json_string("cellfs"));
	json_object_set_new(o, "branch", json_string("cellfs"));
	json_object_set_new(o, "timestamp", json_string("0"));
	return net_json_reply(r, o);
}

int net_api_filters(struct net_req *r)
{
	static const char *const f[][3] = {
		{ "literal_or", "host=literal_or(web01),  host=literal_or("
		  "web01|web02|web03)  {\"type\":\"literal_or\",\"tagk\":"
		  "\"host\",\"filter\":\"web01|web02|web03\",\"groupBy\":"
		  "false}", "Matches one or more exact values, case "
		  "sensitive; values separated by '|'." },
		{ "iliteral_or", "host=iliteral_or(web01|WEB02)",
		  "Like literal_or, ignoring case." },
		{ "not_literal_or", "host=not_literal_or(web01|web02)",
		  "Matches every value but the ones listed, case sensitive." },
		{ "not_iliteral_or", "host=not_iliteral_or(web01|WEB02)",
		  "Like not_literal_or, ignoring case." },
		{ "wildcard", "host=wildcard(web*),  host=wildcard(*.lga.*)",
		  "Matches values against a pattern where '*' stands for any "
		  "text, case sensitive." },
		{ "iwildcard", "host=iwildcard(WEB*)",
		  "Like wildcard, ignoring case." },
		{ "regexp", "host=regexp(web[0-9]+\\.lga)",
		  "Matches values against a regular expression." },
	};
	json_t *o;

	if (!get_or_post(r))
		return net_bad_method(r);
	o = json_object();
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
		json_t *e = json_object();
		json_object_set_new(e, "examples", json_string(f[i][1]));
		json_object_set_new(e, "description", json_string(f[i][2]));
		json_object_set_new(o, f[i][0], e);
	}
	return net_json_reply(r, o);
}
