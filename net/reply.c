/*
 * reply.c: the bodies of HTTP answers: OpenTSDB's error object
 * (HttpSerializer.formatErrorV1, without the Java stack trace) and JSON
 * values serialized compactly, as Jackson writes them.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "net/internal.h"
#include "util/err.h"

int net_json_reply(struct net_req *r, void *jv)
{
	json_t *j = jv;
	size_t need;

	buf_reset(&r->out);
	if (!j) {
		r->status = 500;
		return net_error(r, 500, "out of memory", NULL);
	}
	need = json_dumpb(j, NULL, 0, JSON_COMPACT | JSON_ENCODE_ANY |
			  JSON_PRESERVE_ORDER);
	if (need == 0 || buf_reserve(&r->out, need)) {
		json_decref(j);
		return net_error(r, 500, "out of memory", NULL);
	}
	json_dumpb(j, (char *)r->out.p, need, JSON_COMPACT | JSON_ENCODE_ANY |
		   JSON_PRESERVE_ORDER);
	r->out.len = need;
	r->status = 200;
	json_decref(j);
	return 0;
}

int net_error(struct net_req *r, int status, const char *msg,
	      const char *details)
{
	json_t *e = json_object(), *o = json_object();

	buf_reset(&r->out);
	if (e && o) {
		json_object_set_new(e, "code", json_integer(status));
		json_object_set_new(e, "message", json_string(msg));
		if (details && *details)
			json_object_set_new(e, "details",
					    json_string(details));
		json_object_set_new(o, "error", e);
		e = NULL;
		net_json_reply(r, o);
		o = NULL;
	}
	json_decref(e);
	json_decref(o);
	r->ctype = NULL;
	r->status = status;
	return 0;
}

/* HttpQuery.getAPIMethod: a GET may say another method in
 * method_override.  NULL (with the 405 answer set) when it names none. */
const char *net_method(struct net_req *r)
{
	static const char *const m[] = { "GET", "POST", "PUT", "DELETE" };
	const char *o;

	if (strcmp(r->method, "GET") || !(o = net_arg(r, "method_override")))
		return r->method;
	if (!*o) {
		net_error(r, 405, "Missing method override value", NULL);
		return NULL;
	}
	for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
		if (!strcasecmp(o, m[i]))
			return m[i];
	net_error(r, 405, "Unknown or unsupported method override value", o);
	return NULL;
}

int net_java_int(const char *s, int *out)
{
	long long v = 0;
	int neg = *s == '-';

	if (*s == '-' || *s == '+')
		s++;
	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
		if (v > 2147483648LL)
			return -1;
	}
	if (!neg && v > 2147483647LL)
		return -1;
	*out = (int)(neg ? -v : v);
	return 0;
}

int net_has_body(const struct net_req *r)
{
	return r->body_len && strspn(r->body, " \t\r\n") != r->body_len;
}

int net_no_body(struct net_req *r)
{
	return net_error(r, 400, "Missing message content", "Supply valid "
			 "JSON formatted data in the body of your request");
}

void *net_body_json(struct net_req *r)
{
	json_error_t je;
	json_t *j;

	if (r->body_len == 0) {
		net_no_body(r);
		return NULL;
	}
	if (!(j = json_loadb(r->body, r->body_len, 0, &je)))
		net_error(r, 400, "Unable to parse the given JSON", je.text);
	return j;
}

int net_bad_method(struct net_req *r)
{
	char d[160];

	snprintf(d, sizeof d, "The HTTP method [%s] is not permitted for "
		 "this endpoint", r->method);
	return net_error(r, 405, "Method not allowed", d);
}
