/*
 * api_put.c: POST /api/put (OpenTSDB's PutDataPointRpc over HTTP;
 * docs/api.md).
 *
 * The body is one data point object or an array of them.  Each point is
 * checked as IncomingDataPoint.validate does (metric, timestamp, value,
 * tags, in that order, with its messages), turned into a put line and
 * handed with the others to tsd_put_lines(), which stores every valid
 * line in one batch and names the invalid ones.  A point is stored or
 * refused on its own; the answer is 204, or with ?summary / ?details the
 * counts (and the refused points), 400 when any point was refused.  The
 * points are stored before the answer is sent, so ?sync changes nothing.
 *
 * Memory: the parsed JSON (a few times the body, itself at most
 * NET_BODY_MAX), the put lines (about the body's size) and one error
 * slot per point.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/internal.h"
#include "util/err.h"
#include "util/log.h"

struct point {
	json_t *j;		/* the element of the body (borrowed) */
	char *error;		/* why it was refused (malloc'd), or NULL */
};

struct put {
	struct point *p;
	size_t n;
	size_t *line_of;	/* put line number - 1 -> point index */
};

static char oom[] = "out of memory";

static void refuse(struct point *p, const char *why)
{
	if (!p->error)
		p->error = strdup(why);
	if (!p->error)
		p->error = oom;
}

/* The text of a string or integer JSON value into b, or -1. */
static int scalar_text(json_t *v, struct buf *b)
{
	if (json_is_string(v))
		return buf_append(b, json_string_value(v),
				  json_string_length(v)) ? -1 : 0;
	if (json_is_integer(v))
		return buf_printf(b, "%lld", (long long)json_integer_value(v))
		       ? -1 : 0;
	return -1;
}

/* 1 if s[0..n) holds a byte that would change the words of a put line. */
static int breaks_line(const char *s, size_t n, int tag)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f ||
		    (tag && s[i] == '='))
			return 1;
	return 0;
}

/* Tags.validateString's message for a name that breaks the line. */
static void bad_name(struct point *p, const char *what, const char *s,
		     size_t n)
{
	char why[200];
	size_t i = 0;

	while (i < n && (unsigned char)s[i] > ' ' && s[i] != 0x7f &&
	       s[i] != '=')
		i++;
	snprintf(why, sizeof why, "Invalid %s (\"%.*s\"): illegal "
		 "character: %c", what, n > 100 ? 100 : (int)n, s,
		 i < n ? s[i] : '?');
	refuse(p, why);
}

/* 1 if s[0..n) parses as OpenTSDB parses a value: an integer when it
 * has no '.', 'e' or 'E', else a finite decimal number. */
static int numeric(const char *s, size_t n)
{
	char tmp[64], *end;

	if (n == 0 || n >= sizeof tmp)
		return n >= sizeof tmp;	/* long: let tsd judge */
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	if (!strpbrk(tmp, ".eE")) {
		errno = 0;
		(void)strtoll(tmp, &end, 10);
		return !errno && *end == '\0' && end != tmp;
	}
	double d = strtod(tmp, &end);
	return *end == '\0' && end != tmp && d - d == 0 &&
	       !strpbrk(tmp, "xXnNiI");
}

/* Appends the put line of point p to lines, or refuses p. */
static int point_line(struct point *p, struct buf *lines)
{
	json_t *j = p->j, *m, *ts, *v, *tags, *tv;
	struct buf val = BUF_INIT;
	const char *k;
	size_t start = lines->len;
	long long t = 0;
	int rc = CF_OK;

	m = json_object_get(j, "metric");
	ts = json_object_get(j, "timestamp");
	v = json_object_get(j, "value");
	tags = json_object_get(j, "tags");
	if (!json_is_string(m) || json_string_length(m) == 0) {
		refuse(p, "Metric name was empty");
		return CF_OK;
	}
	if (json_is_integer(ts))
		t = (long long)json_integer_value(ts);
	else if (json_is_real(ts) && json_real_value(ts) > 0 &&
		 json_real_value(ts) < 9.2e18)
		t = (long long)json_real_value(ts);	/* else invalid: 0 */
	else if (json_is_string(ts))
		t = strtoll(json_string_value(ts), NULL, 10);
	if (t <= 0) {
		refuse(p, "Invalid timestamp");
		return CF_OK;
	}
	if (json_is_real(v)) {
		rc = buf_printf(&val, "%.17g", json_real_value(v));
		if (!rc && !strpbrk((char *)val.p, ".eE"))
			rc = buf_append(&val, ".0", 2);
	} else if (v && !json_is_null(v) && scalar_text(v, &val)) {
		refuse(p, "Unable to parse value to a number");
		goto out;
	}
	if (rc)
		goto out;
	if (val.len == 0) {
		refuse(p, "Empty value");
		goto out;
	}
	if (!json_is_object(tags) || json_object_size(tags) == 0) {
		refuse(p, "Missing tags");
		goto out;
	}
	if (breaks_line((char *)val.p, val.len, 0) ||
	    !numeric((char *)val.p, val.len)) {
		refuse(p, "Unable to parse value to a number");
		goto out;
	}
	if (breaks_line(json_string_value(m), json_string_length(m), 0)) {
		bad_name(p, "metric name", json_string_value(m),
			 json_string_length(m));
		goto out;
	}
	if ((rc = buf_append(lines, json_string_value(m),
			     json_string_length(m))) ||
	    (rc = buf_printf(lines, " %lld ", t)) ||
	    (rc = buf_append(lines, val.p, val.len)))
		goto out;
	json_object_foreach(tags, k, tv) {
		size_t at;
		if (breaks_line(k, strlen(k), 1)) {
			bad_name(p, "tag name", k, strlen(k));
			goto out;
		}
		if ((rc = buf_putc(lines, ' ')) ||
		    (rc = buf_append(lines, k, strlen(k))) ||
		    (rc = buf_putc(lines, '=')))
			goto out;
		at = lines->len;
		if (scalar_text(tv, lines)) {
			refuse(p, "Invalid tag value: not a string");
			goto out;
		}
		if (breaks_line((char *)lines->p + at, lines->len - at, 1)) {
			bad_name(p, "tag value", (char *)lines->p + at,
				 lines->len - at);
			goto out;
		}
	}
	rc = buf_putc(lines, '\n');
out:
	if (p->error)
		lines->len = start;
	buf_release(&val);
	return rc;
}

static void on_bad(void *ctx, uint64_t line, const char *reason)
{
	struct put *x = ctx;
	refuse(&x->p[x->line_of[line - 1]], reason);
}

/* The datapoint of an "errors" entry, as IncomingDataPoint serializes. */
static json_t *echo(json_t *j)
{
	json_t *o = json_object(), *v = json_object_get(j, "value");
	json_t *ts = json_object_get(j, "timestamp");
	struct buf b = BUF_INIT;

	if (!o)
		return NULL;
	json_object_set(o, "metric", json_is_string(json_object_get(j,
			"metric")) ? json_object_get(j, "metric") : json_null());
	json_object_set_new(o, "timestamp", json_integer(
		json_is_integer(ts) ? json_integer_value(ts) : 0));
	if ((json_is_real(v) && !buf_printf(&b, "%.17g",
					    json_real_value(v))) ||
	    (!json_is_real(v) && v && !json_is_null(v) && !scalar_text(v, &b)))
		json_object_set_new(o, "value", json_stringn(b.p ? (char *)b.p
							     : "", b.len));
	else
		json_object_set_new(o, "value", json_null());
	json_object_set_new(o, "tags", json_is_object(json_object_get(j,
			    "tags")) ? json_incref(json_object_get(j, "tags"))
			    : json_object());
	buf_release(&b);
	return o;
}

static int answer(struct net_req *r, struct put *x)
{
	int details = net_arg(r, "details") != NULL;
	int summary = net_arg(r, "summary") != NULL;
	const char *st = net_arg(r, "sync_timeout");
	size_t failed = 0;
	json_t *o, *errs = NULL;

	for (size_t i = 0; i < x->n; i++)
		failed += x->p[i].error != NULL;
	if (!details && !summary) {
		if (failed)
			return net_error(r, 400, "One or more data points had "
					 "errors", "Please see the TSD logs or "
					 "append \"details\" to the put "
					 "request");
		r->status = 204;
		return 0;
	}
	/* Java HashMap order of OpenTSDB's summary map */
	o = json_object();
	json_object_set_new(o, "success", json_integer((json_int_t)(x->n -
								  failed)));
	if (st && atoi(st) > 0)
		json_object_set_new(o, "timeouts", json_integer(0));
	json_object_set_new(o, "failed", json_integer((json_int_t)failed));
	if (details) {
		errs = json_array();
		for (size_t i = 0; i < x->n; i++) {
			json_t *e;
			if (!x->p[i].error)
				continue;
			e = json_object();
			json_object_set_new(e, "datapoint", echo(x->p[i].j));
			json_object_set_new(e, "error",
					    json_string(x->p[i].error));
			json_array_append_new(errs, e);
		}
		json_object_set_new(o, "errors", errs);
	}
	net_json_reply(r, o);
	r->status = failed ? 400 : 200;
	return 0;
}

int net_api_put(struct net_req *r)
{
	struct put x = { NULL, 0, NULL };
	struct buf lines = BUF_INIT;
	json_error_t jerr;
	json_t *root = NULL;
	struct tsd_error terr;
	size_t i, nl = 0, skip;
	tsd *t;
	int rc;

	if (strcmp(r->method, "POST"))
		return net_bad_method(r);
	skip = strspn(r->body, " \t\r\n");
	if (skip == r->body_len)
		return net_error(r, 400, "Missing request content", NULL);
	if (r->body[skip] != '{' && r->body[skip] != '[')
		return net_error(r, 400, "The JSON must start as an object "
				 "or an array", NULL);
	root = json_loadb(r->body, r->body_len, 0, &jerr);
	if (!root)
		return net_error(r, 400, "Unable to parse the given JSON",
				 jerr.text);
	x.n = json_is_array(root) ? json_array_size(root) : 1;
	if (x.n == 0) {
		net_error(r, 400, "No datapoints found in content", NULL);
		goto out;
	}
	if (x.n > NET_PUT_MAX) {
		net_error(r, 413, "Request Entity Too Large",
			  "more than 1000000 data points in one request");
		goto out;
	}
	x.p = calloc(x.n, sizeof *x.p);
	x.line_of = calloc(x.n, sizeof *x.line_of);
	if (!x.p || !x.line_of) {
		net_error(r, 500, "out of memory", NULL);
		goto out;
	}
	for (i = 0; i < x.n; i++) {
		x.p[i].j = json_is_array(root) ? json_array_get(root, i) : root;
		if (!json_is_object(x.p[i].j)) {
			net_error(r, 400, "Unable to parse the given JSON",
				  "an element of the array is not an object");
			goto out;
		}
	}
	for (i = 0; i < x.n; i++) {
		if ((rc = point_line(&x.p[i], &lines))) {
			net_error(r, 500, "out of memory", NULL);
			goto out;
		}
		if (!x.p[i].error)
			x.line_of[nl++] = i;
	}
	if (nl) {
		if ((rc = r->get(1, &t)) == CF_OK)
			rc = tsd_put_lines(t, (const char *)lines.p, lines.len,
					   on_bad, &x, NULL, &terr);
		else
			snprintf(terr.reason, sizeof terr.reason, "%s",
				 cf_strerror(rc));
		if (rc) {
			char why[300];
			snprintf(why, sizeof why, "Storage exception: %s",
				 terr.reason);
			cf_log(CF_LOG_ERROR, "tsd http: put: %s", why);
			for (i = 0; i < nl; i++)
				refuse(&x.p[x.line_of[i]], why);
		}
	}
	for (i = 0; i < x.n; i++)
		if (x.p[i].error)
			cf_log(CF_LOG_WARN, "tsd http: put: point %zu "
			       "refused: %s", i + 1, x.p[i].error);
	answer(r, &x);
out:
	for (i = 0; x.p && i < x.n; i++)
		if (x.p[i].error != oom)
			free(x.p[i].error);
	free(x.p);
	free(x.line_of);
	buf_release(&lines);
	json_decref(root);
	return 0;
}
