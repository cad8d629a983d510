/*
 * http.c: the HTTP API server (net/net.h, docs/api.md) on libmicrohttpd.
 *
 * Threads: libmicrohttpd's internal epoll thread pool (NET_HTTP_THREADS
 * threads) accepts, reads and runs the handlers; a handler blocks its
 * thread for the engine calls of its request.  net_http_stop() is
 * MHD_stop_daemon(): it closes the listening socket and the connections
 * and joins the pool.
 *
 * Memory bound per request (docs/api.md): libmicrohttpd's connection
 * buffer (NET_HTTP_CONN_MEM for the request line and headers), the body
 * up to NET_BODY_MAX (a Content-Length above it is answered 413 before
 * the body is read; a chunked body past it is read and dropped, then
 * answered 413), its gzip-decoded form up to NET_BODY_MAX, and the reply
 * up to NET_REPLY_MAX plus its gzip form.  At most NET_HTTP_CONNS
 * connections; one idle for NET_HTTP_TIMEOUT_S seconds is closed (slow
 * clients).
 */
#include <errno.h>
#include <iconv.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#include "net/internal.h"
#include "util/err.h"
#include "util/log.h"

#define NET_HTTP_THREADS 2
#define NET_HTTP_CONNS 1024
#define NET_HTTP_TIMEOUT_S 30
#define NET_HTTP_CONN_MEM (64 * 1024)

struct net_http {
	struct MHD_Daemon *d;
	net_tsd_fn get;
	unsigned flags;		/* NET_ALLOW_DELETE and the others */
	struct sockaddr_storage addr;
	net_access_fn access;	/* NULL: everyone may do everything */
};

/* The peer of a connection, found at its first request (socket
 * context, freed when the connection closes). */
struct cpeer {
	int known;
	struct net_peer p;
};

static void on_connection(void *cls, struct MHD_Connection *c,
			  void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	(void)cls;
	(void)c;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED)
		*socket_context = calloc(1, sizeof(struct cpeer));
	else {
		free(*socket_context);
		*socket_context = NULL;
	}
}

/* Who asks r (their connection's peer, found once). */
static void peer_of(struct MHD_Connection *c, struct net_peer *out)
{
	const union MHD_ConnectionInfo *ci;
	struct cpeer *cp = NULL;
	int fd = -1;

	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	if (ci)
		cp = ci->socket_context;
	if (cp && cp->known) {
		*out = cp->p;
		return;
	}
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (ci)
		fd = ci->connect_fd;
	out->local = 0;
	out->uid = (uid_t)-1;
	if (fd >= 0)
		net_peer_of(fd, out);
	if (cp) {
		cp->p = *out;
		cp->known = 1;
	}
}

/* The state of one request, from its URI to its completion. */
struct conn {
	char *uri;		/* raw request target */
	struct buf body;
	int too_big;		/* body over NET_BODY_MAX: answer 413 */
	int started;		/* past the first call of the handler */
	struct MHD_Connection *c;
};

static void *uri_log(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct conn *x = calloc(1, sizeof *x);

	if (x && !(x->uri = strdup(uri))) {
		free(x);
		x = NULL;
	}
	if (x)
		x->c = c;
	return x;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct conn *x = *con_cls;

	if (!x)
		return;
	buf_release(&x->body);
	free(x->uri);
	free(x);
	*con_cls = NULL;
}

const char *net_arg(struct net_req *r, const char *name)
{
	struct conn *x = r->conn;
	const char *v = NULL;
	size_t vl;

	if (MHD_lookup_connection_value_n(x->c, MHD_GET_ARGUMENT_KIND, name,
					  strlen(name), &v, &vl) != MHD_YES)
		return NULL;
	return v ? v : "";
}

struct args_walk {
	const char *name;
	int (*fn)(void *arg, const char *value);
	void *arg;
	int rc;
};

static enum MHD_Result args_one(void *cls, enum MHD_ValueKind kind,
				const char *key, size_t klen,
				const char *value, size_t vlen)
{
	struct args_walk *w = cls;

	(void)kind;
	(void)vlen;
	if (klen == strlen(w->name) && !memcmp(key, w->name, klen))
		w->rc = w->fn(w->arg, value ? value : "");
	return w->rc ? MHD_NO : MHD_YES;
}

int net_args(struct net_req *r, const char *name,
	     int (*fn)(void *arg, const char *value), void *arg)
{
	struct conn *x = r->conn;
	struct args_walk w = { name, fn, arg, 0 };

	MHD_get_connection_values_n(x->c, MHD_GET_ARGUMENT_KIND, args_one,
				    &w);
	return w.rc;
}

/* 1 if header value h lists token tok (comma separated, ;q= ignored;
 * q=0 counts as absent). */
static int lists_token(const char *h, const char *tok)
{
	size_t tl = strlen(tok);

	while (h && *h) {
		while (*h == ' ' || *h == ',')
			h++;
		const char *e = h + strcspn(h, ",");
		if ((size_t)(e - h) >= tl && !strncasecmp(h, tok, tl) &&
		    (h[tl] == ',' || h[tl] == ';' || h[tl] == ' ' ||
		     h[tl] == '\0')) {
			const char *q = memchr(h, ';', (size_t)(e - h));
			return !(q && strstr(q, "q=0") && !strstr(q, "q=0."));
		}
		h = e;
	}
	return 0;
}

/* gzip of src into out (a gzip member: RFC 1952).  CF_ENOMEM, CF_EIO. */
static int gzip_buf(const struct buf *src, struct buf *out)
{
	z_stream z;
	int rc = CF_OK, zr;

	memset(&z, 0, sizeof z);
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return CF_ENOMEM;
	if ((rc = buf_reserve(out, deflateBound(&z, src->len))))
		goto out;
	z.next_in = src->p;
	z.avail_in = (uInt)src->len;
	z.next_out = out->p;
	z.avail_out = (uInt)(out->cap);
	zr = deflate(&z, Z_FINISH);
	if (zr != Z_STREAM_END)
		rc = CF_EIO;
	else
		out->len = z.total_out;
out:
	deflateEnd(&z);
	return rc;
}

/* Decodes a gzip or deflate request body in place, up to NET_BODY_MAX.
 * 0, or the HTTP status to answer. */
static int inflate_body(struct buf *body)
{
	struct buf out = BUF_INIT;
	z_stream z;
	int zr, status = 0;

	memset(&z, 0, sizeof z);
	if (inflateInit2(&z, 15 + 32) != Z_OK)	/* gzip or zlib */
		return 500;
	z.next_in = body->p;
	z.avail_in = (uInt)body->len;
	do {
		if (out.len == NET_BODY_MAX) {
			status = 413;
			break;
		}
		if (buf_reserve(&out, 65536)) {
			status = 500;
			break;
		}
		size_t room = out.cap - out.len;
		if (room > NET_BODY_MAX - out.len)
			room = NET_BODY_MAX - out.len;
		z.next_out = out.p + out.len;
		z.avail_out = (uInt)room;
		zr = inflate(&z, Z_NO_FLUSH);
		out.len += room - z.avail_out;
		if (zr != Z_OK && zr != Z_STREAM_END) {
			status = 400;
			break;
		}
	} while (zr != Z_STREAM_END);
	inflateEnd(&z);
	if (status) {
		buf_release(&out);
		return status;
	}
	buf_release(body);
	*body = out;
	return 0;
}

/* HttpQuery.getCharset: the charset= of the Content-Type in cs; 1 when
 * there is one other than UTF-8 (OpenTSDB's default), else 0. */
static int body_charset(struct MHD_Connection *c, char *cs, size_t n)
{
	const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
					MHD_HTTP_HEADER_CONTENT_TYPE);
	const char *p = ct ? strcasestr(ct, "charset=") : NULL;
	size_t l;

	if (!p)
		return 0;
	p += 8;
	if (*p == '"')
		p++;
	l = strcspn(p, "\"; ,");
	if (l == 0 || l >= n)
		return 0;
	memcpy(cs, p, l);
	cs[l] = '\0';
	return strcasecmp(cs, "UTF-8") && strcasecmp(cs, "UTF8");
}

/* The body decoded from charset cs into UTF-8 (HttpQuery.getContent),
 * up to NET_BODY_MAX.  0, or the HTTP status to answer: 500 for a
 * charset iconv does not know (Charset.forName's exception), 400 for
 * bytes that are not of it, 413. */
static int recode_body(struct buf *body, const char *cs)
{
	struct buf out = BUF_INIT;
	iconv_t cd = iconv_open("UTF-8", cs);
	char *in = (char *)body->p, *o;
	size_t inl = body->len, ol;
	int status = 0;

	if (cd == (iconv_t)-1)
		return 500;
	while (inl) {
		size_t want = inl * 2 + 16;

		if (out.len >= NET_BODY_MAX) {
			status = 413;
			break;
		}
		/* the decoded body is bounded as a body is: NET_BODY_MAX */
		if (want > NET_BODY_MAX + 16 - out.len)
			want = NET_BODY_MAX + 16 - out.len;
		if (buf_reserve(&out, want)) {
			status = 500;
			break;
		}
		o = (char *)out.p + out.len;
		ol = want;	/* not cap - len: the buffer may have grown more */
		if (iconv(cd, &in, &inl, &o, &ol) == (size_t)-1 &&
		    errno != E2BIG) {
			status = 400;
			break;
		}
		out.len = (size_t)(o - (char *)out.p);
	}
	iconv_close(cd);
	if (status) {
		buf_release(&out);
		return status;
	}
	buf_release(body);
	*body = out;
	return 0;
}

static const struct {
	const char *path;
	int (*fn)(struct net_req *r);
} routes[] = {
	{ "/api/put", net_api_put },
	{ "/api/query", net_api_query },
	{ "/api/query/last", net_api_query_last },
	{ "/api/query/gexp", net_api_query_gexp },
	{ "/api/query/exp", net_api_query_exp },
	{ "/api/suggest", net_api_suggest },
	{ "/api/aggregators", net_api_aggregators },
	{ "/api/version", net_api_version },
	{ "/api/config/filters", net_api_filters },
	{ "/api/config", net_api_config },
	{ "/api/serializers", net_api_serializers },
	{ "/q", net_api_graph },
	{ "/suggest", net_api_suggest },
	{ "/api/uid/assign", net_api_uid_assign },
	{ "/api/uid/rename", net_api_uid_rename },
	{ "/api/uid/uidmeta", net_api_uidmeta },
	{ "/api/uid/tsmeta", net_api_tsmeta },
	{ "/api/search/lookup", net_api_search_lookup },
	{ "/api/search", net_api_search },
	{ "/api/stats", net_api_stats },
	{ "/api/dropcaches", net_api_dropcaches },
	{ "/api/annotation", net_api_annotation },
	{ "/api/annotations", net_api_annotations },
	{ "/api/annotation/bulk", net_api_annotation_bulk },
};

/* Whether r changes the time series (a write), by its path (lower case,
 * no trailing '/') and its method as method_override makes it. */
static int is_write(const struct net_req *r, const char *path)
{
	static const char *const writers[] = {
		"/api/put", "/api/uid/assign", "/api/uid/rename",
		"/api/uid/uidmeta", "/api/uid/tsmeta", "/api/annotation",
		"/api/annotations", "/api/annotation/bulk",
	};
	const char *m = r->method;
	const char *o = strcmp(m, "GET") ? NULL :
			net_arg((struct net_req *)r, "method_override");

	if (o)
		m = !strcasecmp(o, "post") ? "POST" : !strcasecmp(o, "put") ?
		    "PUT" : !strcasecmp(o, "delete") ? "DELETE" : "GET";
	/* trees: a tree or its rules changed; branch, test, collisions and
	 * notmatched only read, whatever the method */
	if (!strcmp(path, "/api/tree") || !strcmp(path, "/api/tree/rule") ||
	    !strcmp(path, "/api/tree/rules"))
		return strcmp(m, "GET") != 0;
	if (!strcmp(path, "/api/query"))
		return !strcmp(m, "DELETE") ||
		       (!strcmp(m, "POST") && strstr(r->body ? r->body : "",
						     "\"delete\""));
	for (size_t i = 0; i < sizeof writers / sizeof writers[0]; i++)
		if (!strcmp(path, writers[i]))
			return !strcmp(m, "POST") || !strcmp(m, "PUT") ||
			       !strcmp(m, "DELETE") ||
			       !strcmp(path, "/api/uid/assign");
	return 0;
}

/* 0 when r's peer may make r; else the 403 answer is set. */
static int allowed(struct net_req *r, const char *path)
{
	char why[200] = "";
	int w = is_write(r, path);

	if (!r->access || !r->access(r->peer.local, r->peer.uid, w, why,
				     sizeof why))
		return 0;
	cf_log(CF_LOG_WARN, "tsd http: %s %s refused: %s", r->method, path,
	       why);
	net_error(r, 403, "Permission denied", why);
	return -1;
}

/* A versioned path, /api/vN/...: r->path without the version (in fixed,
 * which must outlive the request's handling), as HttpQuery's
 * getQueryBaseRoute reads it; 0, or -1 when r holds its error. */
static int unversion(struct net_req *r, char *fixed, size_t size)
{
	const char *p = r->path, *v, *e;
	char *end = NULL;
	long ver;

	if (strncasecmp(p, "/api/v", 6) || p[6] < '0' || p[6] > '9')
		return 0;
	v = p + 6;
	e = v + strcspn(v, "/?");
	/* Integer.parseInt: digits, within an int */
	ver = e - v <= 9 ? strtol(v, &end, 10) : -1;
	if (ver < 0 || end != e) {
		char d[96];
		snprintf(d, sizeof d, "API version [%.*s] cannot be parsed to "
			 "an integer", (int)(e - v > 40 ? 40 : e - v), v);
		net_error(r, 400, "Invalid API version format supplied", d);
		return -1;
	}
	if (ver > 1) {
		char d[96];
		snprintf(d, sizeof d, "API version [%ld] is greater than the "
			 "max [1]", ver);
		net_error(r, 501, "Requested API version is greater than the "
			  "max implemented", d);
		return -1;
	}
	if (snprintf(fixed, size, "/api%s", e) >= (int)size)
		return 0;	/* too long for a route: not found */
	r->path = fixed;
	return 0;
}

/* tsd.http.request.cors_domains: cors_list as given, cors[] its origins
 * upper-cased (cors_any for "*"); written once before any server runs. */
#define CORS_MAX 64
static char *cors_list, *cors[CORS_MAX];
static size_t ncors;
static int cors_any;

int net_http_set_cors(const char *domains)
{
	const char *p = domains;

	if (!domains || !*domains)
		return CF_OK;
	if (!(cors_list = strdup(domains)))
		return CF_ENOMEM;
	while (*p) {
		size_t n = strcspn(p, ","), b = 0, e = n;
		while (b < e && p[b] == ' ')
			b++;
		while (e > b && p[e - 1] == ' ')
			e--;
		if (e == b || e - b > 255 || ncors == CORS_MAX)
			return CF_EINVAL;
		if (e - b == 1 && p[b] == '*')
			cors_any = 1;
		else if (!(cors[ncors++] = strndup(p + b, e - b)))
			return CF_ENOMEM;
		else
			for (char *c = cors[ncors - 1]; *c; c++)
				if (*c >= 'a' && *c <= 'z')
					*c = (char)(*c - 'a' + 'A');
		p += n;
		if (*p)
			p++;
	}
	/* "a public resource (*) or a list of specific domains" */
	return cors_any && ncors ? CF_EINVAL : CF_OK;
}

const char *net_http_cors(void)
{
	return cors_list ? cors_list : "";
}

/* RpcHandler.applyCorsConfig: a request with an Origin (when domains are
 * set) or an OPTIONS request.  1 when r is answered. */
static int apply_cors(struct net_req *r)
{
	struct conn *x = r->conn;
	const char *o = MHD_lookup_connection_value(x->c, MHD_HEADER_KIND,
						    "Origin");
	int opt = !strcmp(r->method, "OPTIONS"), ok = cors_any;
	char d[320];

	if (!opt && !(cors_list && o && *o))
		return 0;
	if (!cors_list || !o || !*o) {
		snprintf(d, sizeof d, "The HTTP method [%s] is not permitted",
			 r->method);
		net_error(r, 405, "Method not allowed", d);
		return 1;
	}
	for (size_t i = 0; !ok && i < ncors; i++)
		ok = !strcasecmp(cors[i], o);
	if (!ok) {
		/* a 200 without the allow-origin header, as OpenTSDB */
		snprintf(d, sizeof d, "The domain [%.256s] is not permitted "
			 "access", o);
		net_error(r, 200, "CORS domain not allowed", d);
		return 1;
	}
	r->cors_origin = o;
	if (opt) {
		r->status = 200;	/* the headers alone */
		return 1;
	}
	return 0;
}

/* HttpQuery.getQueryBaseRoute and RpcManager's table: the endpoint of
 * path (lower case, no trailing '/', no version) as a key of routes[]
 * (written in key, of size n), or NULL for none.  Under /api/ the first
 * part names the RPC, which reads the rest itself: /api/version/x is
 * /api/version, /api/query/x a query but /api/query/last the last
 * points, /api/uid/x one of UniqueIdRpc's or a 501 (set in r, *done).
 * The deprecated paths are the same by their first part: /q, /suggest. */
static const char *endpoint(struct net_req *r, const char *path, char *key,
			    size_t n, int *done)
{
	static const char *const whole[] = {
		"put", "suggest", "version", "aggregators", "dropcaches",
		"serializers",
	};
	static const char *const uid[] = {
		"assign", "rename", "uidmeta", "tsmeta",
	};
	char one[64] = "", two[64] = "";
	const char *p;
	size_t l;

	*done = 0;
	if (strncmp(path, "/api/", 5)) {
		l = strcspn(path + 1, "/");
		if ((l != 1 || strncmp(path + 1, "q", 1)) &&
		    (l != 7 || strncmp(path + 1, "suggest", 7)))
			return NULL;
		snprintf(key, n, "/%.*s", (int)l, path + 1);
		return key;
	}
	p = path + 5;
	l = strcspn(p, "/");
	if (l >= sizeof one)
		return NULL;
	memcpy(one, p, l);
	p += l + (p[l] == '/');
	snprintf(two, sizeof two, "%.*s", (int)strcspn(p, "/"), p);
	for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++)
		if (!strcmp(one, whole[i]))
			goto one_part;
	if (!strcmp(one, "query")) {
		if (strcmp(two, "last") && strcmp(two, "gexp") &&
		    strcmp(two, "exp"))
			goto one_part;
		goto two_parts;
	}
	if (!strcmp(one, "config")) {
		if (strcmp(two, "filters"))
			goto one_part;
		goto two_parts;
	}
	if (!strcmp(one, "stats")) {
		/* jvm, threads, region_clients, query: not served */
		if (*two)
			return NULL;
		goto one_part;
	}
	if (!strcmp(one, "annotation") || !strcmp(one, "annotations")) {
		/* AnnotationRpc: any second part ending in "bulk" */
		l = strlen(two);
		if (l < 4 || strcmp(two + l - 4, "bulk"))
			goto one_part;
		snprintf(key, n, "/api/annotation/bulk");
		return key;
	}
	if (!strcmp(one, "uid")) {
		for (size_t i = 0; i < sizeof uid / sizeof uid[0]; i++)
			if (!strcmp(two, uid[i]))
				goto two_parts;
		net_error(r, 501, "Other UID endpoints have not been "
			  "implemented yet", NULL);
		*done = 1;
		return NULL;
	}
	if (strcmp(one, "tree") && strcmp(one, "search"))
		return NULL;
	snprintf(key, n, "%s", path);	/* the RPC reads the rest */
	return key;
one_part:
	snprintf(key, n, "/api/%s", one);
	return key;
two_parts:
	snprintf(key, n, "/api/%s/%s", one, two);
	return key;
}

/* HttpQuery.setSerializer: ?serializer= names one (json, the only one
 * here); 0, or -1 with the 400 set. */
static int serializer(struct net_req *r)
{
	const char *s = net_arg(r, "serializer");
	char d[200];

	if (!s || !strcmp(s, "json"))
		return 0;
	snprintf(d, sizeof d, "Could not find a serializer with the name: "
		 "%.120s", s);
	net_error(r, 400, "Requested serializer was not found", d);
	return -1;
}

static void route(struct net_req *r)
{
	char path[256], fixed[512], key[300];
	const char *k;
	size_t n;
	int done;

	if (unversion(r, fixed, sizeof fixed) || serializer(r) ||
	    apply_cors(r))
		return;
	n = strcspn(r->path, "?");
	/* OpenTSDB ignores a trailing '/' and the case of the path */
	if (n >= sizeof path)
		n = sizeof path - 1;
	memcpy(path, r->path, n);
	while (n > 1 && path[n - 1] == '/')
		n--;
	path[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (path[i] >= 'A' && path[i] <= 'Z')
			path[i] = (char)(path[i] - 'A' + 'a');
	r->path = path;
	if (!(k = endpoint(r, path, key, sizeof key, &done))) {
		if (!done)
			net_error(r, 404, "Endpoint not found", NULL);
		return;
	}
	if (allowed(r, k))
		return;
	for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
		if (!strcmp(k, routes[i].path)) {
			routes[i].fn(r);
			return;
		}
	/* TreeRpc serves /api/tree/ANY, SearchRpc /api/search/ANY,
	 * refusing the endpoints they lack */
	if (!strncmp(k, "/api/tree", 9))
		net_api_tree(r);
	else
		net_api_search(r);
}

/* ?jsonp=CALLBACK (HttpJsonSerializer): a JSON answer that succeeded
 * becomes CALLBACK(JSON).  The callback is a JavaScript name (letters,
 * digits, '_', '$', '.'): Jackson writes any text there, which a page
 * would run as script. */
static void jsonp(struct net_req *r)
{
	const char *cb = net_arg(r, "jsonp");
	struct buf w = BUF_INIT;
	size_t n;

	if (!cb || !*cb || r->ctype || r->status < 200 || r->status > 299 ||
	    !r->out.len || r->api_version == 0)
		return;
	n = strspn(cb, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		   "0123456789_$.");
	if (cb[n] || n > 128) {
		buf_release(&r->out);
		net_error(r, 400, "Invalid jsonp callback",
			  "a JavaScript name of at most 128 letters, digits, "
			  "'_', '$' and '.'");
		return;
	}
	if (buf_printf(&w, "%s(", cb) ||
	    buf_append(&w, r->out.p, r->out.len) || buf_putc(&w, ')')) {
		buf_release(&w);
		return;		/* answered without the wrapping */
	}
	buf_release(&r->out);
	r->out = w;
}

/* HttpQuery.guessMimeTypeFromContents: the type of an answer of the
 * deprecated API, by its first byte. */
static const char *guess_type(const struct buf *b)
{
	switch (b->len ? b->p[0] : 0) {
	case '<':
		return "text/html; charset=UTF-8";
	case '{':
	case '[':
		return "application/json";
	case 0x89:
		return "image/png";
	default:
		return "text/plain";
	}
}

static enum MHD_Result send_reply(struct conn *x, struct net_req *r)
{
	struct MHD_Response *resp;
	struct buf *body = &r->out, gz = BUF_INIT;
	const char *ae;
	enum MHD_Result ret;
	int gzipped = 0;

	if (body->len > NET_REPLY_MAX) {
		buf_release(&r->out);
		net_error(r, 413, "Sorry, the answer is larger than this TSD "
			  "sends", "the limit is 256 MiB; ask for less");
	}
	jsonp(r);
	ae = MHD_lookup_connection_value(x->c, MHD_HEADER_KIND,
					 MHD_HTTP_HEADER_ACCEPT_ENCODING);
	if (body->len && ae && lists_token(ae, "gzip") &&
	    gzip_buf(body, &gz) == CF_OK) {
		body = &gz;
		gzipped = 1;
	}
	resp = MHD_create_response_from_buffer(body->len, body->p,
					       MHD_RESPMEM_MUST_COPY);
	if (!resp) {
		buf_release(&gz);
		return MHD_NO;
	}
	if (r->status != 204 && (r->ctype || r->out.len))
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
					r->ctype ? r->ctype : r->api_version ?
					"application/json; charset=UTF-8" :
					guess_type(&r->out));
	if (gzipped)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING,
					"gzip");
	if (r->cors_origin) {
		MHD_add_response_header(resp, "Access-Control-Allow-Origin",
					r->cors_origin);
		MHD_add_response_header(resp, "Access-Control-Allow-Methods",
					"GET, POST, PUT, DELETE");
		MHD_add_response_header(resp, "Access-Control-Allow-Headers",
					NET_CORS_HEADERS);
	}
	ret = MHD_queue_response(x->c, (unsigned)r->status, resp);
	MHD_destroy_response(resp);
	buf_release(&gz);
	return ret;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c,
			       const char *url, const char *method,
			       const char *version, const char *upload,
			       size_t *upload_size, void **con_cls)
{
	struct net_http *h = cls;
	struct conn *x = *con_cls;
	struct net_req r;
	const char *q, *ce;
	char cs[64];
	enum MHD_Result ret;

	if (!x)
		return MHD_NO;
	memset(&r, 0, sizeof r);
	r.conn = x;
	r.get = h->get;
	r.allow_delete = !!(h->flags & NET_ALLOW_DELETE);
	r.opts = h->flags;
	r.addr = &h->addr;
	r.access = h->access;
	if (h->access)
		peer_of(c, &r.peer);
	r.method = method;
	r.path = url;
	/* HttpQuery's api_version: 1 under /api, 0 for the old paths */
	r.api_version = !strncasecmp(url, "/api", 4) &&
			(url[4] == '/' || url[4] == '\0');
	q = strchr(x->uri, '?');
	r.query = q ? q + 1 : "";
	if (!x->started) {
		/* RpcHandler: methods but these five, and a request target
		 * that is not a path, are refused by their status alone */
		if (strcmp(method, "GET") && strcmp(method, "POST") &&
		    strcmp(method, "PUT") && strcmp(method, "DELETE") &&
		    strcmp(method, "OPTIONS")) {
			r.status = 405;
			goto reply;
		}
		if (x->uri[0] != '/') {
			r.status = 400;
			goto reply;
		}
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
				MHD_HTTP_HEADER_CONTENT_LENGTH);
		x->started = 1;
		if (cl && strtoull(cl, NULL, 10) > NET_BODY_MAX) {
			net_error(&r, 413, "Request Entity Too Large",
				  "the request body is over 16 MiB");
			goto reply;
		}
		return MHD_YES;
	}
	if (*upload_size) {
		if (!x->too_big && x->body.len + *upload_size > NET_BODY_MAX) {
			x->too_big = 1;
			buf_release(&x->body);
		}
		if (!x->too_big &&
		    buf_append(&x->body, upload, *upload_size)) {
			x->too_big = 1;
			buf_release(&x->body);
		}
		*upload_size = 0;
		return MHD_YES;
	}
	if (x->too_big) {
		net_error(&r, 413, "Request Entity Too Large",
			  "the request body is over 16 MiB");
		goto reply;
	}
	ce = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
					 MHD_HTTP_HEADER_CONTENT_ENCODING);
	if (x->body.len && ce && (lists_token(ce, "gzip") ||
				  lists_token(ce, "deflate"))) {
		int st = inflate_body(&x->body);
		if (st) {
			net_error(&r, st, st == 413 ? "Request Entity Too Large"
				  : "Unable to decompress the request body",
				  st == 413 ? "the request body is over 16 MiB"
				  : NULL);
			goto reply;
		}
	}
	if (x->body.len && body_charset(c, cs, sizeof cs)) {
		int st = recode_body(&x->body, cs);
		if (st) {
			char d[120];
			snprintf(d, sizeof d, "the body is not %s", cs);
			net_error(&r, st, st == 500 ? cs : st == 413 ?
				  "Request Entity Too Large" : "Unable to "
				  "decode the request body", st == 500 ?
				  "unsupported charset" : d);
			goto reply;
		}
	}
	if (buf_putc(&x->body, 0)) {
		net_error(&r, 500, "out of memory", NULL);
		goto reply;
	}
	x->body.len--;
	r.body = (const char *)x->body.p;
	r.body_len = x->body.len;
	route(&r);
reply:
	ret = send_reply(x, &r);
	buf_release(&r.out);
	return ret;
}

int net_http_start(const char *spec, net_tsd_fn get, unsigned opts,
		   net_access_fn access, net_http **out)
{
	struct sockaddr_storage sa;
	socklen_t salen;
	struct net_http *h;
	char why[160];
	unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD;

	if (net_addr_parse(spec, &sa, &salen, why, sizeof why)) {
		fprintf(stderr, "cellfs: tsd_http: %s\n", why);
		return CF_EINVAL;
	}
	if (!(h = calloc(1, sizeof *h)))
		return CF_ENOMEM;
	h->get = get;
	h->flags = opts;
	h->addr = sa;
	h->access = access;
	if (sa.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, handler, h,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
		MHD_OPTION_URI_LOG_CALLBACK, uri_log, h,
		MHD_OPTION_NOTIFY_COMPLETED, completed, h,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned)NET_HTTP_THREADS,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)NET_HTTP_CONNS,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)NET_HTTP_TIMEOUT_S,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)NET_HTTP_CONN_MEM,
		MHD_OPTION_LISTENING_ADDRESS_REUSE, 1u,
		MHD_OPTION_END);
	if (!h->d) {
		fprintf(stderr, "cellfs: tsd_http: cannot listen on %s\n",
			spec);
		free(h);
		return CF_EIO;
	}
	cf_log(CF_LOG_INFO, "tsd http API on %s", spec);
	*out = h;
	return CF_OK;
}

void net_http_stop(net_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);
	free(h);
}
