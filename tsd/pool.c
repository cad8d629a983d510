/*
 * pool.c: the point arrays of queries (struct tsd_dp), from blocks kept
 * for the next query.
 *
 * A query holds its series' points in arrays that grow as rows are read
 * (tsd/exec.c).  Fresh memory costs a page fault a page when first
 * written, which on a virtual machine is most of the cost of loading
 * points from memory (docs/timeseries_performance.md); blocks given back here are
 * handed to the next query instead, already mapped.
 *
 * A block is a header (its capacity; the free list's link) and 64 << k
 * points.  Blocks of every class are kept when freed, at most POOL_MAX
 * bytes of them together (the pool's memory bound); the rest go back to
 * malloc.  Small ones too: a query of the last hour of 100 series frees
 * a hundred 32 KiB blocks, which malloc hands back to the kernel at the
 * top of its heap, to fault in again at the next query (half of such a
 * query's CPU when only blocks of 64 KiB and more were kept).  pool_mu guards the free
 * lists (a leaf lock).
 */
#include <stdlib.h>
#include <string.h>

#include "tsd/internal.h"
#include "util/err.h"

#define POOL_MAX (32u << 20)
#define KEEP_MIN 64		/* points: 2 KiB */

struct tsd_blk {
	size_t cap;		/* points */
	struct tsd_blk *next;	/* in a free list */
};

static size_t class_of(size_t cap)
{
	size_t k = 0;
	while (((size_t)64 << k) < cap)
		k++;
	return k;
}

static struct tsd_dp *pts_of(struct tsd_blk *b)
{
	return (struct tsd_dp *)(b + 1);
}

static struct tsd_blk *blk_of(struct tsd_dp *p)
{
	return (struct tsd_blk *)p - 1;
}

struct tsd_dp *tsd_points_grow(tsd *t, struct tsd_dp *p, size_t n,
			       size_t want, size_t *cap)
{
	size_t k = class_of(want), c = (size_t)64 << k;
	struct tsd_blk *b = NULL;

	if (k < TSD_POOL_CLASSES) {
		pthread_mutex_lock(&t->pool_mu);
		if ((b = t->pool[k])) {
			t->pool[k] = b->next;
			t->pool_bytes -= c * sizeof(struct tsd_dp);
		}
		pthread_mutex_unlock(&t->pool_mu);
	}
	if (!b) {
		if (c > (SIZE_MAX - sizeof *b) / sizeof(struct tsd_dp) ||
		    !(b = malloc(sizeof *b + c * sizeof(struct tsd_dp))))
			return NULL;
	}
	b->cap = c;
	if (n)
		memcpy(pts_of(b), p, n * sizeof *p);
	tsd_points_free(t, p);
	*cap = c;
	return pts_of(b);
}

void tsd_points_free(tsd *t, struct tsd_dp *p)
{
	if (!p)
		return;
	struct tsd_blk *b = blk_of(p);
	size_t k = class_of(b->cap), bytes = b->cap * sizeof *p;

	if (b->cap >= KEEP_MIN && k < TSD_POOL_CLASSES) {
		pthread_mutex_lock(&t->pool_mu);
		if (t->pool_bytes + bytes <= POOL_MAX) {
			b->next = t->pool[k];
			t->pool[k] = b;
			t->pool_bytes += bytes;
			b = NULL;
		}
		pthread_mutex_unlock(&t->pool_mu);
	}
	free(b);
}

void tsd_points_pool_release(tsd *t)
{
	for (size_t k = 0; k < TSD_POOL_CLASSES; k++)
		while (t->pool[k]) {
			struct tsd_blk *b = t->pool[k];
			t->pool[k] = b->next;
			free(b);
		}
	t->pool_bytes = 0;
}
