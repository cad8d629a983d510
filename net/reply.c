/*
 * reply.c: the bodies of HTTP answers: OpenTSDB's error object
 * (HttpSerializer.formatErrorV1, without the Java stack trace) and JSON
 * values serialized compactly, as Jackson writes them.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
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

/* HttpQuery.makePage: OpenTSDB's HTML page around body. */
static void page(struct buf *b, const char *title, const char *subtitle,
		 const char *body)
{
	buf_printf(b, "<!DOCTYPE html><html><head><meta http-equiv=content-type "
		   "content=\"text/html;charset=utf-8\"><title>%s</title>\n"
		   "<style><!--\nbody{font-family:arial,sans-serif;"
		   "margin-left:2em}A.l:link{color:#6f6f6f}A.u:link{color:"
		   "green}.fwf{font-family:monospace;white-space:pre-wrap}"
		   "//--></style></head>\n<body text=#000000 bgcolor=#ffffff>"
		   "<table border=0 cellpadding=2 cellspacing=0 width=100%%>"
		   "<tr><td rowspan=3 width=1%% nowrap><img src=s/opentsdb_"
		   "header.jpg><td>&nbsp;</td></tr><tr><td><font color="
		   "#507e9b><b>%s</b></td></tr><tr><td>&nbsp;</td></tr>"
		   "</table>%s<table width=100%% cellpadding=0 cellspacing=0>"
		   "<tr><td class=subg><img alt=\"\" width=1 height=6></td>"
		   "</tr></table></body></html>", title, subtitle, body);
}

/* s HTML-escaped (Guava's HtmlEscapers: & < > " ') into b. */
static void html_escape(struct buf *b, const char *s)
{
	for (; *s; s++) {
		const char *e = *s == '&' ? "&amp;" : *s == '<' ? "&lt;" :
				*s == '>' ? "&gt;" : *s == '"' ? "&quot;" :
				*s == '\'' ? "&#39;" : NULL;
		if (e)
			buf_printf(b, "%s", e);
		else
			buf_putc(b, *s);
	}
}

/* The errors of the deprecated API (HttpQuery's badRequest, notFound
 * and internalError with api_version 0): with ?json {"err":"..."},
 * with ?png no body, else OpenTSDB's HTML page; a refusal is 400
 * whatever its status was (403 and 413, cellfs's own, are kept). */
static int deprecated_error(struct net_req *r, int status, const char *msg)
{
	struct buf h = BUF_INIT, body = BUF_INIT;
	json_t *j;

	if (status != 404 && status != 500 && status != 403 && status != 413)
		status = 400;
	if (status == 404)
		msg = "Page Not Found";
	if (net_arg(r, "json")) {
		j = json_string(msg);
		buf_printf(&r->out, "{\"err\":");
		if (j) {
			char *t = json_dumps(j, JSON_ENCODE_ANY);
			if (t)
				buf_printf(&r->out, "%s", t);
			free(t);
		}
		buf_putc(&r->out, '}');
		json_decref(j);
	} else if (status == 404) {
		page(&r->out, "Page Not Found", "Error 404", "<blockquote><h1>"
		     "Page Not Found</h1>The requested URL was not found on "
		     "this server.</blockquote>");
	} else if (status == 500) {
		html_escape(&h, msg);
		buf_printf(&body, "<blockquote><h1>Internal Server Error</h1>"
			   "Oops, sorry but your request failed due to a "
			   "server error.<br/><br/>Please try again in 30 "
			   "seconds.<pre>%.*s</pre></blockquote>", (int)h.len,
			   h.p ? (char *)h.p : "");
		page(&r->out, "Internal Server Error",
		     "Houston, we have a problem", body.p ? (char *)body.p : "");
	} else if (!net_arg(r, "png")) {
		html_escape(&h, msg);
		buf_printf(&body, "<blockquote><h1>Bad Request</h1>Sorry but "
			   "your request was rejected as being invalid.<br/>"
			   "<br/>The reason provided was:<blockquote>%.*s"
			   "</blockquote></blockquote>", (int)h.len,
			   h.p ? (char *)h.p : "");
		page(&r->out, "Bad Request",
		     "Looks like it's your fault this time",
		     body.p ? (char *)body.p : "");
	}
	buf_release(&h);
	buf_release(&body);
	r->ctype = NULL;	/* guessed from the body, as OpenTSDB does */
	r->status = status;
	return 0;
}

int net_error(struct net_req *r, int status, const char *msg,
	      const char *details)
{
	json_t *e, *o;

	buf_reset(&r->out);
	if (r->api_version == 0)
		return deprecated_error(r, status, msg);
	e = json_object();
	o = json_object();
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
	net_error(r, 405, "Unknown or unsupported method override value",
		  NULL);
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
