/*
 * net.h: OpenTSDB's network front doors on the tsd layer, for the daemon
 * (docs/api.md): the HTTP API (net/http.c, libmicrohttpd) and the telnet
 * put port (net/telnet.c).  Off unless started; fs/main.c starts them
 * after the mount and stops them before the tsd layer closes.
 *
 * The servers reach tsd/ through a callback that gives the daemon's one
 * tsd handle (shared with MNT/tsd/, so UIDs and counters are one): with
 * create 0 it may answer CF_ENOTFOUND while no tsd table exists (nothing
 * was ever written), with create 1 it opens the layer, creating its
 * tables.  The handle stays valid until the server is stopped.
 *
 * Errors: CF_EINVAL (bad address; a reason on stderr), CF_EIO (the socket
 * cannot be bound or the server thread started).
 */
#ifndef CF_NET_H
#define CF_NET_H

#include <netinet/in.h>
#include <stddef.h>
#include <sys/types.h>

#include "tsd/tsd.h"

typedef int (*net_tsd_fn)(int create, tsd **out);

/* What a client of the network ports may do: read (write 0) or change
 * (write 1) the time series.  local 1: a user of this host, uid the owner
 * of the client's socket; local 0: a peer of another host (uid unknown).
 * 0 when allowed, else an errno (EACCES) with the reason in why[0..n).
 * NULL: every client may do everything (OpenTSDB's ports). */
typedef int (*net_access_fn)(int local, uid_t uid, int write, char *why,
			     size_t n);

/* Parses "PORT", "ADDR:PORT" or "[ADDR6]:PORT" (ADDR a numeric IPv4 or
 * IPv6 address); PORT alone binds 127.0.0.1.  CF_EINVAL with a reason in
 * why[0..n). */
int net_addr_parse(const char *spec, struct sockaddr_storage *out,
		   socklen_t *len, char *why, size_t n);

typedef struct net_http net_http;
typedef struct net_telnet net_telnet;

/* Starts the HTTP API on spec; *out is the caller's until
 * net_http_stop(), which closes the listening socket and every
 * connection and joins the server's threads.  opts: NET_ALLOW_DELETE
 * serves delete queries (DELETE /api/query, a query's "delete":true;
 * OpenTSDB's tsd.http.query.allow_delete), refused with 400 without it.
 * NET_TSUID_TRACKING, NET_REALTIME_TS, NET_TSUID_INCREMENTING and
 * NET_REALTIME_UID say what the tsd layer's writes keep of the meta
 * data (struct tsd_options), for /api/config to report. */
#define NET_ALLOW_DELETE 1u
#define NET_TSUID_TRACKING 2u
#define NET_REALTIME_TS 4u
#define NET_TSUID_INCREMENTING 8u
#define NET_REALTIME_UID 16u
int net_http_start(const char *spec, net_tsd_fn get, unsigned opts,
		   net_access_fn access, net_http **out);
void net_http_stop(net_http *h);
/* OpenTSDB's tsd.http.request.cors_domains, for the HTTP API started
 * after it: "*" (any origin) or origins separated by commas (compared
 * without case), NULL or "" for none (the default: a request with an
 * Origin header is served without CORS headers, OPTIONS is 405).
 * CF_EINVAL ('*' among others, an empty or overlong origin), CF_ENOMEM;
 * set once, before any server starts. */
int net_http_set_cors(const char *domains);
/* The list as given ("" when none), for /api/config. */
const char *net_http_cors(void);
/* OpenTSDB's default tsd.http.request.cors_headers. */
#define NET_CORS_HEADERS "Authorization, Content-Type, Accept, Origin, " \
	"User-Agent, DNT, Cache-Control, X-Mx-ReqToken, Keep-Alive, " \
	"X-Requested-With, If-Modified-Since"

/* Starts the telnet put port on spec; same ownership. */
int net_telnet_start(const char *spec, net_tsd_fn get, net_access_fn access,
		     net_telnet **out);
void net_telnet_stop(net_telnet *t);

/* The version lines both servers report ("cellfs 0.1 ..."). */
#define NET_VERSION "2.4.0"
#define NET_REVISION_LINE "net.opentsdb 2.4.0 (cellfs 0.1) built at " \
	"revision cellfs (MODIFIED)"
#define NET_BUILD_LINE "Built on cellfs by cellfs@localhost:cellfs"

#endif
