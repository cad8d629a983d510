/*
 * api_meta.c: the small endpoints: /api/suggest (SuggestRpc),
 * /api/aggregators, /api/version, /api/config, /api/config/filters and
 * /api/serializers (RpcManager's ListAggregators, Version, ShowConfig,
 * Serializers), /api/stats, /api/dropcaches,
 * and the meta data of UIDs and series (/api/uid/uidmeta, tsmeta).
 * docs/api.md has their answers.  Memory: the answer (suggest: at most
 * max names; tsmeta: at most TSD_TSMETA_LIST_MAX metas).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "net/internal.h"
#include "tsd/line.h"
#include "util/err.h"
#include "util/log.h"

static int get_or_post(struct net_req *r)
{
	return !strcmp(r->method, "GET") || !strcmp(r->method, "POST");
}

/* The text Jackson gives a HashMap<String, String> value: a string's,
 * a number's or a boolean's text, NULL for null or a missing key; -1
 * for an object or array (not a map of strings). */
static int map_text(json_t *o, const char *key, char *out, size_t n,
		    const char **text)
{
	json_t *v = json_object_get(o, key);

	*text = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (json_is_string(v))
		*text = json_string_value(v);
	else if (json_is_integer(v))
		snprintf(out, n, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(out, n, "%.17g", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(out, n, "%s", json_is_true(v) ? "true" : "false");
	else
		return -1;
	if (!*text)
		*text = out;
	return 0;
}

/* SuggestRpc: /api/suggest's POST reads its JSON body (a map of
 * strings), a GET or the deprecated /suggest the query string. */
int net_api_suggest(struct net_req *r)
{
	const char *type, *q, *max;
	char tbuf[32], qbuf[32], mbuf[32];
	json_t *body = NULL, *arr;
	enum tsd_kind kind;
	char **names = NULL;
	size_t n = 0;
	int m = 0;
	tsd *t;
	int rc;

	if (!get_or_post(r))
		return net_bad_method(r);
	if (r->api_version > 0 && !strcmp(r->method, "POST")) {
		json_error_t jerr;
		const char *k;
		json_t *v;

		if (!r->body_len)
			return net_no_body(r);
		if (!(body = json_loadb(r->body, r->body_len, 0, &jerr)))
			return net_error(r, 400, "Unable to parse the given "
					 "JSON", jerr.text);
		rc = !json_is_object(body);
		json_object_foreach(body, k, v)
			rc |= json_is_object(v) || json_is_array(v);
		if (rc || map_text(body, "type", tbuf, sizeof tbuf, &type) ||
		    map_text(body, "q", qbuf, sizeof qbuf, &q) ||
		    map_text(body, "max", mbuf, sizeof mbuf, &max)) {
			json_decref(body);
			return net_error(r, 400, "Unable to parse the given "
					 "JSON", "a map of strings is expected");
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
	/* max: Integer.parseInt; none or not positive is UniqueId's
	 * default of 25 */
	if (max && *max && net_java_int(max, &m)) {
		json_decref(body);
		return net_error(r, 400, "Unable to parse 'max' as a number",
				 NULL);
	}
	if (m <= 0)
		m = 25;
	if (!strcmp(type, "metrics"))
		kind = TSD_METRICS;
	else if (!strcmp(type, "tagk"))
		kind = TSD_TAGK;
	else if (!strcmp(type, "tagv"))
		kind = TSD_TAGV;
	else {
		char msg[200];
		snprintf(msg, sizeof msg, "Invalid 'type' parameter:%.150s",
			 type);
		json_decref(body);
		return net_error(r, 400, msg, NULL);
	}
	arr = json_array();
	rc = r->get(0, &t);
	if (rc == CF_OK)
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
	/* the names tsd/query.h's enum tsd_agg accepts (t1170 checks each
	 * of them in a query) */
	static const char *const aggs[] = {
		"sum", "pfsum", "min", "max", "avg", "median", "none",
		"mult", "dev", "diff", "zimsum", "mimmin", "mimmax",
		"squareSum", "count", "first", "last", "p999", "p99", "p95",
		"p90", "p75", "p50", "ep999r3", "ep99r3", "ep95r3", "ep90r3",
		"ep75r3", "ep50r3", "ep999r7", "ep99r7", "ep95r7", "ep90r7",
		"ep75r7", "ep50r7",
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
		/* OpenTSDB has the class but leaves it out of its map */
		{ "not_key", "host=not_key()  {\"type\":\"not_key\","
		  "\"tagk\":\"host\",\"filter\":\"\",\"groupBy\":false}",
		  "Skips any time series with the given tag key, regardless "
		  "of the value. This can be useful for situations where a "
		  "metric has inconsistent tag sets. NOTE: The filter value "
		  "must be null or an empty string." },
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

/* The names of one kind to assign: a JSON array (POST) or a
 * comma-separated list (GET). */
static json_t *names_of(json_t *body, struct net_req *r, const char *kind)
{
	const char *v, *p;
	json_t *arr;

	if (body) {
		arr = json_object_get(body, kind);
		return json_is_array(arr) ? json_incref(arr) : NULL;
	}
	v = net_arg(r, kind);
	if (!v || !*v)
		return NULL;
	/* as Java's String.split(","): empty names at the end are dropped,
	 * so "a," is a alone and "," nothing */
	arr = json_array();
	for (p = v; arr;) {
		size_t n = strcspn(p, ",");
		json_array_append_new(arr, json_stringn(p, n));
		if (!p[n])
			break;
		p += n + 1;
	}
	while (arr && json_array_size(arr) &&
	       !*json_string_value(json_array_get(arr,
						  json_array_size(arr) - 1)))
		json_array_remove(arr, json_array_size(arr) - 1);
	if (arr && !json_array_size(arr)) {
		json_decref(arr);
		arr = NULL;
	}
	return arr;
}

static int cmp_name(const void *a, const void *b)
{
	const char *x = json_string_value(*(json_t *const *)a);
	const char *y = json_string_value(*(json_t *const *)b);
	return strcmp(x ? x : "", y ? y : "");
}

int net_api_uid_assign(struct net_req *r)
{
	static const char *const kinds[] = { "metric", "tagk", "tagv" };
	/* OpenTSDB's answer is a Java HashMap: its keys come in this order */
	static const char *const order[] = { "tagv_errors", "metric", "tagk",
		"tagk_errors", "metric_errors", "tagv" };
	json_t *body = NULL, *lists[3], *res[3], *errs[3], *out;
	size_t nerr = 0, given = 0;
	tsd *t;
	int rc;

	if (!get_or_post(r))
		return net_bad_method(r);
	if (!strcmp(r->method, "POST") && !(body = net_body_json(r)))
		return 0;
	for (int k = 0; k < 3; k++) {
		lists[k] = names_of(body, r, kinds[k]);
		given += lists[k] != NULL;
		res[k] = errs[k] = NULL;
	}
	json_decref(body);
	if (!given)
		return net_error(r, 400, "Missing values to assign UIDs", NULL);
	if ((rc = r->get(1, &t))) {
		for (int k = 0; k < 3; k++)
			json_decref(lists[k]);
		return net_error(r, 500, cf_strerror(rc), NULL);
	}
	for (int k = 0; k < 3; k++) {
		size_t n = lists[k] ? json_array_size(lists[k]) : 0;
		json_t **v = malloc((n ? n : 1) * sizeof *v);
		if (!lists[k] || !v) {
			free(v);
			json_decref(lists[k]);
			continue;
		}
		/* both maps of OpenTSDB's answer are TreeMaps: by name */
		for (size_t i = 0; i < n; i++)
			v[i] = json_array_get(lists[k], i);
		qsort(v, n, sizeof *v, cmp_name);
		res[k] = json_object();
		for (size_t i = 0; i < n; i++) {
			const char *name = json_string_value(v[i]);
			struct tsd_error why = { 0, "" };
			char msg[sizeof why.reason];
			uint32_t uid = 0;
			rc = name ? tsd_name_assign(t, (enum tsd_kind)k, name,
						    &uid, &why) : CF_EINVAL;
			if (rc == CF_OK) {
				snprintf(msg, sizeof msg, "%06X", uid);
				json_object_set_new(res[k], name,
						    json_string(msg));
				continue;
			}
			if (rc == CF_EEXIST)
				snprintf(msg, sizeof msg, "Name already exists "
					 "with UID: %06X", uid);
			else if (rc == CF_EINVAL && why.reason[0])
				snprintf(msg, sizeof msg, "%s", why.reason);
			else if (rc == CF_EINVAL)
				snprintf(msg, sizeof msg, "Invalid %s: null",
					 kinds[k]);
			else
				snprintf(msg, sizeof msg, "%s",
					 cf_strerror(rc));
			if (!errs[k])
				errs[k] = json_object();
			json_object_set_new(errs[k], name ? name : "",
					    json_string(msg));
			nerr++;
		}
		free(v);
		json_decref(lists[k]);
	}
	out = json_object();
	for (size_t o = 0; o < sizeof order / sizeof order[0]; o++)
		for (int k = 0; k < 3; k++) {
			size_t kl = strlen(kinds[k]);
			if (strncmp(order[o], kinds[k], kl))
				continue;
			if (!order[o][kl] && res[k])
				json_object_set_new(out, order[o], res[k]);
			else if (order[o][kl] && errs[k])
				json_object_set_new(out, order[o], errs[k]);
		}
	net_json_reply(r, out);
	r->status = nerr ? 400 : 200;
	return 0;
}

/* /api/uid/rename (UniqueIdRpc.handleRename): GET metric=|tagk=|tagv=OLD
 * and name=NEW, or POST {"metric":"OLD","name":"NEW"}.  200
 * {"result":"true"}; a rename refused is 400 {"result":"false","error":
 * WHY} (TSDB.renameUid's IllegalArgumentException). */
int net_api_uid_rename(struct net_req *r)
{
	static const char *const kinds[] = { "metric", "tagk", "tagv" };
	const char *type = NULL, *old = NULL, *name = NULL, *key;
	struct tsd_error err = { 0, "" };
	json_t *body = NULL, *v, *o;
	int k = -1, rc;
	tsd *t;

	if (!get_or_post(r))
		return net_bad_method(r);
	if (!strcmp(r->method, "POST")) {
		if (!(body = net_body_json(r)))
			return 0;
		if (!json_is_object(body)) {
			json_decref(body);
			return net_error(r, 400, "Unable to parse the given "
					 "JSON", "not an object");
		}
		/* a map of strings: "name" the new name, any other key
		 * the type and its value the old name */
		json_object_foreach(body, key, v) {
			if (!json_is_string(v)) {
				json_decref(body);
				return net_error(r, 400, "Unable to parse the "
						 "given JSON", "a value is not "
						 "a string");
			}
			if (!strcmp(key, "name")) {
				name = json_string_value(v);
			} else {
				type = key;
				old = json_string_value(v);
			}
		}
	} else {
		for (int i = 0; i < 3; i++)
			if ((old = net_arg(r, kinds[i])) && *old) {
				type = kinds[i];
				break;
			}
		if (!type)
			old = NULL;
		name = net_arg(r, "name");
		if (name && !*name)
			name = NULL;
	}
	if (!type || !old || !name) {
		json_decref(body);
		return net_error(r, 400, "Missing necessary values to rename "
				 "UID", NULL);
	}
	for (int i = 0; i < 3; i++)
		if (!strcasecmp(type, kinds[i]))
			k = i;
	rc = r->get(0, &t);
	if (k < 0) {
		snprintf(err.reason, sizeof err.reason, "Unknown type name");
		rc = CF_EINVAL;
	} else if (rc == CF_ENOTFOUND) {
		/* nothing ever written: no name to rename */
		snprintf(err.reason, sizeof err.reason,
			 "Name(\"%.200s\") does not exist", old);
	} else if (rc == CF_OK) {
		rc = tsd_name_rename(t, (enum tsd_kind)k, old, name, &err);
	}
	json_decref(body);
	if (rc != CF_OK && rc != CF_EINVAL && rc != CF_ENOTFOUND &&
	    rc != CF_EEXIST)
		return net_error(r, 500, cf_strerror(rc), err.reason);
	if (rc)
		cf_log(CF_LOG_WARN, "tsd http: uid rename: %s", err.reason);
	o = json_object();
	v = rc ? json_string(err.reason) : NULL;
	if (rc && !v)	/* a name not in UTF-8 */
		v = json_string("Invalid name: not UTF-8");
	if (!o)
		json_decref(v);
	if (o && (json_object_set_new(o, "result",
				      json_string(rc ? "false" : "true")) ||
		  (rc && json_object_set_new(o, "error", v)))) {
		json_decref(o);
		o = NULL;
	}
	net_json_reply(r, o);
	if (rc && r->status == 200)
		r->status = 400;
	return 0;
}

/* /api/stats (StatsRpc, API version 1): the counters of the tsd layer
 * as IncomingDataPoints, each tagged with the host. */
int net_api_stats(struct net_req *r)
{
	struct net_stat st[NET_TSD_STATS];
	char host[64], val[24];
	json_t *arr;
	time_t now = time(NULL);

	if (!get_or_post(r))
		return net_bad_method(r);
	net_hostname(host, sizeof host);
	net_tsd_stats(r->get, st);
	arr = json_array();
	for (size_t i = 0; arr && i < NET_TSD_STATS; i++) {
		json_t *o = json_object(), *tags = json_object();
		snprintf(val, sizeof val, "%llu",
			 (unsigned long long)st[i].value);
		/* the keys of the tags map in its HashMap order */
		json_object_set_new(tags, "host", json_string(host));
		if (st[i].type)
			json_object_set_new(tags, "type",
					    json_string(st[i].type));
		json_object_set_new(o, "metric", json_string(st[i].metric));
		json_object_set_new(o, "timestamp", json_integer(now));
		json_object_set_new(o, "value", json_string(val));
		json_object_set_new(o, "tags", tags);
		json_array_append_new(arr, o);
	}
	return net_json_reply(r, arr);
}

/* /api/dropcaches (DropCachesRpc): GET or DELETE; the UID caches are
 * emptied. */
int net_api_dropcaches(struct net_req *r)
{
	json_t *o;
	tsd *t;

	if (strcmp(r->method, "GET") && strcmp(r->method, "DELETE"))
		return net_bad_method(r);
	if (r->get(0, &t) == CF_OK)
		tsd_drop_caches(t);
	/* a HashMap of two: "message" comes first */
	o = json_object();
	json_object_set_new(o, "message", json_string("Caches dropped"));
	json_object_set_new(o, "status", json_string("200"));
	return net_json_reply(r, o);
}

/* The answer of a tsd_uidmeta_* error (UniqueIdRpc.handleUIDMeta's). */
static int uidmeta_error(struct net_req *r, int rc,
			 const struct tsd_error *err)
{
	switch (rc) {
	case CF_EINVAL:
		cf_log(CF_LOG_WARN, "tsd http: uidmeta: %s", err->reason);
		return net_error(r, 400, err->reason, NULL);
	case CF_ENOTFOUND:
		return net_error(r, 404, "Could not find the requested UID",
				 NULL);
	case CF_EBUSY:
		return net_error(r, 500, "Failed to save the UIDMeta to "
				 "storage", "This may be caused by another "
				 "process modifying storage data");
	default:
		return net_error(r, 500, cf_strerror(rc), err->reason);
	}
}

/* The answer of a meta DELETE (UniqueIdRpc): 204; for CF_EINVAL 400
 * "Unable to delete WHAT information" with the reason in details and a
 * log line; else errfn's. */
static int delete_answer(struct net_req *r, int rc,
			 const struct tsd_error *err, const char *what,
			 int (*errfn)(struct net_req *, int,
				      const struct tsd_error *))
{
	char msg[64];

	if (rc == CF_EINVAL) {
		cf_log(CF_LOG_WARN, "tsd http: %s: %s", what, err->reason);
		snprintf(msg, sizeof msg, "Unable to delete %s information",
			 what);
		return net_error(r, 400, msg, err->reason);
	}
	if (rc)
		return errfn(r, rc, err);
	r->status = 204;
	return 0;
}

/* The method of a meta request (GET, POST, PUT or DELETE, or the one
 * method_override names), or NULL with the answer set (405). */
static const char *meta_method(struct net_req *r)
{
	const char *m = net_method(r);

	if (m && strcmp(m, "GET") && strcmp(m, "POST") && strcmp(m, "PUT") &&
	    strcmp(m, "DELETE")) {
		net_bad_method(r);
		m = NULL;
	}
	return m;
}

/* The answer of a meta GET, POST or PUT: 200 with out (taken), 304 for
 * CF_EEXIST (no change), else errfn's. */
static int meta_answer(struct net_req *r, int rc, struct buf *out,
		       const struct tsd_error *err,
		       int (*errfn)(struct net_req *, int,
				    const struct tsd_error *))
{
	if (rc == CF_EEXIST) {
		buf_release(out);
		r->status = 304;
		return 0;
	}
	if (rc) {
		buf_release(out);
		return errfn(r, rc, err);
	}
	buf_release(&r->out);
	r->out = *out;
	r->status = 200;
	return 0;
}

/* /api/uid/uidmeta (UniqueIdRpc.handleUIDMeta): GET ?type=&uid=; POST
 * and PUT a JSON UIDMeta, or the query string (uid, type, display_name,
 * description, notes); DELETE the same.  method_override as OpenTSDB. */
int net_api_uidmeta(struct net_req *r)
{
	static const char *const qs[][2] = {
		{ "uid", "uid" }, { "type", "type" },
		{ "display_name", "displayName" },
		{ "description", "description" }, { "notes", "notes" },
	};
	const char *m = meta_method(r), *uid = NULL, *type = NULL;
	struct tsd_error err = { 0, "" };
	struct buf out = BUF_INIT;
	json_t *body = NULL;
	char *text = NULL;
	int rc, has = net_has_body(r);
	tsd *t = NULL;

	if (!m)
		return 0;
	if (!strcmp(m, "GET") || !has) {
		/* getRequiredQueryStringParam */
		if (!(uid = net_arg(r, "uid")) || !*uid)
			return net_error(r, 400, "Missing parameter <code>uid"
					 "</code>", NULL);
		if (!(type = net_arg(r, "type")) || !*type)
			return net_error(r, 400, "Missing parameter <code>"
					 "type</code>", NULL);
	}
	rc = r->get(strcmp(m, "GET") != 0, &t);
	if (rc == CF_ENOTFOUND) {
		snprintf(err.reason, sizeof err.reason, "no UID was ever "
			 "assigned");
		return uidmeta_error(r, rc, &err);
	}
	if (rc)
		return net_error(r, 500, cf_strerror(rc), NULL);
	if (!strcmp(m, "GET")) {
		rc = tsd_uidmeta_get(t, type, uid, &out, &err);
	} else if (!strcmp(m, "DELETE")) {
		if (has) {
			if (!(body = net_body_json(r)))
				return 0;
			uid = json_string_value(json_object_get(body, "uid"));
			type = json_string_value(json_object_get(body,
								 "type"));
		}
		rc = tsd_uidmeta_delete(t, type, uid, &err);
		json_decref(body);
		return delete_answer(r, rc, &err, "UIDMeta", uidmeta_error);
	} else {
		if (!has) {
			/* parseUIDMetaQS: the fields given, as JSON */
			body = json_object();
			for (size_t i = 0; body && i < 5; i++) {
				const char *v = net_arg(r, qs[i][0]);
				if (v)
					json_object_set_new(body, qs[i][1],
							    json_string(v));
			}
			text = body ? json_dumps(body, JSON_COMPACT) : NULL;
			json_decref(body);
			if (!text)
				return net_error(r, 500, "out of memory",
						 NULL);
		}
		rc = tsd_uidmeta_sync(t, text ? text : r->body,
				      text ? strlen(text) : r->body_len,
				      !strcmp(m, "PUT"), &out, &err);
		free(text);
	}
	return meta_answer(r, rc, &out, &err, uidmeta_error);
}

/* The answer of a tsd_tsmeta_* error (UniqueIdRpc.handleTSMeta's). */
static int tsmeta_error(struct net_req *r, int rc, const struct tsd_error *err)
{
	switch (rc) {
	case CF_EINVAL:
		cf_log(CF_LOG_WARN, "tsd http: tsmeta: %s", err->reason);
		return net_error(r, 400, err->reason, NULL);
	case CF_ENOTFOUND:
		return net_error(r, 404, err->reason[0] ? err->reason :
				 "Could not find Timeseries meta data", NULL);
	case CF_EBUSY:
		return net_error(r, 500, "Failed to save the TSMeta to "
				 "storage", "This may be caused by another "
				 "process modifying storage data");
	case CF_ETOOBIG:
		return net_error(r, 413, "Too many series", err->reason);
	default:
		return net_error(r, 500, cf_strerror(rc), err->reason);
	}
}

/* parseTSMetaQS: the fields of the query string as a JSON TSMeta (text
 * the caller frees), or NULL with the answer set. */
static char *tsmeta_qs_json(struct net_req *r)
{
	static const char *const strs[][2] = {
		{ "tsuid", "tsuid" }, { "display_name", "displayName" },
		{ "description", "description" }, { "notes", "notes" },
		{ "units", "units" }, { "data_type", "dataType" },
	};
	json_t *o = json_object();
	const char *v;
	char *text = NULL, *end;

	for (size_t i = 0; o && i < sizeof strs / sizeof strs[0]; i++)
		if ((v = net_arg(r, strs[i][0])))
			json_object_set_new(o, strs[i][1], json_string(v));
	if (o && (v = net_arg(r, "retention")) && *v) {
		long n;
		errno = 0;
		n = strtol(v, &end, 10);
		if (*end || errno || n > INT32_MAX || n < INT32_MIN) {
			json_decref(o);
			net_error(r, 400, "Unable to parse 'retention' value",
				  NULL);
			return NULL;
		}
		json_object_set_new(o, "retention", json_integer(n));
	}
	for (int i = 0; o && i < 2; i++) {
		const char *name = i ? "min" : "max";
		float f;
		if (!(v = net_arg(r, name)) || !*v)
			continue;
		/* Float.parseFloat: a float's precision */
		f = strtof(v, &end);
		if (*end || end == v) {
			char msg[40];
			snprintf(msg, sizeof msg, "Unable to parse '%s' value",
				 name);
			json_decref(o);
			net_error(r, 400, msg, NULL);
			return NULL;
		}
		json_object_set_new(o, name, isfinite(f) ?
				    json_real((double)f) :
				    json_string(isnan(f) ? "NaN" : f > 0 ?
						"Infinity" : "-Infinity"));
	}
	if (o)
		text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!text)
		net_error(r, 500, "out of memory", NULL);
	return text;
}

/* /api/uid/tsmeta (UniqueIdRpc.handleTSMeta): GET ?tsuid= or ?m=; POST
 * and PUT a JSON TSMeta or the query string (tsuid, display_name,
 * description, notes, units, data_type, retention, max, min), by tsuid
 * or by m (with create=true); DELETE a JSON body or ?tsuid=. */
int net_api_tsmeta(struct net_req *r)
{
	const char *m = meta_method(r), *tsuid, *mq, *create;
	struct tsd_error err = { 0, "" };
	struct buf out = BUF_INIT;
	char *text = NULL;
	json_t *body;
	int rc, has = net_has_body(r);
	tsd *t = NULL;

	if (!m)
		return 0;
	tsuid = net_arg(r, "tsuid");
	mq = net_arg(r, "m");
	if (!strcmp(m, "GET") && !(tsuid && *tsuid) && !(mq && *mq))
		return net_error(r, 400, "Missing parameter <code>m</code>",
				 NULL);
	rc = r->get(strcmp(m, "GET") && strcmp(m, "DELETE"), &t);
	if (rc == CF_ENOTFOUND) {
		/* nothing written yet: no series, no meta */
		if (!strcmp(m, "DELETE")) {
			r->status = 204;
			return 0;
		}
		return net_error(r, 404, tsuid && *tsuid ? "Could not find "
				 "Timeseries meta data" : "Unable to find one "
				 "of the UIDs", NULL);
	}
	if (rc)
		return net_error(r, 500, cf_strerror(rc), NULL);
	if (!strcmp(m, "GET")) {
		rc = tsuid && *tsuid ? tsd_tsmeta_get(t, tsuid, &out, &err) :
		     tsd_tsmeta_list(t, mq, strlen(mq), &out, &err);
	} else if (!strcmp(m, "DELETE")) {
		if (has) {
			if (!(body = net_body_json(r)))
				return 0;
			rc = tsd_tsmeta_delete(t, json_string_value(
				json_object_get(body, "tsuid")), &err);
			json_decref(body);
		} else {
			rc = tsd_tsmeta_delete(t, tsuid, &err);
		}
		return delete_answer(r, rc, &err, "TSMeta", tsmeta_error);
	} else {
		if (!has && !(text = tsmeta_qs_json(r)))
			return 0;
		create = net_arg(r, "create");
		rc = tsd_tsmeta_sync(t, text ? text : r->body,
				     text ? strlen(text) : r->body_len, mq,
				     create && !strcmp(create, "true"),
				     !strcmp(m, "PUT"), &out, &err);
		free(text);
	}
	return meta_answer(r, rc, &out, &err, tsmeta_error);
}

/* /api/config (RpcManager.ShowConfig, formatConfigV1): the settings of
 * OpenTSDB's that hold for this server, with cellfs's values, sorted by
 * name as OpenTSDB's TreeMap is. */
int net_api_config(struct net_req *r)
{
	char port[16] = "0", host[INET6_ADDRSTRLEN] = "";
	const char *yes = "true", *no = "false";
	json_t *o;

	if (!get_or_post(r))
		return net_bad_method(r);
	if (r->addr && r->addr->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)r->addr;
		inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
		snprintf(port, sizeof port, "%u", ntohs(a->sin_port));
	} else if (r->addr && r->addr->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const void *)r->addr;
		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
		snprintf(port, sizeof port, "%u", ntohs(a->sin6_port));
	}
	/* json_object keeps the order of insertion: this is sorted */
	const char *const kv[][2] = {
		{ "tsd.core.auto_create_metrics", yes },
		{ "tsd.core.auto_create_tagks", yes },
		{ "tsd.core.auto_create_tagvs", yes },
		{ "tsd.core.meta.enable_realtime_ts",
		  r->opts & NET_REALTIME_TS ? yes : no },
		{ "tsd.core.meta.enable_realtime_uid",
		  r->opts & NET_REALTIME_UID ? yes : no },
		{ "tsd.core.meta.enable_tsuid_incrementing",
		  r->opts & NET_TSUID_INCREMENTING ? yes : no },
		{ "tsd.core.meta.enable_tsuid_tracking",
		  r->opts & NET_TSUID_TRACKING ? yes : no },
		{ "tsd.core.tag.allow_specialchars", tsd_name_allowed() },
		{ "tsd.core.tree.enable_processing", yes },
		{ "tsd.core.uid.random_metrics", no },
		{ "tsd.http.query.allow_delete",
		  r->opts & NET_ALLOW_DELETE ? yes : no },
		{ "tsd.http.request.cors_domains", net_http_cors() },
		{ "tsd.http.request.cors_headers", NET_CORS_HEADERS },
		{ "tsd.http.request.enable_chunked", yes },
		{ "tsd.http.request.max_chunk", "16777216" },
		{ "tsd.http.show_stack_trace", no },
		{ "tsd.mode", "rw" },
		{ "tsd.network.bind", host },
		{ "tsd.network.port", port },
		{ "tsd.search.enable", no },
		{ "tsd.storage.enable_appends", no },
		{ "tsd.storage.enable_compaction", yes },
		{ "tsd.storage.hbase.data_table", TSD_TABLE_DATA },
		{ "tsd.storage.hbase.meta_table", TSD_TABLE_META },
		{ "tsd.storage.hbase.tree_table", "tsdb-tree" },
		{ "tsd.storage.hbase.uid_table", TSD_TABLE_UID },
		{ "tsd.storage.max_tags", "8" },
		{ "tsd.storage.uid.width.metric", "3" },
		{ "tsd.storage.uid.width.tagk", "3" },
		{ "tsd.storage.uid.width.tagv", "3" },
	};
	o = json_object();
	for (size_t i = 0; o && i < sizeof kv / sizeof kv[0]; i++)
		json_object_set_new(o, kv[i][0], json_string(kv[i][1]));
	return net_json_reply(r, o);
}

/* /api/serializers (RpcManager.Serializers, getSerializerStatus): the
 * one serializer, JSON, with the parse and format calls cellfs serves. */
int net_api_serializers(struct net_req *r)
{
	static const char *const parsers[] = {
		"PutV1", "SuggestV1", "UidAssignV1", "UidRenameV1",
		"SearchQueryV1", "QueryV1", "LastPointQueryV1", "UidMetaV1",
		"TSMetaV1", "TreeV1", "TreeRuleV1", "TreeRulesV1",
		"TreeTSUIDsListV1", "AnnotationV1", "AnnotationsV1",
		"AnnotationBulkDeleteV1",
	};
	static const char *const formats[] = {
		"PutV1", "SuggestV1", "SerializersV1", "AggregatorsV1",
		"VersionV1", "DropCachesV1", "UidAssignV1", "UidRenameV1",
		"QueryV1", "QueryAsyncV1", "LastPointQueryV1", "UidMetaV1",
		"TSMetaV1", "TSMetaListV1", "BranchV1", "TreeV1", "TreesV1",
		"TreeRuleV1", "TreeCollisionNotMatchedV1", "TreeTestV1",
		"AnnotationV1", "AnnotationsV1",
		"AnnotationBulkDeleteV1", "StatsV1", "SearchResultsV1",
		"ConfigV1", "FilterConfigV1", "NotFoundV1", "ErrorV1",
	};
	json_t *a = json_array(), *o = json_object(), *p = json_array(),
	       *f = json_array();

	if (!get_or_post(r)) {
		json_decref(a);
		json_decref(o);
		json_decref(p);
		json_decref(f);
		return net_bad_method(r);
	}
	for (size_t i = 0; p && i < sizeof parsers / sizeof parsers[0]; i++)
		json_array_append_new(p, json_string(parsers[i]));
	for (size_t i = 0; f && i < sizeof formats / sizeof formats[0]; i++)
		json_array_append_new(f, json_string(formats[i]));
	json_object_set_new(o, "serializer", json_string("json"));
	/* the name OpenTSDB's clients know this serializer by */
	json_object_set_new(o, "class",
			    json_string("net.opentsdb.tsd.HttpJsonSerializer"));
	json_object_set_new(o, "request_content_type",
			    json_string("application/json"));
	json_object_set_new(o, "response_content_type",
			    json_string("application/json; charset=UTF-8"));
	json_object_set_new(o, "parsers", p);
	json_object_set_new(o, "formatters", f);
	json_array_append_new(a, o);
	return net_json_reply(r, a);
}
