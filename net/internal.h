/*
 * internal.h: what the files of net/ share: one HTTP request as the API
 * handlers see it (no libmicrohttpd type leaks past net/http.c), the
 * reply they build, and the bounds.
 */
#ifndef CF_NET_INTERNAL_H
#define CF_NET_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "net/net.h"
#include "util/buf.h"

/* Largest request body (after gzip decoding): larger gets 413. */
#define NET_BODY_MAX (16u << 20)
/* Largest response body: a query answering more gets 413. */
#define NET_REPLY_MAX (256u << 20)
/* Points of one /api/put (OpenTSDB has no limit; the body cap bounds it
 * anyway, this keeps the per-point state small). */
#define NET_PUT_MAX 1000000

/* The other end of a connection (net/peer.c). */
struct net_peer {
	int local;		/* a socket of this host */
	uid_t uid;		/* its owner (local only) */
};
void net_peer_of(int fd, struct net_peer *p);

struct net_req {
	/* request */
	const char *method;	/* "GET", "POST", ... */
	const char *path;	/* "/api/put" (no query string) */
	const char *query;	/* raw query string after '?', or "" */
	int api_version;	/* 1 under /api/ (HttpQuery.apiVersion), 0
				 * for the deprecated paths (/q, /suggest) */
	const char *body;	/* NUL-terminated; body_len bytes */
	size_t body_len;
	net_tsd_fn get;
	int allow_delete;	/* NET_ALLOW_DELETE: delete queries served */
	unsigned opts;		/* net_http_start()'s */
	net_access_fn access;	/* net_http_start()'s, or NULL */
	struct net_peer peer;	/* who asks */
	const struct sockaddr_storage *addr;	/* the address served */
	/* the handler's answer */
	int status;
	struct buf out;
	const char *ctype;	/* NULL: application/json; charset=UTF-8 */
	const char *cors_origin;	/* an allowed Origin: CORS headers */
	void *conn;		/* net/http.c's connection */
};

/* The value of query parameter name (decoded; "" when given without
 * '='), or NULL when absent.  Valid during the request. */
const char *net_arg(struct net_req *r, const char *name);
/* Calls fn(arg, value) for every query parameter name, in order
 * (repeated ones each once; "" for one without '=') while it returns 0;
 * returns the first nonzero. */
int net_args(struct net_req *r, const char *name,
	     int (*fn)(void *arg, const char *value), void *arg);

/* Sets OpenTSDB's error answer: status and
 * {"error":{"code":N,"message":M[,"details":D]}}; details may be NULL or
 * "" (left out).  Returns 0. */
int net_error(struct net_req *r, int status, const char *msg,
	      const char *details);
/* 405 "Method not allowed" as RpcUtil.allowedMethods answers it. */
int net_bad_method(struct net_req *r);
/* net/stats.c: the tsd counters both front doors print (StatsRpc's
 * names; type the "type" tag or NULL), in order. */
#define NET_TSD_STATS 7
struct net_stat {
	const char *metric, *type;
	uint64_t value;
};
void net_tsd_stats(net_tsd_fn get, struct net_stat out[NET_TSD_STATS]);
/* This host's name, for the host tag ("localhost" when unknown). */
void net_hostname(char *buf, size_t n);

/* 1 if the request has a body other than blanks. */
int net_has_body(const struct net_req *r);
/* 400 "Missing message content" (HttpJsonSerializer's answer to no
 * body).  Returns 0. */
int net_no_body(struct net_req *r);
/* The body parsed as JSON (a jansson json_t, the caller's), or NULL with
 * the answer set: no body (net_no_body) or not JSON (400 "Unable to
 * parse the given JSON", jansson's reason in details). */
void *net_body_json(struct net_req *r);
/* HttpQuery.getAPIMethod: the method, or for a GET the one its
 * method_override names (GET, POST, PUT, DELETE).  NULL (with the 405
 * answer set) when the override names none. */
const char *net_method(struct net_req *r);
/* Java's Integer.parseInt: s is an optional sign and decimal digits
 * within an int.  0 with *out, or -1. */
int net_java_int(const char *s, int *out);
/* Jackson 2.9's reading of a Java field from a JSON value (net/jackson.c).
 * Each returns 0 with *out, or 1 with Jackson's reason (one line) in
 * jwhy[jn], for a value Jackson refuses.
 * net_jackson_bool: a boolean (_parseBooleanPrimitive): true, false, null
 * or absent (v NULL) false, an integer (0 false), the strings "true",
 * "True", "false", "False", "null", "" (trimmed).
 * net_jackson_long: a long or int (type "long" or "int" names it in the
 * reason; the caller checks an int's range): an integer, a float within
 * a long (its integer part), a string of one, null, "" or "null" (0).
 * net_jackson_unknown: 1 when object o has a field not in known (names
 * each ended by a NUL, the list by an empty one), as for a class without
 * @JsonIgnoreProperties (class names it in the reason). */
int net_jackson_bool(void *v, int *out, char *jwhy, size_t jn);
int net_jackson_long(void *v, long long *out, const char *type, char *jwhy,
		     size_t jn);
int net_jackson_unknown(void *o, const char *known, const char *class,
			char *jwhy, size_t jn);
/* Sets status 200 and the JSON text of j (a json_t *, consumed). */
int net_json_reply(struct net_req *r, void *j);

/* The API endpoints (net/api_*.c).  Each sets r->status and r->out. */
int net_api_put(struct net_req *r);
int net_api_query(struct net_req *r);
int net_api_query_last(struct net_req *r);
int net_api_query_gexp(struct net_req *r);
int net_api_query_exp(struct net_req *r);
int net_api_suggest(struct net_req *r);
int net_api_aggregators(struct net_req *r);
int net_api_version(struct net_req *r);
int net_api_filters(struct net_req *r);
int net_api_uid_assign(struct net_req *r);
int net_api_uid_rename(struct net_req *r);
int net_api_uidmeta(struct net_req *r);
int net_api_tsmeta(struct net_req *r);
int net_api_config(struct net_req *r);
int net_api_graph(struct net_req *r);
int net_api_serializers(struct net_req *r);
int net_api_search(struct net_req *r);
int net_api_stats(struct net_req *r);
int net_api_dropcaches(struct net_req *r);
int net_api_search_lookup(struct net_req *r);
int net_api_annotation(struct net_req *r);
int net_api_annotations(struct net_req *r);
int net_api_annotation_bulk(struct net_req *r);
int net_api_tree(struct net_req *r);

#endif
