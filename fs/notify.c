/*
 * notify.c: sd_notify(3) as one sendto(2): systemd's Type=notify services
 * tell it they are ready (READY=1) and going (STOPPING=1) by a datagram
 * to the unix socket in $NOTIFY_SOCKET.  Thirty lines instead of a link
 * against libsystemd.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fs/notify.h"

int fs_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa;
	size_t len;
	socklen_t salen;
	ssize_t n;
	int fd, err = 0;

	if (!path || !*path)
		return 0;
	if (path[0] != '/' && path[0] != '@')
		return EAFNOSUPPORT;
	len = strlen(path);
	if (len >= sizeof sa.sun_path)
		return ENAMETOOLONG;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';	/* abstract: no terminating NUL */
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len +
			    (path[0] == '/'));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	do
		n = sendto(fd, state, strlen(state), MSG_NOSIGNAL,
			   (const struct sockaddr *)&sa, salen);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		err = errno;
	else if ((size_t)n != strlen(state))
		err = EMSGSIZE;
	close(fd);
	return err;
}
