/* fuzz-http: requests to the HTTP API (net/http.c on libmicrohttpd, the
 * handlers of net/api_*.c and their JSON bodies), through the real
 * server on a loopback socket, on a live tsd layer.  Each input is one
 * connection: its bytes sent, the writing side shut, the answer read
 * (exchange()).  The server must never crash nor stop answering.
 *
 * Input: the first byte chooses.  Mode 0 (low two bits 0): the rest is
 * the request as raw bytes (request line, headers, body).  Else the
 * request is made well formed around the input, so that mutations reach
 * the handlers: method GET, POST or PUT (mode 1, 2, 3), bit 2 gzips the
 * body (Content-Encoding: gzip), bit 3 asks for a gzipped answer; the
 * input's first line is the request target (bytes a target cannot hold
 * %-escaped), the rest the body, sent with its Content-Length.
 *
 * The db and the tsd layer are made again every EVERY inputs (the
 * server stopped first), so that state does not pile up. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include "engine/cellfs.h"
#include "net/net.h"
#include "tests/fuzz/fuzz.h"
#include "tsd/tsd.h"
#include "util/buf.h"
#include "util/env.h"

#define EVERY 2000
#define WAIT_MS 10000
#define QUIET_MS 50

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static cf_db *db;
static tsd *T;
static net_http *srv;
static int port;
static unsigned calls, gen;
static char path[600];

static int get_tsd(int create, tsd **out)
{
	int rc = CF_OK;

	pthread_mutex_lock(&mu);
	if (!T) {
		struct tsd_options o;
		if (!create) {
			pthread_mutex_unlock(&mu);
			return CF_ENOTFOUND;
		}
		/* puts also keep the series' meta (/api/uid/tsmeta) */
		tsd_options_default(&o);
		o.tsuid_tracking = o.realtime_ts = o.tsuid_incrementing = 1;
		rc = tsd_open(db, &o, &T);
	}
	*out = T;
	pthread_mutex_unlock(&mu);
	return rc;
}

static void stop_all(void)
{
	if (srv)
		net_http_stop(srv);
	srv = NULL;
	if (T)
		tsd_close(T);
	T = NULL;
	if (db)
		cf_db_close(db);
	db = NULL;
	if (path[0])
		env_remove_tree(path);
	path[0] = '\0';
}

/* A port free a moment ago (the kernel's pick for port 0). */
static int free_port(void)
{
	struct sockaddr_in a;
	socklen_t al = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM, 0), p = 0;

	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof a) &&
	    !getsockname(fd, (struct sockaddr *)&a, &al))
		p = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return p;
}

static void start_all(void)
{
	static int once;
	struct cf_options o;
	char spec[32];

	if (!once++) {
		fuzz_dir();
		atexit(stop_all);	/* before fuzz_dir()'s removal */
	}
	snprintf(path, sizeof path, "%s/http-%u", fuzz_dir(), gen++);
	cf_options_default(&o);
	o.background = 0;
	o.sync_mode = CF_SYNC_NONE;
	if (cf_db_open(path, &o, &db))
		abort();
	for (int tries = 0; !srv && tries < 20; tries++) {
		port = free_port();
		snprintf(spec, sizeof spec, "127.0.0.1:%d", port);
		if (port && net_http_start(spec, get_tsd, NET_ALLOW_DELETE, NULL, &srv))
			srv = NULL;
	}
	if (!srv)
		abort();
}

/* Connects to the server; aborts, saying why, when it cannot within
 * WAIT_MS.  A long run on a loaded machine can find every local port
 * taken for a moment (the server's closed connections wait out
 * TIME_WAIT): EADDRNOTAVAIL and EAGAIN are tried again. */
static int dial(void)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (int waited = 0;; waited += 10) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd >= 0 && !connect(fd, (struct sockaddr *)&a, sizeof a))
			return fd;
		int e = errno;
		if (fd >= 0)
			close(fd);
		if ((e != EADDRNOTAVAIL && e != EAGAIN && e != EINTR) ||
		    waited >= WAIT_MS) {
			fprintf(stderr, "fuzz-http: cannot connect: %s\n",
				strerror(e));
			abort();
		}
		poll(NULL, 0, 10);
	}
}

/* Reads what fd answers within ms of silence; the bytes read. */
static size_t drain(int fd, int ms)
{
	struct pollfd pf;
	char sink[65536];
	size_t got = 0;

	for (;;) {
		ssize_t r;
		int k;
		pf.fd = fd;
		pf.events = POLLIN;
		/* libFuzzer's alarm interrupts a poll every second */
		if ((k = poll(&pf, 1, ms)) < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		r = recv(fd, sink, sizeof sink, MSG_DONTWAIT);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return got;
}

/* Closes fd at once (a reset: the server forgets it now). */
static void hang_up(int fd)
{
	struct linger l = { 1, 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
	close(fd);
}

/* Sends req and reads the answer to its end, the server's close, or
 * QUIET_MS of silence (a keep-alive connection stays open once answered;
 * an unfinished request waits for bytes that will not come).  Silence
 * without an answer: the server must still answer another request. */
static void exchange(const void *req, size_t len)
{
	static const char probe[] = "GET /api/version HTTP/1.1\r\n"
		"Host: x\r\nConnection: close\r\n\r\n";
	const char *p = req;
	int fd = dial();
	size_t got;

	while (len) {
		ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			break;	/* the server closed early: fine */
		}
		p += w;
		len -= (size_t)w;
	}
	shutdown(fd, SHUT_WR);
	got = drain(fd, QUIET_MS);
	hang_up(fd);
	if (got)
		return;
	fd = dial();
	if (send(fd, probe, sizeof probe - 1, MSG_NOSIGNAL) !=
	    (ssize_t)(sizeof probe - 1) || !drain(fd, WAIT_MS)) {
		fprintf(stderr, "fuzz-http: the server answers no more\n");
		abort();
	}
	hang_up(fd);
}

/* The gzip form of s[0..n) into out (RFC 1952). */
static void gzip(const void *s, size_t n, struct buf *out)
{
	z_stream z;

	memset(&z, 0, sizeof z);
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK || buf_reserve(out, deflateBound(&z, n)))
		abort();
	z.next_in = (unsigned char *)(uintptr_t)s;
	z.avail_in = (uInt)n;
	z.next_out = out->p + out->len;
	z.avail_out = (uInt)(out->cap - out->len);
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		abort();
	out->len += z.total_out;
	deflateEnd(&z);
}

static void compose(unsigned mode, const uint8_t *data, size_t size,
		    struct buf *req)
{
	static const char *const methods[] = { "", "GET", "POST", "PUT" };
	const uint8_t *nl = memchr(data, '\n', size);
	size_t tl = nl ? (size_t)(nl - data) : size;
	const uint8_t *body = data + tl + (nl != NULL);
	size_t bl = size - tl - (nl != NULL);
	struct buf gz = BUF_INIT;

	if (buf_printf(req, "%s ", methods[mode & 3]))
		abort();
	if (tl == 0 || data[0] != '/')
		buf_putc(req, '/');
	for (size_t i = 0; i < tl; i++)
		if (data[i] <= ' ' || data[i] >= 0x7f)
			buf_printf(req, "%%%02X", data[i]);
		else
			buf_putc(req, data[i]);
	buf_printf(req, " HTTP/1.1\r\nHost: localhost\r\n"
		   "Connection: close\r\n");
	if (mode & 8)
		buf_printf(req, "Accept-Encoding: gzip\r\n");
	if (mode & 4) {
		gzip(body, bl, &gz);
		body = gz.p;
		bl = gz.len;
		buf_printf(req, "Content-Encoding: gzip\r\n");
	}
	if (buf_printf(req, "Content-Length: %zu\r\n\r\n", bl) ||
	    buf_append(req, body, bl))
		abort();
	buf_release(&gz);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf req = BUF_INIT;

	if (srv && ++calls % EVERY == 0)
		stop_all();
	if (!srv)
		start_all();
	if (size == 0)
		return 0;
	if ((data[0] & 3) == 0)
		exchange(data + 1, size - 1);
	else {
		compose(data[0], data + 1, size - 1, &req);
		exchange(req.p, req.len);
	}
	buf_release(&req);
	return 0;
}
