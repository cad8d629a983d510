/*
 * api_annotation.c: /api/annotation, /api/annotations and
 * /api/annotation/bulk (OpenTSDB's AnnotationRpc; docs/api.md).  The
 * notes themselves are tsd's (tsd/annot.c): this file reads requests
 * (a JSON body, or the query string) and maps tsd's answers to statuses.
 * Memory: the request's body (NET_BODY_MAX) and the answer.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net/internal.h"
#include "tsd/query.h"
#include "util/env.h"
#include "util/err.h"
#include "util/log.h"

/* A time parameter as DateTime.parseDateTimeString reads it (ms); 0 when
 * absent; -1 when it does not parse. */
static int64_t arg_time(struct net_req *r, const char *name)
{
	const char *v = net_arg(r, name);
	int64_t ms;

	if (!v || !*v)
		return 0;
	if (tsd_parse_time(v, strlen(v), env_now_ms(), &ms))
		return -1;
	return ms;
}

/* tsd's answer to a note request as a status.  0 when rc is CF_OK. */
static int note_error(struct net_req *r, int rc, const struct tsd_error *e,
		      const char *what)
{
	switch (rc) {
	case CF_OK:
		return 0;
	case CF_EINVAL:
		cf_log(CF_LOG_WARN, "tsd http: %s: %s", what, e->reason);
		return net_error(r, 400, e->reason, NULL);
	case CF_ENOTFOUND:
		return net_error(r, 404, e->reason, NULL);
	case CF_EEXIST:	/* nothing changed */
		buf_reset(&r->out);
		r->status = 304;
		return 0;
	case CF_ETOOBIG:
		cf_log(CF_LOG_WARN, "tsd http: %s: %s", what, e->reason);
		return net_error(r, 413, "Sorry, you have attempted to fetch "
				 "more data than this TSD allows", e->reason);
	case CF_EBUSY:
		cf_log(CF_LOG_WARN, "tsd http: %s: %s", what, e->reason);
		return net_error(r, 500, e->reason, "This may be caused by "
				 "another process modifying storage data");
	default:
		cf_log(CF_LOG_ERROR, "tsd http: %s: %s", what,
		       cf_strerror(rc));
		return net_error(r, 500, cf_strerror(rc), e->reason);
	}
}

static int reply_json(struct net_req *r, struct buf *b)
{
	buf_release(&r->out);
	r->out = *b;
	*b = (struct buf)BUF_INIT;
	r->ctype = NULL;
	r->status = 200;
	return 0;
}

/* The note named by the query string (AnnotationRpc.parseQS) as a JSON
 * object: tsuid, start_time (in seconds, as OpenTSDB takes it), end_time,
 * description, notes.  NULL with the 400 answer set. */
static json_t *qs_note(struct net_req *r)
{
	int64_t start = arg_time(r, "start_time"), end = arg_time(r, "end_time");
	const char *v;
	json_t *o;

	if (start < 1) {
		net_error(r, 400, "Missing start time", NULL);
		return NULL;
	}
	if (end < 0) {
		net_error(r, 400, "Invalid end time", NULL);
		return NULL;
	}
	if (!(o = json_object()))
		return NULL;
	if ((v = net_arg(r, "tsuid")))
		json_object_set_new(o, "tsuid", json_string(v));
	json_object_set_new(o, "startTime", json_integer(start / 1000));
	json_object_set_new(o, "endTime", json_integer(end / 1000));
	if ((v = net_arg(r, "description")))
		json_object_set_new(o, "description", json_string(v));
	if ((v = net_arg(r, "notes")))
		json_object_set_new(o, "notes", json_string(v));
	return o;
}

/* tsuid and start of a note request's JSON object. */
static void note_key(json_t *o, const char **tsuid, int64_t *start)
{
	json_t *s = json_object_get(o, "startTime");
	json_t *t = json_object_get(o, "tsuid");

	*tsuid = json_is_string(t) ? json_string_value(t) : "";
	*start = 0;
	if (json_is_integer(s))
		*start = json_integer_value(s);
	else if (json_is_string(s))
		*start = strtoll(json_string_value(s), NULL, 10);
}

int net_api_annotation(struct net_req *r)
{
	const char *m = net_method(r), *tsuid;
	struct tsd_error e = { 0, "" };
	struct buf out = BUF_INIT;
	json_t *o = NULL;
	int64_t start;
	tsd *t;
	int rc;

	if (!m)
		return 0;
	if (strcmp(m, "GET") && strcmp(m, "POST") && strcmp(m, "PUT") &&
	    strcmp(m, "DELETE"))
		return net_bad_method(r);
	if (net_has_body(r)) {
		json_error_t je;
		if (!(o = json_loadb(r->body, r->body_len, 0, &je)))
			return net_error(r, 400, "Unable to parse the given "
					 "JSON", je.text);
	} else if (!(o = qs_note(r))) {
		return 0;
	}
	/* reads and deletes do not make the tsd tables */
	rc = r->get(!strcmp(m, "POST") || !strcmp(m, "PUT"), &t);
	if (rc == CF_ENOTFOUND) {
		json_decref(o);
		if (!strcmp(m, "DELETE")) {
			r->status = 204;
			return 0;
		}
		return net_error(r, 404, "Unable to locate annotation in "
				 "storage", NULL);
	}
	if (rc) {
		json_decref(o);
		return note_error(r, rc, &e, "annotation");
	}
	note_key(o, &tsuid, &start);
	if (!strcmp(m, "GET")) {
		rc = tsd_note_get(t, tsuid, start, &out, &e);
	} else if (!strcmp(m, "DELETE")) {
		rc = tsd_note_delete(t, tsuid, start, &e);
		if (rc == CF_OK) {
			json_decref(o);
			r->status = 204;
			return 0;
		}
	} else {
		char *text = json_dumps(o, JSON_COMPACT);
		rc = text ? tsd_note_sync(t, text, strlen(text), 0,
					  !strcmp(m, "PUT"), &out, &e)
			  : CF_ENOMEM;
		free(text);
	}
	json_decref(o);
	if (rc == CF_OK)
		reply_json(r, &out);
	else
		note_error(r, rc, &e, "annotation");
	buf_release(&out);
	return 0;
}

/* GET /api/annotations: the global notes from start_time to end_time
 * (default now). */
int net_api_annotations(struct net_req *r)
{
	const char *m = net_method(r);
	struct tsd_error e = { 0, "" };
	struct buf out = BUF_INIT;
	int64_t start, end;
	tsd *t;
	int rc;

	if (!m)
		return 0;
	if (strcmp(m, "GET"))
		return net_bad_method(r);
	start = arg_time(r, "start_time");
	end = arg_time(r, "end_time");
	if (start < 1)
		return net_error(r, 400, "Missing start time", NULL);
	if (end < 0)
		return net_error(r, 400, "Invalid end time", NULL);
	if (end == 0)
		end = env_now_ms();
	rc = r->get(0, &t);
	if (rc == CF_ENOTFOUND)
		t = NULL;	/* nothing written: no note */
	if (rc == CF_OK || rc == CF_ENOTFOUND)
		rc = tsd_note_range(t, NULL, start, end, 0, &out, NULL, &e);
	if (rc == CF_OK)
		reply_json(r, &out);
	else
		note_error(r, rc, &e, "annotations");
	buf_release(&out);
	return 0;
}

/* A time of a bulk delete: a JSON number, or a string as a query
 * string's time.  -1 when it does not parse, 0 when absent. */
static int64_t json_time(json_t *v)
{
	int64_t ms;

	if (json_is_integer(v))
		return json_integer_value(v);
	if (!json_is_string(v) || !json_string_length(v))
		return 0;
	if (tsd_parse_time(json_string_value(v), json_string_length(v),
			   env_now_ms(), &ms))
		return -1;
	return ms;
}

/* AnnotationRpc.executeBulkDelete: the notes of the TSUIDs and (global)
 * the global ones starting in [start, end], deleted; the answer is the
 * request with totalDeleted.  t NULL: no tsd table, nothing to delete. */
static int bulk_delete(struct net_req *r, tsd *t)
{
	struct tsd_error e = { 0, "" };
	json_t *o = NULL, *ts, *v, *ans;
	int64_t start, end;
	uint64_t total = 0, n;
	int global, rc = CF_OK;
	size_t i;

	if (net_has_body(r)) {
		json_error_t je;
		if (!(o = json_loadb(r->body, r->body_len, 0, &je)))
			return net_error(r, 400, "Unable to parse the given "
					 "JSON", je.text);
		start = json_time(json_object_get(o, "startTime"));
		end = json_time(json_object_get(o, "endTime"));
		ts = json_incref(json_object_get(o, "tsuids"));
		global = json_is_true(json_object_get(o, "global"));
	} else {
		const char *l = net_arg(r, "tsuids");
		start = arg_time(r, "start_time");
		end = arg_time(r, "end_time");
		ts = NULL;
		if (l && *l) {
			char *copy = strdup(l), *save = NULL;
			ts = json_array();
			for (char *w = strtok_r(copy, ",", &save); w;
			     w = strtok_r(NULL, ",", &save)) {
				while (*w == ' ')
					w++;
				json_array_append_new(ts, json_string(w));
			}
			free(copy);
		}
		global = net_arg(r, "global") != NULL;
	}
	json_decref(o);
	if (start <= 0) {
		json_decref(ts);
		return net_error(r, 400, start < 0 ? "Invalid start time" :
				 "Missing the start time value", NULL);
	}
	if (end < 0) {
		json_decref(ts);
		return net_error(r, 400, "Invalid end time", NULL);
	}
	if (end == 0)
		end = env_now_ms();
	if (!global && !json_array_size(ts)) {
		json_decref(ts);
		return net_error(r, 400, "Missing the TSUIDs or global "
				 "annotations flag", NULL);
	}
	if (global)
		rc = tsd_note_range(t, NULL, start, end, 1, NULL, &n, &e);
	if (global && rc == CF_OK)
		total += n;
	json_array_foreach(ts, i, v) {
		if (rc)
			break;
		if (!json_is_string(v)) {
			snprintf(e.reason, sizeof e.reason, "a TSUID is not a "
				 "string");
			rc = CF_EINVAL;
			break;
		}
		rc = tsd_note_range(t, json_string_value(v), start, end, 1,
				    NULL, &n, &e);
		total += rc == CF_OK ? n : 0;
	}
	if (rc) {
		json_decref(ts);
		return note_error(r, rc, &e, "annotation bulk delete");
	}
	ans = json_object();
	json_object_set_new(ans, "startTime", json_integer(start));
	json_object_set_new(ans, "endTime", json_integer(end));
	json_object_set_new(ans, "tsuids", ts ? ts : json_null());
	json_object_set_new(ans, "global", json_boolean(global));
	json_object_set_new(ans, "totalDeleted", json_integer((json_int_t)
								total));
	return net_json_reply(r, ans);
}

int net_api_annotation_bulk(struct net_req *r)
{
	const char *m = net_method(r);
	struct tsd_error e = { 0, "" };
	struct buf out = BUF_INIT;
	tsd *t;
	int rc;

	if (!m)
		return 0;
	if (strcmp(m, "POST") && strcmp(m, "PUT") && strcmp(m, "DELETE"))
		return net_bad_method(r);
	if (strcmp(m, "DELETE") && !net_has_body(r))
		return net_no_body(r);
	rc = r->get(strcmp(m, "DELETE") != 0, &t);
	if (rc == CF_ENOTFOUND)
		t = NULL;	/* a delete before anything was written */
	else if (rc)
		return note_error(r, rc, &e, "annotation bulk");
	if (!strcmp(m, "DELETE"))
		return bulk_delete(r, t);
	rc = tsd_note_sync(t, r->body, r->body_len, 1, !strcmp(m, "PUT"),
			   &out, &e);
	if (rc == CF_OK)
		reply_json(r, &out);
	else
		note_error(r, rc, &e, "annotation bulk");
	buf_release(&out);
	return 0;
}
