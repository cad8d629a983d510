/*
 * addr.c: the ADDR:PORT of -o tsd_http= and -o tsd_telnet= (net/net.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/net.h"
#include "util/err.h"

int net_addr_parse(const char *spec, struct sockaddr_storage *out,
		   socklen_t *len, char *why, size_t n)
{
	char host[64];
	const char *port = spec, *colon;
	char *end;
	unsigned long p;

	memset(out, 0, sizeof *out);
	strcpy(host, "127.0.0.1");
	if (spec[0] == '[') {
		const char *rb = strchr(spec, ']');
		if (!rb || rb[1] != ':' || (size_t)(rb - spec - 1) >= sizeof host)
			goto bad;
		memcpy(host, spec + 1, (size_t)(rb - spec - 1));
		host[rb - spec - 1] = '\0';
		port = rb + 2;
	} else if ((colon = strrchr(spec, ':'))) {
		if ((size_t)(colon - spec) >= sizeof host || colon == spec)
			goto bad;
		memcpy(host, spec, (size_t)(colon - spec));
		host[colon - spec] = '\0';
		port = colon + 1;
	}
	errno = 0;
	p = strtoul(port, &end, 10);
	if (errno || end == port || *end || p == 0 || p > 65535 ||
	    port[0] == '-' || port[0] == '+')
		goto bad;
	if (strchr(host, ':')) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)out;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)p);
		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			goto bad;
		*len = sizeof *a;
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)out;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)p);
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			goto bad;
		*len = sizeof *a;
	}
	return CF_OK;
bad:
	snprintf(why, n, "'%s' is not PORT, ADDR:PORT or [ADDR6]:PORT with "
		 "a numeric address and a port 1-65535", spec);
	return CF_EINVAL;
}
