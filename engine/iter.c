/*
 * iter.c: the merging iterator.  A binary min-heap of the valid children
 * ordered by (key, child index); the top is the current entry.  Each
 * child's current key is cached beside it (a child's key stays valid
 * until the child moves, and only the merge moves it), so a heap step
 * costs comparisons, not indirect calls.
 *
 * A scan mostly takes several entries in a row from one child (the cells
 * of a row, runs of rows from the newest file), so next() first checks
 * whether the moved top still sorts before its rival, the smaller of its
 * two heap children: one ikey_cmp, the heap untouched.  The rival is
 * remembered until heap positions 1 and 2 change, so a run costs one
 * comparison per entry, and a switch of child no more than before: the
 * rival's comparison is the first step of the sift.
 *
 * A step back (seek_lt) puts every child on its last entry below the
 * key and makes the greatest of those current without building a heap
 * (`back`): a reversed scan asks that once a row and then seeks forward
 * to the row's start anyway.  A next() from there first seeks every
 * child forward to the current key, so the merge goes on as after a
 * seek.
 *
 * A child that fails ends the merge: valid() turns 0 and status() keeps
 * reporting the first error seen, also across later seeks, so no reader
 * sees entries past a failure or mistakes a failed scan for a short one.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/iter.h"
#include "engine/key.h"
#include "util/err.h"

struct kid {
	struct iter *it;
	const unsigned char *key;	/* its current key, while in the heap */
	size_t klen;
};

struct merge {
	struct iter it;
	struct kid *kids;
	size_t n;
	size_t *heap;		/* indexes into kids[] */
	size_t nheap;
	size_t rival;		/* heap position (1 or 2) of the smaller of
				 * heap[1] and heap[2]; 0: not known */
	size_t back;		/* 1 + the child current after a seek_lt
				 * (no heap then); 0: the heap's top is */
	int rc;			/* sticky: the first child error */
};

static int less(const struct merge *m, size_t a, size_t b)
{
	const struct kid *x = &m->kids[a], *y = &m->kids[b];
	int c = ikey_cmp(x->key, x->klen, y->key, y->klen);

	return c < 0 || (c == 0 && a < b);
}

/* Restores the heap below position i (whose entry may have grown). */
static void sift_down(struct merge *m, size_t i)
{
	size_t *h = m->heap, top = h[i];

	for (;;) {
		size_t l = 2 * i + 1, s;
		if (l >= m->nheap)
			break;
		s = l;
		if (l + 1 < m->nheap && less(m, h[l + 1], h[l]))
			s = l + 1;
		if (!less(m, h[s], top))
			break;
		h[i] = h[s];
		i = s;
	}
	h[i] = top;
}

/* After child i moved: caches its key, or notes its error.  1 when it
 * is still valid. */
static int settle(struct merge *m, size_t i)
{
	struct kid *k = &m->kids[i];
	int rc;

	if (iter_valid(k->it)) {
		k->key = iter_key(k->it, &k->klen);
		return 1;
	}
	rc = iter_status(k->it);
	if (rc && !m->rc)
		m->rc = rc;
	return 0;
}

/* Rebuilds the heap after every child was positioned anew. */
static void rebuild(struct merge *m)
{
	m->nheap = 0;
	m->rival = 0;
	m->back = 0;
	for (size_t i = 0; i < m->n; i++)
		if (settle(m, i))
			m->heap[m->nheap++] = i;
	for (size_t i = m->nheap / 2; i-- > 0;)
		sift_down(m, i);
}

static void mg_seek_first(struct iter *it)
{
	struct merge *m = (struct merge *)it;

	for (size_t i = 0; i < m->n; i++)
		iter_seek_first(m->kids[i].it);
	rebuild(m);
}

static void mg_seek(struct iter *it, const unsigned char *k, size_t n)
{
	struct merge *m = (struct merge *)it;

	for (size_t i = 0; i < m->n; i++)
		iter_seek(m->kids[i].it, k, n);
	rebuild(m);
}

static void mg_seek_lt(struct iter *it, const unsigned char *k, size_t n)
{
	struct merge *m = (struct merge *)it;
	size_t best = 0;

	m->nheap = 0;
	m->rival = 0;
	for (size_t i = 0; i < m->n; i++) {
		iter_seek_lt(m->kids[i].it, k, n);
		if (!settle(m, i))
			continue;
		/* among equal keys the higher child comes last */
		if (!best || ikey_cmp(m->kids[i].key, m->kids[i].klen,
				      m->kids[best - 1].key,
				      m->kids[best - 1].klen) >= 0)
			best = i + 1;
	}
	m->back = best;
}

/* From a seek_lt's entry: every child forward to it, a heap again. */
static void leave_back(struct merge *m)
{
	const struct kid *c = &m->kids[m->back - 1];
	unsigned char stack[256], *key = stack;
	size_t kl = c->klen;

	if (kl > sizeof stack && !(key = malloc(kl))) {
		m->rc = CF_ENOMEM;
		return;
	}
	memcpy(key, c->key, kl);
	for (size_t i = 0; i < m->n; i++)
		iter_seek(m->kids[i].it, key, kl);
	rebuild(m);
	if (key != stack)
		free(key);
}

static void mg_next(struct iter *it)
{
	struct merge *m = (struct merge *)it;
	size_t top;

	if (m->back && !m->rc)
		leave_back(m);
	if (!m->nheap || m->rc)
		return;
	top = m->heap[0];
	iter_next(m->kids[top].it);
	if (!settle(m, top)) {
		if (m->rc)
			return;
		m->heap[0] = m->heap[--m->nheap];
		m->rival = 0;
		if (m->nheap > 1)
			sift_down(m, 0);
		return;
	}
	if (m->nheap < 2)
		return;
	if (!m->rival)
		m->rival = m->nheap > 2 && less(m, m->heap[2], m->heap[1]) ? 2
									 : 1;
	if (less(m, top, m->heap[m->rival]))
		return;		/* still the smallest */
	/* the rival takes the top; top sinks on from the rival's place */
	m->heap[0] = m->heap[m->rival];
	m->heap[m->rival] = top;
	sift_down(m, m->rival);
	m->rival = 0;
}

static int mg_valid(const struct iter *it)
{
	const struct merge *m = (const struct merge *)it;

	return (m->nheap > 0 || m->back) && !m->rc;
}

static const unsigned char *mg_key(const struct iter *it, size_t *n)
{
	const struct merge *m = (const struct merge *)it;
	const struct kid *k = &m->kids[m->back ? m->back - 1 : m->heap[0]];

	*n = k->klen;
	return k->key;
}

static const unsigned char *mg_value(const struct iter *it, size_t *n)
{
	const struct merge *m = (const struct merge *)it;

	return iter_value(m->kids[m->back ? m->back - 1 : m->heap[0]].it, n);
}

static int mg_status(const struct iter *it)
{
	return ((const struct merge *)it)->rc;
}

static void mg_destroy(struct iter *it)
{
	struct merge *m = (struct merge *)it;

	for (size_t i = 0; i < m->n; i++)
		iter_destroy(m->kids[i].it);
	free(m);
}

/* The value is the current child's: its pin. */
static int mg_pin(struct iter *it, struct iter_pin *p)
{
	struct merge *m = (struct merge *)it;

	return iter_pin(m->kids[m->back ? m->back - 1 : m->heap[0]].it, p);
}

static const struct iter_ops merge_ops = {
	mg_seek_first, mg_seek, mg_next, mg_valid, mg_key, mg_value,
	mg_status, mg_destroy, mg_pin, mg_seek_lt,
};

struct iter *iter_merge(struct iter **children, size_t n)
{
	struct merge *m;

	/* one allocation: the merge, then kids[n], then heap[n] */
	if (n > (SIZE_MAX - sizeof *m) / (sizeof *m->kids + sizeof *m->heap))
		m = NULL;
	else
		m = calloc(1, sizeof *m + n * (sizeof *m->kids +
					       sizeof *m->heap));
	if (!m) {
		for (size_t i = 0; i < n; i++)
			iter_destroy(children[i]);
		return NULL;
	}
	m->it.ops = &merge_ops;
	m->kids = (struct kid *)(m + 1);
	m->heap = (size_t *)(m->kids + n);
	for (size_t i = 0; i < n; i++)
		m->kids[i].it = children[i];
	m->n = n;
	return &m->it;
}
