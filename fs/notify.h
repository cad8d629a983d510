/*
 * notify.h: the service manager's readiness protocol (sd_notify(3)), the
 * one datagram of it cellfs needs, without libsystemd.
 */
#ifndef CF_FS_NOTIFY_H
#define CF_FS_NOTIFY_H

/* Sends state ("READY=1", "STOPPING=1", "STATUS=...", newline-separated
 * assignments) as one datagram to the AF_UNIX socket named by
 * $NOTIFY_SOCKET (a path, or "@name" for the abstract namespace).  No
 * $NOTIFY_SOCKET (not started by a service manager): 0, nothing sent.
 * Otherwise 0 when sent, or the errno: EAFNOSUPPORT for an address that
 * is not a unix socket (vsock:), ENAMETOOLONG, or what socket(2) or
 * sendto(2) said.  Blocks on a full socket buffer (the manager reads). */
int fs_notify(const char *state);

#endif
