/*
 * peer.c: who is at the other end of a connection of the network ports
 * (net/net.h's net_access_fn is then asked what they may do).  A peer on
 * this host is a socket of /proc/net/tcp (or tcp6) whose local end is
 * the connection's remote end and whose remote end is its local end: its
 * line names the user owning it, as identd finds it.  Anything else is a
 * peer of another host.  Memory: one line of those files at a time.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "net/internal.h"

/* "ADDR:PORT" as /proc/net/tcp{,6} print an end: the address's 32-bit
 * words in host order, the port in hex. */
static void proc_end(const struct sockaddr_storage *sa, char *out, size_t n)
{
	uint32_t w[4];

	if (sa->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)sa;
		memcpy(w, &a->sin_addr, 4);
		snprintf(out, n, "%08X:%04X", w[0], ntohs(a->sin_port));
	} else {
		const struct sockaddr_in6 *a = (const void *)sa;
		memcpy(w, &a->sin6_addr, 16);
		snprintf(out, n, "%08X%08X%08X%08X:%04X", w[0], w[1], w[2],
			 w[3], ntohs(a->sin6_port));
	}
}

/* An IPv4 peer seen through an IPv6 socket (::ffff:a.b.c.d) as IPv4. */
static void unmap(struct sockaddr_storage *sa)
{
	const struct sockaddr_in6 *a6 = (const void *)sa;
	struct sockaddr_in a4;

	if (sa->ss_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr))
		return;
	memset(&a4, 0, sizeof a4);
	a4.sin_family = AF_INET;
	a4.sin_port = a6->sin6_port;
	memcpy(&a4.sin_addr, a6->sin6_addr.s6_addr + 12, 4);
	memset(sa, 0, sizeof *sa);
	memcpy(sa, &a4, sizeof a4);
}

void net_peer_of(int fd, struct net_peer *p)
{
	struct sockaddr_storage me, them;
	socklen_t ml = sizeof me, tl = sizeof them;
	char want_local[64], want_rem[64], line[512];
	FILE *f;

	p->local = 0;
	p->uid = (uid_t)-1;
	if (getsockname(fd, (struct sockaddr *)&me, &ml) ||
	    getpeername(fd, (struct sockaddr *)&them, &tl))
		return;
	unmap(&me);
	unmap(&them);
	if ((me.ss_family != AF_INET && me.ss_family != AF_INET6) ||
	    me.ss_family != them.ss_family)
		return;
	/* the peer's socket: its local end is them, its remote end me */
	proc_end(&them, want_local, sizeof want_local);
	proc_end(&me, want_rem, sizeof want_rem);
	f = fopen(me.ss_family == AF_INET ? "/proc/net/tcp" : "/proc/net/tcp6",
		  "re");
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		char loc[64], rem[64];
		unsigned long uid;
		/* sl local rem st tx:rx tr:when retrnsmt uid ... */
		if (sscanf(line, " %*s %63s %63s %*s %*s %*s %*s %lu", loc, rem,
			   &uid) != 3)
			continue;
		if (!strcmp(loc, want_local) && !strcmp(rem, want_rem)) {
			p->local = 1;
			p->uid = (uid_t)uid;
			break;
		}
	}
	fclose(f);
}
