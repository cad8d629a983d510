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
 * points are stored before the answer is sent, so every put is what
 * OpenTSDB's ?sync put is: points whose storing failed are counted as
 * failed, but with ?summary or ?details only refused ones make a 400.
 * Before jansson reads the body, jackson_text() makes it what Jackson
 * reads: NaN and Infinity are numbers, a value keeps its text.
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
	size_t unstored;	/* valid points storing failed for */
};

static char oom[] = "out of memory";

static void refuse(struct point *p, const char *why)
{
	if (!p->error)
		p->error = strdup(why);
	if (!p->error)
		p->error = oom;
}

/* Jackson's non-numeric numbers (ALLOW_NON_NUMERIC_NUMBERS, which
 * OpenTSDB's JSON mapper sets): read as numbers whose text is the token,
 * so a point valued NaN is refused on its own, not the whole body. */
static const char *const non_numeric[] = {
	"NaN", "Infinity", "+Infinity", "-Infinity", "+INF", "-INF",
};

/* Length of the JSON number at s[0..n) (RFC 8259's grammar: no leading
 * zeros, no '+'), 0 when there is none. */
static size_t json_number(const char *s, size_t n)
{
	size_t i = 0, d;

	if (i < n && s[i] == '-')
		i++;
	if (i < n && s[i] == '0')
		i++;
	else {
		for (d = i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == d)
			return 0;
	}
	if (i < n && s[i] == '.') {
		for (d = ++i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == d)
			return 0;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		for (d = i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == d)
			return 0;
	}
	return i;
}

/* The body as jansson can read it and as Jackson reads a data point:
 * outside strings, a non-numeric number (any value) and a number that is
 * the value of a "value" or "metric" key or a value in the "tags" object
 * become strings of their text.  OpenTSDB's IncomingDataPoint holds them
 * as Strings, and a String field takes a number's text as written
 * (42.22e3 stays "42.22e3", a number too long for a long is text it
 * cannot parse, a tag value 1.5 is "1.5"), which the put line then reads
 * with OpenTSDB's rules.  1 when out holds the new body, 0 when the body
 * needs no change, CF_ENOMEM. */
static int jackson_text(const char *in, size_t n, struct buf *out)
{
	const char *key = NULL;	/* the last string read, a key if ':' */
	size_t keylen = 0, copied = 0, i = 0;
	int prev = 0;		/* the last significant byte outside strings */
	int is_value_key = 0;
	int tags = 0;		/* 1: after "tags":, 2: in its object */

	while (i < n) {
		char c = in[i];
		size_t tl = 0;

		if (c == '"') {
			size_t b = ++i;
			while (i < n && in[i] != '"')
				i += in[i] == '\\' ? 2 : 1;
			key = in + b;
			keylen = (i < n ? i : n) - b;
			prev = '"';
			i++;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			i++;
			continue;
		}
		if (tags == 1)
			tags = c == '{' ? 2 : 0;
		else if (tags == 2 && c == '}')
			tags = 0;
		if (c == ':') {
			is_value_key = prev == '"' &&
				       ((keylen == 5 && !memcmp(key, "value", 5)) ||
					(keylen == 6 && !memcmp(key, "metric", 6)) ||
					tags == 2);
			if (prev == '"' && keylen == 4 && !memcmp(key, "tags", 4) &&
			    !tags)
				tags = 1;
		}
		if (prev == ':' || prev == '[' || prev == ',') {
			for (size_t k = 0; !tl && k < sizeof non_numeric /
			     sizeof non_numeric[0]; k++) {
				size_t l = strlen(non_numeric[k]);
				if (n - i >= l && !memcmp(in + i,
							  non_numeric[k], l) &&
				    (i + l == n || strchr(" \t\r\n,]}",
							  in[i + l])))
					tl = l;
			}
			if (!tl && prev == ':' && is_value_key)
				tl = json_number(in + i, n - i);
		}
		if (!tl) {
			prev = (unsigned char)c;
			i++;
			continue;
		}
		if (buf_append(out, in + copied, i - copied) ||
		    buf_putc(out, '"') || buf_append(out, in + i, tl) ||
		    buf_putc(out, '"'))
			return CF_ENOMEM;
		i += tl;
		copied = i;
		prev = '"';
	}
	if (!copied)
		return 0;
	return buf_append(out, in + copied, n - copied) ? CF_ENOMEM : 1;
}

/* The text of a string, integer or boolean JSON value into b (as
 * Jackson gives a String field a scalar's text), or -1. */
static int scalar_text(json_t *v, struct buf *b)
{
	if (json_is_boolean(v))
		return buf_printf(b, "%s", json_is_true(v) ? "true" : "false")
		       ? -1 : 0;
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

/* 1 with Jackson's reason in why[n] when Jackson cannot read element j
 * as an IncomingDataPoint (HttpJsonSerializer.parsePutV1 then refuses
 * the whole body): metric, value and tsuid are Strings (any scalar is
 * its text), timestamp a long, tags a map of Strings.  Other fields are
 * ignored (@JsonIgnoreProperties). */
static int jackson_refuses(json_t *j, char *why, size_t n)
{
	static const char *const tok[] = { "START_OBJECT", "START_ARRAY" };
	json_t *v, *tv;
	const char *k, *tk;
	long long ts;

	json_object_foreach(j, k, v) {
		int composite = json_is_object(v) || json_is_array(v);
		if (!strcmp(k, "metric") || !strcmp(k, "value") ||
		    !strcmp(k, "tsuid")) {
			if (composite) {
				snprintf(why, n, "Cannot deserialize instance "
					 "of `java.lang.String` out of %s token",
					 tok[json_is_array(v)]);
				return 1;
			}
		} else if (!strcmp(k, "timestamp")) {
			if (net_jackson_long(v, &ts, "long", why, n))
				return 1;
		} else if (!strcmp(k, "tags") && !json_is_null(v)) {
			if (!json_is_object(v)) {
				snprintf(why, n, "Cannot deserialize instance "
					 "of `java.util.HashMap` out of %s token",
					 json_is_array(v) ? "START_ARRAY" :
					 json_is_string(v) ? "VALUE_STRING" :
					 json_is_true(v) ? "VALUE_TRUE" :
					 json_is_false(v) ? "VALUE_FALSE" :
					 json_is_integer(v) ? "VALUE_NUMBER_INT"
					 : "VALUE_NUMBER_FLOAT");
				return 1;
			}
			json_object_foreach(v, tk, tv)
				if (json_is_object(tv) || json_is_array(tv)) {
					snprintf(why, n, "Cannot deserialize "
						 "instance of `java.lang.String` "
						 "out of %s token",
						 tok[json_is_array(tv)]);
					return 1;
				}
		}
	}
	return 0;
}

/* Appends the put line of point p to lines, or refuses p. */
static int point_line(struct point *p, struct buf *lines)
{
	json_t *j = p->j, *m, *ts, *v, *tags, *tv;
	struct buf val = BUF_INIT, met = BUF_INIT;
	const char *k;
	size_t start = lines->len;
	long long t = 0;
	char why[200];
	int rc = CF_OK;

	m = json_object_get(j, "metric");
	ts = json_object_get(j, "timestamp");
	v = json_object_get(j, "value");
	tags = json_object_get(j, "tags");
	/* a String field: a boolean is its text (numbers are strings by
	 * now, jackson_text) */
	if (!m || json_is_null(m) || scalar_text(m, &met) || met.len == 0) {
		refuse(p, "Metric name was empty");
		goto out;
	}
	/* jackson_refuses let only what Jackson reads as a long through */
	if (ts && net_jackson_long(ts, &t, "long", why, sizeof why))
		t = 0;
	if (t <= 0) {
		refuse(p, "Invalid timestamp");
		goto out;
	}
	/* a number is text here (jackson_text) */
	if (v && !json_is_null(v) && scalar_text(v, &val)) {
		refuse(p, "Unable to parse value to a number");
		goto out;
	}
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
	if (breaks_line((char *)met.p, met.len, 0)) {
		bad_name(p, "metric name", (char *)met.p, met.len);
		goto out;
	}
	if ((rc = buf_append(lines, met.p, met.len)) ||
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
	buf_release(&met);
	return rc;
}

static void on_bad(void *ctx, uint64_t line, const char *reason)
{
	struct put *x = ctx;
	refuse(&x->p[x->line_of[line - 1]], reason);
}

/* The datapoint of an "errors" entry, as IncomingDataPoint serializes
 * (@JsonInclude(NON_NULL): a field without a value is left out; a
 * missing timestamp is the long's 0).  A null element stays null. */
static json_t *echo(json_t *j)
{
	json_t *o, *v = json_object_get(j, "value");
	json_t *ts = json_object_get(j, "timestamp");
	json_t *m = json_object_get(j, "metric");
	json_t *tags = json_object_get(j, "tags");
	struct buf b = BUF_INIT;
	long long t = 0;
	char why[200];

	if (!json_is_object(j) || !(o = json_object()))
		return json_null();
	if (m && !json_is_null(m) && !scalar_text(m, &b))
		json_object_set_new(o, "metric", json_stringn(b.p ? (char *)b.p
							      : "", b.len));
	b.len = 0;
	if (ts && net_jackson_long(ts, &t, "long", why, sizeof why))
		t = 0;
	json_object_set_new(o, "timestamp", json_integer((json_int_t)t));
	if (v && !json_is_null(v) && !scalar_text(v, &b))
		json_object_set_new(o, "value", json_stringn(b.p ? (char *)b.p
							     : "", b.len));
	if (json_is_object(tags))
		json_object_set(o, "tags", tags);
	buf_release(&b);
	return o;
}

static int answer(struct net_req *r, struct put *x)
{
	int details = net_arg(r, "details") != NULL;
	int summary = net_arg(r, "summary") != NULL;
	const char *st = net_arg(r, "sync_timeout");
	int timeout = 0;
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
	if (st && !net_java_int(st, &timeout) && timeout > 0)
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
	/* as OpenTSDB's synchronous put: points that failed to be stored
	 * are counted, only refused ones make it a 400 */
	r->status = failed > x->unstored ? 400 : 200;
	return 0;
}

int net_api_put(struct net_req *r)
{
	struct put x = { NULL, 0, NULL, 0 };
	struct buf lines = BUF_INIT, text = BUF_INIT;
	json_error_t jerr;
	json_t *root = NULL;
	struct tsd_error terr;
	const char *st = net_arg(r, "sync_timeout");
	size_t i, nl = 0, skip;
	char jwhy[200];
	int timeout;
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
	if ((rc = jackson_text(r->body, r->body_len, &text)) < 0) {
		net_error(r, 500, "out of memory", NULL);
		goto out;
	}
	root = rc ? json_loadb((char *)text.p, text.len, 0, &jerr) :
		    json_loadb(r->body, r->body_len, 0, &jerr);
	if (!root) {
		net_error(r, 400, "Unable to parse the given JSON", jerr.text);
		goto out;
	}
	x.n = json_is_array(root) ? json_array_size(root) : 1;
	if (x.n == 0) {
		net_error(r, 400, "No datapoints found in content", NULL);
		goto out;
	}
	if (st && net_java_int(st, &timeout)) {
		/* Integer.parseInt's exception escapes OpenTSDB's put: 500 */
		char why[120];
		snprintf(why, sizeof why, "For input string: \"%.80s\"", st);
		net_error(r, 500, why, NULL);
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
		if (json_is_null(x.p[i].j))
			refuse(&x.p[i], "Unexpected null datapoint "
			       "encountered in set.");
		else if (!json_is_object(x.p[i].j)) {
			net_error(r, 400, "Unable to parse the given JSON",
				  "an element of the array is not an object");
			goto out;
		} else if (jackson_refuses(x.p[i].j, jwhy, sizeof jwhy)) {
			net_error(r, 400, "Unable to parse the given JSON",
				  jwhy);
			goto out;
		}
	}
	for (i = 0; i < x.n; i++) {
		if (x.p[i].error)
			continue;
		if ((rc = point_line(&x.p[i], &lines))) {
			net_error(r, 500, "out of memory", NULL);
			goto out;
		}
		if (!x.p[i].error)
			x.line_of[nl++] = i;
	}
	if (nl < x.n && r->get(0, &t) == CF_OK)
		tsd_put_refused(t, x.n - nl);
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
				if (!x.p[x.line_of[i]].error) {
					refuse(&x.p[x.line_of[i]], why);
					x.unstored++;
				}
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
	buf_release(&text);
	json_decref(root);
	return 0;
}
