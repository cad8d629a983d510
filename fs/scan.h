/*
 * scan.h: the scan file T/.scan/QUERY (fs/scan.c), reached through the
 * fs_hq_* dispatch of fs/cellq.c.  Functions return 0 or an errno and
 * fill why (up to whylen bytes) with the reason for MNT/.log.
 */
#ifndef CF_FS_SCAN_H
#define CF_FS_SCAN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "engine/cellfs.h"

struct fs_scan;

/* The most pieces a read's bytes come in (fs_scan_read's iov). */
#define FS_SCAN_IOV 32

/* 0 if q is a well-formed query. */
int fs_scan_check(const char *q, char *why, size_t whylen);
/* Opens the scan query q of table; *out is the caller's until
 * fs_scan_close().  Nothing is read before the first fs_scan_read.
 * Returns a CF_* code (CF_EINVAL, CF_ENOTFOUND: an unknown family). */
int fs_scan_open(cf_db *db, const char *table, const char *q,
		 struct fs_scan **out, char *why, size_t whylen);
/* Opens the dump of table that reading T/.batch shows: every kept
 * version of every cell as a line `put ROW FAM:QUAL@TS VALUE`, rows in
 * key order, read from the engine a page of 1024 cells at a time; read
 * as a scan file is (fs_scan_read). */
int fs_scan_open_dump(cf_db *db, const char *table, struct fs_scan **out,
		      char *why, size_t whylen);
/* How a read left to the producer is answered (from its thread): with
 * the pieces (err 0), or err, an errno, and why for MNT/.log. */
typedef void fs_scan_reply_fn(void *arg, const struct iovec *iov, int niov,
			      int err, const char *why);
/* fs_scan_read's answer: reply(arg, ...) will answer this read. */
#define FS_SCAN_LATER (-1)
/* Up to n bytes of the result at offset off, *got in all, as *niov
 * pieces into iov (FS_SCAN_IOV of them): fewer than n only at the end
 * (or, for n over 1 MiB, a short read).  Reads at increasing offsets
 * continue the scan; an earlier offset starts it again.  Reads of one
 * s take turns: after a read that returned 0, its caller sends the
 * pieces and then calls fs_scan_ahead(s), even if s was closed
 * meanwhile (that call ends the turn; the pieces are valid until it).
 * When the bytes are not made yet and another thread makes them, and
 * reply is not NULL, returns FS_SCAN_LATER at once: that thread calls
 * reply(arg, ...) when they are, and ends the turn itself.  A read that
 * failed ended its turn itself.  Thread-safe. */
int fs_scan_read(struct fs_scan *s, size_t n, uint64_t off,
		 struct iovec *iov, int *niov, size_t *got, char *why,
		 size_t whylen, fs_scan_reply_fn *reply, void *arg);
/* Ends a read's turn; then, unless another thread produces, the scan
 * ended or s was closed, goes on producing the lines that reads after
 * it will want, while the reader takes these: until three reads' worth
 * past the last read, the ring of chunks full (2 MiB), or s closed.
 * Frees s if it was closed meanwhile. */
void fs_scan_ahead(struct fs_scan *s);
/* Closes s; a read's turn or production under way keeps it until it
 * ends, which production does at the next row. */
void fs_scan_close(struct fs_scan *s);

#endif
