/*
 * telnet.c: OpenTSDB's telnet-style port (RpcHandler's telnet commands;
 * docs/api.md): one command per '\n'-ended line, words separated by
 * spaces.
 *
 *   put METRIC TS VALUE TAGK=TAGV ...   stored; nothing answered, or one
 *                                       "put: ..." error line if refused
 *   version                             two lines
 *   stats                               the tsd counters, one per line
 *   dropcaches                          the UID caches emptied
 *   help                                "available commands: ..."
 *   exit                                closes the connection
 *   anything else                       "unknown command: X.  Try `help'."
 *
 * Consecutive put lines of one read are stored in one batch
 * (tsd_put_lines()): each valid line is stored, each invalid one gets
 * its error line, in order, and the connection stays open.
 *
 * Threads: one thread runs an epoll loop over the listening socket, the
 * connections and a stop eventfd; commands run on it.  net_telnet_stop()
 * signals the eventfd and joins the thread, which closes everything.
 *
 * Memory per connection: the input buffer (a line of at most
 * LINE_MAX bytes plus one read of READ_SIZE; a longer line is refused
 * and skipped) and the output buffer (at most OUT_MAX; error lines for a
 * client that does not read them are dropped, as OpenTSDB drops writes
 * to an unwritable channel).  At most MAX_CONNS connections; more are
 * accepted and closed at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "net/internal.h"
#include "util/err.h"
#include "util/log.h"

#define LINE_MAX (64 * 1024)
#define READ_SIZE (64 * 1024)
#define OUT_MAX (64 * 1024)
#define MAX_CONNS 1024

struct tconn {
	struct tconn *prev, *next;	/* net_telnet.conns */
	int fd;
	struct buf in;		/* unprocessed bytes */
	struct buf out;		/* unsent answer bytes */
	int skip;		/* dropping the rest of an over-long line */
	int closing;		/* exit: close once out is sent */
	uint64_t dropped;	/* answer bytes dropped (out full) */
	struct net_peer peer;	/* who is at the other end */
	int may_put;		/* 1 yes, -1 no, 0 not asked yet */
};

struct net_telnet {
	int lfd, efd, stopfd;
	net_tsd_fn get;
	net_access_fn access;	/* NULL: every client may put */
	pthread_t thr;
	struct tconn *conns;	/* the open connections (the thread's) */
	size_t nconns;
	uint64_t received;	/* commands */
	uint64_t put_errors;
};

static void say(struct tconn *c, const char *s, size_t n)
{
	if (c->out.len + n > OUT_MAX || buf_append(&c->out, s, n))
		c->dropped += n;
}

static void flush_out(struct tconn *c)
{
	while (c->out.len) {
		ssize_t w = send(c->fd, c->out.p, c->out.len, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		memmove(c->out.p, c->out.p + w, c->out.len - (size_t)w);
		c->out.len -= (size_t)w;
	}
}

struct batch {
	struct tconn *c;
	struct net_telnet *s;
};

static void put_error(void *ctx, uint64_t line, const char *reason)
{
	struct batch *b = ctx;
	char msg[400];
	int n;

	/* PutDataPointRpc: NumberFormatException is "invalid value", the
	 * other refusals "illegal argument" */
	if (!strncmp(reason, "invalid value: ", 15))
		n = snprintf(msg, sizeof msg, "put: invalid value: %s\n",
			     reason + 15);
	else
		n = snprintf(msg, sizeof msg, "put: illegal argument: %s\n",
			     reason);
	if (n > (int)sizeof msg - 1) {
		n = (int)sizeof msg - 1;
		msg[n - 1] = '\n';
	}
	say(b->c, msg, (size_t)n);
	b->s->put_errors++;
	cf_log(CF_LOG_WARN, "tsd telnet: put refused: %s", reason);
}

/* Stores the put lines gathered in pend. */
static void flush_puts(struct net_telnet *s, struct tconn *c,
		       struct buf *pend)
{
	struct batch b = { c, s };
	struct tsd_error err;
	tsd *t;
	int rc;

	if (!pend->len)
		return;
	rc = s->get(1, &t);
	if (rc == CF_OK)
		rc = tsd_put_lines(t, (const char *)pend->p, pend->len,
				   put_error, &b, NULL, &err);
	else
		snprintf(err.reason, sizeof err.reason, "%s", cf_strerror(rc));
	if (rc) {
		/* nothing of the batch is stored: one error per line */
		char msg[400];
		int n = snprintf(msg, sizeof msg, "put: HBase error: %s\n",
				 err.reason);
		if (n > (int)sizeof msg - 1)
			n = (int)sizeof msg - 1;
		for (size_t i = 0; i < pend->len; i++)
			if (pend->p[i] == '\n')
				say(c, msg, (size_t)n);
		cf_log(CF_LOG_ERROR, "tsd telnet: put failed: %s", err.reason);
	}
	buf_reset(pend);
}

static void stats(struct net_telnet *s, struct tconn *c)
{
	struct net_stat st[NET_TSD_STATS];
	struct buf b = BUF_INIT;
	char host[64];
	long now = (long)time(NULL);

	net_hostname(host, sizeof host);
	net_tsd_stats(s->get, st);
#define STAT(name, v, tag) buf_printf(&b, "tsd." name " %ld %" PRIu64 \
	"%s host=%s\n", now, (uint64_t)(v), tag, host)
	STAT("rpc.received", s->received, " type=telnet");
	STAT("rpc.errors", s->put_errors, " type=illegal_arguments");
	STAT("connectionmgr.connections", s->nconns, " type=open");
#undef STAT
	for (size_t i = 0; i < NET_TSD_STATS; i++)
		buf_printf(&b, "%s %ld %" PRIu64 "%s%s host=%s\n",
			   st[i].metric, now, st[i].value,
			   st[i].type ? " type=" : "",
			   st[i].type ? st[i].type : "", host);
	say(c, (const char *)b.p, b.len);
	buf_release(&b);
}

/* Whether c's peer may put (asked once a connection; a refusal is
 * logged once). */
static int may_put(struct net_telnet *s, struct tconn *c)
{
	char why[200] = "";

	if (!s->access)
		return 1;
	if (!c->may_put) {
		c->may_put = s->access(c->peer.local, c->peer.uid, 1, why,
				       sizeof why) ? -1 : 1;
		if (c->may_put < 0)
			cf_log(CF_LOG_WARN, "tsd telnet: put refused: %s", why);
	}
	return c->may_put > 0;
}

/* Runs the command line[0..n) (no '\n'); put lines go to pend. */
static void command(struct net_telnet *s, struct tconn *c, const char *line,
		    size_t n, struct buf *pend)
{
	/* OpenTSDB 2.4 lists its telnet commands in the order RpcManager
	 * registers them (an ImmutableMap); those cellfs serves */
	static const char help[] = "available commands: stats dropcaches "
				   "version exit help put \n";
	size_t w;

	if (n && line[n - 1] == '\r')
		n--;
	w = strcspn(line, " \n");
	if (w > n)
		w = n;
	s->received++;
	if (w == 3 && !memcmp(line, "put", 3)) {
		if (!may_put(s, c)) {
			say(c, "put: permission denied\n", 23);
			s->put_errors++;
			return;
		}
		if (buf_append(pend, line, n) || buf_putc(pend, '\n'))
			say(c, "put: out of memory\n", 19);
		return;
	}
	flush_puts(s, c, pend);
	if (w == 7 && !memcmp(line, "version", 7)) {
		say(c, NET_REVISION_LINE "\n" NET_BUILD_LINE "\n",
		    strlen(NET_REVISION_LINE) + strlen(NET_BUILD_LINE) + 2);
	} else if (w == 5 && !memcmp(line, "stats", 5)) {
		stats(s, c);
	} else if (w == 10 && !memcmp(line, "dropcaches", 10)) {
		tsd *t;
		if (s->get(0, &t) == CF_OK)
			tsd_drop_caches(t);
		say(c, "Caches dropped.\n", 16);
	} else if (w == 4 && !memcmp(line, "help", 4)) {
		say(c, help, sizeof help - 1);
	} else if (w == 4 && !memcmp(line, "exit", 4)) {
		c->closing = 1;
	} else {
		char msg[200];
		int k = snprintf(msg, sizeof msg, "unknown command: %.*s.  "
				 "Try `help'.\n", w > 100 ? 100 : (int)w, line);
		say(c, msg, (size_t)k);
	}
}

/* Runs the complete lines of c->in. */
static void process(struct net_telnet *s, struct tconn *c)
{
	struct buf pend = BUF_INIT;
	size_t b = 0;

	while (b < c->in.len && !c->closing) {
		const char *p = (const char *)c->in.p + b;
		const char *nl = memchr(p, '\n', c->in.len - b);
		if (!nl)
			break;
		if (c->skip)
			c->skip = 0;
		else
			command(s, c, p, (size_t)(nl - p), &pend);
		b = (size_t)(nl - (const char *)c->in.p) + 1;
	}
	flush_puts(s, c, &pend);
	buf_release(&pend);
	memmove(c->in.p, c->in.p + b, c->in.len - b);
	c->in.len -= b;
	if (c->closing) {
		c->in.len = 0;	/* what follows "exit" is not read */
		return;
	}
	if (c->in.len > LINE_MAX) {
		if (!c->skip) {
			say(c, "put: illegal argument: line too long\n", 37);
			cf_log(CF_LOG_WARN, "tsd telnet: line over 64 KiB "
			       "refused");
		}
		c->skip = 1;
		c->in.len = 0;
	}
}

static void drop(struct net_telnet *s, struct tconn *c)
{
	epoll_ctl(s->efd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	buf_release(&c->in);
	buf_release(&c->out);
	free(c);
	s->nconns--;
}

/* Reads what c has; 0 while open, -1 when it is to be dropped. */
static int on_readable(struct net_telnet *s, struct tconn *c)
{
	for (;;) {
		ssize_t r;
		if (buf_reserve(&c->in, READ_SIZE))
			return -1;
		r = recv(c->fd, c->in.p + c->in.len, READ_SIZE, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (r <= 0)
			return -1;
		c->in.len += (size_t)r;
		process(s, c);
		flush_out(c);
		if (c->closing && !c->out.len)
			return -1;
	}
}

static void on_accept(struct net_telnet *s)
{
	for (;;) {
		struct epoll_event ev;
		struct tconn *c;
		int fd = accept4(s->lfd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		if (s->nconns >= MAX_CONNS || !(c = calloc(1, sizeof *c))) {
			close(fd);
			cf_log(CF_LOG_WARN, "tsd telnet: connection refused: "
			       "%d open", MAX_CONNS);
			continue;
		}
		c->fd = fd;
		if (s->access)
			net_peer_of(fd, &c->peer);
		ev.events = EPOLLIN | EPOLLOUT | EPOLLET | EPOLLRDHUP;
		ev.data.ptr = c;
		if (epoll_ctl(s->efd, EPOLL_CTL_ADD, fd, &ev)) {
			close(fd);
			free(c);
			continue;
		}
		c->next = s->conns;
		if (s->conns)
			s->conns->prev = c;
		s->conns = c;
		s->nconns++;
	}
}

static void *loop(void *arg)
{
	struct net_telnet *s = arg;
	struct epoll_event evs[64];
	int stop = 0;

	while (!stop) {
		int n = epoll_wait(s->efd, evs, 64, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		for (int i = 0; i < n; i++) {
			struct tconn *c = evs[i].data.ptr;
			if (c == NULL) {
				on_accept(s);
				continue;
			}
			if (c == (struct tconn *)s) {
				stop = 1;
				continue;
			}
			if (evs[i].events & EPOLLOUT)
				flush_out(c);
			if (on_readable(s, c) ||
			    (c->closing && !c->out.len) ||
			    (evs[i].events & (EPOLLERR | EPOLLHUP)))
				drop(s, c);
		}
	}
	return NULL;
}

int net_telnet_start(const char *spec, net_tsd_fn get, net_access_fn access,
		     net_telnet **out)
{
	struct sockaddr_storage sa;
	socklen_t salen;
	struct net_telnet *s;
	struct epoll_event ev;
	char why[160];
	int one = 1;

	if (net_addr_parse(spec, &sa, &salen, why, sizeof why)) {
		fprintf(stderr, "cellfs: tsd_telnet: %s\n", why);
		return CF_EINVAL;
	}
	if (!(s = calloc(1, sizeof *s)))
		return CF_ENOMEM;
	s->get = get;
	s->access = access;
	s->lfd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
			SOCK_CLOEXEC, 0);
	s->efd = epoll_create1(EPOLL_CLOEXEC);
	s->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->lfd < 0 || s->efd < 0 || s->stopfd < 0)
		goto fail;
	setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(s->lfd, (struct sockaddr *)&sa, salen) ||
	    listen(s->lfd, 128)) {
		fprintf(stderr, "cellfs: tsd_telnet: cannot listen on %s: "
			"%s\n", spec, strerror(errno));
		goto fail;
	}
	ev.events = EPOLLIN;
	ev.data.ptr = NULL;
	if (epoll_ctl(s->efd, EPOLL_CTL_ADD, s->lfd, &ev))
		goto fail;
	ev.data.ptr = s;
	if (epoll_ctl(s->efd, EPOLL_CTL_ADD, s->stopfd, &ev))
		goto fail;
	if (pthread_create(&s->thr, NULL, loop, s))
		goto fail;
	cf_log(CF_LOG_INFO, "tsd telnet port on %s", spec);
	*out = s;
	return CF_OK;
fail:
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->efd >= 0)
		close(s->efd);
	if (s->stopfd >= 0)
		close(s->stopfd);
	free(s);
	return CF_EIO;
}

void net_telnet_stop(net_telnet *s)
{
	uint64_t one = 1;

	if (!s)
		return;
	if (write(s->stopfd, &one, sizeof one) != sizeof one)
		cf_log(CF_LOG_ERROR, "tsd telnet: cannot signal the thread");
	pthread_join(s->thr, NULL);
	close(s->lfd);
	while (s->conns)
		drop(s, s->conns);
	close(s->efd);
	close(s->stopfd);
	free(s);
}
