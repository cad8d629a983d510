/*
 * cursor.c: content produced on demand and read at offsets.
 *
 * A cursor keeps a window [base, base + win.len) of its content.  Reads
 * past the window make the producer append more; the window's head is
 * dropped once it lies more than KEEP_BEHIND bytes behind the furthest
 * read, so a long dump read front to back needs bounded memory.  A read
 * before the window restarts production from the beginning.
 */
#include <stdlib.h>
#include <string.h>

#include "tsd/internal.h"
#include "util/err.h"

#define KEEP_BEHIND (256 * 1024)

int tsd_cursor_new(struct tsd_cursor **out)
{
	struct tsd_cursor *c = calloc(1, sizeof *c);
	if (!c)
		return CF_ENOMEM;
	pthread_mutex_init(&c->mu, NULL);
	*out = c;
	return CF_OK;
}

void tsd_cursor_close(tsd_cursor *c)
{
	if (!c)
		return;
	if (c->release)
		c->release(c);
	buf_release(&c->win);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

static int restart(tsd_cursor *c)
{
	if (!c->restart)
		return CF_EIO;	/* content that cannot be produced again */
	buf_reset(&c->win);
	c->base = 0;
	c->eof = 0;
	return c->restart(c);
}

/* Drops the window's bytes before off, keeping KEEP_BEHIND of them. */
static void trim(tsd_cursor *c, uint64_t off)
{
	if (!c->restart || off < c->base + 2 * KEEP_BEHIND)
		return;
	size_t drop = (size_t)(off - c->base - KEEP_BEHIND);
	if (drop > c->win.len)
		drop = c->win.len;
	memmove(c->win.p, c->win.p + drop, c->win.len - drop);
	c->win.len -= drop;
	c->base += drop;
}

int tsd_cursor_pread(tsd_cursor *c, void *dst, size_t n, uint64_t off,
		     size_t *got)
{
	int rc = CF_OK;

	*got = 0;
	pthread_mutex_lock(&c->mu);
	if (off < c->base && (rc = restart(c)))
		goto out;
	trim(c, off);
	while (!c->eof && off + n > c->base + c->win.len) {
		if ((rc = c->more(c)))
			goto out;
	}
	if (off < c->base + c->win.len) {
		size_t at = (size_t)(off - c->base);
		size_t k = c->win.len - at < n ? c->win.len - at : n;
		memcpy(dst, c->win.p + at, k);
		*got = k;
	}
out:
	pthread_mutex_unlock(&c->mu);
	return rc;
}

int tsd_cursor_size(tsd_cursor *c, uint64_t *size)
{
	int rc = CF_OK;

	pthread_mutex_lock(&c->mu);
	while (!c->eof) {
		/* counting needs no content: drop what is produced */
		if (c->restart && c->win.len > KEEP_BEHIND) {
			c->base += c->win.len;
			buf_reset(&c->win);
		}
		if ((rc = c->more(c)))
			break;
	}
	if (rc == CF_OK)
		*size = c->base + c->win.len;
	pthread_mutex_unlock(&c->mu);
	return rc;
}
